//! The store chosen at startup: memory or Redis, behind one concrete type.
//!
//! [`GameStore`] returns `impl Future`, so it cannot be a trait object; an enum that
//! delegates keeps static dispatch (one predictable branch per call) and lets the rest of
//! the server name a single type. It adds no behaviour of its own. The one place that
//! names both backends: every store trait is delegated here, so no trait's file depends on
//! the backends that implement it.

use std::time::Duration;

use super::challenges::{CapReached, ChallengeStore, Direction, OpenCaps, Parties};
use super::claims::ClaimStore;
use super::leagues::LeagueStore;
use super::memory::MemoryStore;
use super::players::{Created, PlayerAdmission, PlayerStore};
use super::ratings::RatingStore;
use super::redis::RedisStore;
use super::seeks::{Added, Gap, SeekEntry, SeekStore, Settled};
use super::tournaments::TournamentStore;
use super::{
    Creator, EventStream, Evidence, GameKey, GameNow, GameStore, Health, IdempotencyRecord,
    Listing, Save, SaveOutcome, StoreError, Stored, StoredEvent, StoredGame,
};

/// Either store; built by the startup code from the settings.
// One per process, so the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyStore {
    Memory(MemoryStore),
    Redis(RedisStore),
}

impl AnyStore {
    /// `memory`, `redis` (one server) or `redis-cluster`, for logs and `/readyz`.
    pub fn kind(&self) -> &'static str {
        match self {
            AnyStore::Memory(_) => "memory",
            AnyStore::Redis(store) => store.mode(),
        }
    }
}

impl From<MemoryStore> for AnyStore {
    fn from(store: MemoryStore) -> Self {
        AnyStore::Memory(store)
    }
}

impl From<RedisStore> for AnyStore {
    fn from(store: RedisStore) -> Self {
        AnyStore::Redis(store)
    }
}

macro_rules! delegate {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Memory($store) => $call.await,
            AnyStore::Redis($store) => $call.await,
        }
    };
}

impl GameStore for AnyStore {
    async fn create_by(
        &self,
        id: &GameKey,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.create_by(id, bytes, listing, creator))
    }

    async fn load(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        delegate!(self, s => s.load(id))
    }

    async fn load_after_writes(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        delegate!(self, s => s.load_after_writes(id))
    }

    async fn save(&self, id: &GameKey, save: Save) -> Result<SaveOutcome<GameNow>, StoreError> {
        delegate!(self, s => s.save(id, save))
    }

    async fn idempotency(
        &self,
        id: &GameKey,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        delegate!(self, s => s.idempotency(id, key))
    }

    async fn list_open(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, Stored)>, StoreError> {
        delegate!(self, s => s.list_open(offset, limit))
    }

    async fn list_playing(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.list_playing(offset, limit))
    }

    async fn list_finished(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.list_finished(offset, limit))
    }

    async fn events_since(
        &self,
        id: &GameKey,
        after: u64,
    ) -> Result<Vec<super::StoredEvent>, StoreError> {
        delegate!(self, s => s.events_since(id, after))
    }

    async fn subscribe(&self, id: &GameKey) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe(id))
    }

    async fn due_between(
        &self,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.due_between(from, to, limit))
    }

    async fn lease(
        &self,
        id: &GameKey,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.lease(id, holder, ttl))
    }

    async fn release(&self, id: &GameKey, holder: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release(id, holder))
    }

    async fn index_deadline(
        &self,
        id: &GameKey,
        version: u64,
        deadline: Option<u64>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.index_deadline(id, version, deadline))
    }

    async fn publish_lobby(&self, event: super::StoredEvent) -> Result<(), StoreError> {
        delegate!(self, s => s.publish_lobby(event))
    }

    async fn subscribe_lobby(&self) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe_lobby())
    }

    async fn confirm(&self, id: &GameKey, evidence: Evidence<'_>) -> Result<(), StoreError> {
        delegate!(self, s => s.confirm(id, evidence))
    }

    async fn ping(&self) -> Result<Health, StoreError> {
        delegate!(self, s => s.ping())
    }
}

