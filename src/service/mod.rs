//! The one place that joins the engine, the bots and the store.
//!
//! A request travels down and its answer comes back up once: load the game's record →
//! check the seat token → run the engine (and the bots whose turn follows) → store the
//! record with a compare-and-set on its version, together with the idempotency receipt
//! and the public event → answer with what the caller may see. Every write goes through
//! [`GameService::update`]; a lost race retries on fresh state, unless the client pinned
//! `expected_version`.
//!
//! It knows no HTTP: handlers turn requests into calls here, render the answers, and map
//! [`Error`] to problems. It never logs a token or a hidden tile: moves are logged in their
//! public form (a draw does not name its tile).
//!
//! - [`clock`]: the banks of time and when the seat to move runs out (pure arithmetic);
//!   [`GameService::sweep`] acts on the deadlines every process reads from the store.
//! - [`record`]: the stored game (lobby facts, seat tokens, the engine's game) and its one
//!   byte format, checked on every load.
//! - [`view`]: the answers, each what one caller may see.
//! - [`events`]: the public event of each version, and the feed of them.
//! - [`idempotency`]: when two requests are the same, and the receipts that answer retries.
//! - [`log`]: the history as answers: the log a page at a time, the export as it is sent.
//! - [`thinking`]: where bots think (a bounded pool off the async workers, games with a
//!   human first) and for how long; bots left to move make the game due at once, and
//!   [`GameService::sweep`] plays them on. A table of bots alone waits in the store's queue
//!   until a process has room for it (`BOT_TABLES`); one process at a time plays it, under
//!   a lease in the store.

pub mod clock;
pub mod events;
pub mod idempotency;
pub mod log;
pub mod record;
pub mod thinking;
pub mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use rand::Rng;
use tokio_util::sync::CancellationToken;

use crate::address::AddressKey;
use crate::bots::{self, Level};
use crate::engine::{
    Deal, Event, Game, LegalMove, Move, MoveError, Preset, RulesError, RulesPatch, Seed,
};
use crate::metrics::{BotLabels, BotPlace, Metrics};
use crate::store::any::AnyStore;
use crate::store::{
    Creator, Deadline, Evidence, GameStore, Health, Listing, QUEUE_END, Save, SaveOutcome,
    StoreError,
};

pub use clock::{ClockSettings, OnTimeout};
pub use events::{Feed, LobbyEvent, LobbyItem, LobbyNews, PublicEvent, Watched};
pub use idempotency::{MIN_JOIN_KEY, RequestKey};
pub use log::{Export, ExportPart, Log, LogEntry, MAX_LOG_PAGE};
pub use record::{Record, Seat, Status};
pub use thinking::BotSettings;
use thinking::Priority;
pub use view::{ClockView, Joined, Moved, Seen};

use idempotency::{Earlier, Receipt, Stored};

/// Attempts at a compare-and-set before giving up (each loses only to a concurrent move
/// of the same game, so a handful is plenty).
const MAX_ATTEMPTS: usize = 16;
/// Games a sweep acts on at most, and how many at once.
const SWEEP_BATCH: usize = 256;
const SWEEP_CONCURRENCY: usize = 16;
/// How long a process's lease on a game's bots lasts unrenewed: another process takes the
/// game over this long after its driver died. Renewed every third of it while it drives.
const LEASE_TTL: Duration = Duration::from_secs(5);
const RENEW_EVERY: Duration = Duration::from_millis(1_666);
/// Player names: 1 to this many characters.
pub const MAX_NAME_CHARS: usize = 32;
/// Lobby pages: at most this many games each.
pub const MAX_PER_PAGE: usize = 100;

/// What went wrong, in domain words; the API maps each to its problem code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no such game")]
    NotFound,
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    NotYourTurn(String),
    #[error("the game is at version {current}")]
    VersionConflict { current: u64 },
    #[error("the game has not started: seats are still free")]
    NotStarted,
    #[error("the match is over")]
    Finished,
    #[error("{0}")]
    SeatTaken(String),
    #[error("this seat was abandoned to a bot: it may still read the game, not move")]
    SeatAbandoned,
    #[error("every seat is taken")]
    GameFull,
    #[error("{message}")]
    IllegalMove {
        message: String,
        legal: Vec<LegalMove>,
    },
    #[error("{0}")]
    InvalidRules(String),
    #[error("this Idempotency-Key was used with another request")]
    IdempotencyKeyReused,
    #[error("{0}")]
    BadRequest(String),
    #[error("the game is not finished: the export reveals every hand")]
    NotFinished,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A save got no answer from the store, and looking afterwards told `fate`.
    #[error("{cause} (the change was {})", fate.as_str())]
    Unsettled { cause: StoreError, fate: Fate },
    #[error("{0}")]
    Internal(String),
}

/// What became of a change the store did not answer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It was stored (the caller answers as for any success).
    Landed,
    /// It was not: the game was read after the save on the same connection (Redis answers
    /// a connection in order) at the version the save expected, or past it by another
    /// change. Retrying makes it once.
    NotApplied,
    /// The store did not say: retry only with the same `Idempotency-Key` or with
    /// `expected_version`, so that it is made at most once.
    Unknown,
}

impl Fate {
    /// The problem's `outcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Landed => "applied",
            Fate::NotApplied => "not_applied",
            Fate::Unknown => "unknown",
        }
    }
}

