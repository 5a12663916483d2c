//! A match's history: the log a page at a time (`?after=&limit=`, `next`), and the export
//! sent as it is made. A long match's history never comes back in one answer.

use serde_json::{Value, json};

use crate::helpers::{TestApp, on_both_stores};

on_both_stores!(
    log_pages_chain_to_the_whole_log_as_the_export_lists_it,
    a_long_match_s_log_comes_a_bounded_page_at_a_time_and_its_export_is_streamed,
);

/// Four random bots playing `rounds` rounds of `draw` by themselves.
fn bots_alone(rounds: u32) -> Value {
    json!({"preset": "draw", "seats": 4, "rules": {"target": null, "rounds": rounds},
           "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"},
                    {"seat": 2, "level": "random"}, {"seat": 3, "level": "random"}]})
}

/// `(seat, move)` of every entry of a log page or of an export.
fn moves_of(list: &Value) -> Vec<(Value, Value)> {
    list["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["seat"].clone(), m["move"].clone()))
        .collect()
}

/// Every page of the log after `after`, `limit` moves each, followed by `next`.
async fn pages(app: &TestApp, id: &str, limit: u64) -> Vec<Value> {
    let mut pages = vec![app.log_page(id, None, 0, limit).await];
    while let Some(after) = pages.last().unwrap()["next"].as_u64() {
        pages.push(app.log_page(id, None, after, limit).await);
        assert!(pages.len() < 10_000, "the pages end");
    }
    pages
}

async fn log_pages_chain_to_the_whole_log_as_the_export_lists_it(app: TestApp) {
    let (id, _) = app.create_game(bots_alone(3)).await;
    app.wait_until_finished(&id, None).await;
    let export: Value = app
        .get(&format!("/v1/games/{id}/export"))
        .await
        .json()
        .await
        .unwrap();
    let all = moves_of(&export);
    assert!(all.len() > 20, "{export}");
    assert_eq!(export["deals"].as_array().unwrap().len(), 3, "three rounds");

    let pages = pages(&app, &id, 7).await;
    let mut chained = Vec::new();
    for (n, page) in pages.iter().enumerate() {
        let moves = page["moves"].as_array().unwrap();
        assert!(moves.len() <= 7, "page {n} holds {} moves", moves.len());
        assert_eq!(
            page["start"].as_array().unwrap().is_empty(),
            n > 0,
            "the first deal's events are on the first page only: {page}"
        );
        for (i, entry) in moves.iter().enumerate() {
            assert_eq!(
                entry["index"],
                chained.len() + i + 1,
                "indexes follow: {page}"
            );
        }
        if let Some(next) = page["next"].as_u64() {
            assert_eq!(
                next,
                moves.last().unwrap()["index"],
                "next is the last index"
            );
        }
        chained.extend(moves_of(page));
    }
    assert!(pages.len() > 3);
    assert_eq!(pages.last().unwrap()["next"], Value::Null);
    assert_eq!(chained, all, "the pages hold every move once, in order");

    // Without parameters: the first page, from the start, of up to 1000 moves.
    let whole = app.log(&id, None).await;
    let first = app
        .get_as(&format!("/v1/games/{id}/log"), None)
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(first["next"], Value::Null, "one page holds it all");
    assert_eq!(first, whole);
    assert_eq!(first["start"], pages[0]["start"]);
    // Asking after the last move: an empty last page (a game in play grows there).
    let end = app.log_page(&id, None, all.len() as u64, 5).await;
    assert_eq!(
        (end["moves"].as_array().unwrap().len(), &end["next"]),
        (0, &Value::Null)
    );
}

async fn a_long_match_s_log_comes_a_bounded_page_at_a_time_and_its_export_is_streamed(
    app: TestApp,
) {
    let (id, _) = app.create_game(bots_alone(100)).await;
    app.wait_until_finished(&id, None).await;

    let res = app.get(&format!("/v1/games/{id}/log")).await;
    assert_eq!(res.status().as_u16(), 200);
    let body = res.bytes().await.unwrap();
    let first: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        first["moves"].as_array().unwrap().len(),
        1000,
        "a full page"
    );
    assert_eq!(first["next"], 1000);
    // A page of 1000 moves, events and all (about 160 bytes a move), whatever the match.
    assert!(body.len() < 600_000, "{} bytes", body.len());

    let pages = pages(&app, &id, 1000).await;
    let total: usize = pages
        .iter()
        .map(|p| p["moves"].as_array().unwrap().len())
        .sum();
    assert!(total > 2000, "a long match: {total} moves");

    // The export is one document, sent as it is made (no length known in advance).
    let res = app.get(&format!("/v1/games/{id}/export")).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(res.content_length(), None, "streamed: {:?}", res.headers());
    let export: Value = res.json().await.unwrap();
    assert_eq!(export["deals"].as_array().unwrap().len(), 100);
    let chained: Vec<_> = pages.iter().flat_map(moves_of).collect();
    assert_eq!(moves_of(&export), chained);
    assert!(export["result"].is_object(), "{}", export["result"]);
}
