//! Caps on open challenges: twenty made by one player, and `MAX_CHALLENGES_TO_PLAYER` (20)
//! sent to one player, each checked and counted in one step in the store, so that two
//! servers cannot both take the last place; and the lists of open challenges, paged, every
//! one of them reachable.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{
    TestApp, assert_problem, on_both_stores, spawn_app_with_cluster_prefix,
    spawn_app_with_redis_prefix, unique_prefix,
};

on_both_stores!(
    a_player_is_sent_at_most_twenty_open_challenges_and_lists_every_one_by_page,
    a_challenge_answered_or_canceled_frees_its_place_in_both_caps,
);

async fn player(app: &TestApp, name: &str) -> String {
    app.new_player(name).await.1
}

async fn make(app: &TestApp, key: &str, to: &str) -> reqwest::Response {
    let body = json!({"opponents": [to], "preset": "block"});
    app.post_as("/v1/challenges", key, Some(&body)).await
}

/// A challenge made, answered 201: its id.
async fn made(app: &TestApp, key: &str, to: &str) -> String {
    let res = make(app, key, to).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let made: Value = res.json().await.unwrap();
    made["id"].as_str().unwrap().to_owned()
}

/// One page of the key's player's open challenges in `direction`: their ids.
async fn page(
    app: &TestApp,
    key: &str,
    direction: &str,
    page: usize,
    per_page: usize,
) -> Vec<String> {
    let path = format!("/v1/challenges?direction={direction}&page={page}&per_page={per_page}");
    let res = app.get_as(&path, Some(key)).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let list: Value = res.json().await.unwrap();
    assert_eq!(
        (list["page"].as_u64(), list["per_page"].as_u64()),
        (Some(page as u64), Some(per_page as u64))
    );
    list["challenges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Every open challenge of the key's player in `direction`, page after page of 7.
async fn every_page(app: &TestApp, key: &str, direction: &str) -> Vec<String> {
    let mut all = Vec::new();
    for n in 1.. {
        let ids = page(app, key, direction, n, 7).await;
        let last = ids.len() < 7;
        all.extend(ids);
        if last {
            return all;
        }
    }
    unreachable!()
}

async fn a_player_is_sent_at_most_twenty_open_challenges_and_lists_every_one_by_page(app: TestApp) {
    let bob = player(&app, "bob").await;
    let mut challengers = Vec::new();
    for i in 0..21 {
        challengers.push(player(&app, &format!("c{i}")).await);
    }
    let mut sent = Vec::new();
    for key in &challengers[..20] {
        sent.push(made(&app, key, "bob").await);
    }
    let refused = assert_problem(
        make(&app, &challengers[20], "bob").await,
        429,
        "rate_limited",
    )
    .await;
    let detail = refused["detail"].as_str().unwrap();
    assert!(
        detail.contains("bob has 20 open challenges")
            && detail.contains("MAX_CHALLENGES_TO_PLAYER"),
        "{detail}"
    );
    // Every one listed, newest first, 7 a page.
    assert_eq!(page(&app, &bob, "in", 1, 7).await.len(), 7);
    let mut listed = every_page(&app, &bob, "in").await;
    assert_eq!(listed.len(), 20);
    let (mut expected, mut got) = (sent.clone(), std::mem::take(&mut listed));
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert!(page(&app, &bob, "in", 4, 7).await.is_empty());
    // Without paging, the first 100.
    let res = app.get_as("/v1/challenges", Some(&bob)).await;
    let all: Value = res.json().await.unwrap();
    let created: Vec<u64> = all["challenges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["created_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(created.len(), 20);
    assert!(
        created.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {created:?}"
    );
    assert_eq!(all["per_page"], 100);
    for bad in ["page=0", "per_page=0", "per_page=101"] {
        let res = app
            .get_as(&format!("/v1/challenges?{bad}"), Some(&bob))
            .await;
        assert_problem(res, 400, "bad_request").await;
    }
}

async fn a_challenge_answered_or_canceled_frees_its_place_in_both_caps(app: TestApp) {
    let bob = player(&app, "bob").await;
    let ann = player(&app, "ann").await;
    let mut others = Vec::new();
    for i in 0..19 {
        others.push(player(&app, &format!("c{i}")).await);
    }
    let mut sent = Vec::new();
    for key in &others {
        sent.push(made(&app, key, "bob").await);
    }
    let anns = made(&app, &ann, "bob").await;
    assert_problem(make(&app, &ann, "bob").await, 429, "rate_limited").await;
    // Bob declines one, Ann cancels hers: two places.
    let res = app
        .post_as(&format!("/v1/challenges/{}/decline", sent[0]), &bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let res = app
        .client
        .delete(app.url(&format!("/v1/challenges/{anns}")))
        .bearer_auth(&ann)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(every_page(&app, &bob, "in").await.len(), 18);
    assert!(every_page(&app, &ann, "out").await.is_empty());
    made(&app, &ann, "bob").await;
    made(&app, &others[0], "bob").await;
    assert_problem(make(&app, &ann, "bob").await, 429, "rate_limited").await;
    // An accepted one frees its place too.
    let res = app
        .post_as(&format!("/v1/challenges/{}/accept", sent[1]), &bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    made(&app, &ann, "bob").await;
}

/// Two servers on one store, each sent half of sixty challenges at once: one challenger's
/// twenty to several players, and twenty to one player from several challengers, are
/// all that are made.
async fn sixty_at_once_through_two_servers(a: TestApp, b: TestApp) {
    let ann = player(&a, "ann").await;
    let bob = player(&a, "bob").await;
    let mut victims = Vec::new();
    for i in 0..6 {
        player(&a, &format!("v{i}")).await;
        victims.push(format!("v{i}"));
    }
    let mut challengers = Vec::new();
    for i in 0..3 {
        challengers.push(player(&a, &format!("c{i}")).await);
    }
    // One challenger, sixty challenges to six players (ten each: no one's cap is reached).
    let out = join_all((0..60).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        make(app, &ann, &victims[i % 6])
    }))
    .await;
    let statuses: Vec<u16> = out.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|&&s| s == 201).count(),
        20,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|&s| s == 201 || s == 429),
        "{statuses:?}"
    );
    assert_eq!(every_page(&b, &ann, "out").await.len(), 20);
    // Three challengers, twenty each to one player.
    let into = join_all((0..60).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        make(app, &challengers[i % 3], "bob")
    }))
    .await;
    let statuses: Vec<u16> = into.iter().map(|r| r.status().as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|&&s| s == 201).count(),
        20,
        "{statuses:?}"
    );
    assert_eq!(every_page(&a, &bob, "in").await.len(), 20);
}

