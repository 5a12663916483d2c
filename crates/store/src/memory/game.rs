//! A game as the memory store holds it, and the bytes it counts against
//! `MEMORY_MAX_BYTES`.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use crate::IdempotencyRecord;

/// A game as the memory store holds it.
pub(super) struct MemoryGame {
    /// Its value as Redis keeps it (version, events, blob), built by the same code.
    pub(super) value: Vec<u8>,
    pub(super) expires_at: Instant,
    /// `Some(created_ms)` while the game is in the lobby's list.
    pub(super) listed: Option<u64>,
    /// Who created it, counted in `owners` while it is listed.
    pub(super) owner: Option<String>,
    /// Who created it, counted in `creators` until its match is over.
    pub(super) creator: Option<String>,
    /// Who created it, counted in `kept` until it is removed.
    pub(super) maker: Option<String>,
    /// `Some(started_ms)` while the game is in the list of games in play.
    pub(super) started: Option<u64>,
    pub(super) idempotency: HashMap<String, IdempotencyRecord>,
    /// Per seat, its keys oldest first (at most [`crate::IDEMPOTENCY_WINDOW`]).
    pub(super) windows: HashMap<u8, VecDeque<String>>,
    pub(super) deadline: Option<u64>,
}

impl MemoryGame {
    /// The bytes it holds: its value (version, events, blob) and its idempotency records
    /// (each key twice: in the records and in its seat's window). Not the maps' own
    /// overhead.
    pub(super) fn size(&self) -> usize {
        let records: usize = (self.idempotency.iter())
            .map(|(key, r)| 2 * key.len() + r.fingerprint.len() + r.response.len())
            .sum();
        self.value.len() + records
    }
}
