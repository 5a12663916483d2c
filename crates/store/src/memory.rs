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
use std::collections::hash_map::Entry;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

mod challenges;
mod claims;
mod game;
mod kept;
mod leagues;
mod players;
mod ratings;
mod seeks;
mod tournaments;
mod versioned;

use self::game::MemoryGame;
use self::versioned::save_versioned;
use super::now_ms;
use super::ranked::Ranked;
use super::value::{History, events_of, game_value, history_of, parse_game, stands_at, version_of};
use super::{
    Creator, EventStream, Evidence, GameKey, GameNow, GameStore, Health, IDEMPOTENCY_WINDOW,
    IdempotencyRecord, LOBBY_CHANNEL, Listing, Save, SaveOutcome, StoreError, Stored, StoredEvent,
    StoredGame, receiver_stream,
};

/// How many live events a subscriber may fall behind before its stream ends.
const SUBSCRIBER_BUFFER: usize = 64;

/// The one-process game store.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    idle_ttl: Duration,
    sweep_every: Duration,
    /// Games it may hold at once (expired ones are swept before refusing).
    max_games: usize,
    /// Bytes of games it may hold at once ([`MemoryGame::size`]; the same).
    max_bytes: usize,
    /// Players, under a lock of their own (`players`).
    players: Mutex<players::PlayerTables>,
    /// Challenges, under a lock of their own.
    challenges: Mutex<challenges::Challenges>,
    /// Seeks, under a lock of their own.
    seeks: Mutex<seeks::Seeks>,
    /// Ratings' bookkeeping, under a lock of their own.
    ratings: Mutex<ratings::RatingTables>,
    /// Claims on the keys of creates, under a lock of their own.
    claims: Mutex<claims::Claims>,
    /// Tournaments, under a lock of their own.
    tournaments: Mutex<tournaments::TournamentIndex>,
    /// Leagues, under a lock of their own.
    leagues: Mutex<leagues::LeagueIndex>,
    /// The bytes of the records kept beside the games (tournaments', leagues'), counted
    /// in `max_bytes` with the games'.
    kept_bytes: AtomicUsize,
}

/// A place in a list newest first (the lobby, a player's challenges, tournaments by
/// status): ties broken by id descending, which is the order Redis's ZREVRANGE gives, so
/// both stores list alike.
type NewestFirst = (Reverse<u64>, Reverse<String>);

struct Inner {
    games: HashMap<String, MemoryGame>,
    /// The lobby: open games in order, indexed by position so that a deep page costs
    /// what the first one does.
    open: Ranked<NewestFirst>,
    /// Games in play, by when they started, in the lobby's order.
    playing: Ranked<NewestFirst>,
    /// The latest finished games' ids, newest first, each once, at most [`crate::FINISHED_KEPT`].
    finished: VecDeque<String>,
    /// Listed games per owner (creator's address), for the cap on them.
    owners: HashMap<String, usize>,
    /// Games in play (not finished) per creator's address, for the cap on them.
    creators: HashMap<String, usize>,
    /// Games kept (finished or not) per creator's address, for the cap on them.
    kept: kept::Kept,
    /// Per game, who drives its bots and until when.
    leases: HashMap<String, (String, Instant)>,
    channels: HashMap<String, broadcast::Sender<StoredEvent>>,
    /// Games whose clock runs, earliest deadline first.
    deadlines: BTreeSet<(u64, String)>,
    last_sweep: Instant,
    /// The sum of the games' [`MemoryGame::size`].
    bytes: usize,
}

impl MemoryGame {
    fn version(&self) -> u64 {
        version_of(&self.value).expect("a value this store built")
    }

    fn stored(&self) -> StoredGame {
        parse_game(&self.value).expect("a value this store built")
    }
}

