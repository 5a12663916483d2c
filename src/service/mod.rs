//! The one place that joins the engine, the bots and the store. [`GameService`] owns the
//! store, the bots' thread pool and this process's share of the background work, so that
//! handlers stay thin: they turn requests into one call here, render the answer, and map
//! [`Error`] to a problem. It knows no HTTP, and never logs a token or a hidden tile.
//!
//! A request travels down and its answer comes back up once: load the game's record →
//! check the seat token → run the engine (and the bots whose turn follows) → store the
//! record with a compare-and-set on its version, with the idempotency receipt and the
//! public event → answer with what the caller may see.
//!
//! - [`error`]: the one error type, and what became of an unanswered save.
//! - [`lobby`] and [`play`]: the use cases (create, join, list; move, view).
//! - [`write`]: the one write path every change goes through; a lost race retries on
//!   fresh state, unless the client pinned `expected_version`.
//! - [`cache`]: the games this process wrote last, which a write starts from without
//!   loading them (a stale one costs a retry on the state the save answers).
//! - [`background`]: the clock sweep and the bots at tables, under a lease in the store.
//! - [`clock`]: the banks of time and when the seat to move runs out (pure arithmetic).
//! - [`record`]: the stored game (lobby facts, seat tokens, the engine's game) and its one
//!   byte format, checked on every load.
//! - [`view`]: the answers, each what one caller may see.
//! - [`events`]: the public event of each version, and the feed of them.
//! - [`idempotency`]: when two requests are the same, and the receipts that answer retries.
//! - [`log`]: the history as answers: the log a page at a time, the export as it is sent.
//! - [`page`]: the bounds of a page of a list (the lobby, a player's games, a leaderboard).
//! - [`players`]: players (identities that outlive a game), their keys and their games;
//!   [`player_events`]: a player's stream.
//! - [`challenge`] (the stored challenge) and [`challenges`] (make, answer, expire): a
//!   player's invitation, which becomes exactly one game.
//! - [`seeks`]: matchmaking by pool, decided by the store in one step.
//! - [`ratings`]: a rated game's ratings moved once, and the leaderboard.
//! - [`series`] (a match's stored games, score and margin) and [`matches`] (make, drive,
//!   cancel): the duplicate arena, a challenge with a series of games.
//! - [`thinking`]: where bots think (a bounded pool off the async workers, games with a
//!   human first) and for how long.

mod background;
mod cache;
pub mod challenge;
pub mod challenges;
pub mod clock;
mod error;
pub mod events;
pub mod idempotency;
mod lobby;
pub mod log;
pub mod matches;
mod page;
mod play;
mod player_events;
pub mod players;
pub mod ratings;
pub mod record;
pub mod seeks;
pub mod series;
pub mod thinking;
pub mod view;
mod write;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::store::any::AnyStore;
use crate::store::{GameStore, Health, StoreError};

pub use challenge::{Challenge, ChallengeStatus, NewChallenge, Opponent};
pub use clock::{ClockSettings, OnTimeout};
pub use error::{Error, Fate};
pub use events::{Feed, LobbyEvent, LobbyItem, LobbyNews, PublicEvent, Watched};
pub use idempotency::{MIN_JOIN_KEY, RequestKey};
pub use lobby::{MAX_NAME_CHARS, NewGame};
pub use log::{Export, ExportPart, Log, LogEntry, MAX_LOG_PAGE};
pub use page::MAX_PER_PAGE;
pub use play::MoveRequest;
pub use player_events::{PlayerItem, PlayerNews};
pub use players::{Keyed, Profile};
pub use record::{Record, Seat, Status, TokenHash};
pub use seeks::{NewSeek, Seek, Wish};
pub use thinking::BotSettings;
pub use view::{AfterMove, ClockView, NewSeat, View};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What one client address may have at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Games waiting for players (`MAX_WAITING_PER_IP`; `None`: no cap).
    pub waiting: Option<usize>,
    /// Games created and not finished, tables of bots alone included
    /// (`MAX_GAMES_PER_IP`; `None`: no cap).
    pub games: Option<usize>,
    /// Players created in the last hour (`MAX_PLAYERS_PER_IP`; `None`: no cap).
    pub players: Option<usize>,
    /// How long a challenge may stay open (`CHALLENGE_TTL_SECS`; zero: the default).
    pub challenge_ttl: std::time::Duration,
    /// How long a seek may wait (`SEEK_TTL_SECS`; zero: the default).
    pub seek_ttl: std::time::Duration,
    /// Games whose last written state this process keeps, so that its next write of one
    /// is one round trip (`GAME_CACHE_GAMES`; 0: none).
    pub game_cache: usize,
    /// A fault hook for tests, never set from the environment: the process that finishes
    /// a rated game does not move its ratings, as if it had died right after the game's
    /// last save, and leaves them to a sweep.
    pub skip_settling: bool,
}

