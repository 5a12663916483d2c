//! Errors in the right words: what a newcomer got wrong is told what to send, naming the
//! field or header at fault.

use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_both_stores, spawn_app};

on_both_stores!(a_rotated_keys_401_says_the_key_is_no_longer_valid_perhaps_rotated);

async fn detail_of(res: reqwest::Response, status: u16, code: &str) -> String {
    let problem = assert_problem(res, status, code).await;
    problem["detail"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_player_key_sent_without_bearer_is_told_to_send_it_as_a_bearer_player_key() {
    let app = spawn_app().await;
    let (_, key) = app.new_player("ann").await;
    let res = app
        .client
        .get(app.url("/v1/players/me"))
        .header("authorization", &key)
        .send()
        .await
        .unwrap();
    let problem = assert_problem(res, 401, "unauthorized").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("`Authorization: Bearer <player key>`"),
        "{detail}"
    );
    assert!(!detail.contains("seat"), "{detail}");
    assert!(
        problem["title"].as_str().unwrap().contains("player key"),
        "{problem}"
    );
}

async fn a_rotated_keys_401_says_the_key_is_no_longer_valid_perhaps_rotated(app: TestApp) {
    let (_, old) = app.new_player("ann").await;
    let res = app.post_as("/v1/players/me/key", &old, None).await;
    assert_eq!(res.status().as_u16(), 200);
    let detail = detail_of(
        app.get_as("/v1/players/me", Some(&old)).await,
        401,
        "unauthorized",
    )
    .await;
    assert!(
        detail.contains("not valid") && detail.contains("rotated"),
        "{detail}"
    );
    assert!(!detail.contains("seat token"), "{detail}");
}

#[tokio::test]
async fn a_match_with_an_unknown_opponent_names_the_opponent_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_player("ann").await;
    let body = json!({"opponent": "godlike", "preset": "block", "deals": 2});
    let res = app.post_as("/v1/matches", &key, Some(&body)).await;
    let detail = detail_of(res, 404, "not_found").await;
    assert!(detail.starts_with("opponent: "), "{detail}");
    assert!(detail.contains("godlike"), "{detail}");
    // A challenge names its own field.
    let body = json!({"opponents": ["godlike"], "preset": "block"});
    let res = app.post_as("/v1/challenges", &key, Some(&body)).await;
    assert!(
        detail_of(res, 404, "not_found")
            .await
            .starts_with("opponents: ")
    );
}

#[tokio::test]
async fn a_bad_rules_value_names_its_field_and_a_number_its_range_on_every_body_that_takes_rules() {
    let app = spawn_app().await;
    let (_, key) = app.new_player("ann").await;
    let rules = json!({"target": -5});
    for (path, body) in [
        ("/v1/games", json!({"preset": "all_fives", "rules": rules})),
        (
            "/v1/challenges",
            json!({"opponents": ["greedy"], "preset": "all_fives", "rules": rules}),
        ),
        (
            "/v1/matches",
            json!({"opponent": "greedy", "preset": "all_fives", "rules": rules}),
        ),
        (
            "/v1/tournaments",
            json!({"name": "Friday fives", "preset": "all_fives", "format": "swiss", "rules": rules}),
        ),
    ] {
        let res = app.post_as(path, &key, Some(&body)).await;
        let detail = detail_of(res, 400, "bad_request").await;
        // The range the engine accepts, not the parser's type.
        assert!(
            detail.contains("rules.target must be between 1 and 2000"),
            "{path}: {detail}"
        );
        assert!(!detail.contains("u16"), "{path}: {detail}");
    }
    // A number past its type says the type's range.
    let body = json!({"preset": "block", "rules": {"hand_size": 300}});
    let detail = detail_of(app.post_json("/v1/games", &body).await, 400, "bad_request").await;
    assert!(
        detail.contains("rules.hand_size must be between 0 and 255"),
        "{detail}"
    );
    // An unknown rule is named too; a good one still passes.
    let body = json!({"preset": "block", "rules": {"spinner": "first_double", "tagret": 5}});
    let detail = detail_of(app.post_json("/v1/games", &body).await, 400, "bad_request").await;
    assert!(detail.contains("rules.tagret: "), "{detail}");
    let body = json!({"preset": "all_fives", "rules": {"target": 50}});
    assert_eq!(
        app.post_json("/v1/games", &body).await.status().as_u16(),
        201
    );
}

#[tokio::test]
async fn a_tile_no_double_six_set_holds_is_no_such_tile_rather_than_not_in_your_hand() {
    let app = spawn_app().await;
    let (id, players) = app.start_game(json!({"preset": "block"})).await;
    let mut details = Vec::new();
    for p in &players {
        let res = app
            .post_move(&id, &p.token, &json!({"type": "play", "tile": "7-9"}))
            .await;
        let problem: Value = res.json().await.unwrap();
        details.push(problem["detail"].as_str().unwrap().to_owned());
    }
    assert!(
        details
            .iter()
            .any(|d| d.contains("no such tile in this set")),
        "{details:?}"
    );
    assert!(
        details.iter().all(|d| !d.contains("not in your hand")),
        "{details:?}"
    );
}
