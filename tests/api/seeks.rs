//! Seeks (matchmaking): seeks of one pool matched into one game with every seat bound;
//! other pools and one player's own seeks never matched; a fallback's built-in level;
//! cancel, expiry, the cap, bad seeks; and fifty seeks through two servers at once, each
//! used once and each player seated once.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use domino_server::settings::Settings;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, assert_problem, on_every_store, spawn_app_with,
    spawn_app_with_cluster_prefix, spawn_app_with_redis_prefix, test_settings, unique_prefix,
};

on_every_store!(
    two_seeks_of_one_pool_are_matched_into_one_game_with_both_seats_bound,
    seeks_of_other_pools_or_of_one_player_are_not_matched,
    a_seek_with_a_fallback_gets_a_built_in_level_after_its_wait,
    only_its_player_reads_or_cancels_a_seek_and_a_canceled_one_is_never_matched,
    bad_seeks_are_refused_naming_what_is_wrong,
    a_rated_seek_is_matched_with_a_close_rating_before_an_older_far_one,
    a_player_lists_its_waiting_seeks_newest_first_and_no_one_elses,
);

const WITHIN: Duration = Duration::from_secs(5);

async fn player(app: &TestApp, name: &str) -> (String, String) {
    app.new_player(name).await
}

async fn open_stream(app: &TestApp, key: &str) -> EventStream {
    app.player_stream(key).await
}

