//! Built-in players: four levels that see only what a seat may see.
//!
//! A bot is given a [`Projection`] (never the [`Game`](domino_engine::Game)) and an RNG,
//! and answers with a legal move. The `expert` and the `master` search by sampling the
//! hidden tiles themselves ([`sampling`]) and playing sampled games forward with
//! [`Game::determinise`](domino_engine::Game::determinise); they never read a hidden tile.
//! No bot does I/O. The expert's work is a fixed number of samples; the master's is a
//! [`Thinking`] budget: time on a clock it is handed (the service's), or a fixed number of
//! moves, with which the same view and RNG state give the same move.
//!
//! - [`random`]: uniform over the legal moves.
//! - [`greedy`]: the best immediate result (most points under fives, else the heaviest tile).
//! - [`expert`]: determinised search (PIMC) with greedy rollouts to the end of the round.
//! - [`master`]: an information-set tree search over sampled worlds with defensive
//!   playouts ([`tree`]), exact once few tiles are left ([`alphabeta`]), by the clock
//!   ([`think`]); [`config`]: its search's shape and the measured defaults per table.
//! - [`sampling`], [`playout`]: the searchers' sampled worlds and leaf evaluation.
//! - [`inference`]: how likely the master finds a sampled world, from the others' plays.
//! - [`turns`]: the bots' turns at a table, played until a human must move.
//! - [`recall`]: a seat's projection rebuilt from the views it is shown (a webhook bot's).
//!
//! Every level takes an opponent's unclaimed points (a `muggins` move) as soon as it may,
//! in turn or out of it, and greedy, expert and master always claim their own points.

mod alphabeta;
pub mod config;
pub mod expert;
pub mod greedy;
mod inference;
pub mod master;
pub(crate) mod playout;
pub mod random;
pub mod recall;
pub(crate) mod sampling;
pub mod think;
mod tree;
pub mod turns;

pub use think::{Budget, Clock, Thinking};

use rand::Rng;
use serde::{Deserialize, Serialize};

use domino_engine::{Move, Projection};

/// How strong a built-in player is (the API's `bots[].level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Random,
    Greedy,
    Expert,
    Master,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Random, Level::Greedy, Level::Expert, Level::Master];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Greedy => "greedy",
            Level::Expert => "expert",
            Level::Master => "master",
        }
    }

    /// The name a seat of this level shows (`"expert bot"`).
    pub fn seat_name(self) -> String {
        format!("{} bot", self.as_str())
    }

    /// The level `name` could be taken for: its letters and digits, in any case, are a
    /// level's name alone or followed by "bot" (`Expert Bot`, `expert-bot`, `GREEDY`).
    /// People may not take such names, so that a human is never shown as a built-in level.
    pub fn named_like(name: &str) -> Option<Level> {
        let bare: String = name
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        let bare = bare.strip_suffix("bot").unwrap_or(&bare);
        Level::ALL.into_iter().find(|l| l.as_str() == bare)
    }
}

impl std::str::FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Level, String> {
        Level::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown bot level {s:?} (random, greedy, expert, master)"))
    }
}

/// The move `level` makes for the seat `view` belongs to, or `None` when that seat may do
/// nothing now (`view.legal_moves` is empty). Out of turn the only possible move is taking
/// an opponent's unclaimed points, which every level does. Deterministic given the RNG:
/// the master does its default fixed work ([`master::DEFAULT_WORK`]).
pub fn choose<R: Rng + ?Sized>(level: Level, view: &Projection, rng: &mut R) -> Option<Move> {
    choose_thinking(level, view, Thinking::work(master::DEFAULT_WORK), rng)
}

/// [`choose`], the master thinking under `thinking` (the other levels ignore it).
pub fn choose_thinking<R: Rng + ?Sized>(
    level: Level,
    view: &Projection,
    thinking: Thinking<'_>,
    rng: &mut R,
) -> Option<Move> {
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
        Level::Master => master::choose(view, thinking, rng),
    })
}

/// Free points: an opponent's unclaimed points, when they may be taken.
fn take_muggins(view: &Projection) -> Option<Move> {
    view.legal_moves
        .iter()
        .any(|m| m.mv == Move::Muggins)
        .then_some(Move::Muggins)
}

#[cfg(test)]
mod tests {
    use super::Level;

    #[test]
    fn a_name_is_taken_for_a_level_only_when_its_letters_are_the_levels_alone_or_with_bot() {
        for (name, level) in [
            ("expert", Level::Expert),
            ("Expert Bot", Level::Expert),
            ("expert-bot", Level::Expert),
            ("GREEDY_BOT", Level::Greedy),
            ("  master bot ", Level::Master),
            ("random", Level::Random),
        ] {
            assert_eq!(Level::named_like(name), Some(level), "{name}");
        }
        for name in [
            "masterful",
            "robot",
            "bot",
            "expert bots",
            "grumpy",
            "expert2",
        ] {
            assert_eq!(Level::named_like(name), None, "{name}");
        }
        for level in Level::ALL {
            assert_eq!(Level::named_like(&level.seat_name()), Some(level));
        }
    }
}
