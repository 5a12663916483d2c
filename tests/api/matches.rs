//! Whole matches of every preset, played over HTTP from `legal_moves` alone until the
//! match is over; then the result, the log and the export must agree.

use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, assert_problem, on_every_store, sorted};

on_every_store!(
    a_classic_match_between_two_players_is_played_to_the_end,
    a_block_match_between_two_players_is_played_to_the_end,
    a_draw_match_between_two_players_is_played_to_the_end,
    an_all_fives_match_between_two_players_is_played_to_the_end,
    a_muggins_match_between_two_players_is_played_to_the_end,
    a_penalty_match_between_two_players_is_played_to_the_end,
    a_block_match_of_three_seats_with_a_random_bot_is_played_to_the_end,
    an_all_fives_match_of_two_teams_with_two_bots_is_played_to_the_end,
    a_draw_match_of_four_seats_against_three_bots_is_played_to_the_end,
    a_muggins_match_against_a_greedy_bot_is_played_to_the_end,
    a_game_of_bots_only_plays_to_its_end_by_itself,
    a_game_of_bots_only_answers_at_once_however_long_its_match,
    the_same_seed_and_the_same_choices_give_the_same_match,
    points_not_claimed_under_muggins_are_taken_by_the_opponents_muggins_move,
);

/// Starts a game, plays it out and checks the finished game as every client sees it.
/// Returns the export.
async fn play_out(app: &TestApp, create: Value, seed: u64) -> Value {
    let (id, players) = app.start_game(create.clone()).await;
    let mut first_hands = Vec::new();
    for p in &players {
        first_hands.push(sorted(&app.view(&id, Some(&p.token)).await["hand"]));
    }
    let played = app.play_match(&id, &players, seed).await;
    check_finished(app, &id, &players, &played.last).await;
    let export = export_of(app, &id).await;
    for (p, hand) in players.iter().zip(&first_hands) {
        assert_eq!(
            sorted(&export["deals"][0]["hands"][p.seat as usize]),
            *hand,
            "the export's first deal is the one dealt"
        );
    }
    let bots = create["bots"].as_array().map_or(0, Vec::len);
    if bots == 0 {
        assert_eq!(
            export["moves"].as_array().unwrap().len(),
            played.posted,
            "without bots every move was posted here"
        );
    } else {
        assert!(export["moves"].as_array().unwrap().len() > played.posted);
    }
    export
}

