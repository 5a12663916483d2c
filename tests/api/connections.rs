//! What holds a connection open, under short limits: caps on event streams and long polls
//! (per address and in all), slow bodies cut, and SIGTERM answering long polls and ending
//! streams at once.

use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{EventStream, TestApp, assert_problem, spawn_app_with, test_settings};

/// A server whose stream caps are `per_address` and `total`.
async fn capped(per_address: u32, total: Option<usize>) -> TestApp {
    spawn_app_with(Settings {
        max_streams_per_ip: per_address,
        max_streams: total,
        ..test_settings()
    })
    .await
}

/// The value of a metric line `name value` in `/metrics`.
async fn metric(app: &TestApp, name: &str) -> Option<f64> {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

/// Waits until `domino_open_streams` is `n` (a long poll is sent before it waits).
async fn until_open(app: &TestApp, n: f64) {
    let start = Instant::now();
    while metric(app, "domino_open_streams").await != Some(n) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{n} streams never open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A 429 for a stream cap: `Retry-After`, and a detail naming the cap's setting.
async fn refused_by(res: reqwest::Response, setting: &str) {
    assert_eq!(res.status().as_u16(), 429, "refused by {setting}");
    let retry_after: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let problem = assert_problem(res, 429, "rate_limited").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains(setting), "{detail}");
}

#[tokio::test]
async fn a_third_event_stream_from_one_address_is_refused_until_one_closes() {
    let app = capped(2, None).await;
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let first = EventStream::open(&app, &id, None).await;
    let _second = EventStream::open(&app, &id, None).await;
    let third = app.get(&format!("/v1/games/{id}/events")).await;
    refused_by(third, "MAX_STREAMS_PER_IP").await;
    assert_eq!(
        metric(&app, r#"domino_stream_refusals_total{cap="per_address"}"#).await,
        Some(1.0)
    );
    // The client goes away: its slot is free again.
    drop(first);
    until_open(&app, 1.0).await;
    let _third = EventStream::open(&app, &id, None).await;
}

#[tokio::test]
async fn a_third_long_poll_from_one_address_is_refused_and_answered_polls_free_their_slots() {
    let app = capped(2, None).await;
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let poll = |wait: u64| {
        let app = &app;
        let id = id.clone();
        async move {
            app.get(&format!("/v1/games/{id}?after=1&wait={wait}"))
                .await
        }
    };
    // Two polls wait (up to 5 s); a third, meanwhile, is refused.
    let waiting = async { tokio::join!(poll(5), poll(5)) };
    let third = async {
        until_open(&app, 2.0).await;
        poll(5).await
    };
    let ((a, b), third) = tokio::join!(waiting, third);
    assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
    refused_by(third, "MAX_STREAMS_PER_IP").await;
    // Answered, they hold nothing.
    until_open(&app, 0.0).await;
    assert_eq!(poll(0).await.status().as_u16(), 200);
}

#[tokio::test]
async fn health_checks_answer_while_every_stream_slot_is_taken() {
    let app = capped(10, Some(2)).await;
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let _a = EventStream::open(&app, &id, None).await;
    let _b = EventStream::open(&app, &id, None).await;
    let res = app.get(&format!("/v1/games/{id}/events")).await;
    refused_by(res, "MAX_STREAMS").await;
    let res = app.get(&format!("/v1/games/{id}?after=1&wait=1")).await;
    refused_by(res, "MAX_STREAMS").await;
    for path in ["/healthz", "/readyz", "/metrics"] {
        assert_eq!(app.get(path).await.status().as_u16(), 200, "{path}");
    }
    // So do ordinary requests.
    assert_eq!(
        app.get(&format!("/v1/games/{id}")).await.status().as_u16(),
        200
    );
    assert_eq!(metric(&app, "domino_open_streams").await, Some(2.0));
    assert_eq!(
        metric(&app, r#"domino_stream_refusals_total{cap="total"}"#).await,
        Some(2.0)
    );
}

/// Sends a POST of `body` to `path` on `app`, its head at once and its body one byte per
/// `every`; returns when the server answers or closes: what it sent, and when.
async fn dribble(app: &TestApp, path: &str, body: &str, every: Duration) -> (String, Duration) {
    let addr = app.address.strip_prefix("http://").unwrap();
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let started = Instant::now();
    write.write_all(head.as_bytes()).await.unwrap();
    let body = body.as_bytes().to_vec();
    let writer = tokio::spawn(async move {
        for byte in body {
            // Not a wait for a result: a slow client's pace, which is what is tested.
            tokio::time::sleep(every).await;
            // The server may have closed the connection: the rest is not wanted.
            if write.write_all(&[byte]).await.is_err() {
                return;
            }
        }
        // Keep the write side open: the server, not the client, must end this.
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(20), read.read(&mut buf)).await {
            Err(_) => panic!("no answer in 20 s"),
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => {
                answer.extend_from_slice(&buf[..n]);
                // An answer with a whole body is enough (a 201 keeps the connection).
                let text = String::from_utf8_lossy(&answer);
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(usize::MAX);
                    if rest.len() >= length {
                        break;
                    }
                }
            }
        }
    }
    let took = started.elapsed();
    writer.abort();
    (String::from_utf8_lossy(&answer).into_owned(), took)
}

#[tokio::test]
async fn a_body_dribbled_slower_than_the_body_timeout_is_cut_and_a_prompt_one_is_not() {
    let app = spawn_app_with(Settings {
        body_timeout: Duration::from_millis(1000),
        ..test_settings()
    })
    .await;
    let body = r#"{"preset":"draw"}"#;
    // One byte per 400 ms: the whole body would take 6.8 s.
    let (answer, took) = dribble(&app, "/v1/games", body, Duration::from_millis(400)).await;
    assert!(
        took < Duration::from_secs(4),
        "cut after {took:?}, not when the body ended: {answer}"
    );
    // The answer may be lost to the closed connection, never replaced by another.
    if !answer.is_empty() {
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("request_timeout"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    // A body that waits on the network, but less than the timeout, is served.
    let (answer, _) = dribble(&app, "/v1/games", body, Duration::from_millis(20)).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let listed: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(
        listed["games"].as_array().unwrap().len(),
        1,
        "only the prompt body made a game"
    );
}

/// Sends SIGTERM to a child process.
fn sigterm(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// A server process with a long poll and an event stream open gets SIGTERM: the poll is
/// answered (its view, 200), the stream ends cleanly, and the process exits long before
/// its 30 s grace.
#[tokio::test]
async fn sigterm_answers_long_polls_and_ends_streams_at_once() {
    const GRACE_SECS: u64 = 30;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_domino-server"))
        .env_clear()
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .env("SHUTDOWN_TIMEOUT_SECS", GRACE_SECS.to_string())
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the server binary starts");
    let app = TestApp::at(format!("http://127.0.0.1:{port}"));
    let start = Instant::now();
    while app.client.get(app.url("/healthz")).send().await.is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "never answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (id, created) = app
        .create_game(json!({"preset": "draw", "seed": "sigterm"}))
        .await;
    let mut stream = EventStream::open(&app, &id, None).await;
    let first = stream.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(first.data["version"], 1);
    let poll = app
        .client
        .get(app.url(&format!("/v1/games/{id}?after=1&wait={GRACE_SECS}")))
        .send();
    let stop = async {
        until_open(&app, 2.0).await;
        sigterm(&child);
        Instant::now()
    };
    let (poll, stopped) = tokio::join!(poll, stop);
    let poll = poll.expect("the long poll is answered");
    assert_eq!(poll.status().as_u16(), 200);
    let seen: Value = poll.json().await.unwrap();
    assert_eq!(seen["version"], 1);
    assert_eq!(seen["game_id"], created["game_id"]);
    let answered = stopped.elapsed();
    assert!(stream.next(Duration::from_secs(10)).await.is_none());
    assert!(stream.ended, "the stream ended rather than went quiet");
    let ended = stopped.elapsed();
    let exited = loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break stopped.elapsed();
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(GRACE_SECS - 10),
            "still running {:?} after SIGTERM",
            stopped.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!(
        "after SIGTERM: poll answered in {answered:?}, stream ended in {ended:?}, exited in {exited:?}"
    );
    // At once: not after the grace (30 s), nor after idle keep-alive connections time out
    // (5 s, which the exit's bound must stay under; ten times what it takes here, loaded).
    assert!(answered < Duration::from_secs(10), "{answered:?}");
    assert!(exited < Duration::from_millis(4500), "{exited:?}");
}

/// A raw HTTP/1.1 connection, for what a client library hides: keep-alive, pipelining,
/// half-sent heads, the address a connection comes from.
struct Conn {
    stream: tokio::net::TcpStream,
    /// Read but not yet taken as an answer.
    unread: Vec<u8>,
}

impl Conn {
    /// A connection to `app` from the loopback address `from` (Linux answers on all of
    /// 127.0.0.0/8, so each is another client address).
    async fn open(app: &TestApp, from: &str) -> Conn {
        let to: std::net::SocketAddr = app
            .address
            .strip_prefix("http://")
            .unwrap()
            .parse()
            .unwrap();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(std::net::SocketAddr::new(from.parse().unwrap(), 0))
            .unwrap();
        Conn {
            stream: socket.connect(to).await.unwrap(),
            unread: Vec::new(),
        }
    }

    async fn send(&mut self, bytes: &str) {
        self.stream.write_all(bytes.as_bytes()).await.unwrap();
    }

    /// The next whole answer (head and `Content-Length` body); `None` when the server
    /// closes first.
    async fn answer(&mut self) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = String::from_utf8_lossy(&self.unread).into_owned();
            if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse().ok())?
                    })
                    .unwrap_or(0);
                if rest.len() >= length {
                    let whole = head.len() + 4 + length;
                    self.unread.drain(..whole);
                    return Some(text[..whole].to_owned());
                }
            }
            let mut buf = [0u8; 4096];
            let read = tokio::time::timeout_at(deadline.into(), self.stream.read(&mut buf))
                .await
                .expect("an answer or a close within 10 s");
            match read {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.unread.extend_from_slice(&buf[..n]),
            }
        }
    }

    /// Sends a GET of `path` and returns its answer's status line.
    async fn get(&mut self, path: &str) -> String {
        self.send(&format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n"))
            .await;
        let answer = self.answer().await.expect("an answer");
        answer.lines().next().unwrap().to_owned()
    }

    /// How long the server takes to close this connection (at most `limit`), reading and
    /// keeping whatever it sends meanwhile.
    async fn closed_within(&mut self, limit: Duration) -> Duration {
        let started = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            match tokio::time::timeout_at((started + limit).into(), self.stream.read(&mut buf))
                .await
            {
                Err(_) => panic!("still open after {limit:?}"),
                Ok(Ok(0) | Err(_)) => return started.elapsed(),
                Ok(Ok(n)) => self.unread.extend_from_slice(&buf[..n]),
            }
        }
    }
}

