//! Many clients at once: a move is applied once, whatever the race.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, on_every_store};

on_every_store!(
    twenty_simultaneous_copies_of_a_move_are_applied_exactly_once,
    twenty_simultaneous_copies_with_expected_version_leave_one_winner_and_version_conflicts,
    twenty_simultaneous_copies_with_one_idempotency_key_all_get_the_same_answer,
    twenty_simultaneous_copies_with_one_idempotency_key_and_expected_version_all_get_the_same_answer,
    simultaneous_joins_fill_each_seat_exactly_once,
);

const COPIES: usize = 20;

/// A started two-seat game, the seat to move and its first legal move.
async fn ready(app: &TestApp) -> (String, Vec<Player>, usize, Value, u64) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "race"}))
        .await;
    let spectator = app.view(&id, None).await;
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let view = app.view(&id, Some(&players[turn].token)).await;
    let mv = view["legal_moves"][0].clone();
    (id, players, turn, mv, view["version"].as_u64().unwrap())
}

/// Sends `COPIES` copies at once; answers are (status, body).
async fn race(
    app: &TestApp,
    id: &str,
    token: &str,
    body: &Value,
    key: Option<&str>,
) -> Vec<(u16, String)> {
    let sends = (0..COPIES).map(|_| {
        let mut req = app
            .client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(token)
            .json(body);
        if let Some(key) = key {
            req = req.header("idempotency-key", key);
        }
        async move {
            let res = req.send().await.expect("answered");
            let status = res.status().as_u16();
            (status, res.text().await.unwrap())
        }
    });
    join_all(sends).await
}

fn code(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    v["code"].as_str().unwrap_or_default().to_owned()
}

async fn twenty_simultaneous_copies_of_a_move_are_applied_exactly_once(app: TestApp) {
    let (id, players, turn, mv, version) = ready(&app).await;
    let answers = race(&app, &id, &players[turn].token, &mv, None).await;
    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(ok, 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != 200) {
        let code = code(body);
        assert!(
            (*status == 409 && code == "not_your_turn")
                || (*status == 422 && code == "illegal_move"),
            "{status} {body}"
        );
    }
    let view = app.view(&id, None).await;
    assert_eq!(view["version"], version + 1);
    assert_eq!(
        app.log(&id, None).await["moves"].as_array().unwrap().len(),
        1
    );
}

async fn twenty_simultaneous_copies_with_expected_version_leave_one_winner_and_version_conflicts(
    app: TestApp,
) {
    let (id, players, turn, mut mv, version) = ready(&app).await;
    mv["expected_version"] = json!(version);
    let answers = race(&app, &id, &players[turn].token, &mv, None).await;
    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(ok, 1, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != 200) {
        assert_eq!(
            (*status, code(body)),
            (409, "version_conflict".into()),
            "{body}"
        );
        let problem: Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["current_version"], version + 1, "{body}");
    }
    assert_eq!(app.view(&id, None).await["version"], version + 1);
    assert_eq!(
        app.log(&id, None).await["moves"].as_array().unwrap().len(),
        1
    );
}

async fn twenty_simultaneous_copies_with_one_idempotency_key_all_get_the_same_answer(app: TestApp) {
    let (id, players, turn, mv, version) = ready(&app).await;
    let answers = race(&app, &id, &players[turn].token, &mv, Some("lead-1")).await;
    let first = &answers[0];
    for answer in &answers {
        assert_eq!(answer.0, 200, "{answer:?}");
        assert_eq!(answer.1, first.1, "every copy gets the first answer");
    }
    let body: Value = serde_json::from_str(&first.1).unwrap();
    assert_eq!(body["version"], version + 1);
    assert_eq!(app.view(&id, None).await["version"], version + 1);
    assert_eq!(
        app.log(&id, None).await["moves"].as_array().unwrap().len(),
        1
    );
}

async fn simultaneous_joins_fill_each_seat_exactly_once(app: TestApp) {
    let (id, _) = app.create_game(json!({"preset": "draw", "seats": 3})).await;
    let joins = (0..10).map(|i| {
        let app = &app;
        let id = &id;
        async move {
            let res = app.join(id, json!({"name": format!("p{i}")})).await;
            let status = res.status().as_u16();
            (status, res.json::<Value>().await.unwrap())
        }
    });
    let answers = join_all(joins).await;
    let mut seats: Vec<u64> = answers
        .iter()
        .filter(|(s, _)| *s == 201)
        .map(|(_, b)| b["seat"].as_u64().unwrap())
        .collect();
    seats.sort_unstable();
    assert_eq!(seats, [0, 1, 2], "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != 201) {
        assert_eq!(
            (*status, &body["code"]),
            (409, &json!("game_full")),
            "{body}"
        );
    }
    let view = app.view(&id, None).await;
    assert_eq!(view["status"], "playing");
    assert_eq!(view["version"], 4, "created, then three seats");
}

async fn twenty_simultaneous_copies_with_one_idempotency_key_and_expected_version_all_get_the_same_answer(
    app: TestApp,
) {
    let (id, players, turn, mut mv, version) = ready(&app).await;
    mv["expected_version"] = json!(version);
    let answers = race(&app, &id, &players[turn].token, &mv, Some("pinned")).await;
    for answer in &answers {
        assert_eq!(answer.0, 200, "{answer:?}");
        assert_eq!(answer.1, answers[0].1, "every copy gets the first answer");
    }
    assert_eq!(app.view(&id, None).await["version"], version + 1);
    assert_eq!(
        app.log(&id, None).await["moves"].as_array().unwrap().len(),
        1
    );
}
