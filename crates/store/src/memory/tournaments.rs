//! The memory store's tournaments: maps behind a lock of their own, so each call is
//! atomic, as a script is on Redis. One over is dropped when the time it is kept for
//! runs out (looked at whenever the lock is taken), with its entries; their bytes count
//! in `MEMORY_MAX_BYTES` with the games'.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::versioned::save_versioned;
use super::{MemoryStore, NewestFirst};
use crate::tournaments::{PLAYER_TOURNAMENTS_KEPT, TournamentStore, tournament_channel};
use crate::{EventStream, GameStore, SaveOutcome, StoreError, Stored, StoredEvent};

#[derive(Default)]
pub(super) struct TournamentIndex {
    tournaments: HashMap<String, Stored>,
    /// Per status, its tournaments newest first.
    listed: HashMap<String, BTreeSet<NewestFirst>>,
    due: BTreeSet<(u64, String)>,
    due_at: HashMap<String, u64>,
    /// Per creator, the tournaments it made that may still run, and when each was claimed.
    creators: Claims,
    /// Per player, the tournaments it joined that may still run, likewise.
    joined: Claims,
    /// Per player, the tournaments it entered, newest first.
    entered: HashMap<String, BTreeSet<NewestFirst>>,
    /// Per listed tournament, its status and creation time (its entry in `listed`).
    listed_as: HashMap<String, (String, u64)>,
    /// Tournaments over, by when they are dropped.
    ends: BTreeSet<(Instant, String)>,
    ends_at: HashMap<String, Instant>,
}

impl TournamentIndex {
    /// Drops tournament `id` and its entries; answers the bytes it held.
    fn drop_tournament(&mut self, id: &str) -> usize {
        if let Some((status, created_ms)) = self.listed_as.remove(id)
            && let Some(list) = self.listed.get_mut(&status)
        {
            list.remove(&(Reverse(created_ms), Reverse(id.to_owned())));
        }
        if let Some(due) = self.due_at.remove(id) {
            self.due.remove(&(due, id.to_owned()));
        }
        for claims in [&mut self.creators, &mut self.joined] {
            for held in claims.values_mut() {
                held.remove(id);
            }
            claims.retain(|_, held| !held.is_empty());
        }
        for held in self.entered.values_mut() {
            held.retain(|(_, Reverse(held))| held != id);
        }
        self.entered.retain(|_, held| !held.is_empty());
        self.ends_at.remove(id);
        self.tournaments.remove(id).map_or(0, |t| t.bytes.len())
    }
}

/// Claims of one kind (a creator's, an entrant's; of tournaments, of leagues): per player,
/// id → claim time.
pub(super) type Claims = HashMap<String, HashMap<String, u64>>;

/// Counts `id` among `player`'s `claims` unless `max` are there: one step under the lock.
pub(super) fn claim(
    claims: &mut Claims,
    player: &str,
    id: &str,
    at_ms: u64,
    max: Option<usize>,
) -> bool {
    let held = claims.entry(player.to_owned()).or_default();
    if held.contains_key(id) {
        return true;
    }
    if max.is_some_and(|max| held.len() >= max) {
        return false;
    }
    held.insert(id.to_owned(), at_ms);
    true
}

pub(super) fn release(claims: &mut Claims, player: &str, id: &str) {
    if let Some(held) = claims.get_mut(player) {
        held.remove(id);
        if held.is_empty() {
            claims.remove(player);
        }
    }
}

pub(super) fn held(claims: &Claims, player: &str) -> Vec<(String, u64)> {
    claims.get(player).map_or_else(Vec::new, |held| {
        held.iter().map(|(id, at)| (id.clone(), *at)).collect()
    })
}

impl MemoryStore {
    /// Locks the tournaments, dropping those whose time ran out first.
    fn tournaments(&self) -> std::sync::MutexGuard<'_, TournamentIndex> {
        let mut t = self
            .tournaments
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        while let Some((at, id)) = t.ends.first().cloned()
            && at <= now
        {
            t.ends.pop_first();
            let freed = t.drop_tournament(&id);
            self.kept_bytes.fetch_sub(freed, Ordering::Relaxed);
        }
        t
    }

    /// Refuses a record of `bytes` kept beside the games (a tournament, a league) when
    /// they would hold more than `MEMORY_MAX_BYTES`.
    pub(super) fn kept_room(&self, bytes: usize) -> Result<(), StoreError> {
        let (mut inner, now) = self.lock();
        let held = inner.bytes + self.kept_bytes.load(Ordering::Relaxed);
        if held.saturating_add(bytes) <= self.max_bytes {
            return Ok(());
        }
        inner.sweep(now);
        let held = inner.bytes + self.kept_bytes.load(Ordering::Relaxed);
        if held.saturating_add(bytes) <= self.max_bytes {
            return Ok(());
        }
        Err(StoreError::FullBytes {
            max: self.max_bytes,
            frees_in: inner.first_expiry(now),
        })
    }
}

