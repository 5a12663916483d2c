//! Idempotent retries: the same key and body get the first answer and change nothing.

use domino_server::store::IDEMPOTENCY_WINDOW;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_every_store};

on_every_store!(
    a_retry_with_the_same_key_and_body_gets_the_same_answer_and_moves_once,
    a_retry_after_the_game_moved_on_still_gets_the_first_answer,
    keys_are_separate_per_game,
    a_whole_match_retried_at_its_end_gets_its_window_of_first_answers,
    a_used_key_with_a_wrong_token_is_unauthorized_not_a_reused_key,
    a_retried_join_gets_the_same_seat_and_token_and_takes_no_other_seat,
    two_seats_using_the_same_key_text_for_different_moves_both_succeed,
);

async fn post_with_key(
    app: &TestApp,
    id: &str,
    token: &str,
    key: &str,
    body: &Value,
) -> (u16, String) {
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.text().await.unwrap())
}

async fn a_retry_with_the_same_key_and_body_gets_the_same_answer_and_moves_once(app: TestApp) {
    // A bot answers in the same request, so the answer carries its moves too.
    let (id, players) = app
        .start_game(json!({"preset": "all_fives", "seed": "retry",
                           "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let me = &players[0];
    let view = app.view(&id, Some(&me.token)).await;
    let version = view["version"].as_u64().unwrap();
    let mv = view["legal_moves"][0].clone();
    let first = post_with_key(&app, &id, &me.token, "k-1", &mv).await;
    assert_eq!(first.0, 200, "{}", first.1);
    let after = app.views(&id, &players).await;
    let second = post_with_key(&app, &id, &me.token, "k-1", &mv).await;
    assert_eq!(second, first, "the very same answer");
    assert_eq!(app.views(&id, &players).await, after, "nothing changed");
    let answer: Value = serde_json::from_str(&first.1).unwrap();
    assert_eq!(answer["version"], version + 1);
    assert_eq!(after[0]["version"], version + 1);
    // A new key is a new move.
    let mv = after[1]["legal_moves"][0].clone();
    if after[0]["status"] == "playing" {
        let third = post_with_key(&app, &id, &me.token, "k-2", &mv).await;
        assert_eq!(third.0, 200, "{}", third.1);
        assert_eq!(app.view(&id, None).await["version"], version + 2);
    }
}

async fn a_retry_after_the_game_moved_on_still_gets_the_first_answer(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "later"}))
        .await;
    let spectator = app.view(&id, None).await;
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let view = app.view(&id, Some(&players[turn].token)).await;
    let mv = view["legal_moves"][0].clone();
    let first = post_with_key(&app, &id, &players[turn].token, "lead", &mv).await;
    assert_eq!(first.0, 200);
    // The other seat moves: the game is two versions on.
    let other = &players[1 - turn];
    let theirs = app.view(&id, Some(&other.token)).await;
    app.play(&id, &other.token, &theirs["legal_moves"][0]).await;
    let before = app.views(&id, &players).await;
    let retry = post_with_key(&app, &id, &players[turn].token, "lead", &mv).await;
    assert_eq!(retry, first);
    assert_eq!(app.views(&id, &players).await, before);
}

async fn keys_are_separate_per_game(app: TestApp) {
    let mut answers = Vec::new();
    for seed in ["a", "b"] {
        let (id, players) = app
            .start_game(json!({"preset": "block", "seed": seed}))
            .await;
        let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
        let view = app.view(&id, Some(&players[turn].token)).await;
        let res = post_with_key(
            &app,
            &id,
            &players[turn].token,
            "same",
            &view["legal_moves"][0],
        )
        .await;
        assert_eq!(res.0, 200, "{}", res.1);
        answers.push(res.1);
    }
    assert_ne!(answers[0], answers[1]);
}