impl MemoryStore {
    /// A store whose games expire after `idle_ttl` without a write.
    pub fn new(idle_ttl: Duration) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner {
                games: HashMap::new(),
                open: Ranked::default(),
                playing: Ranked::default(),
                finished: VecDeque::new(),
                owners: HashMap::new(),
                creators: HashMap::new(),
                kept: kept::Kept::default(),
                leases: HashMap::new(),
                channels: HashMap::new(),
                deadlines: BTreeSet::new(),
                last_sweep: Instant::now(),
                bytes: 0,
            }),
            idle_ttl,
            sweep_every: (idle_ttl / 4).clamp(Duration::from_millis(100), Duration::from_secs(30)),
            max_games: usize::MAX,
            max_bytes: usize::MAX,
            players: Mutex::default(),
            challenges: Mutex::default(),
            seeks: Mutex::default(),
            ratings: Mutex::default(),
            claims: Mutex::default(),
            tournaments: Mutex::default(),
            leagues: Mutex::default(),
            kept_bytes: AtomicUsize::new(0),
        }
    }

    /// The same store holding at most `max` games: one more is refused with
    /// [`StoreError::Full`] (`MEMORY_MAX_GAMES`).
    pub fn with_max_games(mut self, max: usize) -> Self {
        self.max_games = max;
        self
    }

    /// The same store holding games of at most `max` bytes in all ([`MemoryGame::size`]):
    /// a create past it is refused with [`StoreError::FullBytes`] (`MEMORY_MAX_BYTES`).
    /// Saves are not: a game in play goes on, and the next creates wait for room.
    pub fn with_max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max;
        self
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
        let expired: Vec<String> = self
            .games
            .iter()
            .filter(|(_, game)| game.expires_at <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
        self.channels.retain(|_, tx| tx.receiver_count() > 0);
        self.leases.retain(|_, (_, until)| *until > now);
        self.last_sweep = now;
    }

    /// The live game under `id`, removing it first if it has expired.
    fn live(&mut self, id: &str, now: Instant) -> Option<&mut MemoryGame> {
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
        self.unlist(id);
        self.uncount(id);
        self.stop_playing(id);
        if let Some(game) = self.games.remove(id) {
            self.unkeep(game.maker.as_deref(), id);
            self.bytes -= game.size();
            if let Some(deadline) = game.deadline {
                self.deadlines.remove(&(deadline, id.to_owned()));
            }
        }
    }

    /// Takes game `id` out of its creator's games in play, if it is there.
    fn uncount(&mut self, id: &str) {
        let Some(creator) = self.games.get_mut(id).and_then(|game| game.creator.take()) else {
            return;
        };
        if let Entry::Occupied(mut count) = self.creators.entry(creator) {
            *count.get_mut() -= 1;
            if *count.get() == 0 {
                count.remove();
            }
        }
    }

    /// Puts game `id` in the list of games in play, started at `started_ms`.
    fn start_playing(&mut self, id: &str, started_ms: u64) {
        if let Some(game) = self.games.get_mut(id)
            && game.started.is_none()
        {
            game.started = Some(started_ms);
            self.playing
                .insert((Reverse(started_ms), Reverse(id.to_owned())));
        }
    }

    /// Takes game `id` out of the list of games in play, if it is there.
    fn stop_playing(&mut self, id: &str) {
        if let Some(started_ms) = self.games.get_mut(id).and_then(|game| game.started.take()) {
            self.playing
                .remove(&(Reverse(started_ms), Reverse(id.to_owned())));
        }
    }

    /// Takes game `id` out of the lobby (and its owner's count), if it is there.
    fn unlist(&mut self, id: &str) {
        let Some(game) = self.games.get_mut(id) else {
            return;
        };
        let Some(created_ms) = game.listed.take() else {
            return;
        };
        self.open
            .remove(&(Reverse(created_ms), Reverse(id.to_owned())));
        if let Some(owner) = &game.owner
            && let Entry::Occupied(mut count) = self.owners.entry(owner.clone())
        {
            *count.get_mut() -= 1;
            if *count.get() == 0 {
                count.remove();
            }
        }
    }
}

