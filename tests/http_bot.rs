//! The example bot for bot authors (examples/http_bot.rs) plays whole matches against the
//! real server, over HTTP only, so the example stays true to the API.

#[path = "../examples/http_bot.rs"]
#[allow(dead_code)] // its `main` and a few fields serve the command line only
mod http_bot;

use std::time::Duration;

use domino_server::settings::Settings;
use domino_server::startup::Application;

/// Well above a debug build's match (well under a second), far below a hang.
const MATCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The real server with the memory store on a free loopback port; its base URL.
async fn spawn_server() -> (String, actix_web::dev::ServerHandle) {
    let settings = Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        ..Settings::default()
    };
    let app = Application::build(settings)
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
    handle.stop(false).await;
}

/// Two example bots at one table: each waits for its turn on the event stream, so this
/// covers the stream (the built-in opponent above answers inside the bot's own requests).
#[tokio::test]
async fn two_example_bots_play_each_other_over_the_event_stream() {
    let (server, handle) = spawn_server().await;
    let client = reqwest::Client::new();
    let created: serde_json::Value = client
        .post(format!("{server}/v1/games"))
        .json(&serde_json::json!({"preset": "muggins", "seed": "two bots"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let game = created["game_id"].as_str().unwrap().to_owned();
    let first = http_bot::run(args(&server, Some(game.clone()), "", "first"));
    let second = http_bot::run(args(&server, Some(game), "", "second"));
    let (first, second) =
        tokio::time::timeout(MATCH_TIMEOUT, async { tokio::join!(first, second) })
            .await
            .expect("the match ends in time");
    let (first, second) = (first.expect("first plays"), second.expect("second plays"));
    assert_finished(&first);
    assert_finished(&second);
    assert_ne!(first.seat, second.seat);
    assert_eq!(first.final_view.scores, second.final_view.scores);
    handle.stop(false).await;
}
