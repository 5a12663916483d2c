//! Persistence of games: the only module that talks to Redis.
//!
//! A store keeps, per game, one opaque blob (the service's stored form of the game) with a
//! version number, plus the game's idempotency records and its recent public events. It
//! knows nothing of rules or HTTP: the service decides what the bytes mean.
//!
//! Every write of a game goes through [`GameStore::save`], a compare-and-set on the
//! version: it succeeds only when the stored version is still the one the caller loaded,
//! and it writes the new blob, the optional idempotency record and the optional public
//! event in one atomic step (one Lua script on Redis), so a crash can never leave a move
//! stored without its idempotency record or its event. Both stores keep a game as the
//! same bytes, built in Rust by [`value`] alone (the script compares and sets them).
//!
//! Two implementations share this contract and the same tests: [`redis::RedisStore`]
//! (when `REDIS_URL` names one Redis, or `REDIS_CLUSTER_NODES` a Redis Cluster; any number
//! of server processes can share it) and [`memory::MemoryStore`] (one process, the
//! default).

pub mod any;
pub mod challenges;
pub mod claims;
pub mod leagues;
pub mod memory;
pub mod players;
mod ranked;
pub mod ratings;
pub mod redis;
pub mod seeks;
pub mod tournaments;
pub mod value;

use std::future::Future;
use std::pin::Pin;

use futures_util::Stream;
use tokio::sync::broadcast;

pub use value::History;

/// The live channel of the lobby's news: not a game id (those are UUIDs), so it shares the
/// games' channel machinery without meeting one of them.
pub(crate) const LOBBY_CHANNEL: &str = "lobby";

/// How many events of one game are kept for `events_since` (both stores keep the same).
///
/// Enough for an event stream that lost its connection to resume exactly after anything
/// short of a long outage (16 versions are 8 moves of each player of a 2-seat game); a
/// client further behind gets one event for the current version instead, and fetches its
/// view, as it would anyway. Every game in play keeps this many in Redis, so the cap is a
/// large part of what a game costs there: 32 events were about 700 bytes, more than the
/// game itself, and 256 about 30 KB. A finished game keeps only its last event.
pub const EVENT_HISTORY: usize = 16;

/// How many of the latest finished games are listed ([`GameStore::list_finished`]): what a
/// home page shows, not an archive (a player's games list all of its own).
pub const FINISHED_KEPT: usize = 100;

/// A broadcast receiver as a stream that ends when the channel closes or the subscriber
/// lags: a gap must be visible to the client (its stream ends and it resumes from the
/// history), never silently skipped. Both stores fan live events out through these.
pub(crate) fn receiver_stream(rx: broadcast::Receiver<StoredEvent>) -> EventStream {
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(event) => Some((event, rx)),
            Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => {
                None
            }
        }
    }))
}

/// The wall clock in epoch milliseconds, as the stores' indexes score games.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A game's id as the store keys it: its text (the service's `GameId` reads as this). Not
/// an id type of its own: the store checks no id, it keys by what it is given.
pub type GameKey = str;

/// A stored blob and the version it carries (a player's, a challenge's, a lobby entry's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub version: u64,
    pub bytes: Vec<u8>,
}

/// A stored game: its blob, its version, and the events it keeps, which the next save
/// from this version hands back ([`Save::history`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredGame {
    pub version: u64,
    pub bytes: Vec<u8>,
    pub history: History,
}

/// What a retried request must get back: the request's fingerprint (a hash of its seat
/// and body) and the first answer, both opaque to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    pub key: String,
    pub fingerprint: Vec<u8>,
    pub response: Vec<u8>,
}

/// Idempotency keys a game keeps per seat: a seat's record beyond its last this many keys
/// is forgotten (a retry under a forgotten key is a new request; `expected_version` still
/// refuses it if the game moved on). 32 keys are 32 moves of that seat, far more than a
/// client retries, and bound what a long game keeps (600 keyed moves were 70 KB before).
pub const IDEMPOTENCY_WINDOW: usize = 32;

/// A game's place in the lobby, given when it is created waiting for players.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The lobby's order: newest first (ties: id descending).
    pub created_ms: u64,
    /// Who created it (a client address, as text) and how many listed games that creator
    /// may have at once: one more is refused with [`StoreError::TooManyWaiting`].
    pub owner: Option<(String, usize)>,
}

impl Listing {
    /// Listed at `created_ms`, for nobody in particular.
    pub fn at(created_ms: u64) -> Listing {
        Listing {
            created_ms,
            owner: None,
        }
    }
}

