//! Matches (`/v1/matches`), the duplicate arena: a match against a built-in level plays its deals twice
//! with the same hands and the sides swapped, a deal's games together and no more at once
//! than asked, and ends with a score and a margin; a match against a player waits for its
//! acceptance; a cancel stops new games; bad matches are refused.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_every_store};

on_every_store!(
    a_duplicate_match_against_a_level_plays_each_deal_twice_with_the_sides_swapped,
    a_match_against_a_player_starts_when_accepted_and_a_cancel_stops_new_games,
    bad_matches_are_refused_naming_what_is_wrong,
);

async fn player(app: &TestApp, name: &str) -> String {
    app.new_player(name).await.1
}

async fn post_as(app: &TestApp, path: &str, key: &str, body: Option<Value>) -> reqwest::Response {
    app.post_as(path, key, body.as_ref()).await
}

async fn read(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/matches/{id}")).await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.unwrap()
}

/// One round a game: a match of a few games plays in a moment.
fn one_round() -> Value {
    json!({"target": null, "rounds": 1})
}

/// Plays `key`'s moves in every game of match `id` until it is over; returns the match,
/// and the most games seen in play at once.
async fn play_out(app: &TestApp, id: &str, keys: &[&str]) -> (Value, usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut most = 0;
    loop {
        let seen = read(app, id).await;
        if seen["status"] == "finished" || seen["status"] == "canceled" && playing(&seen) == 0 {
            return (seen, most);
        }
        most = most.max(playing(&seen));
        assert!(Instant::now() < deadline, "the match did not end: {seen}");
        let mut moved = false;
        for game in seen["games"].as_array().unwrap() {
            if game["status"] != "playing" {
                continue;
            }
            let game_id = game["game_id"].as_str().unwrap();
            for key in keys {
                let res = app.get_as(&format!("/v1/games/{game_id}"), Some(key)).await;
                if res.status().as_u16() != 200 {
                    continue;
                }
                let view: Value = res.json().await.unwrap();
                if let Some(mv) = view["legal_moves"].as_array().and_then(|m| m.first()) {
                    let res = post_as(
                        app,
                        &format!("/v1/games/{game_id}/moves"),
                        key,
                        Some(mv.clone()),
                    )
                    .await;
                    moved |= res.status().is_success();
                }
            }
        }
        if !moved {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn export(app: &TestApp, game: &Value) -> Value {
    let path = format!("/v1/games/{}/export", game["game_id"].as_str().unwrap());
    app.get(&path).await.json().await.unwrap()
}

fn playing(seen: &Value) -> usize {
    seen["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["status"] == "playing")
        .count()
}

async fn a_duplicate_match_against_a_level_plays_each_deal_twice_with_the_sides_swapped(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let mut stream = app.player_stream(&ann).await;
    let res = post_as(
        &app,
        "/v1/matches",
        &ann,
        Some(
            json!({"opponent": "greedy", "preset": "block", "rules": one_round(),
                    "deals": 3, "duplicate": true, "parallel": 2}),
        ),
    )
    .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let made: Value = res.json().await.unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(location, format!("/v1/matches/{id}"));
    assert_eq!(made["status"], "running", "{made}");
    assert_eq!(made["players"][1]["name"], "greedy");
    let (done, most) = play_out(&app, &id, &[&ann]).await;
    assert_eq!(done["status"], "finished", "{done}");
    assert!(most <= 2, "{most} games at once");
    let games = done["games"].as_array().unwrap();
    assert_eq!(games.len(), 6);
    let score = &done["score"];
    let counted = ["wins", "losses", "draws"]
        .iter()
        .map(|k| score[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(counted, 6, "{score}");
    assert_eq!(done["margin"]["deals_done"], 3);
    // The margin is the games' points: the challenger's less greedy's, a deal.
    let sum: i64 = games
        .iter()
        .map(|g| {
            g["result"]["points_for"].as_i64().unwrap()
                - g["result"]["points_against"].as_i64().unwrap()
        })
        .sum();
    let mean = done["margin"]["per_deal_mean"].as_f64().unwrap();
    assert!(
        (mean - sum as f64 / 3.0).abs() < 1e-9,
        "{mean} against {sum} over 3 deals"
    );
    let ci = done["margin"]["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= mean && mean <= ci[1].as_f64().unwrap());
    assert!(done["margin"]["ci95"].is_array(), "{done}");
    for pair in games.chunks(2) {
        assert_eq!(pair[0]["deal"], pair[1]["deal"]);
        assert_eq!(pair[0]["seats"], json!(["ann", "greedy"]));
        assert_eq!(pair[1]["seats"], json!(["greedy", "ann"]));
        // The same hands, seat by seat: the sides swapped over them.
        let (first, second) = (export(&app, &pair[0]).await, export(&app, &pair[1]).await);
        assert_eq!(first["deals"][0], second["deals"][0]);
        // The server's own seed: nobody knew the deal.
        let view = app.view(pair[0]["game_id"].as_str().unwrap(), None).await;
        assert_eq!(view["prearranged"], false, "{view}");
    }
    // The stream told of every game, and of the match moving on up to its end.
    let (mut started, mut last_update) = (0, Value::Null);
    while let Some(event) = stream.next(Duration::from_millis(500)).await {
        match event.event.as_deref() {
            Some("game_started") => started += 1,
            Some("match_updated") => last_update = event.data,
            _ => {}
        }
    }
    assert_eq!(started, 6);
    assert_eq!(last_update["id"], id.as_str());
    assert_eq!(last_update["status"], "finished", "{last_update}");
    let mine: Value = app
        .get_as("/v1/players/me/games?per_page=100", Some(&ann))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(mine["games"].as_array().unwrap().len(), 6);
}

async fn a_match_against_a_player_starts_when_accepted_and_a_cancel_stops_new_games(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let res = post_as(
        &app,
        "/v1/matches",
        &ann,
        Some(
            json!({"opponent": "bob", "preset": "block", "rules": one_round(),
                    "deals": 5, "parallel": 1}),
        ),
    )
    .await;
    let made: Value = res.json().await.unwrap();
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(made["status"], "waiting", "{made}");
    let listed: Value = app
        .get_as("/v1/challenges?direction=in", Some(&bob))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["challenges"][0]["id"], id.as_str());
    let res = post_as(&app, &format!("/v1/challenges/{id}/accept"), &bob, None).await;
    assert_eq!(res.status().as_u16(), 200);
    let running = read(&app, &id).await;
    assert_eq!(running["status"], "running", "{running}");
    assert_eq!(
        playing(&running),
        2,
        "a duplicate deal's two games: {running}"
    );
    // A stranger may read it, not cancel it; either player may.
    let dan = player(&app, "dan").await;
    let cancel = |key: &str| {
        app.client
            .delete(app.url(&format!("/v1/matches/{id}")))
            .bearer_auth(key)
            .send()
    };
    assert_problem(cancel(&dan).await.unwrap(), 403, "forbidden").await;
    let canceled: Value = cancel(&bob).await.unwrap().json().await.unwrap();
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    let (done, _) = play_out(&app, &id, &[&ann, &bob]).await;
    assert_eq!(done["status"], "canceled");
    assert_eq!(
        done["games"].as_array().unwrap().len(),
        2,
        "no game after the cancel"
    );
    assert_eq!(done["margin"]["deals_done"], 1);
}

async fn bad_matches_are_refused_naming_what_is_wrong(app: TestApp) {
    let ann = player(&app, "ann").await;
    for (body, status, code, names) in [
        (
            json!({"opponent": "greedy", "preset": "block", "seats": 3}),
            422,
            "invalid_rules",
            "seats",
        ),
        (
            json!({"opponent": "greedy", "preset": "block", "deals": 0}),
            422,
            "invalid_rules",
            "deals",
        ),
        (
            json!({"opponent": "greedy", "preset": "block", "parallel": 9}),
            422,
            "invalid_rules",
            "parallel",
        ),
        (
            json!({"opponent": "nobody", "preset": "block"}),
            404,
            "not_found",
            "nobody",
        ),
        (
            json!({"opponent": "greedy", "preset": "block", "rated": true, "rules": {"rounds": 1}}),
            422,
            "invalid_rules",
            "rated",
        ),
    ] {
        let problem = assert_problem(
            post_as(&app, "/v1/matches", &ann, Some(body.clone())).await,
            status,
            code,
        )
        .await;
        assert!(
            problem["detail"].as_str().unwrap().contains(names),
            "{body}: {problem}"
        );
    }
    let res = app
        .post_json(
            "/v1/matches",
            &json!({"opponent": "greedy", "preset": "block"}),
        )
        .await;
    assert_problem(res, 401, "unauthorized").await;
    let unknown = format!("/v1/matches/{}", uuid::Uuid::new_v4());
    assert_problem(app.get(&unknown).await, 404, "not_found").await;
}
