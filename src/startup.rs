//! Building and running the server: the store chosen by the settings, the listener, the
//! app (middleware, state, routes), and graceful shutdown.
//!
//! Owns the wiring only: what the app holds and in which order middleware runs. It reads
//! no environment (that is [`crate::settings`]) and holds no request logic.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::{Server, ServerHandle};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};

use crate::api;
use crate::metrics::{self, Metrics};
use crate::settings::Settings;
use crate::store::any::AnyStore;
use crate::store::memory::MemoryStore;
use crate::store::redis::{RedisStore, RedisTarget};
use crate::store::{GameStore, StoreError};
use crate::telemetry;

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
}

impl Application {
    /// Builds the store, binds `settings.bind_addr` (port 0: any free port, see
    /// [`Application::port`]) and prepares the server.
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        let store = build_store(&settings).await?;
        let listener =
            TcpListener::bind(settings.bind_addr).map_err(|error| StartupError::Bind {
                addr: settings.bind_addr,
                error,
            })?;
        let addr = listener.local_addr().map_err(StartupError::Server)?;
        let server = serve(listener, settings, store, Arc::new(Metrics::new()))?;
        tracing::info!(%addr, "listening");
        Ok(Application {
            port: addr.port(),
            server,
        })
    }

    /// The port actually bound.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server from outside (tests; the binary stops on signals).
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGTERM or SIGINT, then lets in-flight requests finish for up to
    /// `SHUTDOWN_TIMEOUT_SECS`.
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
            return Ok(MemoryStore::new(settings.game_idle_ttl).into());
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
    // state is ok), once at startup; `/readyz` says it on every probe.
    let health = match store.ping().await {
        Ok(()) => "ok".to_owned(),
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

fn serve(
    listener: TcpListener,
    settings: Settings,
    store: AnyStore,
    metrics: Arc<Metrics>,
) -> Result<Server, StartupError> {
    let shutdown_timeout = settings.shutdown_timeout.as_secs();
    let max_body_bytes = settings.max_body_bytes;
    // The store is the service's alone: no handler reaches it any other way.
    let games = web::Data::from(crate::service::GameService::new(
        Arc::new(store),
        metrics.clone(),
        settings.long_poll_max,
        crate::service::BotSettings {
            threads: settings.bot_threads,
            budget: settings.bot_budget,
        },
    ));
    tokio::spawn(sweep_clocks(
        Arc::downgrade(&games.clone().into_inner()),
        settings.clock_sweep_every,
    ));
    let limits = web::Data::new(api::ratelimit::RateLimits::new(&settings));
    let settings = web::Data::new(settings);
    let metrics = web::Data::from(metrics);
    let server = HttpServer::new(move || {
        App::new()
            // Outermost last: the request span and id wrap everything, metrics see the
            // final status, and the fallback turns actix's bare errors into problems. Rate
            // limits are innermost: a refused request is still logged and counted.
            .wrap(from_fn(api::ratelimit::limit))
            .wrap(from_fn(api::error::problem_fallback))
            .wrap(from_fn(metrics::record_http))
            .wrap(from_fn(telemetry::request_telemetry))
            .app_data(settings.clone())
            .app_data(games.clone())
            .app_data(metrics.clone())
            .app_data(limits.clone())
            .configure(|cfg| api::configure(cfg, max_body_bytes))
    })
    // actix's own handling makes SIGINT a forced stop; both signals should drain.
    .shutdown_signal(shutdown_signal())
    .shutdown_timeout(shutdown_timeout)
    .listen(listener)
    .map_err(StartupError::Server)?
    .run();
    Ok(server)
}

/// Every process sweeps the store's due deadlines, so a clock runs out on time (and bots
/// left to move play on) whichever process saved it and whether or not any request arrives. Holds the service weakly: it
/// ends with the server.
async fn sweep_clocks(
    games: std::sync::Weak<crate::service::GameService>,
    every: std::time::Duration,
) {
    // Weak from the start: a strong handle kept in this task would keep a stopped
    // server's service sweeping (and racing the processes that carry on).
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(games) = games.upgrade() else { return };
        if let Err(e) = games.sweep().await {
            tracing::warn!(error = %e, "the clock sweep could not read the deadlines");
        }
    }
}

/// Resolves on the first SIGTERM (orchestrators) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received: finishing in-flight requests"),
        () = terminate => tracing::info!("SIGTERM received: finishing in-flight requests"),
    }
}
