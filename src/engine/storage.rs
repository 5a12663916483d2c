//! The stored form of a game: one format byte, then the postcard encoding of [`Game`].
//!
//! Postcard is compact (a classic game with its whole history is a few hundred bytes) and
//! fast, which matters because (de)serialising is the largest cost of a move on the
//! server. The format byte lets a later version read games stored by this one: bump it
//! when `Game`'s fields change, and keep a reader for the old layout.

use std::fmt;

use super::game::Game;

/// The current storage format.
pub const FORMAT: u8 = 1;

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
            Some((&other, _)) => Err(StorageError::UnknownFormat(other)),
            None => Err(StorageError::Corrupt("empty".into())),
        }
    }
}
