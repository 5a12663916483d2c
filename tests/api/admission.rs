//! The one admission path (docs/operating.md, "Operating it in public"): every game made,
//! however it is made, counts against an address's games in play (`MAX_GAMES_PER_IP`)
//! and the store's capacity, and a game refused is never promised: an acceptance that
//! cannot make its game answers the refusal and leaves the challenge open; a match whose
//! next deal is refused waits for room. Running matches are counted exactly, however many
//! challenges their maker made.

use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_both_stores, spawn_app_with, test_settings};
use crate::proxy::redis_url;

/// `settings` on memory, or on Redis with a prefix of its own.
fn on(redis: bool, settings: Settings) -> Settings {
    if redis {
        Settings {
            redis_url: Some(redis_url()),
            redis_key_prefix: crate::helpers::unique_prefix(),
            ..settings
        }
    } else {
        settings
    }
}

/// At most `games` games in play per address, told by one trusted proxy.
fn capped(redis: bool, games: usize) -> Settings {
    on(
        redis,
        Settings {
            max_games_per_ip: Some(games),
            proxy_hops: 1,
            ..test_settings()
        },
    )
}

/// `POST path` with `key`, as the client at `address`.
async fn post_from(
    app: &TestApp,
    address: &str,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = app
        .client
        .post(app.url(path))
        .bearer_auth(key)
        .header("X-Forwarded-For", address);
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().await.unwrap()
}

async fn get_as(app: &TestApp, path: &str, key: &str) -> Value {
    let res = app.get_as(path, Some(key)).await;
    assert_eq!(res.status().as_u16(), 200, "{path}");
    res.json().await.unwrap()
}

/// `POST /v1/games` of a game waiting for players, as the client at `address`.
async fn create_from(app: &TestApp, address: &str) -> reqwest::Response {
    app.client
        .post(app.url("/v1/games"))
        .header("X-Forwarded-For", address)
        .json(&json!({"preset": "block"}))
        .send()
        .await
        .unwrap()
}

/// `domino_challenges_total{event="accepted"}` (0 while absent).
async fn accepted_count(app: &TestApp) -> u64 {
    let metrics = app.get("/metrics").await.text().await.unwrap();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("domino_challenges_total{event=\"accepted\"} "))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// A game waiting for players, made by `address`: it counts among its games in play.
async fn hold_a_game(app: &TestApp, address: &str) {
    let res = create_from(app, address).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
}

async fn an_accept_refused_by_the_address_cap_answers_so_and_leaves_the_challenge_open(
    redis: bool,
) {
    let app = spawn_app_with(capped(redis, 1)).await;
    let (full, free) = ("192.0.2.10", "192.0.2.11");
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    hold_a_game(&app, full).await;
    let res = post_from(
        &app,
        full,
        "/v1/challenges",
        &ann,
        Some(json!({"opponents": ["bob"], "preset": "block"})),
    )
    .await;
    assert_eq!(res.status().as_u16(), 201);
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let accept = format!("/v1/challenges/{id}/accept");
    let res = post_from(&app, full, &accept, &bob, None).await;
    let problem = assert_problem(res, 429, "too_many_games").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_GAMES_PER_IP"),
        "{problem}"
    );
    // Nothing was promised: the challenge is open, no game named, none in bob's games.
    let seen = get_as(&app, &format!("/v1/challenges/{id}"), &bob).await;
    assert_eq!(seen["status"], "open", "{seen}");
    assert!(seen["game_id"].is_null(), "{seen}");
    let mine = get_as(&app, "/v1/players/me/games", &bob).await;
    assert_eq!(mine["games"].as_array().unwrap().len(), 0, "{mine}");
    // Open again, it is listed and counted open again (its place in both caps).
    let listed = get_as(&app, "/v1/challenges?direction=in", &bob).await;
    assert_eq!(listed["challenges"][0]["id"], id.as_str(), "{listed}");
    assert_eq!(
        accepted_count(&app).await,
        0,
        "an acceptance undone is not counted"
    );
    // From an address with room, the same acceptance makes the game.
    let res = post_from(&app, free, &accept, &bob, None).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    assert_eq!(accepted_count(&app).await, 1);
    let accepted: Value = res.json().await.unwrap();
    assert_eq!(accepted["status"], "accepted");
    let game = accepted["game_id"].as_str().unwrap();
    assert_eq!(app.get(&format!("/v1/games/{game}")).await.status(), 200);
    // And that game counts against the address that accepted it.
    let res = create_from(&app, free).await;
    assert_problem(res, 429, "too_many_games").await;
}

