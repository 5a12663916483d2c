//! The one place that joins the engine, the bots and the store, split by aggregate: each
//! owns its use cases and its stored types, and a handler calls one use case of one of
//! them. They know no HTTP, and never log a token or a hidden tile.
//!
//! A request travels down and its answer comes back up once: handler → aggregate → engine
//! and store. An aggregate calls only those below it (players ← games ← ratings,
//! matchmaking ← matches ← offers); what follows a save goes up through a port to [`dispatch`],
//! never from the write path itself.
//!
//! - [`games`]: tables. Create and join, move and view, the clocks and the bots in the
//!   background, the lobby, a game's events and history; the stored game and its one
//!   write path, and the one admission path every game made goes through.
//! - [`players`]: players (identities that outlive a game), their keys, a player's stream.
//! - [`matchmaking`]: how players meet, two types: [`Challenges`], a player's invitation,
//!   which becomes exactly one game; [`Seeks`], matchmaking by pool, decided by the store
//!   in one step.
//! - [`matches`](mod@matches): the duplicate arena: a match, its own stored record (its
//!   invitation, kept under a challenge's key and answered by the challenges' rules, and
//!   its series of games), driven from its record.
//! - [`offers`]: the challenge routes, which answer either invitation an id names: a
//!   challenge (matchmaking's) or a match waiting for its answer (the matches').
//! - [`ratings`]: a rated game's ratings moved once, and the leaderboards.
//! - [`tournaments`]: Swiss and round-robin tournaments, their rounds paired once and
//!   driven to the end from their stored record.
//! - [`leagues`]: standing competitions: entrants paired in duplicate matches (the
//!   matches') whenever they are free, each match counted once into a table of ratings.
//! - `driver`: the work on games no request waits for: the sweep of the due games
//!   (clocks run out, rated ends left unsettled), and their bots played by a task of this
//!   process under a lease. Above the games, which hand it a game to drive through a port.
//! - [`dispatch`]: what follows a game's save (lobby news, player news, ratings, the
//!   match, the cache), run from one place, each reaction its aggregate's.
//! - [`news`]: what players are told on their stream, the aggregates' shared vocabulary.
//! - Shared plumbing: [`shared`] (the store, metrics, settings, shutdown token and bots'
//!   pool every aggregate holds; the store only as narrow views, each record kind's open
//!   to its owner alone), [`thinking`] (where bots think: a bounded pool off the
//!   async workers, games with a human first), [`error`] (the one error type), [`page`]
//!   (the bounds of a page of a list), [`idempotency`] (what makes two requests the same,
//!   and the claims that make a create happen once), [`codec`] (the bytes of every stored
//!   record: a format byte, then the record and the fields appended after it).

mod codec;
mod dispatch;
mod driver;
mod error;
pub mod games;
mod idempotency;
pub mod leagues;
pub mod matches;
pub mod matchmaking;
pub mod news;
pub mod offers;
mod page;
pub mod players;
pub mod ratings;
mod shared;
pub mod thinking;
pub mod tournaments;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::store::any::AnyStore;
use crate::store::{GameStore, Health, StoreError};

pub use error::{Error, Fate};
pub use games::admit::NewGame;
pub use games::clock::{ClockSettings, OnTimeout};
pub use games::events::{Feed, FeedEvent, LobbyEvent, LobbyItem, LobbyNews, PublicEvent};
pub use games::log::{Export, ExportPart, Log, LoggedMove, MAX_LOG_PAGE};
pub use games::record::{Aborted, Record, Status};
pub use games::seating::{Occupant, TokenHash};
pub use games::view::{AfterMove, ClockState, NewSeat, View};
pub use games::{CallWire, Calls, GameQueries, Games, MoveRequest};
pub use idempotency::{Create, MIN_JOIN_KEY, MIN_KEY_DISTINCT, RequestKey, strong_key};
pub use leagues::Leagues;
pub use matches::{Match, Matches};
pub use matchmaking::challenge::{Challenge, NewChallenge};
pub use matchmaking::invitation::{ChallengeStatus, Invitation, Opponent};
pub use matchmaking::seek::{NewSeek, Seek, Wish};
pub use matchmaking::{Challenges, Seeks};
pub use news::{PlayerItem, PlayerNews};
pub use offers::{Offer, Offers};
pub use page::MAX_PER_PAGE;
pub use players::{Keyed, Players, Profile, ProfileLeague, RatingMoved, WebhookSet, WebhookState};
pub use ratings::Ratings;
pub use shared::{Caps, Faults, Lifetimes, WebhookOptions};
pub use thinking::BotSettings;
pub use tournaments::Tournaments;

