//! Clocks, resigning and absent players: a seat out of time is played by a bot (or loses),
//! whether or not any request arrives, exactly once with two servers, and after the only
//! server that saw the game has stopped. Banks are 1 s, so waits are a few seconds; every
//! wait polls with a deadline instead of sleeping a fixed time.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::child::ChildServer;
use crate::helpers::{
    TestApp, assert_problem, on_every_store, spawn_app_with_cluster_prefix,
    spawn_app_with_redis_prefix, unique_prefix,
};

/// Long enough for a 1 s bank, the sweep and a loaded CI machine.
const WITHIN: Duration = Duration::from_secs(15);

/// Polls the spectator view until `done` holds; fails after `WITHIN`.
async fn wait_for(app: &TestApp, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let view = app.view(id, None).await;
        if done(&view) {
            return view;
        }
        assert!(
            start.elapsed() < WITHIN,
            "{what}: not within {WITHIN:?}: {view}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn log_types(log: &Value) -> Vec<(u64, String)> {
    log["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["seat"].as_u64().unwrap(),
                m["move"]["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

on_every_store!(
    a_seat_out_of_time_is_played_by_a_bot_with_no_request_arriving,
    a_seat_out_of_time_too_often_is_abandoned_and_its_token_may_no_longer_move,
    a_seat_out_of_time_under_forfeit_loses_the_match,
    a_timeout_bot_plays_one_turn_and_the_seat_is_abandoned_after_abandon_after_timeouts,
    a_resignation_with_two_sides_ends_the_match_on_turn_or_off,
    a_resignation_among_three_seats_hands_the_seat_to_a_bot_and_play_goes_on,
    the_banks_show_the_increment_and_the_deadline_of_the_seat_to_move,
    a_turn_of_many_draws_earns_the_increment_once,
    clock_settings_out_of_range_are_refused_naming_the_field,
);

async fn a_seat_out_of_time_is_played_by_a_bot_with_no_request_arriving(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "clock bot",
            "clock": {"bank_secs": 1, "abandon_after": 100}}))
        .await;
    let started = app.view(&id, Some(&players[0].token)).await;
    let clock = &started["clock"];
    assert_eq!(clock["bank_secs"], 1);
    let first = started["round"]["turn"].as_u64().unwrap();
    let bank = clock["banks_ms"][first as usize].as_u64().unwrap();
    assert!((1..=1000).contains(&bank), "running, not yet out: {clock}");
    let deadline = clock["deadline_ms"].as_u64().unwrap();
    assert!(
        deadline <= clock["now_ms"].as_u64().unwrap() + 1000,
        "{clock}"
    );

    let after = wait_for(&app, &id, "a timeout", |v| {
        v["version"].as_u64() > started["version"].as_u64()
    })
    .await;
    assert_eq!(after["clock"]["banks_ms"][first as usize], 0, "{after}");
    let log = app.log(&id, None).await;
    let moves = log_types(&log);
    assert_eq!(moves[0], (first, "timed_out".to_owned()), "{log}");
    assert_eq!(moves[1].0, first, "the bot moved for the seat: {log}");
    assert_eq!(
        log["moves"][0]["events"][0],
        json!({"type": "timed_out", "seat": first})
    );
    assert!(
        !after["seats"][first as usize]["abandoned"]
            .as_bool()
            .unwrap()
    );
}

async fn a_seat_out_of_time_too_often_is_abandoned_and_its_token_may_no_longer_move(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "abandon",
            "clock": {"bank_secs": 1, "abandon_after": 2, "timeout_bot": "random"}}))
        .await;
    // Nobody moves: each seat times out twice in a row, is abandoned, and bots finish.
    let over = wait_for(&app, &id, "the match's end", |v| v["status"] == "finished").await;
    for seat in over["seats"].as_array().unwrap() {
        assert_eq!(seat["abandoned"], true, "{over}");
    }
    let moves = log_types(&app.log(&id, None).await);
    for seat in 0..2 {
        let timed_out = moves
            .iter()
            .filter(|m| **m == (seat, "timed_out".into()))
            .count();
        assert_eq!(timed_out, 2, "seat {seat}: {moves:?}");
        assert_eq!(
            moves
                .iter()
                .filter(|m| **m == (seat, "abandon".into()))
                .count(),
            1
        );
    }
    let refused = app
        .post_move(&id, &players[0].token, &json!({"type": "pass"}))
        .await;
    assert_problem(refused, 409, "seat_abandoned").await;
    // Its token still reads the game, and is offered nothing to do.
    let view = app.view(&id, Some(&players[0].token)).await;
    assert_eq!(view["you"], 0);
    assert_eq!(view["legal_moves"], json!([]));
    assert_eq!(view["your_turn"], false);
}

