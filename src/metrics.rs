//! Prometheus metrics: the registry, the HTTP middleware that feeds it, and the game
//! counters the service increments.
//!
//! Owns metric names, labels and buckets. Labels are bounded by construction (a method
//! from a fixed list, the route *pattern* rather than the path, a status class), so no
//! client can grow the registry. A new metric is added here, as a field of [`Metrics`]
//! registered in [`Metrics::new`], so every name lives in one file.

use std::fmt::Write;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// What `/metrics` answers with: prometheus-client writes OpenMetrics text, which
/// Prometheus reads natively.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A seek's wait for its game, in seconds: at once, a sweep or two, a fallback's wait, up
/// to its expiry (5 minutes).
const SEEK_WAIT_BUCKETS: [f64; 10] = [0.05, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 30.0, 60.0, 300.0];
/// One tournament round's pairing, in seconds: tens of microseconds for 64 entrants, tens
/// of milliseconds for 512.
const PAIRING_BUCKETS: [f64; 9] = [
    0.00002, 0.00005, 0.0001, 0.00025, 0.001, 0.005, 0.025, 0.1, 1.0,
];
/// Latency buckets, in seconds: most answers take well under a millisecond with the
/// memory store and a few with Redis; the top buckets catch long polls (up to 30 s).
const LATENCY_BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0,
];

#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq, EncodeLabelValue)]
#[allow(clippy::upper_case_acronyms)] // the label values are the methods as spelled in HTTP
pub enum MethodLabel {
    GET,
    HEAD,
    POST,
    PUT,
    PATCH,
    DELETE,
    OPTIONS,
    OTHER,
}

