//! Tournaments over HTTP: round robins and duplicate Swiss tournaments played to their
//! end by built-in levels and by players the test plays, their standings checked against
//! figures the test computes from the games themselves; withdrawals, absent players, a
//! process killed mid-round, rated games, the streams, and the refusals.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::child::ChildServer;
use crate::helpers::{
    EventStream, TestApp, assert_problem, on_both_stores, on_every_store,
    spawn_app_with_redis_prefix, unique_prefix,
};

on_every_store!(
    a_round_robin_of_four_levels_meets_everyone_once_and_ranks_them_from_the_games,
    a_duplicate_swiss_of_eight_plays_to_its_end_with_no_pairing_twice,
);

/// The tests run on memory and Redis (the cluster too for the first two, above).
mod both {
    use super::*;

    on_both_stores!(
        a_player_who_withdraws_after_the_start_is_paired_no_more_and_its_games_stand,
        an_absent_player_loses_on_time_and_is_withdrawn_after_two_losses,
        a_tournament_with_too_few_players_at_its_start_is_canceled_with_a_reason,
        the_tournament_stream_tells_each_round_and_ends_with_its_finish,
        players_hear_of_their_rounds_and_of_the_finish_on_their_streams,
        bad_tournament_requests_are_refused_naming_the_field_and_change_nothing,
        a_duplicate_pairings_twin_is_sealed_while_the_other_game_is_played,
        a_rated_tournament_rates_each_game_with_a_player_in_it_once,
        two_deals_a_pairing_make_four_games_each_deal_played_twice_seats_swapped,
    );
}

