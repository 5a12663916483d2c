//! Bots off the request path: a table of bots alone answers at once and plays on by itself;
//! bots past a request's budget catch up in the background, on any store and any process.

use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{
    TestApp, on_every_store, spawn_app_to_be_left, spawn_app_with, test_settings, unique_prefix,
};
use crate::proxy::redis_url;

on_every_store!(
    a_table_of_bots_alone_answers_at_once_and_plays_to_the_end_by_itself,
    health_answers_while_two_tables_of_expert_bots_play,
);

/// Four greedy bots to 1000 points: hundreds of moves, none made inside the create.
fn bots_alone(level: &str) -> Value {
    json!({"preset": "draw", "seats": 4, "rules": {"target": 1000},
           "bots": [{"seat": 0, "level": level}, {"seat": 1, "level": level},
                    {"seat": 2, "level": level}, {"seat": 3, "level": level}]})
}

async fn a_table_of_bots_alone_answers_at_once_and_plays_to_the_end_by_itself(app: TestApp) {
    let (id, created) = app.create_game(bots_alone("greedy")).await;
    assert_eq!(created["status"], "playing", "{created}");
    assert_eq!(
        created["version"], 1,
        "only the create is stored: {created}"
    );
    let end = app.wait_until_finished(&id, None).await;
    assert!(end["result"].is_object(), "{end}");
    let log = app.log(&id, None).await;
    assert!(log["moves"].as_array().unwrap().len() > 100, "{log}");
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("domino_bot_moves_total{where=\"background\"}")),
        "{metrics}"
    );
}

/// Two tables of expert bots (seconds of thinking each, in release) do not hold the
/// server: the health check answers while both still play.
async fn health_answers_while_two_tables_of_expert_bots_play(app: TestApp) {
    let (a, first) = app.create_game(bots_alone("expert")).await;
    let (b, second) = app.create_game(bots_alone("expert")).await;
    assert_eq!(
        (&first["status"], &second["status"]),
        (&json!("playing"), &json!("playing"))
    );
    assert_eq!(app.get("/healthz").await.status().as_u16(), 200);
    for id in [a, b] {
        assert_eq!(
            app.view(&id, None).await["status"],
            "playing",
            "answered before the end"
        );
    }
}

