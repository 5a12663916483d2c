//! No answer shows a tile in another seat's hand while its round is in play: views, move
//! answers (with their events) and logs, for every seat and the spectator.

use serde_json::{Value, json};

use crate::helpers::{Player, TestApp, on_both_stores, tile_texts};

on_both_stores!(
    no_answer_to_a_seat_or_a_spectator_shows_a_hidden_tile_during_a_whole_match,
    another_seats_draw_shows_without_its_tile,
    a_spectator_sees_no_hand_and_no_legal_moves,
);

/// The parts of an answer that belong to the round in play: `last_round` and everything
/// up to the last `round_ended` event reveal hands by the rules, so they are left out.
fn current_round_part(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(obj) = answer.as_object_mut() {
        obj.remove("last_round");
    }
    // A move answer's events.
    if let Some(events) = answer.get_mut("events").and_then(Value::as_array_mut)
        && let Some(end) = events.iter().rposition(|e| e["type"] == "round_ended")
    {
        events.drain(..=end);
    }
    // A log: its entries after the last round's end.
    if let Some(moves) = answer.get("moves").and_then(Value::as_array).cloned() {
        let ended = moves.iter().rposition(|m| {
            m["events"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["type"] == "round_ended")
        });
        if let Some(i) = ended {
            let mut kept: Vec<Value> = moves[i + 1..].to_vec();
            let mut last = moves[i].clone();
            let events = last["events"].as_array_mut().unwrap();
            let end = events
                .iter()
                .rposition(|e| e["type"] == "round_ended")
                .unwrap();
            events.drain(..=end);
            kept.insert(0, json!({"events": events}));
            answer["moves"] = Value::Array(kept);
            answer["start"] = json!([]);
        }
    }
    answer
}

/// Fails if `answer` (its part about the round in play) holds any of `hidden`.
fn assert_hides(answer: &Value, hidden: &[String], whose: &str) {
    let text = current_round_part(answer).to_string();
    for tile in hidden {
        assert!(
            !text.contains(tile.as_str()),
            "{whose} sees {tile} of another hand: {text}"
        );
    }
}

/// Every hand as its seat sees it, and every seat's view.
async fn all_hands(app: &TestApp, id: &str, players: &[Player]) -> (Vec<Vec<Value>>, Vec<Value>) {
    let mut hands = Vec::new();
    let mut views = Vec::new();
    for p in players {
        let view = app.view(id, Some(&p.token)).await;
        hands.push(view["hand"].as_array().unwrap().clone());
        views.push(view);
    }
    (hands, views)
}

fn others(hands: &[Vec<Value>], seat: usize) -> Vec<String> {
    let tiles: Vec<Value> = hands
        .iter()
        .enumerate()
        .filter(|&(s, _)| s != seat)
        .flat_map(|(_, h)| h.iter().cloned())
        .collect();
    tile_texts(&tiles)
}