async fn a_whole_match_retried_at_its_end_gets_its_window_of_first_answers(app: TestApp) {
    // Draws (whose tile only the drawer sees), bot moves inside the answers, several
    // rounds and the end of the match: each answer is rendered again from the game's
    // record, and must come out byte for byte as it was first sent.
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "whole match", "seats": 2,
                           "rules": {"target": 30},
                           "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let me = &players[0];
    let mut sent = Vec::new();
    loop {
        let view = app.view(&id, Some(&me.token)).await;
        if view["status"] != "playing" {
            break;
        }
        let key = format!("move-{}", sent.len());
        // The last legal move: a draw when one is offered, so draws are in the match.
        let mv = view["legal_moves"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let answer = post_with_key(&app, &id, &me.token, &key, &mv).await;
        assert_eq!(answer.0, 200, "{}", answer.1);
        sent.push((key, mv, answer));
        assert!(sent.len() < 500, "the match ends");
    }
    assert!(
        sent.iter().any(|(_, mv, _)| mv["type"] == "draw"),
        "the match had draws"
    );
    let end = app.views(&id, &players).await;
    assert_eq!(end[0]["status"], "finished");
    // A seat's last IDEMPOTENCY_WINDOW keys are kept: their retries get the first answer.
    // Older keys are forgotten: a retry is a new move, refused as the match is over.
    let forgotten = sent.len().saturating_sub(IDEMPOTENCY_WINDOW);
    assert!(forgotten > 0, "the match is longer than the window");
    for (key, mv, first) in &sent[forgotten..] {
        let again = post_with_key(&app, &id, &me.token, key, mv).await;
        assert_eq!(&again, first, "the answer to {key}");
    }
    for (key, mv, _) in &sent[..forgotten] {
        let again = post_with_key(&app, &id, &me.token, key, mv).await;
        assert_eq!(again.0, 409, "a retry of the forgotten {key}: {}", again.1);
    }
    assert_eq!(app.views(&id, &players).await, end, "nothing changed");
}

/// The token is checked before the key is looked up: a stranger who replays a seat's key
/// is told its token is no good, and learns nothing of the keys the seat used.
async fn a_used_key_with_a_wrong_token_is_unauthorized_not_a_reused_key(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "stranger"}))
        .await;
    let view = app.view(&id, None).await;
    let turn = view["round"]["turn"].as_u64().unwrap() as usize;
    let me = &players[turn];
    let mv = app.view(&id, Some(&me.token)).await["legal_moves"][0].clone();
    let first = post_with_key(&app, &id, &me.token, "k-1", &mv).await;
    assert_eq!(first.0, 200, "{}", first.1);
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth("not-a-token-of-this-game")
        .header("idempotency-key", "k-1")
        .json(&mv)
        .send()
        .await
        .unwrap();
    assert_problem(res, 401, "unauthorized").await;
}

async fn join_with_key(app: &TestApp, id: &str, key: &str, body: &Value) -> (u16, Value) {
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/seats")))
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

/// A join whose answer was lost can be retried: the same key and body get the same seat
/// and token (the seat is not taken twice); the key with another body is refused.
async fn a_retried_join_gets_the_same_seat_and_token_and_takes_no_other_seat(app: TestApp) {
    let (id, _) = app
        .create_game(json!({"preset": "block", "seats": 3}))
        .await;
    let key = "9f0c2b9e-join-ann-5c8d9c4e7b21";
    let ann = json!({"name": "ann", "seat": 1});
    let (status, first) = join_with_key(&app, &id, key, &ann).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = join_with_key(&app, &id, key, &ann).await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(
        (&again["seat"], &again["token"]),
        (&first["seat"], &first["token"])
    );
    assert_eq!(again["view"], first["view"], "nothing happened in between");
    assert_eq!(
        app.view(&id, None).await["version"],
        first["view"]["version"]
    );
    let token = first["token"].as_str().unwrap();
    assert_eq!(app.view(&id, Some(token)).await["you"], 1);

    // Another body under the same key: refused, and no seat taken.
    let (status, problem) = join_with_key(&app, &id, key, &json!({"name": "bob"})).await;
    assert_eq!(
        (status, &problem["code"]),
        (422, &json!("idempotency_key_reused"))
    );
    // A key too short to keep a token secret: refused.
    let (status, problem) = join_with_key(&app, &id, "join-1", &json!({"name": "bob"})).await;
    assert_eq!(
        (status, &problem["code"]),
        (400, &json!("bad_request")),
        "{problem}"
    );
    assert_eq!(
        app.view(&id, None).await["version"],
        first["view"]["version"]
    );

    // The others join; the game starts. A retry still gets ann's seat and token, with the
    // game as it is now.
    app.take_seat(&id, "bob").await;
    app.take_seat(&id, "cy").await;
    let (status, late) = join_with_key(&app, &id, key, &ann).await;
    assert_eq!(status, 201, "{late}");
    assert_eq!(
        (&late["seat"], &late["token"]),
        (&first["seat"], &first["token"])
    );
    assert_eq!(late["view"]["status"], "playing");
    assert_eq!(late["view"], app.view(&id, Some(token)).await);
    // The key is per game: elsewhere it is a new join.
    let (other, _) = app.create_game(json!({"preset": "block"})).await;
    let (status, elsewhere) = join_with_key(&app, &other, key, &ann).await;
    assert_eq!(status, 201, "{elsewhere}");
    assert_ne!(elsewhere["token"], first["token"]);
}

/// Keys are each seat's own: the opponent's `move-2` does not make mine a reused key.
async fn two_seats_using_the_same_key_text_for_different_moves_both_succeed(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "two seats one key"}))
        .await;
    let mut answers = Vec::new();
    for _ in 0..2 {
        let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
        let me = &players[turn];
        let mv = app.view(&id, Some(&me.token)).await["legal_moves"][0].clone();
        let answer = post_with_key(&app, &id, &me.token, "move-2", &mv).await;
        assert_eq!(answer.0, 200, "seat {turn}: {}", answer.1);
        answers.push((me.clone(), mv, answer));
    }
    assert_ne!(answers[0].0.seat, answers[1].0.seat, "two seats moved");
    // Each seat's retry still gets its own first answer.
    let before = app.views(&id, &players).await;
    for (me, mv, first) in &answers {
        assert_eq!(
            &post_with_key(&app, &id, &me.token, "move-2", mv).await,
            first
        );
    }
    assert_eq!(app.views(&id, &players).await, before, "nothing changed");
}
