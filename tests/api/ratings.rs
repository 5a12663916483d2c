//! Rated play: a rated game moves its players' ratings once and tells each the change on
//! its stream; profiles show them; the leaderboard lists players and built-in levels,
//! highest first; games not rated move nothing.

use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, assert_problem, on_every_store, spawn_app_with_cluster_prefix,
    spawn_app_with_redis_prefix, unique_prefix,
};

on_every_store!(
    a_rated_game_moves_both_ratings_and_tells_each_player_its_change,
    a_built_in_level_is_rated_like_a_player_and_joins_the_leaderboard,
    a_game_not_rated_moves_no_rating,
    forty_rated_games_resigned_at_once_move_no_rating_and_say_why,
    a_player_losing_to_a_level_a_hundred_times_leaves_its_reference_rating_as_it_stands,
    each_rated_game_adds_one_point_to_each_players_rating_history,
);

async fn player(app: &TestApp, name: &str) -> String {
    app.new_player(name).await.1
}

/// `POST path` by `key`, answered with success; its body.
async fn post_as(app: &TestApp, path: &str, key: &str, body: Option<Value>) -> Value {
    let res = app.post_as(path, key, body.as_ref()).await;
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn open_stream(app: &TestApp, key: &str) -> EventStream {
    app.player_stream(key).await
}

/// The next `game_finished` on a stream (skipping `game_started`).
async fn finished_news(stream: &mut EventStream) -> Value {
    loop {
        let event = stream
            .next(std::time::Duration::from_secs(5))
            .await
            .expect("news");
        if event.event.as_deref() == Some("game_finished") {
            return event.data;
        }
    }
}

async fn profile(app: &TestApp, who: &str) -> Value {
    app.get(&format!("/v1/players/{who}"))
        .await
        .json()
        .await
        .unwrap()
}

/// A game made by a challenge from `ann` to `opponent`, which `ann` resigns once each side
/// moved (or at once, unless `moved`).
async fn resigned(
    app: &TestApp,
    ann: &str,
    opponent: (&str, Option<&str>),
    rated: bool,
    moved: bool,
) -> String {
    let made = post_as(
        app,
        "/v1/challenges",
        ann,
        Some(json!({"opponents": [opponent.0], "preset": "block", "rated": rated})),
    )
    .await;
    let game = match opponent.1 {
        Some(key) => {
            let path = format!("/v1/challenges/{}/accept", made["id"].as_str().unwrap());
            post_as(app, &path, key, None).await["game_id"].clone()
        }
        None => made["game_id"].clone(),
    };
    let game = game.as_str().unwrap().to_owned();
    if moved {
        let keys: Vec<&str> = std::iter::once(ann).chain(opponent.1).collect();
        app.each_moves(&game, &keys).await;
        if opponent.1.is_none() {
            app.until_bots_replied(&game, ann).await;
        }
    }
    app.play(&game, ann, &json!({"type": "resign"})).await;
    game
}

async fn a_rated_game_moves_both_ratings_and_tells_each_player_its_change(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut bobs = open_stream(&app, &bob).await;
    let game = resigned(&app, &ann, ("bob", Some(&bob)), true, true).await;
    let lost = finished_news(&mut anns).await;
    let won = finished_news(&mut bobs).await;
    for news in [&lost, &won] {
        assert_eq!(news["game_id"], game.as_str());
        // Whole numbers, as people read them.
        assert_eq!(news["rating"]["before"]["rating"], 1500, "{news}");
        assert_eq!(news["rating"]["before"]["deviation"], 350, "{news}");
    }
    let ann_after = lost["rating"]["after"]["rating"].as_i64().unwrap();
    let bob_after = won["rating"]["after"]["rating"].as_i64().unwrap();
    assert!(ann_after < 1500 && bob_after > 1500, "{lost} {won}");
    let rated = &profile(&app, "bob").await["ratings"]["block"];
    assert_eq!(rated["rating"], bob_after, "{rated}");
    assert_eq!(rated["games"], 1);
    assert_eq!(rated["provisional"], true);
    let board: Value = app.get("/v1/leaderboard/block").await.json().await.unwrap();
    let names: Vec<&str> = board["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bob", "ann"], "{board}");
    assert_eq!(board["players"][0]["rank"], 1);
    assert!(board["players"][0]["rating"].is_i64(), "{board}");
    assert!(board["players"][0]["deviation"].is_i64(), "{board}");
    assert_eq!(
        (&board["page"], &board["per_page"], &board["limit"]),
        (&json!(1), &json!(50), &json!(50))
    );
    // `limit` is `per_page`'s older name; both agree or the query is refused.
    let one: Value = app
        .get("/v1/leaderboard/block?per_page=1&page=2")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(one["players"][0]["name"], "ann", "{one}");
    assert_eq!(one["players"][0]["rank"], 2, "{one}");
    let aliased: Value = app
        .get("/v1/leaderboard/block?limit=1&page=2")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(aliased["players"], one["players"]);
    assert_problem(
        app.get("/v1/leaderboard/block?limit=1&per_page=2").await,
        400,
        "bad_request",
    )
    .await;
    assert_eq!(
        app.get("/v1/leaderboard/all_fives")
            .await
            .json::<Value>()
            .await
            .unwrap()["players"],
        json!([])
    );
    assert_problem(app.get("/v1/leaderboard/chess").await, 404, "not_found").await;
    assert_problem(
        app.get("/v1/leaderboard/block?limit=0").await,
        400,
        "bad_request",
    )
    .await;
}

