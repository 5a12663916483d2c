//! Building and running the server: the store chosen by the settings, the listener, the
//! app (middleware, state, routes), and graceful shutdown.
//!
//! Owns the wiring only: what the app holds and in which order middleware runs. It reads
//! no environment (that is [`crate::settings`]) and holds no request logic. [`drain`]
//! owns stopping: the requests in flight a stopping server waits for, and the signals.

mod drain;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_http::HttpService;
use actix_http::error::DispatchError;
use actix_service::{IntoServiceFactory, ServiceFactoryExt, map_config};
use actix_web::dev::{AppConfig, Extensions, Server, ServerHandle, fn_service};
use actix_web::middleware::from_fn;
use actix_web::middleware::{Compress, Condition};
use actix_web::rt::net::TcpStream;
use actix_web::{App, web};
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::api::connection::{ConnectionLimits, Watched};
use crate::metrics::{self, Metrics};
use crate::service::Faults;
use crate::settings::Settings;
use crate::store::any::AnyStore;
use crate::store::memory::MemoryStore;
use crate::store::redis::{RedisStore, RedisTarget};
use crate::store::{GameStore, StoreError};
use crate::telemetry;

use self::drain::{Drain, stop_on_signal, track_in_flight};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("BIND_ADDR: cannot listen on {addr}: {error}")]
    Bind {
        addr: std::net::SocketAddr,
        error: std::io::Error,
    },
    // The URL is not repeated: it may hold a password.
    #[error("{var}: cannot use this Redis: {error}")]
    Store {
        var: &'static str,
        error: StoreError,
    },
    #[error("cannot start the HTTP server: {0}")]
    Server(std::io::Error),
}

/// A server bound to its port, not yet serving.
pub struct Application {
    port: u16,
    server: Server,
    stopping: CancellationToken,
}

/// Stops a server from outside (tests; the binary stops on signals) as a dying process
/// would: its background work (the sweep, the bots it drives) ends with its next step,
/// and its workers stop at once, with no grace for open connections.
#[derive(Clone)]
pub struct Stopper {
    server: ServerHandle,
    stopping: CancellationToken,
}

impl Stopper {
    /// Begins the stop at once (the background work sees it before this returns); the
    /// future resolves once the server has told its workers to stop.
    pub fn stop(&self) -> impl std::future::Future<Output = ()> + use<> {
        self.stopping.cancel();
        self.server.stop(false)
    }
}