/// Issue 27, 3: seat 0 goes out on its lead and, under `next_leader: winner`, leads the
/// next round at once. The timeout bot plays that one turn, not the seat's turns to the
/// end of the match; with `abandon_after: 1` the seat is then abandoned, and every later
/// move for it is the bot's of an abandoned seat.
async fn a_timeout_bot_plays_one_turn_and_the_seat_is_abandoned_after_abandon_after_timeouts(
    app: TestApp,
) {
    let hands = [["6-6"], ["5-5"]];
    let boneyard: Vec<String> = (0..=6)
        .flat_map(|hi| (0..=hi).map(move |lo| format!("{lo}-{hi}")))
        .filter(|t| !hands.iter().flatten().any(|h| h == t))
        .collect();
    let (id, _) = app
        .start_game(json!({"preset": "all_fives", "rules": {"hand_size": 1},
            "deal": {"hands": hands, "boneyard": boneyard},
            "clock": {"bank_secs": 1, "on_timeout": "bot", "abandon_after": 1}}))
        .await;
    let view = wait_for(&app, &id, "seat 0 abandoned or the match over", |v| {
        v["seats"][0]["abandoned"] == true || v["status"] == "finished"
    })
    .await;
    assert_eq!(view["seats"][0]["abandoned"], true, "{view}");
    let log = app.log(&id, None).await;
    let moves = log_types(&log);
    assert_eq!(
        moves[..3],
        [
            (0, "timed_out".to_owned()),
            (0, "play".to_owned()),
            (0, "abandon".to_owned())
        ],
        "{log}"
    );
    assert_eq!(
        log["moves"][2]["events"],
        json!([{"type": "abandoned", "seat": 0}])
    );
    assert_eq!(
        moves.iter().filter(|m| m.1 == "timed_out").count(),
        1,
        "one timeout, then the seat is the bot's: {moves:?}"
    );
}

async fn a_seat_out_of_time_under_forfeit_loses_the_match(app: TestApp) {
    let (id, _) = app
        .start_game(json!({"preset": "block", "seed": "forfeit",
            "clock": {"bank_secs": 1, "on_timeout": "forfeit"}}))
        .await;
    let first = app.view(&id, None).await["round"]["turn"].as_u64().unwrap();
    let over = wait_for(&app, &id, "the forfeit", |v| v["status"] == "finished").await;
    assert_eq!(over["result"]["reason"], "timeout", "{over}");
    assert_eq!(over["result"]["winner"], 1 - first);
    assert_eq!(over["clock"]["deadline_ms"], Value::Null);
    let export: Value = app
        .get(&format!("/v1/games/{id}/export"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        export["moves"],
        json!([{"seat": first, "move": {"type": "forfeit"}}])
    );
}

async fn a_resignation_with_two_sides_ends_the_match_on_turn_or_off(app: TestApp) {
    for on_turn in [true, false] {
        let (id, players) = app.start_game(json!({"preset": "all_fives"})).await;
        let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
        let seat = if on_turn { turn } else { 1 - turn };
        let answer = app
            .play(&id, &players[seat].token, &json!({"type": "resign"}))
            .await;
        assert_eq!(answer["status"], "finished");
        assert_eq!(answer["result"]["reason"], "resigned");
        assert_eq!(answer["result"]["winner"], 1 - seat);
        assert_eq!(
            answer["events"][0],
            json!({"type": "resigned", "seat": seat})
        );
        assert_eq!(
            answer["events"].as_array().unwrap().last().unwrap()["type"],
            "match_ended"
        );
    }
}

async fn a_resignation_among_three_seats_hands_the_seat_to_a_bot_and_play_goes_on(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "all_fives", "seats": 3, "seed": "three"}))
        .await;
    let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
    let quitter = (turn + 1) % 3;
    let answer = app
        .play(&id, &players[quitter].token, &json!({"type": "resign"}))
        .await;
    assert_eq!(answer["status"], "playing");
    assert_eq!(answer["seats"][quitter]["abandoned"], true);
    let types: Vec<&str> = answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["resigned", "abandoned"]);
    let again = app
        .post_move(&id, &players[quitter].token, &json!({"type": "resign"}))
        .await;
    assert_problem(again, 409, "seat_abandoned").await;
    // The others play on; the bot answers for the quitter inside their requests.
    let rest: Vec<_> = players
        .iter()
        .filter(|p| p.seat as usize != quitter)
        .cloned()
        .collect();
    let played = app.play_moves(&id, &rest, 3, 30).await;
    assert!(played.posted > 0);
    let moves = log_types(&app.log(&id, None).await);
    assert!(
        moves
            .iter()
            .any(|(s, t)| *s == quitter as u64 && t != "resign"),
        "a bot moved for the seat: {moves:?}"
    );
}

