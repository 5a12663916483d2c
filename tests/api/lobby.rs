//! The lobby: presets, creating a game, the list of open games, taking seats.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, on_both_stores, spawn_app_with, test_settings};

on_both_stores!(
    presets_lists_the_six_presets_with_their_full_rules,
    each_preset_names_exactly_the_seat_counts_a_game_may_be_created_with,
    creating_a_game_answers_201_with_its_location_and_the_spectator_view,
    a_game_made_with_a_seed_or_a_deal_says_it_is_prearranged,
    the_lobby_says_which_open_games_are_prearranged,
    open_games_are_listed_newest_first_and_paginated,
    taking_the_last_seat_starts_the_game_and_takes_it_off_the_list,
    a_seat_token_is_shown_once_and_never_again,
    a_third_player_in_a_two_seat_game_is_refused_as_game_full,
    taking_a_taken_seat_is_refused_as_seat_taken,
    a_name_that_is_empty_or_too_long_is_a_bad_request,
    a_name_with_format_characters_or_a_levels_look_is_a_bad_request_naming_the_field,
    a_seat_that_does_not_exist_is_a_bad_request,
    games_are_listed_waiting_playing_or_finished_and_by_nothing_else,
    games_in_play_are_listed_for_spectators_until_their_match_is_over_then_among_the_latest_finished,
    a_page_far_past_the_end_is_empty_and_one_past_any_list_is_a_bad_request,
);

const RULE_FIELDS: [&str; 20] = [
    "max_pip",
    "hand_size",
    "teams",
    "opening",
    "next_leader",
    "spinner",
    "draw",
    "draw_anytime",
    "boneyard_reserve",
    "when_stuck",
    "scoring",
    "blocked_award",
    "blocked_tie",
    "muggins",
    "boneyard_to_winner",
    "double_value",
    "double_blank_value",
    "lead_double_count",
    "target",
    "rounds",
];

async fn each_preset_names_exactly_the_seat_counts_a_game_may_be_created_with(app: TestApp) {
    let presets: Vec<Value> = app.get("/v1/presets").await.json().await.unwrap();
    for preset in &presets {
        let name = preset["name"].as_str().unwrap();
        let allowed: Vec<u64> = preset["seats"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} has no seats"))
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert!(!allowed.is_empty(), "{name}");
        for seats in 2..=4u64 {
            let res = app
                .post_json("/v1/games", &json!({"preset": name, "seats": seats}))
                .await;
            let created = res.status().as_u16() == 201;
            assert_eq!(
                created,
                allowed.contains(&seats),
                "{name} with {seats} seats answered {}",
                res.status()
            );
        }
    }
}

async fn presets_lists_the_six_presets_with_their_full_rules(app: TestApp) {
    let res = app.get("/v1/presets").await;
    assert_eq!(res.status().as_u16(), 200);
    let presets: Vec<Value> = res.json().await.unwrap();
    let names: Vec<&str> = presets
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "classic",
            "block",
            "draw",
            "all_fives",
            "muggins",
            "penalty"
        ]
    );
    for p in &presets {
        assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
        let rules = p["rules"].as_object().unwrap();
        let mut keys: Vec<&str> = rules.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut expected = RULE_FIELDS.to_vec();
        expected.sort_unstable();
        assert_eq!(keys, expected, "{}", p["name"]);
    }
    let rules = |name: &str| {
        presets
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["rules"].clone())
            .unwrap()
    };
    // A few choices of RULES.md's preset table, one line per preset.
    let classic = rules("classic");
    assert_eq!(
        (
            &classic["draw"],
            &classic["blocked_award"],
            &classic["blocked_tie"],
            &classic["target"]
        ),
        (
            &json!("block"),
            &json!("difference"),
            &json!("lowest_tile"),
            &json!(100)
        )
    );
    let block = rules("block");
    assert_eq!(
        (
            &block["draw"],
            &block["blocked_award"],
            &block["blocked_tie"]
        ),
        (&json!("block"), &json!("others"), &json!("split"))
    );
    assert_eq!(rules("draw")["draw"], "until_playable");
    let fives = rules("all_fives");
    assert_eq!(
        (
            &fives["scoring"],
            &fives["spinner"],
            &fives["next_leader"],
            &fives["muggins"]
        ),
        (
            &json!("fives"),
            &json!("first_double"),
            &json!("winner"),
            &json!(false)
        )
    );
    let muggins = rules("muggins");
    assert_eq!(
        (
            &muggins["muggins"],
            &muggins["draw_anytime"],
            &muggins["lead_double_count"],
            &muggins["target"]
        ),
        (&json!(true), &json!(true), &json!("one"), &json!(200))
    );
    let penalty = rules("penalty");
    assert_eq!(
        (
            &penalty["opening"],
            &penalty["boneyard_reserve"],
            &penalty["when_stuck"],
            &penalty["scoring"],
            &penalty["rounds"],
            &penalty["target"]
        ),
        (
            &json!("start_tile"),
            &json!(2),
            &json!("end_round"),
            &json!("penalty"),
            &json!(4),
            &Value::Null
        )
    );
}

