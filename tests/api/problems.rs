//! Every problem code of API.md's table that a client can provoke, each as
//! `application/problem+json`, and each refusal leaving the game exactly as it was.

use std::time::Duration;

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{
    Player, TestApp, assert_problem, on_both_stores, spawn_app_with, test_settings,
};

on_both_stores!(
    malformed_json_is_a_bad_request_that_changes_nothing,
    an_unknown_field_is_a_bad_request_that_names_it,
    bad_tile_text_is_a_bad_request,
    a_draw_that_names_a_tile_is_a_bad_request,
    a_move_without_a_token_is_unauthorized,
    a_wrong_token_is_unauthorized_for_moves_views_and_logs,
    a_malformed_authorization_header_is_unauthorized,
    an_unknown_game_is_not_found_on_every_resource,
    a_path_that_is_not_a_uuid_is_not_found,
    a_move_out_of_turn_is_refused_as_not_your_turn,
    a_stale_expected_version_is_a_version_conflict_with_the_current_version,
    a_stale_if_match_is_a_precondition_failed_with_the_current_version,
    a_move_while_seats_are_free_is_refused_as_game_not_started,
    a_move_after_the_end_is_refused_as_game_finished,
    the_export_before_the_end_is_a_precondition_failed,
    a_body_over_16_kib_is_payload_too_large,
    an_illegal_move_is_refused_with_the_legal_moves,
    contradictory_rules_are_refused_with_the_field_named,
    a_match_longer_than_the_engine_plays_is_refused_naming_rounds_or_target,
    a_deal_that_is_not_a_permutation_of_the_set_is_refused_naming_the_deal,
    an_idempotency_key_reused_with_another_body_is_refused,
    a_bad_idempotency_key_or_long_poll_query_is_a_bad_request,
    a_log_page_out_of_bounds_is_a_bad_request_naming_the_parameter,
);

/// A two-seat classic game with both seats taken: `(id, players, seat to move first)`.
async fn started(app: &TestApp) -> (String, Vec<Player>, usize) {
    let (id, players) = app
        .start_game(json!({"preset": "classic", "seed": "problems"}))
        .await;
    let view = app.view(&id, None).await;
    let turn = view["round"]["turn"].as_u64().unwrap() as usize;
    (id, players, turn)
}

fn first_legal(view: &Value) -> Value {
    view["legal_moves"][0].clone()
}

async fn post_raw(
    app: &TestApp,
    id: &str,
    token: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    let mut req = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.unwrap()
}

async fn malformed_json_is_a_bad_request_that_changes_nothing(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let token = Some(players[turn].token.as_str());
    for body in [r#"{"type": "play""#, "not json", "", "[]", r#"{"type": 5}"#] {
        let res = post_raw(&app, &id, token, body).await;
        assert_problem(res, 400, "bad_request").await;
    }
    let res = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .body(r#"{"preset": "#)
        .send()
        .await
        .unwrap();
    assert_problem(res, 400, "bad_request").await;
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.views(&id, &players).await, before);
}

async fn an_unknown_field_is_a_bad_request_that_names_it(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mut mv = first_legal(&before[turn + 1]);
    mv["colour"] = json!("red");
    let res = app.post_move(&id, &players[turn].token, &mv).await;
    let body = assert_problem(res, 400, "bad_request").await;
    assert!(
        body["detail"].as_str().unwrap().contains("colour"),
        "{body}"
    );

    let res = app
        .post_json("/v1/games", &json!({"preset": "classic", "colour": "red"}))
        .await;
    let body = assert_problem(res, 400, "bad_request").await;
    assert!(
        body["detail"].as_str().unwrap().contains("colour"),
        "{body}"
    );
    let res = app
        .post_json(
            "/v1/games",
            &json!({"preset": "classic", "rules": {"spinners": "none"}}),
        )
        .await;
    let body = assert_problem(res, 400, "bad_request").await;
    assert!(
        body["detail"].as_str().unwrap().contains("spinners"),
        "{body}"
    );
    assert_eq!(app.views(&id, &players).await, before);
}