impl From<&Method> for MethodLabel {
    fn from(method: &Method) -> Self {
        match *method {
            Method::GET => MethodLabel::GET,
            Method::HEAD => MethodLabel::HEAD,
            Method::POST => MethodLabel::POST,
            Method::PUT => MethodLabel::PUT,
            Method::PATCH => MethodLabel::PATCH,
            Method::DELETE => MethodLabel::DELETE,
            Method::OPTIONS => MethodLabel::OPTIONS,
            _ => MethodLabel::OTHER,
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: MethodLabel,
    /// The matched route pattern (`/v1/games/{id}`), or `unmatched`.
    pub route: String,
    /// `2xx`, `3xx`, `4xx` or `5xx`.
    pub status: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: MethodLabel,
    pub route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CapLabels {
    /// `per_address` or `total`.
    pub cap: &'static str,
}

/// Which stream's events: `lobby`, `spectator`, `tournament` or `league`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StreamLabels {
    pub stream: &'static str,
}

type HistogramFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// Where bots moved: inside the request that a human's move or join made, or in the
/// background (a table of bots alone, or what a request's budget left over).
#[derive(Debug, Clone, Copy, Hash, PartialEq, Eq)]
pub enum BotPlace {
    Request,
    Background,
}

impl EncodeLabelValue for BotPlace {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelValueEncoder,
    ) -> Result<(), std::fmt::Error> {
        encoder.write_str(match self {
            BotPlace::Request => "request",
            BotPlace::Background => "background",
        })
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BotLabels {
    pub r#where: BotPlace,
}

/// What befell a challenge (`made`, `accepted`, `declined`, `canceled`, `expired`) or a
/// seek (`made`, `matched`, `fell_back`, `canceled`, `expired`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EventLabels {
    pub event: &'static str,
}

type BotHistogramFamily = Family<BotLabels, Histogram, fn() -> Histogram>;

/// What a write found in this process's cache of games (`domino_game_cache_total{outcome}`):
/// `hit` (it started from the cached copy), `miss` (none: it loaded the game) or `stale`
/// (the copy it started from was not the stored game: the save answered the game as it is,
/// or a refusal was looked at again on the stored game).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CacheLabels {
    pub outcome: &'static str,
}

/// The three counters of `domino_game_cache_total`, each a handle on its labelled child.
pub struct CacheCounters {
    pub hit: Counter,
    pub miss: Counter,
    pub stale: Counter,
}

/// Every metric of the process. Handles are cheap clones of what the registry holds.
pub struct Metrics {
    registry: Registry,
    pub http_requests: Family<RequestLabels, Counter>,
    pub http_request_duration: HistogramFamily,
    /// Games created (`domino_games_created_total`).
    pub games_created: Counter,
    /// Players created by this process (`domino_players_created_total`).
    pub players_created: Counter,
    /// Challenges made and closed by this process, by what befell them
    /// (`domino_challenges_total{event}`): the open ones are those made less those
    /// closed, summed over the processes.
    pub challenges: Family<EventLabels, Counter>,
    /// Seeks made and closed by this process, by what befell them
    /// (`domino_seeks_total{event}`): the waiting ones are those made less those closed,
    /// summed over the processes.
    pub seeks: Family<EventLabels, Counter>,
    /// How long each seek waited for its game (`domino_seek_wait_seconds`).
    pub seek_waits: Histogram,
    /// Seek pools this process's sweep paired (`domino_seek_pools_swept_total`): only the
    /// pools due (a seek arrived unpaired, or enough seeks wait for a rated gap to widen).
    pub seek_pools_swept: Counter,
    /// Rated games whose ratings this process moved (`domino_rated_games_total`).
    pub rated_games: Counter,
    /// Moves stored, bots' included (`domino_moves_applied_total`).
    pub moves_applied: Counter,
    /// Saves that lost a compare-and-set race and were retried (`domino_store_conflicts_total`).
    pub store_conflicts: Counter,
    /// What writes found in the cache of games (`domino_game_cache_total{outcome}`).
    pub game_cache: CacheCounters,
    /// Seats that ran out of time, acted on by this process's sweep (`domino_timeouts_total`).
    pub timeouts: Counter,
    /// Tournament rounds this process paired and saved (`domino_tournament_rounds_paired_total`).
    pub tournament_rounds_paired: Counter,
    /// How long each of those pairings took (`domino_tournament_pairing_seconds`).
    pub tournament_pairing: Histogram,
    /// Tournament rounds that began to wait for games the admission refused
    /// (`domino_tournament_rounds_waiting_total`).
    pub tournament_rounds_waiting: Counter,
    /// Tournaments or leagues this process feeds to followers now, one feed each however
    /// many follow (`domino_feeds{stream}`).
    pub feeds: Family<StreamLabels, Gauge>,
    /// Stream events rendered once for all the followers of this process: the lobby's
    /// news, a spectator's game events, a tournament's or a league's feed
    /// (`domino_stream_events_rendered_total{stream}`).
    stream_events_rendered: Family<StreamLabels, Counter>,
    /// Event streams and waiting long polls open now (`domino_open_streams`).
    pub open_streams: Gauge,
    /// Streams and long polls refused by a cap (`domino_stream_refusals_total{cap}`).
    stream_refusals: Family<CapLabels, Counter>,
    /// Connections refused by `MAX_CONNECTIONS_PER_IP` (`domino_connection_refusals_total`).
    pub connection_refusals: Counter,
    /// Kept-alive connections closed because a later request head was not whole within
    /// `HEAD_TIMEOUT_MS` (`domino_slow_heads_cut_total`; actix answers a slow first head
    /// 408 itself).
    pub heads_cut: Counter,
    /// Bots' moves stored, by where they were played (`domino_bot_moves_total`).
    pub bot_moves: Family<BotLabels, Counter>,
    /// Time bots spent thinking per run on the pool (`domino_bot_thinking_seconds`).
    pub bot_thinking: BotHistogramFamily,
    /// Calls to bots' webhooks, by outcome: `played`, or the failure's kind
    /// (`domino_webhook_calls_total{outcome}`).
    webhook_calls: Family<WebhookLabels, Counter>,
    /// How long answered webhook calls took (`domino_webhook_call_seconds`).
    pub webhook_latency: Histogram,
    /// Webhooks paused after failures in a row (`domino_webhooks_paused_total`).
    pub webhooks_paused: Counter,
    /// League matches this process made (`domino_league_matches_made_total`).
    pub league_matches_made: Counter,
    /// League matches this process counted, by result: `played` or `void`
    /// (`domino_league_matches_counted_total{result}`).
    league_matches_counted: Family<LeagueLabels, Counter>,
}

/// How a league's match was counted: `played` (it moved the ratings) or `void`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeagueLabels {
    pub result: &'static str,
}

/// How a webhook call ended: `played`, or a failure's kind (`timeout`, `status`,
/// `illegal`, ...).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    pub outcome: &'static str,
}

impl Metrics {
    /// Counts one challenge `event` (see [`EventLabels`]).
    pub fn challenge(&self, event: &'static str) {
        self.challenges.get_or_create(&EventLabels { event }).inc();
    }

    /// Counts one league match counted, `played` or `void`.
    pub fn league_match_counted(&self, result: &'static str) {
        self.league_matches_counted
            .get_or_create(&LeagueLabels { result })
            .inc();
    }

    /// Counts one webhook call that ended as `outcome` (see [`WebhookLabels`]).
    pub fn webhook_call(&self, outcome: &'static str) {
        self.webhook_calls
            .get_or_create(&WebhookLabels { outcome })
            .inc();
    }