async fn creating_a_game_answers_201_with_its_location_and_the_spectator_view(app: TestApp) {
    let res = app
        .post_json("/v1/games", &json!({"preset": "block"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let view: Value = res.json().await.unwrap();
    let id = view["game_id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    assert_eq!(location, format!("/v1/games/{id}"));
    assert_eq!(view["status"], "waiting");
    assert_eq!(view["preset"], "block");
    assert_eq!(view["prearranged"], false);
    assert_eq!(view["version"], 1);
    assert_eq!(view["you"], Value::Null);
    assert_eq!(view["hand"], Value::Null);
    assert_eq!(view["round"], Value::Null);
    assert_eq!(view["your_turn"], false);
    assert_eq!(view["legal_moves"], json!([]));
    assert_eq!(view["last_round"], Value::Null);
    assert_eq!(view["result"], Value::Null);
    assert_eq!(view["rules"]["draw"], "block");
    let seats = view["seats"].as_array().unwrap();
    assert_eq!(seats.len(), 2, "two seats by default");
    for (i, seat) in seats.iter().enumerate() {
        assert_eq!(seat["seat"], i);
        assert_eq!(seat["name"], Value::Null);
        assert_eq!(seat["bot"], Value::Null);
        assert_eq!(seat["hand_count"], 0);
        assert_eq!(seat["team"], Value::Null);
    }

    // The Location names the game, and a spectator sees the same there.
    let again = app.get(&location).await;
    assert_eq!(again.status().as_u16(), 200);
    assert_eq!(again.json::<Value>().await.unwrap(), view);
}

async fn a_game_made_with_a_seed_or_a_deal_says_it_is_prearranged(app: TestApp) {
    let (seeded, view) = app
        .create_game(json!({"preset": "classic", "seed": "tournament 7"}))
        .await;
    assert_eq!(view["prearranged"], true);
    let deal = json!({
        "hands": [
            ["6-6", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"],
            ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]
        ],
        "boneyard": ["0-2", "0-4", "0-5", "0-6", "1-4", "1-5", "1-6", "2-4", "2-5", "3-4",
                     "3-5", "3-6", "4-5", "4-6"]
    });
    let (dealt, view) = app
        .create_game(json!({"preset": "classic", "deal": deal}))
        .await;
    assert_eq!(view["prearranged"], true);
    // ... in every view, a seat's included.
    for id in [&seeded, &dealt] {
        app.take_seat(id, "ann").await;
        let bob = app.take_seat(id, "bob").await;
        let view = app.view(id, Some(&bob.token)).await;
        assert_eq!(view["prearranged"], true);
        assert_eq!(view["status"], "playing");
    }
    // The fixed deal is the one dealt.
    let view = app.view(&dealt, None).await;
    assert_eq!(view["round"]["boneyard_count"], 14);
    let (_, plain) = app.create_game(json!({"preset": "classic"})).await;
    assert_eq!(plain["prearranged"], false);
}

/// A classic two-seat deal, all 28 tiles placed.
fn classic_deal() -> Value {
    json!({
        "hands": [
            ["6-6", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"],
            ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]
        ],
        "boneyard": ["0-2", "0-4", "0-5", "0-6", "1-4", "1-5", "1-6", "2-4", "2-5", "3-4",
                     "3-5", "3-6", "4-5", "4-6"]
    })
}

async fn the_lobby_says_which_open_games_are_prearranged(app: TestApp) {
    let (plain, _) = app.create_game(json!({"preset": "classic"})).await;
    let (seeded, _) = app
        .create_game(json!({"preset": "classic", "seed": "known"}))
        .await;
    let (dealt, _) = app
        .create_game(json!({"preset": "classic", "deal": classic_deal()}))
        .await;
    let res = app.get("/v1/games?status=waiting&per_page=100").await;
    assert_eq!(res.status().as_u16(), 200);
    let list: Value = res.json().await.unwrap();
    let listed = |id: &str| {
        list["games"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["game_id"] == id)
            .unwrap_or_else(|| panic!("{id} is listed: {list}"))
            .clone()
    };
    assert_eq!(listed(&plain)["prearranged"], false);
    assert_eq!(listed(&seeded)["prearranged"], true);
    assert_eq!(listed(&dealt)["prearranged"], true);
}

/// `ALLOW_PREARRANGED=false`: a seed or a deal is refused, naming the field and the
/// setting; a game without either is created as ever.
#[tokio::test]
async fn a_server_that_refuses_prearranged_games_refuses_a_seed_and_a_deal() {
    let app = spawn_app_with(domino_server::settings::Settings {
        allow_prearranged: false,
        ..test_settings()
    })
    .await;
    for (field, body) in [
        ("seed", json!({"preset": "classic", "seed": "known"})),
        ("deal", json!({"preset": "classic", "deal": classic_deal()})),
    ] {
        let res = app.post_json("/v1/games", &body).await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.starts_with(field) && detail.contains("ALLOW_PREARRANGED"),
            "{detail}"
        );
    }
    let res = app
        .post_json("/v1/games", &json!({"preset": "classic"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let listed: Value = app.get("/v1/games").await.json().await.unwrap();
    assert_eq!(listed["games"].as_array().unwrap().len(), 1, "{listed}");
}

async fn open_games_are_listed_newest_first_and_paginated(app: TestApp) {
    let mut ids = Vec::new();
    for preset in ["classic", "draw", "muggins"] {
        ids.push(app.create_game(json!({"preset": preset})).await.0);
        // Newest first is by creation time in milliseconds: keep them apart.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let list = |query: &'static str| {
        let app = &app;
        async move {
            let res = app.get(&format!("/v1/games?{query}")).await;
            assert_eq!(res.status().as_u16(), 200);
            res.json::<Value>().await.unwrap()
        }
    };
    let ids_of = |page: &Value| -> Vec<String> {
        page["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["game_id"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = list("status=waiting").await;
    assert_eq!(
        ids_of(&all),
        [ids[2].clone(), ids[1].clone(), ids[0].clone()]
    );
    let first = &all["games"][0];
    assert_eq!(first["preset"], "muggins");
    assert_eq!(first["seats"], 2);
    assert_eq!(first["free_seats"], json!([0, 1]));
    assert!(first["created_ms"].as_u64().unwrap() > 0);

    let page1 = list("status=waiting&per_page=2").await;
    assert_eq!(ids_of(&page1), [ids[2].clone(), ids[1].clone()]);
    assert_eq!((&page1["page"], &page1["per_page"]), (&json!(1), &json!(2)));
    let page2 = list("status=waiting&per_page=2&page=2").await;
    assert_eq!(ids_of(&page2), [ids[0].clone()]);
    let page3 = list("status=waiting&per_page=2&page=3").await;
    assert_eq!(ids_of(&page3), Vec::<String>::new());
    // Without a status the same open games are listed.
    assert_eq!(ids_of(&list("").await), ids_of(&all));

    // A seat taken leaves the game listed, with one seat fewer free.
    app.take_seat(&ids[1], "ann").await;
    let all = list("status=waiting").await;
    assert_eq!(all["games"][1]["free_seats"], json!([1]));

    for bad in ["page=0", "per_page=0", "per_page=101", "page=x"] {
        let res = app.get(&format!("/v1/games?{bad}")).await;
        assert_problem(res, 400, "bad_request").await;
    }
}

async fn taking_the_last_seat_starts_the_game_and_takes_it_off_the_list(app: TestApp) {
    let (id, _) = app.create_game(json!({"preset": "draw"})).await;
    let res = app.join(&id, json!({"name": "ann"})).await;
    assert_eq!(res.status().as_u16(), 201);
    let first: Value = res.json().await.unwrap();
    assert_eq!(first["seat"], 0, "the lowest free seat");
    assert_eq!(first["view"]["you"], 0);
    assert_eq!(first["view"]["status"], "waiting");
    assert_eq!(
        first["view"]["hand"],
        Value::Null,
        "nothing is shown before the start"
    );
    assert_eq!(first["view"]["seats"][0]["name"], "ann");

    let res = app.join(&id, json!({"name": "bob"})).await;
    assert_eq!(res.status().as_u16(), 201);
    let second: Value = res.json().await.unwrap();
    assert_eq!(second["seat"], 1);
    let view = &second["view"];
    assert_eq!(view["status"], "playing");
    assert_eq!(view["you"], 1);
    assert_eq!(view["hand"].as_array().unwrap().len(), 7);
    assert_eq!(view["round"]["number"], 1);
    assert_eq!(view["round"]["boneyard_count"], 14);
    assert_eq!(view["seats"][0]["hand_count"], 7);
    assert_eq!(view["seats"][1]["name"], "bob");
    assert_eq!(view["version"], 3, "created, then two seats taken");

    let spectator = app.view(&id, None).await;
    assert_eq!(spectator["status"], "playing");
    assert_eq!(spectator["hand"], Value::Null);

    let list: Value = app
        .get("/v1/games?status=waiting")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        list["games"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["game_id"] != id.as_str()),
        "{list}"
    );
}

async fn a_seat_token_is_shown_once_and_never_again(app: TestApp) {
    let (id, _) = app.create_game(json!({"preset": "classic"})).await;
    let ann = app.take_seat(&id, "ann").await;
    assert!(ann.token.len() >= 32, "a token long enough to be a secret");
    let bob_res = app.join(&id, json!({"name": "bob"})).await;
    let bob_text = bob_res.text().await.unwrap();
    assert!(!bob_text.contains(&ann.token));
    let bob: Value = serde_json::from_str(&bob_text).unwrap();
    let bob_token = bob["token"].as_str().unwrap();
    assert_ne!(bob_token, ann.token);
    // No later answer, whoever asks, carries a token.
    for token in [None, Some(ann.token.as_str()), Some(bob_token)] {
        for path in [format!("/v1/games/{id}"), format!("/v1/games/{id}/log")] {
            let text = app.get_as(&path, token).await.text().await.unwrap();
            assert!(!text.contains(&ann.token), "{path}: {text}");
            assert!(!text.contains(bob_token), "{path}: {text}");
            assert!(!text.contains("\"token\""), "{path}: {text}");
        }
    }
    // The token is the seat: each sees its own hand.
    assert_eq!(app.view(&id, Some(&ann.token)).await["you"], 0);
    assert_eq!(app.view(&id, Some(bob_token)).await["you"], 1);
}

async fn a_third_player_in_a_two_seat_game_is_refused_as_game_full(app: TestApp) {
    let (id, players) = app.start_game(json!({"preset": "classic"})).await;
    let before = app.views(&id, &players).await;
    let res = app.join(&id, json!({"name": "carol"})).await;
    assert_problem(res, 409, "game_full").await;
    // Asking for a seat by number in a full game: the game is full (the more useful
    // reason; seat_taken is for a game that still has another free seat).
    let res = app.join(&id, json!({"name": "carol", "seat": 0})).await;
    assert_problem(res, 409, "game_full").await;
    assert_eq!(app.views(&id, &players).await, before, "nothing changed");

    // A seat held by a bot is taken too.
    let (id, _) = app
        .create_game(json!({"preset": "block", "bots": [{"seat": 0, "level": "random"}]}))
        .await;
    app.take_seat(&id, "ann").await;
    let res = app.join(&id, json!({"name": "carol"})).await;
    assert_problem(res, 409, "game_full").await;
}

async fn taking_a_taken_seat_is_refused_as_seat_taken(app: TestApp) {
    let (id, _) = app
        .create_game(
            json!({"preset": "block", "seats": 3, "bots": [{"seat": 2, "level": "greedy"}]}),
        )
        .await;
    let res = app.join(&id, json!({"name": "ann", "seat": 1})).await;
    assert_eq!(res.status().as_u16(), 201);
    let before = app.view(&id, None).await;
    let res = app.join(&id, json!({"name": "bob", "seat": 1})).await;
    let body = assert_problem(res, 409, "seat_taken").await;
    assert!(body["detail"].as_str().unwrap().contains('1'), "{body}");
    let res = app.join(&id, json!({"name": "bob", "seat": 2})).await;
    assert_problem(res, 409, "seat_taken").await;
    assert_eq!(app.view(&id, None).await, before, "nothing changed");
    // The free seat is still there for the asking.
    let res = app.join(&id, json!({"name": "bob"})).await;
    assert_eq!(res.json::<Value>().await.unwrap()["seat"], 0);
}

async fn a_name_that_is_empty_or_too_long_is_a_bad_request(app: TestApp) {
    let (id, before) = app.create_game(json!({"preset": "classic"})).await;
    for name in [
        json!(""),
        json!("   "),
        json!("x".repeat(33)),
        json!("bell\u{7}"),
        json!(7),
    ] {
        let res = app.join(&id, json!({ "name": name })).await;
        assert_problem(res, 400, "bad_request").await;
    }
    let res = app.join(&id, json!({"seat": 0})).await;
    assert_problem(res, 400, "bad_request").await;
    let res = app.join(&id, json!({"name": "ann", "colour": "red"})).await;
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.view(&id, None).await, before, "nothing changed");
    // 32 characters (not bytes) is the most.
    let res = app.join(&id, json!({"name": "é".repeat(32)})).await;
    assert_eq!(res.status().as_u16(), 201);
}

/// A right-to-left override (U+202E) in a name reversed the watch page's move log; a
/// zero-width space or a line separator hides in one; "Expert Bot" on a human's seat looks
/// like the built-in level (whose seat reads "expert bot").
async fn a_name_with_format_characters_or_a_levels_look_is_a_bad_request_naming_the_field(
    app: TestApp,
) {
    let (id, before) = app.create_game(json!({"preset": "classic"})).await;
    for name in [
        "ali\u{202E}ce",
        "bob\u{200B}",
        "\u{2066}carol",
        "da\u{2028}n",
        "e\u{FEFF}ve",
        "Expert Bot",
        "expert-bot",
        "GREEDY",
        "master_bot",
        "random bot",
    ] {
        let res = app.join(&id, json!({ "name": name })).await;
        let problem = assert_problem(res, 400, "bad_request").await;
        assert!(
            problem["detail"].as_str().unwrap().starts_with("name:"),
            "{name:?}: {problem}"
        );
    }
    assert_eq!(app.view(&id, None).await, before, "nothing changed");
    // Names that merely contain a level's word are people's.
    for name in ["masterful", "robot"] {
        let res = app.join(&id, json!({ "name": name })).await;
        assert_eq!(res.status().as_u16(), 201, "{name}");
    }
}

async fn a_seat_that_does_not_exist_is_a_bad_request(app: TestApp) {
    let (id, before) = app.create_game(json!({"preset": "classic"})).await;
    let res = app.join(&id, json!({"name": "ann", "seat": 2})).await;
    assert_problem(res, 400, "bad_request").await;
    assert_eq!(app.view(&id, None).await, before);
}

async fn games_are_listed_waiting_playing_or_finished_and_by_nothing_else(app: TestApp) {
    for status in ["waiting", "playing", "finished"] {
        let res = app.get(&format!("/v1/games?status={status}")).await;
        assert_eq!(res.status().as_u16(), 200, "{status}");
    }
    let res = app.get("/v1/games?status=over").await;
    assert_problem(res, 400, "bad_request").await;
    let res = app.get("/v1/games?colour=red").await;
    assert_problem(res, 400, "bad_request").await;
}

/// The ids on the first page of `/v1/games?status=<status>`.
async fn ids_listed(app: &TestApp, status: &str) -> Vec<String> {
    let list: Value = app
        .get(&format!("/v1/games?status={status}&per_page=100"))
        .await
        .json()
        .await
        .unwrap();
    list["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["game_id"].as_str().unwrap().to_owned())
        .collect()
}

async fn games_in_play_are_listed_for_spectators_until_their_match_is_over_then_among_the_latest_finished(
    app: TestApp,
) {
    let (waiting, _) = app.create_game(json!({"preset": "draw"})).await;
    let (started, players) = app.start_game(json!({"preset": "block"})).await;
    // Later, so first in the list: the latest started come first.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (bots, _) = app
        .create_game(json!({"preset": "all_fives", "bots": [
            {"seat": 0, "level": "expert"}, {"seat": 1, "level": "expert"}
        ]}))
        .await;
    assert_eq!(ids_listed(&app, "waiting").await, vec![waiting.clone()]);
    let playing = ids_listed(&app, "playing").await;
    // The table of bots leads the list, unless it has finished already: bots play fast.
    if playing.first() != Some(&bots) {
        assert_eq!(app.view(&bots, None).await["status"], "finished");
        assert_eq!(playing, vec![started.clone()]);
    } else {
        assert_eq!(playing, vec![bots.clone(), started.clone()]);
    }
    let list: Value = app
        .get("/v1/games?status=playing")
        .await
        .json()
        .await
        .unwrap();
    let entry = list["games"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["game_id"] == started.as_str())
        .unwrap()
        .clone();
    assert_eq!(entry["preset"], "block");
    assert_eq!(entry["free_seats"], json!([]));

    let resigned = app
        .play(&started, &players[0].token, &json!({"type": "resign"}))
        .await;
    assert_eq!(resigned["status"], "finished", "{resigned}");
    app.wait_until_finished(&bots, None).await;
    assert_eq!(ids_listed(&app, "playing").await, Vec::<String>::new());
    // Both are among the latest finished now, to replay; the open game is not.
    let finished = ids_listed(&app, "finished").await;
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(
        finished.contains(&started) && finished.contains(&bots),
        "{finished:?}"
    );
}

async fn a_page_far_past_the_end_is_empty_and_one_past_any_list_is_a_bad_request(app: TestApp) {
    app.create_game(json!({"preset": "classic"})).await;
    let res = app
        .get("/v1/games?status=waiting&page=1000000000000000&per_page=100")
        .await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["games"], json!([]));
    // Positions no store can name: refused, neither a crash nor a 503.
    for page in ["18446744073709551615", "92233720368547759"] {
        let res = app
            .get(&format!("/v1/games?page={page}&per_page=100"))
            .await;
        assert_problem(res, 400, "bad_request").await;
    }
    // The list still answers.
    let res = app.get("/v1/games").await;
    assert_eq!(
        res.json::<Value>().await.unwrap()["games"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
