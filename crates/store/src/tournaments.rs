//! Persistence of tournaments. Like a challenge, a tournament is one opaque blob with a
//! version (the service owns its format and decides with a compare-and-set); unlike one
//! it lasts while it may run: the store drops it only once the service says it is over
//! and how long to keep it ([`TournamentStore::keep_tournament_for`]). Beside it the store keeps the indexes it cannot
//! read from the blob: the tournaments by status (for the list), those due (to start, or
//! to be moved on after a crash), each creator's that may still run (for its cap), and a
//! live channel of each tournament's news.
//!
//! The indexes are hints written after the blob: the service loads what they name and
//! trusts only the blob, so an entry left by a crash costs a load, never a wrong answer.

use std::future::Future;
use std::time::Duration;

use super::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent};

/// Tournaments a player's index keeps: a profile lists them a page at a time, and more
/// than this many at once is more than a person looks back through.
pub const PLAYER_TOURNAMENTS_KEPT: usize = 500;

/// The contract both stores keep for tournaments.
pub trait TournamentStore: Send + Sync + 'static {
    /// Stores a new tournament under `id` at version 1 ([`StoreError::Exists`] if one is).
    fn create_tournament(
        &self,
        id: &str,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A tournament by id; `None` when there is none.
    fn load_tournament(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Stored>, StoreError>> + Send;

    /// Compare-and-set of a tournament's blob on its version.
    fn save_tournament(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<SaveOutcome, StoreError>> + Send;

    /// Keeps tournament `id` for `ttl` from now, then drops it and its entries in the lists
    /// and the due index (the lists may name it a little longer: their reader skips what is
    /// gone). Called once it is over; another call sets the time again.
    fn keep_tournament_for(
        &self,
        id: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Lists tournament `id` (created at `created_ms`) under `status`, and under no other
    /// of `statuses` (every status the service has).
    fn list_tournament(
        &self,
        id: &str,
        created_ms: u64,
        status: &str,
        statuses: &[&str],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The tournaments listed under `status`, newest first: `limit` of them from `offset`.
    fn tournaments(
        &self,
        status: &str,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Sets (or with `None` drops) tournament `id`'s entry in the index of due ones.
    fn index_tournament_due(
        &self,
        id: &str,
        due_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tournaments due at `now_ms` or before, earliest first, at most `limit`.
    fn tournaments_due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Counts tournament `id` (at `at_ms`) among those `creator` made that may still run,
    /// unless `max` are counted there already: one step, so two creates at once cannot
    /// both pass the last place. `true` when it is counted (or already was).
    fn claim_creator_tournament(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Counts tournament `id` no more among `creator`'s (it is over, or was never made).
    fn release_creator_tournament(
        &self,
        creator: &str,
        id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// What [`claim_creator_tournament`](Self::claim_creator_tournament) counts for
    /// `creator`: each tournament and when it was claimed, in no order.
    fn creator_tournaments(
        &self,
        creator: &str,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// Counts tournament `id` (at `at_ms`) among those `player` has joined that may still
    /// run, unless `max` are counted there already: one step, as a creator's claim is, and
    /// apart from those. `true` when it is counted (or already was).
    fn claim_joined_tournament(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Counts tournament `id` no more among those `player` has joined.
    fn release_joined_tournament(
        &self,
        player: &str,
        id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// What [`claim_joined_tournament`](Self::claim_joined_tournament) counts for
    /// `player`: each tournament and when it was claimed, in no order.
    fn joined_tournaments(
        &self,
        player: &str,
    ) -> impl Future<Output = Result<Vec<(String, u64)>, StoreError>> + Send;

    /// Adds tournament `id` (created at `created_ms`) to those `player` entered (with
    /// `false`, takes it out, whatever `created_ms` says); the index keeps the newest [`PLAYER_TOURNAMENTS_KEPT`]. A
    /// hint like the lists: a tournament gone (expired, or the player removed) may stay
    /// named until the service, finding it so, takes it out.
    fn index_player_tournament(
        &self,
        player: &str,
        id: &str,
        created_ms: u64,
        entered: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The tournaments [`index_player_tournament`](Self::index_player_tournament) holds for
    /// `player`, newest first (ties: id descending): `limit` from `offset`; and how many
    /// the index holds.
    fn player_tournaments(
        &self,
        player: &str,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<(Vec<String>, u64), StoreError>> + Send;

    /// Tells tournament `id`'s live channel (best effort: nobody may be listening).
    fn publish_tournament(
        &self,
        id: &str,
        event: StoredEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Tournament `id`'s live channel.
    fn subscribe_tournament(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<EventStream, StoreError>> + Send;
}

/// The live channel of tournament `id`, among the games' channels: not a game id (those
/// are UUIDs with hyphens), a player's or the lobby's.
pub(crate) fn tournament_channel(id: &str) -> String {
    format!("tournament:{id}")
}