async fn post_seek(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url("/v1/seeks"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// `POST /v1/seeks`, answered 201; the seek.
async fn seek(app: &TestApp, key: &str, body: Value) -> Value {
    let res = post_seek(app, key, &body).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let made: Value = res.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/seeks/{}", made["id"].as_str().unwrap())
    );
    made
}

async fn read(app: &TestApp, id: &str, key: &str) -> Value {
    let res = app.get_as(&format!("/v1/seeks/{id}"), Some(key)).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn cancel(app: &TestApp, id: &str, key: &str) -> reqwest::Response {
    app.client
        .delete(app.url(&format!("/v1/seeks/{id}")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

async fn next_news(stream: &mut EventStream, kind: &str) -> Value {
    let event = stream.next(WITHIN).await.expect("news");
    assert_eq!(event.event.as_deref(), Some(kind), "{}", event.data);
    event.data
}

async fn two_seeks_of_one_pool_are_matched_into_one_game_with_both_seats_bound(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let (_, bob) = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut bobs = open_stream(&app, &bob).await;
    let wish = json!({"preset": "all_fives", "rated": true, "clock": {"bank_secs": 120}});
    let first = seek(&app, &ann, wish.clone()).await;
    assert_eq!(first["status"], "waiting", "{first}");
    assert_eq!(first["game_id"], Value::Null);
    assert_eq!(first["clock"]["bank_secs"], 120);
    let second = seek(&app, &bob, wish).await;
    assert_eq!(second["status"], "matched", "{second}");
    let game_id = second["game_id"].as_str().unwrap().to_owned();
    let first = read(&app, first["id"].as_str().unwrap(), &ann).await;
    assert_eq!(first["status"], "matched");
    assert_eq!(first["game_id"], game_id.as_str());
    let mut seats = HashSet::new();
    for stream in [&mut anns, &mut bobs] {
        let started = next_news(stream, "game_started").await;
        assert_eq!(started["game_id"], game_id.as_str());
        assert_eq!(started["rated"], true);
        seats.insert(started["seat"].as_u64().unwrap());
    }
    assert_eq!(seats, HashSet::from([0, 1]));
    for key in [&ann, &bob] {
        let view = app.view(&game_id, Some(key)).await;
        assert_eq!(view["status"], "playing", "{view}");
        assert!(view["you"].is_u64(), "{view}");
    }
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("domino_seeks_total{event=\"matched\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("domino_seek_wait_seconds_count 2"),
        "{metrics}"
    );
}

async fn seeks_of_other_pools_or_of_one_player_are_not_matched(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let (_, bob) = player(&app, "bob").await;
    let block = json!({"preset": "block"});
    let mine = seek(&app, &ann, block.clone()).await;
    // A second seek in the pool where Ann waits is her first, as it is: nothing new.
    let again = post_seek(&app, &ann, &block).await;
    assert_eq!(again.status().as_u16(), 200);
    let again: Value = again.json().await.unwrap();
    assert_eq!(
        (&again["id"], &again["status"]),
        (&mine["id"], &json!("waiting"))
    );
    for other in [
        json!({"preset": "all_fives"}),
        json!({"preset": "block", "seats": 3}),
        json!({"preset": "block", "rated": true}),
        json!({"preset": "block", "clock": {"bank_secs": 60}}),
    ] {
        assert_eq!(
            seek(&app, &bob, other.clone()).await["status"],
            "waiting",
            "{other}"
        );
    }
    // The sweep pairs nothing either (not a wait for a result: the time for a pairing that
    // must not come).
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mine = read(&app, mine["id"].as_str().unwrap(), &ann).await;
    assert_eq!(mine["status"], "waiting", "{mine}");
}

async fn a_seek_with_a_fallback_gets_a_built_in_level_after_its_wait(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let mut anns = open_stream(&app, &ann).await;
    let made = seek(
        &app,
        &ann,
        json!({"preset": "draw", "seats": 3, "fallback": {"after_secs": 1, "level": "expert"}}),
    )
    .await;
    assert_eq!(made["status"], "waiting");
    assert_eq!(
        made["fallback"],
        json!({"after_secs": 1, "level": "expert"})
    );
    let started = next_news(&mut anns, "game_started").await;
    let players = started["players"].as_array().unwrap();
    assert_eq!(
        players.iter().filter(|p| *p == "expert bot").count(),
        2,
        "{started}"
    );
    assert_eq!(players[started["seat"].as_u64().unwrap() as usize], "ann");
    let made = read(&app, made["id"].as_str().unwrap(), &ann).await;
    assert_eq!(made["status"], "matched");
    assert_eq!(made["game_id"], started["game_id"]);
    let view = app
        .view(started["game_id"].as_str().unwrap(), Some(&ann))
        .await;
    assert_eq!(view["status"], "playing");
}

async fn only_its_player_reads_or_cancels_a_seek_and_a_canceled_one_is_never_matched(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let (_, bob) = player(&app, "bob").await;
    let made = seek(&app, &ann, json!({"preset": "block"})).await;
    let id = made["id"].as_str().unwrap();
    assert_problem(cancel(&app, id, &bob).await, 403, "forbidden").await;
    let path = format!("/v1/seeks/{id}");
    assert_problem(app.get_as(&path, Some(&bob)).await, 403, "forbidden").await;
    assert_problem(app.get(&path).await, 401, "unauthorized").await;
    let unknown = format!("/v1/seeks/{}", uuid::Uuid::new_v4());
    assert_problem(app.get_as(&unknown, Some(&ann)).await, 404, "not_found").await;
    let res = cancel(&app, id, &ann).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["status"], "canceled");
    assert_eq!(read(&app, id, &ann).await["status"], "canceled");
    assert_eq!(
        seek(&app, &bob, json!({"preset": "block"})).await["status"],
        "waiting"
    );
}

async fn bad_seeks_are_refused_naming_what_is_wrong(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    for (body, status, code, names) in [
        (
            json!({"preset": "draw", "seats": 3, "rated": true}),
            422,
            "invalid_rules",
            "rated",
        ),
        (
            json!({"preset": "block", "fallback": {"after_secs": 0, "level": "greedy"}}),
            422,
            "invalid_rules",
            "after_secs",
        ),
        (
            json!({"preset": "block", "fallback": {"after_secs": 5, "level": "grandmaster"}}),
            400,
            "bad_request",
            "grandmaster",
        ),
        (
            json!({"preset": "block", "seats": 7}),
            422,
            "invalid_rules",
            "seat",
        ),
        (json!({"preset": "chess"}), 422, "invalid_rules", "chess"),
        (
            json!({"preset": "block", "rules": {"target": 50}}),
            400,
            "bad_request",
            "rules",
        ),
    ] {
        let problem = assert_problem(post_seek(&app, &ann, &body).await, status, code).await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains(names), "{body}: {detail}");
    }
    let res = app
        .post_json("/v1/seeks", &json!({"preset": "block"}))
        .await;
    assert_problem(res, 401, "unauthorized").await;
    // Five waiting at most, in five pools: the sixth is refused for what it is, not
    // as a rate (waiting does not free it; a seek matched, canceled or expired does).
    for bank in 0..5 {
        seek(&app, &ann, in_pool(bank)).await;
    }
    let res = post_seek(&app, &ann, &in_pool(5)).await;
    assert!(res.headers().get("retry-after").is_none());
    let problem = assert_problem(res, 409, "too_many_seeks").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("5 waiting seeks"), "{detail}");
}

/// A pool of its own for each `n`: its clock's bank.
fn in_pool(n: u64) -> Value {
    json!({"preset": "block", "clock": {"bank_secs": 60 + n}})
}

fn expiring(settings: Settings) -> Settings {
    Settings {
        seek_ttl: Duration::from_secs(1),
        ..settings
    }
}

async fn an_unmatched_seek_expires_and_its_player_is_told(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let mut anns = open_stream(&app, &ann).await;
    let made = seek(&app, &ann, json!({"preset": "block"})).await;
    let told = next_news(&mut anns, "seek_expired").await;
    assert_eq!(told["id"], made["id"]);
    assert_eq!(told["status"], "expired");
    assert_eq!(
        read(&app, made["id"].as_str().unwrap(), &ann).await["status"],
        "expired"
    );
    // An expired seek is not counted against the five.
    for bank in 0..5 {
        seek(&app, &ann, in_pool(bank)).await;
    }
}

#[tokio::test]
async fn memory_an_unmatched_seek_expires_and_its_player_is_told() {
    let app = spawn_app_with(expiring(test_settings())).await;
    an_unmatched_seek_expires_and_its_player_is_told(app).await;
}

#[tokio::test]
async fn redis_an_unmatched_seek_expires_and_its_player_is_told() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let app = spawn_app_with(expiring(Settings {
        redis_url: Some(url),
        redis_key_prefix: unique_prefix(),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    }))
    .await;
    an_unmatched_seek_expires_and_its_player_is_told(app).await;
}

/// Fifty players seek at once, half through each of two servers sharing a store: every
/// seek is matched once, into 25 games of two distinct players, each player in one game.
async fn fifty_seeks_through_two_servers(a: TestApp, b: TestApp) {
    let mut keys = Vec::new();
    for i in 0..50 {
        let app = if i % 2 == 0 { &a } else { &b };
        keys.push(player(app, &format!("p{i}")).await);
    }
    let wish = json!({"preset": "block"});
    let made = join_all(keys.iter().enumerate().map(|(i, (_, key))| {
        let app = if i % 2 == 0 { &a } else { &b };
        let wish = wish.clone();
        async move { seek(app, key, wish).await }
    }))
    .await;
    let mut games: HashMap<String, Vec<String>> = HashMap::new();
    for (i, made) in made.iter().enumerate() {
        let (id, key) = &keys[i];
        // Matched in its request, or by another's, or by a sweep.
        let mut seen = read(&a, made["id"].as_str().unwrap(), key).await;
        let deadline = tokio::time::Instant::now() + WITHIN;
        while seen["status"] == "waiting" && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            seen = read(&b, made["id"].as_str().unwrap(), key).await;
        }
        assert_eq!(seen["status"], "matched", "{seen}");
        games
            .entry(seen["game_id"].as_str().unwrap().to_owned())
            .or_default()
            .push(id.clone());
    }
    assert_eq!(games.len(), 25, "{games:?}");
    for (game, players) in &games {
        assert_eq!(players.len(), 2, "{game}: {players:?}");
        assert_ne!(players[0], players[1]);
        let view = a.view(game, None).await;
        assert_eq!(view["status"], "playing", "{view}");
    }
    for (_, key) in &keys {
        let mine: Value = a
            .get_as("/v1/players/me/games", Some(key))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(mine["games"].as_array().unwrap().len(), 1, "{mine}");
    }
}

