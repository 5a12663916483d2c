//! A player's seats: a key takes a seat bound to its player and opens it wherever a seat
//! token does; one seat per player per game; another player's key opens nothing; the
//! player's games; the player's stream, on one server and across two.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, assert_problem, on_every_store, spawn_app_with_cluster_prefix,
    spawn_app_with_redis_prefix, unique_prefix,
};

on_every_store!(
    a_player_key_takes_a_seat_bound_to_its_player_and_plays_with_it,
    a_player_holds_one_seat_per_game,
    a_retried_keyed_join_gets_the_same_seat_and_another_players_retry_is_refused,
    another_players_key_is_forbidden_and_a_forged_one_unauthorized,
    the_players_games_are_listed_newest_first_with_its_seat,
    the_players_stream_tells_of_its_games_started_and_finished,
    a_seat_bound_to_a_player_names_its_id_in_every_view_and_an_anonymous_namesake_none,
);

const WITHIN: Duration = Duration::from_secs(5);

async fn player(app: &TestApp, name: &str) -> (String, String) {
    app.new_player(name).await
}

async fn open_stream(app: &TestApp, key: &str) -> EventStream {
    app.player_stream(key).await
}

/// `POST /v1/games/{id}/seats` with a player's key and `body`.
async fn join_as(app: &TestApp, id: &str, key: &str, body: Value) -> reqwest::Response {
    app.client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn against_greedy() -> Value {
    json!({"preset": "block", "bots": [{"seat": 1, "level": "greedy"}]})
}

async fn a_player_key_takes_a_seat_bound_to_its_player_and_plays_with_it(app: TestApp) {
    let (_, key) = player(&app, "Ann").await;
    let (id, _) = app.create_game(against_greedy()).await;
    let res = join_as(&app, &id, &key, json!({})).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let granted: Value = res.json().await.unwrap();
    assert_eq!(granted["seat"], 0);
    let token = granted["token"].as_str().unwrap().to_owned();
    assert_eq!(granted["view"]["seats"][0]["name"], "Ann");

    // The key opens the seat as its token does.
    let by_key = app.view(&id, Some(&key)).await;
    let by_token = app.view(&id, Some(&token)).await;
    assert_eq!(by_key["you"], 0);
    assert_eq!(by_key["hand"], by_token["hand"]);
    assert!(by_key["hand"].as_array().is_some_and(|h| !h.is_empty()));

    let mut view = by_key;
    for _ in 0..3 {
        if view["status"] != "playing" {
            break;
        }
        let mv = view["legal_moves"][0].clone();
        let answer = app.play(&id, &key, &mv).await;
        assert_eq!(answer["you"], 0);
        view = app.view(&id, Some(&key)).await;
    }
    let log = app.log(&id, Some(&key)).await;
    assert!(!log["moves"].as_array().unwrap().is_empty());
    let mut stream = EventStream::open_as(&app, &id, Some(0), Some(&key)).await;
    let event = stream.next(WITHIN).await.expect("an event");
    assert_eq!(event.data["view"]["you"], 0, "{}", event.data);
    // A name given beside the key is not shown: the seat shows the player's.
    let (other, _) = app.create_game(against_greedy()).await;
    let res = join_as(&app, &other, &key, json!({"name": "somebody else"})).await;
    let granted: Value = res.json().await.unwrap();
    assert_eq!(granted["view"]["seats"][0]["name"], "Ann");
}

async fn a_player_holds_one_seat_per_game(app: TestApp) {
    let (_, key) = player(&app, "bea").await;
    let (id, _) = app
        .create_game(json!({"preset": "block", "seats": 3}))
        .await;
    let res = join_as(&app, &id, &key, json!({})).await;
    assert_eq!(res.status().as_u16(), 201);
    let before = app.view(&id, None).await;
    for body in [json!({}), json!({"seat": 2}), json!({"name": "bea again"})] {
        let res = join_as(&app, &id, &key, body).await;
        let problem = assert_problem(res, 409, "seat_taken").await;
        assert!(problem["detail"].as_str().unwrap().contains("seat 0"));
    }
    assert_eq!(app.view(&id, None).await, before, "nothing changed");
    // Without a key a name is still needed.
    assert_problem(app.join(&id, json!({})).await, 400, "bad_request").await;
    assert_eq!(app.view(&id, None).await, before, "nothing changed");
}

/// `POST /v1/games/{id}/seats` with a player's key, an `Idempotency-Key` and `{}`.
async fn keyed_join(app: &TestApp, id: &str, key: &str, idem: &str) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .bearer_auth(key)
        .header("idempotency-key", idem)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

async fn a_retried_keyed_join_gets_the_same_seat_and_another_players_retry_is_refused(
    app: TestApp,
) {
    let (_, ann) = player(&app, "ida").await;
    let (_, bob) = player(&app, "jon").await;
    let (id, _) = app
        .create_game(json!({"preset": "block", "seats": 3}))
        .await;
    let idem = "a-join-key-of-twenty-chars";
    let (status, first) = keyed_join(&app, &id, &ann, idem).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = keyed_join(&app, &id, &ann, idem).await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(
        (&again["seat"], &again["token"]),
        (&first["seat"], &first["token"])
    );
    // The same key and body from another player is another request: refused, and it
    // learns no token.
    let (status, refused) = keyed_join(&app, &id, &bob, idem).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["code"], "idempotency_key_reused");
    assert_eq!(app.view(&id, None).await["seats"][1]["name"], Value::Null);
}

