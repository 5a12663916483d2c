//! Rate limits per seat token and per client address: 429 `rate_limited` with
//! `Retry-After`, and nobody else pays for one client's burst.

use std::num::NonZeroU32;

use domino_server::settings::{RateLimit, Settings};

use crate::helpers::{TestApp, assert_problem, spawn_app_with, test_settings};

fn limit(per_second: u32, burst: u32) -> Option<RateLimit> {
    Some(RateLimit {
        per_second: NonZeroU32::new(per_second).unwrap(),
        burst: NonZeroU32::new(burst).unwrap(),
    })
}

/// A started 2-seat game: its id and the two seats' tokens.
async fn started_game(app: &TestApp) -> (String, [String; 2]) {
    let res = app
        .client
        .post(app.url("/v1/games"))
        .json(&serde_json::json!({"preset": "classic", "seed": "rate limits"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201);
    let created: serde_json::Value = res.json().await.unwrap();
    let id = created["game_id"].as_str().unwrap().to_owned();
    let mut tokens = Vec::new();
    for name in ["ann", "bob"] {
        let res = app
            .client
            .post(app.url(&format!("/v1/games/{id}/seats")))
            .json(&serde_json::json!({ "name": name }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 201);
        let seat: serde_json::Value = res.json().await.unwrap();
        tokens.push(seat["token"].as_str().unwrap().to_owned());
    }
    (id, [tokens[0].clone(), tokens[1].clone()])
}

async fn view(app: &TestApp, id: &str, token: &str) -> reqwest::Response {
    app.client
        .get(app.url(&format!("/v1/games/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

fn retry_after(res: &reqwest::Response) -> u64 {
    res.headers()
        .get("retry-after")
        .expect("a Retry-After header")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in whole seconds")
}

#[tokio::test]
async fn a_burst_over_the_per_token_limit_is_refused_and_other_tokens_are_not() {
    // 5 at once, then one a second.
    let app = spawn_app_with(Settings {
        rate_limit_per_token: limit(1, 5),
        ..test_settings()
    })
    .await;
    let (id, [ann, bob]) = started_game(&app).await;

    for i in 0..5 {
        assert_eq!(
            view(&app, &id, &ann).await.status().as_u16(),
            200,
            "request {i}"
        );
    }
    // The sixth is refused, unless this machine took a whole second over the five.
    let mut refused = view(&app, &id, &ann).await;
    for _ in 0..5 {
        if refused.status().as_u16() != 200 {
            break;
        }
        refused = view(&app, &id, &ann).await;
    }
    let wait = retry_after(&refused);
    assert!((1..=2).contains(&wait), "Retry-After {wait}");
    let problem = assert_problem(refused, 429, "rate_limited").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("retry"),
        "{problem}"
    );

    // A move is refused too, before it is looked at: the game does not change.
    let res = app
        .client
        .post(app.url(&format!("/v1/games/{id}/moves")))
        .bearer_auth(&ann)
        .json(&serde_json::json!({"type": "pass"}))
        .send()
        .await
        .unwrap();
    assert_problem(res, 429, "rate_limited").await;

    // The other seat, and a spectator from the same address, are served.
    let res = view(&app, &id, &bob).await;
    assert_eq!(res.status().as_u16(), 200);
    let seen: serde_json::Value = res.json().await.unwrap();
    assert_eq!(seen["version"], 3, "nothing was played: {seen}");
    let res = app.get(&format!("/v1/games/{id}")).await;
    assert_eq!(res.status().as_u16(), 200);
}

#[tokio::test]
async fn a_burst_over_the_per_address_limit_is_refused_but_health_checks_are_not() {
    let app = spawn_app_with(Settings {
        rate_limit_per_ip: limit(1, 3),
        ..test_settings()
    })
    .await;
    for i in 0..3 {
        assert_eq!(
            app.get("/v1/presets").await.status().as_u16(),
            200,
            "request {i}"
        );
    }
    let refused = app.get("/v1/presets").await;
    assert!(retry_after(&refused) >= 1);
    assert_problem(refused, 429, "rate_limited").await;
    // Every request of the address counts, token or not, whatever the path.
    let refused = app.get("/openapi.json").await;
    assert_problem(refused, 429, "rate_limited").await;
    for path in ["/healthz", "/readyz", "/metrics"] {
        assert_eq!(app.get(path).await.status().as_u16(), 200, "{path}");
    }
}

#[tokio::test]
async fn the_default_limits_let_a_game_be_played_briskly() {
    let app = spawn_app_with(Settings {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        ..Settings::default()
    })
    .await;
    let (id, [ann, _]) = started_game(&app).await;
    for _ in 0..150 {
        assert_eq!(view(&app, &id, &ann).await.status().as_u16(), 200);
    }
}