#[tokio::test]
async fn redis_fifty_seeks_through_two_servers_at_once_are_each_used_once() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    fifty_seeks_through_two_servers(a, b).await;
}

#[tokio::test]
async fn cluster_fifty_seeks_through_two_servers_at_once_are_each_used_once() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    fifty_seeks_through_two_servers(a, b).await;
}

/// A player who lost three rated games to a built-in level: about 300 points down.
async fn lost_three(app: &TestApp, key: &str) {
    for _ in 0..3 {
        let res = app
            .client
            .post(app.url("/v1/challenges"))
            .bearer_auth(key)
            .json(&json!({"opponents": ["greedy"], "preset": "block", "rated": true}))
            .send()
            .await
            .unwrap();
        let made: Value = res.json().await.unwrap();
        let game = made["game_id"].as_str().unwrap().to_owned();
        app.each_moves(&game, &[key]).await;
        app.until_bots_replied(&game, key).await;
        app.play(&game, key, &json!({"type": "resign"})).await;
    }
}

async fn a_rated_seek_is_matched_with_a_close_rating_before_an_older_far_one(app: TestApp) {
    let (_, dan) = player(&app, "dan").await;
    let (_, ann) = player(&app, "ann").await;
    let (_, bob) = player(&app, "bob").await;
    lost_three(&app, &dan).await;
    let profile: Value = app.get("/v1/players/dan").await.json().await.unwrap();
    let rating = profile["ratings"]["block"]["rating"].as_f64().unwrap();
    assert!(rating < 1350.0, "{profile}");
    let wish = json!({"preset": "block", "rated": true});
    let dans = seek(&app, &dan, wish.clone()).await;
    assert_eq!(seek(&app, &ann, wish.clone()).await["status"], "waiting");
    let bobs = seek(&app, &bob, wish).await;
    assert_eq!(bobs["status"], "matched", "{bobs}");
    let dans = read(&app, dans["id"].as_str().unwrap(), &dan).await;
    assert_eq!(dans["status"], "waiting", "{dans}");
}

