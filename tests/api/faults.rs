//! Faults from outside the request: the store going away, the process being killed.
//!
//! - A Redis outage (through a proxy the test takes down: refused connections, and a
//!   silent partition where only timeouts end a call): every endpoint that needs the
//!   store answers 503 `store_unavailable` with `Retry-After`, promptly; the process stays
//!   live (`/healthz`) but not ready (`/readyz`); when Redis is back, service resumes by
//!   itself.
//! - SIGKILL under load: the real binary is killed while clients make moves; a new process
//!   on the same Redis has every acknowledged move (each game loads, which runs the
//!   engine's invariant check, at a version no older than the last acknowledged one, and
//!   its log replays the whole history).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::child::ChildServer;
use crate::helpers::{TestApp, assert_problem, redis_info, spawn_app_with, test_settings};
use crate::proxy::{Proxy, redis_url};

const STORE_TIMEOUT: Duration = Duration::from_millis(500);
/// What "promptly" means for a refusal while the store is down.
const PROMPT: Duration = Duration::from_secs(3);
/// How long recovery may take once Redis is back.
const RECOVERY: Duration = Duration::from_secs(15);

fn prefix() -> String {
    format!("test:{}:", uuid::Uuid::new_v4())
}

/// A client talking to `base` (`http://127.0.0.1:port`).
struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    fn new(base: String) -> Client {
        Client {
            base,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        }
    }

    fn of(app: &TestApp) -> Client {
        Client {
            base: app.address.clone(),
            http: app.client.clone(),
        }
    }

    fn get(&self, path: &str, token: Option<&str>) -> reqwest::RequestBuilder {
        let req = self.http.get(format!("{}{path}", self.base));
        match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    fn post(&self, path: &str, token: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let req = self.http.post(format!("{}{path}", self.base)).json(&body);
        match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// A game against a random bot, seat 0 taken: `(id, token)`.
    async fn start_game(&self) -> Result<(String, String), String> {
        let created = self
            .post(
                "/v1/games",
                None,
                json!({"preset": "classic", "seed": "killed under load", "bots": [{"seat": 1, "level": "random"}]}),
            )
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if created.status() != 201 {
            return Err(format!("create: {}", created.status()));
        }
        let id = created.json::<Value>().await.map_err(|e| e.to_string())?["game_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let joined = self
            .post(
                &format!("/v1/games/{id}/seats"),
                None,
                json!({"name": "alice"}),
            )
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if joined.status() != 201 {
            return Err(format!("join: {}", joined.status()));
        }
        let token = joined.json::<Value>().await.map_err(|e| e.to_string())?["token"]
            .as_str()
            .unwrap()
            .to_owned();
        Ok((id, token))
    }

    /// Plays the seat's first legal move: `Ok(Some(version))` when it was acknowledged,
    /// `Ok(None)` when the match is over.
    async fn play_one(&self, id: &str, token: &str) -> Result<Option<u64>, String> {
        let view = self
            .get(&format!("/v1/games/{id}"), Some(token))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if view.status() != 200 {
            return Err(format!("view: {}", view.status()));
        }
        let view: Value = view.json().await.map_err(|e| e.to_string())?;
        if view["status"] == "finished" {
            return Ok(None);
        }
        let mv = view["legal_moves"][0].clone();
        if mv.is_null() {
            return Err(format!("no legal move in {view}"));
        }
        let res = self
            .post(&format!("/v1/games/{id}/moves"), Some(token), mv)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if res.status() != 200 {
            return Err(format!("move: {}", res.status()));
        }
        let answer: Value = res.json().await.map_err(|e| e.to_string())?;
        Ok(Some(answer["version"].as_u64().expect("a version")))
    }
}

#[derive(Clone, Copy, Debug)]
enum Outage {
    /// Connections refused at once.
    Refused,
    /// Connections accepted and never answered.
    Silent,
}

async fn store_outage(outage: Outage) {
    let (proxy, url) = Proxy::to_redis();
    let app = spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: prefix(),
        store_timeout: STORE_TIMEOUT,
        ..test_settings()
    })
    .await;
    let client = Client::of(&app);
    let (id, token) = client.start_game().await.expect("a game before the outage");

    match outage {
        Outage::Refused => proxy.stop(),
        Outage::Silent => proxy.hang(),
    }
    let game = format!("/v1/games/{id}");
    let calls = [
        (
            "create",
            client.post("/v1/games", None, json!({"preset": "classic"})),
        ),
        ("list", client.get("/v1/games?status=waiting", None)),
        ("view", client.get(&game, None)),
        ("seat's view", client.get(&game, Some(&token))),
        (
            "long poll",
            client.get(&format!("{game}?after=99&wait=5"), None),
        ),
        (
            "take a seat",
            client.post(&format!("{game}/seats"), None, json!({"name": "bob"})),
        ),
        (
            "move",
            client.post(
                &format!("{game}/moves"),
                Some(&token),
                json!({"type": "draw"}),
            ),
        ),
        ("events", client.get(&format!("{game}/events"), None)),
        ("log", client.get(&format!("{game}/log"), Some(&token))),
        ("export", client.get(&format!("{game}/export"), None)),
        ("readyz", client.get("/readyz", None)),
    ];
    for (what, call) in calls {
        let started = Instant::now();
        let res = call.send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
        let took = started.elapsed();
        eprintln!("{outage:?} {what}: {} in {took:?}", res.status());
        assert!(took < PROMPT, "{outage:?} {what}: took {took:?}");
        assert_eq!(
            res.status().as_u16(),
            503,
            "{outage:?} {what}: {:?}",
            res.text().await
        );
        assert_eq!(res.headers()["retry-after"], "1", "{outage:?} {what}");
        assert_problem(res, 503, "store_unavailable").await;
    }
    // The process lives, and what needs no store still answers.
    for path in ["/healthz", "/v1/presets", "/openapi.json"] {
        let res = client.get(path, None).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{outage:?} {path}");
    }

    proxy.start();
    let deadline = Instant::now() + RECOVERY;
    loop {
        let attempt = async {
            let (id, token) = client.start_game().await?;
            client.play_one(&id, &token).await?;
            // The game from before the outage is intact and plays on.
            client.play_one(&id, &token).await
        };
        match attempt.await {
            Ok(_) => break,
            Err(e) if Instant::now() > deadline => {
                panic!("{outage:?}: no recovery within {RECOVERY:?}: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    let ready = client.get("/readyz", None).send().await.unwrap();
    assert_eq!(ready.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_refusing_connections_gives_prompt_503s_then_service_resumes() {
    store_outage(Outage::Refused).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_silent_gives_prompt_503s_then_service_resumes() {
    store_outage(Outage::Silent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_load_loses_no_acknowledged_move() {
    const GAMES: usize = 6;
    let prefix = prefix();
    let mut server = ChildServer::start(&prefix);
    let client = Arc::new(Client::new(server.base.clone()));
    let mut games = Vec::new();
    for _ in 0..GAMES {
        games.push(client.start_game().await.expect("a game"));
    }

    // One client per game, moving as fast as it can; every acknowledged version is kept.
    let acked: Arc<Mutex<HashMap<String, u64>>> = Arc::default();
    let mut clients = Vec::new();
    for (id, token) in games.clone() {
        let (client, acked) = (client.clone(), acked.clone());
        clients.push(tokio::spawn(async move {
            // Until the match is over or the server is gone.
            while let Ok(Some(version)) = client.play_one(&id, &token).await {
                let mut acked = acked.lock().unwrap();
                let last = acked.entry(id.clone()).or_default();
                assert!(version > *last, "versions only grow");
                *last = version;
            }
        }));
    }
    // Killed once every game has a move acknowledged (or after a while: then the assert
    // below says none was).
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.lock().unwrap().len() < GAMES && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let moves_before_kill = acked.lock().unwrap().len();
    server.kill();
    for c in clients {
        c.await.expect("a client task ends cleanly");
    }
    let acked = acked.lock().unwrap().clone();
    eprintln!("acknowledged before the kill: {acked:?}");
    assert!(
        moves_before_kill > 0 && !acked.is_empty(),
        "no move was acknowledged before the kill"
    );

    let restarted = ChildServer::start(&prefix);
    let client = Client::new(restarted.base.clone());
    for (id, token) in &games {
        let view = client
            .get(&format!("/v1/games/{id}"), None)
            .send()
            .await
            .unwrap();
        assert_eq!(view.status().as_u16(), 200, "game {id} loads");
        let view: Value = view.json().await.unwrap();
        let version = view["version"].as_u64().unwrap();
        let last = acked.get(id).copied().unwrap_or(0);
        assert!(
            version >= last,
            "game {id}: version {version} after the restart, {last} acknowledged before"
        );
        let log = client
            .get(&format!("/v1/games/{id}/log"), Some(token))
            .send()
            .await
            .unwrap();
        assert_eq!(log.status().as_u16(), 200, "game {id}'s history replays");
        let log: Value = log.json().await.unwrap();
        assert_eq!(log["version"], version);
        // And the game plays on.
        client
            .play_one(id, token)
            .await
            .unwrap_or_else(|e| panic!("game {id} after the restart: {e}"));
    }
}

/// The first legal move of the seat of `token`, and the game's version.
async fn next_move(client: &Client, id: &str, token: &str) -> (Value, u64) {
    let view: Value = client
        .get(&format!("/v1/games/{id}"), Some(token))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let version = view["version"].as_u64().unwrap();
    (view["legal_moves"][0].clone(), version)
}

/// A server on Redis through `proxy`'s `url`, with a short store timeout.
async fn app_through(url: String, store_timeout: Duration) -> TestApp {
    spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: prefix(),
        store_timeout,
        ..test_settings()
    })
    .await
}

/// Redis stores a move but answers after the store timeout: the server looks before
/// answering, finds the move stored, and says so, rather than a 503 that a client would
/// retry into a second move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_redis_stored_but_answered_late_is_acknowledged_once() {
    let (proxy, url) = Proxy::to_redis();
    let app = app_through(url, Duration::from_secs(1)).await;
    let client = Client::of(&app);
    let (id, token) = client.start_game().await.unwrap();
    let (mv, before) = next_move(&client, &id, &token).await;

    // Later than the timeout, sooner than the look that follows it gives up.
    proxy.delay_scripts(Duration::from_millis(1500));
    let res = client
        .post(&format!("/v1/games/{id}/moves"), Some(&token), mv)
        .send()
        .await
        .unwrap();
    proxy.delay_scripts(Duration::ZERO);
    let status = res.status().as_u16();
    let body: Value = res.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["version"], before + 1);
    let (_, now) = next_move(&client, &id, &token).await;
    assert_eq!(now, before + 1, "the move is stored once");
}

/// When even the look after a timed-out save gets no answer, the 503 says the move may
/// have been made (`outcome: unknown`); a client that retries as the docs say, with the
/// same `Idempotency-Key`, gets the move made exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_of_unknown_fate_says_so_and_a_keyed_retry_makes_it_once() {
    let (proxy, url) = Proxy::to_redis();
    let app = app_through(url, STORE_TIMEOUT).await;
    let client = Client::of(&app);
    let (id, token) = client.start_game().await.unwrap();
    let (mv, before) = next_move(&client, &id, &token).await;
    let send = || {
        client
            .post(&format!("/v1/games/{id}/moves"), Some(&token), mv.clone())
            .header("Idempotency-Key", "move-1")
            .send()
    };

    // Far past the timeout and the look after it.
    proxy.delay_scripts(STORE_TIMEOUT * 6);
    let res = send().await.unwrap();
    proxy.delay_scripts(Duration::ZERO);
    assert_eq!(res.headers()["retry-after"], "1");
    let problem = assert_problem(res, 503, "store_unavailable").await;
    assert_eq!(problem["outcome"], "unknown", "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("Idempotency-Key"),
        "{problem}"
    );

    let deadline = Instant::now() + RECOVERY;
    let answer = loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let res = send().await.unwrap();
        match res.status().as_u16() {
            200 => break res.json::<Value>().await.unwrap(),
            503 if Instant::now() < deadline => {}
            other => panic!("a retry got {other}: {:?}", res.text().await),
        }
    };
    assert_eq!(answer["version"], before + 1, "{answer}");
    let (_, now) = next_move(&client, &id, &token).await;
    assert_eq!(now, before + 1, "the move is stored once");
}

/// A join whose save got no answer says `outcome: unknown` (the seat may be taken by a
/// token nobody received); retried with the same `Idempotency-Key` and body, it gets that
/// seat and its token, and no second seat is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_of_unknown_fate_retried_with_its_key_gets_its_seat() {
    let (proxy, url) = Proxy::to_redis();
    let app = app_through(url, STORE_TIMEOUT).await;
    let client = Client::of(&app);
    let created = client
        .post("/v1/games", None, json!({"preset": "classic", "seats": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let id = created.json::<Value>().await.unwrap()["game_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let send = || {
        client
            .post(
                &format!("/v1/games/{id}/seats"),
                None,
                json!({"name": "alice"}),
            )
            .header("Idempotency-Key", "b3c1f1e0-6a4d-4c55-9d8e-join")
            .send()
    };

    // Far past the timeout and the look after it.
    proxy.delay_scripts(STORE_TIMEOUT * 6);
    let res = send().await.unwrap();
    proxy.delay_scripts(Duration::ZERO);
    let problem = assert_problem(res, 503, "store_unavailable").await;
    assert_eq!(problem["outcome"], "unknown", "{problem}");

    let deadline = Instant::now() + RECOVERY;
    let joined = loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let res = send().await.unwrap();
        match res.status().as_u16() {
            201 => break res.json::<Value>().await.unwrap(),
            503 if Instant::now() < deadline => {}
            other => panic!("a retry got {other}: {:?}", res.text().await),
        }
    };
    assert_eq!(joined["seat"], 0, "{joined}");
    let token = joined["token"].as_str().unwrap();
    let view: Value = client
        .get(&format!("/v1/games/{id}"), Some(token))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["you"], 0, "the token is the seat's: {view}");
    let taken: Vec<_> = view["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["name"].is_null())
        .collect();
    assert_eq!(taken.len(), 1, "one seat taken: {view}");
}

/// Replicas of the test Redis online now (none, on a plain local one).
async fn online_replicas(url: &str) -> usize {
    redis_info(url, "replication")
        .await
        .lines()
        .filter(|l| l.starts_with("slave") && l.contains("state=online"))
        .count()
}

/// A server that must have one more replica confirm each write than Redis has: it says
/// so on `/readyz`, and a move it makes on the master is never acknowledged, not by a
/// retry with the same key either (the retry finds the move stored, and still cannot
/// confirm it). A server that asks for no replica answers the same retry: the move
/// was made once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_no_replica_confirms_is_not_acknowledged_even_by_its_retries() {
    let url = redis_url();
    let prefix = prefix();
    let lax = spawn_app_with(Settings {
        redis_url: Some(url.clone()),
        redis_key_prefix: prefix.clone(),
        ..test_settings()
    })
    .await;
    let strict = spawn_app_with(Settings {
        redis_url: Some(url.clone()),
        redis_key_prefix: prefix,
        redis_wait_replicas: Some(online_replicas(&url).await as u32 + 1),
        store_timeout: STORE_TIMEOUT,
        ..test_settings()
    })
    .await;
    let ready: Value = strict.get("/readyz").await.json().await.unwrap();
    assert_eq!(ready["status"], "degraded", "{ready}");
    assert!(
        ready["degraded"][0]
            .as_str()
            .is_some_and(|p| p.contains("REDIS_WAIT_REPLICAS")),
        "{ready}"
    );
    let lax_ready: Value = lax.get("/readyz").await.json().await.unwrap();
    assert_eq!(lax_ready["status"], "ready", "{lax_ready}");
    assert_eq!(lax_ready["degraded"], json!([]), "{lax_ready}");

    let (client, lax_client) = (Client::of(&strict), Client::of(&lax));
    let (id, token) = lax_client.start_game().await.unwrap();
    let (mv, before) = next_move(&client, &id, &token).await;
    let send = |client: &Client| {
        client
            .post(&format!("/v1/games/{id}/moves"), Some(&token), mv.clone())
            .header("Idempotency-Key", "unconfirmed")
            .send()
    };
    for attempt in ["the move", "its retry"] {
        let res = send(&client).await.unwrap();
        assert_eq!(res.status().as_u16(), 503, "{attempt}");
        let problem = assert_problem(res, 503, "store_unavailable").await;
        assert_eq!(problem["outcome"], "unknown", "{attempt}: {problem}");
    }
    let res = send(&lax_client).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let answer: Value = res.json().await.unwrap();
    assert_eq!(answer["version"], before + 1, "{answer}");
    let (_, now) = next_move(&lax_client, &id, &token).await;
    assert_eq!(now, before + 1, "the move is stored once");
}
