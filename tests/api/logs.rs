//! No secret in the logs: a whole game is played through the real binary with every log
//! line on (`RUST_LOG=debug`, JSON), and no line may carry a seat token, or any tile other
//! than those played in public by the request the line belongs to.
//!
//! The binary runs as a subprocess so that every line it writes is seen, from every
//! worker thread and every library (actix, the Redis client), not only what a test
//! subscriber on one thread would catch. Each request carries an `X-Request-Id` of the
//! test's choosing, so each line is tied to its request by the `request_id` of its span.
//!
//! The game is the `draw` preset with three seats, the third a built-in bot: hands are
//! dealt, tiles are drawn from the boneyard (hidden from the other seats), and the bot's
//! moves happen inside the players' requests. A tile is allowed in a request's lines only
//! if that request played it (a `played` event of its answer) or it lies on the layout
//! after it; every other tile of the set was in a hand or the boneyard at that moment.
//! Lines outside any request (startup, background tasks) may name no tile at all.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use sha2::{Digest, Sha256};

/// The server binary, killed when dropped (a failing test leaves no process behind).
struct Server {
    child: Child,
    base: String,
    lines: Arc<Mutex<Vec<String>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(extra_env: &[(&str, String)]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_domino-server"));
        command
            .env_clear()
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("RUST_LOG", "debug")
            .env("LOG_FORMAT", "json")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in extra_env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("the server binary starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = mpsc::channel();
        let mut readers = Vec::new();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        for stream in [
            Box::new(stdout) as Box<dyn std::io::Read + Send>,
            Box::new(stderr),
        ] {
            let lines = lines.clone();
            let addr_tx = addr_tx.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&line)
                        && json["message"] == "listening"
                        && let Some(addr) = json["addr"].as_str()
                    {
                        let _ = addr_tx.send(addr.to_owned());
                    }
                    lines.lock().unwrap().push(line);
                }
            }));
        }
        let addr = match addr_rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "the server did not say where it listens:\n{}",
                    lines.lock().unwrap().join("\n")
                );
            }
        };
        Server {
            child,
            base: format!("http://{addr}"),
            lines,
            readers,
        }
    }

    /// Stops the server and returns every line it wrote.
    fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for reader in std::mem::take(&mut self.readers) {
            let _ = reader.join();
        }
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test's client: every request gets the next request id.
struct Client {
    http: reqwest::Client,
    base: String,
    next: usize,
    /// Request id → tiles that request may name in its log lines.
    allowed: HashMap<String, BTreeSet<String>>,
}

impl Client {
    async fn send(
        &mut self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value, String) {
        self.next += 1;
        let id = format!("leak-test-{:04}", self.next);
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-request-id", &id);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("the server answers");
        let status = res.status().as_u16();
        let json = res.json().await.unwrap_or(serde_json::Value::Null);
        // Public after this request: what it played, and the layout it left.
        let mut allowed = BTreeSet::new();
        for event in json["events"].as_array().into_iter().flatten() {
            if event["type"] == "played" {
                allowed.insert(canonical(event["tile"].as_str().unwrap()));
            }
        }
        let view = if json["view"].is_object() {
            &json["view"]
        } else {
            &json
        };
        if let Some(lead) = view["round"]["layout"]["lead"].as_str() {
            allowed.insert(canonical(lead));
        }
        for arm in ["left", "right", "up", "down"] {
            for tile in view["round"]["layout"]["arms"][arm]
                .as_array()
                .into_iter()
                .flatten()
            {
                allowed.insert(canonical(tile.as_str().unwrap()));
            }
        }
        self.allowed.insert(id.clone(), allowed);
        (status, json, id)
    }
}

fn canonical(tile: &str) -> String {
    let (a, b) = tile.split_once('-').unwrap();
    let (a, b): (u8, u8) = (a.parse().unwrap(), b.parse().unwrap());
    format!("{}-{}", a.min(b), a.max(b))
}

/// Every `a-b` in the text that reads as a tile of a double-`max_pip` set: one or two
/// digits each side, not part of a longer word or number (so dates, UUIDs and versions
/// do not count).
fn tiles_in(text: &str, max_pip: u8) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'.' || b == b'_';
    let mut found = BTreeSet::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'-' {
            continue;
        }
        let mut start = i;
        while start > 0 && bytes[start - 1].is_ascii_digit() {
            start -= 1;
        }
        let mut end = i + 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let (left, right) = (&text[start..i], &text[i + 1..end]);
        if !(1..=2).contains(&left.len())
            || !(1..=2).contains(&right.len())
            || (start > 0 && (word(bytes[start - 1]) || bytes[start - 1] == b'-'))
            || (end < bytes.len() && (word(bytes[end]) || bytes[end] == b'-'))
        {
            continue;
        }
        let (a, b): (u8, u8) = (left.parse().unwrap(), right.parse().unwrap());
        if a <= max_pip && b <= max_pip {
            found.insert(format!("{}-{}", a.min(b), a.max(b)));
        }
    }
    found
}

#[test]
fn the_tile_finder_finds_tiles_and_nothing_else() {
    let found = tiles_in(
        r#"{"timestamp":"2025-11-22T05:23:02Z","mv":"Play { tile: 5-3, end: None }","id":"3f2a-4b1c-0000-1234","x":"6-6","v":"1.2-3","y":" 0-7"}"#,
        6,
    );
    assert_eq!(found, BTreeSet::from(["3-5".to_owned(), "6-6".to_owned()]));
}