async fn a_built_in_level_is_rated_like_a_player_and_joins_the_leaderboard(app: TestApp) {
    let ann = player(&app, "ann").await;
    let mut anns = open_stream(&app, &ann).await;
    resigned(&app, &ann, ("greedy", None), true, true).await;
    let news = finished_news(&mut anns).await;
    assert!(
        news["rating"]["after"]["rating"].as_i64().unwrap() < 1500,
        "{news}"
    );
    let greedy = profile(&app, "greedy").await;
    assert_eq!(greedy["bot"], true);
    assert_eq!(greedy["ratings"]["block"]["games"], 1, "{greedy}");
    let board: Value = app.get("/v1/leaderboard/block").await.json().await.unwrap();
    assert_eq!(board["players"][0]["name"], "greedy", "{board}");
    assert_eq!(board["players"][0]["bot"], true);
}

async fn a_game_not_rated_moves_no_rating(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    resigned(&app, &ann, ("bob", Some(&bob)), false, true).await;
    let news = finished_news(&mut anns).await;
    assert_eq!(news["rating"], Value::Null, "{news}");
    assert_eq!(profile(&app, "ann").await["ratings"], json!({}));
    let board: Value = app.get("/v1/leaderboard/block").await.json().await.unwrap();
    assert_eq!(board["players"], json!([]));
}

async fn forty_rated_games_resigned_at_once_move_no_rating_and_say_why(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let mut anns = open_stream(&app, &ann).await;
    let mut games = Vec::new();
    for i in 0..40 {
        // Half resigned before anyone moved; half by a side that never moved, once the
        // other made its move.
        if i % 2 == 0 {
            games.push(resigned(&app, &ann, ("bob", Some(&bob)), true, false).await);
            continue;
        }
        let made = post_as(
            &app,
            "/v1/challenges",
            &ann,
            Some(json!({"opponents": ["bob"], "preset": "block", "rated": true})),
        )
        .await;
        let path = format!("/v1/challenges/{}/accept", made["id"].as_str().unwrap());
        let game = post_as(&app, &path, &bob, None).await["game_id"].clone();
        let game = game.as_str().unwrap().to_owned();
        let anns_turn = app.view(&game, Some(&ann)).await["your_turn"] == true;
        let (mover, loser) = if anns_turn {
            (&ann, &bob)
        } else {
            (&bob, &ann)
        };
        app.each_moves(&game, &[mover]).await;
        app.play(&game, loser, &json!({"type": "resign"})).await;
        games.push(game);
    }
    let news = finished_news(&mut anns).await;
    assert_eq!(news["rating"], Value::Null, "{news}");
    for who in ["ann", "bob"] {
        assert_eq!(profile(&app, who).await["ratings"], json!({}), "{who}");
    }
    let board: Value = app.get("/v1/leaderboard/block").await.json().await.unwrap();
    assert_eq!(board["players"], json!([]));
    let view = app.view(&games[0], Some(&ann)).await;
    assert_eq!(view["status"], "finished");
    assert_eq!(view["rated"], false, "{view}");
    assert_eq!(view["aborted"], "no_move", "{view}");
    let listed = app
        .get_as(
            "/v1/players/me/games?status=finished&per_page=100",
            Some(&ann),
        )
        .await
        .json::<Value>()
        .await
        .unwrap();
    let listed = listed["games"].as_array().unwrap();
    assert_eq!(listed.len(), 40);
    assert!(
        listed
            .iter()
            .all(|g| g["rated"] == false && g["aborted"] == "no_move"),
        "{listed:?}"
    );
    // A game played by both sides is rated, and says so.
    let game = resigned(&app, &ann, ("bob", Some(&bob)), true, true).await;
    let view = app.view(&game, Some(&ann)).await;
    assert_eq!(
        (&view["rated"], &view["aborted"]),
        (&json!(true), &Value::Null)
    );
    rated_games(&app, "bob", 1).await;
    rated_games(&app, "ann", 1).await;
}

