//! Idempotent creates (issues 44, 52): `POST /v1/players`, `/v1/games`, `/v1/challenges`,
//! `/v1/seeks`, `/v1/matches` and `/v1/tournaments` take an `Idempotency-Key` as moves and joins do: the same key and body
//! answer the same thing again, made once; the same key with another body is refused.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_both_stores};

on_both_stores!(
    a_retried_player_creation_gets_the_same_player_and_key_and_spends_no_name,
    a_player_creation_s_key_is_a_secret_of_16_characters_at_least,
    a_retry_after_the_players_key_was_replaced_is_refused_not_answered_with_the_old_key,
    a_retried_challenge_is_made_once_and_the_key_is_the_callers_own,
    a_retried_seek_is_made_once,
    a_retried_seek_answered_with_the_players_waiting_seek_answers_that_seek_again,
    a_retried_match_is_made_once,
    a_refused_create_leaves_its_key_free_for_the_next_request,
    concurrent_copies_of_a_keyed_create_make_one_thing,
    a_retried_game_creation_answers_the_same_game_made_once,
    a_key_is_one_request_of_one_kind_of_create,
    a_player_creation_s_key_of_one_repeated_character_is_refused,
);

/// `POST path` with `bearer` (if any), `key` and `body`: its status and body.
async fn create(
    app: &TestApp,
    path: &str,
    bearer: Option<&str>,
    key: &str,
    body: &Value,
) -> (u16, Value) {
    let mut req = app
        .client
        .post(app.url(path))
        .header("idempotency-key", key)
        .json(body);
    if let Some(bearer) = bearer {
        req = req.bearer_auth(bearer);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

fn fresh_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

async fn a_retried_player_creation_gets_the_same_player_and_key_and_spends_no_name(app: TestApp) {
    let key = fresh_key();
    let body = json!({"name": "retried"});
    let (status, first) = create(&app, "/v1/players", None, &key, &body).await;
    assert_eq!(status, 201, "{first}");
    // The answer was lost: the retry gets the same player and the same key, which works.
    let (status, again) = create(&app, "/v1/players", None, &key, &body).await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(again["player"]["id"], first["player"]["id"]);
    assert_eq!(again["key"], first["key"]);
    let me = app
        .get_as("/v1/players/me", Some(again["key"].as_str().unwrap()))
        .await;
    assert_eq!(me.status().as_u16(), 200);
    // Spaced otherwise, it is the same request.
    let spaced = json!({"bot": false, "name": "retried"});
    let (status, third) = create(&app, "/v1/players", None, &key, &spaced).await;
    assert_eq!((status, &third["key"]), (201, &first["key"]));
    // The same key for another player is refused, and makes nothing.
    let other = json!({"name": "another"});
    let res = app
        .client
        .post(app.url("/v1/players"))
        .header("idempotency-key", &key)
        .json(&other)
        .send()
        .await
        .unwrap();
    assert_problem(res, 422, "idempotency_key_reused").await;
    assert_problem(app.get("/v1/players/another").await, 404, "not_found").await;
}

async fn a_player_creation_s_key_is_a_secret_of_16_characters_at_least(app: TestApp) {
    let res = app
        .client
        .post(app.url("/v1/players"))
        .header("idempotency-key", "short-key")
        .json(&json!({"name": "shortkey"}))
        .send()
        .await
        .unwrap();
    let problem = assert_problem(res, 400, "bad_request").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("Idempotency-Key")
    );
    assert_problem(app.get("/v1/players/shortkey").await, 404, "not_found").await;
}

async fn a_retry_after_the_players_key_was_replaced_is_refused_not_answered_with_the_old_key(
    app: TestApp,
) {
    let key = fresh_key();
    let body = json!({"name": "rotator"});
    let (_, first) = create(&app, "/v1/players", None, &key, &body).await;
    let old = first["key"].as_str().unwrap();
    let res = app.post_as("/v1/players/me/key", old, None).await;
    assert_eq!(res.status().as_u16(), 200);
    let (status, again) = create(&app, "/v1/players", None, &key, &body).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (403, Some("forbidden")),
        "{again}"
    );
    assert!(again.get("key").is_none());
}

