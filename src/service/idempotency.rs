//! Idempotent moves: what makes two requests the same, and what the store keeps so that a
//! retry gets the first answer again.
//!
//! The store keeps a [`Receipt`] per key (which seat, which version, which moves), not the
//! answer: the answer is rebuilt from the game replayed to the receipt's moves, so a key
//! on every move costs a few dozen bytes each.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::record::Record;
use super::{Error, GameService};
use crate::engine::Event;
use crate::store::{GameStore, IdempotencyRecord};

/// A request's `Idempotency-Key` and what it must match to count as the same request.
#[derive(Debug, Clone)]
pub struct RequestKey {
    pub(super) key: String,
    fingerprint: [u8; 16],
}

impl RequestKey {
    /// The same key is the same request only from the same seat (its token) with the same
    /// body, byte for byte.
    pub fn new(key: String, token: &str, body: &[u8]) -> RequestKey {
        let mut hash = Sha256::new();
        hash.update(Sha256::digest(token.as_bytes()));
        hash.update(body);
        // 128 bits are ample to tell requests apart, and halve what each record keeps.
        let mut fingerprint = [0; 16];
        fingerprint.copy_from_slice(&hash.finalize()[..16]);
        RequestKey { key, fingerprint }
    }
}

/// What the store keeps under an idempotency key: one format byte, then postcard, about
/// 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Receipt {
    pub seat: u8,
    /// The version the move made.
    pub version: u64,
    /// The match's move count before the move and after it (and the bots' that followed).
    pub from: u32,
    pub to: u32,
}

const FORMAT: u8 = 1;

impl Receipt {
    pub fn stored_under(self, key: &RequestKey) -> IdempotencyRecord {
        IdempotencyRecord {
            key: key.key.clone(),
            fingerprint: key.fingerprint.to_vec(),
            response: postcard::to_extend(&self, vec![FORMAT]).expect("a receipt serialises"),
        }
    }

    fn decode(bytes: &[u8]) -> Option<Receipt> {
        match bytes.split_first() {
            Some((&FORMAT, rest)) => postcard::from_bytes(rest).ok(),
            _ => None,
        }
    }

    /// The game as the move left it, and what the move caused as its seat saw it.
    /// `record` is the game as loaded at the receipt's version or later.
    pub fn replay(self, record: &Record) -> Result<(Record, Vec<Event>), Error> {
        let damaged = |why: String| Error::Internal(format!("an idempotency record: {why}"));
        if self.from > self.to || self.seat >= record.game.seats() {
            return Err(damaged("it is not from this game's past".into()));
        }
        let (game, events) = record.game.after_moves(self.to as usize).map_err(damaged)?;
        let caused = events[self.from as usize + 1..]
            .iter()
            .flatten()
            .map(|e| e.visible_to(Some(self.seat)))
            .collect();
        Ok((record.with_game(game), caused))
    }
}

/// What an idempotency key says about a request, looked up after loading the game.
pub(super) enum Earlier {
    /// No request was stored under the key.
    None,
    /// This request was made before, and this is its receipt.
    Made(Receipt),
    /// This request was made, and stored after the game was loaded: load again.
    AfterLoad,
}

impl GameService {
    /// Looked up after the load, never before: the receipt is saved with the game, so a
    /// copy of this request stored in a state at or before the one loaded (`version`) is
    /// seen, and a retry never meets the game it already changed.
    pub(super) async fn earlier(
        &self,
        id: &str,
        version: u64,
        key: &RequestKey,
    ) -> Result<Earlier, Error> {
        let stored = match self.store.idempotency(id, &key.key).await? {
            Some(stored) if stored.fingerprint == key.fingerprint => stored,
            Some(_) => return Err(Error::IdempotencyKeyReused),
            None => return Ok(Earlier::None),
        };
        let receipt = Receipt::decode(&stored.response)
            .ok_or_else(|| Error::Internal("an idempotency record is unreadable".into()))?;
        Ok(if receipt.version > version {
            Earlier::AfterLoad
        } else {
            Earlier::Made(receipt)
        })
    }
}
