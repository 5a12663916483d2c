//! Idempotent moves and joins: what the store keeps so that a retry gets the first answer
//! again (what makes two requests the same is [`crate::service::idempotency`]'s).
//!
//! The store keeps a [`Receipt`] per key (which seat, which version, which moves), not the
//! answer: the answer is rebuilt from the game replayed to the receipt's moves, so a key
//! on every move costs a few dozen bytes each.
//!
//! Keys are the seat's own: a move's key is looked up and stored in its seat's scope, so
//! two seats may use the same key text for different moves. A join has no seat yet: its
//! keys have a scope of their own, each stored under a hash of the key.
//!
//! **A join's retry gives the seat's token again**, which the store never holds in clear
//! (only a hash of it checks a bearer). Its receipt keeps the token sealed: XORed with a
//! SHA-256 of the game, the key and the body, so only a request with that very key and body
//! unseals it, and the store, which holds neither the key (only its hash) nor the body
//! (only a hash of it), cannot. The key of a join is therefore a secret as strong as the
//! token it unlocks: with the game's id and the body (a name and a seat, both public once
//! seated), it fetches the token. Keys of joins are at least [`MIN_JOIN_KEY`] characters,
//! and should be random (a UUID); the receipt lives in the seat's window of keys, so the
//! seat's own keyed moves push it out.

use serde::{Deserialize, Serialize};

use super::Error;
use super::record::Record;
use crate::domain::GameId;
use crate::engine::{Event, Replay};
use crate::service::codec;
pub use crate::service::idempotency::{MIN_JOIN_KEY, RequestKey};
use crate::service::shared::Stores;
use crate::store::{GameStore, IdempotencyRecord};

/// What the store keeps under an idempotency key: one format byte, then postcard, about
/// 8 bytes (40 for a join, with its sealed token).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Receipt {
    pub seat: u8,
    /// The version the request made.
    pub version: u64,
    /// The match's move count before the move and after it (and the bots' that followed).
    pub from: u32,
    pub to: u32,
}

/// A move's receipt.
const FORMAT: u8 = 1;
/// A join's: the receipt, then the sealed token.
const JOIN_FORMAT: u8 = 2;

/// A receipt as read back, with a join's sealed token.
pub(super) struct StoredReceipt {
    pub receipt: Receipt,
    pub sealed: Option<[u8; 32]>,
}

impl Receipt {
    pub fn stored_under(self, key: &RequestKey, name: String) -> IdempotencyRecord {
        let response = match key.sealed {
            None => codec::encode(FORMAT, &self),
            Some(sealed) => codec::encode(JOIN_FORMAT, &(self, sealed)),
        };
        IdempotencyRecord {
            key: name,
            fingerprint: key.fingerprint.to_vec(),
            response,
        }
    }

    fn decode(bytes: &[u8]) -> Option<StoredReceipt> {
        match codec::open("receipt", bytes).ok()? {
            (FORMAT, body) => Some(StoredReceipt {
                receipt: body.last().ok()?,
                sealed: None,
            }),
            (JOIN_FORMAT, body) => {
                let (receipt, sealed) = body.last().ok()?;
                Some(StoredReceipt {
                    receipt,
                    sealed: Some(sealed),
                })
            }
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
        // Replayed a move at a time: only the receipt's own moves' events are kept.
        let mut replay = Replay::new(&record.game, &mut Vec::new()).map_err(damaged)?;
        replay.skip(self.from as usize).map_err(damaged)?;
        let mut caused = Vec::new();
        let mut events = Vec::new();
        while replay.done() < self.to as usize {
            match replay.next_move(&mut events) {
                Some(played) => played.map_err(damaged)?,
                None => return Err(damaged("it is not from this game's past".into())),
            };
            caused.extend(events.drain(..).map(|e| e.visible_to(Some(self.seat))));
        }
        Ok((record.with_game(replay.into_game()), caused))
    }
}

/// What an idempotency key says about a request, looked up after loading the game.
pub(super) enum Earlier {
    /// No request was stored under the key.
    None,
    /// This request was made before, and this is its receipt.
    Made(StoredReceipt),
    /// This request was made, and stored after the game was loaded: load again.
    AfterLoad,
}

/// Looked up after the load, never before: the receipt is saved with the game, so a
/// copy of this request stored in a state at or before the one loaded (`version`) is
/// seen, and a retry never meets the game it already changed. `name`: the key as
/// stored ([`RequestKey::stored_name`]).
pub(super) async fn earlier(
    store: &Stores,
    id: GameId,
    version: u64,
    key: &RequestKey,
    name: &str,
) -> Result<Earlier, Error> {
    let Some(record) = store.games().idempotency(&id, name).await? else {
        return Ok(Earlier::None);
    };
    let stored = key.receipt_in(&record)?;
    Ok(if stored.receipt.version > version {
        Earlier::AfterLoad
    } else {
        Earlier::Made(stored)
    })
}

impl RequestKey {
    /// The receipt in `record`, stored under this key's name: this request's, or a
    /// refusal when another request (another body, another seat) used the key.
    pub(super) fn receipt_in(&self, record: &IdempotencyRecord) -> Result<StoredReceipt, Error> {
        if record.fingerprint != self.fingerprint {
            return Err(Error::IdempotencyKeyReused);
        }
        Receipt::decode(&record.response)
            .filter(|s| s.sealed.is_some() == self.is_join())
            .ok_or_else(|| Error::Internal("an idempotency record is unreadable".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_s_token_unseals_only_with_its_key_body_and_game() {
        let token = [7u8; 32];
        let (game_a, game_b) = (GameId::random(), GameId::random());
        let key = RequestKey::for_join("k".repeat(20), game_a, br#"{"name":"ann"}"#);
        let sealed = key.sealing(&token).sealed.unwrap();
        assert_ne!(sealed, token);
        assert_eq!(key.unseal(&sealed), Some(token));
        for other in [
            RequestKey::for_join("k".repeat(21), game_a, br#"{"name":"ann"}"#),
            RequestKey::for_join("k".repeat(20), game_b, br#"{"name":"ann"}"#),
            RequestKey::for_join("k".repeat(20), game_a, br#"{"name":"bob"}"#),
        ] {
            assert_ne!(other.unseal(&sealed), Some(token));
        }
        // The store sees neither the key nor the token.
        let record = Receipt {
            seat: 1,
            version: 2,
            from: 0,
            to: 0,
        }
        .stored_under(&key.sealing(&token), key.stored_name(Some(1)));
        assert!(!record.key.contains("kkkk"), "{}", record.key);
        let stored = Receipt::decode(&record.response).unwrap();
        assert_eq!((stored.receipt.seat, stored.sealed), (1, Some(sealed)));
    }

    #[test]
    fn a_move_s_key_is_stored_in_its_seat_s_scope() {
        let a = RequestKey::new("move-2".into(), "token a", b"{}");
        let b = RequestKey::new("move-2".into(), "token b", b"{}");
        assert_ne!(a.stored_name(Some(0)), b.stored_name(Some(1)));
        assert_ne!(a.fingerprint, b.fingerprint);
    }
}
