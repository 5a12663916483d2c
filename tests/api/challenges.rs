//! Challenges: made, told on the opponents' streams, accepted into exactly one game with
//! every seat bound, declined, canceled, expired; who may answer what; bad challenges;
//! and answers through two servers sharing a store.

use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, assert_problem, on_every_store, spawn_app_with,
    spawn_app_with_cluster_prefix, spawn_app_with_redis_prefix, test_settings, unique_prefix,
};

on_every_store!(
    a_challenge_is_told_to_its_opponent_and_its_acceptance_starts_one_game_with_both_seats_bound,
    a_challenge_of_built_in_levels_only_starts_its_game_at_once,
    a_decline_closes_the_challenge_for_everyone_and_later_answers_are_challenge_closed,
    only_the_challenger_cancels_and_only_an_opponent_answers,
    bad_challenges_are_refused_naming_what_is_wrong_and_make_nothing,
);

const WITHIN: Duration = Duration::from_secs(5);

/// A new player's key.
async fn player(app: &TestApp, name: &str) -> String {
    app.new_player(name).await.1
}

async fn post_as(app: &TestApp, path: &str, key: &str, body: Option<Value>) -> reqwest::Response {
    app.post_as(path, key, body.as_ref()).await
}

async fn open_stream(app: &TestApp, key: &str) -> EventStream {
    app.player_stream(key).await
}

