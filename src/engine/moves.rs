//! Moves: what a seat may ask the game to do.

use serde::{Deserialize, Serialize};

use super::layout::End;
use super::tile::Tile;

/// A move. The public form of every move is the move itself: a draw does not name the
/// tile (the [`Event`](super::Event) does, and only the drawer sees it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Move {
    /// Play `tile` at `end` (`None` for the lead, or as a shorthand when only one end
    /// fits), claiming `claim` points under muggins rules.
    Play {
        tile: Tile,
        end: Option<End>,
        claim: Option<u16>,
    },
    Draw,
    Pass,
    /// Take the points an opponent made but did not claim.
    Muggins,
}

impl Move {
    pub fn play(tile: Tile, end: End) -> Move {
        Move::Play {
            tile,
            end: Some(end),
            claim: None,
        }
    }

    pub fn lead(tile: Tile) -> Move {
        Move::Play {
            tile,
            end: None,
            claim: None,
        }
    }
}