impl From<RulesError> for Error {
    fn from(e: RulesError) -> Error {
        Error::InvalidRules(e.to_string())
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A new game, as the lobby asks for it.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub seats: u8,
    pub bots: Vec<(u8, Level)>,
    pub seed: Option<Seed>,
    pub deal: Option<Deal>,
    pub clock: Option<ClockSettings>,
}

/// A move request after parsing.
#[derive(Debug, Clone, Copy)]
pub struct MoveRequest {
    pub mv: Move,
    pub expected_version: Option<u64>,
}

/// What one attempt of [`GameService::update`] decided to store.
struct Change<T> {
    value: T,
    /// The seat that made the change's first move (`None` for a seat taken, a timeout):
    /// its bank stops.
    mover: Option<u8>,
    /// The moves made, in order (a player's, then the bots'), for the public event.
    moves: Vec<(u8, Move)>,
    /// The seat that asked, for an idempotency receipt.
    seat: Option<u8>,
    /// The game leaves the lobby with this change.
    unlist: bool,
    /// The game stays in the lobby, which shows this change.
    relist: bool,
    /// Bots' thinking that follows the change, run on the bots' pool (off the async
    /// workers) within its budget; its moves are stored with the change.
    think: Option<Thinking>,
}

/// Work for the bots' pool: moves made on the record (appended to the events they cause),
/// while the budget's `keep_going` says so.
type Think = Box<
    dyn FnOnce(
            &mut Record,
            &mut Vec<Event>,
            &mut dyn FnMut() -> bool,
        ) -> Result<Vec<(u8, Move)>, Error>
        + Send,
>;

struct Thinking {
    place: BotPlace,
    think: Think,
}

impl Thinking {
    /// The bots whose turn follows, as far as the budget goes; `None` when no bot is to
    /// move (most moves between humans: no trip to the pool).
    fn bots(record: &Record, place: BotPlace) -> Option<Thinking> {
        record.bots_to_move().then(|| Thinking {
            place,
            think: Box::new(|record, events, keep_going| Ok(bots_play(record, events, keep_going))),
        })
    }
}

/// What one client address may have at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Games waiting for players (`MAX_WAITING_PER_IP`; `None`: no cap).
    pub waiting: Option<usize>,
    /// Games created and not finished, tables of bots alone included
    /// (`MAX_GAMES_PER_IP`; `None`: no cap).
    pub games: Option<usize>,
}

/// What [`GameService::act`] did with a game the sweep found due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acted {
    /// Nothing was due after all.
    Nothing,
    /// A seat ran out of time.
    TimedOut { bots_left: bool },
    /// Bots moved in the background.
    Bots { bots_left: bool },
}

/// What [`GameService::update`] did.
enum Updated<T> {
    /// Nothing to store (a deadline not reached after all): the game as loaded.
    Unchanged { version: u64, record: Record },
    /// Stored as `version`; `thought`: what the bots' moves caused.
    Saved {
        version: u64,
        record: Record,
        value: T,
        thought: Vec<Event>,
    },
    /// The same request was stored before: its receipt, and the game as loaded since.
    Repeated {
        stored: Stored,
        version: u64,
        record: Record,
    },
}

pub struct GameService {
    store: Arc<AnyStore>,
    metrics: Arc<Metrics>,
    long_poll_max: Duration,
    /// `ALLOW_PREARRANGED`: whether a game may be created with a seed or a deal.
    allow_prearranged: bool,
    /// Cancelled when the server begins to stop: long polls answer and event feeds end
    /// at once. [`crate::startup`] owns it and cancels it on SIGTERM/SIGINT.
    stopping: CancellationToken,
    caps: Caps,
    pool: thinking::Pool,
    /// Tables of bots alone this process plays at once, at most (`BOT_TABLES`).
    tables: usize,
    /// Games whose bots this process is playing in the background now (so its sweep
    /// leaves them to that task rather than race it), each true when it counts against
    /// `tables`.
    driving: Mutex<HashMap<String, bool>>,
    /// This process, as the holder of the games' leases it drives.
    holder: String,
    /// Itself, for the background tasks it starts.
    me: Weak<GameService>,
}

impl GameService {
    pub fn new(
        store: Arc<AnyStore>,
        metrics: Arc<Metrics>,
        long_poll_max: Duration,
        allow_prearranged: bool,
        stopping: CancellationToken,
        bots: BotSettings,
        caps: Caps,
    ) -> Arc<GameService> {
        Arc::new_cyclic(|me| GameService {
            store,
            pool: thinking::Pool::new(bots, metrics.clone()),
            tables: bots.tables.max(1),
            metrics,
            long_poll_max,
            allow_prearranged,
            stopping,
            caps,
            driving: Mutex::new(HashMap::new()),
            holder: uuid::Uuid::new_v4().to_string(),
            me: me.clone(),
        })
    }

    /// Answers when the store does (on a cluster: when every slot is served), with what
    /// it says of its health.
    pub async fn ready(&self) -> Result<Health, Error> {
        Ok(self.store.ping().await?)
    }