/// Who created a game, as its place among that creator's games in play (those not
/// finished): one more than `max` is refused with [`StoreError::TooManyGames`]. A game
/// leaves the count when a save finishes its match, or when it expires (on Redis: at the
/// latest one idle ttl after it was created).
///
/// And as its place among the creator's games the store keeps, finished or not: one more
/// than `kept` is refused with [`StoreError::TooManyKept`]. A game leaves that count when
/// it expires (on Redis: a game still in play one idle ttl after it was made, or after
/// its last start or finish, leaves it then, and stays counted in play).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creator {
    /// A client address, as text.
    pub address: String,
    pub max: usize,
    pub kept: usize,
}

/// Index scores below this are not clock deadlines (epoch ms) but places in the queue of
/// tables of bots alone waiting for a process to play them ([`queue_place`]). So a sweep
/// reads the clocks apart from the queue, and however long the queue, it never hides a
/// clock that ran out.
pub const QUEUE_END: u64 = 100_000_000_000;

/// How long after its due entry is written a new record (a game, a challenge or a match)
/// is stored at the latest. A record is made due before it is made, for a process that
/// stops right after making it; the entry is written this far ahead, so that another
/// process's sweep does not find it before the record exists and drop it as stale (a
/// store call is bounded by far less). Once the record is made, the entry is set to
/// when it is really due.
pub const MADE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A table of bots alone's place in the queue of due games: the moves it has made, so
/// the table that has moved least is played next, and a table just made waits for no
/// table under way however many there are (a table under way gives its place up to one
/// that moved less).
pub fn queue_place(moves: u64) -> u64 {
    moves.min(QUEUE_END - 1)
}

/// One public event of a game, numbered by the version that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub version: u64,
    pub payload: Vec<u8>,
}

/// The result of a compare-and-set. `Current` is what a conflict answers: the version the
/// record carries now (a player's, a challenge's), or, for a game ([`GameStore::save`]),
/// a [`GameNow`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveOutcome<Current = u64> {
    /// Written; the game now carries `expected + 1`.
    Saved { version: u64 },
    /// Nothing was written: someone else wrote first, or (a game's save) a request was
    /// stored before under the save's idempotency key.
    Conflict { current: Current },
    /// The game does not exist (never created, or expired).
    Missing,
}

/// What a game's save that wrote nothing answers, read in the same step as its
/// compare-and-set (on Redis, by the save script): the game as it is stored now, so that
/// the caller tries again on it without loading it (a move is one round trip even when
/// the caller's copy was stale); and the record stored before under the save's
/// idempotency key, when there is one (the request was made: its first answer stands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameNow {
    pub stored: StoredGame,
    pub made: Option<IdempotencyRecord>,
}

/// A save: the new blob, and what must be written atomically with it.
#[derive(Debug, Clone)]
pub struct Save {
    /// The version the caller loaded; the save succeeds only if it is still current.
    pub expected: u64,
    pub bytes: Vec<u8>,
    /// The events the game kept at `expected`, as loaded with that version
    /// ([`StoredGame::history`]), from which the store builds the game's next value in
    /// one step; `None` when the caller has them not (the store then reads the game
    /// first: on Redis, one more round trip). A history that is not the game's is
    /// refused like a stale version (on Redis, one of another length).
    pub history: Option<History>,
    /// When a record exists under that key already, the save writes nothing and answers
    /// it (first answer wins). It joins the window of `seat`'s keys: each seat keeps its
    /// last [`IDEMPOTENCY_WINDOW`].
    pub idempotency: Option<IdempotencyRecord>,
    /// The seat that made the request (its idempotency window); ignored without a record.
    pub seat: u8,
    /// Appended to the game's event history (numbered `expected + 1`) and published to
    /// every subscriber on every server process.
    pub event: Option<Vec<u8>>,
    /// True when the game leaves the lobby's list of open games with this save: its last
    /// seat is taken and its match starts, so it joins the list of games in play
    /// ([`GameStore::list_playing`]).
    pub unlist: bool,
    /// True when the game stays in the lobby with this save (a seat taken, others still
    /// free): its lobby entry shows this save's blob from now on.
    pub relist: bool,
    /// True when the match is over with this save: its event history keeps only this
    /// save's event (which says so), as nobody needs to resume far into a finished game,
    /// and it leaves the list of games in play.
    pub finished: bool,
    /// For a game with a clock, its deadline before and after this save; `None` for a
    /// game without one (the index of deadlines is not touched).
    pub deadline: Option<Deadline>,
}

