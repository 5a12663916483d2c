//! Persistence of players: identities that outlive a game. Like games, a player is one
//! opaque blob with a version (the service owns its format, the key's hash among it); the
//! store adds what it must decide atomically or index: the claim on a name, the player's
//! games newest first, and how many players each address created lately.
//!
//! Names are given here already folded (the service lowercases them), so uniqueness
//! ignoring case is plain uniqueness. A player created with an `unplayed` lifetime expires
//! with its name after it unless it is seated in a game first
//! ([`PlayerStore::add_player_game`]); from then on it lasts for ever.

use std::future::Future;
use std::time::Duration;

use super::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent};

/// The player's games an index keeps at most (newest first); older ones drop off it.
pub const PLAYER_GAMES_KEPT: usize = 1000;

/// What became of [`PlayerStore::create_player`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    Created,
    /// Another player holds the name; nothing was stored.
    NameTaken,
}

/// What became of [`PlayerStore::admit_player`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerAdmission {
    Admitted,
    /// The address is at its cap: the window frees in `frees_in` (the oldest creation
    /// counted leaves it then); nothing was counted.
    Refused {
        frees_in: Duration,
    },
}

/// The contract both stores keep for players.
pub trait PlayerStore: Send + Sync + 'static {
    /// Stores a new player under `id` at version 1, holding `name` (folded) for it, unless
    /// another player holds that name. With `unplayed`, the player and its name are gone
    /// after that long unless it is seated in a game meanwhile.
    fn create_player(
        &self,
        id: &str,
        name: &str,
        bytes: Vec<u8>,
        unplayed: Option<Duration>,
    ) -> impl Future<Output = Result<Created, StoreError>> + Send;

    /// A player by id; `None` when there is none.
    fn load_player(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Stored>, StoreError>> + Send;

    /// The id of the player holding `name` (folded), if any.
    fn player_named(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Compare-and-set of a player's blob on its version.
    fn save_player(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<SaveOutcome, StoreError>> + Send;

    /// Adds `game` (created at `created_ms`) to player `id`'s games; the index keeps the
    /// newest [`PLAYER_GAMES_KEPT`]. The player has played: it and its name (`name`,
    /// folded) last for ever from now.
    fn add_player_game(
        &self,
        id: &str,
        name: &str,
        game: &str,
        created_ms: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Player `id`'s games, newest first (ties: id descending): from `offset`, at most
    /// `limit`; and how many the index holds.
    fn player_games(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<(Vec<String>, u64), StoreError>> + Send;

    /// Marks player `id` present (its stream open on some process) for `ttl` from now;
    /// the process holding the stream marks it again before that runs out.
    fn mark_present(
        &self,
        id: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Whether player `id` was marked present within its mark's time.
    fn is_present(&self, id: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Counts one more player created by `address` in the current `window` (which starts
    /// at the first creation counted), unless it has created `max` there already.
    fn admit_player(
        &self,
        address: &str,
        max: usize,
        window: Duration,
    ) -> impl Future<Output = Result<PlayerAdmission, StoreError>> + Send;

    /// Takes back one count of [`admit_player`](Self::admit_player) (a creation that was
    /// refused after all).
    fn unadmit_player(&self, address: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes news for player `id` to its subscribers on every server process. Kept
    /// nowhere: a client lists its games, then listens.
    fn publish_player(
        &self,
        id: &str,
        event: StoredEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Live news for player `id`, from any server process.
    fn subscribe_player(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<EventStream, StoreError>> + Send;
}

/// The live channel of player `id`'s news, among the games' channels: not a game id (those
/// are UUIDs with hyphens), nor the lobby's.
pub(crate) fn player_channel(id: &str) -> String {
    format!("player:{id}")
}