    /// Which store keeps the games: `memory`, `redis` or `redis-cluster`.
    pub fn store_kind(&self) -> &'static str {
        self.store.kind()
    }

    /// Creates a game; a game of bots only is stored with its bots to move, and they play
    /// it in the background. A game left waiting for players counts against `from`'s cap
    /// on them until it fills or expires.
    pub async fn create(&self, new: NewGame, from: Option<AddressKey>) -> Result<Seen, Error> {
        let rules = new.preset.rules().with(&new.overrides);
        rules.validate(new.seats)?;
        if let Some(clock) = &new.clock {
            clock.validate().map_err(Error::InvalidRules)?;
            if clock.on_timeout == OnTimeout::Forfeit && rules.sides(new.seats) != 2 {
                return Err(Error::InvalidRules(
                    "clock.on_timeout: forfeit needs two sides (2 seats, or 4 in teams); \
                     use bot with three or four independent seats"
                        .into(),
                ));
            }
        }
        let prearranged = new.seed.is_some() || new.deal.is_some();
        if prearranged && !self.allow_prearranged {
            let field = if new.seed.is_some() { "seed" } else { "deal" };
            return Err(Error::InvalidRules(format!(
                "{field}: this server does not accept prearranged games \
                 (ALLOW_PREARRANGED=false); create the game without seed and deal"
            )));
        }
        let seed = match new.seed {
            Some(seed) => seed,
            None => {
                let mut bytes = [0u8; 32];
                rand::rng().fill_bytes(&mut bytes);
                Seed(bytes)
            }
        };
        let game = Game::new(rules, new.seats, seed, new.deal)?;
        let mut record = Record::new(now_ms(), new.preset, prearranged, new.clock, game);
        for &(seat, level) in &new.bots {
            let slot = record.seats.get_mut(seat as usize).ok_or_else(|| {
                Error::InvalidRules(format!(
                    "bots: there is no seat {seat} in a {}-seat game",
                    new.seats
                ))
            })?;
            if slot.bot.is_some() {
                return Err(Error::InvalidRules(format!(
                    "bots: seat {seat} is given two bots"
                )));
            }
            slot.bot = Some(level);
            slot.name = Some(format!("{} bot", level.as_str()));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let listing = (record.status() == Status::Waiting).then(|| Listing {
            created_ms: record.created_ms,
            owner: from
                .zip(self.caps.waiting)
                .map(|(from, max)| (from.to_string(), max)),
        });
        let creator = from.zip(self.caps.games).map(|(from, max)| Creator {
            address: from.to_string(),
            max,
        });
        let listed = listing.is_some();
        self.store
            .create_by(&id, record.encode(), listing, creator)
            .await?;
        self.metrics.games_created.inc();
        if let Some(due) = record.due(now_ms()) {
            // A table of bots alone: queued at once, so whichever process has room plays
            // it even if this one stops; and this one starts at once if it has room.
            if let Err(e) = self.store.index_deadline(&id, 1, Some(due)).await {
                tracing::warn!(game_id = %id, error = %e, "created, but could not index the bots' turn");
            }
            self.kick(&id, true);
        }
        tracing::info!(game_id = %id, preset = new.preset.name(), seats = new.seats, bots = new.bots.len(), prearranged, "game created");
        if listed {
            self.announce(LobbyNews::Opened, &id).await;
        }
        Ok(Seen::of(&id, 1, &record, None))
    }

    async fn load(&self, id: &str) -> Result<(u64, Record), Error> {
        load(&self.store, id).await
    }

    /// Loads a game and the seat of `token` (`None` for a spectator, without a token).
    async fn load_as(
        &self,
        id: &str,
        token: Option<&str>,
    ) -> Result<(u64, Record, Option<u8>), Error> {
        let (version, record) = self.load(id).await?;
        let viewer = viewer_of(&record, token)?;
        Ok((version, record, viewer))
    }

    /// The game as `token`'s seat (or a spectator, without a token) may see it.
    pub async fn view(&self, id: &str, token: Option<&str>) -> Result<Seen, Error> {
        let (version, record, viewer) = self.load_as(id, token).await?;
        Ok(Seen::of(id, version, &record, viewer))
    }

    /// Long poll: the view as soon as the version is greater than `after`, or after
    /// `wait` (at most the configured cap) the view unchanged.
    pub async fn view_after(
        &self,
        id: &str,
        token: Option<&str>,
        after: u64,
        wait: Duration,
    ) -> Result<Seen, Error> {
        let wait = wait.min(self.long_poll_max);
        // Watched before looking, so a move stored in between still wakes the poll.
        let (mut live, version, record) = self.watch(id).await?;
        let viewer = viewer_of(&record, token)?;
        let seen = Seen::of(id, version, &record, viewer);
        if version > after || wait.is_zero() {
            return Ok(seen);
        }
        // The client has every version up to the current one: only live news can wake it.
        let news = async {
            while let Some(event) = live.next().await {
                if event.version > after {
                    return;
                }
            }
        };
        tokio::select! {
            // News, or the live stream ended (a lost connection): look again.
            () = news => self.view(id, token).await,
            // The wait ran out, or the server is stopping: the view unchanged.
            () = tokio::time::sleep(wait) => Ok(seen),
            () = self.stopping.cancelled() => Ok(seen),
        }
    }

    /// Takes a seat; the last seat taken starts the game (and bots that lead move).
    /// With a key, a retry of the same request (same key and body) gets the same seat and
    /// token again, with the seat's view as it is now.
    pub async fn join(
        &self,
        id: &str,
        name: &str,
        wanted: Option<u8>,
        key: Option<&RequestKey>,
    ) -> Result<Joined, Error> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(Error::BadRequest(format!(
                "name: 1 to {MAX_NAME_CHARS} characters, no control characters"
            )));
        }
        if key.is_some_and(|key| !key.is_join()) {
            return Err(Error::Internal(
                "a join's key must be made for a join".into(),
            ));
        }
        let mut token_bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut token_bytes);
        let token = hex::encode(token_bytes);
        let key = key.map(|key| key.sealing(&token_bytes));
        let updated = self
            .update(id, key.as_ref().map(|key| (key, None)), |_, _, record| {
                let free = record.free_seats();
                let seat = match wanted {
                    _ if free.is_empty() => return Err(Error::GameFull),
                    Some(s) if s as usize >= record.seats.len() => {
                        return Err(Error::BadRequest(format!(
                            "seat: this game has seats 0 to {}",
                            record.seats.len() - 1
                        )));
                    }
                    Some(s) if !free.contains(&s) => {
                        return Err(Error::SeatTaken(format!("seat {s} is taken")));
                    }
                    Some(s) => s,
                    None => free[0],
                };
                record.seat_player(seat, name, &token);
                let started = record.status() != Status::Waiting;
                Ok(Some(Change {
                    value: (seat, started),
                    mover: None,
                    moves: Vec::new(),
                    seat: Some(seat),
                    unlist: started,
                    relist: !started,
                    think: Thinking::bots(record, BotPlace::Request),
                }))
            })
            .await?;
        let (version, record, seat, started) = match updated {
            Updated::Saved {
                version,
                record,
                value: (seat, started),
                ..
            } => (version, record, seat, started),
            Updated::Repeated {
                stored,
                version,
                record,
            } => {
                let token = stored
                    .sealed
                    .zip(key.as_ref())
                    .and_then(|(sealed, key)| key.unseal(&sealed))
                    .map(hex::encode)
                    .ok_or_else(|| Error::Internal("a join's receipt has no token".into()))?;
                let seat = stored.receipt.seat;
                // The token must open its seat: a damaged receipt answers no seat.
                if record.seat_of(&token) != Some(seat) {
                    return Err(Error::Internal(
                        "a join's receipt does not open its seat".into(),
                    ));
                }
                return Ok(Joined {
                    seat,
                    token,
                    seen: Seen::of(id, version, &record, Some(seat)),
                });
            }
            Updated::Unchanged { .. } => unreachable!("a join always stores or is refused"),
        };
        tracing::info!(game_id = %id, seat, started, version, "seat taken");
        if record.bots_to_move() {
            self.kick(id, false);
        }
        Ok(Joined {
            seat,
            token,
            seen: Seen::of(id, version, &record, Some(seat)),
        })
    }

    /// Makes a move for `token`'s seat, then lets the bots whose turn follows move, and
    /// stores it all as one version. With a key, a retry of the same request gets the
    /// first answer again.
    pub async fn make_move(
        &self,
        id: &str,
        token: &str,
        request: MoveRequest,
        key: Option<&RequestKey>,
    ) -> Result<Moved, Error> {
        let updated = self
            .update(
                id,
                key.map(|key| (key, Some(token))),
                |version, _, record| {
                    let seat = record.seat_of(token).ok_or(UNKNOWN_TOKEN)?;
                    if record.game.abandoned(seat) {
                        return Err(Error::SeatAbandoned);
                    }
                    match record.status() {
                        Status::Waiting => return Err(Error::NotStarted),
                        Status::Finished => return Err(Error::Finished),
                        Status::Playing => {}
                    }
                    if let Some(expected) = request.expected_version
                        && expected != version
                    {
                        return Err(Error::VersionConflict { current: version });
                    }
                    let mut events = Vec::new();
                    let played = record
                        .game
                        .play_into(seat, request.mv, &mut events)
                        .map_err(|e| refuse(&record.game, seat, e))?;
                    let events: Vec<_> = events.iter().map(|e| e.visible_to(Some(seat))).collect();
                    Ok(Some(Change {
                        value: (seat, events),
                        mover: Some(seat),
                        moves: vec![(seat, played)],
                        seat: Some(seat),
                        unlist: false,
                        relist: false,
                        think: Thinking::bots(record, BotPlace::Request),
                    }))
                },
            )
            .await?;
        Ok(match updated {
            Updated::Saved {
                version,
                record,
                value: (seat, mut events),
                thought,
            } => {
                if record.bots_to_move() {
                    self.kick(id, false);
                }
                events.extend(thought.iter().map(|e| e.visible_to(Some(seat))));
                Moved {
                    seen: Seen::of(id, version, &record, Some(seat)),
                    events,
                }
            }
            Updated::Unchanged { .. } => unreachable!("a move always stores or is refused"),
            Updated::Repeated { stored, record, .. } => {
                let receipt = stored.receipt;
                let (then, events) = receipt.replay(&record)?;
                Moved {
                    seen: Seen::of(id, receipt.version, &then, Some(receipt.seat)),
                    events,
                }
            }
        })
    }

    /// The one write path: load the game, let `change` alter it, store it with a
    /// compare-and-set on its version (with the public event, and the receipt under
    /// `key`), and on a lost race start again from the fresh state. With `key` (and the
    /// token a move came with; a join has none), a request already stored under it is not
    /// made again.
    async fn update<T>(
        &self,
        id: &str,
        key: Option<(&RequestKey, Option<&str>)>,
        mut change: impl FnMut(u64, u64, &mut Record) -> Result<Option<Change<T>>, Error>,
    ) -> Result<Updated<T>, Error> {
        // The bots' budget runs from here: a lost race does not start it again.
        let started = std::time::Instant::now();
        for _ in 0..MAX_ATTEMPTS {
            let (version, mut record) = self.load(id).await?;
            let now = now_ms();
            let mut stored_name = None;
            if let Some((key, token)) = key {
                // The token before the key: a stranger is refused as one (401), and learns
                // nothing of the keys a seat has used. A move's key is its seat's own.
                let seat = match token {
                    Some(token) => viewer_of(&record, Some(token))?,
                    None => None,
                };
                let name = stored_name.insert(key.stored_name(seat));
                match self.earlier(id, version, key, name).await? {
                    Earlier::Made(stored) => {
                        // The first attempt may have been refused for want of replicas:
                        // its receipt is an acknowledgement only once they hold it.
                        self.store
                            .vouch(id, Evidence::Record(name))
                            .await
                            .map_err(|cause| Error::Unsettled {
                                cause,
                                fate: Fate::Unknown,
                            })?;
                        return Ok(Updated::Repeated {
                            stored,
                            version,
                            record,
                        });
                    }
                    Earlier::AfterLoad => continue,
                    Earlier::None => {}
                }
            }
            let moves_before = record.game.move_count() as u32;
            let due_before = record.due(now);
            let Some(Change {
                value,
                mover,
                mut moves,
                seat,
                unlist,
                relist,
                think,
            }) = change(version, now, &mut record)?
            else {
                return Ok(Updated::Unchanged { version, record });
            };
            // A draw that leaves its seat to move does not end the seat's turn.
            let turn_over = !matches!(moves.first(), Some(&(seat, Move::Draw))
                if Some(seat) == mover && record.game.turn() == Some(seat));
            // Off the async workers, on this attempt's own copy: a lost race thinks again
            // on the fresh state.
            let (mut record, thought, bot_moves) = match think {
                None => (record, Vec::new(), None),
                Some(Thinking { place, think }) => {
                    let priority = if place == BotPlace::Background && record.bots_alone() {
                        Priority::BotsOnly
                    } else {
                        Priority::Human
                    };
                    let (record, played, thought) = self
                        .pool
                        .run(place, priority, started, move |keep_going| {
                            let mut record = record;
                            let mut events = Vec::new();
                            let played = think(&mut record, &mut events, keep_going);
                            (record, played, events)
                        })
                        .await?;
                    let played = played?;
                    let counted = (place, played.len() as u64);
                    moves.extend(played);
                    (record, thought, Some(counted))
                }
            };
            let next = record.human_to_move();
            if let Some(clock) = &mut record.clock {
                // The next bank starts as the change is stored, after the bots' replies.
                clock.settle(mover, turn_over, next, now, now_ms().max(now));
            }
            let status = record.status();
            let event = PublicEvent {
                version: version + 1,
                status,
                turn: record.game.turn(),
                moves,
            };
            let receipt = key
                .zip(seat)
                .zip(stored_name.take())
                .map(|(((key, _), seat), name)| {
                    Receipt {
                        seat,
                        version: version + 1,
                        from: moves_before,
                        to: record.game.move_count() as u32,
                    }
                    .stored_under(key, name)
                });
            let save = Save {
                expected: version,
                bytes: record.encode(),
                idempotency: receipt,
                seat: seat.unwrap_or(0),
                event: Some(event.encode()),
                unlist,
                relist,
                finished: status == Status::Finished,
                deadline: match (due_before, record.due(now)) {
                    (None, None) => None,
                    (before, after) => Some(Deadline { before, after }),
                },
            };
            let (bytes, event_bytes) = (save.bytes.clone(), save.event.clone());
            let saved = match self.store.save(id, save).await {
                Ok(saved) => saved,
                // Made, but not confirmed by replicas: a retry with the same key answers
                // once they are.
                Err(cause @ StoreError::Unreplicated(_)) => {
                    return Err(Error::Unsettled {
                        cause,
                        fate: Fate::Unknown,
                    });
                }
                // Redis may have applied it and only its answer was late: look before
                // answering, so that a client never retries blind into a second move.
                Err(cause) => match self.landed(id, version, &bytes, event_bytes).await {
                    Fate::Landed => SaveOutcome::Saved {
                        version: version + 1,
                    },
                    fate => return Err(Error::Unsettled { cause, fate }),
                },
            };
            match saved {
                SaveOutcome::Saved { version } => {
                    self.metrics.moves_applied.inc_by(event.moves.len() as u64);
                    if let Some((place, n)) = bot_moves {
                        self.metrics
                            .bot_moves
                            .get_or_create(&BotLabels { r#where: place })
                            .inc_by(n);
                    }
                    for (s, mv) in &event.moves {
                        tracing::info!(game_id = %id, seat = s, mv = ?mv, version, "move applied");
                    }
                    if unlist {
                        self.announce(LobbyNews::Filled, id).await;
                    }
                    if status == Status::Finished {
                        tracing::info!(game_id = %id, scores = ?record.game.scores(), "match ended");
                        self.announce(LobbyNews::Finished, id).await;
                    }
                    return Ok(Updated::Saved {
                        version,
                        record,
                        value,
                        thought,
                    });
                }
                // Another request of this game won. Look again: if it was a copy of this
                // one (same key), its answer is this one's too, pinned version or not;
                // else a pinned version is refused as stale after the load.
                SaveOutcome::Conflict { .. } => {
                    self.metrics.store_conflicts.inc();
                }
                SaveOutcome::Missing => return Err(Error::NotFound),
            }
        }
        Err(Error::Internal(
            "too many concurrent changes to this game; try again".into(),
        ))
    }

    /// Whether a save of game `id` from `expected` that got no answer was applied: the game
    /// at `expected + 1` holds exactly these bytes (its record carries fresh clocks, tokens
    /// and moves: no other write makes the same), or, when it has moved on since, the event
    /// of `expected + 1` is this one. Each look is bounded by the store's own timeout.
    async fn landed(&self, id: &str, expected: u64, bytes: &[u8], event: Option<Vec<u8>>) -> Fate {
        let stored = match self.store.load_after_writes(id).await {
            Ok(Some(stored)) => stored,
            Ok(None) | Err(_) => return Fate::Unknown,
        };
        let fate = match stored.version {
            v if v == expected => Fate::NotApplied,
            v if v == expected + 1 && stored.bytes == bytes => Fate::Landed,
            v if v == expected + 1 => Fate::NotApplied,
            v if v < expected => Fate::Unknown,
            _ => match self.store.events_since(id, expected).await {
                Ok(events) => match events.iter().find(|e| e.version == expected + 1) {
                    Some(e) if Some(&e.payload) == event.as_ref() => Fate::Landed,
                    Some(_) => Fate::NotApplied,
                    None => Fate::Unknown,
                },
                Err(_) => Fate::Unknown,
            },
        };
        // Landed on the master is not yet acknowledged: the replicas must hold it too.
        let evidence = Evidence::Stored {
            version: stored.version,
            bytes: &stored.bytes,
        };
        match fate {
            Fate::Landed if self.store.vouch(id, evidence).await.is_err() => Fate::Unknown,
            fate => fate,
        }
    }

    /// Acts on game `id` if it is due: bots to move play a budget's worth of moves (in the
    /// background: a table of bots alone, or what a request's budget left), else if the
    /// seat to move has run out of time, a bot of the clock's level plays its turn (and
    /// after `abandon_after` timeouts in a row takes the seat over), or under `forfeit` its
    /// side loses. Exactly once, whichever process sweeps first: the change goes through
    /// the compare-and-set like a move.
    pub async fn act(&self, id: &str) -> Result<Acted, Error> {
        let updated = self
            .update(id, None, |_, now, record| {
                if record.bots_to_move() {
                    return Ok(Some(Change {
                        value: None,
                        mover: None,
                        moves: Vec::new(),
                        seat: None,
                        unlist: false,
                        relist: false,
                        think: Thinking::bots(record, BotPlace::Background),
                    }));
                }
                let Some(clock) = record.clock.as_mut() else {
                    return Ok(None);
                };
                if clock.deadline().is_none_or(|deadline| deadline > now) {
                    return Ok(None);
                }
                let settings = clock.settings;
                let (seat, in_row) = clock.time_out().expect("a clock with a deadline runs");
                let mv = match settings.on_timeout {
                    OnTimeout::Forfeit => Move::Forfeit,
                    OnTimeout::Bot => Move::TimedOut,
                };
                let played = record
                    .game
                    .play_into(seat, mv, &mut Vec::new())
                    .map_err(|e| Error::Internal(format!("a timeout was refused: {e}")))?;
                let abandon = u64::from(in_row) >= settings.abandon_after;
                let think: Think = Box::new(move |record, events, keep_going| {
                    let game = &mut record.game;
                    let mut moves = Vec::new();
                    let mut play = |game: &mut Game, mv: Move, events: &mut Vec<Event>| {
                        game.play_into(seat, mv, events)
                            .map(|played| moves.push((seat, played)))
                            .map_err(|e| Error::Internal(format!("a timeout was refused: {e}")))
                    };
                    if settings.on_timeout == OnTimeout::Bot {
                        // The bot plays the seat's one turn: draws and a muggins call keep
                        // it, a play or a pass ends it. The seat may be to move again at
                        // once (it went out and leads the next round): that is a new turn
                        // with a bank of 0, its own timeout.
                        for _ in 0..bots::turns::MAX_MOVES {
                            if game.turn() != Some(seat) {
                                break;
                            }
                            let level = settings.timeout_bot;
                            let Some(mv) = bots::turns::choose_for(game, seat, level) else {
                                break;
                            };
                            play(game, mv, events)?;
                            if matches!(mv, Move::Play { .. } | Move::Pass) {
                                break;
                            }
                        }
                        if abandon && !game.is_over() {
                            play(game, Move::Abandon, events)?;
                        }
                    }
                    moves.extend(bots_play(record, events, keep_going));
                    Ok(moves)
                });
                Ok(Some(Change {
                    value: Some((seat, in_row)),
                    mover: None,
                    moves: vec![(seat, played)],
                    seat: None,
                    unlist: false,
                    relist: false,
                    think: Some(Thinking {
                        place: BotPlace::Background,
                        think,
                    }),
                }))
            })
            .await?;
        match updated {
            Updated::Saved {
                value,
                version,
                record,
                ..
            } => {
                let bots_left = record.bots_to_move();
                Ok(match value {
                    Some((seat, in_row)) => {
                        self.metrics.timeouts.inc();
                        tracing::info!(game_id = %id, seat, in_row, version, "a seat ran out of time");
                        Acted::TimedOut { bots_left }
                    }
                    None => Acted::Bots { bots_left },
                })
            }
            // Listed as due but nothing is due yet (the index keeps an earlier state's
            // entry until then): tell it the truth, or the sweep would look every time.
            Updated::Unchanged { version, record } => {
                self.store
                    .index_deadline(id, version, record.due(now_ms()))
                    .await?;
                Ok(Acted::Nothing)
            }
            Updated::Repeated { .. } => Ok(Acted::Nothing),
        }
    }

    fn driving(&self) -> MutexGuard<'_, HashMap<String, bool>> {
        self.driving.lock().expect("not poisoned")
    }

    /// Tables of bots alone this process drives now.
    fn tables_driven(driving: &HashMap<String, bool>) -> usize {
        driving.values().filter(|&&table| table).count()
    }

    /// Plays game `id`'s bots in the background, run after run, until none is to move,
    /// unless this process does so already. `table`: it is a table of bots alone taken
    /// from the queue, counted against `BOT_TABLES` from the start (else it is counted
    /// once found to be one). Returns false when there is no room for it here: it stays in
    /// the store's queue. The bots play under a lease in the store, so that one process at
    /// a time drives a game; should this one stop, the lease expires and the game comes
    /// due again for another process's sweep.
    fn kick(&self, id: &str, table: bool) -> bool {
        {
            let mut driving = self.driving();
            if driving.contains_key(id) {
                return true;
            }
            if table && Self::tables_driven(&driving) >= self.tables {
                return false;
            }
            driving.insert(id.to_owned(), table);
        }
        let (me, id) = (self.me.clone(), id.to_owned());
        // Holds the service weakly between runs: it ends with the server.
        tokio::spawn(async move {
            let mut renewed: Option<Instant> = None;
            let mut held = false;
            while let Some(service) = me.upgrade() {
                if renewed.is_none_or(|at| at.elapsed() >= RENEW_EVERY) {
                    match service.hold(&id).await {
                        Ok(true) => (renewed, held) = (Some(Instant::now()), true),
                        Ok(false) => break,
                        Err(e) => {
                            tracing::warn!(game_id = %id, error = %e, "could not take the bots' lease; the sweep tries again");
                            break;
                        }
                    }
                }
                let more = match service.drive_once(&id).await {
                    Ok(more) => more,
                    Err(Error::NotFound) => {
                        service.forget_due(&id).await;
                        false
                    }
                    Err(e) => {
                        tracing::warn!(game_id = %id, error = %e, "bots could not move; the sweep tries again");
                        false
                    }
                };
                if !more {
                    break;
                }
            }
            if let Some(service) = me.upgrade() {
                service.driving().remove(&id);
                if held && let Err(e) = service.store.release(&id, &service.holder).await {
                    tracing::debug!(game_id = %id, error = %e, "could not give the bots' lease up; it expires");
                }
            }
        });
        true
    }

    /// Before driving game `id` (and every [`RENEW_EVERY`] while it does): whether its
    /// bots are still to move, there is room here for it, and this process holds its lease
    /// (taken or renewed). A table of bots alone is then moved out of the sweeps' sight
    /// until the lease would expire.
    async fn hold(&self, id: &str) -> Result<bool, Error> {
        let (version, record) = self.load(id).await?;
        if !record.bots_to_move() {
            return Ok(false);
        }
        let alone = record.bots_alone();
        let room = {
            let mut driving = self.driving();
            let counted = driving.get(id).copied().unwrap_or(false);
            let room = !alone || counted || Self::tables_driven(&driving) < self.tables;
            if room {
                driving.insert(id.to_owned(), alone);
            }
            room
        };
        if !room {
            // Back in the queue, for whichever process has room.
            self.store
                .index_deadline(id, version, record.due(now_ms()))
                .await?;
            return Ok(false);
        }
        if !self.store.lease(id, &self.holder, LEASE_TTL).await? {
            return Ok(false);
        }
        if alone {
            let expires = now_ms() + LEASE_TTL.as_millis() as u64;
            self.store
                .index_deadline(id, version, Some(expires))
                .await?;
        }
        Ok(true)
    }

    /// One run of game `id`'s bots; the lease is renewed meanwhile if the run waits long
    /// for a thread. Returns whether bots are left to move, and this process still
    /// holds the lease.
    async fn drive_once(&self, id: &str) -> Result<bool, Error> {
        let mut act = std::pin::pin!(self.act(id));
        let mut held = true;
        loop {
            tokio::select! {
                acted = &mut act => {
                    let left = matches!(
                        acted?,
                        Acted::Bots { bots_left: true } | Acted::TimedOut { bots_left: true }
                    );
                    return Ok(left && held);
                }
                () = tokio::time::sleep(RENEW_EVERY) => {
                    held &= self.store.lease(id, &self.holder, LEASE_TTL).await.unwrap_or(false);
                }
            }
        }
    }

    /// Drops game `id`'s entry from the index of due games: it expired.
    async fn forget_due(&self, id: &str) {
        if let Err(e) = self.store.index_deadline(id, u64::MAX, None).await {
            tracing::warn!(game_id = %id, error = %e, "could not drop an expired game's deadline");
        }
    }

    /// One pass over the store's due entries (every process runs this a few times a
    /// second): clocks that ran out and games with bots to move that no task of this
    /// process plays already, then, while this process has room, tables of bots alone
    /// from the queue. Returns how many games it acted on.
    pub async fn sweep(&self) -> Result<usize, Error> {
        let due = self
            .store
            .due_between(QUEUE_END, now_ms(), SWEEP_BATCH)
            .await?;
        let acted = futures_util::stream::iter(due)
            .filter(|id| std::future::ready(!self.driving().contains_key(id)))
            .map(|id| async move {
                match self.tend(&id).await {
                    Ok(acted) => acted,
                    // Expired since it was indexed: nothing will ever be due there.
                    Err(Error::NotFound) => {
                        self.forget_due(&id).await;
                        false
                    }
                    Err(e) => {
                        tracing::warn!(game_id = %id, error = %e, "a due game could not be acted on; retried on the next sweep");
                        false
                    }
                }
            })
            .buffer_unordered(SWEEP_CONCURRENCY)
            .filter(|&acted| std::future::ready(acted))
            .count()
            .await;
        let (driven, room) = {
            let driving = self.driving();
            let tables = Self::tables_driven(&driving);
            (driving.len(), self.tables.saturating_sub(tables))
        };
        if room == 0 {
            return Ok(acted);
        }
        // The queue's first entries may be games this process drives (the memory store
        // queues a table again with each of its saves): look past them.
        let queued = self
            .store
            .due_between(0, QUEUE_END - 1, room + driven)
            .await?;
        let started = queued
            .iter()
            .filter(|id| !self.driving().contains_key(*id))
            .take(room)
            .filter(|id| self.kick(id, true))
            .count();
        Ok(acted + started)
    }

    /// Acts on a due game the sweep found: bots to move are played by a task of this
    /// process (if it has room, and gets the lease), a clock that ran out at once.
    async fn tend(&self, id: &str) -> Result<bool, Error> {
        let (_, record) = self.load(id).await?;
        if record.bots_to_move() {
            return Ok(self.kick(id, false));
        }
        Ok(match self.act(id).await? {
            Acted::Nothing => false,
            Acted::TimedOut { bots_left } | Acted::Bots { bots_left } => {
                if bots_left {
                    self.kick(id, false);
                }
                true
            }
        })
    }

    /// A page of open games, newest first (pages from 1).
    pub async fn list_open(&self, page: usize, per_page: usize) -> Result<Vec<Seen>, Error> {
        if page == 0 || !(1..=MAX_PER_PAGE).contains(&per_page) {
            return Err(Error::BadRequest(format!(
                "page starts at 1; per_page is 1 to {MAX_PER_PAGE}"
            )));
        }
        // A store counts positions in 64-bit signed integers (Redis does): a page no list
        // could reach is the client's mistake, not the store's.
        if page
            .checked_mul(per_page)
            .is_none_or(|end| i64::try_from(end).is_err())
        {
            return Err(Error::BadRequest(
                "page: too large for any list of games".into(),
            ));
        }
        let listed = self
            .store
            .list_open((page - 1) * per_page, per_page)
            .await?;
        let mut out = Vec::with_capacity(listed.len());
        for (id, stored) in listed {
            // A game may have filled since its entry was written (the store's lobby is an
            // index): skip it. An unreadable entry is skipped too, not the whole page.
            match Record::decode(&stored.bytes) {
                Ok(record) if record.status() == Status::Waiting => {
                    out.push(Seen::of(&id, stored.version, &record, None));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(game_id = %id, error = %e, "a lobby entry does not decode")
                }
            }
        }
        Ok(out)
    }
}

