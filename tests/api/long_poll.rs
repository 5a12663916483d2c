//! Long polls and conditional GETs of a game's view.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, on_both_stores};

on_both_stores!(
    a_long_poll_answers_as_soon_as_another_client_moves,
    a_long_poll_with_no_move_answers_the_unchanged_view_when_the_wait_runs_out,
    a_long_poll_after_an_older_version_answers_at_once,
    an_etag_given_back_in_if_none_match_gets_304_until_the_game_moves,
);

async fn started(app: &TestApp) -> (String, Vec<Player>, usize) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "seed": "poll"}))
        .await;
    let turn = app.view(&id, None).await["round"]["turn"].as_u64().unwrap() as usize;
    (id, players, turn)
}

async fn a_long_poll_answers_as_soon_as_another_client_moves(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let waiter = &players[1 - turn];
    let view = app.view(&id, Some(&waiter.token)).await;
    let version = view["version"].as_u64().unwrap();
    let mover = app.view(&id, Some(&players[turn].token)).await;

    let started = Instant::now();
    let poll = async {
        let res = app
            .get_as(
                &format!("/v1/games/{id}?after={version}&wait=5"),
                Some(&waiter.token),
            )
            .await;
        let at = Instant::now();
        assert_eq!(res.status().as_u16(), 200);
        (at, res.json::<Value>().await.unwrap())
    };
    let mv = async {
        // Not a wait for a result: the move comes later than the poll, to wake it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        app.play(&id, &players[turn].token, &mover["legal_moves"][0])
            .await;
        Instant::now()
    };
    let ((answered, seen), moved) = tokio::join!(poll, mv);
    assert!(
        answered.duration_since(moved) < Duration::from_secs(4),
        "answered {:?} after the move",
        answered.duration_since(moved)
    );
    assert!(
        answered.duration_since(started) < Duration::from_secs(4),
        "well before the 5 s wait: {:?}",
        answered.duration_since(started)
    );
    assert!(
        answered.duration_since(started) >= Duration::from_millis(250),
        "it waited for the move"
    );
    assert_eq!(seen["version"], version + 1);
    assert_eq!(seen["you"], (1 - turn) as u64, "the waiter's own view");
    assert_eq!(seen["your_turn"], true);
}

async fn a_long_poll_with_no_move_answers_the_unchanged_view_when_the_wait_runs_out(app: TestApp) {
    let (id, players, _) = started(&app).await;
    let token = Some(players[0].token.as_str());
    let view = app.view(&id, token).await;
    let version = view["version"].as_u64().unwrap();
    let started = Instant::now();
    let res = app
        .get_as(&format!("/v1/games/{id}?after={version}&wait=1"), token)
        .await;
    let took = started.elapsed();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.json::<Value>().await.unwrap(), view);
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "took {took:?}"
    );
    // A spectator's long poll too.
    let started = Instant::now();
    let res = app
        .get(&format!("/v1/games/{id}?after={version}&wait=1"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(res.json::<Value>().await.unwrap()["hand"], Value::Null);
}

async fn a_long_poll_after_an_older_version_answers_at_once(app: TestApp) {
    let (id, players, _) = started(&app).await;
    let token = Some(players[1].token.as_str());
    let view = app.view(&id, token).await;
    let version = view["version"].as_u64().unwrap();
    for query in [
        format!("after={}&wait=5", version - 1),
        format!("after={version}&wait=0"),
        "after=0".to_string(),
    ] {
        let started = Instant::now();
        let res = app.get_as(&format!("/v1/games/{id}?{query}"), token).await;
        // Well under the 5 s a wait would take, generous for a loaded machine.
        assert!(started.elapsed() < Duration::from_secs(3), "{query}");
        assert_eq!(res.status().as_u16(), 200);
        assert_eq!(res.json::<Value>().await.unwrap(), view, "{query}");
    }
}

async fn an_etag_given_back_in_if_none_match_gets_304_until_the_game_moves(app: TestApp) {
    let (id, players, turn) = started(&app).await;
    let path = format!("/v1/games/{id}");
    let conditional = |token: Option<&str>, tag: &str| {
        let mut req = app
            .client
            .get(app.url(&path))
            .header("if-none-match", tag.to_owned());
        if let Some(token) = token {
            req = req.bearer_auth(token.to_owned());
        }
        req.send()
    };
    let res = app.get_as(&path, None).await;
    let spectator_tag = res.headers()["etag"].to_str().unwrap().to_owned();
    let version = res.json::<Value>().await.unwrap()["version"].clone();
    assert_eq!(spectator_tag, format!("\"{version}\""));
    let token = players[turn].token.as_str();
    let res = app.get_as(&path, Some(token)).await;
    let seat_tag = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(
        seat_tag, spectator_tag,
        "a seat's view is another representation"
    );
    let view: Value = res.json().await.unwrap();

    let res = conditional(None, &spectator_tag).await.unwrap();
    assert_eq!(res.status().as_u16(), 304);
    assert_eq!(res.headers()["etag"].to_str().unwrap(), spectator_tag);
    assert!(res.bytes().await.unwrap().is_empty());
    let res = conditional(Some(token), &seat_tag).await.unwrap();
    assert_eq!(res.status().as_u16(), 304);
    let res = conditional(Some(token), "*").await.unwrap();
    assert_eq!(res.status().as_u16(), 304);
    // Another representation's tag does not match.
    let res = conditional(Some(token), &spectator_tag).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let res = conditional(None, &format!("\"0\", {spectator_tag}"))
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 304, "any tag of a list");

    app.play(&id, token, &view["legal_moves"][0]).await;
    let res = conditional(None, &spectator_tag).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let new_tag = res.headers()["etag"].to_str().unwrap().to_owned();
    assert_ne!(new_tag, spectator_tag);
    let res = conditional(Some(token), &seat_tag).await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
}