use dispatch::Dispatcher;
use driver::Driver;
use shared::Shared;

/// The aggregates, as the app state holds them: a handler calls one use case of one.
pub struct Services {
    pub games: Arc<Games>,
    pub queries: Arc<GameQueries>,
    pub calls: Arc<Calls>,
    pub players: Arc<Players>,
    pub challenges: Arc<Challenges>,
    pub seeks: Arc<Seeks>,
    pub matches: Arc<Matches>,
    pub offers: Arc<Offers>,
    pub ratings: Arc<Ratings>,
    pub tournaments: Arc<Tournaments>,
    pub leagues: Arc<Leagues>,
    ctx: Arc<Shared>,
    /// Owned here, as is the dispatcher: the games hand games up to it through a weak
    /// port.
    driver: Arc<Driver>,
    /// Owned here; the aggregates that hand facts up to it hold it weakly.
    _dispatcher: Arc<Dispatcher>,
}

/// How the services behave, each part by its meaning (startup fills it from the settings).
#[derive(Clone)]
pub struct Options {
    /// The longest a long poll waits (`LONG_POLL_MAX_SECS`).
    pub long_poll_max: Duration,
    /// `ALLOW_PREARRANGED`: whether a game may be created with a seed or a deal.
    pub allow_prearranged: bool,
    pub bots: BotSettings,
    pub caps: Caps,
    pub lifetimes: Lifetimes,
    /// Games whose last written state this process keeps, so that its next write of one
    /// is one round trip (`GAME_CACHE_GAMES`; 0: none).
    pub game_cache: usize,
    pub faults: Faults,
    /// What a test's server deals from where no seed is given (never from the settings;
    /// `None`: the OS's generator, as in every server built from settings).
    pub deal_seed: Option<crate::engine::Seed>,
    pub webhooks: WebhookOptions,
    /// How webhook calls are written and read: the api's wire (`None`: webhook seats are
    /// played by pulling).
    pub wire: Option<Arc<dyn CallWire>>,
}

impl Services {
    pub fn new(
        store: Arc<AnyStore>,
        metrics: Arc<Metrics>,
        stopping: CancellationToken,
        options: Options,
    ) -> Arc<Services> {
        let ctx = Arc::new(Shared {
            store: shared::Stores::new(store),
            pool: thinking::Pool::new(options.bots, metrics.clone()),
            metrics,
            long_poll_max: options.long_poll_max,
            allow_prearranged: options.allow_prearranged,
            stopping,
            caps: options.caps,
            lifetimes: options.lifetimes,
            faults: options.faults,
            dealer: shared::Dealer::new(options.deal_seed),
            webhooks: shared::Webhooks {
                client: crate::hooks::Hooks::new(options.webhooks.limits),
                timeout: options.webhooks.timeout,
                max_failures: options.webhooks.max_failures,
            },
        });
        let players = Players::new(ctx.clone());
        let games = Games::new(ctx.clone(), players.clone(), options.game_cache);
        let queries = GameQueries::new(games.clone());
        let calls = Calls::new(games.clone(), options.wire);
        let driver = Driver::new(
            ctx.clone(),
            games.clone(),
            calls.clone(),
            options.bots.tables,
        );
        let ratings = Ratings::new(ctx.clone(), players.clone());
        let challenges = Challenges::new(ctx.clone(), players.clone(), games.clone());
        let seeks = Seeks::new(ctx.clone(), players.clone(), games.clone());
        let matches = Matches::new(
            ctx.clone(),
            players.clone(),
            games.clone(),
            challenges.clone(),
        );
        let offers = Offers::new(ctx.clone(), challenges.clone(), matches.clone());
        let tournaments = Tournaments::new(ctx.clone(), players.clone(), games.clone());
        let leagues = Leagues::new(ctx.clone(), players.clone(), matches.clone());
        let dispatcher = Arc::new(Dispatcher {
            games: games.clone(),
            players: players.clone(),
            ratings: ratings.clone(),
            matches: matches.clone(),
            tournaments: tournaments.clone(),
        });
        // Held weakly below: the dispatcher holds the aggregates, not the other way round.
        let reactions: Arc<dyn games::saved::SaveReactions> = dispatcher.clone();
        games.react_with(Arc::downgrade(&reactions));
        let matchmade: Arc<dyn matchmaking::MatchmakingReactions> = dispatcher.clone();
        challenges.react_with(Arc::downgrade(&matchmade));
        seeks.react_with(Arc::downgrade(&matchmade));
        let matched: Arc<dyn matches::MatchReactions> = dispatcher.clone();
        matches.react_with(Arc::downgrade(&matched));
        let toured: Arc<dyn tournaments::TournamentReactions> = dispatcher.clone();
        tournaments.react_with(Arc::downgrade(&toured));
        let rated: Arc<dyn ratings::RatingReactions> = dispatcher.clone();
        ratings.react_with(Arc::downgrade(&rated));
        let drive: Arc<dyn games::due::Drive> = driver.clone();
        games.drive_with(Arc::downgrade(&drive));
        Arc::new(Services {
            games,
            queries,
            calls,
            players,
            challenges,
            seeks,
            matches,
            offers,
            ratings,
            tournaments,
            leagues,
            ctx,
            driver,
            _dispatcher: dispatcher,
        })
    }