impl Application {
    /// Builds the store, binds `settings.bind_addr` (port 0: any free port, see
    /// [`Application::port`]) and prepares the server.
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        Application::build_with_faults(settings, Faults::default()).await
    }

    /// [`Application::build`] with faults injected: for the tests that play a crash.
    #[doc(hidden)]
    pub async fn build_with_faults(
        settings: Settings,
        faults: Faults,
    ) -> Result<Application, StartupError> {
        Application::build_for_test(settings, faults, None).await
    }

    /// [`Application::build_with_faults`], dealing every game made without a seed (and
    /// every match's, tournament's and seek's secret) from `deal_seed` when given: a
    /// test's server, whose deals are the same on every run.
    #[doc(hidden)]
    pub async fn build_for_test(
        settings: Settings,
        faults: Faults,
        deal_seed: Option<crate::engine::Seed>,
    ) -> Result<Application, StartupError> {
        let store = build_store(&settings).await?;
        let listener =
            TcpListener::bind(settings.bind_addr).map_err(|error| StartupError::Bind {
                addr: settings.bind_addr,
                error,
            })?;
        let addr = listener.local_addr().map_err(StartupError::Server)?;
        let stopping = CancellationToken::new();
        let server = serve(
            listener,
            settings,
            store,
            Arc::new(Metrics::new()),
            stopping.clone(),
            faults,
            deal_seed,
        )?;
        tracing::info!(%addr, "listening");
        Ok(Application {
            port: addr.port(),
            server,
            stopping,
        })
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server from outside (tests; the binary stops on signals).
    pub fn handle(&self) -> Stopper {
        Stopper {
            server: self.server.handle(),
            stopping: self.stopping.clone(),
        }
    }

    /// Serves until SIGTERM or SIGINT; then stops accepting, answers every waiting long
    /// poll and ends every event stream at once, and lets in-flight requests finish for
    /// up to `SHUTDOWN_TIMEOUT_SECS`.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

async fn build_store(settings: &Settings) -> Result<AnyStore, StartupError> {
    let (target, var) = match (&settings.redis_url, settings.redis_cluster_nodes.as_slice()) {
        (Some(url), _) => (RedisTarget::Single(url.clone()), "REDIS_URL"),
        (None, []) => {
            tracing::info!(
                store = "memory",
                "no REDIS_URL: games live in this process's memory and are lost when it stops"
            );
            let mut store = MemoryStore::new(settings.game_idle_ttl);
            if let Some(max) = settings.memory_max_games {
                store = store.with_max_games(max);
            }
            if let Some(max) = settings.memory_max_bytes {
                store = store.with_max_bytes(max);
            }
            return Ok(store.into());
        }
        (None, nodes) => (RedisTarget::Cluster(nodes.to_vec()), "REDIS_CLUSTER_NODES"),
    };
    let cluster = matches!(target, RedisTarget::Cluster(_));
    let wait_replicas = settings
        .redis_wait_replicas
        .unwrap_or(if cluster { 1 } else { 0 });
    let store = RedisStore::connect_to(
        &target,
        &settings.redis_key_prefix,
        settings.game_idle_ttl,
        settings.store_timeout,
        wait_replicas,
    )
    .await
    .map_err(|error| StartupError::Store { var, error })?;
    // The mode, and whether the store answers (on a cluster: whether the cluster says its
    // state is ok; with REDIS_WAIT_REPLICAS, whether every master has the replicas),
    // once at startup; `/readyz` says it on every probe.
    let health = match store.ping().await {
        Ok(health) if health.degraded.is_empty() => "ok".to_owned(),
        Ok(health) => {
            for problem in &health.degraded {
                tracing::warn!(wait_replicas, "{problem}");
            }
            format!("degraded ({} warned above)", health.degraded.len())
        }
        Err(e) => e.to_string(),
    };
    tracing::info!(
        store = store.mode(),
        key_prefix = %settings.redis_key_prefix,
        wait_replicas,
        health = %health,
        "games live in {}",
        if cluster { "a Redis Cluster" } else { "Redis" }
    );
    Ok(store.into())
}

/// Files kept for everything but client connections: the listener, Redis connections (a
/// cluster holds several), logs, and what the runtime opens.
const RESERVED_FILES: u64 = 256;
/// Client connections always left over by the stream cap: health checks, scrapes and
/// ordinary requests get in however many streams are open.
const MIN_SPARE_CONNECTIONS: usize = 64;
/// `MAX_STREAMS` when the file limit allows it and the operator does not say.
const DEFAULT_MAX_STREAMS: usize = 10_000;
/// How long an idle kept-alive connection is kept (actix's default).
const KEEP_ALIVE: Duration = Duration::from_secs(5);
/// How long a closing connection may take to flush its last answer (actix's default).
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Raises the soft open-file limit to the hard one (streams hold a file each; the soft
/// limit is often 1024), and returns the limit now in force (`None`: unknown).
fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read or write the struct passed.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                limit = raised;
            }
        }
        #[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, not on every unix
        Some(u64::try_from(limit.rlim_cur).unwrap_or(u64::MAX))
    }
    #[cfg(not(unix))]
    None
}

/// How many client connections each worker accepts, and how many streams may be open in
/// all, so that streams never take the last connection and connections never take the
/// last file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ConnectionBudget {
    per_worker: usize,
    max_streams: usize,
}

