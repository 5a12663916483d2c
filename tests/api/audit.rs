//! The corrections of the outside rules audit (issue 10) as a client sees them: an open
//! end says whether it counts both halves.

use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_stores};

on_both_stores!(
    an_uncovered_lead_side_shows_double_only_where_it_counts_both_halves,
);

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
