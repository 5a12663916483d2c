//! The in-process store: the default when no `REDIS_URL` is given, and the reference the
//! Redis store is tested against.
//!
//! Everything lives in one map behind one `std::sync::Mutex`. Every operation is a few
//! map lookups and never awaits while holding the lock, so a plain mutex is both simpler
//! and faster than an async one, and it makes each call trivially atomic: a save's
//! compare-and-set, idempotency record, event and unlisting happen under one lock, which
//! is what the Lua script buys on Redis.
//!
//! Games expire after `idle_ttl` without a write, like the Redis keys do, so an abandoned
//! game does not hold memory forever. Expiry is lazy (an expired game is treated as gone
//! the moment it is looked at) plus a full sweep at most every few seconds, piggybacked on
//! ordinary calls, so no background task is needed and idle processes cost nothing.
//!
//! Live events fan out through one tokio `broadcast` channel per game. The channels live
//! apart from the games so that a subscriber may arrive before the game is created or
//! outlive it, exactly as a Redis pub/sub channel does. A subscriber too slow to keep up
//! loses its stream (it ends) rather than silently skipping events: the client then
//! reconnects and catches up from the history with `events_since`.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use super::{
    Event, EventStream, GameId, GameStore, IdempotencyRecord, LOBBY_CHANNEL, Save, SaveOutcome,
    StoreError, Stored,
};

/// How many events of one game are kept for `events_since` (the Redis store keeps the same).
///
/// Enough for an event stream that lost its connection to resume exactly after anything
/// short of a long outage (16 versions are 8 moves of each player of a 2-seat game); a
/// client further behind gets one event for the current version instead, and fetches its
/// view, as it would anyway. Every game in play keeps this many in Redis, so the cap is a
/// large part of what a game costs there: 32 events were about 700 bytes, more than the
/// game itself, and 256 about 30 KB. A finished game keeps only its last event.
pub const EVENT_HISTORY: usize = 16;

/// How many live events a subscriber may fall behind before its stream ends.
const SUBSCRIBER_BUFFER: usize = 64;

/// The one-process game store.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    idle_ttl: Duration,
    sweep_every: Duration,
}

struct Inner {
    games: HashMap<String, Game>,
    /// The lobby: open games newest first, ties broken by id descending, which is the
    /// order Redis's ZREVRANGE gives, so both stores list alike.
    open: BTreeSet<(Reverse<u64>, Reverse<String>)>,
    channels: HashMap<String, broadcast::Sender<Event>>,
    /// Games whose clock runs, earliest deadline first.
    deadlines: BTreeSet<(u64, String)>,
    last_sweep: Instant,
}

struct Game {
    version: u64,
    bytes: Vec<u8>,
    expires_at: Instant,
    /// `Some(created_ms)` while the game is in the lobby's list.
    listed: Option<u64>,
    idempotency: HashMap<String, IdempotencyRecord>,
    events: VecDeque<Event>,
    deadline: Option<u64>,
}

impl MemoryStore {
    /// A store whose games expire after `idle_ttl` without a write.
    pub fn new(idle_ttl: Duration) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner {
                games: HashMap::new(),
                open: BTreeSet::new(),
                channels: HashMap::new(),
                deadlines: BTreeSet::new(),
                last_sweep: Instant::now(),
            }),
            idle_ttl,
            sweep_every: (idle_ttl / 4).clamp(Duration::from_millis(100), Duration::from_secs(30)),
        }
    }

    /// Locks the map, sweeping expired games first when a sweep is due. A poisoned lock is
    /// taken anyway: every mutation below leaves the map consistent at each step that
    /// could panic (none should), and refusing all further calls would be worse.
    fn lock(&self) -> (MutexGuard<'_, Inner>, Instant) {
        let now = Instant::now();
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if now.duration_since(inner.last_sweep) >= self.sweep_every {
            inner.sweep(now);
        }
        (inner, now)
    }
}

impl Inner {
    fn sweep(&mut self, now: Instant) {
        let Inner {
            games,
            open,
            channels,
            deadlines,
            ..
        } = self;
        games.retain(|id, game| {
            let alive = game.expires_at > now;
            if !alive {
                if let Some(created_ms) = game.listed {
                    open.remove(&(Reverse(created_ms), Reverse(id.clone())));
                }
                if let Some(deadline) = game.deadline {
                    deadlines.remove(&(deadline, id.clone()));
                }
            }
            alive
        });
        channels.retain(|_, tx| tx.receiver_count() > 0);
        self.last_sweep = now;
    }

    /// The live game under `id`, removing it first if it has expired.
    fn live(&mut self, id: &str, now: Instant) -> Option<&mut Game> {
        if self
            .games
            .get(id)
            .is_some_and(|game| game.expires_at <= now)
        {
            self.remove(id);
        }
        self.games.get_mut(id)
    }

    fn set_deadline(&mut self, id: &str, deadline: Option<u64>) {
        let Some(game) = self.games.get_mut(id) else {
            return;
        };
        if let Some(old) = std::mem::replace(&mut game.deadline, deadline) {
            self.deadlines.remove(&(old, id.to_owned()));
        }
        if let Some(new) = deadline {
            self.deadlines.insert((new, id.to_owned()));
        }
    }