async fn the_banks_show_the_increment_and_the_deadline_of_the_seat_to_move(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "all_fives", "seed": "increment",
            "clock": {"bank_secs": 60, "increment_secs": 5}}))
        .await;
    let view = app.view(&id, None).await;
    let turn = view["round"]["turn"].as_u64().unwrap() as usize;
    let mine = app.view(&id, Some(&players[turn].token)).await;
    let mv = mine["legal_moves"][0].clone();
    let answer = app.play(&id, &players[turn].token, &mv).await;
    let clock = &answer["clock"];
    let bank = clock["banks_ms"][turn].as_u64().unwrap();
    assert!(
        (60_000..=65_000).contains(&bank),
        "60 s less a moment, plus 5 s: {clock}"
    );
    assert!(bank > 64_000, "the move took under a second: {clock}");
    let next = answer["round"]["turn"].as_u64().unwrap() as usize;
    assert_ne!(next, turn);
    let left = clock["deadline_ms"].as_u64().unwrap() - clock["now_ms"].as_u64().unwrap();
    assert!((59_000..=60_000).contains(&left), "{clock}");
    assert_eq!(clock["banks_ms"][next].as_u64().unwrap(), left);
}

async fn clock_settings_out_of_range_are_refused_naming_the_field(app: TestApp) {
    for (clock, seats, field) in [
        (json!({"bank_secs": 0}), 2, "clock.bank_secs"),
        (
            json!({"bank_secs": 1_000_000_000_000u64}),
            2,
            "clock.bank_secs",
        ),
        (
            json!({"bank_secs": 5, "increment_secs": 100_000}),
            2,
            "clock.increment_secs",
        ),
        (
            json!({"bank_secs": 5, "abandon_after": 0}),
            2,
            "clock.abandon_after",
        ),
        (
            json!({"bank_secs": 5, "on_timeout": "forfeit"}),
            3,
            "clock.on_timeout",
        ),
        (
            json!({"bank_secs": 5, "on_timeout": "shrug"}),
            2,
            "clock.on_timeout",
        ),
        (
            json!({"bank_secs": 5, "timeout_bot": "genius"}),
            2,
            "clock.timeout_bot",
        ),
    ] {
        let res = app
            .post_json(
                "/v1/games",
                &json!({"preset": "all_fives", "seats": seats, "clock": clock}),
            )
            .await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{clock}: {problem}"
        );
    }
    // Forfeit is fine with two sides: four seats in teams.
    let res = app
        .post_json(
            "/v1/games",
            &json!({"preset": "all_fives", "seats": 4, "rules": {"teams": true},
                "clock": {"bank_secs": 5, "on_timeout": "forfeit"}}),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201);
}

/// Two servers on one Redis both sweep: each timeout is applied once (the log and the two
/// servers' counters agree).
#[tokio::test]
async fn a_timeout_is_applied_once_by_two_servers_on_one_redis() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    a_timeout_is_applied_once(a, b).await;
}

#[tokio::test]
async fn a_timeout_is_applied_once_by_two_servers_on_one_redis_cluster() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    a_timeout_is_applied_once(a, b).await;
}

async fn a_timeout_is_applied_once(a: TestApp, b: TestApp) {
    let (id, _) = a
        .start_game(json!({"preset": "draw", "seed": "two sweepers",
            "clock": {"bank_secs": 1, "abandon_after": 1}}))
        .await;
    wait_for(&b, &id, "the match's end", |v| v["status"] == "finished").await;
    let moves = log_types(&a.log(&id, None).await);
    let timed_out = moves.iter().filter(|(_, t)| t == "timed_out").count();
    assert_eq!(timed_out, 2, "each seat once, then abandoned: {moves:?}");
    let counted = timeouts_counted(&a).await + timeouts_counted(&b).await;
    assert_eq!(counted, 2, "applied by exactly one server each time");
}

