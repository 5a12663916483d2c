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
    /// The seat gives up: with two sides the other side wins the match; with three or four
    /// independent seats the seat is abandoned and play goes on. Any seat may resign, its
    /// turn or not, unless it is abandoned.
    Resign,
    /// The server's marker: the seat to move ran out of time, and the move made for it
    /// follows as an ordinary move. Only the seat to move; changes nothing but the record.
    TimedOut,
    /// The server abandons a seat (after too many timeouts in a row): from now on a bot
    /// plays it. Any seat not abandoned yet.
    Abandon,
    /// The seat to move ran out of time under forfeit rules: its side loses the match.
    /// Only with two sides.
    Forfeit,
}

impl Move {
    /// Whether this is one of the table actions ([`Move::Resign`], [`Move::TimedOut`],
    /// [`Move::Abandon`], [`Move::Forfeit`]): moves about a seat rather than the tiles,
    /// never listed by [`Game::legal_moves`](super::Game::legal_moves).
    pub fn is_table_action(self) -> bool {
        matches!(
            self,
            Move::Resign | Move::TimedOut | Move::Abandon | Move::Forfeit
        )
    }

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