async fn a_retried_challenge_is_made_once_and_the_key_is_the_callers_own(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let (_, cid) = app.new_player("cid").await;
    let key = fresh_key();
    let body = json!({"opponents": ["bob"], "preset": "all_fives"});
    let (status, first) = create(&app, "/v1/challenges", Some(&ann), &key, &body).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = create(&app, "/v1/challenges", Some(&ann), &key, &body).await;
    assert_eq!((status, &again["id"]), (201, &first["id"]), "{again}");
    let incoming = app.get_as("/v1/challenges?direction=in", Some(&bob)).await;
    let incoming: Value = incoming.json().await.unwrap();
    assert_eq!(
        incoming["challenges"].as_array().unwrap().len(),
        1,
        "{incoming}"
    );
    // Another body under the key is refused; another player's same key text is its own.
    let other = json!({"opponents": ["cid"], "preset": "all_fives"});
    let (status, refused) = create(&app, "/v1/challenges", Some(&ann), &key, &other).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    let (status, cids) = create(&app, "/v1/challenges", Some(&cid), &key, &body).await;
    assert_eq!(status, 201, "{cids}");
    assert_ne!(cids["id"], first["id"]);
}

async fn a_retried_seek_is_made_once(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let key = fresh_key();
    let body = json!({"preset": "block"});
    let (status, first) = create(&app, "/v1/seeks", Some(&ann), &key, &body).await;
    assert_eq!(status, 201, "{first}");
    // More retries than the seeks a player may have waiting (5): made once, they all
    // answer it.
    for _ in 0..6 {
        let (status, again) = create(&app, "/v1/seeks", Some(&ann), &key, &body).await;
        assert_eq!((status, &again["id"]), (201, &first["id"]), "{again}");
    }
}

async fn a_retried_seek_answered_with_the_players_waiting_seek_answers_that_seek_again(
    app: TestApp,
) {
    let (_, ann) = app.new_player("ann").await;
    let body = json!({"preset": "block"});
    let (status, waiting) = create(&app, "/v1/seeks", Some(&ann), &fresh_key(), &body).await;
    assert_eq!(status, 201, "{waiting}");
    // The same seek again, under a key of its own: the pool answers the waiting one.
    let key = fresh_key();
    let (status, first) = create(&app, "/v1/seeks", Some(&ann), &key, &body).await;
    assert_eq!((status, &first["id"]), (200, &waiting["id"]), "{first}");
    // Its retry answers as it did, not a seek never made.
    let (status, again) = create(&app, "/v1/seeks", Some(&ann), &key, &body).await;
    assert_eq!((status, &again["id"]), (200, &waiting["id"]), "{again}");
}

async fn a_retried_match_is_made_once(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    app.new_player("bob").await;
    let key = fresh_key();
    let body = json!({"opponent": "bob", "preset": "block", "deals": 2});
    let (status, first) = create(&app, "/v1/matches", Some(&ann), &key, &body).await;
    assert_eq!(status, 201, "{first}");
    // More retries than the matches a player may run (4).
    for _ in 0..5 {
        let (status, again) = create(&app, "/v1/matches", Some(&ann), &key, &body).await;
        assert_eq!((status, &again["id"]), (201, &first["id"]), "{again}");
    }
    let out = app.get_as("/v1/challenges?direction=out", Some(&ann)).await;
    let out: Value = out.json().await.unwrap();
    assert_eq!(out["challenges"].as_array().unwrap().len(), 1, "{out}");
}

async fn a_refused_create_leaves_its_key_free_for_the_next_request(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    app.new_player("bob").await;
    let key = fresh_key();
    let nobody = json!({"opponents": ["nobody-here"], "preset": "block"});
    let (status, _) = create(&app, "/v1/challenges", Some(&ann), &key, &nobody).await;
    assert_eq!(status, 404);
    let bob = json!({"opponents": ["bob"], "preset": "block"});
    let (status, made) = create(&app, "/v1/challenges", Some(&ann), &key, &bob).await;
    assert_eq!(status, 201, "{made}");
}