impl ChallengeStore for AnyStore {
    async fn create_challenge(
        &self,
        id: &str,
        bytes: Vec<u8>,
        created_ms: u64,
        parties: Parties<'_>,
        due_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.create_challenge(id, bytes, created_ms, parties, due_ms))
    }

    async fn load_challenge(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load_challenge(id))
    }

    async fn save_challenge(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        delegate!(self, s => s.save_challenge(id, expected, bytes))
    }

    async fn player_challenges(
        &self,
        player: &str,
        direction: Direction,
        since_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.player_challenges(player, direction, since_ms, limit))
    }

    async fn open_challenge(
        &self,
        id: &str,
        parties: Parties<'_>,
        expires_ms: u64,
        now_ms: u64,
        caps: OpenCaps,
    ) -> Result<Result<(), CapReached>, StoreError> {
        delegate!(self, s => s.open_challenge(id, parties, expires_ms, now_ms, caps))
    }

    async fn keep_challenge(&self, id: &str, kept: Duration) -> Result<(), StoreError> {
        delegate!(self, s => s.keep_challenge(id, kept))
    }

    async fn close_challenge(&self, id: &str, parties: Parties<'_>) -> Result<(), StoreError> {
        delegate!(self, s => s.close_challenge(id, parties))
    }

    async fn open_challenges(
        &self,
        player: &str,
        direction: Direction,
        now_ms: u64,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.open_challenges(player, direction, now_ms, offset, limit))
    }

    async fn index_challenge_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        delegate!(self, s => s.index_challenge_due(id, due_ms))
    }

    async fn challenges_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.challenges_due(now_ms, limit))
    }

    async fn index_match(&self, player: &str, id: &str, running: bool) -> Result<(), StoreError> {
        delegate!(self, s => s.index_match(player, id, running))
    }

    async fn player_matches(&self, player: &str) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.player_matches(player))
    }
}

impl PlayerStore for AnyStore {
    async fn mark_present(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        delegate!(self, s => s.mark_present(id, ttl))
    }

    async fn is_present(&self, id: &str) -> Result<bool, StoreError> {
        delegate!(self, s => s.is_present(id))
    }

    async fn create_player(
        &self,
        id: &str,
        name: &str,
        bytes: Vec<u8>,
        unplayed: Option<Duration>,
    ) -> Result<Created, StoreError> {
        delegate!(self, s => s.create_player(id, name, bytes, unplayed))
    }

    async fn load_player(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load_player(id))
    }

    async fn player_named(&self, name: &str) -> Result<Option<String>, StoreError> {
        delegate!(self, s => s.player_named(name))
    }

    async fn save_player(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        delegate!(self, s => s.save_player(id, expected, bytes))
    }

    async fn add_player_game(
        &self,
        id: &str,
        name: &str,
        game: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.add_player_game(id, name, game, created_ms))
    }

    async fn player_games(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        delegate!(self, s => s.player_games(id, offset, limit))
    }

    async fn admit_player(
        &self,
        address: &str,
        max: usize,
        window: Duration,
    ) -> Result<PlayerAdmission, StoreError> {
        delegate!(self, s => s.admit_player(address, max, window))
    }

    async fn unadmit_player(&self, address: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.unadmit_player(address))
    }

    async fn publish_player(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        delegate!(self, s => s.publish_player(id, event))
    }

    async fn subscribe_player(&self, id: &str) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe_player(id))
    }
}

impl RatingStore for AnyStore {
    async fn claim_ratings(&self, game: &str, bytes: Vec<u8>) -> Result<Stored, StoreError> {
        delegate!(self, s => s.claim_ratings(game, bytes))
    }

    async fn save_ratings(
        &self,
        game: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        delegate!(self, s => s.save_ratings(game, expected, bytes))
    }

    async fn rank(&self, preset: &str, player: &str, score: f64) -> Result<(), StoreError> {
        delegate!(self, s => s.rank(preset, player, score))
    }

    async fn leaderboard(
        &self,
        preset: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        delegate!(self, s => s.leaderboard(preset, offset, limit))
    }
}

impl SeekStore for AnyStore {
    async fn add_seek(
        &self,
        entry: &SeekEntry,
        max_open: usize,
        now_ms: u64,
    ) -> Result<Added, StoreError> {
        delegate!(self, s => s.add_seek(entry, max_open, now_ms))
    }

