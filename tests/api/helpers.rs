//! Starting a real server for a test, and a client to talk to it.

use std::sync::Once;
use std::time::Duration;

use domino_server::settings::{LogFormat, Settings};
use domino_server::startup::{Application, Stopper};
use domino_server::telemetry;
use serde_json::{Value, json};

use crate::proxy::{Proxy, redis_url};

/// Longest any test request may take: generous for a loaded CI machine, short enough that
/// a hang fails the test instead of the run.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Quiet by default; `TEST_LOG=1 cargo test` prints every line, debug included. The
/// subscriber is global, so it is installed once for every test of this binary.
fn init_tracing() {
    static TRACING: Once = Once::new();
    TRACING.call_once(|| {
        let installed = if std::env::var_os("TEST_LOG").is_some() {
            telemetry::init(LogFormat::Pretty, "debug", std::io::stdout)
        } else {
            // Still at debug, into a sink: the logging code paths run in every test.
            telemetry::init(LogFormat::Pretty, "debug", std::io::sink)
        };
        installed.expect("tracing installs once");
    });
}

pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    /// `None` for a server this test did not start in-process (a child process).
    handle: Option<Stopper>,
    /// The text of the seed this server deals from where no seed is given.
    deals_from: Option<String>,
}

/// The seed a test's server deals every game made without a seed from (and every match's,
/// tournament's and seek's secret): the test's name and the count of servers it started
/// before, so a test plays the same deals on every run, and a failure names the seed
/// (`TestApp`'s drop) to replay it. `TEST_DEAL_SEED=text` deals other games, the same
/// for a given text: to look for a deal that fails.
fn deal_seed() -> String {
    thread_local! {
        static SERVERS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    let n = SERVERS.with(|n| n.replace(n.get() + 1));
    // libtest names each test's thread after the test; a server started off that thread
    // (from a spawned task) deals from the thread's name it has.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unnamed");
    let extra = std::env::var("TEST_DEAL_SEED").unwrap_or_default();
    format!("{extra}{test} #{n}")
}

/// The client of every test: a timeout, and no redirects followed.
fn test_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        // Redirects are part of what is tested.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

impl TestApp {
    /// A client of a server at `address` (`http://host:port`) started some other way,
    /// e.g. the binary as a child process; stopping it is the caller's business.
    pub fn at(address: String) -> TestApp {
        TestApp {
            address,
            client: test_client(),
            handle: None,
            deals_from: None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .send()
            .await
            .expect("the request is answered")
    }

    /// Events of `stream` (`lobby`, `spectator`, `tournament`, `league`) this server
    /// rendered for its followers, from its metrics.
    pub async fn events_rendered(&self, stream: &str) -> usize {
        let metrics = self.get("/metrics").await.text().await.unwrap();
        let line = format!("domino_stream_events_rendered_total{{stream=\"{stream}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(line.as_str()))
            .unwrap_or_else(|| panic!("no {line} in the metrics"))
            .parse()
            .unwrap()
    }
}

impl TestApp {
    /// Stops the server at once, as when a process dies: no grace for open connections,
    /// and its background work (the sweep, the bots it drives) takes no further step.
    pub async fn stop(self) {
        let handle = self.handle.clone().expect("a server this test started");
        handle.stop().await;
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // The stop command is sent when `stop` is called; not awaiting it only means not
        // waiting for the workers to finish.
        if let Some(handle) = &self.handle {
            drop(handle.stop());
        }
        if let Some(seed) = &self.deals_from
            && std::thread::panicking()
        {
            eprintln!(
                "the server at {} dealt its unseeded games from seed {seed:?} (helpers::deal_seed)",
                self.address
            );
        }
    }
}

/// Settings for a test server: any free port on loopback, no rate limits (the tests play
/// whole matches far faster than any player, and run in parallel from one address; the
/// limits have their own tests in `src/api/ratelimit.rs`), everything else default.
pub fn test_settings() -> Settings {
    Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        rate_limit_per_ip: None,
        rate_limit_per_token: None,
        // Tests create many games from one address; tests/api/limits.rs sets them.
        max_waiting_per_ip: None,
        max_games_per_ip: None,
        max_players_per_ip: None,
        max_tournaments_per_ip: None,
        // A machine busy with builds can hold a Redis answer past the default second,
        // which made a test's request a 503; the tests of a late store set their own.
        store_timeout: Duration::from_secs(5),
        ..Settings::default()
    }
}

/// The real server with the memory store.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(test_settings()).await
}

/// The real server on Redis (`REDIS_URL`, or a local one), with a key prefix of its own
/// so tests never see each other's games.
pub async fn spawn_app_with_redis() -> TestApp {
    spawn_app_with_redis_prefix(&unique_prefix()).await
}

pub async fn spawn_app_with(settings: Settings) -> TestApp {
    spawn_app_with_faults(settings, domino_server::service::Faults::default()).await
}

/// A server with faults injected, to play a crash (see `service::Faults`).
pub async fn spawn_app_with_faults(
    settings: Settings,
    faults: domino_server::service::Faults,
) -> TestApp {
    init_tracing();
    let seed = deal_seed();
    let app = Application::build_for_test(
        settings,
        faults,
        Some(domino_server::engine::Seed::from_text(&seed)),
    )
    .await
    .expect("the application builds");
    let port = app.port();
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        client: test_client(),
        handle: Some(handle),
        deals_from: Some(seed),
    }
}

