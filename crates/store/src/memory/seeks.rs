//! The memory store's seeks: every seek, pool and index behind one lock, so a pairing
//! takes its seeks in one step, as the script does on Redis. A seek is dropped
//! [`SEEK_KEPT`] after its creation.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use super::MemoryStore;
use crate::StoreError;
use crate::seeks::{Added, Gap, SEEK_KEPT, SeekEntry, SeekState, SeekStore, Settled, pick};

#[derive(Default)]
pub(super) struct Seeks {
    seeks: HashMap<String, (SeekEntry, Instant)>,
    /// Per pool, its waiting seeks oldest first (by creation, then id).
    pools: HashMap<String, BTreeSet<(u64, String)>>,
    /// Per player, its waiting seeks.
    players: HashMap<String, HashSet<String>>,
    /// Waiting seeks by when the sweep must look at them.
    due: BTreeSet<(u64, String)>,
    /// Games matched and not yet said created: when to check, and their seeks.
    starting: BTreeSet<(u64, String)>,
    games: HashMap<String, Vec<String>>,
    /// Pools due for pairing: by when, and each one's entry.
    pools_due: BTreeSet<(u64, String)>,
    pool_due_at: HashMap<String, u64>,
}

impl Seeks {
    /// Takes waiting seek `id` out of its pool and indexes, and sets its state.
    fn close(&mut self, id: &str, state: SeekState) {
        let Some((entry, _)) = self.seeks.get_mut(id) else {
            return;
        };
        if entry.state != SeekState::Waiting {
            return;
        }
        entry.state = state;
        let (pool, player, key, due) = (
            entry.pool.clone(),
            entry.player.clone(),
            (entry.created_ms, entry.id.clone()),
            (entry.due_ms(), entry.id.clone()),
        );
        if let Some(waiting) = self.pools.get_mut(&pool) {
            waiting.remove(&key);
            if waiting.is_empty() {
                self.pools.remove(&pool);
            }
        }
        if let Some(open) = self.players.get_mut(&player) {
            open.remove(id);
        }
        self.due.remove(&due);
    }

    fn set_pool_due(&mut self, pool: &str, due_ms: Option<u64>) {
        if let Some(old) = self.pool_due_at.remove(pool) {
            self.pools_due.remove(&(old, pool.to_owned()));
        }
        if let Some(due) = due_ms {
            self.pools_due.insert((due, pool.to_owned()));
            self.pool_due_at.insert(pool.to_owned(), due);
        }
    }

    fn match_to(&mut self, ids: &[String], game: &str, recover_ms: u64) {
        for id in ids {
            self.close(id, SeekState::Matched(game.to_owned()));
        }
        self.starting.insert((recover_ms, game.to_owned()));
        self.games.insert(game.to_owned(), ids.to_vec());
    }

    fn drop_old(&mut self, now: Instant) {
        let old: Vec<String> = self
            .seeks
            .iter()
            .filter(|(_, (_, until))| *until <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in old {
            self.close(&id, SeekState::Expired);
            self.seeks.remove(&id);
        }
    }
}

impl MemoryStore {
    fn seeks(&self) -> std::sync::MutexGuard<'_, Seeks> {
        // As for games: every mutation leaves the maps consistent.
        self.seeks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SeekStore for MemoryStore {
    async fn add_seek(
        &self,
        entry: &SeekEntry,
        max_open: usize,
        now_ms: u64,
    ) -> Result<Added, StoreError> {
        let mut seeks = self.seeks();
        seeks.drop_old(Instant::now());
        let open: Vec<&SeekEntry> = seeks
            .players
            .get(&entry.player)
            .into_iter()
            .flatten()
            .filter_map(|id| seeks.seeks.get(id))
            .map(|(s, _)| s)
            .filter(|s| s.expires_ms > now_ms)
            .collect();
        if let Some(same) = open.iter().find(|s| s.pool == entry.pool) {
            return Ok(Added::Waiting(same.id.clone()));
        }
        if open.len() >= max_open {
            return Ok(Added::TooMany);
        }
        if seeks.seeks.contains_key(&entry.id) {
            return Err(StoreError::Exists);
        }
        let mut entry = entry.clone();
        entry.state = SeekState::Waiting;
        let id = entry.id.clone();
        seeks
            .pools
            .entry(entry.pool.clone())
            .or_default()
            .insert((entry.created_ms, id.clone()));
        seeks
            .players
            .entry(entry.player.clone())
            .or_default()
            .insert(id.clone());
        seeks.due.insert((entry.due_ms(), id.clone()));
        seeks.set_pool_due(&entry.pool, Some(now_ms));
        seeks.seeks.insert(id, (entry, Instant::now() + SEEK_KEPT));
        Ok(Added::Added)
    }

    async fn player_seeks(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let seeks = self.seeks();
        Ok(seeks
            .players
            .get(player)
            .map(|ids| ids.iter().cloned().collect())
            .unwrap_or_default())
    }

    async fn load_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        Ok(self.seeks().seeks.get(id).map(|(entry, _)| entry.clone()))
    }