    /// Counts one seek `event` (see [`EventLabels`]).
    pub fn seek(&self, event: &'static str) {
        self.seeks.get_or_create(&EventLabels { event }).inc();
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let http_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route pattern and status class",
            http_requests.clone(),
        );
        let http_request_duration: HistogramFamily =
            Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        registry.register_with_unit(
            "http_request_duration",
            "Time to answer an HTTP request (until the body starts), by method and route pattern",
            Unit::Seconds,
            http_request_duration.clone(),
        );

        let games_created = Counter::default();
        let players_created = Counter::default();
        let moves_applied = Counter::default();
        let rated_games = Counter::default();
        let challenges = Family::<EventLabels, Counter>::default();
        let seeks = Family::<EventLabels, Counter>::default();
        let seek_waits = Histogram::new(SEEK_WAIT_BUCKETS);
        let seek_pools_swept = Counter::default();
        let store_conflicts = Counter::default();
        let timeouts = Counter::default();
        let game = registry.sub_registry_with_prefix("domino");
        game.register("games_created", "Games created", games_created.clone());
        game.register(
            "players_created",
            "Players created by this process",
            players_created.clone(),
        );
        game.register(
            "challenges",
            "Challenges made and closed by this process, by what befell them",
            challenges.clone(),
        );
        game.register(
            "seeks",
            "Seeks made and closed by this process, by what befell them",
            seeks.clone(),
        );
        game.register_with_unit(
            "seek_wait",
            "How long each seek waited for its game (matched or given its fallback)",
            Unit::Seconds,
            seek_waits.clone(),
        );
        game.register(
            "seek_pools_swept",
            "Seek pools this process's sweep paired: the pools due, not every pool",
            seek_pools_swept.clone(),
        );
        game.register(
            "rated_games",
            "Rated games whose ratings this process moved",
            rated_games.clone(),
        );
        game.register(
            "moves_applied",
            "Moves stored, bots' included",
            moves_applied.clone(),
        );
        game.register(
            "store_conflicts",
            "Saves that lost a compare-and-set race and were retried",
            store_conflicts.clone(),
        );
        let cache_family = Family::<CacheLabels, Counter>::default();
        let child = |outcome| cache_family.get_or_create(&CacheLabels { outcome }).clone();
        let game_cache = CacheCounters {
            hit: child("hit"),
            miss: child("miss"),
            stale: child("stale"),
        };
        game.register(
            "game_cache",
            "Writes of a game by what they found in this process's cache of games: hit, miss, or stale (the copy was not the stored game; the save answered it)",
            cache_family,
        );
        game.register(
            "timeouts",
            "Seats that ran out of time, acted on by this process",
            timeouts.clone(),
        );

        let tournament_rounds_paired = Counter::default();
        game.register(
            "tournament_rounds_paired",
            "Tournament rounds this process paired and saved",
            tournament_rounds_paired.clone(),
        );
        let tournament_rounds_waiting = Counter::default();
        game.register(
            "tournament_rounds_waiting",
            "Tournament rounds that began to wait for games the admission refused",
            tournament_rounds_waiting.clone(),
        );
        let tournament_pairing = Histogram::new(PAIRING_BUCKETS);
        game.register_with_unit(
            "tournament_pairing",
            "How long pairing one tournament round took (standings, byes, brackets)",
            Unit::Seconds,
            tournament_pairing.clone(),
        );

        let feeds = Family::<StreamLabels, Gauge>::default();
        game.register(
            "feeds",
            "Tournaments or leagues (stream) this process feeds to followers now, one feed each",
            feeds.clone(),
        );
        let stream_events_rendered = Family::<StreamLabels, Counter>::default();
        game.register(
            "stream_events_rendered",
            "Stream events rendered, each once for all the followers of this process (lobby, spectator, tournament, league)",
            stream_events_rendered.clone(),
        );
        let open_streams = Gauge::default();
        game.register(
            "open_streams",
            "Event streams and waiting long polls open now",
            open_streams.clone(),
        );
        let stream_refusals = Family::<CapLabels, Counter>::default();
        game.register(
            "stream_refusals",
            "Event streams and long polls refused by a cap (per_address or total)",
            stream_refusals.clone(),
        );
        let connection_refusals = Counter::default();
        game.register(
            "connection_refusals",
            "Connections refused because their address had MAX_CONNECTIONS_PER_IP open",
            connection_refusals.clone(),
        );
        let heads_cut = Counter::default();
        game.register(
            "slow_heads_cut",
            "Kept-alive connections closed because a later request head took over HEAD_TIMEOUT_MS",
            heads_cut.clone(),
        );
        let bot_moves = Family::<BotLabels, Counter>::default();
        game.register(
            "bot_moves",
            "Bots' moves stored, by where they were played (inside a request or in the background)",
            bot_moves.clone(),
        );
        let bot_thinking: BotHistogramFamily =
            Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        game.register_with_unit(
            "bot_thinking",
            "Time bots spent thinking per run on the bots' pool, by where they were played",
            Unit::Seconds,
            bot_thinking.clone(),
        );

