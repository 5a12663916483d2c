//! Built-in players: three levels that see only what a seat may see.
//!
//! A bot is given a [`Projection`] (never the [`Game`](crate::engine::Game)) and an RNG,
//! and answers with a legal move. The `expert` searches by sampling the hidden tiles
//! itself and playing sampled games forward with [`Game::determinise`](crate::engine::Game::determinise);
//! it never reads a hidden tile. No bot reads a clock or does I/O: its work is a fixed
//! number of samples, so the same view and RNG state give the same move.
//!
//! - [`random`]: uniform over the legal moves.
//! - [`greedy`]: the best immediate result (most points under fives, else the heaviest tile).
//! - [`expert`]: determinised search (PIMC) with greedy rollouts to the end of the round.
//! - [`turns`]: the bots' turns at a table, played until a human must move.
//!
//! Every level takes an opponent's unclaimed points (a `muggins` move) as soon as it may,
//! in turn or out of it, and greedy and expert always claim their own points.

pub mod expert;
pub mod greedy;
pub mod random;
pub mod turns;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::{Move, Projection};

/// How strong a built-in player is (the API's `bots[].level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Random,
    Greedy,
    Expert,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Random, Level::Greedy, Level::Expert];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Greedy => "greedy",
            Level::Expert => "expert",
        }
    }
}

impl std::str::FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Level, String> {
        Level::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown bot level {s:?} (random, greedy, expert)"))
    }
}

/// The move `level` makes for the seat `view` belongs to, or `None` when that seat may do
/// nothing now (`view.legal_moves` is empty). Out of turn the only possible move is taking
/// an opponent's unclaimed points, which every level does. Deterministic given the RNG.
pub fn choose<R: Rng + ?Sized>(level: Level, view: &Projection, rng: &mut R) -> Option<Move> {
    if view.legal_moves.is_empty() {
        return None;
    }
    if let Some(m) = take_muggins(view) {
        return Some(m);
    }
    Some(match level {
        Level::Random => random::choose(view, rng),
        Level::Greedy => greedy::choose(view),
        Level::Expert => expert::choose(view, rng),
    })
}

/// Free points: an opponent's unclaimed points, when they may be taken.
fn take_muggins(view: &Projection) -> Option<Move> {
    view.legal_moves
        .iter()
        .any(|m| m.mv == Move::Muggins)
        .then_some(Move::Muggins)
}