    /// Services on a memory store, for unit tests: one bot thread thinking `budget` a
    /// move (the master a fixed 1,000 moves), every cap and fault off.
    #[cfg(test)]
    pub(crate) fn on_memory(budget: Duration) -> Arc<Services> {
        let store = crate::store::memory::MemoryStore::new(Duration::from_secs(60));
        Services::new(
            Arc::new(store.into()),
            Arc::new(Metrics::new()),
            CancellationToken::new(),
            Options {
                long_poll_max: Duration::from_secs(1),
                allow_prearranged: true,
                bots: BotSettings {
                    threads: 1,
                    budget,
                    tables: 1,
                    master: crate::bots::Budget::Work(1_000),
                },
                caps: Caps::default(),
                // A test's own (the settings' defaults, which the service does not read).
                lifetimes: Lifetimes {
                    challenge: Duration::from_secs(600),
                    seek: Duration::from_secs(300),
                    tournament: Duration::from_secs(86_400),
                    league_rest: Duration::from_secs(600),
                    player_unplayed: Some(Duration::from_secs(7 * 24 * 3600)),
                },
                game_cache: 0,
                faults: Faults::default(),
                deal_seed: None,
                // No webhook is called here: these services have no wire.
                webhooks: WebhookOptions {
                    limits: crate::hooks::HookLimits {
                        allow_private: false,
                        per_owner: 1,
                        total: 1,
                    },
                    timeout: Duration::from_secs(1),
                    max_failures: 1,
                },
                wire: None,
            },
        )
    }

    /// Answers when the store does (on a cluster: when every slot is served) within
    /// `within`, with what it says of its health. The store bounds its own calls; this
    /// bound holds even if one misbehaves, so a probe's answer time never exceeds what the
    /// orchestrator was promised.
    pub async fn ready(&self, within: Duration) -> Result<Health, Error> {
        match tokio::time::timeout(within, self.ctx.store.games().ping()).await {
            Ok(Ok(health)) => Ok(health),
            // Readiness is for operators: the cause is the answer.
            Ok(Err(StoreError::Unavailable(cause))) => Err(Error::StoreNotReady(cause)),
            Ok(Err(other)) => Err(other.into()),
            Err(_) => Err(Error::StoreNotReady(format!(
                "{} store did not answer a ping within {within:?}",
                self.ctx.store.kind()
            ))),
        }
    }

    /// Which store keeps the games: `memory`, `redis` or `redis-cluster`.
    pub fn store_kind(&self) -> &'static str {
        self.ctx.store.kind()
    }

    /// Whether this process has begun to stop: its sweep and its bots' tasks end.
    pub fn is_stopping(&self) -> bool {
        self.ctx.stopping.is_cancelled()
    }

    /// One pass of the background work (every process runs this a few times a second):
    /// the due games (clocks, bots, tables of bots alone), the due challenges (expired, or
    /// an accepted one whose process died before making its game; a match's next step),
    /// the seeks (paired, expired, fallen back), and the tournaments due (to start, or to move
    /// on), and the leagues due (to count and pair). Returns how many it acted on.
    pub async fn sweep(&self) -> Result<usize, Error> {
        // Side by side, so that no kind waits for another's work (a long pass of games
        // delays no tournament's start).
        let (games, challenges, seeks, tournaments, leagues) = tokio::join!(
            self.driver.sweep(),
            self.challenges.sweep_challenges(),
            self.seeks.sweep_seeks(),
            self.tournaments.sweep_tournaments(),
            self.leagues.sweep_leagues(),
        );
        let games = games?;
        let challenges = challenges.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the sweep could not read the due challenges");
            0
        });
        let seeks = seeks.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the sweep could not pair or settle the seeks");
            0
        });
        let tournaments = tournaments.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the sweep could not read the due tournaments");
            0
        });
        let leagues = leagues.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the sweep could not read the due leagues");
            0
        });
        Ok(games + challenges + seeks + tournaments + leagues)
    }
}
