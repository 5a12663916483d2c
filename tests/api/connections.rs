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
    let (id, created) = app.create_game(json!({"preset": "draw"})).await;
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
    // At once: not after the grace, nor after idle keep-alive connections time out (5 s).
    assert!(answered < Duration::from_secs(3), "{answered:?}");
    assert!(exited < Duration::from_secs(3), "{exited:?}");
}