/// Asserts an answer is a problem with this status and code; returns its body.
pub async fn assert_problem(res: reqwest::Response, status: u16, code: &str) -> serde_json::Value {
    assert_eq!(res.status().as_u16(), status, "status");
    let content_type = res
        .headers()
        .get("content-type")
        .expect("a content type")
        .to_str()
        .unwrap();
    assert_eq!(content_type, "application/problem+json");
    let body: serde_json::Value = res.json().await.expect("a JSON body");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status, "{body}");
    assert_eq!(
        body["type"],
        format!("https://domino.example/problems/{code}"),
        "{body}"
    );
    assert!(
        body["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{body}"
    );
    assert!(
        body["detail"].as_str().is_some_and(|d| !d.is_empty()),
        "{body}"
    );
    body
}

// ----- game clients -----

/// The real server on Redis under a key prefix the caller chooses, so that two servers
/// built with the same prefix share their games (as two processes behind one Redis do).
pub async fn spawn_app_with_redis_prefix(prefix: &str) -> TestApp {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: prefix.to_owned(),
        // Long enough for any test, short enough that a run leaves no litter behind.
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    })
    .await
}

/// A server to be stopped, and the settings of one to follow it on the same Redis keys (as
/// after a restart). The first reaches Redis through the proxy returned, for the test to
/// take down once the first has made what it leaves behind, so that it cannot go on with
/// it however slow the machine is. It moves one bot a run (no budget), each run a trip to
/// Redis.
pub async fn spawn_app_to_be_left() -> (TestApp, Proxy, Settings) {
    let (proxy, through_proxy) = Proxy::to_redis();
    let settings = Settings {
        redis_url: Some(redis_url()),
        redis_key_prefix: unique_prefix(),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    };
    let first = spawn_app_with(Settings {
        bot_budget: Duration::ZERO,
        redis_url: Some(through_proxy),
        ..settings.clone()
    })
    .await;
    (first, proxy, settings)
}

/// The real server on a Redis Cluster (`REDIS_CLUSTER_NODES`, which `scripts/test.sh`
/// sets to a local cluster whose masters each have a replica) under a key prefix the caller
/// chooses; writes wait for one replica (the cluster default).
pub async fn spawn_app_with_cluster_prefix(prefix: &str) -> TestApp {
    spawn_app_with(cluster_settings(prefix)).await
}