fn connection_budget(
    open_files: Option<u64>,
    workers: usize,
    wanted: Option<usize>,
) -> ConnectionBudget {
    // actix's own default, per worker, when the file limit is unknown or vast.
    const ACTIX_DEFAULT: usize = 25_000;
    let connections = open_files
        .map(|n| usize::try_from(n.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX))
        .unwrap_or(ACTIX_DEFAULT * workers)
        .clamp(2 * MIN_SPARE_CONNECTIONS, ACTIX_DEFAULT * workers);
    let most_streams = connections - MIN_SPARE_CONNECTIONS.max(connections / 4);
    ConnectionBudget {
        per_worker: connections / workers,
        max_streams: wanted.unwrap_or(DEFAULT_MAX_STREAMS).min(most_streams),
    }
}

fn serve(
    listener: TcpListener,
    settings: Settings,
    store: AnyStore,
    metrics: Arc<Metrics>,
    stopping: CancellationToken,
    faults: Faults,
    deal_seed: Option<crate::engine::Seed>,
) -> Result<Server, StartupError> {
    let shutdown_timeout = settings.shutdown_timeout;
    let max_body_bytes = settings.max_body_bytes;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let open_files = raise_open_file_limit();
    let budget = connection_budget(open_files, workers, settings.max_streams);
    if settings
        .max_streams
        .is_some_and(|wanted| wanted > budget.max_streams)
    {
        tracing::warn!(
            wanted = settings.max_streams,
            max_streams = budget.max_streams,
            "MAX_STREAMS is more than the open-file limit leaves room for; lowered"
        );
    }
    // Behind proxies every connection comes from a proxy: counting them per address
    // would cap the proxies, not the clients.
    let max_connections_per_ip = settings
        .max_connections_per_ip
        .filter(|_| settings.proxy_hops == 0);
    tracing::info!(
        open_files,
        workers,
        max_connections = budget.per_worker * workers,
        max_connections_per_ip,
        max_streams = budget.max_streams,
        max_streams_per_ip = settings.max_streams_per_ip,
        head_timeout_ms = settings.head_timeout.as_millis() as u64,
        "connection limits"
    );
    let connections = Arc::new(ConnectionLimits::new(
        max_connections_per_ip,
        settings.head_timeout,
        KEEP_ALIVE,
        &metrics,
    ));
    let head_timeout = settings.head_timeout;
    // `stopping` is cancelled on SIGTERM/SIGINT, before actix stops accepting: long polls
    // answer, event streams end and the background work stops at once, rather than
    // holding the shutdown for its whole grace.
    // The store is the service's alone: no handler reaches it any other way.
    let services = crate::service::Services::new(
        Arc::new(store),
        metrics.clone(),
        stopping.clone(),
        crate::service::Options {
            long_poll_max: settings.long_poll_max,
            allow_prearranged: settings.allow_prearranged,
            bots: crate::service::BotSettings {
                threads: settings.bot_threads,
                budget: settings.bot_budget,
                tables: settings.bot_tables,
                master: settings
                    .bot_master_work
                    .map_or(crate::bots::Budget::Time(settings.bot_budget), |moves| {
                        crate::bots::Budget::Work(moves)
                    }),
            },
            caps: crate::service::Caps {
                waiting: settings.max_waiting_per_ip,
                games: settings.max_games_per_ip,
                kept: settings.max_kept_games_per_ip,
                players: settings.max_players_per_ip,
                tournaments_per_ip: settings.max_tournaments_per_ip,
                challenges_to_player: settings.max_challenges_to_player,
                tournaments_per_player: settings.max_tournaments_per_player,
                tournaments_joined: settings.max_tournaments_joined,
                tournament_players: Some(settings.max_tournament_players),
                leagues_per_player: settings.max_leagues_per_player,
                leagues_entered: settings.max_leagues_entered,
                league_entrants: Some(settings.max_league_entrants),
                league_matches_per_hour: Some(settings.league_matches_per_hour),
            },
            lifetimes: lifetimes(&settings),
            game_cache: settings.game_cache_games,
            faults,
            deal_seed,
            webhooks: crate::service::WebhookOptions {
                limits: crate::hooks::HookLimits {
                    allow_private: settings.webhooks.allow_private,
                    per_owner: settings.webhooks.concurrency,
                    total: settings.webhooks.concurrency_total,
                },
                timeout: settings.webhooks.timeout,
                max_failures: settings.webhooks.max_failures,
            },
            wire: Some(Arc::new(api::webhooks::Wire)),
        },
    );
    // Each aggregate is app state of its own: a handler takes the one it calls.
    let games = web::Data::from(services.games.clone());
    let queries = web::Data::from(services.queries.clone());
    let calls = web::Data::from(services.calls.clone());
    let players = web::Data::from(services.players.clone());
    let challenges = web::Data::from(services.challenges.clone());
    let seeks = web::Data::from(services.seeks.clone());
    let matches = web::Data::from(services.matches.clone());
    let offers = web::Data::from(services.offers.clone());
    let ratings = web::Data::from(services.ratings.clone());
    let tournaments = web::Data::from(services.tournaments.clone());
    let leagues = web::Data::from(services.leagues.clone());
    // One feed per tournament followed, shared by the workers of this process.
    let feeds = web::Data::from(Arc::new(api::feeds::TournamentFeeds::new(
        api::feeds::TournamentSource(services.tournaments.clone()),
        &metrics,
    )));
    let league_feeds = web::Data::from(Arc::new(api::feeds::LeagueFeeds::new(
        api::feeds::LeagueSource(services.leagues.clone()),
        &metrics,
    )));
    // The lobby's feed and the spectators' frames, shared by the workers of this process.
    let fanout = web::Data::from(Arc::new(api::games::fanout::Fanout::new(
        services.games.clone(),
        metrics.clone(),
    )));
    let slots = web::Data::new(api::streams::StreamSlots::new(
        settings.max_streams_per_ip,
        budget.max_streams,
        settings.proxy_hops,
        metrics.clone(),
    ));
    let drain = web::Data::new(Drain::new(stopping.clone()));
    tokio::spawn(sweep_clocks(
        Arc::downgrade(&services),
        settings.clock_sweep_every,
    ));
    let services = web::Data::from(services);
    let limits = web::Data::new(api::ratelimit::RateLimits::new(&settings));
    let settings = web::Data::new(settings);
    let metrics = web::Data::from(metrics);
    let stopper = drain.clone().into_inner();
    // The numbers a client sends are refused with the ranges the document states.
    api::numbers::read_ranges(api::openapi::document());
    let app = move || {
        let cors = api::headers::cors(&settings.cors_origins);
        App::new()
            // Outermost last: the request span and id wrap everything, metrics see the
            // final status, and the fallback turns actix's bare errors into problems
            // (keeping their headers). Compression sits inside the fallback, so its 406 is
            // a problem too, and outside CORS, which would overwrite the `Vary` line it
            // appends. CORS wraps the rate limits, so a page can read a 429 (a preflight is
            // answered by CORS and costs no budget). Rate limits are innermost: a refused
            // request is still logged and counted.
            .wrap(from_fn(api::body_timeout::cut_slow_bodies))
            .wrap(from_fn(api::ratelimit::limit))
            .wrap(Condition::new(cors.is_some(), cors.unwrap_or_default()))
            .wrap(Compress::default())
            .wrap(from_fn(api::headers::keep_uncompressed))
            .wrap(from_fn(api::error::problem_fallback))
            .wrap(from_fn(metrics::record_http))
            .wrap(from_fn(telemetry::request_telemetry))
            // Outermost: a request is in flight until its whole answer is written.
            .wrap(from_fn(track_in_flight))
            .app_data(settings.clone())
            .app_data(services.clone())
            .app_data(games.clone())
            .app_data(queries.clone())
            .app_data(calls.clone())
            .app_data(players.clone())
            .app_data(challenges.clone())
            .app_data(seeks.clone())
            .app_data(matches.clone())
            .app_data(offers.clone())
            .app_data(ratings.clone())
            .app_data(tournaments.clone())
            .app_data(leagues.clone())
            .app_data(feeds.clone())
            .app_data(league_feeds.clone())
            .app_data(fanout.clone())
            .app_data(metrics.clone())
            .app_data(limits.clone())
            .app_data(slots.clone())
            .app_data(drain.clone())
            .configure(|cfg| api::configure(cfg, max_body_bytes))
    };
    let local_addr = listener.local_addr().map_err(StartupError::Server)?;
    // What actix's `HttpServer` builds, but over a stream of our own: `HttpServer` hands
    // actix the bare `TcpStream`, and a deadline on every head needs to see the reads
    // (see `api::connection`).
    let server = Server::build()
        // Our own handling (see `stop_on_signal`): actix's makes SIGINT a forced stop, and
        // its graceful stop waits for idle keep-alive connections too.
        .disable_signals()
        .shutdown_timeout(shutdown_timeout.as_secs())
        .workers(workers)
        .max_concurrent_connections(budget.per_worker)
        .listen("domino-server", listener, move || {
            let connections = connections.clone();
            // The app sees no host or address of this config: the default is as good.
            let app = map_config(app().into_factory().map_err(|e| e.error_response()), |_| {
                AppConfig::default()
            });
            let http = HttpService::build()
                .keep_alive(KEEP_ALIVE)
                .client_request_timeout(head_timeout)
                .client_disconnect_timeout(DISCONNECT_TIMEOUT)
                // A client that closes its side is gone: its stream or long poll ends (and
                // gives back its slot) at once, not at the next write. HTTP clients do not
                // half-close.
                .h1_allow_half_closed(false)
                .local_addr(local_addr)
                .on_connect_ext(|io: &Watched, data: &mut Extensions| {
                    data.insert(io.watch());
                })
                .h1(app);
            fn_service(move |io: TcpStream| {
                let connections = connections.clone();
                async move { connections.accept(io).await.map_err(DispatchError::Io) }
            })
            .and_then(http)
        })
        .map_err(StartupError::Server)?
        .run();
    tokio::spawn(stop_on_signal(server.handle(), stopper, shutdown_timeout));
    Ok(server)
}

