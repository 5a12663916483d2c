//! Caps on what one address or one server may hold (docs/operating.md, "Operating it in public"):
//! games waiting for players per client address (`MAX_WAITING_PER_IP`, counted in the
//! store, so across every server on one Redis), games in play per client address, tables
//! of bots alone included (`MAX_GAMES_PER_IP`, counted likewise), games in the memory store
//! (`MEMORY_MAX_GAMES`), and what a lobby page costs on Redis.

use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{
    TestApp, assert_problem, cluster_nodes, spawn_app_with, test_settings, unique_prefix,
};
use crate::proxy::{Proxy, redis_url};

#[derive(Clone, Copy, Debug)]
enum Store {
    Memory,
    Redis,
    Cluster,
}

/// `settings` on `store`, with a key prefix of its own on Redis.
fn on(store: Store, settings: Settings) -> Settings {
    match store {
        Store::Memory => settings,
        Store::Redis => Settings {
            redis_url: Some(redis_url()),
            redis_key_prefix: unique_prefix(),
            ..settings
        },
        Store::Cluster => Settings {
            redis_cluster_nodes: cluster_nodes(),
            redis_key_prefix: unique_prefix(),
            ..settings
        },
    }
}

/// Creates a game for the client at `address` (as the trusted proxy in front says).
async fn create(app: &TestApp, address: &str, body: Value) -> reqwest::Response {
    app.client
        .post(app.url("/v1/games"))
        .header("X-Forwarded-For", address)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn created_id(res: reqwest::Response) -> String {
    assert_eq!(res.status().as_u16(), 201);
    let body: Value = res.json().await.unwrap();
    body["game_id"].as_str().unwrap().to_owned()
}

async fn refused_as_too_many_waiting(res: reqwest::Response) {
    assert!(res.headers().contains_key("retry-after"));
    // A code of its own: the client's answer is to wait for a game to fill, not to slow down.
    let problem = assert_problem(res, 429, "too_many_games").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MAX_WAITING_PER_IP"), "{detail}");
}

fn capped(store: Store, max: usize) -> Settings {
    on(
        store,
        Settings {
            max_waiting_per_ip: Some(max),
            proxy_hops: 1,
            ..test_settings()
        },
    )
}

/// Two games waiting from one address, and the third is refused; a game of bots (full at
/// once) does not count, another address has its own count, and a game that fills frees
/// its place.
async fn an_address_may_keep_only_so_many_games_waiting(store: Store) {
    let app = spawn_app_with(capped(store, 2)).await;
    let (alice, bob) = ("192.0.2.1", "192.0.2.2");
    let first = created_id(create(&app, alice, json!({"preset": "classic"})).await).await;
    created_id(create(&app, alice, json!({"preset": "classic"})).await).await;
    refused_as_too_many_waiting(create(&app, alice, json!({"preset": "classic"})).await).await;

    let bots = json!({"preset": "classic", "bots": [
        {"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]});
    created_id(create(&app, alice, bots).await).await;
    created_id(create(&app, bob, json!({"preset": "classic"})).await).await;

    for name in ["p1", "p2"] {
        let res = app
            .post_json(&format!("/v1/games/{first}/seats"), &json!({"name": name}))
            .await;
        assert_eq!(res.status().as_u16(), 201);
    }
    created_id(create(&app, alice, json!({"preset": "classic"})).await).await;
    refused_as_too_many_waiting(create(&app, alice, json!({"preset": "classic"})).await).await;
}

#[tokio::test]
async fn memory_an_address_may_keep_only_so_many_games_waiting() {
    an_address_may_keep_only_so_many_games_waiting(Store::Memory).await;
}

#[tokio::test]
async fn redis_an_address_may_keep_only_so_many_games_waiting() {
    an_address_may_keep_only_so_many_games_waiting(Store::Redis).await;
}

#[tokio::test]
async fn cluster_an_address_may_keep_only_so_many_games_waiting() {
    an_address_may_keep_only_so_many_games_waiting(Store::Cluster).await;
}

/// The count lives in Redis: a second server on the same Redis sees the first's games.
#[tokio::test]
async fn the_cap_on_waiting_games_holds_across_servers() {
    let settings = capped(Store::Redis, 1);
    let one = spawn_app_with(settings.clone()).await;
    let two = spawn_app_with(settings).await;
    created_id(create(&one, "192.0.2.9", json!({"preset": "classic"})).await).await;
    refused_as_too_many_waiting(create(&two, "192.0.2.9", json!({"preset": "classic"})).await)
        .await;
}

/// A waiting game that expires frees its place (the store's idle ttl, 1 s here).
async fn a_waiting_game_that_expires_frees_its_place(store: Store) {
    let app = spawn_app_with(Settings {
        game_idle_ttl: Duration::from_secs(1),
        ..capped(store, 1)
    })
    .await;
    created_id(create(&app, "192.0.2.3", json!({"preset": "classic"})).await).await;
    refused_as_too_many_waiting(create(&app, "192.0.2.3", json!({"preset": "classic"})).await)
        .await;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let res = create(&app, "192.0.2.3", json!({"preset": "classic"})).await;
        match res.status().as_u16() {
            201 => break,
            429 if Instant::now() < deadline => {}
            other => panic!("{store:?}: still {other} long after the game expired"),
        }
    }
}

#[tokio::test]
async fn memory_a_waiting_game_that_expires_frees_its_place() {
    a_waiting_game_that_expires_frees_its_place(Store::Memory).await;
}

#[tokio::test]
async fn redis_a_waiting_game_that_expires_frees_its_place() {
    a_waiting_game_that_expires_frees_its_place(Store::Redis).await;
}

async fn refused_as_too_many_in_play(res: reqwest::Response) {
    assert!(res.headers().contains_key("retry-after"));
    let problem = assert_problem(res, 429, "too_many_games").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MAX_GAMES_PER_IP"), "{detail}");
}

fn capped_in_play(store: Store, max: usize) -> Settings {
    on(
        store,
        Settings {
            max_games_per_ip: Some(max),
            proxy_hops: 1,
            ..test_settings()
        },
    )
}

/// Four expert bots to a high target: still playing long after the test is done with it.
fn long_table() -> Value {
    json!({"preset": "draw", "seats": 4, "rules": {"target": 1000}, "bots": [
        {"seat": 0, "level": "expert"}, {"seat": 1, "level": "expert"},
        {"seat": 2, "level": "expert"}, {"seat": 3, "level": "expert"}]})
}

/// Tables of bots alone count among an address's games in play, with games waiting for
/// players; another address has its own count.
async fn an_address_may_have_only_so_many_games_in_play_tables_of_bots_included(store: Store) {
    let app = spawn_app_with(capped_in_play(store, 2)).await;
    let (alice, bob) = ("192.0.2.21", "192.0.2.22");
    created_id(create(&app, alice, long_table()).await).await;
    created_id(create(&app, alice, json!({"preset": "classic"})).await).await;
    refused_as_too_many_in_play(create(&app, alice, long_table()).await).await;
    refused_as_too_many_in_play(create(&app, alice, json!({"preset": "classic"})).await).await;
    created_id(create(&app, bob, long_table()).await).await;
}

#[tokio::test]
async fn memory_an_address_may_have_only_so_many_games_in_play_tables_of_bots_included() {
    an_address_may_have_only_so_many_games_in_play_tables_of_bots_included(Store::Memory).await;
}

#[tokio::test]
async fn redis_an_address_may_have_only_so_many_games_in_play_tables_of_bots_included() {
    an_address_may_have_only_so_many_games_in_play_tables_of_bots_included(Store::Redis).await;
}

#[tokio::test]
async fn cluster_an_address_may_have_only_so_many_games_in_play_tables_of_bots_included() {
    an_address_may_have_only_so_many_games_in_play_tables_of_bots_included(Store::Cluster).await;
}

/// A game in play frees its place when its match is over.
async fn a_finished_game_frees_its_place_among_the_games_in_play(store: Store) {
    let app = spawn_app_with(capped_in_play(store, 1)).await;
    let short = json!({"preset": "classic", "rules": {"target": null, "rounds": 1},
        "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]});
    let id = created_id(create(&app, "192.0.2.23", short.clone()).await).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while app.view(&id, None).await["status"] != "finished" {
        assert!(
            Instant::now() < deadline,
            "{store:?}: the table did not finish"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    created_id(create(&app, "192.0.2.23", short).await).await;
}

#[tokio::test]
async fn memory_a_finished_game_frees_its_place_among_the_games_in_play() {
    a_finished_game_frees_its_place_among_the_games_in_play(Store::Memory).await;
}

#[tokio::test]
async fn redis_a_finished_game_frees_its_place_among_the_games_in_play() {
    a_finished_game_frees_its_place_among_the_games_in_play(Store::Redis).await;
}

/// One-round tables of bots alone, which finish at once.
fn finishing_table(seed: usize) -> Value {
    json!({"preset": "classic", "seed": format!("kept-{seed}"),
        "rules": {"target": null, "rounds": 1},
        "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]})
}

async fn finished(app: &TestApp, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while app.view(id, None).await["status"] != "finished" {
        assert!(Instant::now() < deadline, "the table did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Finished games count against their maker's address while they are kept
/// (`MAX_KEPT_GAMES_PER_IP`), so one address making tables that finish at once cannot
/// fill the store: it is refused with when its first game expires, and a bystander from
/// another address still creates.
async fn finished_games_count_against_their_makers_address_while_kept(store: Store) {
    let app = spawn_app_with(on(
        store,
        Settings {
            max_kept_games_per_ip: Some(3),
            proxy_hops: 1,
            ..test_settings()
        },
    ))
    .await;
    let maker = "192.0.2.31";
    for seed in 0..3 {
        let id = created_id(create(&app, maker, finishing_table(seed)).await).await;
        finished(&app, &id).await;
    }
    let refused = create(&app, maker, finishing_table(3)).await;
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 0 && retry <= 86_400, "{retry}");
    let problem = assert_problem(refused, 429, "too_many_games").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MAX_KEPT_GAMES_PER_IP"), "{detail}");
    assert!(detail.contains("expires in"), "{detail}");
    created_id(create(&app, "192.0.2.32", finishing_table(4)).await).await;
}

#[tokio::test]
async fn memory_finished_games_count_against_their_makers_address_while_kept() {
    finished_games_count_against_their_makers_address_while_kept(Store::Memory).await;
}

#[tokio::test]
async fn redis_finished_games_count_against_their_makers_address_while_kept() {
    finished_games_count_against_their_makers_address_while_kept(Store::Redis).await;
}

#[tokio::test]
async fn cluster_finished_games_count_against_their_makers_address_while_kept() {
    finished_games_count_against_their_makers_address_while_kept(Store::Cluster).await;
}

/// A store full of finished games says so truly: they hold their room until they expire,
/// and the first expires when its `Retry-After` says.
#[tokio::test]
async fn a_memory_store_full_of_finished_games_says_when_the_first_expires() {
    let app = spawn_app_with(Settings {
        memory_max_games: Some(2),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    })
    .await;
    for seed in 0..2 {
        let res = app.post_json("/v1/games", &finishing_table(seed)).await;
        let id = created_id(res).await;
        finished(&app, &id).await;
    }
    let refused = app.post_json("/v1/games", &finishing_table(2)).await;
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 500 && retry <= 600, "{retry}");
    let problem = assert_problem(refused, 503, "store_unavailable").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MEMORY_MAX_GAMES"), "{detail}");
    assert!(
        detail.contains(&format!("expires in {retry} s")),
        "{detail}"
    );
    assert!(!detail.contains("finished or expired"), "{detail}");
}

/// The count of games in play lives in Redis: a second server sees the first's.
#[tokio::test]
async fn the_cap_on_games_in_play_holds_across_servers() {
    let settings = capped_in_play(Store::Redis, 1);
    let one = spawn_app_with(settings.clone()).await;
    let two = spawn_app_with(settings).await;
    created_id(create(&one, "192.0.2.24", long_table()).await).await;
    refused_as_too_many_in_play(create(&two, "192.0.2.24", long_table()).await).await;
}

/// The memory store holds `MEMORY_MAX_GAMES` games; one more is a 503 that says why.
#[tokio::test]
async fn a_full_memory_store_refuses_new_games_with_a_503() {
    let app = spawn_app_with(Settings {
        memory_max_games: Some(2),
        ..test_settings()
    })
    .await;
    for _ in 0..2 {
        let res = app
            .post_json("/v1/games", &json!({"preset": "classic"}))
            .await;
        assert_eq!(res.status().as_u16(), 201);
    }
    let res = app
        .post_json("/v1/games", &json!({"preset": "classic"}))
        .await;
    assert!(res.headers().contains_key("retry-after"));
    let problem = assert_problem(res, 503, "store_unavailable").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MEMORY_MAX_GAMES"), "{detail}");
}

/// The memory store holds `MEMORY_MAX_BYTES` of games (records, events, idempotency
/// records); a create past it is a 503 that says why, while the games it holds play on.
#[tokio::test]
async fn a_memory_store_full_of_bytes_refuses_new_games_and_plays_on_those_it_holds() {
    let app = spawn_app_with(Settings {
        memory_max_games: None,
        memory_max_bytes: Some(4000),
        ..test_settings()
    })
    .await;
    let against_greedy = json!({"preset": "classic", "bots": [{"seat": 1, "level": "greedy"}]});
    let mut made = Vec::new();
    let refused = loop {
        let res = app.post_json("/v1/games", &against_greedy).await;
        if res.status().as_u16() != 201 {
            break res;
        }
        let created: serde_json::Value = res.json().await.unwrap();
        made.push(created["game_id"].as_str().unwrap().to_owned());
        assert!(
            made.len() < 1000,
            "4000 bytes hold a few games, not a thousand"
        );
    };
    assert!(!made.is_empty());
    assert!(refused.headers().contains_key("retry-after"));
    let problem = assert_problem(refused, 503, "store_unavailable").await;
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("MEMORY_MAX_BYTES"), "{detail}");
    // A game it holds is joined and played, though every write makes it larger.
    let seat = app.take_seat(&made[0], "ann").await;
    let view = app.view(&made[0], Some(&seat.token)).await;
    app.play(&made[0], &seat.token, &view["legal_moves"][0])
        .await;
}

/// A page of the lobby is one exchange with Redis, at its start as deep in it: the page's
/// games come from the lobby's own slot, not one read per game.
#[tokio::test]
async fn a_lobby_page_costs_one_redis_call_at_any_depth() {
    let (proxy, url) = Proxy::to_redis();
    let app = spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: unique_prefix(),
        // The clocks' sweep reads Redis every 250 ms by default: one falling inside a
        // page's few milliseconds would be counted as the page's.
        clock_sweep_every: Duration::from_secs(3600),
        ..test_settings()
    })
    .await;
    for _ in 0..25 {
        let res = app
            .post_json("/v1/games", &json!({"preset": "classic"}))
            .await;
        assert_eq!(res.status().as_u16(), 201);
    }
    // Once, uncounted: the first page on a Redis that has never run the lobby's script
    // pays one more exchange (EVALSHA answers NOSCRIPT, then EVAL).
    let first = app.get("/v1/games?page=2&per_page=10").await;
    assert_eq!(first.status().as_u16(), 200);
    for page in [1, 3] {
        let before = proxy.sent();
        let res = app.get(&format!("/v1/games?page={page}&per_page=10")).await;
        let sent = proxy.sent() - before;
        assert_eq!(res.status().as_u16(), 200);
        let list: Value = res.json().await.unwrap();
        let games = list["games"].as_array().unwrap().len();
        assert_eq!(games, if page == 1 { 10 } else { 5 });
        assert!(sent <= 1, "page {page}: {sent} exchanges with Redis");
    }
}