/// The bots' moves that follow, once every seat is taken, while `keep_going` says so.
fn bots_play(
    record: &mut Record,
    events: &mut Vec<Event>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Vec<(u8, Move)> {
    if record.status() == Status::Waiting {
        return Vec::new();
    }
    let bots = record.bots();
    bots::turns::play_turns_while(&mut record.game, &bots, events, keep_going)
}

/// The seat of `token` (`None` for a spectator, without a token).
/// Game `id`'s version and record, checked.
async fn load(store: &AnyStore, id: &str) -> Result<(u64, Record), Error> {
    let stored = store.load(id).await?.ok_or(Error::NotFound)?;
    Ok((stored.version, Record::decode(&stored.bytes)?))
}

fn viewer_of(record: &Record, token: Option<&str>) -> Result<Option<u8>, Error> {
    token
        .map(|t| record.seat_of(t).ok_or(UNKNOWN_TOKEN))
        .transpose()
}

const UNKNOWN_TOKEN: Error = Error::Unauthorized("the token is not a seat of this game");

/// Maps an engine refusal to the service's error, with the seat's legal moves.
fn refuse(game: &Game, seat: u8, e: MoveError) -> Error {
    match e {
        MoveError::GameOver => Error::Finished,
        MoveError::NotYourTurn { .. } => Error::NotYourTurn(e.to_string()),
        other => Error::IllegalMove {
            message: other.to_string(),
            legal: game.project(Some(seat)).legal_moves,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::store::memory::MemoryStore;

    /// A service on the memory store whose bots have one thread and a long budget.
    fn service() -> Arc<GameService> {
        GameService::new(
            Arc::new(MemoryStore::new(Duration::from_secs(60)).into()),
            Arc::new(Metrics::new()),
            Duration::from_secs(1),
            true,
            CancellationToken::new(),
            BotSettings {
                threads: 1,
                budget: Duration::from_secs(10),
                tables: 1,
            },
            Caps::default(),
        )
    }

    /// The seat's bank as stored now.
    async fn bank(service: &GameService, id: &str, seat: u8) -> u64 {
        let (_, record) = service.load(id).await.unwrap();
        record.clock.unwrap().bank_at(seat, now_ms())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bots_wait_for_a_thread_is_not_charged_to_the_next_humans_bank() {
        let service = service();
        let clock = ClockSettings {
            bank_secs: 60,
            increment_secs: 0,
            on_timeout: OnTimeout::Bot,
            timeout_bot: Level::Greedy,
            abandon_after: 3,
        };
        let seen = service
            .create(
                NewGame {
                    preset: Preset::Classic,
                    overrides: RulesPatch::default(),
                    seats: 2,
                    bots: vec![(1, Level::Greedy)],
                    seed: Some(Seed::from_text("a bot's wait")),
                    deal: None,
                    clock: Some(clock),
                },
                None,
            )
            .await
            .unwrap();
        let id = seen.id.clone();
        let joined = service.join(&id, "human", Some(0), None).await.unwrap();
        let (_, record) = service.load(&id).await.unwrap();
        assert_eq!(record.human_to_move(), Some(0), "the human's turn");
        let mv = record.game.project(Some(0)).legal_moves[0].mv;
        let before = bank(&service, &id, 0).await;

        // The bots' only thread is busy: the bot's reply waits 500 ms for it.
        let (release, held) = mpsc::channel::<()>();
        let (busy_tx, busy) = tokio::sync::oneshot::channel();
        let pool_service = service.clone();
        let blocker = tokio::spawn(async move {
            pool_service
                .pool
                .run(
                    BotPlace::Request,
                    Priority::Human,
                    Instant::now(),
                    move |_| {
                        busy_tx.send(()).unwrap();
                        held.recv().unwrap();
                    },
                )
                .await
                .unwrap();
        });
        busy.await.unwrap();
        let request = MoveRequest {
            mv,
            expected_version: None,
        };
        let (moved, ()) = tokio::join!(
            service.make_move(&id, &joined.token, request, None),
            async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                release.send(()).unwrap();
            }
        );
        moved.unwrap();
        blocker.await.unwrap();
        let (_, record) = service.load(&id).await.unwrap();
        assert_eq!(record.human_to_move(), Some(0), "the bot replied");
        let charged = before - bank(&service, &id, 0).await;
        assert!(
            charged < 400,
            "{charged} ms charged: the 500 ms the bot waited for a thread are not the human's"
        );
    }
}
