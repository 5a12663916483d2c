//! The store chosen at startup: memory or Redis, behind one concrete type.
//!
//! [`GameStore`] returns `impl Future`, so it cannot be a trait object; an enum that
//! delegates keeps static dispatch (one predictable branch per call) and lets the rest of
//! the server name a single type. It adds no behaviour of its own.

use super::memory::MemoryStore;
use super::redis::RedisStore;
use super::{
    Creator, EventStream, Evidence, GameId, GameNow, GameStore, Health, IdempotencyRecord, Listing,
    Save, SaveOutcome, StoreError, Stored,
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
        id: &GameId,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.create_by(id, bytes, listing, creator))
    }

    async fn load(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load(id))
    }

    async fn load_after_writes(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        delegate!(self, s => s.load_after_writes(id))
    }

    async fn save(&self, id: &GameId, save: Save) -> Result<SaveOutcome<GameNow>, StoreError> {
        delegate!(self, s => s.save(id, save))
    }

    async fn idempotency(
        &self,
        id: &GameId,
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

    async fn events_since(&self, id: &GameId, after: u64) -> Result<Vec<super::Event>, StoreError> {
        delegate!(self, s => s.events_since(id, after))
    }

    async fn subscribe(&self, id: &GameId) -> Result<EventStream, StoreError> {
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
        id: &GameId,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<bool, StoreError> {
        delegate!(self, s => s.lease(id, holder, ttl))
    }

    async fn release(&self, id: &GameId, holder: &str) -> Result<(), StoreError> {
        delegate!(self, s => s.release(id, holder))
    }

    async fn index_deadline(
        &self,
        id: &GameId,
        version: u64,
        deadline: Option<u64>,
    ) -> Result<(), StoreError> {
        delegate!(self, s => s.index_deadline(id, version, deadline))
    }

    async fn publish_lobby(&self, event: super::Event) -> Result<(), StoreError> {
        delegate!(self, s => s.publish_lobby(event))
    }

    async fn subscribe_lobby(&self) -> Result<EventStream, StoreError> {
        delegate!(self, s => s.subscribe_lobby())
    }

    async fn confirm(&self, id: &GameId, evidence: Evidence<'_>) -> Result<(), StoreError> {
        delegate!(self, s => s.confirm(id, evidence))
    }

    async fn ping(&self) -> Result<Health, StoreError> {
        delegate!(self, s => s.ping())
    }
}
