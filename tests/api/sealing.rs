//! Duplicate twins stay sealed: while one game of a duplicate deal is in play, the other
//! game of that deal (the same hands, the seats swapped) is read only by its own seats, as
//! they played it, and exported by nobody (its seed fixes every hand and the stock), until
//! both have finished.

use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_every_store};

on_every_store!(a_finished_twin_is_sealed_until_its_deal_is_done);

/// Lists and histories keep the seal (issue 52): on memory and Redis.
mod lists {
    use super::*;
    use crate::helpers::on_both_stores;

    on_both_stores!(a_sealed_game_shows_in_play_in_players_lists_and_tells_no_rating_moved);
}

async fn resign(app: &TestApp, game: &str, key: &str) {
    let res = app
        .post_as(
            &format!("/v1/games/{game}/moves"),
            key,
            Some(&json!({"type": "resign"})),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
}

async fn sealed(res: reqwest::Response) {
    let problem = assert_problem(res, 409, "game_sealed").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("same deal"),
        "{problem}"
    );
}

async fn a_finished_twin_is_sealed_until_its_deal_is_done(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let res = app
        .post_as(
            "/v1/matches",
            &ann,
            Some(&json!({"opponent": "bob", "preset": "all_fives", "deals": 1, "parallel": 2})),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .post_as(&format!("/v1/challenges/{id}/accept"), &bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let running: Value = app
        .get(&format!("/v1/matches/{id}"))
        .await
        .json()
        .await
        .unwrap();
    let games: Vec<String> = running["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(games.len(), 2, "{running}");
    assert!(
        running["seed"].is_null(),
        "the seed tells every deal: {running}"
    );
    let (first, twin) = (&games[0], &games[1]);
    resign(&app, first, &ann).await;

    // The finished game: no export for anyone, no view, log or stream for a spectator.
    sealed(app.get(&format!("/v1/games/{first}/export")).await).await;
    sealed(
        app.get_as(&format!("/v1/games/{first}/export"), Some(&ann))
            .await,
    )
    .await;
    sealed(app.get(&format!("/v1/games/{first}")).await).await;
    sealed(app.get(&format!("/v1/games/{first}/log")).await).await;
    sealed(app.get(&format!("/v1/games/{first}/events")).await).await;
    sealed(app.get(&format!("/v1/games/{first}?wait=1&after=0")).await).await;
    // Its own seats read it as they played it.
    for key in [&ann, &bob] {
        let res = app.get_as(&format!("/v1/games/{first}"), Some(key)).await;
        assert_eq!(res.status().as_u16(), 200);
        let res = app
            .get_as(&format!("/v1/games/{first}/log"), Some(key))
            .await;
        assert_eq!(res.status().as_u16(), 200);
    }
    // The game in play reads as any game in play (its spectators see no hand): its twin
    // has finished.
    assert_eq!(app.get(&format!("/v1/games/{twin}")).await.status(), 200);

    resign(&app, twin, &bob).await;
    let res = app.get(&format!("/v1/games/{first}/export")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let res = app.get(&format!("/v1/games/{twin}/export")).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(app.get(&format!("/v1/games/{first}")).await.status(), 200);
    // Over, the match shows its seed: the deal's seed is made from it, as the exports say.
    let export: Value = app
        .get(&format!("/v1/games/{first}/export"))
        .await
        .json()
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let seed = loop {
        let over: Value = app
            .get(&format!("/v1/matches/{id}"))
            .await
            .json()
            .await
            .unwrap();
        if over["status"] == "finished" {
            break over["seed"]
                .as_str()
                .expect("a finished match's seed")
                .to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "{over}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    hash.update(hex::decode(seed).unwrap());
    hash.update(0u32.to_le_bytes());
    assert_eq!(export["seed"], hex::encode(hash.finalize()));
}

/// A rated match of one deal played in parallel: its id and its two games.
async fn rated_pair(app: &TestApp, ann: &str, bob: &str) -> (String, String) {
    let res = app
        .post_as(
            "/v1/matches",
            ann,
            Some(
                &json!({"opponent": "bob", "preset": "all_fives", "deals": 1,
                "parallel": 2, "rated": true}),
            ),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app
        .post_as(&format!("/v1/challenges/{id}/accept"), bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let running: Value = app
        .get(&format!("/v1/matches/{id}"))
        .await
        .json()
        .await
        .unwrap();
    let games = running["games"].as_array().unwrap();
    let id_of = |g: &Value| g["game_id"].as_str().unwrap().to_owned();
    (id_of(&games[0]), id_of(&games[1]))
}

/// The entry of game `id` in `list` (a player's games), if any.
fn entry<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["game_id"] == id)
}

async fn rating_points(app: &TestApp, who: &str) -> Vec<String> {
    let res = app
        .get(&format!("/v1/players/{who}/ratings/all_fives/history"))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let points: Value = res.json().await.unwrap();
    points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["game_id"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_sealed_game_shows_in_play_in_players_lists_and_tells_no_rating_moved(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let (first, twin) = rated_pair(&app, &ann, &bob).await;
    // Each side moves before ann resigns: the game is rated (one resigned at once is
    // aborted, not rated), so its point exists, to be kept out of the history.
    app.each_moves(&first, &[&ann, &bob]).await;
    resign(&app, &first, &ann).await;

    for who in ["ann", "bob"] {
        // Anyone's list shows the finished twin as it was made: in play, nothing told.
        let list: Value = app
            .get(&format!("/v1/players/{who}/games"))
            .await
            .json()
            .await
            .unwrap();
        let shown = entry(&list, &first).unwrap_or_else(|| panic!("{list}"));
        assert_eq!(shown["status"], "playing", "{shown}");
        assert_eq!(shown["version"], 1, "{shown}");
        assert!(
            shown["outcome"].is_null() && shown["result"].is_null(),
            "{shown}"
        );
        assert!(
            shown["scores"].as_array().unwrap().iter().all(|s| s == 0),
            "{shown}"
        );
        let finished: Value = app
            .get(&format!("/v1/players/{who}/games?status=finished"))
            .await
            .json()
            .await
            .unwrap();
        assert!(entry(&finished, &first).is_none(), "{finished}");
        // Nor its rating history.
        assert!(!rating_points(&app, who).await.contains(&first), "{who}");
    }
    // Its own seats read it as it was played, in their own list.
    let mine: Value = app
        .get_as("/v1/players/me/games?status=finished", Some(&ann))
        .await
        .json()
        .await
        .unwrap();
    let own = entry(&mine, &first).unwrap_or_else(|| panic!("{mine}"));
    assert_eq!(own["status"], "finished");
    assert_eq!(own["outcome"], "lost");

    // Once the deal is done, everyone reads both.
    resign(&app, &twin, &bob).await;
    let list: Value = app.get("/v1/players/ann/games").await.json().await.unwrap();
    let shown = entry(&list, &first).unwrap_or_else(|| panic!("{list}"));
    assert_eq!(
        (shown["status"].as_str(), shown["outcome"].as_str()),
        (Some("finished"), Some("lost"))
    );
    // And its rating point: it was rated all along, only hidden.
    for who in ["ann", "bob"] {
        assert!(rating_points(&app, who).await.contains(&first), "{who}");
    }
}
