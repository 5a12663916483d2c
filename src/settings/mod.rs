//! Typed settings, read once from the environment at startup.
//!
//! Owns the names, defaults and validation of every variable the server reads. A bad
//! value stops the server before it binds anything, with an error naming the variable:
//! a typo in production should fail loudly, not fall back to a default. Nothing else in
//! the crate reads the environment.
//!
//! Every variable, its default and its meaning are in `docs/configuration.md`, the one
//! copy of that table: `tests/api/docs.rs` fails when it leaves out a variable this module
//! reads, lists one it does not, or gives as a variable's default one value that
//! [`Settings::default`] does not hold.

mod env;
use env::{Env, boolean, cap, positive};

use std::collections::HashMap;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, one line per event, colours when stdout is a terminal.
    Pretty,
    /// One JSON object per line, for log collectors.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pretty" => Ok(LogFormat::Pretty),
            "json" => Ok(LogFormat::Json),
            _ => Err("expected `pretty` or `json`".to_owned()),
        }
    }
}

/// Every setting of the server. `Settings::default()` holds the documented defaults, so a
/// test can override only what it cares about with struct update syntax.
#[derive(Debug, Clone)]
pub struct Settings {
    pub bind_addr: SocketAddr,
    /// `None`: games live in this process's memory.
    pub redis_url: Option<String>,
    /// Seed nodes of a Redis Cluster (empty: none); never set together with `redis_url`.
    pub redis_cluster_nodes: Vec<String>,
    /// Replicas that must hold a write before it is acknowledged; `None`: 1 on a
    /// cluster, 0 on one Redis.
    pub redis_wait_replicas: Option<u32>,
    pub redis_key_prefix: String,
    pub game_idle_ttl: Duration,
    pub store_timeout: Duration,
    pub log_format: LogFormat,
    /// Tracing filter directives (the value of `RUST_LOG`), parsed by the telemetry.
    pub log_filter: String,
    pub max_body_bytes: usize,
    pub long_poll_max: Duration,
    pub shutdown_timeout: Duration,
    pub clock_sweep_every: Duration,
    /// Bots thinking at once, at most.
    pub bot_threads: usize,
    /// The longest a request waits on bots, and a background run's length; a master's
    /// time a move unless `bot_master_work` is set.
    pub bot_budget: Duration,
    /// A master's fixed work a move (moves applied in its search) instead of the clock.
    pub bot_master_work: Option<u64>,
    /// `None`: requests are not limited per client address.
    pub rate_limit_per_ip: Option<RateLimit>,
    /// `None`: requests are not limited per seat token.
    pub rate_limit_per_token: Option<RateLimit>,
    /// Trusted proxies in front of the server (0: use the peer address).
    pub proxy_hops: u8,
    /// Event streams and waiting long polls one client address may hold open.
    pub max_streams_per_ip: u32,
    /// Event streams and waiting long polls open in all; `None`: derived from the
    /// process's open-file limit at startup (see [`crate::startup`]).
    pub max_streams: Option<usize>,
    /// Longest wait for a request's body after its head.
    pub body_timeout: Duration,
    /// Longest wait for a whole request head: the first from the connection's opening,
    /// later ones from their first byte.
    pub head_timeout: Duration,
    /// Connections one client address may hold open (`None`: no cap).
    pub max_connections_per_ip: Option<usize>,
    /// Whether games may be created with a `seed` or a `deal`.
    pub allow_prearranged: bool,
    /// Which browser origins may call the API.
    pub cors_origins: CorsOrigins,
    /// Games one client address may have waiting for players at once (`None`: no cap).
    pub max_waiting_per_ip: Option<usize>,
    /// Games one client address may have created and not finished (`None`: no cap).
    pub max_games_per_ip: Option<usize>,
    /// Games one client address may have made that the store still keeps, finished ones
    /// included until they expire (`None`: no cap).
    pub max_kept_games_per_ip: Option<usize>,
    /// Players one client address may create in an hour (`None`: no cap).
    pub max_players_per_ip: Option<usize>,
    /// Tournaments one client address may create in an hour (`None`: no cap).
    pub max_tournaments_per_ip: Option<usize>,
    /// How long a player that was never seated in a game is kept (`None`: for ever).
    pub player_unplayed_ttl: Option<Duration>,
    /// Open challenges one player may have received at once (`None`: no cap).
    pub max_challenges_to_player: Option<usize>,
    /// Tournaments one player may have registering or running at once (`None`: no cap).
    pub max_tournaments_per_player: Option<usize>,
    /// Tournaments one player may have joined that are registering or running at once
    /// (`None`: no cap).
    pub max_tournaments_joined: Option<usize>,
    /// Players one tournament may hold.
    pub max_tournament_players: usize,
    /// Leagues one player may make (`None`: no cap).
    pub max_leagues_per_player: Option<usize>,
    /// Leagues one player may have entered at once (`None`: no cap).
    pub max_leagues_entered: Option<usize>,
    /// Entrants one league may hold, its built-in levels counted.
    pub max_league_entrants: usize,
    /// Matches a league makes for one entrant in an hour, at most.
    pub league_matches_per_hour: usize,
    /// How long an open challenge waits for its answers.
    pub challenge_ttl: Duration,
    /// How long a seek waits for its game.
    pub seek_ttl: Duration,
    /// How long a finished or canceled tournament is kept.
    pub tournament_kept: Duration,
    /// How long a league entrant that stopped answering in a match is not paired.
    pub league_rest: Duration,
    /// Tables of bots alone this process plays at once.
    pub bot_tables: usize,
    /// Games the memory store holds at most (`None`: no cap).
    pub memory_max_games: Option<usize>,
    /// Bytes of games the memory store holds at most (`None`: no cap).
    pub memory_max_bytes: Option<usize>,
    /// Games whose last written state this process keeps (0: none).
    pub game_cache_games: usize,
    /// Calls to bots' webhooks.
    pub webhooks: WebhookSettings,
}