impl MemoryStore {
    /// The compare-and-set of a record kept beside the games (in `map`), its bytes
    /// counted. Saves are not refused for room, as a game's are not: what runs goes on.
    pub(super) fn save_kept(
        &self,
        map: &mut HashMap<String, Stored>,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> SaveOutcome {
        let (before, after) = (map.get(id).map(|s| s.bytes.len()), bytes.len());
        let saved = save_versioned(map, id, expected, bytes);
        if let (SaveOutcome::Saved { .. }, Some(before)) = (&saved, before) {
            self.kept_bytes.fetch_add(after, Ordering::Relaxed);
            self.kept_bytes.fetch_sub(before, Ordering::Relaxed);
        }
        saved
    }
}

impl TournamentStore for MemoryStore {
    async fn create_tournament(&self, id: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.kept_room(bytes.len())?;
        let mut t = self.tournaments();
        if t.tournaments.contains_key(id) {
            return Err(StoreError::Exists);
        }
        self.kept_bytes.fetch_add(bytes.len(), Ordering::Relaxed);
        t.tournaments
            .insert(id.to_owned(), Stored { version: 1, bytes });
        Ok(())
    }

    async fn load_tournament(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        Ok(self.tournaments().tournaments.get(id).cloned())
    }

    async fn save_tournament(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let mut t = self.tournaments();
        Ok(self.save_kept(&mut t.tournaments, id, expected, bytes))
    }

    async fn keep_tournament_for(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut t = self.tournaments();
        if !t.tournaments.contains_key(id) {
            return Ok(());
        }
        let at = Instant::now() + ttl;
        if let Some(before) = t.ends_at.insert(id.to_owned(), at) {
            t.ends.remove(&(before, id.to_owned()));
        }
        t.ends.insert((at, id.to_owned()));
        Ok(())
    }

    async fn list_tournament(
        &self,
        id: &str,
        created_ms: u64,
        status: &str,
        statuses: &[&str],
    ) -> Result<(), StoreError> {
        let mut t = self.tournaments();
        let entry = (Reverse(created_ms), Reverse(id.to_owned()));
        for other in statuses.iter().filter(|s| **s != status) {
            if let Some(list) = t.listed.get_mut(*other) {
                list.remove(&entry);
            }
        }
        t.listed.entry(status.to_owned()).or_default().insert(entry);
        t.listed_as
            .insert(id.to_owned(), (status.to_owned(), created_ms));
        Ok(())
    }

    async fn tournaments(
        &self,
        status: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let t = self.tournaments();
        Ok(t.listed.get(status).map_or_else(Vec::new, |list| {
            list.iter()
                .skip(offset)
                .take(limit)
                .map(|(_, Reverse(id))| id.clone())
                .collect()
        }))
    }

    async fn index_tournament_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        let mut t = self.tournaments();
        if let Some(old) = t.due_at.remove(id) {
            t.due.remove(&(old, id.to_owned()));
        }
        if let Some(due) = due_ms {
            t.due.insert((due, id.to_owned()));
            t.due_at.insert(id.to_owned(), due);
        }
        Ok(())
    }

    async fn tournaments_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let t = self.tournaments();
        Ok(t.due
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn claim_creator_tournament(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        Ok(claim(
            &mut self.tournaments().creators,
            creator,
            id,
            at_ms,
            max,
        ))
    }

    async fn release_creator_tournament(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        release(&mut self.tournaments().creators, creator, id);
        Ok(())
    }

    async fn creator_tournaments(&self, creator: &str) -> Result<Vec<(String, u64)>, StoreError> {
        Ok(held(&self.tournaments().creators, creator))
    }

    async fn claim_joined_tournament(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        Ok(claim(
            &mut self.tournaments().joined,
            player,
            id,
            at_ms,
            max,
        ))
    }

    async fn release_joined_tournament(&self, player: &str, id: &str) -> Result<(), StoreError> {
        release(&mut self.tournaments().joined, player, id);
        Ok(())
    }

    async fn joined_tournaments(&self, player: &str) -> Result<Vec<(String, u64)>, StoreError> {
        Ok(held(&self.tournaments().joined, player))
    }

    async fn index_player_tournament(
        &self,
        player: &str,
        id: &str,
        created_ms: u64,
        entered: bool,
    ) -> Result<(), StoreError> {
        let mut t = self.tournaments();
        if entered {
            let held = t.entered.entry(player.to_owned()).or_default();
            held.insert((Reverse(created_ms), Reverse(id.to_owned())));
            while held.len() > PLAYER_TOURNAMENTS_KEPT {
                held.pop_last();
            }
        } else if let Some(held) = t.entered.get_mut(player) {
            held.retain(|(_, Reverse(held))| held != id);
            if held.is_empty() {
                t.entered.remove(player);
            }
        }
        Ok(())
    }

    async fn player_tournaments(
        &self,
        player: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        let t = self.tournaments();
        Ok(t.entered.get(player).map_or((Vec::new(), 0), |held| {
            let page = held.iter().skip(offset).take(limit);
            let page = page.map(|(_, Reverse(id))| id.clone()).collect();
            (page, held.len() as u64)
        }))
    }

    async fn publish_tournament(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        let (inner, _) = self.lock();
        if let Some(tx) = inner.channels.get(&tournament_channel(id)) {
            // No subscriber: nobody is watching now.
            let _ = tx.send(event);
        }
        Ok(())
    }

    async fn subscribe_tournament(&self, id: &str) -> Result<EventStream, StoreError> {
        self.subscribe(&tournament_channel(id)).await
    }
}
