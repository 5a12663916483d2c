//! The event stream: one event per version, public facts (and a seat's own view, with its
//! token), resumable.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{EventStream, TestApp, assert_problem, on_every_store};

on_every_store!(
    the_event_stream_sends_an_event_with_the_new_version_after_a_move,
    last_event_id_resumes_with_the_later_versions_from_history,
    the_event_stream_shows_a_draw_without_its_tile,
    the_event_stream_ends_after_the_match_ends,
    a_seat_s_stream_carries_that_seat_s_view_with_each_event,
    a_stream_asked_for_with_a_token_of_no_seat_is_refused,
    the_lobby_stream_tells_of_games_opened_filled_and_finished,
);

const WITHIN: Duration = Duration::from_secs(4);

async fn the_event_stream_sends_an_event_with_the_new_version_after_a_move(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "sse"}))
        .await;
    let spectator = app.view(&id, None).await;
    let version = spectator["version"].as_u64().unwrap();
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let mut stream = EventStream::open(&app, &id, None).await;
    // A new stream starts with the version the game is at, so a client knows where it is.
    let opening = stream
        .next(WITHIN)
        .await
        .expect("the current version first");
    assert_eq!(opening.id, Some(version));
    assert_eq!(opening.data["moves"], json!([]));
    let view = app.view(&id, Some(&players[turn].token)).await;
    let mv = view["legal_moves"][0].clone();
    let answer = app.play(&id, &players[turn].token, &mv).await;

    let event = stream.next(WITHIN).await.expect("an event after the move");
    assert_eq!(event.id, Some(version + 1));
    assert_eq!(event.event.as_deref(), Some("version"));
    assert_eq!(event.data["version"], version + 1);
    assert_eq!(event.data["status"], "playing");
    assert_eq!(event.data["turn"], answer["round"]["turn"]);
    assert_eq!(
        event.data["moves"],
        json!([{"seat": turn, "move": {"type": "play", "tile": mv["tile"]}}])
    );
    assert!(
        stream
            .comments
            .iter()
            .any(|c| c.contains(&format!("version {version}"))),
        "the greeting names the version: {:?}",
        stream.comments
    );
    // The next move, the next event.
    let other = &players[1 - turn];
    let theirs = app.view(&id, Some(&other.token)).await;
    app.play(&id, &other.token, &theirs["legal_moves"][0]).await;
    let event = stream.next(WITHIN).await.expect("a second event");
    assert_eq!(event.id, Some(version + 2));
}

async fn last_event_id_resumes_with_the_later_versions_from_history(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "classic", "seed": "resume"}))
        .await;
    app.play_moves(&id, &players, 9, 3).await;
    let version = app.view(&id, None).await["version"].as_u64().unwrap();
    assert_eq!(version, 6, "created, two seats, three moves");

    let mut stream = EventStream::open(&app, &id, Some(1)).await;
    let mut ids = Vec::new();
    for _ in 2..=version {
        let event = stream.next(WITHIN).await.expect("an event from history");
        assert_eq!(event.data["version"], event.id.unwrap());
        ids.push(event.id.unwrap());
    }
    assert_eq!(ids, (2..=version).collect::<Vec<_>>());

    // Resuming at the last version sends nothing old, then the next one live.
    let mut stream = EventStream::open(&app, &id, Some(version)).await;
    assert!(stream.next(Duration::from_millis(300)).await.is_none());
    app.play_moves(&id, &players, 10, 1).await;
    let event = stream.next(WITHIN).await.expect("the live event");
    assert_eq!(event.id, Some(version + 1));
}

async fn the_event_stream_shows_a_draw_without_its_tile(app: TestApp) {
    let deal = json!({
        "hands": [
            ["6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0"],
            ["0-1", "0-2", "0-3", "0-4", "0-5", "1-2", "1-3"]
        ],
        "boneyard": ["1-4", "0-6", "1-5", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5",
                     "3-6", "4-5", "4-6", "5-6"]
    });
    let (id, players) = app
        .start_game(json!({"preset": "draw", "deal": deal}))
        .await;
    app.play(
        &id,
        &players[0].token,
        &json!({"type": "play", "tile": "6-6"}),
    )
    .await;
    let mut stream = EventStream::open(&app, &id, Some(4)).await;
    app.play(&id, &players[1].token, &json!({"type": "draw"}))
        .await;
    let event = stream.next(WITHIN).await.expect("the draw's event");
    assert_eq!(event.id, Some(5));
    assert_eq!(
        event.data,
        json!({"version": 5, "status": "playing", "turn": 1,
               "moves": [{"seat": 1, "move": {"type": "draw"}}]})
    );
}