/// Plays a whole `draw` game (two players and a greedy bot) and checks every log line.
async fn play_and_check(extra_env: &[(&str, String)]) {
    let server = Server::start(extra_env);
    let mut client = Client {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        base: server.base.clone(),
        next: 0,
        allowed: HashMap::new(),
    };
    let (status, created, _) = client
        .send(
            reqwest::Method::POST,
            "/v1/games",
            None,
            Some(serde_json::json!({
                "preset": "draw", "seats": 3, "seed": "no leaks",
                "bots": [{"seat": 2, "level": "greedy"}],
            })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let game = created["game_id"].as_str().unwrap().to_owned();
    let mut tokens = Vec::new();
    for name in ["ann", "bob"] {
        let (status, seat, _) = client
            .send(
                reqwest::Method::POST,
                &format!("/v1/games/{game}/seats"),
                None,
                Some(serde_json::json!({ "name": name })),
            )
            .await;
        assert_eq!(status, 201, "{seat}");
        tokens.push(seat["token"].as_str().unwrap().to_owned());
    }

    // The seat to move fetches its view and plays a legal move, until the match is over.
    let mut hands_seen = BTreeSet::new();
    let mut draws = 0;
    let mut moves = 0;
    let mut turn = None;
    for _ in 0..2_000 {
        let seat = match turn {
            Some(seat) => seat,
            None => {
                let (_, spectator, _) = client
                    .send(
                        reqwest::Method::GET,
                        &format!("/v1/games/{game}"),
                        None,
                        None,
                    )
                    .await;
                if spectator["status"] == "finished" {
                    break;
                }
                spectator["round"]["turn"].as_u64().unwrap() as usize
            }
        };
        let (status, view, _) = client
            .send(
                reqwest::Method::GET,
                &format!("/v1/games/{game}"),
                Some(&tokens[seat]),
                None,
            )
            .await;
        assert_eq!(status, 200, "{view}");
        for tile in view["hand"].as_array().into_iter().flatten() {
            hands_seen.insert(canonical(tile.as_str().unwrap()));
        }
        let legal = view["legal_moves"].as_array().unwrap();
        assert!(!legal.is_empty(), "seat {seat} to move has a move: {view}");
        let mut mv = legal[moves % legal.len()].clone();
        mv.as_object_mut().unwrap().remove("points");
        if mv["type"] == "draw" {
            draws += 1;
        }
        let (status, answer, _) = client
            .send(
                reqwest::Method::POST,
                &format!("/v1/games/{game}/moves"),
                Some(&tokens[seat]),
                Some(mv),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        moves += 1;
        turn = match answer["round"]["turn"].as_u64() {
            _ if answer["status"] == "finished" => None,
            Some(t) if t < 2 => Some(t as usize),
            _ => None,
        };
        if answer["status"] == "finished" {
            break;
        }
    }
    let (_, end, _) = client
        .send(
            reqwest::Method::GET,
            &format!("/v1/games/{game}"),
            None,
            None,
        )
        .await;
    assert_eq!(end["status"], "finished", "the game was played to its end");
    assert!(draws > 0, "the game had draws from the boneyard");
    assert!(hands_seen.len() > 10, "hands were seen");

    let lines = server.stop();
    let secrets: Vec<String> = tokens
        .iter()
        .flat_map(|t| [t.clone(), hex::encode(Sha256::digest(t.as_bytes()))])
        .collect();
    let mut in_requests = 0;
    for line in &lines {
        for secret in &secrets {
            assert!(
                !line.contains(secret.as_str()),
                "a token in the logs: {line}"
            );
        }
        assert!(
            !line.to_ascii_lowercase().contains("bearer"),
            "an Authorization header in the logs: {line}"
        );
        let json: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| panic!("every line is JSON: {line}"));
        let tiles = tiles_in(line, 6);
        match json["span"]["request_id"].as_str() {
            Some(id) => {
                in_requests += 1;
                let allowed = client
                    .allowed
                    .get(id)
                    .unwrap_or_else(|| panic!("a line of an unknown request: {line}"));
                let hidden: Vec<_> = tiles.difference(allowed).collect();
                assert!(
                    hidden.is_empty(),
                    "request {id} logged {hidden:?}, which it did not play: {line}"
                );
            }
            None => assert!(
                tiles.is_empty(),
                "a line outside requests names tiles: {line}"
            ),
        }
    }
    assert!(
        in_requests > moves,
        "debug logs were on: {in_requests} request lines for {moves} moves"
    );
    // The check can fail: the moves were logged, with their tiles.
    assert!(
        lines
            .iter()
            .any(|l| l.contains("move applied") && !tiles_in(l, 6).is_empty()),
        "plays are logged with their tile"
    );
}

#[tokio::test]
async fn no_token_or_hidden_tile_is_logged_with_the_memory_store() {
    play_and_check(&[]).await;
}

#[tokio::test]
async fn no_token_or_hidden_tile_is_logged_with_the_redis_store() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    play_and_check(&[
        ("REDIS_URL", url),
        (
            "REDIS_KEY_PREFIX",
            format!("test:{}:", uuid::Uuid::new_v4()),
        ),
    ])
    .await;
}

#[tokio::test]
async fn no_token_or_hidden_tile_is_logged_with_the_cluster_store() {
    play_and_check(&[
        (
            "REDIS_CLUSTER_NODES",
            crate::helpers::cluster_nodes().join(","),
        ),
        (
            "REDIS_KEY_PREFIX",
            format!("test:{}:", uuid::Uuid::new_v4()),
        ),
    ])
    .await;
}