/// How the server calls bots' webhooks (`WEBHOOK_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookSettings {
    /// A call's budget, never past the seat's clock (`WEBHOOK_TIMEOUT_MS`).
    pub timeout: Duration,
    /// Failures in a row that pause a webhook (`WEBHOOK_MAX_FAILURES`).
    pub max_failures: u32,
    /// Calls to private and loopback addresses allowed (`WEBHOOK_ALLOW_PRIVATE`).
    pub allow_private: bool,
    /// Calls in flight to one player's URL (`WEBHOOK_CONCURRENCY`).
    pub concurrency: usize,
    /// Calls in flight in all, from this process (`WEBHOOK_CONCURRENCY_TOTAL`).
    pub concurrency_total: usize,
}

/// The origins whose pages a browser lets call the API (`CORS_ORIGINS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CorsOrigins {
    /// No CORS headers: only same-origin pages and non-browser clients.
    #[default]
    None,
    /// Any origin (`*`).
    Any,
    /// These origins, each `scheme://host[:port]`.
    List(Vec<String>),
}

impl FromStr for CorsOrigins {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "*" {
            return Ok(CorsOrigins::Any);
        }
        let origins: Vec<String> = s
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_owned)
            .collect();
        // What a browser sends in `Origin`: a scheme, a host and maybe a port; nothing
        // after. Anything else could never match, so it is a typo to report.
        let is_origin = |o: &str| {
            o.split_once("://").is_some_and(|(scheme, rest)| {
                !scheme.is_empty()
                    && scheme
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
                    && !rest.is_empty()
                    && !rest.contains(['/', '?', '#', '*', ' '])
            })
        };
        match origins.iter().find(|o| !is_origin(o)) {
            Some(bad) => Err(format!(
                "{bad:?} is not an origin: expected `*` or comma-separated scheme://host[:port], \
                 e.g. https://play.example.com,http://localhost:3000"
            )),
            None if origins.is_empty() => Ok(CorsOrigins::None),
            None => Ok(CorsOrigins::List(origins)),
        }
    }
}