/// The settings of [`spawn_app_with_cluster_prefix`]'s server.
pub fn cluster_settings(prefix: &str) -> Settings {
    Settings {
        redis_cluster_nodes: cluster_nodes(),
        redis_key_prefix: prefix.to_owned(),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    }
}

/// The real server on a Redis Cluster, with a key prefix of its own.
pub async fn spawn_app_with_cluster() -> TestApp {
    spawn_app_with_cluster_prefix(&unique_prefix()).await
}

/// `REDIS_CLUSTER_NODES`, split; a clear failure when it is not set.
pub fn cluster_nodes() -> Vec<String> {
    let nodes = std::env::var("REDIS_CLUSTER_NODES").unwrap_or_default();
    assert!(
        !nodes.trim().is_empty(),
        "REDIS_CLUSTER_NODES is not set; run scripts/test.sh, which starts a Redis Cluster"
    );
    nodes.split(',').map(|n| n.trim().to_owned()).collect()
}

/// A section of `INFO` of the Redis node at `url` (`redis://host:port`).
pub async fn redis_info(url: &str, section: &str) -> String {
    let mut node = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    redis::cmd("INFO")
        .arg(section)
        .query_async(&mut node)
        .await
        .unwrap()
}

/// A fresh Redis key prefix of its own.
pub fn unique_prefix() -> String {
    format!("test:{}:", uuid::Uuid::new_v4())
}

/// Writes the same test functions (each `async fn name(app: TestApp)`) once and runs them
/// against both stores: `memory::name` on the in-memory store, `redis::name` on Redis.
macro_rules! on_both_stores {
    ($($name:ident),+ $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::helpers::spawn_app().await).await
                }
            )+
        }
        mod redis {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::helpers::spawn_app_with_redis().await).await
                }
            )+
        }
    };
}
pub(crate) use on_both_stores;

/// Like [`on_both_stores`], and once more on a Redis Cluster (`cluster::name`): for the
/// tests that show the cluster store serves games as the single Redis does.
macro_rules! on_every_store {
    ($($name:ident),+ $(,)?) => {
        crate::helpers::on_both_stores!($($name),+);
        mod cluster {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::helpers::spawn_app_with_cluster().await).await
                }
            )+
        }
    };
}
pub(crate) use on_every_store;

/// A seat taken by a test client: its number and its bearer token.
#[derive(Debug, Clone)]
pub struct Player {
    pub seat: u8,
    pub token: String,
}

/// What `TestApp::play_match` saw.
#[derive(Debug)]
pub struct PlayedMatch {
    /// The last answer: the finished game as the last mover saw it.
    pub last: Value,
    /// Moves posted by the test client (bots' moves not counted).
    pub posted: usize,
}