/// A human against a bot with no budget at all: the move answers with only its own move
/// stored, and the bot's reply follows in the background.
#[tokio::test]
async fn a_move_past_the_bots_budget_is_stored_and_the_bots_catch_up_in_the_background() {
    let app = spawn_app_with(Settings {
        bot_budget: Duration::ZERO,
        ..test_settings()
    })
    .await;
    let (id, _) = app
        .create_game(json!({"preset": "draw", "seats": 2, "seed": "budget",
                            "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let ann = app.take_seat(&id, "ann").await;
    // Whoever leads, wait for ann's turn (the bot may lead, in the background).
    let mut view = app.view(&id, Some(&ann.token)).await;
    while view["round"]["turn"] != 0 {
        let version = view["version"].as_u64().unwrap();
        view = app
            .get_as(
                &format!("/v1/games/{id}?after={version}&wait=8"),
                Some(&ann.token),
            )
            .await
            .json()
            .await
            .unwrap();
        assert!(view["version"].as_u64().unwrap() > version, "{view}");
    }
    let moved = app.play(&id, &ann.token, &view["legal_moves"][0]).await;
    let version = moved["version"].as_u64().unwrap();
    assert_eq!(
        moved["round"]["turn"], 1,
        "the bot is still to move: {moved}"
    );
    // The bot's reply arrives by itself.
    let later: Value = app
        .get_as(
            &format!("/v1/games/{id}?after={version}&wait=8"),
            Some(&ann.token),
        )
        .await
        .json()
        .await
        .unwrap();
    assert!(later["version"].as_u64().unwrap() > version, "{later}");
    let log = app.log(&id, None).await;
    let last = log["moves"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["seat"], 1, "the bot moved: {log}");
}

/// A human against a master (fixed work, so the test does not hang on the machine's
/// speed): the master's reply is stored with the human's move, inside the request, and a
/// whole match plays to its end with the master in it.
#[tokio::test]
async fn a_master_replies_inside_the_request_and_plays_a_whole_match() {
    let app = spawn_app_with(Settings {
        bot_budget: Duration::from_secs(10),
        bot_master_work: Some(5_000),
        ..test_settings()
    })
    .await;
    let (id, _) = app
        .create_game(json!({"preset": "block", "seats": 2, "seed": "master",
                            "rules": {"target": 20},
                            "bots": [{"seat": 1, "level": "master"}]}))
        .await;
    let ann = app.take_seat(&id, "ann").await;
    let mut replies = 0;
    for _ in 0..500 {
        let view = app.view(&id, Some(&ann.token)).await;
        if view["status"] == "finished" {
            break;
        }
        assert_eq!(view["round"]["turn"], 0, "the master answered: {view}");
        let moved = app.play(&id, &ann.token, &view["legal_moves"][0]).await;
        let log = app.log(&id, None).await;
        let last = log["moves"].as_array().unwrap().last().unwrap().clone();
        if moved["status"] != "finished" && last["seat"] == 1 {
            replies += 1;
        }
    }
    let end = app.view(&id, Some(&ann.token)).await;
    assert_eq!(end["status"], "finished", "{end}");
    assert!(replies > 3, "the master replied {replies} times");
}

/// A table of bots alone created through one server, finished by the other's sweep after
/// the first is gone (as after a restart): the bots' turn is due in the store, not in the
/// process that saved it. The first reaches Redis through a proxy taken down as soon as
/// the table is created, so it cannot play the table to its end before it stops, however
/// slow the machine is; it still holds the bots' lease, which the second waits out.
#[tokio::test]
async fn a_table_of_bots_left_by_a_stopped_server_is_finished_by_another() {
    let (first, proxy, settings) = spawn_app_to_be_left().await;
    let (id, created) = first.create_game(bots_alone("greedy")).await;
    proxy.stop();
    assert_eq!(created["status"], "playing");
    first.stop().await;
    let second = spawn_app_with(settings).await;
    let left = second.view(&id, None).await;
    assert_eq!(left["status"], "playing", "{left}");
    let end = second.wait_until_finished(&id, None).await;
    assert!(end["result"].is_object(), "{end}");
    // The second played bots: the game was left to it, not finished by the first. Its
    // counters move just after the save, which a reader may see first (the save wakes
    // the long poll): they are read until they show it, for a while.
    let mut metrics = String::new();
    for _ in 0..50 {
        metrics = second.get("/metrics").await.text().await.unwrap();
        let background = metrics
            .lines()
            .find_map(|l| l.strip_prefix("domino_bot_moves_total{where=\"background\"} "))
            .and_then(|n| n.parse::<u64>().ok());
        if background.is_some_and(|n| n > 0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the second server stored no bot move: {metrics}");
}

/// Fifty tables of expert bots alone play, all at once on this server: a human's move
/// against a greedy bot still answers within a second (the default budget of 200 ms and a
/// margin for a loaded machine), with the bot's reply made inside the request. The tables
/// think only on the threads nobody else waits for, and yield after their move when a
/// human's job waits.
#[tokio::test]
async fn a_humans_move_against_greedy_answers_within_a_second_while_fifty_tables_of_experts_play() {
    let app = busy_with_fifty_tables_of_experts().await;
    let (id, _) = app
        .create_game(json!({"preset": "draw", "seats": 2, "seed": "busy tables",
                            "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let ann = app.take_seat(&id, "ann").await;
    for _ in 0..6 {
        let view = app.view(&id, Some(&ann.token)).await;
        if view["status"] == "finished" {
            break;
        }
        assert_eq!(
            view["your_turn"], true,
            "the bot replied in the last request: {view}"
        );
        let start = Instant::now();
        let moved = app.play(&id, &ann.token, &view["legal_moves"][0]).await;
        let took = start.elapsed();
        assert!(
            took < Duration::from_millis(200 + 800),
            "answered in {took:?}: {moved}"
        );
    }
}

/// A server playing fifty tables of expert bots alone at once, in runs of 2 s: a job that
/// waited behind them in one queue would wait about that long for a thread.
async fn busy_with_fifty_tables_of_experts() -> TestApp {
    let app = spawn_app_with(Settings {
        bot_tables: 50,
        bot_budget: Duration::from_secs(2),
        ..test_settings()
    })
    .await;
    for _ in 0..50 {
        app.create_game(bots_alone("expert")).await;
    }
    app
}

/// Fifty tables of expert bots alone play: a seat out of time is still acted on within a
/// second of its deadline (and the time this test takes to look, every 50 ms).
#[tokio::test]
async fn a_clock_that_runs_out_is_acted_on_within_a_second_while_fifty_tables_of_experts_play() {
    let app = busy_with_fifty_tables_of_experts().await;
    let (id, _) = app
        .start_game(json!({"preset": "draw", "seed": "busy clock",
            "clock": {"bank_secs": 1, "abandon_after": 100}}))
        .await;
    let started = app.view(&id, None).await;
    let deadline = started["clock"]["deadline_ms"].as_u64().unwrap();
    let version = started["version"].as_u64().unwrap();
    loop {
        let view = app.view(&id, None).await;
        let now = view["clock"]["now_ms"].as_u64().unwrap();
        if view["version"].as_u64().unwrap() > version {
            assert!(
                now < deadline + 1_000 + 300,
                "acted on {} ms after the deadline",
                now - deadline
            );
            break;
        }
        assert!(now < deadline + 10_000, "not acted on within 10 s: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One table of bots alone at a time here (`BOT_TABLES=1`): a table made while another
/// holds that place makes its first move while the other still plays, for a table under
/// way gives its place up after a run to a table that has moved less (the one place held
/// for the other's whole game kept a bystander's table waiting 25 s, issue 44).
async fn a_table_made_while_another_holds_the_only_place_moves_before_that_one_ends(redis: bool) {
    let settings = Settings {
        bot_tables: 1,
        bot_budget: Duration::from_millis(50),
        ..test_settings()
    };
    let app = spawn_app_with(if redis {
        Settings {
            redis_url: Some(redis_url()),
            redis_key_prefix: unique_prefix(),
            ..settings
        }
    } else {
        settings
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (under_way, _) = app.create_game(bots_alone("expert")).await;
    while app.view(&under_way, None).await["version"] == 1 {
        assert!(Instant::now() < deadline, "the first table never moved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (new, _) = app.create_game(bots_alone("expert")).await;
    while app.view(&new, None).await["version"] == 1 {
        let other = app.view(&under_way, None).await;
        assert_eq!(
            other["status"], "playing",
            "the new table waited for the other's whole game"
        );
        assert!(Instant::now() < deadline, "the new table never moved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(app.view(&under_way, None).await["status"], "playing");
}

#[tokio::test]
async fn memory_a_table_made_while_another_holds_the_only_place_moves_before_that_one_ends() {
    a_table_made_while_another_holds_the_only_place_moves_before_that_one_ends(false).await;
}

#[tokio::test]
async fn redis_a_table_made_while_another_holds_the_only_place_moves_before_that_one_ends() {
    a_table_made_while_another_holds_the_only_place_moves_before_that_one_ends(true).await;
}
