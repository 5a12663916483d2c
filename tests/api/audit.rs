//! The corrections of the outside rules audits (issues 10 and 27) as a client sees them:
//! the export of a finished game gives every round the deal its seats were dealt, and its
//! seed given back deals them again; an open end says whether it counts both halves; a
//! forced lead is named in the leader's view.

use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_stores, sorted};

on_both_stores!(
    the_export_gives_every_round_the_deal_its_seats_were_dealt,
    an_uncovered_lead_side_shows_double_only_where_it_counts_both_halves,
    the_view_names_a_forced_lead_until_it_is_down,
    an_exports_rules_and_seed_given_back_deal_the_same_rounds,
    a_seed_marked_hex_that_is_not_32_bytes_is_refused_naming_the_seed,
);

/// Plays game `id` to its end, each seat to move taking its first legal move.
async fn play_first_moves(app: &TestApp, id: &str, tokens: &[String]) {
    loop {
        let spectator = app.view(id, None).await;
        if spectator["status"] == "finished" {
            return;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let view = app.view(id, Some(&tokens[turn])).await;
        app.play(id, &tokens[turn], &view["legal_moves"][0]).await;
    }
}

async fn export_of(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(res.status().as_u16(), 200);
    res.json().await.unwrap()
}

/// Issue 27, 5: the export's seed is the seed's bytes in hex; `"hex:" + seed`, with the
/// export's rules and seats, makes a game whose every round is dealt as the export's were
/// (the export's moves played again reach them all).
async fn an_exports_rules_and_seed_given_back_deal_the_same_rounds(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "give me back",
            "rules": {"opening": "random", "next_leader": "winner", "hand_size": 3,
                      "rounds": 3, "target": null}}))
        .await;
    let tokens: Vec<String> = players.iter().map(|p| p.token.clone()).collect();
    play_first_moves(&app, &id, &tokens).await;
    let export = export_of(&app, &id).await;
    assert_eq!(export["deals"].as_array().unwrap().len(), 3);

    let (again, players) = app
        .start_game(json!({"preset": export["preset"], "rules": export["rules"],
            "seats": export["seats"],
            "seed": format!("hex:{}", export["seed"].as_str().unwrap())}))
        .await;
    for p in &players {
        let hand = sorted(&app.view(&again, Some(&p.token)).await["hand"]);
        assert_eq!(
            hand,
            sorted(&export["deals"][0]["hands"][p.seat as usize]),
            "round 1, seat {}",
            p.seat
        );
    }
    for m in export["moves"].as_array().unwrap() {
        let seat = m["seat"].as_u64().unwrap() as usize;
        app.play(&again, &players[seat].token, &m["move"]).await;
    }
    let replayed = export_of(&app, &again).await;
    assert_eq!(replayed["seed"], export["seed"]);
    assert_eq!(replayed["deals"], export["deals"]);
    assert_eq!(replayed["result"], export["result"]);
}

async fn a_seed_marked_hex_that_is_not_32_bytes_is_refused_naming_the_seed(app: TestApp) {
    for seed in ["hex:", "hex:00ff", &format!("hex:{}", "z".repeat(64))] {
        let res = app
            .post_json("/v1/games", &json!({"preset": "classic", "seed": seed}))
            .await;
        let problem = crate::helpers::assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"].as_str().unwrap().starts_with("seed"),
            "{seed}: {problem}"
        );
    }
}

/// Issue 27, 4: `round.must_lead` names the tile the opening rule forces (the highest
/// double dealt) in the leader's view until the lead is down; it is null where any tile
/// leads, and in the other views, where the tile is hidden.
async fn the_view_names_a_forced_lead_until_it_is_down(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "all_fives", "deal": lead_double_deal()}))
        .await;
    let leader = app.view(&id, Some(&players[0].token)).await;
    assert_eq!(leader["round"]["must_lead"], "4-4");
    assert_eq!(
        leader["legal_moves"],
        json!([{"type": "play", "tile": "4-4", "points": 0}])
    );
    assert_eq!(
        app.view(&id, Some(&players[1].token)).await["round"]["must_lead"],
        Value::Null
    );
    assert_eq!(app.view(&id, None).await["round"]["must_lead"], Value::Null);
    let answer = app
        .play(
            &id,
            &players[0].token,
            &json!({"type": "play", "tile": "4-4"}),
        )
        .await;
    assert_eq!(answer["round"]["must_lead"], Value::Null);
    let (free, players) = app
        .start_game(json!({"preset": "all_fives", "rules": {"opening": "seat_zero"}}))
        .await;
    assert_eq!(
        app.view(&free, Some(&players[0].token)).await["round"]["must_lead"],
        Value::Null
    );
}