/// A rate limit: a sustained rate, and how many requests may come at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// `per_second` with a burst of one second's worth.
    pub const fn per_second(per_second: NonZeroU32) -> RateLimit {
        RateLimit {
            per_second,
            burst: per_second,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bind_addr: SocketAddr::from(([0, 0, 0, 0], 8080)),
            redis_url: None,
            redis_cluster_nodes: Vec::new(),
            redis_wait_replicas: None,
            redis_key_prefix: "domino:".to_owned(),
            game_idle_ttl: Duration::from_secs(86_400),
            store_timeout: Duration::from_millis(1000),
            log_format: LogFormat::Pretty,
            log_filter: "info".to_owned(),
            max_body_bytes: 16_384,
            long_poll_max: Duration::from_secs(30),
            clock_sweep_every: Duration::from_millis(250),
            bot_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            bot_budget: Duration::from_millis(200),
            bot_master_work: None,
            // Docker and Kubernetes kill a container 10 s after SIGTERM by default:
            // finishing a little before that lets the server close cleanly.
            shutdown_timeout: Duration::from_secs(8),
            rate_limit_per_ip: Some(RateLimit::per_second(NonZeroU32::new(2000).unwrap())),
            rate_limit_per_token: Some(RateLimit::per_second(NonZeroU32::new(200).unwrap())),
            proxy_hops: 0,
            // A browser tab or two per player, a few games watched each: far above what a
            // household behind one address holds open, far below what starves a server.
            max_streams_per_ip: 32,
            max_streams: None,
            // Like the 5 s actix gives a slow head.
            body_timeout: Duration::from_millis(5000),
            // actix's own for a first head.
            head_timeout: Duration::from_millis(5000),
            // A NAT'd household or office: its browsers' few connections each, and up to
            // `max_streams_per_ip` streams; far below what starves a server.
            max_connections_per_ip: Some(256),
            allow_prearranged: true,
            cors_origins: CorsOrigins::None,
            max_waiting_per_ip: Some(20),
            // Far more than a person plays at once; one address alone cannot fill a store.
            max_games_per_ip: Some(100),
            // A day of a game every 45 s from one address; 50 addresses to fill a store of
            // MEMORY_MAX_GAMES (docs/operating.md: what a store keeps).
            max_kept_games_per_ip: Some(2_000),
            // A household's people and bots, not a script minting identities.
            max_players_per_ip: Some(20),
            // Far more than a person or a bot's owner makes; a day's worth (a tournament
            // is kept a day) stays a few hundred an address.
            max_tournaments_per_ip: Some(30),
            // A week: time to come back and play; a name claimed and never used is freed.
            player_unplayed_ttl: Some(Duration::from_secs(7 * 24 * 3600)),
            // A real challenge is not buried: a crowd's challenges wait for a place.
            max_challenges_to_player: Some(20),
            // A person's few events at once; a place frees when one ends.
            max_tournaments_per_player: Some(3),
            // More than a person plays at once or a bot account keeps registered for the
            // days ahead, fewer than an account needs to sit in every open tournament.
            max_tournaments_joined: Some(10),
            max_tournament_players: 64,
            max_leagues_per_player: Some(3),
            max_leagues_entered: Some(5),
            max_league_entrants: 64,
            league_matches_per_hour: 20,
            challenge_ttl: Duration::from_secs(600),
            seek_ttl: Duration::from_secs(300),
            // As long as a finished game is kept: its games, which its page links, are gone
            // by then.
            tournament_kept: Duration::from_secs(86_400),
            league_rest: Duration::from_secs(600),
            bot_tables: 16,
            memory_max_games: Some(100_000),
            // 256 MiB of records, events and keys: with MEMORY_MAX_GAMES's overhead, the
            // store stays under about 600 MB (docs/operating.md says how it was measured).
            memory_max_bytes: Some(256 << 20),
            // A second of a bot's own, as Battlesnake's 500 ms plus a network's round trips;
            // five failures in a row pause (a bot down for good stops costing calls);
            // eight calls at once to one bot (its games in parallel), 256 from a process.
            webhooks: WebhookSettings {
                timeout: Duration::from_millis(1000),
                max_failures: 5,
                allow_private: false,
                concurrency: 8,
                concurrency_total: 256,
            },
            // A busy process's games in play.
            game_cache_games: 10_000,
        }
    }
}

