//! The memory store's leagues: maps behind a lock of their own, so each call is atomic,
//! as a script is on Redis. Their bytes count in `MEMORY_MAX_BYTES` with the games'.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;

use super::tournaments::{Claims, claim, held, release};
use super::{MemoryStore, NewestFirst};
use crate::leagues::{LeagueStore, league_channel};
use crate::{EventStream, GameStore, SaveOutcome, StoreError, Stored, StoredEvent};

#[derive(Default)]
pub(super) struct LeagueIndex {
    leagues: HashMap<String, Stored>,
    listed: BTreeSet<NewestFirst>,
    due: BTreeSet<(u64, String)>,
    due_at: HashMap<String, u64>,
    /// Per creator, the leagues it made, and when each was claimed.
    creators: Claims,
    /// Per player, the leagues it entered, likewise.
    entries: Claims,
}

impl MemoryStore {
    fn leagues(&self) -> std::sync::MutexGuard<'_, LeagueIndex> {
        self.leagues
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl LeagueStore for MemoryStore {
    async fn create_league(
        &self,
        id: &str,
        created_ms: u64,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        self.kept_room(bytes.len())?;
        let mut l = self.leagues();
        if l.leagues.contains_key(id) {
            return Err(StoreError::Exists);
        }
        self.kept_bytes.fetch_add(bytes.len(), Ordering::Relaxed);
        l.leagues
            .insert(id.to_owned(), Stored { version: 1, bytes });
        l.listed
            .insert((Reverse(created_ms), Reverse(id.to_owned())));
        Ok(())
    }

    async fn load_league(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        Ok(self.leagues().leagues.get(id).cloned())
    }

    async fn save_league(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let mut l = self.leagues();
        Ok(self.save_kept(&mut l.leagues, id, expected, bytes))
    }

    async fn leagues(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        Ok(self
            .leagues()
            .listed
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(_, Reverse(id))| id.clone())
            .collect())
    }

    async fn index_league_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        let mut l = self.leagues();
        if let Some(old) = l.due_at.remove(id) {
            l.due.remove(&(old, id.to_owned()));
        }
        if let Some(due) = due_ms {
            l.due.insert((due, id.to_owned()));
            l.due_at.insert(id.to_owned(), due);
        }
        Ok(())
    }

    async fn leagues_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        Ok(self
            .leagues()
            .due
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn claim_creator_league(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        Ok(claim(&mut self.leagues().creators, creator, id, at_ms, max))
    }

    async fn release_creator_league(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        release(&mut self.leagues().creators, creator, id);
        Ok(())
    }

    async fn claim_league_entry(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        Ok(claim(&mut self.leagues().entries, player, id, at_ms, max))
    }

    async fn release_league_entry(&self, player: &str, id: &str) -> Result<(), StoreError> {
        release(&mut self.leagues().entries, player, id);
        Ok(())
    }

    async fn league_entries(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let entered = held(&self.leagues().entries, player);
        Ok(entered.into_iter().map(|(id, _)| id).collect())
    }

    async fn publish_league(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        let (inner, _) = self.lock();
        if let Some(tx) = inner.channels.get(&league_channel(id)) {
            // No subscriber: nobody is watching now.
            let _ = tx.send(event);
        }
        Ok(())
    }

    async fn subscribe_league(&self, id: &str) -> Result<EventStream, StoreError> {
        self.subscribe(&league_channel(id)).await
    }
}