/// Copies of one request sent at once: each answers the one seek made, or that the first
/// is still being made (409 `idempotency_key_in_use`, to retry), never a second seek.
async fn concurrent_copies_of_a_keyed_create_make_one_thing(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let key = fresh_key();
    let body = json!({"preset": "block"});
    let answers =
        join_all((0..8).map(|_| create(&app, "/v1/seeks", Some(&ann), &key, &body))).await;
    let mut ids = Vec::new();
    for (status, answer) in &answers {
        match status {
            201 => ids.push(answer["id"].clone()),
            409 => assert_eq!(answer["code"], "idempotency_key_in_use", "{answer}"),
            _ => panic!("{status} {answer}"),
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{answers:?}");
    // A retry once they are done gets it too.
    let (status, again) = create(&app, "/v1/seeks", Some(&ann), &key, &body).await;
    assert_eq!((status, &again["id"]), (201, &ids[0]));
}

async fn a_retried_game_creation_answers_the_same_game_made_once(app: TestApp) {
    let key = fresh_key();
    let body = json!({"preset": "block", "seed": "retried-game",
        "bots": [{"seat": 1, "level": "greedy"}]});
    let (status, first) = create(&app, "/v1/games", None, &key, &body).await;
    assert_eq!(status, 201, "{first}");
    for _ in 0..3 {
        let (status, again) = create(&app, "/v1/games", None, &key, &body).await;
        assert_eq!(
            (status, &again["game_id"]),
            (201, &first["game_id"]),
            "{again}"
        );
    }
    let lobby: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(lobby["games"].as_array().unwrap().len(), 1, "{lobby}");
    // Another body under the key makes nothing.
    let other = json!({"preset": "draw", "seed": "retried-game"});
    let (status, refused) = create(&app, "/v1/games", None, &key, &other).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (422, Some("idempotency_key_reused")),
        "{refused}"
    );
    let lobby: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(lobby["games"].as_array().unwrap().len(), 1, "{lobby}");
}

async fn a_key_is_one_request_of_one_kind_of_create(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    app.new_player("bob").await;
    // A player's creates share one scope: a key spent on one kind is refused on another.
    let key = fresh_key();
    let tournament = json!({"name": "Keyed", "preset": "block", "format": "swiss",
        "levels": ["random", "greedy", "expert"]});
    let (status, made) = create(&app, "/v1/tournaments", Some(&ann), &key, &tournament).await;
    assert_eq!(status, 201, "{made}");
    let others = [
        (
            "/v1/challenges",
            json!({"opponents": ["bob"], "preset": "block"}),
        ),
        ("/v1/seeks", json!({"preset": "block"})),
        (
            "/v1/matches",
            json!({"opponent": "bob", "preset": "block", "deals": 1}),
        ),
    ];
    for (path, body) in &others {
        let (status, refused) = create(&app, path, Some(&ann), &key, body).await;
        assert_eq!(
            (status, refused["code"].as_str()),
            (422, Some("idempotency_key_reused")),
            "{path}: {refused}"
        );
    }
    // And the other way round: a challenge's key is no tournament's.
    let key = fresh_key();
    let (status, _) = create(&app, "/v1/challenges", Some(&ann), &key, &others[0].1).await;
    assert_eq!(status, 201);
    let (status, refused) = create(&app, "/v1/tournaments", Some(&ann), &key, &tournament).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    // Anonymous creates (a player, a game) share one scope too.
    let key = fresh_key();
    let (status, _) = create(&app, "/v1/players", None, &key, &json!({"name": "cid"})).await;
    assert_eq!(status, 201);
    let game = json!({"preset": "block", "seed": "one-kind"});
    let (status, refused) = create(&app, "/v1/games", None, &key, &game).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    let key = fresh_key();
    let (status, _) = create(&app, "/v1/games", None, &key, &game).await;
    assert_eq!(status, 201);
    let (status, refused) = create(&app, "/v1/players", None, &key, &json!({"name": "dee"})).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    assert_problem(app.get("/v1/players/dee").await, 404, "not_found").await;
}

async fn a_player_creation_s_key_of_one_repeated_character_is_refused(app: TestApp) {
    for weak in [
        "1111111111111111",
        "abababababababababab",
        "12341234123412341234",
    ] {
        let res = app
            .client
            .post(app.url("/v1/players"))
            .header("idempotency-key", weak)
            .json(&json!({"name": "weakkey"}))
            .send()
            .await
            .unwrap();
        let problem = assert_problem(res, 400, "bad_request").await;
        assert!(
            problem["detail"].as_str().unwrap().contains("distinct"),
            "{problem}"
        );
    }
    assert_problem(app.get("/v1/players/weakkey").await, 404, "not_found").await;
    // Sixteen random-looking characters are strong enough.
    let key = "3f1c0b6a9d2e4f5a";
    let (status, made) = create(&app, "/v1/players", None, key, &json!({"name": "weakkey"})).await;
    assert_eq!(status, 201, "{made}");
}