/// A variable that is set to something the server cannot use.
#[derive(Debug, thiserror::Error)]
#[error("{var}: {problem} (got {value:?})")]
pub struct SettingsError {
    pub var: &'static str,
    pub value: String,
    pub problem: String,
}

impl Settings {
    /// Reads the process environment.
    pub fn from_env() -> Result<Settings, SettingsError> {
        Settings::from_vars(std::env::vars_os())
    }

    /// Reads the given variables instead of the environment (tests use this: changing
    /// the process environment is racy between threads, hence `unsafe` since 2024).
    /// Variables that are not set take their default; an empty value counts as unset.
    pub fn from_vars<I, K, V>(vars: I) -> Result<Settings, SettingsError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let vars: HashMap<String, OsString> = vars
            .into_iter()
            .filter_map(|(k, v)| k.into().into_string().ok().map(|k| (k, v.into())))
            .collect();
        let env = Env(&vars);
        let defaults = Settings::default();

        let settings = Settings {
            bind_addr: env.parse("BIND_ADDR", defaults.bind_addr, |s| {
                s.parse()
                    .map_err(|_| "expected ip:port, e.g. 0.0.0.0:8080 or [::]:8080".to_owned())
            })?,
            redis_url: env.get("REDIS_URL")?,
            redis_cluster_nodes: env.parse("REDIS_CLUSTER_NODES", Vec::new(), |s| {
                let nodes: Vec<String> = s.split(',').map(|n| n.trim().to_owned()).collect();
                if nodes.iter().any(|n| !n.contains("://")) {
                    return Err("expected comma-separated URLs, e.g. redis://10.0.0.1:6379,redis://10.0.0.2:6379".to_owned());
                }
                Ok(nodes)
            })?,
            redis_wait_replicas: env.parse("REDIS_WAIT_REPLICAS", None, |s| {
                s.trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| "expected a whole number of replicas (0: do not wait)".to_owned())
            })?,
            redis_key_prefix: env
                .get("REDIS_KEY_PREFIX")?
                .unwrap_or(defaults.redis_key_prefix),
            game_idle_ttl: env.parse("GAME_IDLE_TTL_SECS", defaults.game_idle_ttl, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            store_timeout: env.parse("STORE_TIMEOUT_MS", defaults.store_timeout, |s| {
                positive(s).map(Duration::from_millis)
            })?,
            log_format: env.parse("LOG_FORMAT", defaults.log_format, str::parse)?,
            log_filter: env.get("RUST_LOG")?.unwrap_or(defaults.log_filter),
            max_body_bytes: env.parse("MAX_BODY_BYTES", defaults.max_body_bytes, |s| {
                positive(s).and_then(|n| usize::try_from(n).map_err(|_| "too large".to_owned()))
            })?,
            long_poll_max: env.parse("LONG_POLL_MAX_SECS", defaults.long_poll_max, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            clock_sweep_every: env.parse("CLOCK_SWEEP_MS", defaults.clock_sweep_every, |s| {
                positive(s)
                    .and_then(|ms| {
                        (ms <= 1_000).then_some(ms).ok_or_else(|| {
                            "at most 1000 (a timeout is due within a second)".to_owned()
                        })
                    })
                    .map(Duration::from_millis)
            })?,
            bot_threads: env.parse("BOT_THREADS", defaults.bot_threads, |s| {
                positive(s).and_then(|n| {
                    (n <= 1_024)
                        .then_some(n as usize)
                        .ok_or_else(|| "at most 1024".to_owned())
                })
            })?,
            bot_budget: env.parse("BOT_BUDGET_MS", defaults.bot_budget, |s| {
                s.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| ms <= 10_000)
                    .map(Duration::from_millis)
                    .ok_or_else(|| "expected 0 to 10000 milliseconds".to_owned())
            })?,
            bot_master_work: env.parse("BOT_MASTER_WORK", None, |s| {
                positive(s).and_then(|n| {
                    (n <= 100_000_000)
                        .then_some(Some(n))
                        .ok_or_else(|| "at most 100000000".to_owned())
                })
            })?,
            shutdown_timeout: env.parse(
                "SHUTDOWN_TIMEOUT_SECS",
                defaults.shutdown_timeout,
                |s| {
                    s.trim()
                        .parse::<u64>()
                        .map(Duration::from_secs)
                        .map_err(|_| "expected a whole number of seconds".to_owned())
                },
            )?,
            rate_limit_per_ip: env.rate_limit(
                "RATE_LIMIT_PER_IP",
                "RATE_LIMIT_PER_IP_BURST",
                defaults.rate_limit_per_ip,
            )?,
            rate_limit_per_token: env.rate_limit(
                "RATE_LIMIT_PER_TOKEN",
                "RATE_LIMIT_PER_TOKEN_BURST",
                defaults.rate_limit_per_token,
            )?,
            proxy_hops: env.parse("RATE_LIMIT_PROXY_HOPS", defaults.proxy_hops, |s| {
                s.trim()
                    .parse::<u8>()
                    .map_err(|_| "expected a whole number from 0 to 255".to_owned())
            })?,
            max_streams_per_ip: env.parse("MAX_STREAMS_PER_IP", defaults.max_streams_per_ip, |s| {
                positive(s).and_then(|n| u32::try_from(n).map_err(|_| "too large".to_owned()))
            })?,
            max_streams: env.parse("MAX_STREAMS", defaults.max_streams, |s| {
                positive(s).and_then(|n| {
                    usize::try_from(n)
                        .map(Some)
                        .map_err(|_| "too large".to_owned())
                })
            })?,
            body_timeout: env.parse("BODY_TIMEOUT_MS", defaults.body_timeout, |s| {
                positive(s).map(Duration::from_millis)
            })?,
            head_timeout: env.parse("HEAD_TIMEOUT_MS", defaults.head_timeout, |s| {
                positive(s).map(Duration::from_millis)
            })?,
            max_connections_per_ip: env.parse(
                "MAX_CONNECTIONS_PER_IP",
                defaults.max_connections_per_ip,
                cap,
            )?,
            allow_prearranged: env.parse(
                "ALLOW_PREARRANGED",
                defaults.allow_prearranged,
                boolean,
            )?,
            cors_origins: env.parse("CORS_ORIGINS", defaults.cors_origins, str::parse)?,
            max_waiting_per_ip: env.parse("MAX_WAITING_PER_IP", defaults.max_waiting_per_ip, cap)?,
            max_games_per_ip: env.parse("MAX_GAMES_PER_IP", defaults.max_games_per_ip, cap)?,
            max_kept_games_per_ip: env.parse(
                "MAX_KEPT_GAMES_PER_IP",
                defaults.max_kept_games_per_ip,
                cap,
            )?,
            max_players_per_ip: env.parse("MAX_PLAYERS_PER_IP", defaults.max_players_per_ip, cap)?,
            max_tournaments_per_ip: env.parse(
                "MAX_TOURNAMENTS_PER_IP",
                defaults.max_tournaments_per_ip,
                cap,
            )?,
            player_unplayed_ttl: env.parse(
                "PLAYER_UNPLAYED_TTL_SECS",
                defaults.player_unplayed_ttl,
                |s| cap(s).map(|secs| secs.map(|secs| Duration::from_secs(secs as u64))),
            )?,
            max_challenges_to_player: env.parse(
                "MAX_CHALLENGES_TO_PLAYER",
                defaults.max_challenges_to_player,
                cap,
            )?,
            max_tournaments_per_player: env.parse(
                "MAX_TOURNAMENTS_PER_PLAYER",
                defaults.max_tournaments_per_player,
                cap,
            )?,
            max_tournaments_joined: env.parse(
                "MAX_TOURNAMENTS_JOINED",
                defaults.max_tournaments_joined,
                cap,
            )?,
            max_tournament_players: env.parse(
                "MAX_TOURNAMENT_PLAYERS",
                defaults.max_tournament_players,
                |s| positive(s).map(|n| n as usize),
            )?,
            max_leagues_per_player: env.parse(
                "MAX_LEAGUES_PER_PLAYER",
                defaults.max_leagues_per_player,
                cap,
            )?,
            max_leagues_entered: env.parse(
                "MAX_LEAGUES_ENTERED",
                defaults.max_leagues_entered,
                cap,
            )?,
            max_league_entrants: env.parse(
                "MAX_LEAGUE_ENTRANTS",
                defaults.max_league_entrants,
                |s| positive(s).map(|n| n as usize),
            )?,
            league_matches_per_hour: env.parse(
                "LEAGUE_MATCHES_PER_HOUR",
                defaults.league_matches_per_hour,
                |s| positive(s).map(|n| n as usize),
            )?,
            challenge_ttl: env.parse("CHALLENGE_TTL_SECS", defaults.challenge_ttl, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            seek_ttl: env.parse("SEEK_TTL_SECS", defaults.seek_ttl, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            tournament_kept: env.parse("TOURNAMENT_KEPT_SECS", defaults.tournament_kept, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            league_rest: env.parse("LEAGUE_TIMEOUT_REST_SECS", defaults.league_rest, |s| {
                positive(s).map(Duration::from_secs)
            })?,
            bot_tables: env.parse("BOT_TABLES", defaults.bot_tables, |s| {
                positive(s).and_then(|n| usize::try_from(n).map_err(|_| "too large".to_owned()))
            })?,
            memory_max_games: env.parse("MEMORY_MAX_GAMES", defaults.memory_max_games, cap)?,
            memory_max_bytes: env.parse("MEMORY_MAX_BYTES", defaults.memory_max_bytes, cap)?,
            game_cache_games: env.parse("GAME_CACHE_GAMES", defaults.game_cache_games, |s| {
                cap(s).map(Option::unwrap_or_default)
            })?,
            webhooks: WebhookSettings {
                timeout: env.parse("WEBHOOK_TIMEOUT_MS", defaults.webhooks.timeout, |s| {
                    positive(s).map(Duration::from_millis)
                })?,
                max_failures: env.parse(
                    "WEBHOOK_MAX_FAILURES",
                    defaults.webhooks.max_failures,
                    |s| positive(s).and_then(|n| u32::try_from(n).map_err(|_| "too large".into())),
                )?,
                allow_private: env.parse(
                    "WEBHOOK_ALLOW_PRIVATE",
                    defaults.webhooks.allow_private,
                    boolean,
                )?,
                concurrency: env.parse("WEBHOOK_CONCURRENCY", defaults.webhooks.concurrency, |s| {
                    positive(s).map(|n| n as usize)
                })?,
                concurrency_total: env.parse(
                    "WEBHOOK_CONCURRENCY_TOTAL",
                    defaults.webhooks.concurrency_total,
                    |s| positive(s).map(|n| n as usize),
                )?,
            },
        };
        if settings.redis_url.is_some() && !settings.redis_cluster_nodes.is_empty() {
            return Err(SettingsError {
                var: "REDIS_CLUSTER_NODES",
                value: settings.redis_cluster_nodes.join(","),
                problem: "set together with REDIS_URL: set REDIS_URL for one Redis, or \
                    REDIS_CLUSTER_NODES for a Redis Cluster, not both"
                    .to_owned(),
            });
        }
        // A client at its stream cap still needs a connection for its other requests.
        let max_connections = settings
            .max_connections_per_ip
            .filter(|_| settings.proxy_hops == 0);
        if let Some(max) =
            max_connections.filter(|&max| max <= settings.max_streams_per_ip as usize)
        {
            return Err(SettingsError {
                var: "MAX_CONNECTIONS_PER_IP",
                value: max.to_string(),
                problem: format!(
                    "must be more than MAX_STREAMS_PER_IP ({}): each stream holds a \
                     connection, and a client at its stream cap needs one more for its \
                     other requests",
                    settings.max_streams_per_ip
                ),
            });
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests;
