//! Rate limits per seat token and per client address: 429 `rate_limited` with
//! `Retry-After`, and nobody else pays for one client's burst; every answer says where
//! the client stands (`RateLimit-Policy`, `RateLimit`).

use std::collections::BTreeMap;

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
    let detail = problem["detail"].as_str().unwrap();
    // It names the limit reached and its figures, so a client knows which to respect.
    assert!(
        detail.contains("per-token limit (1/s a token, 5 at once)") && detail.contains("retry"),
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
    let problem = assert_problem(refused, 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("per-ip limit (1/s a client address, 3 at once)"),
        "{problem}"
    );
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

/// A `RateLimit-Policy` or `RateLimit` field: each policy's name and its parameters.
fn field(res: &reqwest::Response, name: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    let value = res
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("a {name} field: {:?}", res.headers()))
        .to_str()
        .unwrap();
    value
        .split(',')
        .map(|item| {
            let mut parts = item.trim().split(';');
            let policy = parts.next().unwrap();
            let policy = policy
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .unwrap_or_else(|| panic!("a quoted policy name: {value}"));
            let params = parts
                .map(|p| {
                    let (key, number) = p.split_once('=').expect("key=value");
                    (key.to_owned(), number.parse().expect("an integer"))
                })
                .collect();
            (policy.to_owned(), params)
        })
        .collect()
}

fn params(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|&(k, v)| (k.to_owned(), v)).collect()
}

#[tokio::test]
async fn every_limited_answer_names_its_policies_and_what_is_left_of_each() {
    // 5 at once, one a second, per token; far more per address, refilled slowly enough
    // (one a second) that the next request always sees fewer left, however slow the box.
    let app = spawn_app_with(Settings {
        rate_limit_per_ip: limit(1, 1000),
        rate_limit_per_token: limit(1, 5),
        ..test_settings()
    })
    .await;
    let (id, [ann, _]) = started_game(&app).await;

    let first = view(&app, &id, &ann).await;
    assert_eq!(first.status().as_u16(), 200);
    let policy = field(&first, "ratelimit-policy");
    assert_eq!(policy["per-ip"], params(&[("q", 1000), ("w", 1000)]));
    assert_eq!(policy["per-token"], params(&[("q", 5), ("w", 5)]));
    let before = field(&first, "ratelimit");
    assert_eq!(before.keys().collect::<Vec<_>>(), ["per-ip", "per-token"]);

    let second = view(&app, &id, &ann).await;
    let after = field(&second, "ratelimit");
    for policy in ["per-ip", "per-token"] {
        assert!(
            after[policy]["r"] < before[policy]["r"],
            "{policy}: {before:?} then {after:?}"
        );
        // Back to the whole quota within the policy's window.
        assert!((1..=policy_window(&second, policy)).contains(&after[policy]["t"]));
    }
    assert!(after["per-token"]["r"] <= 3, "{after:?}");

    // A spectator is counted by address only.
    let res = app.get(&format!("/v1/games/{id}")).await;
    assert_eq!(
        field(&res, "ratelimit").keys().collect::<Vec<_>>(),
        ["per-ip"]
    );
    // What is never limited says nothing.
    let res = app.get("/healthz").await;
    assert!(!res.headers().contains_key("ratelimit"));
    assert!(!res.headers().contains_key("ratelimit-policy"));
}

fn policy_window(res: &reqwest::Response, policy: &str) -> u64 {
    field(res, "ratelimit-policy")[policy]["w"]
}

#[tokio::test]
async fn a_429_says_nothing_is_left_until_retry_after() {
    let app = spawn_app_with(Settings {
        rate_limit_per_token: limit(1, 2),
        ..test_settings()
    })
    .await;
    let (id, [ann, _]) = started_game(&app).await;
    // The third is refused, unless this machine took a whole second over the two.
    let mut refused = view(&app, &id, &ann).await;
    for _ in 0..5 {
        if refused.status().as_u16() == 429 {
            break;
        }
        refused = view(&app, &id, &ann).await;
    }
    assert_eq!(refused.status().as_u16(), 429);
    assert_eq!(
        field(&refused, "ratelimit-policy")["per-token"],
        params(&[("q", 2), ("w", 2)])
    );
    assert_eq!(
        field(&refused, "ratelimit")["per-token"],
        params(&[("r", 0), ("t", retry_after(&refused))])
    );
    assert_problem(refused, 429, "rate_limited").await;
}