impl TestApp {
    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("the request is answered")
    }

    /// `GET` with a seat's token (or none: a spectator).
    pub async fn get_as(&self, path: &str, token: Option<&str>) -> reqwest::Response {
        let mut req = self.client.get(self.url(path));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        req.send().await.expect("the request is answered")
    }

    /// `POST /v1/games`, answered 201; returns the game's id and the spectator view.
    pub async fn create_game(&self, body: Value) -> (String, Value) {
        let res = self.post_json("/v1/games", &body).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        let location = res.headers()["location"].to_str().unwrap().to_owned();
        let view: Value = res.json().await.unwrap();
        let id = view["game_id"].as_str().expect("a game id").to_owned();
        assert_eq!(location, format!("/v1/games/{id}"));
        (id, view)
    }

    pub async fn join(&self, id: &str, body: Value) -> reqwest::Response {
        self.post_json(&format!("/v1/games/{id}/seats"), &body)
            .await
    }

    /// Takes a seat (the lowest free one), answered 201.
    pub async fn take_seat(&self, id: &str, name: &str) -> Player {
        let res = self.join(id, json!({ "name": name })).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        let granted: Value = res.json().await.unwrap();
        Player {
            seat: granted["seat"].as_u64().unwrap() as u8,
            token: granted["token"].as_str().unwrap().to_owned(),
        }
    }

    /// Creates a game and takes every seat no bot holds, so it is playing (or over).
    pub async fn start_game(&self, body: Value) -> (String, Vec<Player>) {
        let (id, view) = self.create_game(body).await;
        let free = view["seats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["bot"].is_null())
            .count();
        let mut players = Vec::new();
        for i in 0..free {
            players.push(self.take_seat(&id, &format!("player {i}")).await);
        }
        players.sort_by_key(|p| p.seat);
        (id, players)
    }

    /// The game as `token`'s seat (or a spectator) sees it, answered 200.
    pub async fn view(&self, id: &str, token: Option<&str>) -> Value {
        let res = self.get_as(&format!("/v1/games/{id}"), token).await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
        res.json().await.unwrap()
    }

    /// The game once it is finished (bots play on in the background), waiting with long
    /// polls: each wakes on the next stored version. Fails if the game stops moving for
    /// a whole long poll while still in play.
    pub async fn wait_until_finished(&self, id: &str, token: Option<&str>) -> Value {
        let mut view = self.view(id, token).await;
        while view["status"] != "finished" {
            let version = view["version"].as_u64().unwrap();
            let res = self
                .get_as(&format!("/v1/games/{id}?after={version}&wait=8"), token)
                .await;
            assert_eq!(res.status().as_u16(), 200);
            view = res.json().await.unwrap();
            assert!(
                view["version"].as_u64().unwrap() > version,
                "the game stood still at version {version}: {view}"
            );
        }
        view
    }

    /// One page of the log: the moves after index `after`, at most `limit`.
    pub async fn log_page(&self, id: &str, token: Option<&str>, after: u64, limit: u64) -> Value {
        let path = format!("/v1/games/{id}/log?after={after}&limit={limit}");
        let res = self.get_as(&path, token).await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
        res.json().await.unwrap()
    }

    /// The whole log, page after page as each page's `next` says, as one page would
    /// show it (`start`, every move; `next` null).
    pub async fn log(&self, id: &str, token: Option<&str>) -> Value {
        let res = self.get_as(&format!("/v1/games/{id}/log"), token).await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
        let mut log: Value = res.json().await.unwrap();
        while let Some(after) = log["next"].as_u64() {
            let page = self.log_page(id, token, after, 1000).await;
            let moves = page["moves"].as_array().unwrap().clone();
            log["moves"].as_array_mut().unwrap().extend(moves);
            log["next"] = page["next"].clone();
        }
        log
    }

    pub async fn post_move(&self, id: &str, token: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .expect("the request is answered")
    }

    /// Posts a move that must be accepted; returns the answer (the view plus `events`).
    pub async fn play(&self, id: &str, token: &str, body: &Value) -> Value {
        let res = self.post_move(id, token, body).await;
        assert_eq!(
            res.status().as_u16(),
            200,
            "{body} refused: {}",
            res.text().await.unwrap()
        );
        res.json().await.unwrap()
    }

    /// Each of `keys` (a player's key or a seat's token) makes a move of its own in game
    /// `id`, on its turn (bots move by themselves): a rated game ended before every side
    /// moved is aborted, not rated.
    pub async fn each_moves(&self, id: &str, keys: &[&str]) {
        let mut left: Vec<&str> = keys.to_vec();
        // A seat's turn may come after a bot's reply in the background: wait for it, for a
        // while; a game that ended first has no turn to give. A seat that moved already
        // moves again when its turn comes back before the others had theirs (a round
        // blocked at once, whose next round it leads again).
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !left.is_empty() {
            for &key in keys {
                if left.is_empty() {
                    break;
                }
                let view = self.view(id, Some(key)).await;
                if view["status"] == "finished" {
                    return;
                }
                if view["your_turn"] == true {
                    self.play(id, key, &view["legal_moves"][0]).await;
                    left.retain(|k| *k != key);
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} seats never had their turn",
                left.len()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until `key`'s seat is to move again: the bots have replied (a bot may move
    /// after the answer, in the background).
    pub async fn until_bots_replied(&self, id: &str, key: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.view(id, Some(key)).await["your_turn"] != true {
            assert!(
                std::time::Instant::now() < deadline,
                "the bots never replied"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Plays until the match is over, always posting one of the legal moves listed in the
    /// view of the seat to move (chosen by a small PRNG from `seed`, so a run repeats).
    /// Checks on the way that every move adds exactly one version.
    pub async fn play_match(&self, id: &str, players: &[Player], seed: u64) -> PlayedMatch {
        self.play_moves(id, players, seed, usize::MAX).await
    }

    /// As `play_match`, but stops after `limit` moves if the match lasts longer.
    pub async fn play_moves(
        &self,
        id: &str,
        players: &[Player],
        seed: u64,
        limit: usize,
    ) -> PlayedMatch {
        let mut rng = seed | 1;
        let mut current = self.view(id, None).await;
        let mut posted = 0;
        while current["status"] == "playing" && posted < limit {
            let turn = current["round"]["turn"]
                .as_u64()
                .unwrap_or_else(|| panic!("a playing game has a turn: {current}"))
                as u8;
            let player = players
                .iter()
                .find(|p| p.seat == turn)
                .unwrap_or_else(|| panic!("seat {turn} is no test client's: {current}"));
            let view = if current["you"] == turn {
                current
            } else {
                self.view(id, Some(&player.token)).await
            };
            assert_eq!(view["your_turn"], true, "{view}");
            let legal = view["legal_moves"].as_array().unwrap();
            assert!(!legal.is_empty(), "the seat to move has no move: {view}");
            // Listed plays name their end (but the lead's), and a claim is their points.
            let lead = !view["round"]["layout"]["lead"].is_null();
            for m in legal.iter().filter(|m| m["type"] == "play") {
                assert_eq!(m.get("end").is_some(), lead, "{m} in {view}");
                if let Some(claim) = m.get("claim") {
                    assert_eq!(claim, &m["points"], "{m}");
                }
            }
            // xorshift64
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let chosen = &legal[(rng % legal.len() as u64) as usize];
            let answer = self.play(id, &player.token, chosen).await;
            assert_eq!(
                answer["version"].as_u64().unwrap(),
                view["version"].as_u64().unwrap() + 1,
                "one move, one version"
            );
            // What the move caused, the bots' moves after it included: a draw shows its
            // tile to the drawer only.
            for event in answer["events"]
                .as_array()
                .expect("a move answer has events")
            {
                if event["type"] == "drew" {
                    assert_eq!(
                        event.get("tile").is_some(),
                        event["seat"] == turn,
                        "{event} in the answer to seat {turn}"
                    );
                }
            }
            posted += 1;
            current = answer;
        }
        PlayedMatch {
            last: current,
            posted,
        }
    }

    /// The spectator's view and every player's view: what "nothing changed" compares.
    pub async fn views(&self, id: &str, players: &[Player]) -> Vec<Value> {
        let mut all = vec![self.view(id, None).await];
        for p in players {
            all.push(self.view(id, Some(&p.token)).await);
        }
        all
    }
}

/// Strings that are tiles: the canonical form and the reversed one (layout arms write a
/// tile with the half facing the lead first).
/// A JSON array of tile texts, sorted: hands compared as sets.
pub fn sorted(tiles: &Value) -> Vec<String> {
    let mut tiles: Vec<String> = tiles
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tiles.sort();
    tiles
}

pub fn tile_texts(tiles: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for t in tiles {
        let t = t.as_str().unwrap();
        let (a, b) = t.split_once('-').unwrap();
        out.push(format!("\"{a}-{b}\""));
        out.push(format!("\"{b}-{a}\""));
    }
    out
}

/// A Server-Sent Events stream read chunk by chunk.
pub struct EventStream {
    res: reqwest::Response,
    buf: String,
    /// The comments seen so far (lines starting with `:`).
    pub comments: Vec<String>,
    /// The server closed the stream.
    pub ended: bool,
}

/// One SSE event: its `id`, `event` name and `data` (parsed as JSON).
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub id: Option<u64>,
    pub event: Option<String>,
    pub data: Value,
}

impl EventStream {
    /// Opens `GET /v1/games/{id}/events`, optionally resuming after `last_event_id`.
    pub async fn open(app: &TestApp, id: &str, last_event_id: Option<u64>) -> EventStream {
        EventStream::open_as(app, id, last_event_id, None).await
    }

    /// [`EventStream::open`], as the seat of `token` when given.
    pub async fn open_as(
        app: &TestApp,
        id: &str,
        last_event_id: Option<u64>,
        token: Option<&str>,
    ) -> EventStream {
        let mut req = app.client.get(app.url(&format!("/v1/games/{id}/events")));
        if let Some(last) = last_event_id {
            req = req.header("last-event-id", last.to_string());
        }
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        EventStream::from(req).await
    }

    /// Opens the lobby's stream, `GET /v1/lobby/events`.
    pub async fn lobby(app: &TestApp) -> EventStream {
        EventStream::from(app.client.get(app.url("/v1/lobby/events"))).await
    }

    async fn from(req: reqwest::RequestBuilder) -> EventStream {
        EventStream::of(req.send().await.expect("the stream opens"))
    }

    /// Reads the stream of an answer to a request made by the caller.
    pub fn of(res: reqwest::Response) -> EventStream {
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        EventStream {
            res,
            buf: String::new(),
            comments: Vec::new(),
            ended: false,
        }
    }

    /// The next event, or `None` when the stream ends or nothing comes within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<SseEvent> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let mut event = SseEvent {
                    id: None,
                    event: None,
                    data: Value::Null,
                };
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(comment) = line.strip_prefix(':') {
                        self.comments.push(comment.trim().to_owned());
                    } else if let Some(id) = line.strip_prefix("id:") {
                        event.id = Some(id.trim().parse().expect("a numeric id"));
                    } else if let Some(name) = line.strip_prefix("event:") {
                        event.event = Some(name.trim().to_owned());
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if !data.is_empty() {
                    event.data = serde_json::from_str(&data).expect("data is JSON");
                    return Some(event);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.res.chunk())
                .await
                .ok()?
                .expect("the stream reads");
            let Some(chunk) = chunk else {
                self.ended = true;
                return None;
            };
            self.buf
                .push_str(std::str::from_utf8(&chunk).expect("the stream is UTF-8"));
        }
    }
}

impl TestApp {
    /// A new player named `name`: its id and its key.
    pub async fn new_player(&self, name: &str) -> (String, String) {
        let res = self
            .post_json("/v1/players", &json!({ "name": name }))
            .await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        let created: Value = res.json().await.unwrap();
        (
            created["player"]["id"].as_str().unwrap().to_owned(),
            created["key"].as_str().unwrap().to_owned(),
        )
    }

    /// `POST path` with `key` as the bearer, and `body` as JSON when given.
    pub async fn post_as(&self, path: &str, key: &str, body: Option<&Value>) -> reqwest::Response {
        let mut req = self.client.post(self.url(path)).bearer_auth(key);
        if let Some(body) = body {
            req = req.json(body);
        }
        req.send().await.expect("the request is answered")
    }

    /// The stream of the player whose key is `key` (`GET /v1/players/me/events`).
    pub async fn player_stream(&self, key: &str) -> EventStream {
        let res = self
            .client
            .get(self.url("/v1/players/me/events"))
            .bearer_auth(key)
            .send()
            .await
            .expect("the request is answered");
        EventStream::of(res)
    }
}