#[tokio::test]
async fn redis_sixty_challenges_at_once_through_two_servers_make_twenty_per_challenger_and_per_player()
 {
    let prefix = unique_prefix();
    let a = spawn_app_with_redis_prefix(&prefix).await;
    let b = spawn_app_with_redis_prefix(&prefix).await;
    sixty_at_once_through_two_servers(a, b).await;
}

#[tokio::test]
async fn cluster_sixty_challenges_at_once_through_two_servers_make_twenty_per_challenger_and_per_player()
 {
    let prefix = unique_prefix();
    let a = spawn_app_with_cluster_prefix(&prefix).await;
    let b = spawn_app_with_cluster_prefix(&prefix).await;
    sixty_at_once_through_two_servers(a, b).await;
}

/// The time Redis keeps challenge `id` for (ms), under `prefix`.
async fn kept_ms(prefix: &str, id: &str) -> i64 {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let mut redis = ::redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    ::redis::cmd("PTTL")
        .arg(format!("{prefix}challenge:{{{id}}}"))
        .query_async(&mut redis)
        .await
        .unwrap()
}

/// Making and canceling challenges in a loop keeps each record an hour, not a day; an
/// accepted challenge's record is kept a day, as before.
#[tokio::test]
async fn redis_a_challenge_declined_or_canceled_is_kept_an_hour_and_an_accepted_one_a_day() {
    let prefix = unique_prefix();
    let app = spawn_app_with_redis_prefix(&prefix).await;
    let ann = player(&app, "ann").await;
    let bob = player(&app, "bob").await;
    let (hour, day) = (3_600_000, 24 * 3_600_000);
    let canceled = made(&app, &ann, "bob").await;
    assert!(
        kept_ms(&prefix, &canceled).await > hour,
        "open: kept as made"
    );
    let res = app
        .client
        .delete(app.url(&format!("/v1/challenges/{canceled}")))
        .bearer_auth(&ann)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let declined = made(&app, &ann, "bob").await;
    let res = app
        .post_as(&format!("/v1/challenges/{declined}/decline"), &bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    for id in [&canceled, &declined] {
        let kept = kept_ms(&prefix, id).await;
        assert!(kept > 0 && kept <= hour, "{kept} ms");
    }
    // Still readable meanwhile.
    let res = app
        .get_as(&format!("/v1/challenges/{canceled}"), Some(&ann))
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let accepted = made(&app, &ann, "bob").await;
    let res = app
        .post_as(&format!("/v1/challenges/{accepted}/accept"), &bob, None)
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let kept = kept_ms(&prefix, &accepted).await;
    assert!(kept > day - 60_000, "{kept} ms");
}
