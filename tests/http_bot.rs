//! The example bot for bot authors (examples/http_bot.rs) plays whole matches against the
//! real server, over HTTP only, so the example stays true to the API.

#[path = "../examples/http_bot.rs"]
#[allow(dead_code)] // its `main` and a few fields serve the command line only
mod http_bot;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use domino_server::settings::Settings;
use domino_server::startup::Application;

/// Well above a debug build's match (well under a second), far below a hang.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The real server with the memory store on a free loopback port; its base URL.
async fn spawn_server() -> (String, domino_server::startup::Stopper) {
    let settings = Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        ..Settings::default()
    };
    // The example creates its games without a seed: the server deals them from a fixed
    // one, so every run plays the same deals.
    let app = Application::build_for_test(
        settings,
        domino_server::service::Faults::default(),
        Some(domino_server::engine::Seed::from_text("tests/http_bot.rs")),
    )
    .await
    .expect("the server builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    (address, handle)
}

fn args(server: &str, game: Option<String>, preset: &str, name: &str) -> http_bot::Args {
    http_bot::Args {
        server: server.to_owned(),
        game,
        preset: preset.to_owned(),
        opponent: "greedy".to_owned(),
        name: name.to_owned(),
    }
}

fn assert_finished(summary: &http_bot::Summary) {
    let view = &summary.final_view;
    assert_eq!(view.status, "finished", "{view:?}");
    let result = view.result.as_ref().expect("a finished match has a result");
    assert_eq!(result.scores, view.scores);
    assert!(summary.moves_made > 0, "{summary:?}");
}

#[tokio::test]
async fn the_example_bot_plays_a_whole_match_against_a_greedy_bot() {
    let (server, handle) = spawn_server().await;
    for preset in ["all_fives", "muggins", "block"] {
        let run = http_bot::run(args(&server, None, preset, "example"));
        let summary = tokio::time::timeout(MATCH_TIMEOUT, run)
            .await
            .expect("the match ends in time")
            .expect("the bot plays without error");
        assert_finished(&summary);
        assert_eq!(summary.seat, 0);
    }
    handle.stop().await;
}

/// Two example bots at one table: each waits for its turn on the event stream, so this
/// covers the stream (the built-in opponent above answers inside the bot's own requests).
#[tokio::test]
async fn two_example_bots_play_each_other_over_the_event_stream() {
    let (server, handle) = spawn_server().await;
    let (first, second) = two_bots_at_one_table(&server, &server).await;
    assert_ne!(first.seat, second.seat);
    assert_eq!(first.final_view.scores, second.final_view.scores);
    handle.stop().await;
}

/// The same through a proxy that cuts every event stream after its first event: a bot
/// must resume with `Last-Event-ID` each time, and still misses no turn.
#[tokio::test]
async fn the_example_bot_resumes_an_event_stream_cut_after_every_event() {
    let (server, handle) = spawn_server().await;
    let port: u16 = server.rsplit(':').next().unwrap().parse().unwrap();
    let cuts = Arc::new(AtomicUsize::new(0));
    let proxy = stream_cutting_proxy(([127, 0, 0, 1], port).into(), cuts.clone());
    let (first, second) = two_bots_at_one_table(&server, &format!("http://{proxy}")).await;
    assert_eq!(first.final_view.scores, second.final_view.scores);
    assert!(cuts.load(Ordering::SeqCst) > 5, "the streams were cut");
    handle.stop().await;
}

/// Creates a two-seat game without built-in bots and seats an example bot talking to
/// `first` and one talking to `second` (each the server or a proxy in front of it).
async fn two_bots_at_one_table(
    first: &str,
    second: &str,
) -> (http_bot::Summary, http_bot::Summary) {
    let client = reqwest::Client::new();
    let created: serde_json::Value = client
        .post(format!("{first}/v1/games"))
        .json(&serde_json::json!({"preset": "muggins", "seed": "two bots"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let game = created["game_id"].as_str().unwrap().to_owned();
    let first = http_bot::run(args(first, Some(game.clone()), "", "first"));
    let second = http_bot::run(args(second, Some(game), "", "second"));
    let (first, second) =
        tokio::time::timeout(MATCH_TIMEOUT, async { tokio::join!(first, second) })
            .await
            .expect("the match ends in time");
    let (first, second) = (first.expect("first plays"), second.expect("second plays"));
    assert_finished(&first);
    assert_finished(&second);
    (first, second)
}

/// A TCP proxy to `upstream` that forwards everything, except that it closes a connection
/// carrying an event stream right after the stream's first whole event (counting `cuts`).
/// Plain threads: the proxy needs nothing from the runtime under test.
fn stream_cutting_proxy(upstream: SocketAddr, cuts: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    thread::spawn(move || {
        for client in listener.incoming() {
            let (Ok(client), Ok(server)) = (client, TcpStream::connect(upstream)) else {
                return;
            };
            // A pooled connection may carry other requests before its event stream.
            let streaming = Arc::new(AtomicBool::new(false));
            let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let asked = streaming.clone();
            thread::spawn(move || {
                let mut buf = [0; 4096];
                while let Ok(n @ 1..) = from.read(&mut buf) {
                    if find(&buf[..n], b"/events ").is_some() {
                        asked.store(true, Ordering::SeqCst);
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                let _ = to.shutdown(Shutdown::Write);
            });
            let cuts = cuts.clone();
            thread::spawn(move || {
                let (mut from, mut to) = (server, client);
                let mut buf = [0; 4096];
                let mut stream = Vec::new();
                while let Ok(n @ 1..) = from.read(&mut buf) {
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    if streaming.load(Ordering::SeqCst) {
                        stream.extend_from_slice(&buf[..n]);
                        let data = find(&stream, b"\ndata: ");
                        if data.is_some_and(|at| find(&stream[at..], b"\n\n").is_some()) {
                            cuts.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                    }
                }
                let _ = to.shutdown(Shutdown::Both);
                let _ = from.shutdown(Shutdown::Both);
            });
        }
    });
    address
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