/// `POST /v1/challenges` by `key`, answered 201; the challenge.
async fn challenge(app: &TestApp, key: &str, body: Value) -> Value {
    let res = post_as(app, "/v1/challenges", key, Some(body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let made: Value = res.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/challenges/{}", made["id"].as_str().unwrap())
    );
    made
}

async fn answer(app: &TestApp, id: &str, what: &str, key: &str) -> reqwest::Response {
    post_as(app, &format!("/v1/challenges/{id}/{what}"), key, None).await
}

async fn cancel(app: &TestApp, id: &str, key: &str) -> reqwest::Response {
    app.client
        .delete(app.url(&format!("/v1/challenges/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

async fn listed(app: &TestApp, key: &str, direction: &str) -> Vec<String> {
    let res = app
        .get_as(&format!("/v1/challenges?direction={direction}"), Some(key))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let list: Value = res.json().await.unwrap();
    list["challenges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The next event on a player's stream, which must be `kind`.
async fn next_news(stream: &mut EventStream, kind: &str) -> Value {
    let event = stream.next(WITHIN).await.expect("news");
    assert_eq!(event.event.as_deref(), Some(kind), "{}", event.data);
    assert_eq!(event.data["type"], kind);
    event.data
}

async fn ok(res: reqwest::Response) -> Value {
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn a_challenge_is_told_to_its_opponent_and_its_acceptance_starts_one_game_with_both_seats_bound(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut bobs = open_stream(&app, &bob).await;
    let made = challenge(
        &app,
        &ann,
        json!({"opponents": ["Bob"], "preset": "all_fives", "rated": true,
               "clock": {"bank_secs": 300}}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    assert_eq!(made["status"], "open");
    assert_eq!(made["challenger"]["name"], "ann");
    assert_eq!(made["opponents"][0]["name"], "bob");
    assert_eq!(made["opponents"][0]["accepted"], false);
    assert_eq!(made["rated"], true);
    assert_eq!(made["clock"]["bank_secs"], 300);
    assert_eq!(made["rules"]["scoring"], "fives", "{made}");
    assert_eq!(made["game_id"], Value::Null);
    let told = next_news(&mut bobs, "challenge").await;
    assert_eq!(told["id"], id);
    assert_eq!(listed(&app, &bob, "in").await, vec![id.to_owned()]);
    assert_eq!(listed(&app, &ann, "out").await, vec![id.to_owned()]);
    assert!(listed(&app, &ann, "in").await.is_empty());

    let accepted = ok(answer(&app, id, "accept", &bob).await).await;
    assert_eq!(accepted["status"], "accepted");
    let game_id = accepted["game_id"].as_str().unwrap().to_owned();
    // Accepting again answers the challenge as it is: the same game.
    let again = ok(answer(&app, id, "accept", &bob).await).await;
    assert_eq!(again["game_id"], game_id.as_str());
    for stream in [&mut anns, &mut bobs] {
        let started = next_news(stream, "game_started").await;
        assert_eq!(started["game_id"], game_id.as_str());
        assert_eq!(started["rated"], true);
        assert_eq!(started["players"], json!(["ann", "bob"]));
    }
    let view = app.view(&game_id, Some(&ann)).await;
    assert_eq!(view["status"], "playing", "{view}");
    assert_eq!(view["you"], 0, "{view}");
    assert_eq!(app.view(&game_id, Some(&bob)).await["you"], 1);
    // Both keys play their seats.
    let to_move = if view["your_turn"] == true {
        &ann
    } else {
        &bob
    };
    let legal = app.view(&game_id, Some(to_move)).await["legal_moves"][0].clone();
    app.play(&game_id, to_move, &legal).await;
    assert!(listed(&app, &bob, "in").await.is_empty());
    assert!(listed(&app, &ann, "out").await.is_empty());
    let games = ok(app
        .get_as("/v1/players/me/games?status=playing", Some(&ann))
        .await)
    .await;
    assert_eq!(games["games"][0]["game_id"], game_id.as_str(), "{games}");
}

async fn a_challenge_of_built_in_levels_only_starts_its_game_at_once(app: TestApp) {
    let ann = player(&app, "ann").await;
    let mut anns = open_stream(&app, &ann).await;
    let made = challenge(
        &app,
        &ann,
        json!({"opponents": ["greedy", "expert"], "preset": "draw", "seats": 3}),
    )
    .await;
    assert_eq!(made["status"], "accepted", "{made}");
    assert_eq!(made["opponents"][1]["bot"], true);
    let game_id = made["game_id"].as_str().unwrap();
    let started = next_news(&mut anns, "game_started").await;
    assert_eq!(started["game_id"], game_id);
    assert_eq!(started["seat"], 0);
    assert_eq!(
        started["players"],
        json!(["ann", "greedy bot", "expert bot"])
    );
    // The bots move up to ann's turn, off the request (the create answers at once).
    let deadline = Instant::now() + Duration::from_secs(10);
    let view = loop {
        let view = app.view(game_id, Some(&ann)).await;
        if view["your_turn"] == true || Instant::now() > deadline {
            break view;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(view["status"], "playing");
    assert_eq!(view["your_turn"], true, "{view}");
    assert!(listed(&app, &ann, "out").await.is_empty());
    let fetched = ok(app
        .get_as(
            &format!("/v1/challenges/{}", made["id"].as_str().unwrap()),
            Some(&ann),
        )
        .await)
    .await;
    assert_eq!(fetched["game_id"], game_id);
}

async fn a_decline_closes_the_challenge_for_everyone_and_later_answers_are_challenge_closed(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let cat = player(&app, "cat").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut bobs = open_stream(&app, &bob).await;
    let made = challenge(
        &app,
        &ann,
        json!({"opponents": ["bob", "cat"], "preset": "draw", "seats": 3}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    next_news(&mut bobs, "challenge").await;
    ok(answer(&app, id, "accept", &bob).await).await;
    let declined = ok(answer(&app, id, "decline", &cat).await).await;
    assert_eq!(declined["status"], "declined");
    assert_eq!(declined["game_id"], Value::Null);
    assert_eq!(declined["opponents"][0]["accepted"], true);
    for stream in [&mut anns, &mut bobs] {
        let told = next_news(stream, "challenge_declined").await;
        assert_eq!(told["id"], id);
        assert_eq!(told["declined_by"], declined["declined_by"]);
    }
    // The same answer again is harmless; any other is refused.
    ok(answer(&app, id, "decline", &cat).await).await;
    assert_problem(
        answer(&app, id, "accept", &cat).await,
        409,
        "challenge_closed",
    )
    .await;
    assert_problem(
        answer(&app, id, "decline", &bob).await,
        409,
        "challenge_closed",
    )
    .await;
    assert_problem(cancel(&app, id, &ann).await, 409, "challenge_closed").await;
    assert!(listed(&app, &cat, "in").await.is_empty());
    let games = ok(app.get_as("/v1/players/me/games", Some(&ann)).await).await;
    assert_eq!(games["games"], json!([]), "no game was made");
}

async fn only_the_challenger_cancels_and_only_an_opponent_answers(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let dan = player(&app, "dan").await;
    let mut bobs = open_stream(&app, &bob).await;
    let made = challenge(&app, &ann, json!({"opponents": ["bob"], "preset": "block"})).await;
    let id = made["id"].as_str().unwrap();
    next_news(&mut bobs, "challenge").await;
    assert_problem(cancel(&app, id, &bob).await, 403, "forbidden").await;
    assert_problem(answer(&app, id, "accept", &ann).await, 403, "forbidden").await;
    assert_problem(answer(&app, id, "accept", &dan).await, 403, "forbidden").await;
    let path = format!("/v1/challenges/{id}");
    assert_problem(app.get_as(&path, Some(&dan)).await, 403, "forbidden").await;
    assert_problem(app.get(&path).await, 401, "unauthorized").await;
    let unknown = format!("/v1/challenges/{}", uuid::Uuid::new_v4());
    assert_problem(app.get_as(&unknown, Some(&ann)).await, 404, "not_found").await;

    let canceled = ok(cancel(&app, id, &ann).await).await;
    assert_eq!(canceled["status"], "canceled");
    ok(cancel(&app, id, &ann).await).await;
    let told = next_news(&mut bobs, "challenge_canceled").await;
    assert_eq!(told["id"], id);
    assert_problem(
        answer(&app, id, "accept", &bob).await,
        409,
        "challenge_closed",
    )
    .await;
    assert_eq!(
        ok(app.get_as(&path, Some(&bob)).await).await["status"],
        "canceled"
    );
}

async fn bad_challenges_are_refused_naming_what_is_wrong_and_make_nothing(app: TestApp) {
    let ann = player(&app, "ann").await;
    player(&app, "bob").await;
    let refused = |body: Value| {
        let (app, ann) = (&app, &ann);
        async move { post_as(app, "/v1/challenges", ann, Some(body)).await }
    };
    for (body, status, code, names) in [
        (
            json!({"opponents": [], "preset": "block"}),
            400,
            "bad_request",
            "opponents",
        ),
        (
            json!({"opponents": ["bob", "greedy"], "preset": "block"}),
            400,
            "bad_request",
            "opponents",
        ),
        (
            json!({"opponents": ["nobody"], "preset": "block"}),
            404,
            "not_found",
            "nobody",
        ),
        (
            json!({"opponents": ["ann"], "preset": "block"}),
            400,
            "bad_request",
            "itself",
        ),
        (
            json!({"opponents": ["bob", "BOB"], "preset": "block", "seats": 3}),
            400,
            "bad_request",
            "twice",
        ),
        (
            json!({"opponents": ["bob", "greedy"], "preset": "draw", "seats": 3, "rated": true}),
            422,
            "invalid_rules",
            "rated",
        ),
        (
            json!({"opponents": ["bob"], "preset": "draw", "rules": {"target": 50}, "rated": true}),
            422,
            "invalid_rules",
            "rated",
        ),
        (
            json!({"opponents": ["bob"], "preset": "draw", "rules": {"hand_size": 30}}),
            422,
            "invalid_rules",
            "hand_size",
        ),
        (
            json!({"opponents": ["bob"], "preset": "chess"}),
            422,
            "invalid_rules",
            "chess",
        ),
        (
            json!({"opponents": ["bob"], "preset": "block", "clock": {"bank_secs": 0}}),
            422,
            "invalid_rules",
            "bank_secs",
        ),
        (
            json!({"opponents": ["bob"], "preset": "block", "colour": "red"}),
            400,
            "bad_request",
            "colour",
        ),
    ] {
        let problem = assert_problem(refused(body.clone()).await, status, code).await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(names), "{body}: {detail}");
    }
    let res = app
        .post_json(
            "/v1/challenges",
            &json!({"opponents": ["bob"], "preset": "block"}),
        )
        .await;
    assert_problem(res, 401, "unauthorized").await;
    assert!(listed(&app, &ann, "out").await.is_empty());
    let res = app
        .get_as("/v1/challenges?direction=sideways", Some(&ann))
        .await;
    assert_problem(res, 400, "bad_request").await;
}

/// Settings whose challenges expire after a second.
fn expiring(settings: Settings) -> Settings {
    Settings {
        challenge_ttl: Duration::from_secs(1),
        ..settings
    }
}

async fn an_unanswered_challenge_expires_and_its_players_are_told(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut bobs = open_stream(&app, &bob).await;
    let made = challenge(&app, &ann, json!({"opponents": ["bob"], "preset": "block"})).await;
    let id = made["id"].as_str().unwrap();
    next_news(&mut bobs, "challenge").await;
    for stream in [&mut anns, &mut bobs] {
        let told = next_news(stream, "challenge_expired").await;
        assert_eq!(told["id"], id);
        assert_eq!(told["status"], "expired");
    }
    assert_problem(
        answer(&app, id, "accept", &bob).await,
        409,
        "challenge_closed",
    )
    .await;
    assert!(listed(&app, &bob, "in").await.is_empty());
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("domino_challenges_total{event=\"expired\"} 1"),
        "{metrics}"
    );
}

#[tokio::test]
async fn memory_an_unanswered_challenge_expires_and_its_players_are_told() {
    let app = spawn_app_with(expiring(test_settings())).await;
    an_unanswered_challenge_expires_and_its_players_are_told(app).await;
}

#[tokio::test]
async fn redis_an_unanswered_challenge_expires_and_its_players_are_told() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let app = spawn_app_with(expiring(Settings {
        redis_url: Some(url),
        redis_key_prefix: unique_prefix(),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    }))
    .await;
    an_unanswered_challenge_expires_and_its_players_are_told(app).await;
}

#[tokio::test]
async fn memory_a_player_has_at_most_twenty_open_challenges() {
    let app = crate::helpers::spawn_app().await;
    let ann = player(&app, "ann").await;
    player(&app, "bob").await;
    let body = json!({"opponents": ["bob"], "preset": "block"});
    let mut first = None;
    for _ in 0..20 {
        first.get_or_insert(challenge(&app, &ann, body.clone()).await);
    }
    let res = post_as(&app, "/v1/challenges", &ann, Some(body.clone())).await;
    assert_problem(res, 429, "rate_limited").await;
    // One closed makes room for one more.
    let id = first.unwrap()["id"].as_str().unwrap().to_owned();
    ok(cancel(&app, &id, &ann).await).await;
    challenge(&app, &ann, body).await;
}

/// Two servers on one store: a challenge made through one is accepted through the
/// other, by both opponents at once and many times over; it becomes exactly one game.
async fn one_game_from_answers_through_two_servers(a: TestApp, b: TestApp) {
    let ann = player(&a, "ann").await;
    let bob = player(&a, "bob").await;
    let cat = player(&b, "cat").await;
    let mut anns = open_stream(&b, &ann).await;
    let made = challenge(
        &a,
        &ann,
        json!({"opponents": ["bob", "cat"], "preset": "draw", "seats": 3}),
    )
    .await;
    let id = made["id"].as_str().unwrap();
    assert_eq!(listed(&b, &cat, "in").await, vec![id.to_owned()]);
    let answers = join_all((0..10).flat_map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        [
            answer(app, id, "accept", &bob),
            answer(app, id, "accept", &cat),
        ]
    }))
    .await;
    let mut games = Vec::new();
    for res in answers {
        let answered = ok(res).await;
        games.push(answered["game_id"].clone());
    }
    let accepted = ok(a.get_as(&format!("/v1/challenges/{id}"), Some(&ann)).await).await;
    assert_eq!(accepted["status"], "accepted");
    let game_id = accepted["game_id"].as_str().unwrap();
    // An answer before the last acceptance has no game yet; every other names the one.
    assert!(
        games.iter().all(|g| g.is_null() || g == game_id),
        "{games:?}"
    );
    let started = next_news(&mut anns, "game_started").await;
    assert_eq!(started["game_id"], game_id);
    assert!(anns.next(Duration::from_millis(300)).await.is_none());
    let listed_games = ok(b.get_as("/v1/players/me/games", Some(&ann)).await).await;
    assert_eq!(
        listed_games["games"].as_array().unwrap().len(),
        1,
        "{listed_games}"
    );
}

#[tokio::test]
async fn redis_a_challenge_answered_through_two_servers_at_once_becomes_one_game() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    one_game_from_answers_through_two_servers(a, b).await;
}

#[tokio::test]
async fn cluster_a_challenge_answered_through_two_servers_at_once_becomes_one_game() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    one_game_from_answers_through_two_servers(a, b).await;
}
