//! The memory store's claims on the keys of creates: one map behind a lock of its own, so
//! each call is atomic, as a script is on Redis.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::MemoryStore;
use crate::claims::{ClaimStore, PENDING};
use crate::{IdempotencyRecord, StoreError};

/// Claimed keys, with when each claim ends.
#[derive(Default)]
pub(super) struct Claims(HashMap<String, (IdempotencyRecord, Instant)>);

impl MemoryStore {
    fn claims(&self) -> std::sync::MutexGuard<'_, Claims> {
        // Every mutation leaves the map consistent, so a poisoned lock is taken anyway.
        self.claims
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ClaimStore for MemoryStore {
    async fn claim_key(
        &self,
        record: &IdempotencyRecord,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let now = Instant::now();
        let mut claims = self.claims();
        claims.0.retain(|_, (_, until)| *until > now);
        if let Some((held, _)) = claims.0.get(&record.key) {
            return Ok(Some(held.clone()));
        }
        claims
            .0
            .insert(record.key.clone(), (record.clone(), now + PENDING));
        Ok(None)
    }

    async fn keep_key(&self, record: &IdempotencyRecord, ttl: Duration) -> Result<(), StoreError> {
        if let Some(held) = self.claims().0.get_mut(&record.key) {
            *held = (record.clone(), Instant::now() + ttl);
        }
        Ok(())
    }

    async fn release_key(&self, key: &str) -> Result<(), StoreError> {
        self.claims().0.remove(key);
        Ok(())
    }
}
