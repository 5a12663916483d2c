//! Persistence of leagues. A league is one opaque blob with a version, as a tournament is
//! (the service owns its format and decides with a compare-and-set), kept for as long as
//! the store is: a league never ends. Beside it the store keeps what it cannot read from
//! the blob: the list of leagues (newest first), the due index (when each is next to be
//! moved on, whichever process does it), each creator's leagues and each player's entries
//! (for their caps), and a live channel of each league's news.
//!
//! The indexes are hints written after the blob: the service loads what they name and
//! trusts only the blob.

use std::future::Future;

use super::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent};

/// The contract both stores keep for leagues.
pub trait LeagueStore: Send + Sync + 'static {
    /// Stores a new league under `id` at version 1 and lists it by `created_ms`
    /// ([`StoreError::Exists`] if one is there).
    fn create_league(
        &self,
        id: &str,
        created_ms: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A league by id; `None` when there is none.
    fn load_league(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Stored>, StoreError>> + Send;

    /// Compare-and-set of a league's blob on its version.
    fn save_league(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<SaveOutcome, StoreError>> + Send;

    /// The leagues, newest first: `limit` of them from `offset`.
    fn leagues(
        &self,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Sets (or with `None` drops) league `id`'s entry in the index of due ones.
    fn index_league_due(
        &self,
        id: &str,
        due_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Leagues due at `now_ms` or before, earliest first, at most `limit`.
    fn leagues_due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Counts league `id` (at `at_ms`) among those `creator` made, unless `max` are
    /// counted there already: one step, so two creates at once cannot both pass the last
    /// place. `true` when it is counted (or already was).
    fn claim_creator_league(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Counts league `id` no more among `creator`'s (a create that failed after its claim).
    fn release_creator_league(
        &self,
        creator: &str,
        id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Counts league `id` (at `at_ms`) among those `player` entered, unless `max` are
    /// counted there already, in one step. `true` when it is counted (or already was).
    fn claim_league_entry(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Counts league `id` no more among those `player` entered.
    fn release_league_entry(
        &self,
        player: &str,
        id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The leagues `player` entered (claimed by [`claim_league_entry`]
    /// (Self::claim_league_entry)), in no order.
    fn league_entries(
        &self,
        player: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Tells league `id`'s live channel (best effort: nobody may be listening).
    fn publish_league(
        &self,
        id: &str,
        event: StoredEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// League `id`'s live channel.
    fn subscribe_league(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<EventStream, StoreError>> + Send;
}

/// The live channel of league `id`, among the games' channels: not a game id (those are
/// UUIDs with hyphens), a player's, a tournament's or the lobby's.
pub(crate) fn league_channel(id: &str) -> String {
    format!("league:{id}")
}