async fn another_players_key_is_forbidden_and_a_forged_one_unauthorized(app: TestApp) {
    let (ann_id, ann) = player(&app, "cat").await;
    let (_, bob) = player(&app, "dan").await;
    let (id, _) = app.create_game(against_greedy()).await;
    assert_eq!(
        join_as(&app, &id, &ann, json!({})).await.status().as_u16(),
        201
    );
    let before = app.view(&id, Some(&ann)).await;
    let mv = before["legal_moves"][0].clone();

    let forged = format!("dpk_{ann_id}_{}", "0".repeat(64));
    for (key, status, code) in [
        (bob.as_str(), 403, "forbidden"),
        (forged.as_str(), 401, "unauthorized"),
    ] {
        let res = app.get_as(&format!("/v1/games/{id}"), Some(key)).await;
        assert_problem(res, status, code).await;
        assert_problem(app.post_move(&id, key, &mv).await, status, code).await;
        let res = app.get_as(&format!("/v1/games/{id}/log"), Some(key)).await;
        assert_problem(res, status, code).await;
        let res = app
            .get_as(&format!("/v1/games/{id}/events"), Some(key))
            .await;
        assert_problem(res, status, code).await;
    }
    // A forged key cannot take a seat either.
    let (free, _) = app.create_game(against_greedy()).await;
    assert_problem(
        join_as(&app, &free, &forged, json!({})).await,
        401,
        "unauthorized",
    )
    .await;
    assert_eq!(app.view(&free, None).await["status"], "waiting");
    assert_eq!(app.view(&id, Some(&ann)).await, before, "nothing changed");
}