        let webhook_calls = Family::<WebhookLabels, Counter>::default();
        game.register(
            "webhook_calls",
            "Calls to bots' webhooks, by outcome: played, or the failure's kind",
            webhook_calls.clone(),
        );
        let webhook_latency = Histogram::new(LATENCY_BUCKETS);
        game.register_with_unit(
            "webhook_call",
            "How long answered calls to bots' webhooks took",
            Unit::Seconds,
            webhook_latency.clone(),
        );
        let webhooks_paused = Counter::default();
        game.register(
            "webhooks_paused",
            "Webhooks paused after WEBHOOK_MAX_FAILURES failures in a row",
            webhooks_paused.clone(),
        );

        let league_matches_made = Counter::default();
        game.register(
            "league_matches_made",
            "League matches this process named and made",
            league_matches_made.clone(),
        );
        let league_matches_counted = Family::<LeagueLabels, Counter>::default();
        game.register(
            "league_matches_counted",
            "League matches this process counted, by result: played (ratings moved) or void",
            league_matches_counted.clone(),
        );

        Metrics {
            registry,
            http_requests,
            http_request_duration,
            games_created,
            players_created,
            challenges,
            seeks,
            seek_waits,
            seek_pools_swept,
            rated_games,
            moves_applied,
            store_conflicts,
            game_cache,
            timeouts,
            tournament_rounds_paired,
            tournament_pairing,
            tournament_rounds_waiting,
            feeds,
            open_streams,
            stream_refusals,
            stream_events_rendered,
            connection_refusals,
            heads_cut,
            bot_moves,
            bot_thinking,
            webhook_calls,
            webhook_latency,
            webhooks_paused,
            league_matches_made,
            league_matches_counted,
        }
    }

    /// The counter of one stream's events rendered once for all its followers.
    pub fn stream_events_rendered(&self, stream: &'static str) -> Counter {
        self.stream_events_rendered
            .get_or_create(&StreamLabels { stream })
            .clone()
    }

    /// The refusal counter of one stream cap (`per_address` or `total`).
    pub fn stream_refusals(&self, cap: &'static str) -> Counter {
        self.stream_refusals
            .get_or_create(&CapLabels { cap })
            .clone()
    }

    /// The registry in the text exposition format.
    pub fn encode(&self) -> String {
        let mut text = String::with_capacity(4096);
        // Writing into a String cannot fail.
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            let _ = writeln!(text, "# EOF");
        }
        text
    }

    fn observe(&self, method: MethodLabel, route: String, status: u16, seconds: f64) {
        let class = match status {
            100..=199 => "1xx",
            200..=299 => "2xx",
            300..=399 => "3xx",
            400..=499 => "4xx",
            _ => "5xx",
        };
        self.http_request_duration
            .get_or_create(&RouteLabels {
                method,
                route: route.clone(),
            })
            .observe(seconds);
        self.http_requests
            .get_or_create(&RequestLabels {
                method,
                route,
                status: class,
            })
            .inc();
    }
}

/// Middleware: counts and times every request. It sits inside the problem fallback's
/// caller chain, so it sees the final status of every answer.
pub async fn record_http(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, actix_web::Error> {
    let metrics = req.app_data::<web::Data<Metrics>>().cloned();
    let method = MethodLabel::from(req.method());
    let started = Instant::now();
    let outcome = next.call(req).await;
    if let Some(metrics) = metrics {
        let seconds = started.elapsed().as_secs_f64();
        match &outcome {
            // The pattern, not the path: a path holds game ids, which would make one
            // series per game.
            Ok(res) => {
                let route = res
                    .request()
                    .match_pattern()
                    .unwrap_or_else(|| "unmatched".to_owned());
                metrics.observe(method, route, res.status().as_u16(), seconds);
            }
            Err(err) => {
                let status = err.as_response_error().status_code().as_u16();
                metrics.observe(method, "unmatched".to_owned(), status, seconds);
            }
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_every_metric() {
        let metrics = Metrics::new();
        metrics.observe(MethodLabel::GET, "/healthz".into(), 200, 0.001);
        metrics.games_created.inc();
        let text = metrics.encode();
        for name in [
            r#"http_requests_total{method="GET",route="/healthz",status="2xx"} 1"#,
            "# TYPE http_request_duration_seconds histogram",
            "domino_games_created_total 1",
            "domino_moves_applied_total 0",
            "domino_store_conflicts_total 0",
            "domino_timeouts_total 0",
            "domino_open_streams 0",
            "domino_connection_refusals_total 0",
            "domino_slow_heads_cut_total 0",
            "# EOF",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }
}