impl Save {
    /// How many events the game keeps after this save: [`EVENT_HISTORY`] while it is in
    /// play, only this save's once the match is over. The one account both stores keep.
    pub fn events_kept(&self) -> usize {
        if self.finished { 1 } else { EVENT_HISTORY }
    }
}

/// When a game's clock runs out (epoch milliseconds), before a save and after it.
///
/// The index of deadlines that [`GameStore::due`] reads may list a game early, never late:
/// a store may leave an entry in place when the deadline moves later or goes away (the
/// sweep then finds the game not due, and calls [`GameStore::index_deadline`] with the
/// truth), but it indexes every deadline that comes sooner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    pub before: Option<u64>,
    pub after: Option<u64>,
}

impl Deadline {
    /// The deadline comes sooner (or is new): the index must hear of it.
    pub fn sooner(&self) -> Option<u64> {
        self.after
            .filter(|&after| self.before.is_none_or(|before| after < before))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backing store did not answer in time or refused the connection.
    #[error("the game store is unavailable: {0}")]
    Unavailable(String),
    /// The write was made, but fewer replicas than it must reach confirmed it in time: it
    /// may be lost if its master fails before they catch up, so it is not acknowledged.
    #[error("the game store cannot confirm the write: {0}")]
    Unreplicated(String),
    /// A game with this id exists already.
    #[error("a game with this id exists already")]
    Exists,
    /// The creator has `max` games waiting for players already; nothing was created.
    #[error("this creator has {max} games waiting for players already")]
    TooManyWaiting { max: usize },
    /// The creator has `max` games in play already; nothing was created.
    #[error("this creator has {max} games in play already")]
    TooManyGames { max: usize },
    /// The creator has `max` games kept already, finished ones included; nothing was
    /// created. The first of them expires in `frees_in`.
    #[error("this creator has {max} games kept already")]
    TooManyKept {
        max: usize,
        frees_in: std::time::Duration,
    },
    /// The store holds as many games as it may (`max`); nothing was created. The first
    /// of them expires in `frees_in`.
    #[error("the store holds its maximum of {max} games")]
    Full {
        max: usize,
        frees_in: std::time::Duration,
    },
    /// The store holds as many bytes of games (and tournaments) as it may (`max`); nothing
    /// was created. The first game expires in `frees_in`.
    #[error("the store holds its maximum of {max} bytes of games")]
    FullBytes {
        max: usize,
        frees_in: std::time::Duration,
    },
}

/// What [`GameStore::confirm`] must still find in the game before it confirms it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence<'a> {
    /// The idempotency record stored under this key (a retry's receipt).
    Record(&'a str),
    /// The game as it was just read: this version, with this blob.
    Stored { version: u64, bytes: &'a [u8] },
}

/// What a store that answers says of itself (`/readyz`, and the log at startup).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Health {
    /// Why some writes cannot be acknowledged now, each naming the node (a master with
    /// fewer replicas than a write must reach: its games' moves answer 503). Empty when
    /// every write can be.
    pub degraded: Vec<String>,
}

pub type EventStream = Pin<Box<dyn Stream<Item = StoredEvent> + Send>>;

/// The contract both stores keep. All keys of one game live under one Redis hash tag
/// (`{game_id}`), so the same code runs on Redis Cluster.
pub trait GameStore: Send + Sync + 'static {
    /// Stores a new game at version 1; a `listing` puts it in the lobby's list of open
    /// games, unless its owner has as many there as it may.
    fn create(
        &self,
        id: &GameKey,
        bytes: Vec<u8>,
        listing: Option<Listing>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.create_by(id, bytes, listing, None)
    }