const HEAD_TIMEOUT: Duration = Duration::from_millis(500);

/// A client with no pooled connections: a client library may open a spare connection and
/// leave it idle, which the server answers 408 once the (short) head timeout passes; using
/// it after a wait would race that answer.
fn fresh(app: &TestApp) -> TestApp {
    TestApp::at(app.address.clone())
}

async fn with_head_timeout() -> TestApp {
    spawn_app_with(Settings {
        head_timeout: HEAD_TIMEOUT,
        ..test_settings()
    })
    .await
}

#[tokio::test]
async fn a_later_head_that_stalls_on_a_kept_alive_connection_is_cut_after_the_head_timeout() {
    let app = with_head_timeout().await;
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let mut conn = Conn::open(&app, "127.0.0.1").await;
    assert_eq!(conn.get("/healthz").await, "HTTP/1.1 200 OK");
    // Reuse, pipelining and a long poll outlasting the head timeout are untouched.
    conn.send(
        "GET /healthz HTTP/1.1\r\nHost: test\r\n\r\nGET /readyz HTTP/1.1\r\nHost: test\r\n\r\n",
    )
    .await;
    for _ in 0..2 {
        let answer = conn.answer().await.expect("a pipelined answer");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let poll = format!("/v1/games/{id}?after=1&wait=1");
    assert_eq!(conn.get(&poll).await, "HTTP/1.1 200 OK");
    // Idle for longer than the head timeout: an idle connection is the keep-alive's (5 s).
    tokio::time::sleep(HEAD_TIMEOUT * 3).await;
    // The cut is timed from before anything that could start the server's timer: a test
    // held up between its writes (four run at once) must not see it early.
    let asked = Instant::now();
    assert_eq!(conn.get("/healthz").await, "HTTP/1.1 200 OK");
    // One byte of the next head, then nothing: it held the connection for ever.
    conn.send("G").await;
    conn.closed_within(Duration::from_secs(4)).await;
    let took = asked.elapsed();
    assert!(
        took >= HEAD_TIMEOUT - Duration::from_millis(100),
        "{took:?}"
    );
    assert_eq!(
        metric(&fresh(&app), "domino_slow_heads_cut_total").await,
        Some(1.0)
    );
}

#[tokio::test]
async fn an_event_stream_idle_for_longer_than_the_head_timeout_stays_open() {
    let app = with_head_timeout().await;
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let mut stream = EventStream::open(&app, &id, None).await;
    let first = stream.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(first.data["version"], 1);
    // A stream being answered has no head to wait for, however long it is quiet.
    tokio::time::sleep(HEAD_TIMEOUT * 3).await;
    // A move to see on the stream. On a busy machine a fresh connection's head can itself
    // wait out the short head timeout (408, the server doing its job): not what is tested
    // here, so that one join is sent again.
    let mut joined = fresh(&app).join(&id, json!({ "name": "ann" })).await;
    for _ in 0..4 {
        if joined.status() != 408 {
            break;
        }
        joined = fresh(&app).join(&id, json!({ "name": "ann" })).await;
    }
    assert_eq!(joined.status(), 201, "{}", joined.text().await.unwrap());
    let next = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the stream is still open");
    assert_eq!(next.data["version"], 2);
}

#[tokio::test]
async fn a_head_begun_along_with_an_answered_request_and_left_unfinished_is_cut_too() {
    let app = with_head_timeout().await;
    let mut conn = Conn::open(&app, "127.0.0.1").await;
    // The start of a second head arrives with the first request, in actix's buffer before
    // the first answer; a byte more, later, then nothing.
    conn.send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\nGET /hea")
        .await;
    let answer = conn.answer().await.expect("the first request's answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // Not a wait for a result: the next byte of the head comes later, as a slow client's.
    tokio::time::sleep(Duration::from_millis(100)).await;
    conn.send("l").await;
    conn.closed_within(Duration::from_secs(4)).await;
}

#[tokio::test]
async fn a_first_head_that_stalls_is_answered_408_after_the_head_timeout() {
    let app = with_head_timeout().await;
    // Timed from before the connection: the server's timer starts once it is accepted.
    let opened = Instant::now();
    let mut conn = Conn::open(&app, "127.0.0.1").await;
    conn.send("GET /heal").await;
    // actix's own timer, set from HEAD_TIMEOUT_MS (its default is 5 s).
    conn.closed_within(Duration::from_secs(4)).await;
    let took = opened.elapsed();
    assert!(
        took >= HEAD_TIMEOUT - Duration::from_millis(100),
        "{took:?}"
    );
    let answer = String::from_utf8_lossy(&conn.unread).into_owned();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn connections_over_the_per_address_cap_are_answered_429_while_other_addresses_are_served() {
    let app = spawn_app_with(Settings {
        max_connections_per_ip: Some(3),
        max_streams_per_ip: 2,
        ..test_settings()
    })
    .await;
    // Three kept-alive connections from one address, each answered (so each is counted).
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut conn = Conn::open(&app, "127.0.0.1").await;
        assert_eq!(conn.get("/healthz").await, "HTTP/1.1 200 OK");
        held.push(conn);
    }
    // A fourth is answered 429 and closed.
    let mut extra = Conn::open(&app, "127.0.0.1").await;
    extra
        .send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        .await;
    let refused = extra
        .answer()
        .await
        .expect("a 429, not a dropped connection");
    let (head, body) = refused.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 429"), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("\r\nretry-after: 5"), "{head}");
    assert!(head.contains("\r\nconnection: close"), "{head}");
    assert!(
        head.contains("\r\ncontent-type: application/problem+json"),
        "{head}"
    );
    let problem: Value = serde_json::from_str(body).unwrap();
    assert_eq!(problem["code"], "rate_limited");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_CONNECTIONS_PER_IP"),
        "{problem}"
    );
    extra.closed_within(Duration::from_secs(3)).await;
    // The connections within the cap are still served, and so is another address.
    assert_eq!(held[0].get("/healthz").await, "HTTP/1.1 200 OK");
    let mut other = Conn::open(&app, "127.0.0.2").await;
    assert_eq!(other.get("/healthz").await, "HTTP/1.1 200 OK");
    other
        .send("GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n")
        .await;
    let metrics = other.answer().await.unwrap();
    assert!(
        metrics.contains("\ndomino_connection_refusals_total 1\n"),
        "{metrics}"
    );
    // One closes: its place is free again.
    drop(held.pop());
    let start = Instant::now();
    loop {
        let mut again = Conn::open(&app, "127.0.0.1").await;
        if again.get("/healthz").await == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the place never came back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