/// Games of one round (a blocked game can be short, a one-round game is never long).
fn one_round() -> Value {
    json!({"target": null, "rounds": 1})
}

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let res = app.post_as("/v1/tournaments", key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn tournament(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/tournaments/{id}")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn join(app: &TestApp, id: &str, key: &str) -> Value {
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/players"), key, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

async fn start(app: &TestApp, id: &str, key: &str) -> Value {
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), key, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// Plays every game of the players whose keys are `keys` (each moving first of its legal
/// moves on its turn) until tournament `id` is over, and answers it then.
async fn play_to_the_end(app: &TestApp, id: &str, keys: &[&str], within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let t = tournament(app, id).await;
        if t["status"] == "finished" || t["status"] == "canceled" {
            return t;
        }
        assert!(Instant::now() < deadline, "not over in {within:?}: {t}");
        for key in keys {
            play_my_turns(app, key).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Each game in play of `key`'s player in which it is to move: one move.
async fn play_my_turns(app: &TestApp, key: &str) {
    let res = app
        .get_as(
            "/v1/players/me/games?status=playing&per_page=100",
            Some(key),
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let games: Value = res.json().await.unwrap();
    for game in games["games"].as_array().unwrap() {
        let id = game["game_id"].as_str().unwrap();
        let view = app.view(id, Some(key)).await;
        if view["your_turn"] == true {
            let res = app.post_move(id, key, &view["legal_moves"][0]).await;
            // A clock or a bot may have moved first: the next pass looks again.
            assert!(
                [200, 409].contains(&res.status().as_u16()),
                "{}",
                res.text().await.unwrap()
            );
        }
    }
}

/// The standings as the test computes them from the games: per entrant id, (score,
/// buchholz, sonneborn-berger, margin), every figure doubled or quadrupled to stay whole.
async fn standings_from_games(app: &TestApp, t: &Value) -> HashMap<String, (i64, i64, i64, i64)> {
    let mut score: HashMap<String, i64> = HashMap::new(); // halves
    let mut margin: HashMap<String, i64> = HashMap::new();
    let mut results = Vec::new(); // (a, b, a's halves)
    for p in t["players"].as_array().unwrap() {
        score.insert(p["id"].as_str().unwrap().to_owned(), 0);
        margin.insert(p["id"].as_str().unwrap().to_owned(), 0);
    }
    for pairing in t["pairings"].as_array().unwrap() {
        let (a, b) = (
            pairing["a"].as_str().unwrap().to_owned(),
            pairing["b"].as_str().unwrap().to_owned(),
        );
        let (mut a_points, mut b_points, mut a_games) = (0i64, 0i64, Vec::new());
        for game in pairing["games"].as_array().unwrap() {
            let view = app.view(game.as_str().unwrap(), None).await;
            assert_eq!(view["status"], "finished", "{view}");
            let seat_of = |who: &str| {
                view["seats"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .position(|s| s["player_id"] == who || s["bot"] == who)
                    .expect("each side has its seat")
            };
            let (sa, sb) = (seat_of(&a), seat_of(&b));
            let scores = &view["scores"];
            a_points += scores[sa].as_i64().unwrap();
            b_points += scores[sb].as_i64().unwrap();
            a_games.push(match view["result"]["winner"].as_u64() {
                Some(w) if w as usize == sa => 2,
                Some(_) => 0,
                None => 1,
            });
        }
        // Points over the games decide, then games won (a game lost on time may end
        // with even points).
        let won: i64 = a_games.iter().map(|h| h - 1).sum();
        let lead = match (a_games.len(), a_points - b_points) {
            (1, _) | (_, 0) => won,
            (_, margin) => margin,
        };
        let a_halves = 1 + lead.signum();
        assert_eq!(
            pairing["result"],
            match a_halves {
                2 => "a",
                0 => "b",
                _ => "draw",
            },
            "{pairing}"
        );
        *score.get_mut(&a).unwrap() += a_halves;
        *score.get_mut(&b).unwrap() += 2 - a_halves;
        *margin.get_mut(&a).unwrap() += a_points - b_points;
        *margin.get_mut(&b).unwrap() += b_points - a_points;
        results.push((a, b, a_halves));
    }
    for bye in t["byes"].as_array().unwrap() {
        *score.get_mut(bye["player"].as_str().unwrap()).unwrap() += 2;
    }
    let mut table = HashMap::new();
    for (who, halves) in &score {
        let (mut buchholz, mut sb) = (0, 0); // halves, quarters
        for (a, b, a_halves) in &results {
            let (opponent, mine) = match (a == who, b == who) {
                (true, _) => (b, *a_halves),
                (_, true) => (a, 2 - *a_halves),
                _ => continue,
            };
            buchholz += score[opponent];
            sb += score[opponent] * mine;
        }
        table.insert(who.clone(), (*halves, buchholz, sb, margin[who]));
    }
    table
}

/// The tournament's table against the test's own figures, and its order.
async fn check_standings(app: &TestApp, t: &Value) {
    let mine = standings_from_games(app, t).await;
    let players = t["players"].as_array().unwrap();
    for p in players {
        let id = p["id"].as_str().unwrap();
        let (score, buchholz, sb, margin) = mine[id];
        let f = |v: &Value| v.as_f64().unwrap();
        assert_eq!(f(&p["score"]) * 2.0, score as f64, "{id}'s score: {p}");
        assert_eq!(
            f(&p["buchholz"]) * 2.0,
            buchholz as f64,
            "{id}'s Buchholz: {p}"
        );
        assert_eq!(f(&p["sonneborn_berger"]) * 4.0, sb as f64, "{id}'s SB: {p}");
        assert_eq!(p["margin"].as_i64().unwrap(), margin, "{id}'s margin: {p}");
    }
    for (i, pair) in players.windows(2).enumerate() {
        let key = |p: &Value| {
            let (s, b, sb, m) = mine[p["id"].as_str().unwrap()];
            (s, b, sb, m)
        };
        assert!(
            key(&pair[0]) >= key(&pair[1]),
            "standings order at {i}: {t}"
        );
        assert_eq!(pair[0]["rank"].as_u64().unwrap() as usize, i + 1);
    }
}

/// No two entrants paired twice; nobody twice in a round or given two byes.
fn check_pairings(t: &Value) {
    let mut met = HashSet::new();
    let mut byes = HashSet::new();
    let mut in_round: HashSet<(u64, String)> = HashSet::new();
    for p in t["pairings"].as_array().unwrap() {
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let pair = if a < b { (a, b) } else { (b, a) };
        assert!(met.insert(pair), "{a} and {b} met twice: {t}");
        let round = p["round"].as_u64().unwrap();
        for who in [a, b] {
            assert!(
                in_round.insert((round, who.to_owned())),
                "{who} twice in round {round}"
            );
        }
    }
    for bye in t["byes"].as_array().unwrap() {
        let who = bye["player"].as_str().unwrap();
        assert!(byes.insert(who.to_owned()), "{who} had two byes: {t}");
        let round = bye["round"].as_u64().unwrap();
        assert!(
            in_round.insert((round, who.to_owned())),
            "{who} paired in its bye's round"
        );
    }
}

async fn a_round_robin_of_four_levels_meets_everyone_once_and_ranks_them_from_the_games(
    app: TestApp,
) {
    let (_, key) = app.new_player("org").await;
    let body = json!({"name": "Levels", "preset": "block", "rules": one_round(),
        "format": "round_robin", "levels": ["random", "greedy", "expert", "master"]});
    let made = create(&app, &key, body).await;
    assert_eq!(made["status"], "registering");
    assert_eq!(made["duplicate"], true, "duplicate by default");
    let id = made["id"].as_str().unwrap();
    let started = start(&app, id, &key).await;
    assert_eq!(
        (started["status"].as_str(), started["rounds"].as_u64()),
        (Some("running"), Some(3))
    );
    let t = play_to_the_end(&app, id, &[], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    assert_eq!(t["round"], 3);
    assert_eq!(
        t["pairings"].as_array().unwrap().len(),
        6,
        "everyone meets everyone"
    );
    check_pairings(&t);
    for p in t["pairings"].as_array().unwrap() {
        assert_eq!(
            p["games"].as_array().unwrap().len(),
            2,
            "duplicate: two games"
        );
    }
    check_standings(&app, &t).await;
    assert!(
        t["seed"].as_str().is_some(),
        "its seed is shown once it is over"
    );
}

async fn a_duplicate_swiss_of_eight_plays_to_its_end_with_no_pairing_twice(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let body = json!({"name": "Eight", "preset": "block", "rules": one_round(),
        "format": "swiss", "rounds": 3, "levels": ["random", "greedy", "expert", "master"]});
    let made = create(&app, &org, body).await;
    let id = made["id"].as_str().unwrap();
    let mut keys = Vec::new();
    for name in ["ann", "bob", "cat", "dan"] {
        let (_, key) = app.new_player(name).await;
        join(&app, id, &key).await;
        keys.push(key);
    }
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    start(&app, id, &org).await;
    let t = play_to_the_end(&app, id, &keys, Duration::from_secs(240)).await;
    assert_eq!(t["status"], "finished", "{t}");
    assert_eq!(
        t["pairings"].as_array().unwrap().len(),
        12,
        "3 rounds of 4 boards"
    );
    assert!(
        t["byes"].as_array().unwrap().is_empty(),
        "8 players: no bye"
    );
    check_pairings(&t);
    check_standings(&app, &t).await;
}

async fn a_player_who_withdraws_after_the_start_is_paired_no_more_and_its_games_stand(
    app: TestApp,
) {
    let (_, org) = app.new_player("org").await;
    // A short clock: should round 2 have paired her before she withdrew, her game there
    // is lost on time soon.
    let body = json!({"name": "Leaving", "preset": "block", "rules": one_round(),
        "format": "swiss", "rounds": 3, "duplicate": false,
        "clock": {"bank_secs": 5, "on_timeout": "forfeit"},
        "levels": ["random", "greedy", "expert"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (ann, ann_key) = app.new_player("ann").await;
    let (_, bob_key) = app.new_player("bob").await;
    join(&app, &id, &ann_key).await;
    join(&app, &id, &bob_key).await;
    // Before the start a withdrawal removes the player.
    let res = app
        .client
        .delete(app.url(&format!("/v1/tournaments/{id}/players/me")))
        .bearer_auth(&bob_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let t: Value = res.json().await.unwrap();
    assert_eq!(t["players"].as_array().unwrap().len(), 4, "bob is gone");
    start(&app, &id, &org).await;
    // Ann plays round 1, then withdraws.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let t = tournament(&app, &id).await;
        let mine: Vec<&Value> = t["pairings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["round"] == 1 && (p["a"] == ann.as_str() || p["b"] == ann.as_str()))
            .collect();
        if mine.iter().all(|p| !p["result"].is_null()) {
            break;
        }
        assert!(Instant::now() < deadline, "ann's first round never ended");
        play_my_turns(&app, &ann_key).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let res = app
        .client
        .delete(app.url(&format!("/v1/tournaments/{id}/players/me")))
        .bearer_auth(&ann_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let t = play_to_the_end(&app, &id, &[], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    let ann_entry = t["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == ann.as_str())
        .unwrap()
        .clone();
    assert_eq!(ann_entry["withdrawn"], true);
    let rounds_of_ann: HashSet<u64> = t["pairings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["a"] == ann.as_str() || p["b"] == ann.as_str())
        .map(|p| p["round"].as_u64().unwrap())
        .chain(
            t["byes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["player"] == ann.as_str())
                .map(|b| b["round"].as_u64().unwrap()),
        )
        .collect();
    // Round 1 stands; she may have had round 2 paired only if she withdrew after it began.
    assert!(rounds_of_ann.contains(&1), "{t}");
    assert!(!rounds_of_ann.contains(&3), "paired after withdrawing: {t}");
    check_pairings(&t);
    check_standings(&app, &t).await;
}

async fn an_absent_player_loses_on_time_and_is_withdrawn_after_two_losses(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    // Draw, not block: a block round can end blocked before an absent player's first
    // turn; a draw round cannot end without each seat's moves.
    let body = json!({"name": "Absent", "preset": "draw", "rules": one_round(),
        "format": "swiss", "rounds": 3, "levels": ["random", "greedy", "expert"],
        "clock": {"bank_secs": 1, "on_timeout": "forfeit"}});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (ann, ann_key) = app.new_player("ann").await;
    join(&app, &id, &ann_key).await;
    start(&app, &id, &org).await;
    let t = play_to_the_end(&app, &id, &[], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    let ann_entry = t["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == ann.as_str())
        .unwrap()
        .clone();
    assert_eq!(ann_entry["withdrawn"], true, "{t}");
    assert_eq!(ann_entry["score"], 0.0, "{t}");
    let played: Vec<&Value> = t["pairings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["a"] == ann.as_str() || p["b"] == ann.as_str())
        .collect();
    assert_eq!(
        played.len(),
        1,
        "withdrawn after round 1's two losses on time: {t}"
    );
    for game in played[0]["games"].as_array().unwrap() {
        let view = app.view(game.as_str().unwrap(), None).await;
        assert_eq!(view["result"]["reason"], "timeout", "{view}");
    }
    check_standings(&app, &t).await;
}

async fn a_tournament_with_too_few_players_at_its_start_is_canceled_with_a_reason(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let body = json!({"name": "Lonely", "preset": "block", "format": "swiss",
        "levels": ["greedy"], "starts_at_ms": now.as_millis() as u64 + 300});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    let t = loop {
        let t = tournament(&app, &id).await;
        if t["status"] != "registering" {
            break t;
        }
        assert!(Instant::now() < deadline, "never started nor canceled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(t["status"], "canceled");
    assert!(
        t["reason"].as_str().unwrap().contains("too few players"),
        "{t}"
    );
    let listed: Value = app
        .get("/v1/tournaments?status=canceled")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        listed["tournaments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == id.as_str())
    );
    let registering: Value = app.get("/v1/tournaments").await.json().await.unwrap();
    assert!(
        !registering["tournaments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == id.as_str())
    );
}

async fn the_tournament_stream_tells_each_round_and_ends_with_its_finish(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let body = json!({"name": "Streamed", "preset": "block", "rules": one_round(),
        "format": "round_robin", "levels": ["random", "greedy", "expert"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let res = app.get(&format!("/v1/tournaments/{id}/events")).await;
    assert_eq!(res.status().as_u16(), 200);
    let mut stream = EventStream::of(res);
    let first = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the standings first");
    assert_eq!(first.event.as_deref(), Some("standings"));
    start(&app, &id, &org).await;
    let mut kinds = Vec::new();
    while let Some(event) = stream.next(Duration::from_secs(60)).await {
        let data = event.data.clone();
        assert_eq!(data["type"].as_str(), event.event.as_deref());
        if event.event.as_deref() == Some("pairing_finished") {
            assert!(!data["pairing"]["result"].is_null(), "{data}");
        }
        kinds.push(event.event.unwrap());
        if kinds.last().unwrap() == "tournament_finished" {
            assert_eq!(data["tournament"]["status"], "finished");
            break;
        }
    }
    // Nothing follows the end: the server closes the stream at once.
    let after = stream.next(Duration::from_secs(5)).await;
    assert!(
        after.is_none() && stream.ended,
        "the stream stays open after tournament_finished: {after:?}"
    );
    let rounds = kinds.iter().filter(|k| *k == "round_started").count();
    assert_eq!(rounds, 3, "3 players: 3 rounds, each with a bye: {kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "pairing_finished").count(),
        3,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("tournament_finished")
    );
    assert!(
        stream.next(Duration::from_secs(2)).await.is_none(),
        "the stream ends"
    );
}

async fn players_hear_of_their_rounds_and_of_the_finish_on_their_streams(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let body = json!({"name": "Heard", "preset": "block", "rules": one_round(),
        "format": "round_robin", "duplicate": false, "levels": ["greedy"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, ann_key) = app.new_player("ann").await;
    join(&app, &id, &ann_key).await;
    let mut news = app.player_stream(&ann_key).await;
    start(&app, &id, &org).await;
    let mut round = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    let finished = loop {
        assert!(Instant::now() < deadline, "never finished");
        play_my_turns(&app, &ann_key).await;
        let Some(event) = news.next(Duration::from_millis(200)).await else {
            continue;
        };
        let data = event.data.clone();
        match event.event.as_deref() {
            Some("tournament_round") => round = Some(data),
            Some("tournament_finished") => break data,
            _ => {}
        }
    };
    let round = round.expect("tournament_round came first");
    assert_eq!(
        (round["tournament_id"].as_str(), round["round"].as_u64()),
        (Some(id.as_str()), Some(1))
    );
    assert_eq!(round["game_ids"].as_array().unwrap().len(), 1);
    assert_eq!(finished["tournament_id"], id.as_str());
    assert_eq!(finished["status"], "finished");
    let t = tournament(&app, &id).await;
    let ann = t["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ann")
        .unwrap();
    assert_eq!(finished["rank"], ann["rank"]);
    assert_eq!(finished["score"], ann["score"]);
}

async fn bad_tournament_requests_are_refused_naming_the_field_and_change_nothing(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let (_, ann_key) = app.new_player("ann").await;
    for (body, code, field) in [
        (
            json!({"name": "x", "preset": "block", "format": "knockout"}),
            "invalid_rules",
            "format",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "swiss", "rounds": 0}),
            "invalid_rules",
            "rounds",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "swiss", "rounds": 21}),
            "invalid_rules",
            "rounds",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "round_robin", "rounds": 3}),
            "invalid_rules",
            "rounds",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "round_robin", "max_players": 17}),
            "invalid_rules",
            "max_players",
        ),
        (
            json!({"name": "", "preset": "block", "format": "swiss"}),
            "bad_request",
            "name",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "swiss", "max_players": 2,
                "levels": ["greedy", "greedy", "random"]}),
            "invalid_rules",
            "levels",
        ),
        (
            json!({"name": "x", "preset": "block", "format": "swiss", "levels": ["grandmaster"]}),
            "invalid_rules",
            "levels",
        ),
        (
            json!({"name": "x", "preset": "nope", "format": "swiss"}),
            "invalid_rules",
            "preset",
        ),
    ] {
        let res = app.post_as("/v1/tournaments", &org, Some(&body)).await;
        let status = if code == "bad_request" { 400 } else { 422 };
        let problem = assert_problem(res, status, code).await;
        assert!(
            problem["detail"].as_str().unwrap().contains(field),
            "{body}: {problem}"
        );
    }
    let none: Value = app.get("/v1/tournaments").await.json().await.unwrap();
    assert!(
        none["tournaments"].as_array().unwrap().is_empty(),
        "nothing was made"
    );
    // A level named twice enters two copies.
    let body = json!({"name": "Ok", "preset": "block", "format": "swiss",
        "levels": ["greedy", "greedy"]});
    let made = create(&app, &org, body).await;
    let ids: Vec<&str> = made["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["greedy", "greedy-2"]);
    let id = made["id"].as_str().unwrap().to_owned();
    join(&app, &id, &ann_key).await;
    let before = tournament(&app, &id).await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/players"), &ann_key, None)
        .await;
    assert_problem(res, 409, "already_entered").await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &ann_key, None)
        .await;
    assert_problem(res, 403, "forbidden").await;
    let res = app
        .post_as(
            &format!("/v1/tournaments/{id}/players"),
            &ann_key,
            Some(&json!({"level": "expert"})),
        )
        .await;
    assert_problem(res, 403, "forbidden").await;
    assert_eq!(tournament(&app, &id).await, before, "nothing changed");
    start(&app, &id, &org).await;
    let (_, bob_key) = app.new_player("bob").await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/players"), &bob_key, None)
        .await;
    assert_problem(res, 409, "tournament_closed").await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_problem(res, 409, "tournament_closed").await;
    let res = app
        .get("/v1/tournaments/00000000-0000-0000-0000-000000000000")
        .await;
    assert_problem(res, 404, "not_found").await;
    let res = app.get("/v1/tournaments?status=done").await;
    assert_problem(res, 400, "bad_request").await;
    let res = app
        .post_json(
            "/v1/tournaments",
            &json!({"name": "x", "preset": "block", "format": "swiss"}),
        )
        .await;
    assert_problem(res, 401, "unauthorized").await;
}

async fn a_duplicate_pairings_twin_is_sealed_while_the_other_game_is_played(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    // Draw, not block: a block round can end blocked before ann's first turn (1 deal in
    // about 100), which would unseal its twin before she moves.
    let body = json!({"name": "Sealed", "preset": "draw", "rules": one_round(),
        "format": "round_robin", "levels": ["greedy"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, ann_key) = app.new_player("ann").await;
    join(&app, &id, &ann_key).await;
    let t = start(&app, &id, &org).await;
    let games: Vec<String> = t["pairings"][0]["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(games.len(), 2);
    // While the deal is in play, each game is sealed to everyone but its own seats.
    for game in &games {
        let res = app.get(&format!("/v1/games/{game}")).await;
        assert_problem(res, 409, "game_sealed").await;
        let res = app.get(&format!("/v1/games/{game}/log")).await;
        assert_problem(res, 409, "game_sealed").await;
    }
    let res = app
        .get_as(&format!("/v1/games/{}", games[0]), Some(&ann_key))
        .await;
    assert_eq!(res.status().as_u16(), 200, "its own seat reads it");
    let t = play_to_the_end(&app, &id, &[&ann_key], Duration::from_secs(60)).await;
    assert_eq!(t["status"], "finished");
    for game in &games {
        let res = app.get(&format!("/v1/games/{game}/export")).await;
        assert_eq!(res.status().as_u16(), 200, "both over: readable");
    }
}

/// A rated round robin of two players and a level (the preset's own rules, as rated games
/// need): every game with a player in it is rated once, whichever side the level takes.
async fn a_rated_tournament_rates_each_game_with_a_player_in_it_once(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let body = json!({"name": "Rated", "preset": "block", "format": "round_robin",
        "rated": true, "levels": ["greedy"]});
    let id = create(&app, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    join(&app, &id, &ann).await;
    join(&app, &id, &bob).await;
    start(&app, &id, &org).await;
    let t = play_to_the_end(&app, &id, &[&ann, &bob], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    assert_eq!(t["pairings"].as_array().unwrap().len(), 3, "{t}");
    // Each entrant played two pairings of two games. Ratings settle just after the
    // games' ends (their due index): the test waits for them, then for nothing more.
    let games_of = |who: &'static str| {
        let app = &app;
        async move {
            let profile: Value = app
                .get(&format!("/v1/players/{who}"))
                .await
                .json()
                .await
                .unwrap();
            profile["ratings"]["block"]["games"].as_u64().unwrap_or(0)
        }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while (games_of("ann").await, games_of("bob").await) != (4, 4) {
        assert!(Instant::now() < deadline, "ratings not settled: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        games_of("greedy").await,
        4,
        "the level is rated against as itself"
    );
    // Not a wait for a result: the time for a game to be rated twice, which must not come.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        (games_of("ann").await, games_of("bob").await),
        (4, 4),
        "each game once"
    );
}

/// Two servers share one Redis: one, the binary as a child process, starts a duplicate
/// Swiss and is SIGKILLed as soon as it answers, its first round's games named, made and
/// being played by its bots; the other, which was never told of the tournament, finishes
/// it, and every game was made exactly once.
#[tokio::test]
async fn a_server_killed_mid_round_leaves_the_tournament_to_another_that_finishes_it() {
    let prefix = unique_prefix();
    let mut child = ChildServer::start(&prefix);
    let a = TestApp::at(child.base.clone());
    let b = spawn_app_with_redis_prefix(&prefix).await;
    let (_, org) = a.new_player("org").await;
    let body = json!({"name": "Survivor", "preset": "block", "rules": one_round(),
        "format": "swiss", "rounds": 2, "levels": ["random", "greedy", "expert", "master"]});
    let id = create(&a, &org, body).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let started = start(&a, &id, &org).await;
    child.kill();
    assert_eq!(started["round"], 1, "{started}");
    let t = play_to_the_end(&b, &id, &[], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    let games: Vec<&str> = t["pairings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_str().unwrap())
        })
        .collect();
    assert_eq!(games.len(), 8, "2 rounds of 2 boards, 2 games each");
    assert_eq!(
        games.iter().collect::<HashSet<_>>().len(),
        8,
        "each game once"
    );
    for game in games {
        let view = b.view(game, None).await;
        assert_eq!(view["status"], "finished");
    }
    check_standings(&b, &t).await;
}

/// `deals_per_pairing: 2` in a duplicate tournament: each pairing four games, two deals,
/// each dealt twice with the sides swapped; the standings still follow from the games.
async fn two_deals_a_pairing_make_four_games_each_deal_played_twice_seats_swapped(app: TestApp) {
    let (_, key) = app.new_player("org").await;
    let body = json!({"name": "Two deals", "preset": "block", "rules": one_round(),
        "format": "round_robin", "levels": ["random", "greedy"], "deals_per_pairing": 2});
    let made = create(&app, &key, body).await;
    assert_eq!(
        (
            made["deals_per_pairing"].as_u64(),
            made["duplicate"].as_bool()
        ),
        (Some(2), Some(true))
    );
    let id = made["id"].as_str().unwrap();
    start(&app, id, &key).await;
    let t = play_to_the_end(&app, id, &[], Duration::from_secs(120)).await;
    assert_eq!(t["status"], "finished", "{t}");
    let pairings = t["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 1, "{t}");
    let games: Vec<&str> = pairings[0]["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap())
        .collect();
    assert_eq!(games.len(), 4, "two deals, each played twice: {t}");
    let mut exports = Vec::new();
    for game in &games {
        let res = app.get(&format!("/v1/games/{game}/export")).await;
        assert_eq!(res.status().as_u16(), 200);
        exports.push(res.json::<Value>().await.unwrap());
    }
    let hands = |e: &Value| e["deals"][0]["hands"].clone();
    let names = |e: &Value| e["names"].clone();
    for twin in [0, 2] {
        let (one, other) = (&exports[twin], &exports[twin + 1]);
        assert_eq!(hands(one), hands(other), "one deal, dealt twice");
        let swapped = json!([names(one)[1], names(one)[0]]);
        assert_eq!(names(other), swapped, "the sides swapped");
    }
    assert_ne!(hands(&exports[0]), hands(&exports[2]), "two deals");
    check_standings(&app, &t).await;
}
