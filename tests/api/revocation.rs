//! Revocation reaches open streams: a new player key ends every stream the old key opened
//! (the player's stream and game streams opened with it), on every process sharing the
//! store, while streams opened with the new key go on; a seat handed to a bot ends that
//! seat's game stream after the event that says so.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, on_both_stores, spawn_app_with_cluster_prefix,
    spawn_app_with_redis_prefix, unique_prefix,
};

on_both_stores!(
    a_new_key_ends_the_streams_the_old_key_opened_and_not_the_new_keys,
    a_seat_handed_to_a_bot_ends_its_seats_stream_after_saying_so,
);

/// Generous for a slow machine: the stream ends as soon as the word of the new key
/// arrives (pub/sub), and without the revocation it never ends.
const WITHIN: Duration = Duration::from_secs(10);

async fn rotate(app: &TestApp, key: &str) -> String {
    let res = app
        .client
        .post(app.url("/v1/players/me/key"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    res.json::<Value>().await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Reads `stream` until it ends (true) or `within` passes with it open (false).
async fn ends(stream: &mut EventStream, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while !stream.ended {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.next(left).await;
    }
    true
}

/// A game between ann and bob (a challenge accepted): its id.
async fn game_between(app: &TestApp, ann: &str, bob: &str) -> String {
    let made: Value = app
        .post_as(
            "/v1/challenges",
            ann,
            Some(&json!({"opponents": ["bob"], "preset": "block"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let id = made["id"].as_str().unwrap();
    let accepted: Value = app
        .post_as(&format!("/v1/challenges/{id}/accept"), bob, None)
        .await
        .json()
        .await
        .unwrap();
    accepted["game_id"].as_str().unwrap().to_owned()
}

/// Streams opened on `a`, the key replaced through `b` (the same server, or another one on
/// the same store).
async fn streams_of_an_old_key_end(a: &TestApp, b: &TestApp) {
    let (_, ann) = a.new_player("ann").await;
    let (_, bob) = a.new_player("bob").await;
    let game = game_between(a, &ann, &bob).await;
    let mut news = a.player_stream(&ann).await;
    let mut seat = EventStream::open_as(a, &game, None, Some(&ann)).await;
    assert!(
        seat.next(Duration::from_secs(5)).await.is_some(),
        "the seat's view"
    );
    let fresh = rotate(b, &ann).await;
    assert!(ends(&mut news, WITHIN).await, "the player's stream went on");
    assert!(ends(&mut seat, WITHIN).await, "the seat's stream went on");
    // The new key's streams are not ended by the change that made it.
    let mut news = a.player_stream(&fresh).await;
    let mut seat = EventStream::open_as(a, &game, None, Some(&fresh)).await;
    assert!(seat.next(Duration::from_secs(5)).await.is_some());
    b.post_as(
        "/v1/challenges",
        &bob,
        Some(&json!({"opponents": ["ann"], "preset": "block"})),
    )
    .await;
    let told = news.next(Duration::from_secs(5)).await.expect("news");
    assert_eq!(told.event.as_deref(), Some("challenge"), "{told:?}");
    assert!(!ends(&mut seat, Duration::from_millis(500)).await);
}

async fn a_new_key_ends_the_streams_the_old_key_opened_and_not_the_new_keys(app: TestApp) {
    streams_of_an_old_key_end(&app, &app).await;
}

#[tokio::test]
async fn redis_a_new_key_made_through_another_server_ends_the_old_keys_streams() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    streams_of_an_old_key_end(&a, &b).await;
}

#[tokio::test]
async fn cluster_a_new_key_made_through_another_server_ends_the_old_keys_streams() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    streams_of_an_old_key_end(&a, &b).await;
}

async fn a_seat_handed_to_a_bot_ends_its_seats_stream_after_saying_so(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "all_fives", "seats": 3, "seed": "three"}))
        .await;
    let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
    let quitter = &players[(turn + 1) % 3];
    let mut stream = EventStream::open_as(&app, &id, None, Some(&quitter.token)).await;
    assert!(stream.next(Duration::from_secs(5)).await.is_some());
    app.play(&id, &quitter.token, &json!({"type": "resign"}))
        .await;
    let said = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the event of the resignation");
    assert_eq!(said.data["moves"][0]["move"]["type"], "resign", "{said:?}");
    assert!(
        ends(&mut stream, WITHIN).await,
        "the abandoned seat's stream went on"
    );
}