#[tokio::test]
async fn memory_an_accept_refused_by_the_address_cap_answers_so_and_leaves_the_challenge_open() {
    an_accept_refused_by_the_address_cap_answers_so_and_leaves_the_challenge_open(false).await;
}

#[tokio::test]
async fn redis_an_accept_refused_by_the_address_cap_answers_so_and_leaves_the_challenge_open() {
    an_accept_refused_by_the_address_cap_answers_so_and_leaves_the_challenge_open(true).await;
}

/// The memory store full: an accept answers 503 and the challenge stays open.
#[tokio::test]
async fn an_accept_into_a_full_store_answers_503_and_leaves_the_challenge_open() {
    let app = spawn_app_with(Settings {
        memory_max_games: Some(1),
        ..test_settings()
    })
    .await;
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    app.create_game(json!({"preset": "block"})).await;
    let made: Value = app
        .post_as(
            "/v1/challenges",
            &ann,
            Some(&json!({"opponents": ["bob"], "preset": "block"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let id = made["id"].as_str().unwrap();
    let res = app
        .post_as(&format!("/v1/challenges/{id}/accept"), &bob, None)
        .await;
    assert_problem(res, 503, "store_unavailable").await;
    let seen = get_as(&app, &format!("/v1/challenges/{id}"), &ann).await;
    assert_eq!(seen["status"], "open", "{seen}");
    assert!(seen["game_id"].is_null(), "{seen}");
}

/// A match's games count against its maker's address: with room for two games, a match
/// of two deals at once runs one deal (two games) at a time, and the address can make no
/// other game meanwhile; when a deal ends, the next is made.
async fn a_matchs_games_count_against_its_makers_address_and_wait_for_room(redis: bool) {
    let app = spawn_app_with(capped(redis, 2)).await;
    let (home, away) = ("192.0.2.20", "192.0.2.21");
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let res = post_from(
        &app,
        home,
        "/v1/matches",
        &ann,
        Some(
            json!({"opponent": "bob", "preset": "block", "rules": {"target": null, "rounds": 1},
                    "deals": 2, "parallel": 4}),
        ),
    )
    .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = post_from(
        &app,
        away,
        &format!("/v1/challenges/{id}/accept"),
        &bob,
        None,
    )
    .await;
    assert_eq!(res.status().as_u16(), 200);
    let running = app
        .get(&format!("/v1/matches/{id}"))
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(running["status"], "running", "{running}");
    let games = running["games"].as_array().unwrap().clone();
    assert_eq!(games.len(), 2, "one deal made, the other waits: {running}");
    let res = create_from(&app, home).await;
    assert_problem(res, 429, "too_many_games").await;
    // Both resign their games of the first deal; the second deal is made.
    for game in &games {
        let game_id = game["game_id"].as_str().unwrap();
        let res = app
            .post_as(
                &format!("/v1/games/{game_id}/moves"),
                &ann,
                Some(&json!({"type": "resign"})),
            )
            .await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen = app
            .get(&format!("/v1/matches/{id}"))
            .await
            .json::<Value>()
            .await
            .unwrap();
        if seen["games"].as_array().unwrap().len() == 4 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second deal was not made: {seen}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn memory_a_matchs_games_count_against_its_makers_address_and_wait_for_room() {
    a_matchs_games_count_against_its_makers_address_and_wait_for_room(false).await;
}

#[tokio::test]
async fn redis_a_matchs_games_count_against_its_makers_address_and_wait_for_room() {
    a_matchs_games_count_against_its_makers_address_and_wait_for_room(true).await;
}

on_both_stores!(running_matches_are_counted_however_many_challenges_their_maker_made);

/// Four running matches, then a hundred and ten challenges made and canceled: the fifth
/// match is still refused (the count once looked at the newest hundred challenges only).
async fn running_matches_are_counted_however_many_challenges_their_maker_made(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    app.new_player("bob").await;
    // Against a level, waiting for ann's moves: running until she plays.
    let body = json!({"opponent": "greedy", "preset": "block", "deals": 5, "parallel": 1});
    for _ in 0..4 {
        let res = app.post_as("/v1/matches", &ann, Some(&body)).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    }
    for _ in 0..110 {
        let made: Value = app
            .post_as(
                "/v1/challenges",
                &ann,
                Some(&json!({"opponents": ["bob"], "preset": "block"})),
            )
            .await
            .json()
            .await
            .unwrap();
        let id = made["id"].as_str().unwrap();
        let res = app
            .client
            .delete(app.url(&format!("/v1/challenges/{id}")))
            .bearer_auth(&ann)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200);
    }
    let res = app.post_as("/v1/matches", &ann, Some(&body)).await;
    let problem = assert_problem(res, 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("4 running matches"),
        "{problem}"
    );
}

/// Seeks: the game counts against the address of the seek that completed it. Refused,
/// that seek's request answers the refusal and the seek is canceled, while the seek it
/// was paired with waits again and pairs with the next comer.
async fn a_seek_whose_game_its_address_cannot_hold_is_refused_and_its_partner_waits_again(
    redis: bool,
) {
    let app = spawn_app_with(capped(redis, 1)).await;
    let (full, free, other) = ("192.0.2.30", "192.0.2.31", "192.0.2.32");
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let (_, cat) = app.new_player("cat").await;
    hold_a_game(&app, full).await;
    let wish = json!({"preset": "block"});
    let res = post_from(&app, free, "/v1/seeks", &bob, Some(wish.clone())).await;
    assert_eq!(res.status().as_u16(), 201);
    let bobs = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Ann's seek is the newer, by a millisecond at least.
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    // Refused: ann's request answers so; or, should a sweep have paired the pool between
    // her seek's arrival and her request's own pairing, her seek reads canceled. Either
    // way no game was promised.
    let res = post_from(&app, full, "/v1/seeks", &ann, Some(wish.clone())).await;
    if res.status().as_u16() == 201 {
        let anns: Value = res.json().await.unwrap();
        assert_eq!(anns["status"], "canceled", "{anns}");
        assert!(anns["game_id"].is_null(), "{anns}");
    } else {
        assert_problem(res, 429, "too_many_games").await;
    }
    let waiting = get_as(&app, &format!("/v1/seeks/{bobs}"), &bob).await;
    assert_eq!(waiting["status"], "waiting", "{waiting}");
    let mine = get_as(&app, "/v1/players/me/games", &ann).await;
    assert_eq!(mine["games"].as_array().unwrap().len(), 0, "{mine}");
    let res = post_from(&app, other, "/v1/seeks", &cat, Some(wish)).await;
    assert_eq!(res.status().as_u16(), 201);
    let cats: Value = res.json().await.unwrap();
    assert_eq!(cats["status"], "matched", "{cats}");
    let game = cats["game_id"].as_str().unwrap();
    assert_eq!(app.get(&format!("/v1/games/{game}")).await.status(), 200);
    let matched = get_as(&app, &format!("/v1/seeks/{bobs}"), &bob).await;
    assert_eq!(matched["game_id"], game, "{matched}");
}

#[tokio::test]
async fn memory_a_seek_whose_game_its_address_cannot_hold_is_refused_and_its_partner_waits_again() {
    a_seek_whose_game_its_address_cannot_hold_is_refused_and_its_partner_waits_again(false).await;
}

#[tokio::test]
async fn redis_a_seek_whose_game_its_address_cannot_hold_is_refused_and_its_partner_waits_again() {
    a_seek_whose_game_its_address_cannot_hold_is_refused_and_its_partner_waits_again(true).await;
}