    /// [`create`](Self::create), counted among `creator`'s games in play, unless it has as
    /// many as it may (then nothing is created).
    fn create_by(
        &self,
        id: &GameKey,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Loads a game; `None` when it does not exist or has expired.
    fn load(
        &self,
        id: &GameKey,
    ) -> impl Future<Output = Result<Option<StoredGame>, StoreError>> + Send;

    /// Like [`load`](Self::load), read after every write this thread sent before (its
    /// answer come or not) was applied or refused: for telling whether a save whose
    /// answer was lost was applied, which a read overtaking it could not.
    fn load_after_writes(
        &self,
        id: &GameKey,
    ) -> impl Future<Output = Result<Option<StoredGame>, StoreError>> + Send;

    /// Compare-and-set on the version; also refreshes the game's idle expiry. Nothing is
    /// written when the version is not the stored one, or when a record is stored under
    /// the save's idempotency key already (a request is made once); either way the answer
    /// holds the game as it is ([`GameNow`]). A deadline that comes sooner is in the index
    /// once the save is (a store that cannot write both in one step writes the index
    /// first, only sooner, so a refused save may leave the entry early, never late).
    fn save(
        &self,
        id: &GameKey,
        save: Save,
    ) -> impl Future<Output = Result<SaveOutcome<GameNow>, StoreError>> + Send;

    /// The idempotency record stored under `key` for this game, if any.
    fn idempotency(
        &self,
        id: &GameKey,
        key: &str,
    ) -> impl Future<Output = Result<Option<IdempotencyRecord>, StoreError>> + Send;

    /// Open games, newest first: from `offset`, at most `limit`, each with its blob as of
    /// its last save that kept it listed (one that filled since may still show: the caller
    /// checks). Costs the same whatever the offset, and one round trip on Redis.
    fn list_open(
        &self,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(String, Stored)>, StoreError>> + Send;

    /// Games in play, the latest started first: from `offset`, at most `limit` ids. An
    /// index beside the games: a game joins it when it starts (created with no listing, or
    /// a save that unlists it), and leaves it when a save finishes its match or one idle
    /// ttl after it started, so a game that expired idle may still be listed until then
    /// (the caller loads each), and one in play for longer than that is not.
    fn list_playing(
        &self,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Games whose match finished, the latest first: the newest [`FINISHED_KEPT`], from
    /// `offset`, at most `limit` ids. A game that expired since may still be listed (the
    /// caller loads each).
    fn list_finished(
        &self,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Stored events with a version greater than `after`, oldest first (the history is
    /// capped; older events are gone).
    fn events_since(
        &self,
        id: &GameKey,
        after: u64,
    ) -> impl Future<Output = Result<Vec<StoredEvent>, StoreError>> + Send;

    /// Live events of one game as they are saved, from any server process.
    fn subscribe(
        &self,
        id: &GameKey,
    ) -> impl Future<Output = Result<EventStream, StoreError>> + Send;

    /// Games whose deadline is at or before `now_ms`, earliest first, at most `limit`.
    /// Every server process reads it (the sweep of clocks), so a deadline is honoured
    /// whichever process saved it, and after any process stops.
    fn due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send {
        self.due_between(0, now_ms, limit)
    }

    /// Like [`due`](Self::due), for the entries from `from` to `to` (both included): the
    /// sweep reads clocks and the queue of tables of bots alone apart ([`QUEUE_END`]).
    fn due_between(
        &self,
        from: u64,
        to: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Takes or renews game `id`'s lease for `holder` for `ttl`: true when `holder` holds
    /// it now (it was free, had expired, or was `holder`'s already), false when another
    /// holds it. One process plays a table's bots at a time; should it die, its lease
    /// expires and another takes over.
    fn lease(
        &self,
        id: &GameKey,
        holder: &str,
        ttl: std::time::Duration,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Gives game `id`'s lease up, if `holder` holds it.
    fn release(
        &self,
        id: &GameKey,
        holder: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Sets game `id`'s entry in the index of deadlines to `deadline` (`None`: drops it),
    /// as the game stood at `version`: for the sweep, which found an entry early or the
    /// game gone. Ignored if the entry was written for a later version of the game.
    /// Version 0 is a game about to be made ([`MADE_WITHIN`]): a store whose create
    /// cannot index it in the same step keeps the entry, and one that can ignores it.
    fn index_deadline(
        &self,
        id: &GameKey,
        version: u64,
        deadline: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes news of the lobby (a game opened, filled or finished) to every lobby
    /// subscriber on every server process. Kept nowhere: a client lists, then listens.
    fn publish_lobby(
        &self,
        event: StoredEvent,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Live news of the lobby, from any server process.
    fn subscribe_lobby(&self) -> impl Future<Output = Result<EventStream, StoreError>> + Send;

    /// Fails ([`StoreError::Unreplicated`]) unless game `id` still holds `evidence` and as
    /// many replicas as a save must reach hold it too: for an answer given without a save
    /// of the request's own (a retry's stored receipt, a save whose answer was lost), which
    /// the first attempt may have left unconfirmed. The evidence is checked where the
    /// replicas are asked, so a failover in between (a new master that never got the
    /// write) is refused, not confirmed. Nothing to do when no replica must confirm
    /// writes.
    fn confirm(
        &self,
        id: &GameKey,
        evidence: Evidence<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Answers when the store is reachable (for `/readyz`), with what it can say of its
    /// health.
    fn ping(&self) -> impl Future<Output = Result<Health, StoreError>> + Send;
}