impl GameStore for MemoryStore {
    async fn create_by(
        &self,
        id: &GameKey,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        let (mut inner, now) = self.lock();
        if inner.live(id, now).is_some() {
            return Err(StoreError::Exists);
        }
        let bytes_full = |inner: &Inner| {
            let held = inner.bytes + self.kept_bytes.load(Ordering::Relaxed);
            held.saturating_add(bytes.len()) > self.max_bytes
        };
        let full = |inner: &Inner| inner.games.len() >= self.max_games || bytes_full(inner);
        if full(&inner) {
            inner.sweep(now);
            if full(&inner) {
                // True when said: finished games hold their room until they expire.
                let frees_in = inner.first_expiry(now);
                return Err(if bytes_full(&inner) {
                    StoreError::FullBytes {
                        max: self.max_bytes,
                        frees_in,
                    }
                } else {
                    StoreError::Full {
                        max: self.max_games,
                        frees_in,
                    }
                });
            }
        }
        if let Some(refused) = creator.as_ref().and_then(|c| inner.kept_refusal(c, now)) {
            return Err(refused);
        }
        let owner = listing.as_ref().and_then(|l| l.owner.clone());
        if let Some((owner, max)) = &owner
            && inner.owners.get(owner).is_some_and(|n| n >= max)
        {
            return Err(StoreError::TooManyWaiting { max: *max });
        }
        if let Some(Creator { address, max, .. }) = &creator
            && inner.creators.get(address).is_some_and(|n| n >= max)
        {
            return Err(StoreError::TooManyGames { max: *max });
        }
        if let Some(Creator { address, .. }) = &creator {
            *inner.creators.entry(address.clone()).or_default() += 1;
            inner.keep(address, id);
        }
        let created_ms = listing.as_ref().map(|l| l.created_ms);
        let value = game_value(1, &History::default(), &bytes);
        // Counted as its size() counts it, so its removal takes off what was added.
        inner.bytes += value.len();
        inner.games.insert(
            id.to_owned(),
            MemoryGame {
                value,
                expires_at: now + self.idle_ttl,
                listed: created_ms,
                owner: owner.as_ref().map(|(owner, _)| owner.clone()),
                maker: creator.as_ref().map(|c| c.address.clone()),
                creator: creator.map(|c| c.address),
                started: None,
                idempotency: HashMap::new(),
                windows: HashMap::new(),
                deadline: None,
            },
        );
        if let Some(created_ms) = created_ms {
            inner
                .open
                .insert((Reverse(created_ms), Reverse(id.to_owned())));
            if let Some((owner, _)) = owner {
                *inner.owners.entry(owner).or_default() += 1;
            }
        } else {
            inner.start_playing(id, now_ms());
        }
        Ok(())
    }

