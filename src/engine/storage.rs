//! The stored form of a game: one format byte, then the postcard encoding of [`Game`].
//!
//! Postcard is compact (a finished classic game with its whole history is a few hundred
//! bytes) and fast, which matters because (de)serialising is the largest cost of a move
//! on the server. The format byte lets a later version read games stored by this one:
//! bump it when `Game`'s fields change, and keep a reader for the old layout.
//!
//! Formats: 1 kept each move as `(seat, move)`, about six bytes; 2 keeps the
//! [`History`](super::history::History) codes, 6 to 11 bits each (6 in a classic game).

use std::fmt;

use serde::Deserialize;

use super::deal::{Deal, Seed};
use super::event::RoundResult;
use super::game::{Game, Round, Unclaimed};
use super::history::History;
use super::moves::Move;
use super::rules::Rules;

/// The current storage format.
pub const FORMAT: u8 = 2;

/// A game as format 1 stored it, read so that games stored before an upgrade (in a Redis
/// shared across a deploy) go on being played.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct GameV1 {
    rules: Rules,
    seats: u8,
    seed: Seed,
    first_deal: Option<Deal>,
    scores: [i32; 4],
    rounds_done: u16,
    round: Round,
    unclaimed: Option<Unclaimed>,
    last_round: Option<RoundResult>,
    history: Vec<(u8, Move)>,
}

impl TryFrom<GameV1> for Game {
    type Error = StorageError;

    fn try_from(old: GameV1) -> Result<Game, StorageError> {
        // The rules shape the history's codes: they must be sound before a move is encoded.
        old.rules
            .validate(old.seats)
            .map_err(|e| StorageError::Corrupt(format!("the rules: {e}")))?;
        let mut history = History::default();
        for (seat, mv) in old.history {
            if !History::encodes(&old.rules, seat, mv) {
                return Err(StorageError::Corrupt(format!(
                    "a move no rule allows: {mv:?}"
                )));
            }
            history.push(&old.rules, seat, mv);
        }
        Ok(Game {
            rules: old.rules,
            seats: old.seats,
            seed: old.seed,
            first_deal: old.first_deal,
            scores: old.scores,
            rounds_done: old.rounds_done,
            round: old.round,
            unclaimed: old.unclaimed,
            last_round: old.last_round,
            history,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    UnknownFormat(u8),
    Corrupt(String),
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::UnknownFormat(v) => write!(f, "stored game has unknown format {v}"),
            StorageError::Corrupt(why) => write!(f, "stored game is corrupt: {why}"),
        }
    }
}

impl std::error::Error for StorageError {}

impl Game {
    pub fn to_bytes(&self) -> Vec<u8> {
        let out = vec![FORMAT];
        postcard::to_extend(self, out).expect("a game always serialises")
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Game, StorageError> {
        match bytes.split_first() {
            Some((&FORMAT, rest)) => {
                postcard::from_bytes(rest).map_err(|e| StorageError::Corrupt(e.to_string()))
            }
            Some((&1, rest)) => postcard::from_bytes::<GameV1>(rest)
                .map_err(|e| StorageError::Corrupt(e.to_string()))
                .and_then(Game::try_from),
            Some((&other, _)) => Err(StorageError::UnknownFormat(other)),
            None => Err(StorageError::Corrupt("empty".into())),
        }
    }
}

impl Game {
    /// This game in format 1 (without the format byte), for the tests of readers of it.
    #[cfg(test)]
    pub(crate) fn to_v1_postcard(&self) -> Vec<u8> {
        let (moves, _) = self.replay_history().expect("a game with its record");
        let g = self.clone();
        let old = GameV1 {
            rules: g.rules,
            seats: g.seats,
            seed: g.seed,
            first_deal: g.first_deal,
            scores: g.scores,
            rounds_done: g.rounds_done,
            round: g.round,
            unclaimed: g.unclaimed,
            last_round: g.last_round,
            history: moves,
        };
        postcard::to_allocvec(&old).expect("serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Preset;

    #[test]
    fn a_game_stored_in_format_1_reads_as_the_same_game() {
        for preset in Preset::ALL {
            let mut game = Game::new(preset.rules(), 2, Seed::from_text("v1"), None).unwrap();
            for _ in 0..12 {
                let Some(seat) = game.turn() else { break };
                let mv = game.legal_moves(seat)[0];
                game.play(seat, mv).unwrap();
            }
            let mut bytes = vec![1];
            bytes.extend(game.to_v1_postcard());
            assert_eq!(Game::from_bytes(&bytes).unwrap(), game, "{preset:?}");
            assert!(bytes.len() > game.to_bytes().len(), "format 2 is smaller");
        }
    }
}