    async fn cancel_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        let mut seeks = self.seeks();
        seeks.close(id, SeekState::Canceled);
        Ok(seeks.seeks.get(id).map(|(entry, _)| entry.clone()))
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
        let mut seeks = self.seeks();
        let Some(waiting) = seeks.pools.get(pool) else {
            seeks.set_pool_due(pool, None);
            return Ok(Vec::new());
        };
        let candidates: Vec<(String, String, f64, u64)> = waiting
            .iter()
            .filter_map(|(_, id)| seeks.seeks.get(id))
            .filter(|(entry, _)| entry.expires_ms > now_ms)
            .map(|(e, _)| (e.id.clone(), e.player.clone(), e.rating, e.created_ms))
            .collect();
        let picked = pick(&candidates, seats, now_ms, by_rating);
        if !picked.is_empty() {
            seeks.match_to(&picked, game, recover_ms);
        }
        let left = seeks.pools.get(pool).map_or(0, BTreeSet::len);
        seeks.set_pool_due(pool, (left >= seats).then_some(retry_ms));
        Ok(picked)
    }

    async fn pools_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        Ok(self
            .seeks()
            .pools_due
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, pool)| pool.clone())
            .collect())
    }

    async fn due_seeks(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut seeks = self.seeks();
        seeks.drop_old(Instant::now());
        Ok(seeks
            .due
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn settle_seek(
        &self,
        id: &str,
        now_ms: u64,
        game: &str,
        recover_ms: u64,
    ) -> Result<Settled, StoreError> {
        let mut seeks = self.seeks();
        let Some((entry, _)) = seeks.seeks.get(id) else {
            return Ok(Settled::Nothing);
        };
        if entry.state != SeekState::Waiting {
            return Ok(Settled::Nothing);
        }
        if entry.expires_ms <= now_ms {
            seeks.close(id, SeekState::Expired);
            return Ok(Settled::Expired);
        }
        if entry.fallback_ms.is_some_and(|at| at <= now_ms) {
            seeks.match_to(&[id.to_owned()], game, recover_ms);
            return Ok(Settled::FellBack);
        }
        Ok(Settled::Nothing)
    }

    async fn starting_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        Ok(self
            .seeks()
            .starting
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, game)| game.clone())
            .collect())
    }

    async fn seeks_of_game(&self, game: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.seeks().games.get(game).cloned().unwrap_or_default())
    }

    async fn started(&self, game: &str) -> Result<(), StoreError> {
        let mut seeks = self.seeks();
        seeks.starting.retain(|(_, g)| g != game);
        seeks.games.remove(game);
        Ok(())
    }

    async fn unmatch(
        &self,
        game: &str,
        refused: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let mut seeks = self.seeks();
        seeks.starting.retain(|(_, g)| g != game);
        let mut back = Vec::new();
        for id in seeks.games.remove(game).unwrap_or_default() {
            let Some((entry, _)) = seeks.seeks.get_mut(&id) else {
                continue;
            };
            if entry.state != SeekState::Matched(game.to_owned()) {
                continue;
            }
            if id == refused {
                entry.state = SeekState::Canceled;
                continue;
            }
            if entry.expires_ms <= now_ms {
                entry.state = SeekState::Expired;
                continue;
            }
            entry.state = SeekState::Waiting;
            let (pool, player) = (entry.pool.clone(), entry.player.clone());
            let (key, due) = ((entry.created_ms, id.clone()), (entry.due_ms(), id.clone()));
            seeks.pools.entry(pool.clone()).or_default().insert(key);
            seeks.players.entry(player).or_default().insert(id.clone());
            seeks.due.insert(due);
            seeks.set_pool_due(&pool, Some(now_ms));
            back.push(id);
        }
        Ok(back)
    }
}