/// The audit's reproduction: lots drawn for the opening, the winner of a round leads the
/// next. Round 1 ends by a domino (its winner leads round 2, no lots drawn), round 2 is
/// blocked; the export dealt round 2 as if lots had been drawn before it.
async fn the_export_gives_every_round_the_deal_its_seats_were_dealt(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "block", "seats": 2, "seed": "r0",
            "rules": {"opening": "draw_lots", "next_leader": "winner", "rounds": 2,
                      "target": null, "hand_size": 2}}))
        .await;
    // Every seat's hand as each round was dealt, and how each round ended.
    let mut dealt: Vec<Vec<Vec<String>>> = Vec::new();
    let mut reasons = Vec::new();
    let mut round = 0;
    loop {
        let spectator = app.view(&id, None).await;
        if spectator["round"]["number"] != round {
            round = spectator["round"]["number"].as_u64().unwrap();
            if round > 1 {
                reasons.push(spectator["last_round"]["reason"].clone());
            }
            let mut hands = Vec::new();
            for p in &players {
                hands.push(sorted(&app.view(&id, Some(&p.token)).await["hand"]));
            }
            dealt.push(hands);
        }
        if spectator["status"] == "finished" {
            reasons.push(spectator["last_round"]["reason"].clone());
            break;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let view = app.view(&id, Some(&players[turn].token)).await;
        app.play(&id, &players[turn].token, &view["legal_moves"][0])
            .await;
    }
    assert_eq!(
        reasons,
        [json!("domino"), json!("blocked")],
        "the audit's case"
    );
    assert_eq!(
        dealt[1],
        [vec!["1-4", "2-5"], vec!["1-1", "2-2"]],
        "round 2 as the audit saw it dealt"
    );
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(res.status().as_u16(), 200);
    let export: Value = res.json().await.unwrap();
    let deals = export["deals"].as_array().unwrap();
    assert_eq!(deals.len(), dealt.len());
    for (n, (deal, hands)) in deals.iter().zip(&dealt).enumerate() {
        for (seat, hand) in hands.iter().enumerate() {
            assert_eq!(
                &sorted(&deal["hands"][seat]),
                hand,
                "round {}, seat {seat}: {export}",
                n + 1
            );
        }
    }
}

/// The deal of the `muggins_claims` scenario: 4-4 leads, then 4-1 goes on its right.
fn lead_double_deal() -> Value {
    let hands = [
        ["4-4", "1-6", "2-6", "3-5", "0-2", "1-1", "0-0"],
        ["1-4", "3-4", "0-4", "2-3", "1-2", "0-3", "3-3"],
    ];
    let boneyard: Vec<String> = (0..=6)
        .flat_map(|hi| (0..=hi).map(move |lo| format!("{lo}-{hi}")))
        .filter(|t| !hands.iter().flatten().any(|h| h == t))
        .collect();
    json!({"hands": hands, "boneyard": boneyard})
}

/// Under `lead_double_count: one` (muggins) the lead double's uncovered side counts one
/// half once the other side is covered, so it is not shown `double`; under `both`
/// (all fives) it counts, and shows, both halves. The ends add up to the count.
async fn an_uncovered_lead_side_shows_double_only_where_it_counts_both_halves(app: TestApp) {
    for (preset, claim, left_double, count) in
        [("muggins", Some(5), false, 5), ("all_fives", None, true, 9)]
    {
        let (id, players) = app
            .start_game(json!({"preset": preset, "deal": lead_double_deal()}))
            .await;
        app.play(
            &id,
            &players[0].token,
            &json!({"type": "play", "tile": "4-4"}),
        )
        .await;
        let mut play = json!({"type": "play", "tile": "1-4", "end": "right"});
        if let Some(c) = claim {
            play["claim"] = json!(c);
        }
        let view = app.play(&id, &players[1].token, &play).await;
        let layout = &view["round"]["layout"];
        assert_eq!(
            layout["ends"],
            json!([{"end": "left", "value": 4, "double": left_double},
                   {"end": "right", "value": 1, "double": false}]),
            "{preset}: {layout}"
        );
        assert_eq!(layout["count"], count, "{preset}: {layout}");
    }
}