async fn the_players_games_are_listed_newest_first_with_its_seat(app: TestApp) {
    let (_, key) = player(&app, "eve").await;
    let games = |query: &'static str| {
        let (app, key) = (&app, key.clone());
        async move {
            let res = app
                .get_as(&format!("/v1/players/me/games{query}"), Some(&key))
                .await;
            assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
            let list: Value = res.json().await.unwrap();
            list["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    (
                        g["game_id"].as_str().unwrap().to_owned(),
                        g["seat"].clone(),
                        g["status"].clone(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    assert!(games("").await.is_empty());
    let (first, _) = app.create_game(against_greedy()).await;
    join_as(&app, &first, &key, json!({})).await;
    // Created later (and apart by a millisecond at least), the second is listed first.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (second, _) = app
        .create_game(json!({"preset": "block", "bots": [{"seat": 0, "level": "greedy"}]}))
        .await;
    join_as(&app, &second, &key, json!({})).await;
    // Someone else's game is not the player's.
    let (other, _) = app.create_game(against_greedy()).await;
    app.take_seat(&other, "stranger").await;

    let all = games("").await;
    assert_eq!(
        all,
        vec![
            (second.clone(), json!(1), json!("playing")),
            (first.clone(), json!(0), json!("playing"))
        ]
    );
    assert_eq!(games("?status=playing").await, all);
    assert_eq!(games("?per_page=1&page=2").await, all[1..].to_vec());
    assert!(games("?status=finished").await.is_empty());
    app.play(&first, &key, &json!({"type": "resign"})).await;
    let finished = games("?status=finished").await;
    assert_eq!(finished, vec![(first.clone(), json!(0), json!("finished"))]);
    assert_eq!(games("?status=playing").await, all[..1].to_vec());
    let profile: Value = app
        .get_as("/v1/players/me", Some(&key))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(profile["games"], 2);

    for bad in ["?status=waiting", "?page=0", "?per_page=101"] {
        let res = app
            .get_as(&format!("/v1/players/me/games{bad}"), Some(&key))
            .await;
        assert_problem(res, 400, "bad_request").await;
    }
    assert_problem(app.get("/v1/players/me/games").await, 401, "unauthorized").await;
}

/// The next news of game `id` on a player's stream.
async fn news_of(stream: &mut EventStream, id: &str, kind: &str) -> Value {
    let event = stream.next(WITHIN).await.expect("news of the game");
    assert_eq!(event.event.as_deref(), Some(kind), "{}", event.data);
    assert_eq!(event.data["type"], kind);
    assert_eq!(event.data["game_id"], id);
    event.data
}

async fn the_players_stream_tells_of_its_games_started_and_finished(app: TestApp) {
    let (_, key) = player(&app, "fay").await;
    let (_, other) = player(&app, "gus").await;
    let mut stream = open_stream(&app, &key).await;
    let mut others = open_stream(&app, &other).await;
    let (id, _) = app
        .create_game(json!({"preset": "block", "seats": 3,
        "bots": [{"seat": 2, "level": "greedy"}]}))
        .await;
    join_as(&app, &id, &key, json!({"seat": 1})).await;
    // Not started yet: a seat is free. An anonymous player fills it.
    let anon = app.take_seat(&id, "anon").await;
    let started = news_of(&mut stream, &id, "game_started").await;
    assert_eq!(started["seat"], 1);
    assert_eq!(started["preset"], "block");
    assert_eq!(started["rated"], false);
    assert_eq!(started["players"], json!(["anon", "fay", "greedy bot"]));

    app.play(&id, &anon.token, &json!({"type": "resign"})).await;
    // Three seats: a resignation abandons the seat, play goes on; fay resigns too.
    app.play(&id, &key, &json!({"type": "resign"})).await;
    let finished = app.wait_until_finished(&id, None).await;
    let news = news_of(&mut stream, &id, "game_finished").await;
    assert_eq!(news["result"], finished["result"], "{finished}");
    // Nothing for a player with no seat there.
    assert!(others.next(Duration::from_millis(300)).await.is_none());

    assert_problem(app.get("/v1/players/me/events").await, 401, "unauthorized").await;
}

/// A stream held by one server hears of a game its player joined through another.
async fn streams_across_two_servers(a: TestApp, b: TestApp) {
    let (_, key) = player(&a, "hal").await;
    let mut stream = open_stream(&a, &key).await;
    let (id, _) = b.create_game(against_greedy()).await;
    assert_eq!(
        join_as(&b, &id, &key, json!({})).await.status().as_u16(),
        201
    );
    news_of(&mut stream, &id, "game_started").await;
    b.play(&id, &key, &json!({"type": "resign"})).await;
    news_of(&mut stream, &id, "game_finished").await;
}

#[tokio::test]
async fn redis_a_players_stream_hears_of_games_on_another_server() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    streams_across_two_servers(a, b).await;
}

#[tokio::test]
async fn cluster_a_players_stream_hears_of_games_on_another_server() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    streams_across_two_servers(a, b).await;
}

/// Issue 44: the player alice and an anonymous seat named "alice" look alike by name; the
/// bound seat says whose it is (`player_id`) in the view, the export and the player's
/// games, and the anonymous one says nothing.
async fn a_seat_bound_to_a_player_names_its_id_in_every_view_and_an_anonymous_namesake_none(
    app: TestApp,
) {
    let (alice, key) = player(&app, "alice").await;
    let (bound, _) = app.create_game(against_greedy()).await;
    assert_eq!(join_as(&app, &bound, &key, json!({})).await.status(), 201);
    let (anonymous, _) = app.create_game(against_greedy()).await;
    let namesake = app.take_seat(&anonymous, "alice").await;

    let view = app.view(&bound, None).await;
    assert_eq!(view["seats"][0]["name"], "alice");
    assert_eq!(view["seats"][0]["player_id"], alice.as_str());
    assert!(view["seats"][1].get("player_id").is_none(), "{view}");
    let view = app.view(&anonymous, None).await;
    assert_eq!(view["seats"][0]["name"], "alice");
    assert!(view["seats"][0].get("player_id").is_none(), "{view}");

    let res = app.get_as("/v1/players/me/games", Some(&key)).await;
    let list: Value = res.json().await.unwrap();
    assert_eq!(
        list["games"][0]["player_ids"],
        json!([alice, null]),
        "{list}"
    );

    app.play(&bound, &key, &json!({"type": "resign"})).await;
    app.play(&anonymous, &namesake.token, &json!({"type": "resign"}))
        .await;
    let export = |id: String| {
        let app = &app;
        async move {
            let res = app.get(&format!("/v1/games/{id}/export")).await;
            assert_eq!(res.status().as_u16(), 200);
            res.json::<Value>().await.unwrap()
        }
    };
    assert_eq!(export(bound).await["player_ids"], json!([alice, null]));
    assert_eq!(export(anonymous).await["player_ids"], json!([null, null]));
}