/// Waits until `who` has `games` rated block games (a game's ratings move just after its
/// last save is answered), for a few seconds at most.
async fn rated_games(app: &TestApp, who: &str, games: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let rated = &profile(app, who).await["ratings"]["block"];
        if rated["games"] == games {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{who}: {rated}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn a_player_losing_to_a_level_a_hundred_times_leaves_its_reference_rating_as_it_stands(
    app: TestApp,
) {
    let ann = player(&app, "ann").await;
    let mut games = Vec::new();
    for _ in 0..100 {
        games.push(resigned(&app, &ann, ("random", None), true, true).await);
    }
    // A round blocked at once (the level passed without a move of its own) is aborted.
    let mut rated = 0;
    for game in &games {
        rated += u64::from(app.view(game, Some(&ann)).await["rated"] == true);
    }
    assert!(rated >= 90, "{rated} rated");
    rated_games(&app, "random", rated).await;
    let random = profile(&app, "random").await;
    let rated = &random["ratings"]["block"];
    assert_eq!(rated["rating"], 1130, "{random}");
    assert_eq!(rated["provisional"], false, "{random}");
    // Ann's own rating moved against the level's fixed one.
    let anns = &profile(&app, "ann").await["ratings"]["block"];
    assert_eq!(anns["games"], rated["games"]);
    assert!(anns["rating"].as_f64().unwrap() < 1130.0, "{anns}");
}

async fn history(app: &TestApp, who: &str, preset: &str) -> Vec<Value> {
    let res = app
        .get(&format!("/v1/players/{who}/ratings/{preset}/history"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.unwrap()
}

async fn each_rated_game_adds_one_point_to_each_players_rating_history(app: TestApp) {
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    assert!(history(&app, "ann", "block").await.is_empty());
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let first = resigned(&app, &ann, ("bob", Some(&bob)), true, true).await;
    resigned(&app, &ann, ("bob", Some(&bob)), false, true).await;
    let second = resigned(&app, &ann, ("bob", Some(&bob)), true, true).await;
    let profile = profile(&app, "ann").await;
    let points = history(&app, "ANN", "block").await;
    let games: Vec<&str> = points
        .iter()
        .map(|p| p["game_id"].as_str().unwrap())
        .collect();
    // Oldest first, the unrated game not there; the last point is the rating now.
    assert_eq!(games, [first.as_str(), second.as_str()], "{points:?}");
    assert!(points[0]["at_ms"].as_u64().unwrap() >= before);
    assert!(points[0]["at_ms"].as_u64() <= points[1]["at_ms"].as_u64());
    assert!(points[0]["rating"].as_i64() > points[1]["rating"].as_i64());
    assert_eq!(points[1]["rating"], profile["ratings"]["block"]["rating"]);
    assert_eq!(
        points[1]["deviation"],
        profile["ratings"]["block"]["deviation"]
    );
    // Bob's and the profile's id name the same history; other presets have none.
    let bobs = profile_id(&app, "bob").await;
    assert_eq!(history(&app, &bobs, "block").await.len(), 2);
    assert!(history(&app, "bob", "all_fives").await.is_empty());
    assert!(history(&app, "greedy", "block").await.is_empty());
    // Ann's games say which were rated and how each ended for her.
    let mine: Value = app
        .get_as("/v1/players/me/games", Some(&ann))
        .await
        .json()
        .await
        .unwrap();
    // (Made within a millisecond or two, their order is not the point here.)
    let mut rated: Vec<String> = mine["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| format!("{} {}", g["rated"], g["outcome"]))
        .collect();
    rated.sort();
    let expected = ["false \"lost\"", "true \"lost\"", "true \"lost\""];
    assert_eq!(rated, expected, "{mine}");
    // Anyone reads the same list of Ann's games, by her name or id.
    let public: Value = app.get("/v1/players/Ann/games").await.json().await.unwrap();
    assert_eq!(public, mine);
    let by_id = format!(
        "/v1/players/{}/games?status=playing",
        profile["id"].as_str().unwrap()
    );
    let playing: Value = app.get(&by_id).await.json().await.unwrap();
    assert_eq!(playing["games"], json!([]), "{playing}");
    assert_problem(app.get("/v1/players/nobody/games").await, 404, "not_found").await;
    let missing = app.get("/v1/players/nobody/ratings/block/history").await;
    assert_problem(missing, 404, "not_found").await;
    let missing = app.get("/v1/players/ann/ratings/chess/history").await;
    assert_problem(missing, 404, "not_found").await;
}

async fn profile_id(app: &TestApp, who: &str) -> String {
    profile(app, who).await["id"].as_str().unwrap().to_owned()
}

/// A rated game made through one server and resigned through another: both players are
/// rated once, whichever process settles it.
async fn rated_through_two_servers(a: TestApp, b: TestApp) {
    let ann = player(&a, "ann").await;
    let bob = player(&a, "bob").await;
    let made = post_as(
        &a,
        "/v1/challenges",
        &ann,
        Some(json!({"opponents": ["bob"], "preset": "block", "rated": true})),
    )
    .await;
    let path = format!("/v1/challenges/{}/accept", made["id"].as_str().unwrap());
    let game = post_as(&a, &path, &bob, None).await["game_id"].clone();
    b.each_moves(game.as_str().unwrap(), &[&ann, &bob]).await;
    b.play(game.as_str().unwrap(), &ann, &json!({"type": "resign"}))
        .await;
    // Rated once the game's ratings move (just after its last save); both sweeps run too:
    // give them a few rounds, then count again.
    rated_games(&a, "ann", 1).await;
    rated_games(&b, "bob", 1).await;
    // Not a wait for a result: the time for a second rating, which must not come.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    for (app, who) in [(&a, "ann"), (&b, "bob")] {
        let rated = &profile(app, who).await["ratings"]["block"];
        assert_eq!(rated["games"], 1, "{who}: {rated}");
        assert_eq!(history(app, who, "block").await.len(), 1, "{who}");
    }
}

#[tokio::test]
async fn redis_a_rated_game_resigned_through_another_server_rates_both_players_once() {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    rated_through_two_servers(a, b).await;
}

#[tokio::test]
async fn cluster_a_rated_game_resigned_through_another_server_rates_both_players_once() {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    rated_through_two_servers(a, b).await;
}

/// The server that finishes a rated game stops before moving the ratings (a fault hook:
/// as if it died right after the game's last save); another server's sweep moves them,
/// once, when the game comes due.
#[tokio::test]
async fn redis_a_rated_game_left_by_a_server_that_died_after_its_last_save_is_rated_once() {
    let prefix = unique_prefix();
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    let settings = domino_server::settings::Settings {
        redis_url: Some(url),
        redis_key_prefix: prefix,
        game_idle_ttl: std::time::Duration::from_secs(600),
        ..crate::helpers::test_settings()
    };
    let dying = crate::helpers::spawn_app_with_faults(
        settings.clone(),
        domino_server::service::Faults {
            skip_settling: true,
        },
    )
    .await;
    let ann = player(&dying, "ann").await;
    let bob = player(&dying, "bob").await;
    let made = post_as(
        &dying,
        "/v1/challenges",
        &ann,
        Some(json!({"opponents": ["bob"], "preset": "block", "rated": true})),
    )
    .await;
    let path = format!("/v1/challenges/{}/accept", made["id"].as_str().unwrap());
    let game = post_as(&dying, &path, &bob, None).await["game_id"].clone();
    dying
        .each_moves(game.as_str().unwrap(), &[&ann, &bob])
        .await;
    dying
        .play(game.as_str().unwrap(), &ann, &json!({"type": "resign"}))
        .await;
    dying.stop().await;
    let other = crate::helpers::spawn_app_with(settings).await;
    assert_eq!(
        profile(&other, "ann").await["ratings"],
        json!({}),
        "not rated yet"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let rated = &profile(&other, "bob").await["ratings"]["block"];
        if rated["games"] == 1 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never rated: {rated}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // And once: later sweeps change nothing (not a wait for a result: the time for a
    // second rating, which must not come).
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(profile(&other, "ann").await["ratings"]["block"]["games"], 1);
    assert_eq!(profile(&other, "bob").await["ratings"]["block"]["games"], 1);
    assert_eq!(history(&other, "bob", "block").await.len(), 1);
}
