//! Streams many follow at once are rendered once a process: the lobby's news, a game's
//! events to its spectators. Every follower reads the same bytes, and the server renders
//! no more events than one follower reads (before, each follower cost a rendering, and the
//! lobby a load of each opened game, per follower).

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{EventStream, TestApp, on_both_stores};

on_both_stores!(
    five_lobby_followers_read_the_same_news_rendered_once,
    five_spectators_read_the_same_events_each_rendered_once,
);

const WITHIN: Duration = Duration::from_secs(5);
const FOLLOWERS: usize = 5;

/// Each event of `stream` (name and data) until the one for which `last` is true.
async fn read_until(stream: &mut EventStream, last: impl Fn(&str, &Value) -> bool) -> Vec<Value> {
    let mut read = Vec::new();
    loop {
        let event = stream.next(WITHIN).await.expect("an event");
        let name = event.event.clone().unwrap_or_default();
        read.push(json!([name, event.data]));
        if last(&name, &event.data) {
            return read;
        }
    }
}

async fn five_lobby_followers_read_the_same_news_rendered_once(app: TestApp) {
    let mut followers = Vec::new();
    for _ in 0..FOLLOWERS {
        followers.push(EventStream::lobby(&app).await);
    }
    let body =
        json!({"preset": "block", "seed": "fanout", "bots": [{"seat": 1, "level": "greedy"}]});
    let mut games = Vec::new();
    for _ in 0..3 {
        games.push(app.create_game(body.clone()).await.0);
    }
    let me = app.take_seat(&games[0], "alice").await;
    app.play(&games[0], &me.token, &json!({"type": "resign"}))
        .await;
    let last = games[0].clone();
    let mut seen = Vec::new();
    for follower in &mut followers {
        seen.push(
            read_until(follower, |name, data| {
                name == "finished" && data["game_id"] == last.as_str()
            })
            .await,
        );
    }
    // Three opened, one filled, one finished: the same five events, in the same order.
    assert_eq!(seen[0].len(), 5, "{:?}", seen[0]);
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
    let rendered = app.events_rendered("lobby").await;
    assert!(
        rendered <= seen[0].len(),
        "{rendered} lobby events rendered for {FOLLOWERS} followers of {}",
        seen[0].len()
    );
}

async fn five_spectators_read_the_same_events_each_rendered_once(app: TestApp) {
    let (id, players) = app
        .start_game(
            json!({"preset": "block", "rules": {"target": 1}, "seed": "fanout",
                           "bots": [{"seat": 1, "level": "greedy"}]}),
        )
        .await;
    let mut spectators = Vec::new();
    for _ in 0..FOLLOWERS {
        spectators.push(EventStream::open(&app, &id, None).await);
    }
    app.play_match(&id, &players, 7).await;
    let mut seen = Vec::new();
    for spectator in &mut spectators {
        seen.push(read_until(spectator, |_, data| data["status"] == "finished").await);
    }
    assert!(seen[0].len() >= 2, "{:?}", seen[0]);
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
    let rendered = app.events_rendered("spectator").await;
    assert!(
        rendered <= seen[0].len(),
        "{rendered} spectator events rendered for {FOLLOWERS} spectators of {}",
        seen[0].len()
    );
    // A seat's stream is its own: its events carry its view, rendered for it alone.
    let mut seat = EventStream::open_as(&app, &id, Some(0), Some(&players[0].token)).await;
    let event = seat.next(WITHIN).await.expect("an event");
    assert!(event.data["view"].is_object(), "{}", event.data);
}