async fn a_player_lists_its_waiting_seeks_newest_first_and_no_one_elses(app: TestApp) {
    let (_, ann) = player(&app, "ann").await;
    let (_, bob) = player(&app, "bob").await;
    // Newest first is by creation time: each a millisecond apart, so none tie.
    let tick = || tokio::time::sleep(std::time::Duration::from_millis(2));
    let first = seek(&app, &ann, in_pool(0)).await;
    tick().await;
    let second = seek(&app, &ann, in_pool(1)).await;
    tick().await;
    let third = seek(&app, &ann, in_pool(2)).await;
    seek(&app, &bob, in_pool(3)).await;
    cancel(&app, second["id"].as_str().unwrap(), &ann).await;
    let res = app.get_as("/v1/seeks", Some(&ann)).await;
    assert_eq!(res.status().as_u16(), 200);
    let list: Value = res.json().await.unwrap();
    let ids: Vec<&Value> = list["seeks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["id"])
        .collect();
    assert_eq!(ids, [&third["id"], &first["id"]], "{list}");
    assert_eq!((&list["page"], &list["per_page"]), (&json!(1), &json!(20)));
    let page = app.get_as("/v1/seeks?page=2&per_page=1", Some(&ann)).await;
    let page: Value = page.json().await.unwrap();
    assert_eq!(page["seeks"][0]["id"], first["id"], "{page}");
    assert_problem(app.get("/v1/seeks").await, 401, "unauthorized").await;
    let res = app.get_as("/v1/seeks?per_page=101", Some(&ann)).await;
    assert_problem(res, 400, "bad_request").await;
}
