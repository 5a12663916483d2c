//! The corrections of the outside rules audit (issue 10) as a client sees them: the export
//! of a finished game gives every round the deal its seats were dealt, and an open end says
//! whether it counts both halves.

use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_stores, sorted};

on_both_stores!(
    the_export_gives_every_round_the_deal_its_seats_were_dealt,
    an_uncovered_lead_side_shows_double_only_where_it_counts_both_halves,
);

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
