//! Matches (`/v1/matches`), the duplicate arena: a match against a built-in level plays its deals twice
//! with the same hands and the sides swapped, a deal's games together and no more at once
//! than asked, and ends with a score and a margin; a match against a player waits for its
//! acceptance; a cancel stops new games; bad matches are refused. A seeded match between
//! two levels plays by itself, on the same deals for the same seed, and goes on after the
//! server that made it stops.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{
    TestApp, assert_problem, on_every_store, spawn_app_to_be_left, spawn_app_with,
};
use crate::proxy::redis_url;

on_every_store!(
    a_duplicate_match_against_a_level_plays_each_deal_twice_with_the_sides_swapped,
    a_match_against_a_player_starts_when_accepted_and_a_cancel_stops_new_games,
    bad_matches_are_refused_naming_what_is_wrong,
    a_seeded_ten_deal_match_between_two_levels_plays_identical_deals_with_the_seats_swapped,
    a_player_may_run_four_matches_at_once_and_not_a_fifth,
    a_four_seat_team_match_swaps_the_teams_over_each_deal_beside_equal_partners,
    a_player_lists_its_matches_made_and_received_newest_first_and_anyone_by_its_name,
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

/// Waits until match `id` is over (its games played by levels alone).
async fn wait_over(app: &TestApp, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let seen = read(app, id).await;
        if seen["status"] == "finished" {
            return seen;
        }
        assert!(Instant::now() < deadline, "the match did not end: {seen}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The challenger's points less the opponent's over the games, a deal.
fn mean_of_games(done: &Value) -> f64 {
    let games = done["games"].as_array().unwrap();
    let sum: i64 = games
        .iter()
        .map(|g| {
            g["result"]["points_for"].as_i64().unwrap()
                - g["result"]["points_against"].as_i64().unwrap()
        })
        .sum();
    sum as f64 / done["deals"].as_f64().unwrap()
}

/// Each duplicate deal's two games: one deal, the same first hands seat by seat, the seats
/// named `first` then `second` (the sides swapped over the hands), and `prearranged` as
/// the match's seed says (a secret seed: nobody knew the deal).
async fn check_twins(
    app: &TestApp,
    games: &[Value],
    (first, second): (Value, Value),
    prearranged: bool,
) {
    for pair in games.chunks(2) {
        assert_eq!(pair[0]["deal"], pair[1]["deal"]);
        assert_eq!(pair[0]["seats"], first);
        assert_eq!(pair[1]["seats"], second);
        let (a, b) = (export(app, &pair[0]).await, export(app, &pair[1]).await);
        assert_eq!(a["deals"][0], b["deals"][0]);
        let view = app.view(pair[0]["game_id"].as_str().unwrap(), None).await;
        assert_eq!(view["prearranged"], prearranged, "{view}");
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
    let mean = done["margin"]["per_deal_mean"].as_f64().unwrap();
    assert!((mean - mean_of_games(&done)).abs() < 1e-9, "{done}");
    let ci = done["margin"]["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= mean && mean <= ci[1].as_f64().unwrap());
    assert!(done["margin"]["ci95"].is_array(), "{done}");
    let seats = (json!(["ann", "greedy"]), json!(["greedy", "ann"]));
    check_twins(&app, games, seats, false).await;
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
    for game in mine["games"].as_array().unwrap() {
        // How each ended for Ann, and that a match's games are not rated.
        assert_eq!(game["rated"], false, "{game}");
        let outcome = game["outcome"].as_str().unwrap();
        let winner = &game["result"]["winner"];
        let expected = match winner.as_u64() {
            None => "drawn",
            Some(side) if side == game["seat"].as_u64().unwrap() => "won",
            Some(_) => "lost",
        };
        assert_eq!(outcome, expected, "{game}");
    }
}

async fn a_player_lists_its_matches_made_and_received_newest_first_and_anyone_by_its_name(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut made = Vec::new();
    for opponent in ["greedy", "bob"] {
        let body =
            json!({"opponent": opponent, "preset": "block", "deals": 1, "rules": one_round()});
        let res = post_as(&app, "/v1/matches", &ann, Some(body)).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        made.push(res.json::<Value>().await.unwrap()["id"].clone());
        // Newest first is by the millisecond each was made.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // A challenge is not a match.
    let res = post_as(
        &app,
        "/v1/challenges",
        &ann,
        Some(json!({"opponents": ["bob"], "preset": "block"})),
    )
    .await;
    assert_eq!(res.status().as_u16(), 201);
    let list = |key: String, query: &'static str| {
        let app = &app;
        async move {
            let res = app.get_as(&format!("/v1/matches{query}"), Some(&key)).await;
            assert_eq!(res.status().as_u16(), 200);
            let list: Value = res.json().await.unwrap();
            list["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].clone())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list(ann.clone(), "").await,
        [made[1].clone(), made[0].clone()]
    );
    assert_eq!(list(bob.clone(), "").await, [made[1].clone()]);
    assert_eq!(
        list(ann.clone(), "?page=2&per_page=1").await,
        [made[0].clone()]
    );
    assert!(list(ann.clone(), "?page=3&per_page=1").await.is_empty());
    assert_problem(app.get("/v1/matches").await, 401, "unauthorized").await;
    let res = app.get_as("/v1/matches?page=0", Some(&ann)).await;
    assert_problem(res, 400, "bad_request").await;
    // Anyone lists a player's matches by its name, as its profile page does.
    let public = |who: &'static str, query: &'static str| {
        let app = &app;
        async move {
            let res = app.get(&format!("/v1/players/{who}/matches{query}")).await;
            assert_eq!(res.status().as_u16(), 200, "{who}");
            let list: Value = res.json().await.unwrap();
            list["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].clone())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(public("ann", "").await, [made[1].clone(), made[0].clone()]);
    assert_eq!(public("BOB", "").await, [made[1].clone()]);
    assert_eq!(public("ann", "?page=2&per_page=1").await, [made[0].clone()]);
    assert_problem(
        app.get("/v1/players/nobody/matches").await,
        404,
        "not_found",
    )
    .await;
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
            json!({"opponent": "greedy", "preset": "block", "seats": 4}),
            422,
            "invalid_rules",
            "teams",
        ),
        (
            json!({"opponent": "greedy", "preset": "block", "partner": "random"}),
            422,
            "invalid_rules",
            "partner",
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
        (
            json!({"opponent": "greedy", "preset": "block", "rated": true, "seed": "x"}),
            422,
            "invalid_rules",
            "seed",
        ),
        (
            json!({"opponent": "greedy", "preset": "block", "play_as": "grandmaster"}),
            422,
            "invalid_rules",
            "play_as",
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

/// The test of the arena: two levels, ten duplicate deals from one seed. The pairs
/// hold the same hands with the seats swapped, the margin is the games' points, and greedy
/// against itself has an interval that holds 0; the same seed plays the same deals again.
async fn a_seeded_ten_deal_match_between_two_levels_plays_identical_deals_with_the_seats_swapped(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let make = |play_as: &str| {
        json!({"opponent": "greedy", "play_as": play_as, "preset": "all_fives",
               "deals": 10, "duplicate": true, "parallel": 8, "seed": "ten deals"})
    };
    let res = post_as(&app, "/v1/matches", &ann, Some(make("random"))).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let made: Value = res.json().await.unwrap();
    assert_eq!(made["status"], "running", "{made}");
    assert_eq!(made["seeded"], true);
    assert_eq!(made["players"][0]["name"], "random");
    assert_eq!(made["players"][0]["bot"], true);
    let done = wait_over(&app, made["id"].as_str().unwrap()).await;
    let games = done["games"].as_array().unwrap();
    assert_eq!(games.len(), 20, "{done}");
    assert_eq!(done["margin"]["deals_done"], 10);
    let mean = done["margin"]["per_deal_mean"].as_f64().unwrap();
    assert!((mean - mean_of_games(&done)).abs() < 1e-9, "{done}");
    let seats = (json!(["random", "greedy"]), json!(["greedy", "random"]));
    check_twins(&app, games, seats, true).await;
    // Greedy against itself, on the same deals: its margin's interval holds 0.
    let res = post_as(&app, "/v1/matches", &ann, Some(make("greedy"))).await;
    let mirror = wait_over(
        &app,
        res.json::<Value>().await.unwrap()["id"].as_str().unwrap(),
    )
    .await;
    let ci = mirror["margin"]["ci95"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(lo <= 0.0 && 0.0 <= hi, "{}", mirror["margin"]);
    let mirror_games = mirror["games"].as_array().unwrap();
    for (a, b) in games.iter().zip(mirror_games).step_by(2) {
        let (a, b) = (export(&app, a).await, export(&app, b).await);
        assert_eq!(a["deals"][0], b["deals"][0], "one seed, the same deals");
    }
    // The owner played in none of them.
    let mine: Value = app
        .get_as("/v1/players/me/games", Some(&ann))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(mine["games"], json!([]), "{mine}");
}

/// Each running match keeps games in play: a player has four at most, and a fifth may be
/// made once one is canceled.
async fn a_player_may_run_four_matches_at_once_and_not_a_fifth(app: TestApp) {
    let ann = player(&app, "ann").await;
    let body = json!({"opponent": "greedy", "preset": "block", "deals": 5});
    let mut ids = Vec::new();
    for _ in 0..4 {
        let res = post_as(&app, "/v1/matches", &ann, Some(body.clone())).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        ids.push(
            res.json::<Value>().await.unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let res = post_as(&app, "/v1/matches", &ann, Some(body.clone())).await;
    assert!(res.headers().contains_key("retry-after"));
    let problem = assert_problem(res, 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("4 running matches"),
        "{problem}"
    );
    // Another player is not held back by ann's matches.
    let bob = player(&app, "bob").await;
    let res = post_as(&app, "/v1/matches", &bob, Some(body.clone())).await;
    assert_eq!(res.status().as_u16(), 201);
    let canceled = app
        .client
        .delete(app.url(&format!("/v1/matches/{}", ids[0])))
        .bearer_auth(&ann)
        .send()
        .await
        .unwrap();
    assert_eq!(canceled.status().as_u16(), 200);
    // A canceled match starts no more games: it no longer counts.
    let res = post_as(&app, "/v1/matches", &ann, Some(body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
}

/// A match between two levels made through one server goes on through another after the
/// first stops (as after a restart): the match is in the store and driven by any sweep.
/// The first reaches Redis through a proxy taken down once the match is made, so it cannot
/// play the match on however slow the machine is.
#[tokio::test]
async fn a_match_left_by_a_stopped_server_is_played_to_its_end_by_another() {
    let (first, proxy, settings) = spawn_app_to_be_left().await;
    let ann = player(&first, "ann").await;
    let res = post_as(
        &first,
        "/v1/matches",
        &ann,
        Some(
            json!({"opponent": "greedy", "play_as": "random", "preset": "block",
                    "deals": 3, "parallel": 2, "seed": "left behind"}),
        ),
    )
    .await;
    proxy.stop();
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    first.stop().await;
    let second = spawn_app_with(settings).await;
    let left = read(&second, &id).await;
    assert_eq!(left["status"], "running", "{left}");
    assert!(playing(&left) > 0, "{left}");
    let done = wait_over(&second, &id).await;
    assert_eq!(done["games"].as_array().unwrap().len(), 6, "{done}");
    assert_eq!(done["margin"]["deals_done"], 3);
}

/// A match left by a server that stops between two of its writes: right after the
/// match's record is stored (before it is due in the sweeps' index), or right after its
/// first game is (before that game's bots are queued). Either way another server plays
/// it to its end, each game made once.
#[tokio::test]
async fn a_match_left_right_after_its_record_was_stored_is_played_by_another() {
    left_right_after_storing("challenge:").await;
}

#[tokio::test]
async fn a_match_left_right_after_its_first_game_was_stored_is_played_by_another() {
    left_right_after_storing("game:").await;
}

/// The first server reaches Redis through a proxy that answers its scripts late: the
/// test sees the first key starting with `stored` (under the prefix) in Redis while that
/// server still waits for the answer, and takes Redis from it then. It writes nothing
/// more, as if killed at that point.
async fn left_right_after_storing(stored: &str) {
    let (first, proxy, settings) = spawn_app_to_be_left().await;
    let ann = player(&first, "ann").await;
    let prefix = settings.redis_key_prefix.clone();
    let mut redis = ::redis::Client::open(redis_url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    proxy.delay_scripts(Duration::from_secs(1));
    let making = first
        .client
        .post(first.url("/v1/matches"))
        .bearer_auth(&ann)
        .json(
            &json!({"opponent": "greedy", "play_as": "random", "preset": "block",
            "rules": one_round(), "deals": 1, "parallel": 2, "seed": "left midway"}),
        )
        .send();
    // Answered or cut short when Redis is taken away: either way, what counts is what
    // the store holds.
    let making = tokio::spawn(making);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let keys: Vec<String> = ::redis::cmd("KEYS")
            .arg(format!("{prefix}{stored}*"))
            .query_async(&mut redis)
            .await
            .unwrap();
        if !keys.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "nothing stored at {stored}");
        // A poll of the store, far shorter than the answer held back.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    proxy.stop();
    let _ = making.await;
    first.stop().await;
    let keys: Vec<String> = ::redis::cmd("KEYS")
        .arg(format!("{prefix}challenge:*"))
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let id = keys[0]
        .split(['{', '}'])
        .nth(1)
        .expect("a challenge's key holds its id")
        .to_owned();
    let second = spawn_app_with(settings).await;
    let done = wait_over(&second, &id).await;
    assert_eq!(done["games"].as_array().unwrap().len(), 2, "{done}");
    assert_eq!(done["margin"]["deals_done"], 1, "{done}");
}

/// At 4 seats in teams each side is its player and a partner level (the same on both
/// sides); a duplicate deal's twin swaps the teams over the same hands.
async fn a_four_seat_team_match_swaps_the_teams_over_each_deal_beside_equal_partners(app: TestApp) {
    let ann = player(&app, "ann").await;
    let res = post_as(
        &app,
        "/v1/matches",
        &ann,
        Some(
            json!({"play_as": "random", "opponent": "expert", "partner": "greedy",
                    "preset": "all_fives", "seats": 4,
                    "rules": {"teams": true, "target": null, "rounds": 1},
                    "deals": 2, "parallel": 4, "seed": "teams"}),
        ),
    )
    .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let made: Value = res.json().await.unwrap();
    let names: Vec<&str> = made["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["random", "expert", "greedy", "greedy"], "{made}");
    let done = wait_over(&app, made["id"].as_str().unwrap()).await;
    let games = done["games"].as_array().unwrap();
    assert_eq!(games.len(), 4, "{done}");
    let seats = (
        json!(["random", "expert", "greedy", "greedy"]),
        json!(["expert", "random", "greedy", "greedy"]),
    );
    check_twins(&app, games, seats, true).await;
    for pair in games.chunks(2) {
        // The challenger's points are its team's.
        let view = app.view(pair[1]["game_id"].as_str().unwrap(), None).await;
        assert_eq!(
            pair[1]["result"]["points_for"], view["result"]["scores"][1],
            "{view}"
        );
    }
    let mean = done["margin"]["per_deal_mean"].as_f64().unwrap();
    assert!((mean - mean_of_games(&done)).abs() < 1e-9, "{done}");
}