    fn remove(&mut self, id: &str) {
        if let Some(game) = self.games.remove(id) {
            if let Some(created_ms) = game.listed {
                self.open
                    .remove(&(Reverse(created_ms), Reverse(id.to_owned())));
            }
            if let Some(deadline) = game.deadline {
                self.deadlines.remove(&(deadline, id.to_owned()));
            }
        }
    }
}

impl GameStore for MemoryStore {
    async fn create(
        &self,
        id: &GameId,
        bytes: Vec<u8>,
        listed: bool,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let (mut inner, now) = self.lock();
        if inner.live(id, now).is_some() {
            return Err(StoreError::Exists);
        }
        inner.games.insert(
            id.to_owned(),
            Game {
                version: 1,
                bytes,
                expires_at: now + self.idle_ttl,
                listed: listed.then_some(created_ms),
                idempotency: HashMap::new(),
                events: VecDeque::new(),
                deadline: None,
            },
        );
        if listed {
            inner
                .open
                .insert((Reverse(created_ms), Reverse(id.to_owned())));
        }
        Ok(())
    }

    async fn load(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner.live(id, now).map(|game| Stored {
            version: game.version,
            bytes: game.bytes.clone(),
        }))
    }

    async fn save(&self, id: &GameId, save: Save) -> Result<SaveOutcome, StoreError> {
        let (mut inner, now) = self.lock();
        let Some(game) = inner.live(id, now) else {
            return Ok(SaveOutcome::Missing);
        };
        if game.version != save.expected {
            return Ok(SaveOutcome::Conflict {
                current: game.version,
            });
        }
        let version = save.expected + 1;
        game.version = version;
        game.bytes = save.bytes;
        game.expires_at = now + self.idle_ttl;
        if let Some(record) = save.idempotency {
            game.idempotency.entry(record.key.clone()).or_insert(record);
        }
        let event = save.event.map(|payload| Event { version, payload });
        if let Some(event) = &event {
            let cap = if save.finished { 1 } else { EVENT_HISTORY };
            while game.events.len() >= cap {
                game.events.pop_front();
            }
            game.events.push_back(event.clone());
        }
        let unlisted = if save.unlist {
            game.listed.take()
        } else {
            None
        };
        if let Some(deadline) = save.deadline {
            // Exact here: the index under the same lock as the game.
            inner.set_deadline(id, deadline.after);
        }
        if let Some(created_ms) = unlisted {
            inner
                .open
                .remove(&(Reverse(created_ms), Reverse(id.to_owned())));
        }
        if let Some(event) = event
            && let Some(tx) = inner.channels.get(id)
        {
            // No receiver is not an error: nobody is watching this game right now.
            let _ = tx.send(event);
        }
        Ok(SaveOutcome::Saved { version })
    }

    async fn idempotency(
        &self,
        id: &GameId,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner
            .live(id, now)
            .and_then(|game| game.idempotency.get(key).cloned()))
    }

    async fn list_open(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        let (inner, now) = self.lock();
        Ok(inner
            .open
            .iter()
            .filter(|(_, Reverse(id))| {
                inner
                    .games
                    .get(id)
                    .is_some_and(|game| game.expires_at > now)
            })
            .skip(offset)
            .take(limit)
            .map(|(_, Reverse(id))| id.clone())
            .collect())
    }

    async fn events_since(&self, id: &GameId, after: u64) -> Result<Vec<Event>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner
            .live(id, now)
            .map(|game| {
                game.events
                    .iter()
                    .filter(|event| event.version > after)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn subscribe(&self, id: &GameId) -> Result<EventStream, StoreError> {
        let (mut inner, _) = self.lock();
        let rx = match inner.channels.get(id) {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(SUBSCRIBER_BUFFER);
                inner.channels.insert(id.to_owned(), tx);
                rx
            }
        };
        Ok(receiver_stream(rx))
    }

    async fn due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let (inner, now) = self.lock();
        Ok(inner
            .deadlines
            .iter()
            .take_while(|(deadline, _)| *deadline <= now_ms)
            .filter(|(_, id)| inner.games.get(id).is_some_and(|g| g.expires_at > now))
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn index_deadline(
        &self,
        id: &GameId,
        version: u64,
        deadline: Option<u64>,
    ) -> Result<(), StoreError> {
        let (mut inner, now) = self.lock();
        if inner.live(id, now).is_some_and(|g| g.version == version) {
            inner.set_deadline(id, deadline);
        }
        Ok(())
    }

    async fn publish_lobby(&self, event: Event) -> Result<(), StoreError> {
        let (inner, _) = self.lock();
        if let Some(tx) = inner.channels.get(LOBBY_CHANNEL) {
            // No subscriber: nobody to tell.
            let _ = tx.send(event);
        }
        Ok(())
    }

    async fn subscribe_lobby(&self) -> Result<EventStream, StoreError> {
        self.subscribe(LOBBY_CHANNEL).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A broadcast receiver as a stream that ends when the channel closes or the subscriber
/// lags: a gap must be visible to the client (its stream ends and it resumes from the
/// history), never silently skipped. Shared with the Redis store's local fan-out.
pub(crate) fn receiver_stream(rx: broadcast::Receiver<Event>) -> EventStream {
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(event) => Some((event, rx)),
            Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => {
                None
            }
        }
    }))
}