pub struct GameService {
    store: Arc<AnyStore>,
    metrics: Arc<Metrics>,
    long_poll_max: Duration,
    /// `ALLOW_PREARRANGED`: whether a game may be created with a seed or a deal.
    allow_prearranged: bool,
    /// Cancelled when the server begins to stop: long polls answer, event feeds end and
    /// the background work stops at once. [`crate::startup`] owns it and cancels it on
    /// SIGTERM/SIGINT.
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
    /// The games this process wrote last, which its writes start from.
    cache: cache::GameCache,
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
            cache: cache::GameCache::new(caps.game_cache),
            me: me.clone(),
        })
    }

    /// Answers when the store does (on a cluster: when every slot is served) within
    /// `within`, with what it says of its health. The store bounds its own calls; this
    /// bound holds even if one misbehaves, so a probe's answer time never exceeds what the
    /// orchestrator was promised.
    pub async fn ready(&self, within: Duration) -> Result<Health, Error> {
        match tokio::time::timeout(within, self.store.ping()).await {
            Ok(Ok(health)) => Ok(health),
            // Readiness is for operators: the cause is the answer.
            Ok(Err(StoreError::Unavailable(cause))) => Err(Error::StoreNotReady(cause)),
            Ok(Err(other)) => Err(other.into()),
            Err(_) => Err(Error::StoreNotReady(format!(
                "{} store did not answer a ping within {within:?}",
                self.store.kind()
            ))),
        }
    }

    /// Which store keeps the games: `memory`, `redis` or `redis-cluster`.
    pub fn store_kind(&self) -> &'static str {
        self.store.kind()
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
        let bearer = self.bearer(token.map(SeatToken::new)).await?;
        let (version, record) = self.load(id).await?;
        let viewer = viewer_of(&record, bearer.as_ref())?;
        Ok((version, record, viewer))
    }

    /// Who `token` is: a seat's token as it is, or a player key checked against its
    /// player (401 when it opens none).
    async fn bearer(&self, token: Option<SeatToken<'_>>) -> Result<Option<Bearer>, Error> {
        match token {
            Some(key) if players::is_player_key(key.text) => {
                let (_, player) = self.authenticate(key.text).await?;
                Ok(Some(Bearer::Player(player.id)))
            }
            Some(token) => Ok(Some(Bearer::Token(
                token.hash.unwrap_or_else(|| TokenHash::of(token.text)),
            ))),
            None => Ok(None),
        }
    }
}

/// A request's bearer token, with its [`TokenHash`] when the caller has it already (the
/// HTTP layer's rate limit computed it): a token is hashed once a request.
#[derive(Debug, Clone, Copy)]
pub struct SeatToken<'a> {
    text: &'a str,
    hash: Option<TokenHash>,
}

impl<'a> SeatToken<'a> {
    /// A token to hash when needed.
    pub fn new(text: &'a str) -> SeatToken<'a> {
        SeatToken { text, hash: None }
    }

    /// A token with its hash; `hash` must be `TokenHash::of(text)`.
    pub fn hashed(text: &'a str, hash: TokenHash) -> SeatToken<'a> {
        SeatToken {
            text,
            hash: Some(hash),
        }
    }
}

/// Who sent a request: a seat's token (by its hash), or a player whose key was checked.
#[derive(Debug, Clone)]
enum Bearer {
    Token(TokenHash),
    /// The player's id.
    Player(String),
}

/// Game `id`'s version and record, checked.
async fn load(store: &AnyStore, id: &str) -> Result<(u64, Record), Error> {
    let stored = store.load(id).await?.ok_or(Error::NotFound)?;
    Ok((stored.version, Record::decode(&stored.bytes)?))
}

/// The seat of `bearer` (`None` for a spectator, without a token).
fn viewer_of(record: &Record, bearer: Option<&Bearer>) -> Result<Option<u8>, Error> {
    bearer.map(|b| seat_of(record, b)).transpose()
}

/// The seat `bearer` holds: a token's own, or the one bound to the key's player.
fn seat_of(record: &Record, bearer: &Bearer) -> Result<u8, Error> {
    match bearer {
        Bearer::Token(hash) => record.seat_of(hash).ok_or(UNKNOWN_TOKEN),
        Bearer::Player(player) => record.seat_of_player(player).ok_or_else(|| {
            Error::Forbidden("no seat of this game is bound to the key's player".into())
        }),
    }
}

const UNKNOWN_TOKEN: Error = Error::Unauthorized("the token is not a seat of this game");