/// Every process sweeps the store's due deadlines, so a clock runs out on time (and bots
/// left to move play on) whichever process saved it and whether or not any request arrives. Holds the service weakly: it
/// ends with the server.
async fn sweep_clocks(
    services: std::sync::Weak<crate::service::Services>,
    every: std::time::Duration,
) {
    // Weak from the start: a strong handle kept in this task would keep a stopped
    // server's service sweeping (and racing the processes that carry on).
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(services) = services.upgrade() else {
            return;
        };
        if services.is_stopping() {
            return;
        }
        if let Err(e) = services.sweep().await {
            tracing::warn!(error = %e, "the clock sweep could not read the deadlines");
        }
    }
}

/// The lifetimes the settings say.
fn lifetimes(settings: &Settings) -> crate::service::Lifetimes {
    crate::service::Lifetimes {
        challenge: settings.challenge_ttl,
        seek: settings.seek_ttl,
        tournament: settings.tournament_kept,
        league_rest: settings.league_rest,
        player_unplayed: settings.player_unplayed_ttl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_always_leave_connections_spare_and_connections_leave_files_spare() {
        // The common soft limit, two workers.
        let b = connection_budget(Some(1024), 2, None);
        assert_eq!(b.per_worker * 2, 768);
        assert_eq!(b.max_streams, 768 - 192);
        // A raised limit: the default cap.
        let b = connection_budget(Some(1 << 20), 2, None);
        assert_eq!(b.max_streams, DEFAULT_MAX_STREAMS);
        assert!(b.per_worker * 2 >= DEFAULT_MAX_STREAMS + MIN_SPARE_CONNECTIONS);
        // An operator's wish beyond the files is lowered; below them, kept.
        assert_eq!(
            connection_budget(Some(1024), 2, Some(5000)).max_streams,
            576
        );
        assert_eq!(connection_budget(Some(1024), 2, Some(10)).max_streams, 10);
        // A tiny limit still leaves health checks their spare connections.
        let b = connection_budget(Some(300), 1, None);
        assert_eq!(b.per_worker - b.max_streams, MIN_SPARE_CONNECTIONS);
    }
}