/// The only server that saw the game stops before the deadline; another, started later on
/// the same Redis, acts on it.
#[tokio::test]
async fn a_timeout_survives_the_server_that_saw_the_game_stopping() {
    let prefix = unique_prefix();
    let first = spawn_app_with_redis_prefix(&prefix).await;
    let (id, _) = first
        .start_game(json!({"preset": "draw", "seed": "restart",
            "clock": {"bank_secs": 2, "abandon_after": 100}}))
        .await;
    let version = first.view(&id, None).await["version"].as_u64().unwrap();
    drop(first);
    let second = spawn_app_with_redis_prefix(&prefix).await;
    let after = wait_for(&second, &id, "the timeout", |v| {
        v["version"].as_u64().unwrap() > version
    })
    .await;
    let moves = log_types(&second.log(&id, None).await);
    assert_eq!(moves[0].1, "timed_out", "{after}");
    assert!(timeouts_counted(&second).await >= 1);
}

async fn timeouts_counted(app: &TestApp) -> u64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("domino_timeouts_total "))
        .expect("the counter is listed")
        .trim()
        .parse()
        .unwrap()
}

/// The only process that saw the game is SIGKILLed before the deadline (no shutdown, no
/// chance to hand anything over); a server started afterwards on the same Redis acts on it.
#[tokio::test]
async fn a_timeout_survives_the_only_server_that_saw_the_game_being_killed() {
    let prefix = unique_prefix();
    let mut child = ChildServer::start(&prefix);
    let base = child.base.clone();
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{base}/v1/games"))
        .json(&json!({"preset": "draw", "seed": "sigkill",
            "clock": {"bank_secs": 2, "abandon_after": 100}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["game_id"].as_str().unwrap().to_owned();
    for name in ["ann", "bob"] {
        let res = http
            .post(format!("{base}/v1/games/{id}/seats"))
            .json(&json!({ "name": name }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 201);
    }
    child.kill();
    let second = spawn_app_with_redis_prefix(&prefix).await;
    let started = second.view(&id, None).await;
    assert_eq!(started["status"], "playing");
    assert!(
        started["clock"]["deadline_ms"].as_u64() > started["clock"]["now_ms"].as_u64(),
        "killed before the deadline: {started}"
    );
    let version = started["version"].as_u64().unwrap();
    wait_for(&second, &id, "the timeout", |v| {
        v["version"].as_u64().unwrap() > version
    })
    .await;
    let moves = log_types(&second.log(&id, None).await);
    assert_eq!(moves[0].1, "timed_out", "{moves:?}");
}

/// Seat 1 holds no 6 after the lead 6-6 and the boneyard's ends hold none: it draws
/// several times in one turn. Its bank earns nothing per draw, and the increment once when
/// it plays.
async fn a_turn_of_many_draws_earns_the_increment_once(app: TestApp) {
    let deal = json!({
        "hands": [["6-6", "3-3", "1-3", "2-3", "3-4", "4-4", "0-4"],
                  ["0-0", "0-1", "0-2", "1-1", "1-2", "2-2", "0-3"]],
        "boneyard": ["0-5", "1-4", "1-5", "2-4", "0-6", "1-6", "2-6", "3-6", "4-6", "5-6",
                     "2-5", "3-5", "4-5", "5-5"]
    });
    let (id, players) = app
        .start_game(json!({"preset": "draw", "deal": deal,
            "clock": {"bank_secs": 60, "increment_secs": 10}}))
        .await;
    let lead = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
    let other = 1 - lead;
    app.play(
        &id,
        &players[lead].token,
        &json!({"type": "play", "tile": "6-6"}),
    )
    .await;
    let mut draws = 0;
    loop {
        let mine = app.view(&id, Some(&players[other].token)).await;
        let legal = mine["legal_moves"].as_array().unwrap().clone();
        if legal.iter().any(|m| m["type"] == "play") {
            let answer = app.play(&id, &players[other].token, &legal[0]).await;
            let bank = answer["clock"]["banks_ms"][other].as_u64().unwrap();
            assert!(
                (60_001..=70_000).contains(&bank),
                "the play earns 10 s, once: {}",
                answer["clock"]
            );
            break;
        }
        assert!(legal.iter().all(|m| m["type"] == "draw"), "{mine}");
        let answer = app.play(&id, &players[other].token, &legal[0]).await;
        draws += 1;
        let bank = answer["clock"]["banks_ms"][other].as_u64().unwrap();
        assert!(
            bank <= 60_000,
            "draw {draws} earned time: {}",
            answer["clock"]
        );
    }
    assert!(draws >= 2, "drew {draws} times");
}