async fn no_answer_to_a_seat_or_a_spectator_shows_a_hidden_tile_during_a_whole_match(app: TestApp) {
    let (id, players) = app
        .start_game(
            json!({"preset": "draw", "seats": 3, "rules": {"target": 60},
                           "seed": "redaction"}),
        )
        .await;
    let mut rng: usize = 7;
    let mut rounds_seen = 1;
    let mut draws_seen = 0;
    loop {
        let (hands, views) = all_hands(&app, &id, &players).await;
        let all = others(&hands, usize::MAX);
        // The spectator: no hand, no tile of any hand.
        let spectator = app.view(&id, None).await;
        assert_eq!(spectator["hand"], Value::Null);
        assert_hides(&spectator, &all, "the spectator's view");
        assert_hides(&app.log(&id, None).await, &all, "the spectator's log");
        for (s, p) in players.iter().enumerate() {
            let hidden = others(&hands, s);
            assert_hides(&views[s], &hidden, &format!("seat {s}'s view"));
            let log = app.log(&id, Some(&p.token)).await;
            assert_hides(&log, &hidden, &format!("seat {s}'s log"));
        }
        if spectator["status"] != "playing" {
            break;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let legal = views[turn]["legal_moves"].as_array().unwrap();
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mv = &legal[(rng >> 33) % legal.len()];
        draws_seen += usize::from(mv["type"] == "draw");
        let answer = app.play(&id, &players[turn].token, mv).await;
        // The answer is checked against the hands after the move (nobody moved since).
        let (hands, _) = all_hands(&app, &id, &players).await;
        assert_hides(
            &answer,
            &others(&hands, turn),
            &format!("seat {turn}'s move answer"),
        );
        rounds_seen = rounds_seen.max(answer["round"]["number"].as_u64().unwrap());
    }
    assert!(rounds_seen >= 2, "the match crossed a round's end");
    assert!(draws_seen > 0, "somebody drew");
}

/// Seat 0 holds every double and leads the 6-6; seat 1 holds no six, so it draws the 1-4
/// (no six either) and then the 0-6, which it plays.
fn forced_draw_deal() -> Value {
    json!({
        "hands": [
            ["6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0"],
            ["0-1", "0-2", "0-3", "0-4", "0-5", "1-2", "1-3"]
        ],
        "boneyard": ["1-4", "0-6", "1-5", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5",
                     "3-6", "4-5", "4-6", "5-6"]
    })
}

async fn another_seats_draw_shows_without_its_tile(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "draw", "deal": forced_draw_deal()}))
        .await;
    let (zero, one) = (&players[0], &players[1]);
    let view = app.view(&id, Some(&zero.token)).await;
    assert_eq!(
        view["legal_moves"],
        json!([{"type": "play", "tile": "6-6", "points": 0}])
    );
    app.play(&id, &zero.token, &json!({"type": "play", "tile": "6-6"}))
        .await;
    let view = app.view(&id, Some(&one.token)).await;
    let legal = view["legal_moves"].as_array().unwrap();
    assert_eq!(legal.len(), 1, "{view}");
    assert_eq!(legal[0]["type"], "draw");

    // The drawer sees its tile, in the answer and in its log.
    let answer = app.play(&id, &one.token, &json!({"type": "draw"})).await;
    assert_eq!(
        answer["events"],
        json!([{"type": "drew", "seat": 1, "tile": "1-4"}])
    );
    assert!(answer["hand"].as_array().unwrap().contains(&json!("1-4")));
    let answer = app.play(&id, &one.token, &json!({"type": "draw"})).await;
    assert_eq!(
        answer["events"],
        json!([{"type": "drew", "seat": 1, "tile": "0-6"}])
    );
    let own_log = app.log(&id, Some(&one.token)).await;
    assert_eq!(
        own_log["moves"][1]["events"],
        json!([{"type": "drew", "seat": 1, "tile": "1-4"}])
    );

    // Seat 0 and a spectator see two draws, no tile.
    for token in [Some(zero.token.as_str()), None] {
        let log = app.log(&id, token).await;
        let moves = log["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 3);
        for (entry, index) in moves[1..].iter().zip([2, 3]) {
            assert_eq!(
                *entry,
                json!({"index": index, "seat": 1, "move": {"type": "draw"},
                       "events": [{"type": "drew", "seat": 1}]})
            );
        }
        let view = app.view(&id, token).await;
        assert_eq!(view["seats"][1]["hand_count"], 9);
        assert_eq!(view["round"]["boneyard_count"], 12);
        let text = format!("{log}{view}");
        for tile in ["1-4", "4-1", "0-6", "6-0"] {
            assert!(!text.contains(&format!("\"{tile}\"")), "{tile} in {text}");
        }
    }

    // Played, the 0-6 is public; the 1-4 stays hidden.
    let answer = app
        .play(
            &id,
            &one.token,
            &json!({"type": "play", "tile": "0-6", "end": "right"}),
        )
        .await;
    assert_eq!(answer["events"][0]["type"], "played");
    let view = app.view(&id, Some(&zero.token)).await;
    assert_eq!(view["round"]["layout"]["arms"]["right"], json!(["6-0"]));
    let text = view.to_string();
    assert!(text.contains("\"6-0\""), "{text}");
    assert!(
        !text.contains("\"1-4\"") && !text.contains("\"4-1\""),
        "{text}"
    );
}

async fn a_spectator_sees_no_hand_and_no_legal_moves(app: TestApp) {
    let (id, players) = app
        .start_game(json!({"preset": "muggins", "seed": "spectator"}))
        .await;
    app.play_moves(&id, &players, 5, 6).await;
    let view = app.view(&id, None).await;
    assert_eq!(view["status"], "playing");
    assert_eq!(view["you"], Value::Null);
    assert_eq!(view["hand"], Value::Null);
    assert_eq!(view["your_turn"], false);
    assert_eq!(view["legal_moves"], json!([]));
    for seat in view["seats"].as_array().unwrap() {
        assert!(seat["hand_count"].as_u64().unwrap() > 0);
    }
}
