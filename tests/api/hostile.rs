//! Hostile input found by schemathesis and the fuzzer, pinned so it stays fixed: each
//! answer is a 2xx or a documented 4xx problem, never a panic or a 5xx.

use crate::helpers::{spawn_app, spawn_app_with_redis};

/// `(page - 1) * per_page` overflowed (a panic in debug builds, a wrapped offset in
/// release); on Redis an offset past `i64::MAX` was refused by Redis and read as an outage.
/// Now a page whose position no list can reach is a 400 naming `page`, never a 5xx (a page
/// merely past the end is an empty page: see `lobby.rs`).
#[tokio::test]
async fn a_page_past_any_possible_list_is_a_bad_request_not_a_crash() {
    for app in [spawn_app().await, spawn_app_with_redis().await] {
        for page in [
            "18446744073709551615",
            "184467440737095516",
            "92233720368547759",
        ] {
            let res = app
                .get(&format!("/v1/games?page={page}&per_page=100"))
                .await;
            assert_eq!(res.status().as_u16(), 400, "page {page}");
            let body: serde_json::Value = res.json().await.unwrap();
            assert_eq!(body["code"], "bad_request", "page {page}");
        }
    }
}