    async fn load(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner.live(id, now).map(|game| game.stored()))
    }

    /// Every write here is done when its call returns.
    async fn load_after_writes(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        self.load(id).await
    }

    async fn save(&self, id: &GameKey, save: Save) -> Result<SaveOutcome<GameNow>, StoreError> {
        let (mut inner, now) = self.lock();
        let Some(game) = inner.live(id, now) else {
            return Ok(SaveOutcome::Missing);
        };
        let made = save
            .idempotency
            .as_ref()
            .and_then(|record| game.idempotency.get(&record.key));
        if made.is_some() || !stands_at(&game.value, save.expected, save.history.as_ref()) {
            return Ok(SaveOutcome::Conflict {
                current: GameNow {
                    stored: game.stored(),
                    made: made.cloned(),
                },
            });
        }
        let version = save.expected + 1;
        let size_before = game.size();
        // From the caller's history when given, as on Redis (it has the same length).
        let own;
        let before = match &save.history {
            Some(history) => history,
            None => {
                own = history_of(&game.value).expect("a value this store built");
                &own
            }
        };
        game.value = save.value_from(before);
        game.expires_at = now + self.idle_ttl;
        if let Some(record) = save.idempotency {
            let window = game.windows.entry(save.seat).or_default();
            window.push_back(record.key.clone());
            if window.len() > IDEMPOTENCY_WINDOW
                && let Some(oldest) = window.pop_front()
            {
                game.idempotency.remove(&oldest);
            }
            game.idempotency.insert(record.key.clone(), record);
        }
        let event = save.event.map(|payload| StoredEvent { version, payload });
        let after = game.size();
        inner.bytes = inner.bytes - size_before + after;
        if let Some(deadline) = save.deadline {
            // Exact here: the index under the same lock as the game.
            inner.set_deadline(id, deadline.after);
        }
        if save.unlist {
            inner.unlist(id);
            inner.start_playing(id, now_ms());
        }
        if save.finished {
            inner.uncount(id);
            inner.stop_playing(id);
            inner.finished.retain(|f| f != id);
            inner.finished.push_front(id.to_owned());
            inner.finished.truncate(crate::FINISHED_KEPT);
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
        id: &GameKey,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner
            .live(id, now)
            .and_then(|game| game.idempotency.get(key).cloned()))
    }

    /// A game expired since the last sweep still takes its place in the order (the sweep,
    /// every quarter of the idle ttl at most, removes it), but is not returned.
    async fn list_open(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, Stored)>, StoreError> {
        let (inner, now) = self.lock();
        Ok(inner
            .open
            .iter_from(offset)
            .take(limit)
            .filter_map(|(_, Reverse(id))| {
                let game = inner.games.get(id).filter(|game| game.expires_at > now)?;
                let game = game.stored();
                let stored = Stored {
                    version: game.version,
                    bytes: game.bytes,
                };
                Some((id.clone(), stored))
            })
            .collect())
    }

    async fn list_playing(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        let (inner, now) = self.lock();
        Ok(inner
            .playing
            .iter_from(offset)
            .take(limit)
            .filter(|(_, Reverse(id))| inner.games.get(id).is_some_and(|g| g.expires_at > now))
            .map(|(_, Reverse(id))| id.clone())
            .collect())
    }

    async fn list_finished(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        let (inner, _) = self.lock();
        let newest = inner.finished.iter().skip(offset);
        Ok(newest.take(limit).cloned().collect())
    }

    async fn events_since(&self, id: &GameKey, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let (mut inner, now) = self.lock();
        Ok(inner
            .live(id, now)
            .map(|game| {
                let events = events_of(&game.value).expect("a value this store built");
                events.into_iter().filter(|e| e.version > after).collect()
            })
            .unwrap_or_default())
    }

    async fn subscribe(&self, id: &GameKey) -> Result<EventStream, StoreError> {
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

    async fn due_between(
        &self,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let (inner, now) = self.lock();
        Ok(inner
            .deadlines
            .range((from, String::new())..)
            .take_while(|(deadline, _)| *deadline <= to)
            .filter(|(_, id)| inner.games.get(id).is_some_and(|g| g.expires_at > now))
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn index_deadline(
        &self,
        id: &GameKey,
        version: u64,
        deadline: Option<u64>,
    ) -> Result<(), StoreError> {
        let (mut inner, now) = self.lock();
        if inner.live(id, now).is_some_and(|g| g.version() == version) {
            inner.set_deadline(id, deadline);
        }
        Ok(())
    }

    async fn lease(&self, id: &GameKey, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        let (mut inner, now) = self.lock();
        match inner.leases.get(id) {
            Some((other, until)) if other != holder && *until > now => Ok(false),
            _ => {
                inner
                    .leases
                    .insert(id.to_owned(), (holder.to_owned(), now + ttl));
                Ok(true)
            }
        }
    }

    async fn release(&self, id: &GameKey, holder: &str) -> Result<(), StoreError> {
        let (mut inner, _) = self.lock();
        if inner.leases.get(id).is_some_and(|(h, _)| h == holder) {
            inner.leases.remove(id);
        }
        Ok(())
    }

    async fn publish_lobby(&self, event: StoredEvent) -> Result<(), StoreError> {
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

    async fn confirm(&self, _id: &GameKey, _evidence: Evidence<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    async fn ping(&self) -> Result<Health, StoreError> {
        Ok(Health::default())
    }
}