async fn bad_tile_text_is_a_bad_request(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    for tile in ["7-x", "", "6", "6-6-6", "-1-2", "16-2"] {
        let res = app
            .post_move(
                &id,
                &players[turn].token,
                &json!({"type": "play", "tile": tile}),
            )
            .await;
        assert_problem(res, 400, "bad_request").await;
    }
    let res = app
        .post_move(&id, &players[turn].token, &json!({"type": "play"}))
        .await;
    assert_problem(res, 400, "bad_request").await;
    let res = app
        .post_move(
            &id,
            &players[turn].token,
            &json!({"type": "play", "tile": "6-6", "end": "middle"}),
        )
        .await;
    assert_problem(res, 400, "bad_request").await;
    let res = app
        .post_json(
            "/v1/games",
            &json!({"preset": "classic", "deal": {"hands": [["7-x"]], "boneyard": []}}),
        )
        .await;
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_draw_that_names_a_tile_is_a_bad_request(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let token = &players[turn].token;
    for body in [
        json!({"type": "draw", "tile": "6-6"}),
        json!({"type": "pass", "end": "left"}),
        json!({"type": "muggins", "claim": 5}),
        json!({"type": "shuffle"}),
    ] {
        let res = app.post_move(&id, token, &body).await;
        assert_problem(res, 400, "bad_request").await;
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_move_without_a_token_is_unauthorized(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mv = first_legal(&before[turn + 1]);
    let res = app.post_json(&format!("/v1/games/{id}/moves"), &mv).await;
    // RFC 6750: the 401 names the scheme that would do.
    assert_eq!(res.headers()["www-authenticate"], "Bearer");
    let body = assert_problem(res, 401, "unauthorized").await;
    assert!(!body.to_string().contains(&players[turn].token));
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_wrong_token_is_unauthorized_for_moves_views_and_logs(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mv = first_legal(&before[turn + 1]);
    // Another game's token is no token of this one.
    let (_, others) = app.start_game(json!({"preset": "classic"})).await;
    for token in ["0".repeat(64), others[0].token.clone(), "x".into()] {
        let res = app.post_move(&id, &token, &mv).await;
        assert_problem(res, 401, "unauthorized").await;
        for path in [format!("/v1/games/{id}"), format!("/v1/games/{id}/log")] {
            let res = app.get_as(&path, Some(&token)).await;
            assert_problem(res, 401, "unauthorized").await;
        }
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_malformed_authorization_header_is_unauthorized(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mv = first_legal(&before[turn + 1]);
    let token = &players[turn].token;
    for header in [
        format!("Basic {token}"),
        token.clone(),
        "Bearer".into(),
        "Bearer    ".into(),
    ] {
        let res = app
            .client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .header("authorization", &header)
            .json(&mv)
            .send()
            .await
            .unwrap();
        assert_problem(res, 401, "unauthorized").await;
        let res = app
            .client
            .get(app.url(&format!("/v1/games/{id}")))
            .header("authorization", &header)
            .send()
            .await
            .unwrap();
        assert_problem(res, 401, "unauthorized").await;
    }
    let res = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .header("authorization", b"Bearer \xff\xfe".as_slice())
        .send()
        .await
        .unwrap();
    assert_problem(res, 401, "unauthorized").await;
    // The scheme is case-insensitive.
    let res = app
        .client
        .get(app.url(&format!("/v1/games/{id}")))
        .header("authorization", format!("bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(app.views(&id, &players).await, before);
}

async fn an_unknown_game_is_not_found_on_every_resource(app: TestApp) {
    let id = uuid::Uuid::new_v4();
    for path in ["", "/log", "/export", "/events"] {
        let res = app.get(&format!("/v1/games/{id}{path}")).await;
        assert_problem(res, 404, "not_found").await;
    }
    let res = app.join(&id.to_string(), json!({"name": "ann"})).await;
    assert_problem(res, 404, "not_found").await;
    let res = app
        .post_move(&id.to_string(), &"0".repeat(64), &json!({"type": "pass"}))
        .await;
    assert_problem(res, 404, "not_found").await;
    let res = app.get(&format!("/v1/games/{id}?after=1&wait=1")).await;
    assert_problem(res, 404, "not_found").await;
}

async fn a_path_that_is_not_a_uuid_is_not_found(app: TestApp) {
    for path in [
        "/v1/games/42",
        "/v1/games/not-a-uuid/log",
        "/v1/games/not-a-uuid/export",
        "/v1/games/not-a-uuid/events",
    ] {
        let res = app.get(path).await;
        assert_problem(res, 404, "not_found").await;
    }
    let res = app
        .post_json("/v1/games/42/seats", &json!({"name": "ann"}))
        .await;
    assert_problem(res, 404, "not_found").await;
    let res = app
        .post_move("42", &"0".repeat(64), &json!({"type": "pass"}))
        .await;
    assert_problem(res, 404, "not_found").await;
}

async fn a_move_out_of_turn_is_refused_as_not_your_turn(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let other = 1 - turn;
    assert_eq!(before[other + 1]["legal_moves"], json!([]));
    assert_eq!(before[other + 1]["your_turn"], false);
    let hand = before[other + 1]["hand"].as_array().unwrap();
    for body in [
        json!({"type": "play", "tile": hand[0]}),
        json!({"type": "pass"}),
        first_legal(&before[turn + 1]),
    ] {
        let res = app.post_move(&id, &players[other].token, &body).await;
        assert_problem(res, 409, "not_your_turn").await;
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_stale_expected_version_is_a_version_conflict_with_the_current_version(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let version = before[0]["version"].as_u64().unwrap();
    let mut mv = first_legal(&before[turn + 1]);
    for stale in [version - 1, version + 1, 0] {
        mv["expected_version"] = json!(stale);
        let res = app.post_move(&id, &players[turn].token, &mv).await;
        let body = assert_problem(res, 409, "version_conflict").await;
        assert_eq!(body["current_version"], version, "{body}");
    }
    assert_eq!(app.views(&id, &players).await, before);
    // The current version is accepted.
    mv["expected_version"] = json!(version);
    let answer = app.play(&id, &players[turn].token, &mv).await;
    assert_eq!(answer["version"], version + 1);
    // ... and is then stale.
    let next = 1 - turn;
    let view = app.view(&id, Some(&players[next].token)).await;
    let mut mv = first_legal(&view);
    mv["expected_version"] = json!(version);
    let res = app.post_move(&id, &players[next].token, &mv).await;
    let body = assert_problem(res, 409, "version_conflict").await;
    assert_eq!(body["current_version"], version + 1);
}

async fn a_stale_if_match_is_a_precondition_failed_with_the_current_version(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let token = &players[turn].token;
    let before = app.views(&id, &players).await;
    let version = before[0]["version"].as_u64().unwrap();
    let mv = first_legal(&before[turn + 1]);
    let res = app.get_as(&format!("/v1/games/{id}"), Some(token)).await;
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let post = |if_match: String, body: Value| {
        app.client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(token)
            .header("if-match", if_match)
            .json(&body)
            .send()
    };
    for stale in [
        format!("\"{}-s{turn}\"", version - 1),
        format!("\"{}\"", version + 1),
        format!("W/{etag}"),
        "\"not-a-version\"".to_owned(),
    ] {
        let res = post(stale.clone(), mv.clone()).await.unwrap();
        let body = assert_problem(res, 412, "precondition_failed").await;
        if !stale.contains("not-a-version") && !stale.starts_with("W/") {
            assert_eq!(body["current_version"], version, "{stale}: {body}");
        }
    }
    // If-Match and expected_version naming different versions is the client's mistake.
    let mut pinned = mv.clone();
    pinned["expected_version"] = json!(version - 1);
    let res = post(etag.clone(), pinned).await.unwrap();
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.views(&id, &players).await, before);
    // The ETag of the view the move was decided on is accepted, once.
    let res = post(etag.clone(), mv.clone()).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let answer: Value = res.json().await.unwrap();
    assert_eq!(answer["version"], version + 1);
    let next = 1 - turn;
    let view = app.view(&id, Some(&players[next].token)).await;
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&players[next].token)
        .header("if-match", &etag)
        .json(&first_legal(&view))
        .send()
        .await
        .unwrap();
    let body = assert_problem(res, 412, "precondition_failed").await;
    assert_eq!(body["current_version"], version + 1);
}

async fn a_move_while_seats_are_free_is_refused_as_game_not_started(app: TestApp) {
    let (id, _) = app
        .create_game(json!({"preset": "classic", "seats": 3}))
        .await;
    let ann = app.take_seat(&id, "ann").await;
    let before = app.view(&id, Some(&ann.token)).await;
    assert_eq!(before["legal_moves"], json!([]));
    for body in [
        json!({"type": "pass"}),
        json!({"type": "draw"}),
        json!({"type": "play", "tile": "6-6"}),
    ] {
        let res = app.post_move(&id, &ann.token, &body).await;
        assert_problem(res, 409, "game_not_started").await;
    }
    assert_eq!(app.view(&id, Some(&ann.token)).await, before);
}

async fn a_move_after_the_end_is_refused_as_game_finished(app: TestApp) {
    // One round to 1 point: a short match against a bot.
    let (id, players) = app
        .start_game(
            json!({"preset": "block", "rules": {"target": 1}, "seed": "short",
                           "bots": [{"seat": 1, "level": "greedy"}]}),
        )
        .await;
    let played = app.play_match(&id, &players, 3).await;
    assert_eq!(played.last["status"], "finished");
    let before = app.views(&id, &players).await;
    for body in [
        json!({"type": "pass"}),
        json!({"type": "draw"}),
        json!({"type": "play", "tile": "6-6"}),
    ] {
        let res = app.post_move(&id, &players[0].token, &body).await;
        assert_problem(res, 409, "game_finished").await;
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn the_export_before_the_end_is_a_precondition_failed(app: TestApp) {
    let (id, _) = app.create_game(json!({"preset": "classic"})).await;
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    assert_problem(res, 412, "precondition_failed").await;
    let (id, players, _) = started(&app).await;
    let before = app.views(&id, &players).await;
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    let body = assert_problem(res, 412, "precondition_failed").await;
    // The refusal reveals no hand.
    for view in &before[1..] {
        for tile in view["hand"].as_array().unwrap() {
            assert!(!body.to_string().contains(tile.as_str().unwrap()), "{body}");
        }
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_body_over_16_kib_is_payload_too_large(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    // Valid JSON, just too long: padding inside a string.
    let big = format!(
        r#"{{"type": "play", "tile": "6-6{}"}}"#,
        " ".repeat(16 * 1024)
    );
    let res = post_raw(&app, &id, Some(&players[turn].token), big.clone()).await;
    assert_problem(res, 413, "payload_too_large").await;
    let big_game = format!(
        r#"{{"preset": "classic", "seed": "{}"}}"#,
        "x".repeat(17_000)
    );
    let res = app
        .client
        .post(app.url("/v1/games"))
        .header("content-type", "application/json")
        .body(big_game)
        .send()
        .await
        .unwrap();
    assert_problem(res, 413, "payload_too_large").await;
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_problem(res, 413, "payload_too_large").await;
    assert_eq!(app.views(&id, &players).await, before);
    let list: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(list["games"], json!([]), "no game was created");
}

async fn an_illegal_move_is_refused_with_the_legal_moves(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mine = &before[turn + 1];
    let legal = &mine["legal_moves"];
    let theirs = before[2 - turn]["hand"].as_array().unwrap();
    let mine_hand = mine["hand"].as_array().unwrap();
    // The lead under highest_double is forced, so every other tile is illegal.
    let not_the_lead = mine_hand
        .iter()
        .find(|t| legal.as_array().unwrap().iter().all(|m| m["tile"] != **t))
        .expect("a tile that may not lead");
    for body in [
        json!({"type": "play", "tile": theirs[0]}),
        json!({"type": "play", "tile": not_the_lead}),
        json!({"type": "pass"}),
        json!({"type": "draw"}),
        json!({"type": "muggins"}),
        json!({"type": "play", "tile": legal[0]["tile"], "end": "left"}),
        json!({"type": "play", "tile": legal[0]["tile"], "claim": 5}),
    ] {
        let res = app.post_move(&id, &players[turn].token, &body).await;
        let problem = assert_problem(res, 422, "illegal_move").await;
        assert_eq!(problem["legal_moves"], *legal, "{body}: {problem}");
        // The refusal names no tile of the other hand.
        let text = problem.to_string();
        for tile in theirs {
            if body["tile"] != *tile {
                assert!(!text.contains(tile.as_str().unwrap()), "{text}");
            }
        }
    }
    assert_eq!(app.views(&id, &players).await, before);
}

async fn contradictory_rules_are_refused_with_the_field_named(app: TestApp) {
    let cases = [
        (
            json!({"preset": "muggins", "rules": {"scoring": "pips"}}),
            "muggins",
        ),
        (
            json!({"preset": "all_fives", "rules": {"teams": true}}),
            "teams",
        ),
        (
            json!({"preset": "all_fives", "seats": 3, "rules": {"teams": true}}),
            "teams",
        ),
        (json!({"preset": "dominoes"}), "preset"),
        (
            json!({"preset": "classic", "seats": 4, "rules": {"hand_size": 8}}),
            "hand_size",
        ),
        (json!({"preset": "classic", "seats": 5}), "seats"),
        (
            json!({"preset": "classic", "rules": {"max_pip": 7}}),
            "max_pip",
        ),
        (
            json!({"preset": "classic", "rules": {"target": null}}),
            "target",
        ),
        (
            json!({"preset": "block", "rules": {"boneyard_to_winner": true}}),
            "boneyard_to_winner",
        ),
        (
            json!({"preset": "classic", "bots": [{"seat": 2, "level": "greedy"}]}),
            "bots",
        ),
    ];
    for (body, field) in cases {
        let res = app.post_json("/v1/games", &body).await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{body}: {problem}"
        );
    }
    let list: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(list["games"], json!([]), "no game was created");
}

/// Issue 20, 2: `rounds` is 1 to 1000 and `target` 1 to 2000 (65535 rounds used to break
/// the game once played out); the largest values are taken.
async fn a_match_longer_than_the_engine_plays_is_refused_naming_rounds_or_target(app: TestApp) {
    for (rules, field) in [
        (json!({"rounds": 65535}), "rounds"),
        (json!({"rounds": 1001}), "rounds"),
        (json!({"rounds": 0}), "rounds"),
        (json!({"target": 65535}), "target"),
        (json!({"target": 2001}), "target"),
        (json!({"target": 0}), "target"),
    ] {
        let res = app
            .post_json("/v1/games", &json!({"preset": "classic", "rules": rules}))
            .await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{field}:")),
            "{rules}: {problem}"
        );
    }
    let res = app
        .post_json(
            "/v1/games",
            &json!({"preset": "classic", "rules": {"rounds": 1000, "target": 2000}}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
}

async fn a_deal_that_is_not_a_permutation_of_the_set_is_refused_naming_the_deal(app: TestApp) {
    let boneyard = json!([
        "0-2", "0-4", "0-5", "0-6", "1-4", "1-5", "1-6", "2-4", "2-5", "3-4", "3-5", "3-6", "4-5",
        "4-6"
    ]);
    let seat0 = json!(["6-6", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"]);
    for deal in [
        // 6-6 twice, 5-6 missing
        json!({"hands": [seat0, ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "6-6"]],
               "boneyard": boneyard}),
        // a hand short, the other long
        json!({"hands": [["6-6", "5-5", "1-2", "0-3", "4-4", "2-6"],
                         ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6", "1-1"]],
               "boneyard": boneyard}),
        // one hand for two seats
        json!({"hands": [seat0], "boneyard": boneyard}),
        // a tile of another set
        json!({"hands": [["9-9", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"],
                         ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]],
               "boneyard": boneyard}),
        // the boneyard left out
        json!({"hands": [seat0, ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]],
               "boneyard": []}),
    ] {
        let res = app
            .post_json("/v1/games", &json!({"preset": "classic", "deal": deal}))
            .await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"].as_str().unwrap().contains("deal"),
            "{problem}"
        );
    }
    let list: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(list["games"], json!([]), "no game was created");
}

async fn an_idempotency_key_reused_with_another_body_is_refused(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let view = app.view(&id, Some(&players[turn].token)).await;
    let mv = first_legal(&view);
    let post = |body: Value| {
        let app = &app;
        let id = &id;
        let token = players[turn].token.clone();
        async move {
            app.client
                .post(app.url(&format!("/v1/games/{id}/moves")))
                .bearer_auth(token)
                .header("idempotency-key", "move-1")
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let res = post(mv.clone()).await;
    assert_eq!(res.status().as_u16(), 200);
    let after = app.views(&id, &players).await;
    let mut other = mv.clone();
    other["expected_version"] = view["version"].clone();
    for body in [json!({"type": "pass"}), other] {
        let res = post(body).await;
        assert_problem(res, 422, "idempotency_key_reused").await;
    }
    // The same key from another seat is that seat's own key: a request of its own, judged
    // on its merits (the tile is not in its hand), not a reused key.
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&players[1 - turn].token)
        .header("idempotency-key", "move-1")
        .json(&mv)
        .send()
        .await
        .unwrap();
    assert_problem(res, 422, "illegal_move").await;
    assert_eq!(app.views(&id, &players).await, after);
}

async fn a_bad_idempotency_key_or_long_poll_query_is_a_bad_request(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let before = app.views(&id, &players).await;
    let mv = first_legal(&before[turn + 1]);
    for key in ["x".repeat(129), "has space".into(), String::new()] {
        let res = app
            .client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(&players[turn].token)
            .header("idempotency-key", key)
            .json(&mv)
            .send()
            .await
            .unwrap();
        assert_problem(res, 400, "bad_request").await;
    }
    for query in ["after=soon", "wait=1", "after=1&colour=red", "after=-1"] {
        let res = app.get(&format!("/v1/games/{id}?{query}")).await;
        assert_problem(res, 400, "bad_request").await;
    }
    let res = app
        .client
        .get(app.url(&format!("/v1/games/{id}/events")))
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.views(&id, &players).await, before);
}

async fn a_log_page_out_of_bounds_is_a_bad_request_naming_the_parameter(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let mv = first_legal(&app.view(&id, Some(&players[turn].token)).await);
    app.play(&id, &players[turn].token, &mv).await;
    let before = app.views(&id, &players).await;
    for (query, named) in [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("limit=-5", "limit"),
        ("after=-1", "after"),
        ("after=first", "after"),
        ("after=2", "after"),
        ("after=18446744073709551615", "after"),
        ("after=0&limit=1&page=2", "page"),
    ] {
        let res = app.get(&format!("/v1/games/{id}/log?{query}")).await;
        let problem = assert_problem(res, 400, "bad_request").await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(named), "{query}: {detail}");
    }
    // The bounds themselves are fine: one move made, so `after` goes up to 1.
    for query in ["limit=1000", "limit=1", "after=1", "after=0"] {
        let res = app.get(&format!("/v1/games/{id}/log?{query}")).await;
        assert_eq!(res.status().as_u16(), 200, "{query}");
    }
    assert_eq!(app.views(&id, &players).await, before);
}

/// Redis down: 503 with Retry-After, and no address in the answer. (Memory only has no
/// such failure; this one needs no Redis at all.)
#[tokio::test]
async fn an_unreachable_store_is_store_unavailable_with_retry_after() {
    let app = spawn_app_with(Settings {
        redis_url: Some("redis://127.0.0.1:1".to_owned()),
        store_timeout: Duration::from_millis(300),
        ..test_settings()
    })
    .await;
    let res = app
        .post_json("/v1/games", &json!({"preset": "classic"}))
        .await;
    assert_eq!(res.headers()["retry-after"], "1");
    let body = assert_problem(res, 503, "store_unavailable").await;
    assert!(!body.to_string().contains("127.0.0.1"), "{body}");
    let res = app
        .get(&format!("/v1/games/{}", uuid::Uuid::new_v4()))
        .await;
    assert_problem(res, 503, "store_unavailable").await;
}