async fn export_of(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// A finished game: a result, no turn and no moves for anyone, and an export that matches
/// the log and the views.
async fn check_finished(app: &TestApp, id: &str, players: &[Player], last: &Value) {
    assert_eq!(last["status"], "finished", "{last}");
    let spectator = app.view(id, None).await;
    assert_eq!(spectator["status"], "finished");
    let result = &spectator["result"];
    assert!(
        result.is_object(),
        "a finished match has a result: {spectator}"
    );
    assert_eq!(result["scores"], spectator["scores"]);
    let sides = if spectator["rules"]["teams"] == true {
        2
    } else {
        spectator["seats"].as_array().unwrap().len()
    };
    assert_eq!(result["scores"].as_array().unwrap().len(), sides);
    match result["winner"].as_u64() {
        Some(w) => assert!((w as usize) < sides, "{result}"),
        None => assert!(result["winner"].is_null()),
    }
    assert_eq!(spectator["round"]["turn"], Value::Null);
    assert!(spectator["last_round"].is_object(), "{spectator}");
    // The last move's answer told what it caused: the end of the match, and of a round
    // if it ended one, as the views now show them.
    if let Some(events) = last.get("events").and_then(Value::as_array) {
        let ended = events
            .iter()
            .rfind(|e| e["type"] == "match_ended")
            .unwrap_or_else(|| panic!("the last answer ends the match: {last}"));
        assert_eq!(ended["result"], *result);
        if let Some(round) = events.iter().rfind(|e| e["type"] == "round_ended") {
            assert_eq!(round["result"], spectator["last_round"]);
        }
    }
    for p in players {
        let view = app.view(id, Some(&p.token)).await;
        assert_eq!(view["result"], *result);
        assert_eq!(view["your_turn"], false);
        assert_eq!(view["legal_moves"], json!([]));
    }
    // The match's end is decided by its rules.
    let rules = &spectator["rules"];
    let scores: Vec<i64> = result["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().unwrap())
        .collect();
    let rounds_played = spectator["last_round"]["number"].as_u64().unwrap();
    let target_reached = rules["target"]
        .as_i64()
        .is_some_and(|t| scores.iter().any(|&s| s >= t));
    let rounds_over = rules["rounds"].as_u64().is_some_and(|r| rounds_played >= r);
    assert!(target_reached || rounds_over, "{spectator}");
    if let Some(w) = result["winner"].as_u64() {
        let best = if rules["scoring"] == "penalty" {
            *scores.iter().min().unwrap()
        } else {
            *scores.iter().max().unwrap()
        };
        assert_eq!(scores[w as usize], best, "the winner has the best score");
    }

    let log = app.log(id, None).await;
    let export = export_of(app, id).await;
    assert_eq!(
        export["moves"].as_array().unwrap().len(),
        log["moves"].as_array().unwrap().len(),
        "the export and the log hold the same moves"
    );
    for (exported, logged) in export["moves"]
        .as_array()
        .unwrap()
        .iter()
        .zip(log["moves"].as_array().unwrap())
    {
        assert_eq!(exported["seat"], logged["seat"]);
        if exported["move"]["type"] != "draw" {
            assert_eq!(exported["move"], logged["move"]);
        }
    }
    assert_eq!(export["result"], *result);
    assert_eq!(export["rules"], *rules);
    assert_eq!(export["game_id"], id);
    assert_eq!(
        export["deals"].as_array().unwrap().len() as u64,
        spectator["round"]["number"].as_u64().unwrap(),
        "one deal per round"
    );
    assert_eq!(
        export["seed"].as_str().unwrap().len(),
        64,
        "32 bytes in hex"
    );
    assert_eq!(log["version"], spectator["version"]);
}

async fn a_classic_match_between_two_players_is_played_to_the_end(app: TestApp) {
    play_out(&app, json!({"preset": "classic", "seed": "classic 1"}), 11).await;
}

async fn a_block_match_between_two_players_is_played_to_the_end(app: TestApp) {
    play_out(&app, json!({"preset": "block", "seed": "block 1"}), 12).await;
}

async fn a_draw_match_between_two_players_is_played_to_the_end(app: TestApp) {
    let export = play_out(&app, json!({"preset": "draw", "seed": "draw 1"}), 13).await;
    let draws = export["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["move"]["type"] == "draw")
        .count();
    assert!(draws > 0, "a draw game draws: {export}");
}

async fn an_all_fives_match_between_two_players_is_played_to_the_end(app: TestApp) {
    play_out(&app, json!({"preset": "all_fives", "seed": "fives 1"}), 14).await;
}

async fn a_muggins_match_between_two_players_is_played_to_the_end(app: TestApp) {
    let export = play_out(&app, json!({"preset": "muggins", "seed": "muggins 1"}), 15).await;
    let claims = export["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["move"]["claim"].is_u64())
        .count();
    assert!(claims > 0, "points were claimed: {export}");
}

async fn a_penalty_match_between_two_players_is_played_to_the_end(app: TestApp) {
    let export = play_out(&app, json!({"preset": "penalty", "seed": "penalty 1"}), 16).await;
    assert_eq!(export["deals"].as_array().unwrap().len(), 4, "4 rounds");
}

async fn a_block_match_of_three_seats_with_a_random_bot_is_played_to_the_end(app: TestApp) {
    let export = play_out(
        &app,
        json!({"preset": "block", "seats": 3, "seed": "block 3",
               "bots": [{"seat": 1, "level": "random"}]}),
        17,
    )
    .await;
    assert_eq!(export["seats"], 3);
    assert_eq!(export["names"][1], "random bot");
}

async fn an_all_fives_match_of_two_teams_with_two_bots_is_played_to_the_end(app: TestApp) {
    let export = play_out(
        &app,
        json!({"preset": "all_fives", "seats": 4, "rules": {"teams": true}, "seed": "teams",
               "bots": [{"seat": 1, "level": "greedy"}, {"seat": 3, "level": "random"}]}),
        18,
    )
    .await;
    assert_eq!(export["rules"]["teams"], true);
    let id = export["game_id"].as_str().unwrap();
    let view = app.view(id, None).await;
    let teams: Vec<&Value> = view["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["team"])
        .collect();
    assert_eq!(teams, [&json!(0), &json!(1), &json!(0), &json!(1)]);
    assert_eq!(export["result"]["scores"].as_array().unwrap().len(), 2);
    let seats_that_moved: std::collections::BTreeSet<u64> = export["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seat"].as_u64().unwrap())
        .collect();
    assert_eq!(seats_that_moved.len(), 4, "every seat played");
}

async fn a_draw_match_of_four_seats_against_three_bots_is_played_to_the_end(app: TestApp) {
    play_out(
        &app,
        json!({"preset": "draw", "seats": 4, "seed": "draw 4",
               "bots": [{"seat": 0, "level": "greedy"}, {"seat": 2, "level": "random"},
                        {"seat": 3, "level": "greedy"}]}),
        19,
    )
    .await;
}

async fn a_muggins_match_against_a_greedy_bot_is_played_to_the_end(app: TestApp) {
    play_out(
        &app,
        json!({"preset": "muggins", "seed": "muggins bot",
               "bots": [{"seat": 0, "level": "greedy"}]}),
        20,
    )
    .await;
}

async fn a_game_of_bots_only_plays_to_its_end_by_itself(app: TestApp) {
    let (id, created) = app
        .create_game(
            json!({"preset": "all_fives", "seats": 3, "seed": "bots only", "bots": [
            {"seat": 0, "level": "random"}, {"seat": 1, "level": "greedy"},
            {"seat": 2, "level": "random"}]}),
        )
        .await;
    assert_eq!(
        created["status"], "playing",
        "answered before the bots move: {created}"
    );
    assert_eq!(created["version"], 1, "{created}");
    let view = app.wait_until_finished(&id, None).await;
    assert!(view["result"].is_object(), "{view}");
    assert_eq!(view["seats"][1]["bot"], "greedy");
    check_finished(&app, &id, &[], &view).await;
    // It never was an open game.
    let list: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(list["games"], json!([]));
}

async fn a_game_of_bots_only_answers_at_once_however_long_its_match(app: TestApp) {
    // Hundreds of rounds to the highest target: far more moves than any request could
    // wait for; the bots play them in the background.
    let (id, view) = app
        .create_game(
            json!({"preset": "classic", "rules": {"target": 2000}, "seed": "forever",
                    "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]}),
        )
        .await;
    assert_eq!(view["status"], "playing", "{view}");
    let list: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(list["games"], json!([]), "never an open game");
    // The bots move without anyone asking.
    let res = app.get(&format!("/v1/games/{id}?after=1&wait=8")).await;
    let later: Value = res.json().await.unwrap();
    assert!(later["version"].as_u64().unwrap() > 1, "{later}");
}

async fn the_same_seed_and_the_same_choices_give_the_same_match(app: TestApp) {
    let create = json!({"preset": "muggins", "seed": "again",
                        "bots": [{"seat": 1, "level": "greedy"}]});
    let first = play_out(&app, create.clone(), 21).await;
    let second = play_out(&app, create, 21).await;
    for field in ["seed", "deals", "moves", "result", "rules"] {
        assert_eq!(first[field], second[field], "{field}");
    }
}

async fn points_not_claimed_under_muggins_are_taken_by_the_opponents_muggins_move(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "muggins", "seed": "take them"}))
        .await;
    // Play on until the seat to move could claim points, then let it forget to.
    let mut rng = 5usize;
    let (mover, points) = loop {
        let spectator = app.view(&id, None).await;
        assert_eq!(
            spectator["status"], "playing",
            "no claim came up: {spectator}"
        );
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let view = app.view(&id, Some(&players[turn].token)).await;
        let legal = view["legal_moves"].as_array().unwrap();
        let claimable = legal.iter().position(|m| m["claim"].is_u64());
        if let Some(at) = claimable
            && view["hand"].as_array().unwrap().len() > 1
        {
            // The claiming form comes first, with its points; the unclaimed form after it
            // credits nothing, so it lists 0.
            let claim = &legal[at];
            assert_eq!(claim["points"], claim["claim"], "{claim}");
            let mut unclaimed = claim.clone();
            unclaimed.as_object_mut().unwrap().remove("claim");
            unclaimed["points"] = json!(0);
            let later = legal.iter().position(|m| *m == unclaimed);
            assert!(later.is_some_and(|u| u > at), "{legal:?}");
            let answer = app.play(&id, &players[turn].token, &unclaimed).await;
            let played = &answer["events"][0];
            assert_eq!(played["type"], "played");
            assert_eq!(played["credited"], false, "{played}");
            break (turn, claim["claim"].as_u64().unwrap());
        }
        let plain: Vec<&Value> = legal.iter().filter(|m| m["type"] != "muggins").collect();
        rng = rng.wrapping_mul(31).wrapping_add(7);
        app.play(&id, &players[turn].token, plain[rng % plain.len()])
            .await;
    };
    let taker = 1 - mover;
    let spectator = app.view(&id, None).await;
    assert_eq!(
        spectator["round"]["unclaimed"],
        json!({"seat": mover, "points": points})
    );
    let scores = spectator["scores"].clone();
    // Not the mover's to take.
    let mine = app.view(&id, Some(&players[mover].token)).await;
    assert!(
        mine["legal_moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["type"] != "muggins")
    );
    let res = app
        .post_move(&id, &players[mover].token, &json!({"type": "muggins"}))
        .await;
    assert_problem(res, 422, "illegal_move").await;
    // The opponent's to take.
    let theirs = app.view(&id, Some(&players[taker].token)).await;
    assert!(
        theirs["legal_moves"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["type"] == "muggins"),
        "{theirs}"
    );
    let answer = app
        .play(&id, &players[taker].token, &json!({"type": "muggins"}))
        .await;
    assert_eq!(
        answer["events"][0],
        json!({"type": "muggins_taken", "seat": taker, "from": mover, "points": points})
    );
    assert_eq!(
        answer["scores"][taker].as_u64().unwrap(),
        scores[taker].as_u64().unwrap() + points
    );
    assert_eq!(answer["scores"][mover], scores[mover]);
    assert_eq!(
        answer["round"]["turn"], taker,
        "a muggins call keeps the turn"
    );
    assert_eq!(answer["round"]["unclaimed"], Value::Null);
    // Taken once only.
    let res = app
        .post_move(&id, &players[taker].token, &json!({"type": "muggins"}))
        .await;
    assert_problem(res, 422, "illegal_move").await;
}