async fn the_event_stream_ends_after_the_match_ends(app: TestApp) {
    let (id, players) = app
        .start_game(
            json!({"preset": "block", "rules": {"target": 1}, "seed": "end",
                           "bots": [{"seat": 1, "level": "random"}]}),
        )
        .await;
    let mut stream = EventStream::open(&app, &id, Some(1)).await;
    let played = app.play_match(&id, &players, 4).await;
    let last_version = played.last["version"].as_u64().unwrap();
    let mut last: Option<Value> = None;
    while let Some(event) = stream.next(WITHIN).await {
        last = Some(event.data);
    }
    assert!(stream.ended, "the server closed the stream");
    let last = last.expect("events");
    assert_eq!(last["version"], last_version);
    assert_eq!(last["status"], "finished");
    assert_eq!(last["turn"], Value::Null);
    // Asked again after the end, the stream has nothing more and closes.
    let mut stream = EventStream::open(&app, &id, Some(last_version)).await;
    assert!(stream.next(WITHIN).await.is_none());
    assert!(stream.ended, "closed at once");
}

async fn a_seat_s_stream_carries_that_seat_s_view_with_each_event(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "seat stream"}))
        .await;
    let me = &players[0];
    let mut mine = EventStream::open_as(&app, &id, None, Some(&me.token)).await;
    let mut public = EventStream::open(&app, &id, None).await;
    let opening = mine.next(WITHIN).await.expect("the current version first");
    assert_eq!(opening.data["view"]["you"], 0);
    assert_eq!(
        opening.data["view"]["hand"],
        app.view(&id, Some(&me.token)).await["hand"]
    );
    let spectators = public
        .next(WITHIN)
        .await
        .expect("the current version first");
    assert!(spectators.data.get("view").is_none(), "{}", spectators.data);

    let turn = opening.data["turn"].as_u64().unwrap() as usize;
    let view = app.view(&id, Some(&players[turn].token)).await;
    app.play(&id, &players[turn].token, &view["legal_moves"][0])
        .await;
    let event = mine.next(WITHIN).await.expect("an event after the move");
    let seen = &event.data["view"];
    assert!(seen["version"].as_u64() >= event.id, "{seen}");
    assert_eq!(seen["you"], 0);
    // The seat's own view, as it would read it: its hand, its turn, its legal moves.
    let now = app.view(&id, Some(&me.token)).await;
    for field in ["hand", "your_turn", "legal_moves", "version"] {
        assert_eq!(seen[field], now[field], "{field}");
    }
    let spectators = public.next(WITHIN).await.expect("an event after the move");
    assert!(spectators.data.get("view").is_none());
}

async fn a_stream_asked_for_with_a_token_of_no_seat_is_refused(app: TestApp) {
    let (id, _) = app.start_game(json!({"preset": "block"})).await;
    let res = app
        .client
        .get(app.url(&format!("/v1/games/{id}/events")))
        .bearer_auth("not-a-seat")
        .send()
        .await
        .unwrap();
    assert_problem(res, 401, "unauthorized").await;
}

async fn the_lobby_stream_tells_of_games_opened_filled_and_finished(app: TestApp) {
    let mut news = EventStream::lobby(&app).await;
    let (id, _) = app
        .create_game(json!({"preset": "block", "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    // Other tests' games share the stream: skip their news.
    let mut next_of_mine = async |kind: &str| loop {
        let event = news.next(WITHIN).await.expect("news of the game");
        let about = event.data["game_id"]
            .as_str()
            .or(event.data["game"]["game_id"].as_str());
        if about == Some(id.as_str()) {
            assert_eq!(event.event.as_deref(), Some(kind), "{}", event.data);
            assert_eq!(event.data["type"], kind);
            return event.data;
        }
    };
    let opened = next_of_mine("opened").await;
    assert_eq!(opened["game"]["free_seats"], json!([0]));
    assert_eq!(opened["game"]["preset"], "block");

    let me = app.take_seat(&id, "alice").await;
    next_of_mine("filled").await;
    app.play(&id, &me.token, &json!({"type": "resign"})).await;
    next_of_mine("finished").await;
}
