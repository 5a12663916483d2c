//! This process's copies of the games it wrote last, each with the version it was stored
//! as, so that a move starts from its game without loading it: the move's only trip to
//! the store is the save, whose compare-and-set on the version refuses a stale copy and
//! answers the game as it is (see [`super::write`]). A copy may be stale (another process
//! moved since): that costs the move one more attempt on the store's answer, never a wrong
//! one, as nothing is decided on a copy that is not then saved from it.
//!
//! Bounded: at most `capacity` games (`GAME_CACHE_GAMES`), split over a few shards under
//! their own locks; beyond that the least recently written game is dropped (the clock
//! algorithm, second chance for a game written since it was last passed over). A game is
//! taken out while a write works on it and put back with its new version, so a copy is
//! never shared by two writes.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use super::record::Record;
use crate::domain::GameId;
use crate::store::History;

/// Shards of the cache: enough that two cores rarely meet on one lock.
const SHARDS: usize = 16;

pub(super) struct GameCache {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    /// Games a shard keeps at most (0: the cache is off).
    per_shard: usize,
}

#[derive(Default)]
struct Shard {
    games: HashMap<GameId, CachedGame>,
    /// The games in the order they came in, for the clock hand.
    order: VecDeque<GameId>,
}

/// A copy: its version, its record, and the events the store keeps with that version
/// (when known: a save from the copy hands them back).
type Copy = (u64, Record, Option<History>);

struct CachedGame {
    /// `None` while a write has taken the game out.
    copy: Option<Copy>,
    /// Written since the clock hand last passed it.
    used: bool,
}

impl GameCache {
    /// A cache of at most `capacity` games (rounded up to a multiple of the shards); 0
    /// turns it off.
    pub(super) fn new(capacity: usize) -> GameCache {
        GameCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            per_shard: capacity.div_ceil(SHARDS),
        }
    }

    fn shard(&self, id: GameId) -> std::sync::MutexGuard<'_, Shard> {
        let at = self.hasher.hash_one(id) as usize % SHARDS;
        // A panic under the lock leaves the shard consistent (each step below is whole).
        self.shards[at]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Game `id`'s copy and its version, taken out until [`put`](Self::put) gives it back.
    pub(super) fn take(&self, id: GameId) -> Option<Copy> {
        if self.per_shard == 0 {
            return None;
        }
        self.shard(id).games.get_mut(&id)?.copy.take()
    }

    /// `read` of game `id`'s copy and its version, if there is one (not taken out by a
    /// write) of version `at_least` or later.
    pub(super) fn read<R>(
        &self,
        id: GameId,
        at_least: u64,
        read: impl FnOnce(u64, &Record) -> R,
    ) -> Option<R> {
        if self.per_shard == 0 {
            return None;
        }
        let shard = self.shard(id);
        let (version, record, _) = shard.games.get(&id)?.copy.as_ref()?;
        (*version >= at_least).then(|| read(*version, record))
    }

    /// Keeps `record` as game `id` at `version` (with the events the store keeps then),
    /// unless a copy of a later version is there already (a concurrent write of this
    /// process stored after this one).
    pub(super) fn put(&self, id: GameId, version: u64, record: Record, history: Option<History>) {
        if self.per_shard == 0 {
            return;
        }
        let mut shard = self.shard(id);
        match shard.games.entry(id) {
            Entry::Occupied(mut slot) => {
                let slot = slot.get_mut();
                if slot.copy.as_ref().is_none_or(|(kept, ..)| *kept < version) {
                    slot.copy = Some((version, record, history));
                }
                slot.used = true;
            }
            Entry::Vacant(slot) => {
                slot.insert(CachedGame {
                    copy: Some((version, record, history)),
                    used: false,
                });
                shard.order.push_back(id);
                shard.evict(self.per_shard);
            }
        }
    }

    /// Forgets game `id` (its match is over, or it is gone).
    pub(super) fn forget(&self, id: GameId) {
        if self.per_shard == 0 {
            return;
        }
        let mut shard = self.shard(id);
        if shard.games.remove(&id).is_some() {
            shard.order.retain(|&kept| kept != id);
        }
    }

    /// Games kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap().games.len())
            .sum()
    }
}

impl Shard {
    /// Drops games until at most `max` are kept: the hand passes over the oldest, giving a
    /// game written since its last pass a second chance.
    fn evict(&mut self, max: usize) {
        while self.games.len() > max {
            let Some(id) = self.order.pop_front() else {
                return;
            };
            match self.games.get_mut(&id) {
                Some(slot) if slot.used => {
                    slot.used = false;
                    self.order.push_back(id);
                }
                Some(_) => {
                    self.games.remove(&id);
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Game, Preset, Seed};

    fn record() -> Record {
        let game = Game::new(Preset::Classic.rules(), 2, Seed::from_text("cache"), None).unwrap();
        Record::new(0, Preset::Classic, false, None, game)
    }

    #[test]
    fn a_copy_is_taken_once_and_only_a_later_version_replaces_it() {
        let cache = GameCache::new(64);
        let g = GameId::random();
        assert!(cache.take(g).is_none());
        cache.put(g, 3, record(), None);
        assert_eq!(cache.read(g, 3, |v, _| v), Some(3));
        assert_eq!(cache.read(g, 4, |v, _| v), None, "not as late as asked");
        assert_eq!(cache.take(g).map(|(v, ..)| v), Some(3));
        assert_eq!(cache.read(g, 1, |v, _| v), None, "taken out");
        assert!(
            cache.take(g).is_none(),
            "taken out while a write works on it"
        );
        cache.put(g, 4, record(), None);
        cache.put(g, 2, record(), None);
        assert_eq!(
            cache.take(g).map(|(v, ..)| v),
            Some(4),
            "never an older one"
        );
        cache.put(g, 5, record(), None);
        cache.forget(g);
        assert!(cache.take(g).is_none());
    }

    #[test]
    fn it_keeps_at_most_its_capacity_and_drops_what_was_not_written_since() {
        let cache = GameCache::new(SHARDS);
        let ids: Vec<GameId> = (0..10 * SHARDS).map(|_| GameId::random()).collect();
        for &id in &ids {
            cache.put(id, 1, record(), None);
            // The first game is written again and again: it stays.
            cache.put(ids[0], 2, record(), None);
        }
        assert!(cache.len() <= SHARDS, "{} kept", cache.len());
        assert_eq!(cache.take(ids[0]).map(|(v, ..)| v), Some(2));
    }

    #[test]
    fn off_keeps_nothing() {
        let cache = GameCache::new(0);
        let g = GameId::random();
        cache.put(g, 1, record(), None);
        assert!(cache.take(g).is_none());
    }
}
