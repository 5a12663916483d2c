//! Hostile input found by schemathesis and the fuzzer, pinned so it stays fixed: each
//! answer is a 2xx or a documented 4xx problem, never a panic or a 5xx.

use crate::helpers::{spawn_app, spawn_app_with_redis};

/// `(page - 1) * per_page` overflowed (a panic in debug builds, a wrapped offset in
/// release); on Redis an offset past `i64::MAX` was refused by Redis and read as an outage.
#[tokio::test]
async fn a_page_far_past_the_end_is_an_empty_page() {
    for app in [spawn_app().await, spawn_app_with_redis().await] {
        for page in [
            "18446744073709551615",
            "184467440737095516",
            "92233720368547759",
        ] {
            let res = app
                .get(&format!("/v1/games?page={page}&per_page=100"))
                .await;
            assert_eq!(res.status().as_u16(), 200, "page {page}");
            let body: serde_json::Value = res.json().await.unwrap();
            assert_eq!(body["games"], serde_json::json!([]), "page {page}");
        }
    }
}