    async fn player_seeks(&self, player: &str) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.player_seeks(player))
    }

    async fn load_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        delegate!(self, s => s.load_seek(id))
    }

    async fn cancel_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        delegate!(self, s => s.cancel_seek(id))
    }

    async fn pair_seeks(
        &self,
        pool: &str,
        seats: usize,
        game: &str,
        now_ms: u64,
        recover_ms: u64,
        retry_ms: u64,
        by_rating: Option<Gap>,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.pair_seeks(pool, seats, game, now_ms, recover_ms, retry_ms, by_rating))
    }

    async fn pools_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.pools_due(now_ms, limit))
    }

    async fn due_seeks(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.due_seeks(now_ms, limit))
    }

    async fn settle_seek(
        &self,
        id: &str,
        now_ms: u64,
        game: &str,
        recover_ms: u64,
    ) -> Result<Settled, StoreError> {
        delegate!(self, s => s.settle_seek(id, now_ms, game, recover_ms))
    }

    async fn starting_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.starting_due(now_ms, limit))
    }

    async fn seeks_of_game(&self, game: &str) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.seeks_of_game(game))
    }

    async fn started(&self, game: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.started(game))
    }

    async fn unmatch(
        &self,
        game: &str,
        refused: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.unmatch(game, refused, now_ms))
    }
}

impl ClaimStore for AnyStore {
    async fn claim_key(
        &self,
        record: &IdempotencyRecord,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        delegate!(self, s => s.claim_key(record))
    }

    async fn keep_key(&self, record: &IdempotencyRecord, ttl: Duration) -> Result<(), StoreError> {
        delegate!(self, s => s.keep_key(record, ttl))
    }

    async fn release_key(&self, key: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release_key(key))
    }
}

impl TournamentStore for AnyStore {
    async fn create_tournament(&self, id: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        delegate!(self, s => s.create_tournament(id, bytes))
    }

    async fn load_tournament(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load_tournament(id))
    }

    async fn save_tournament(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        delegate!(self, s => s.save_tournament(id, expected, bytes))
    }

    async fn keep_tournament_for(
        &self,
        id: &str,
        ttl: std::time::Duration,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.keep_tournament_for(id, ttl))
    }

    async fn list_tournament(
        &self,
        id: &str,
        created_ms: u64,
        status: &str,
        statuses: &[&str],
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.list_tournament(id, created_ms, status, statuses))
    }

    async fn tournaments(
        &self,
        status: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.tournaments(status, offset, limit))
    }

    async fn index_tournament_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        delegate!(self, s => s.index_tournament_due(id, due_ms))
    }

    async fn tournaments_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.tournaments_due(now_ms, limit))
    }

    async fn claim_creator_tournament(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.claim_creator_tournament(creator, id, at_ms, max))
    }

    async fn release_creator_tournament(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release_creator_tournament(creator, id))
    }

    async fn creator_tournaments(&self, creator: &str) -> Result<Vec<(String, u64)>, StoreError> {
        delegate!(self, s => s.creator_tournaments(creator))
    }

    async fn claim_joined_tournament(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.claim_joined_tournament(player, id, at_ms, max))
    }

    async fn release_joined_tournament(&self, player: &str, id: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release_joined_tournament(player, id))
    }

    async fn joined_tournaments(&self, player: &str) -> Result<Vec<(String, u64)>, StoreError> {
        delegate!(self, s => s.joined_tournaments(player))
    }

    async fn index_player_tournament(
        &self,
        player: &str,
        id: &str,
        created_ms: u64,
        entered: bool,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.index_player_tournament(player, id, created_ms, entered))
    }

    async fn player_tournaments(
        &self,
        player: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        delegate!(self, s => s.player_tournaments(player, offset, limit))
    }

    async fn publish_tournament(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        delegate!(self, s => s.publish_tournament(id, event))
    }

    async fn subscribe_tournament(&self, id: &str) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe_tournament(id))
    }
}

impl LeagueStore for AnyStore {
    async fn create_league(
        &self,
        id: &str,
        created_ms: u64,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.create_league(id, created_ms, bytes))
    }

    async fn load_league(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load_league(id))
    }

    async fn save_league(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        delegate!(self, s => s.save_league(id, expected, bytes))
    }

    async fn leagues(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.leagues(offset, limit))
    }

    async fn index_league_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        delegate!(self, s => s.index_league_due(id, due_ms))
    }

    async fn leagues_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.leagues_due(now_ms, limit))
    }

    async fn claim_creator_league(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.claim_creator_league(creator, id, at_ms, max))
    }

    async fn release_creator_league(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release_creator_league(creator, id))
    }

    async fn claim_league_entry(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.claim_league_entry(player, id, at_ms, max))
    }

    async fn release_league_entry(&self, player: &str, id: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release_league_entry(player, id))
    }

    async fn league_entries(&self, player: &str) -> Result<Vec<String>, StoreError> {
        delegate!(self, s => s.league_entries(player))
    }

    async fn publish_league(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        delegate!(self, s => s.publish_league(id, event))
    }

    async fn subscribe_league(&self, id: &str) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe_league(id))
    }
}
