//! Players: creating one, profiles by id and by name, the key's own player, a new key,
//! names and their refusals, the cap per address, and a store that holds no key.

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{
    TestApp, assert_problem, on_every_store, spawn_app_with, test_settings, unique_prefix,
};

on_every_store!(
    creating_a_player_answers_201_with_its_profile_and_a_key_shown_once,
    a_player_is_found_by_id_and_by_name_ignoring_case,
    a_name_is_unique_ignoring_case_and_a_refused_name_changes_nothing,
    names_out_of_range_or_with_other_characters_are_bad_requests_that_create_nothing,
    reserved_names_are_refused_and_the_levels_are_served_as_bot_players,
    the_key_opens_its_own_player_and_nothing_else_does,
    a_new_key_stops_the_old_one_at_once,
    an_unknown_player_is_not_found,
    a_profile_lists_the_leagues_its_player_is_in_until_it_leaves,
    a_levels_profile_says_its_games_are_not_counted_and_a_players_counts_its_own,
);

/// `POST /v1/players`, answered 201; returns the answer's body.
async fn create_player(app: &TestApp, body: Value) -> Value {
    let res = app.post_json("/v1/players", &body).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    let created: Value = res.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/players/{}", created["player"]["id"].as_str().unwrap())
    );
    created
}

async fn key_of(app: &TestApp, name: &str) -> String {
    let created = create_player(app, json!({ "name": name })).await;
    created["key"].as_str().unwrap().to_owned()
}

async fn me(app: &TestApp, key: &str) -> reqwest::Response {
    app.get_as("/v1/players/me", Some(key)).await
}

async fn rotate(app: &TestApp, key: &str) -> reqwest::Response {
    app.client
        .post(app.url("/v1/players/me/key"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

async fn creating_a_player_answers_201_with_its_profile_and_a_key_shown_once(app: TestApp) {
    let created = create_player(&app, json!({"name": "Alice_1", "bot": true})).await;
    let player = &created["player"];
    assert_eq!(player["name"], "Alice_1");
    assert_eq!(player["bot"], true);
    assert_eq!(player["games"], 0);
    assert_eq!(player["ratings"], json!({}));
    assert!(player["created_ms"].as_u64().unwrap() > 0);
    let key = created["key"].as_str().unwrap();
    // A recognisable prefix, the id, and 256 bits of secret.
    let id = player["id"].as_str().unwrap();
    let secret = key
        .strip_prefix(&format!("dpk_{id}_"))
        .unwrap_or_else(|| panic!("{key}"));
    assert_eq!(secret.len(), 64, "{key}");

    let profile: Value = app
        .get(&format!("/v1/players/{id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(&profile, player);
    assert!(!profile.to_string().contains(secret));
    // Bot accounts default to false.
    let other = create_player(&app, json!({"name": "bob"})).await;
    assert_eq!(other["player"]["bot"], false);
    assert_ne!(other["key"], created["key"]);
}

async fn a_player_is_found_by_id_and_by_name_ignoring_case(app: TestApp) {
    let created = create_player(&app, json!({"name": "Carol-9"})).await;
    let id = created["player"]["id"].as_str().unwrap();
    for who in [id, "Carol-9", "carol-9", "CAROL-9"] {
        let res = app.get(&format!("/v1/players/{who}")).await;
        assert_eq!(res.status().as_u16(), 200, "{who}");
        let profile: Value = res.json().await.unwrap();
        assert_eq!(profile["id"], id, "{who}");
        assert_eq!(profile["name"], "Carol-9", "as it was given");
    }
}

async fn a_name_is_unique_ignoring_case_and_a_refused_name_changes_nothing(app: TestApp) {
    let first = create_player(&app, json!({"name": "dave"})).await;
    for name in ["dave", "DAVE", "Dave"] {
        let res = app.post_json("/v1/players", &json!({ "name": name })).await;
        assert_problem(res, 409, "name_taken").await;
    }
    let profile: Value = app.get("/v1/players/dave").await.json().await.unwrap();
    assert_eq!(profile, first["player"]);
    let key = first["key"].as_str().unwrap();
    assert_eq!(me(&app, key).await.status().as_u16(), 200);
}

async fn names_out_of_range_or_with_other_characters_are_bad_requests_that_create_nothing(
    app: TestApp,
) {
    let too_long = "x".repeat(25);
    for name in [
        "e",
        "",
        too_long.as_str(),
        "with space",
        "émile",
        "a.b",
        "tab\t",
    ] {
        let res = app.post_json("/v1/players", &json!({ "name": name })).await;
        assert_problem(res, 400, "bad_request").await;
        if name.len() >= 2 && name.len() <= 24 {
            let res = app.get(&format!("/v1/players/{}", urlencoded(name))).await;
            assert_problem(res, 404, "not_found").await;
        }
    }
    // The bounds themselves are names.
    create_player(&app, json!({ "name": "ee" })).await;
    create_player(&app, json!({ "name": "y".repeat(24) })).await;
    // An unknown field or a wrong type is refused like any body's.
    let res = app
        .post_json("/v1/players", &json!({"name": "frank", "admin": true}))
        .await;
    assert_problem(res, 400, "bad_request").await;
    assert_problem(app.get("/v1/players/frank").await, 404, "not_found").await;
}

fn urlencoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn reserved_names_are_refused_and_the_levels_are_served_as_bot_players(app: TestApp) {
    for name in [
        "random",
        "Greedy",
        "EXPERT",
        "Master",
        "me",
        "expert-bot",
        "Greedy_Bot",
        "masterbot",
    ] {
        let res = app.post_json("/v1/players", &json!({ "name": name })).await;
        let problem = assert_problem(res, 409, "name_taken").await;
        assert!(problem["detail"].as_str().unwrap().contains("reserved"));
    }
    for level in ["random", "greedy", "expert", "master"] {
        let profile: Value = app
            .get(&format!("/v1/players/{level}"))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(profile["name"], level);
        assert_eq!(profile["id"], level);
        assert_eq!(profile["bot"], true);
    }
}

/// A built-in level's games are not indexed (it sits at any table that asks for it): its
/// profile says `games: null`, never the 0 it once said after a game, and its list of
/// games is empty; the player beside it at the table counts the game.
async fn a_levels_profile_says_its_games_are_not_counted_and_a_players_counts_its_own(
    app: TestApp,
) {
    let (_, key) = app.new_player("tess").await;
    let (game, _) = app
        .create_game(json!({"preset": "block", "seed": "a level seated",
            "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let res = app
        .post_as(&format!("/v1/games/{game}/seats"), &key, Some(&json!({})))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let level: Value = app.get("/v1/players/greedy").await.json().await.unwrap();
    assert_eq!(level["games"], Value::Null, "{level}");
    let listed: Value = app
        .get("/v1/players/greedy/games")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["games"], json!([]), "{listed}");
    let player: Value = app.get("/v1/players/tess").await.json().await.unwrap();
    assert_eq!(player["games"], 1, "{player}");
}

async fn the_key_opens_its_own_player_and_nothing_else_does(app: TestApp) {
    let created = create_player(&app, json!({"name": "grace"})).await;
    let key = created["key"].as_str().unwrap();
    let res = me(&app, key).await;
    assert_eq!(res.status().as_u16(), 200);
    let profile: Value = res.json().await.unwrap();
    assert_eq!(profile, created["player"]);

    let other = key_of(&app, "heidi").await;
    let mine: Value = me(&app, &other).await.json().await.unwrap();
    assert_eq!(mine["name"], "heidi");

    // No key, a seat-token-like text, a key with another secret, and one naming no
    // player: each a 401.
    let id = created["player"]["id"].as_str().unwrap();
    let forged = format!("dpk_{id}_{}", "0".repeat(64));
    let nobody = format!("dpk_{}_{}", "1".repeat(32), "0".repeat(64));
    assert_problem(app.get("/v1/players/me").await, 401, "unauthorized").await;
    for bad in ["abc", forged.as_str(), nobody.as_str()] {
        assert_problem(me(&app, bad).await, 401, "unauthorized").await;
        assert_problem(rotate(&app, bad).await, 401, "unauthorized").await;
    }
    // The refusals changed nothing.
    assert_eq!(me(&app, key).await.status().as_u16(), 200);
}

async fn a_new_key_stops_the_old_one_at_once(app: TestApp) {
    let old = key_of(&app, "ivan").await;
    let res = rotate(&app, &old).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let rotated: Value = res.json().await.unwrap();
    let new = rotated["key"].as_str().unwrap();
    assert_ne!(new, old);
    assert_eq!(rotated["player"]["name"], "ivan");
    assert_problem(me(&app, &old).await, 401, "unauthorized").await;
    assert_problem(rotate(&app, &old).await, 401, "unauthorized").await;
    let profile: Value = me(&app, new).await.json().await.unwrap();
    assert_eq!(profile["id"], rotated["player"]["id"]);
}

async fn an_unknown_player_is_not_found(app: TestApp) {
    for who in ["nobody", "0123456789abcdef0123456789abcdef", "x"] {
        assert_problem(
            app.get(&format!("/v1/players/{who}")).await,
            404,
            "not_found",
        )
        .await;
    }
}

/// The third player from one address within the hour is refused, another address has its
/// own count, and a refused name does not spend one.
#[tokio::test]
async fn creating_players_is_capped_per_address() {
    let app = spawn_app_with(Settings {
        max_players_per_ip: Some(2),
        proxy_hops: 1,
        ..test_settings()
    })
    .await;
    let create = |address: &'static str, name: &'static str| {
        let app = &app;
        async move {
            app.client
                .post(app.url("/v1/players"))
                .header("X-Forwarded-For", address)
                .json(&json!({ "name": name }))
                .send()
                .await
                .unwrap()
        }
    };
    let (alice, bob) = ("192.0.2.1", "192.0.2.2");
    assert_eq!(create(alice, "p1").await.status().as_u16(), 201);
    assert_problem(create(alice, "p1").await, 409, "name_taken").await;
    assert_eq!(create(alice, "p2").await.status().as_u16(), 201);
    let res = create(alice, "p3").await;
    assert!(res.headers().contains_key("retry-after"));
    let problem = assert_problem(res, 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_PLAYERS_PER_IP")
    );
    assert_problem(app.get("/v1/players/p3").await, 404, "not_found").await;
    assert_eq!(create(bob, "p3").await.status().as_u16(), 201);
}

/// At the cap, `Retry-After` is the time until the oldest creation of the hour leaves it
/// (rounded up), not a flat minute: a client waiting that long is served.
async fn the_players_cap_says_to_retry_when_the_oldest_creation_is_an_hour_old(settings: Settings) {
    let app = spawn_app_with(Settings {
        max_players_per_ip: Some(1),
        proxy_hops: 1,
        ..settings
    })
    .await;
    let create = |name: &'static str| {
        app.client
            .post(app.url("/v1/players"))
            .header("X-Forwarded-For", "192.0.2.7")
            .json(&json!({ "name": name }))
            .send()
    };
    assert_eq!(create("first").await.unwrap().status().as_u16(), 201);
    let res = create("second").await.unwrap();
    let secs: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3540..=3600).contains(&secs), "Retry-After: {secs}");
    assert_problem(res, 429, "rate_limited").await;
}

#[tokio::test]
async fn the_players_cap_retry_after_is_the_time_until_the_window_frees_on_memory() {
    the_players_cap_says_to_retry_when_the_oldest_creation_is_an_hour_old(test_settings()).await;
}

#[tokio::test]
async fn the_players_cap_retry_after_is_the_time_until_the_window_frees_on_redis() {
    the_players_cap_says_to_retry_when_the_oldest_creation_is_an_hour_old(Settings {
        redis_url: Some(crate::proxy::redis_url()),
        redis_key_prefix: unique_prefix(),
        ..test_settings()
    })
    .await;
}

/// A player never seated in a game is removed with its name after
/// `PLAYER_UNPLAYED_TTL_SECS` (its key opens nothing, its name is free again); one seated
/// before then lasts.
async fn a_player_that_never_played_expires_and_one_that_played_lasts(settings: Settings) {
    let app = spawn_app_with(Settings {
        player_unplayed_ttl: Some(std::time::Duration::from_secs(3)),
        ..settings
    })
    .await;
    let (_, idle_key) = app.new_player("idler").await;
    let (_, key) = app.new_player("player").await;
    let (game, _) = app
        .create_game(json!({"preset": "block", "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let res = app
        .post_as(&format!("/v1/games/{game}/seats"), &key, Some(&json!({})))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    // A real deadline: a loaded machine may take longer to let the ttl pass, never less.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while app.get("/v1/players/idler").await.status().as_u16() == 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle player is still there"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_problem(app.get("/v1/players/idler").await, 404, "not_found").await;
    let me = app.get_as("/v1/players/me", Some(&idle_key)).await;
    assert_problem(me, 401, "unauthorized").await;
    assert_eq!(app.get("/v1/players/player").await.status().as_u16(), 200);
    assert_eq!(
        app.get_as("/v1/players/me", Some(&key))
            .await
            .status()
            .as_u16(),
        200
    );
    // The name is free again; the player's is not.
    app.new_player("idler").await;
    let res = app
        .post_json("/v1/players", &json!({"name": "player"}))
        .await;
    assert_problem(res, 409, "name_taken").await;
}

#[tokio::test]
async fn a_player_that_never_played_expires_and_one_that_played_lasts_on_memory() {
    a_player_that_never_played_expires_and_one_that_played_lasts(test_settings()).await;
}

#[tokio::test]
async fn a_player_that_never_played_expires_and_one_that_played_lasts_on_redis() {
    a_player_that_never_played_expires_and_one_that_played_lasts(Settings {
        redis_url: Some(crate::proxy::redis_url()),
        redis_key_prefix: unique_prefix(),
        ..test_settings()
    })
    .await;
}

/// Everything the store holds after players were created and a key rotated: no key in the
/// clear, nor its secret, in any key name or value.
#[tokio::test]
async fn redis_holds_no_player_key_in_the_clear() {
    let prefix = unique_prefix();
    let app = crate::helpers::spawn_app_with_redis_prefix(&prefix).await;
    let mut keys = Vec::new();
    for name in ["kim", "lee", "max"] {
        keys.push(key_of(&app, name).await);
    }
    let rotated: Value = rotate(&app, &keys[0]).await.json().await.unwrap();
    keys.push(rotated["key"].as_str().unwrap().to_owned());

    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let mut redis = ::redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let names: Vec<String> = ::redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut redis)
        .await
        .unwrap();
    assert!(names.iter().any(|n| n.contains("player:")), "{names:?}");
    let mut held = Vec::new();
    for name in &names {
        held.push(name.as_bytes().to_vec());
        let kind: String = ::redis::cmd("TYPE")
            .arg(name)
            .query_async(&mut redis)
            .await
            .unwrap();
        let values: Vec<Vec<u8>> = match kind.as_str() {
            "string" => vec![
                ::redis::cmd("GET")
                    .arg(name)
                    .query_async(&mut redis)
                    .await
                    .unwrap(),
            ],
            "hash" => ::redis::cmd("HGETALL")
                .arg(name)
                .query_async(&mut redis)
                .await
                .unwrap(),
            "zset" => ::redis::cmd("ZRANGE")
                .arg(name)
                .arg(0)
                .arg(-1)
                .query_async(&mut redis)
                .await
                .unwrap(),
            other => panic!("{name} is a {other}, which this test does not read"),
        };
        held.extend(values);
    }
    for key in &keys {
        let secret = key.rsplit('_').next().unwrap();
        for value in &held {
            let text = String::from_utf8_lossy(value);
            assert!(
                !text.contains(secret),
                "a key's secret is stored in the clear"
            );
            let raw = hex::decode(secret).unwrap();
            assert!(
                !value.windows(raw.len()).any(|w| w == raw),
                "a key's secret is stored as bytes"
            );
        }
    }
}

/// A player's stream takes a stream slot of its address like any other stream: one more
/// than `MAX_STREAMS_PER_IP` is refused; and creations are counted in the metrics.
#[tokio::test]
async fn a_players_stream_counts_against_the_stream_cap_per_address() {
    let app = spawn_app_with(Settings {
        max_streams_per_ip: 1,
        ..test_settings()
    })
    .await;
    let key = key_of(&app, "nia").await;
    let open = || {
        app.client
            .get(app.url("/v1/players/me/events"))
            .bearer_auth(&key)
            .send()
    };
    let first = open().await.unwrap();
    assert_eq!(first.status().as_u16(), 200);
    let problem = assert_problem(open().await.unwrap(), 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_STREAMS_PER_IP")
    );
    drop(first);

    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("domino_players_created_total 1"),
        "{metrics}"
    );
}

async fn a_profile_lists_the_leagues_its_player_is_in_until_it_leaves(app: TestApp) {
    let ann = key_of(&app, "ann").await;
    let bob = key_of(&app, "bob").await;
    let mut ids = Vec::new();
    for (name, creator) in [("Zeta fives", &bob), ("Alpha blocks", &ann)] {
        let body = json!({"name": name, "preset": "block", "levels": ["greedy"]});
        let res = app.post_as("/v1/leagues", creator, Some(&body)).await;
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        let made: Value = res.json().await.unwrap();
        ids.push(made["id"].as_str().unwrap().to_owned());
    }
    let (zeta, alpha) = (&ids[0], &ids[1]);
    let leagues = |profile: &Value| profile["leagues"].clone();
    let profile: Value = app.get("/v1/players/ann").await.json().await.unwrap();
    assert_eq!(
        leagues(&profile),
        json!([]),
        "making a league enters nobody"
    );
    for id in [zeta, alpha] {
        let res = app
            .post_as(&format!("/v1/leagues/{id}/entrants"), &ann, None)
            .await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    }
    // By name, on the public profile and on the key's own alike.
    let both = json!([{"id": alpha, "name": "Alpha blocks"}, {"id": zeta, "name": "Zeta fives"}]);
    let profile: Value = app.get("/v1/players/ann").await.json().await.unwrap();
    assert_eq!(leagues(&profile), both);
    let own: Value = me(&app, &ann).await.json().await.unwrap();
    assert_eq!(leagues(&own), both);
    let res = app
        .client
        .delete(app.url(&format!("/v1/leagues/{zeta}/entrants/me")))
        .bearer_auth(&ann)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let profile: Value = app.get("/v1/players/ann").await.json().await.unwrap();
    assert_eq!(
        leagues(&profile),
        json!([{"id": alpha, "name": "Alpha blocks"}]),
        "a league left is not listed"
    );
    // A level entered for good in both lists none: it is each league's creator's.
    let level: Value = app.get("/v1/players/greedy").await.json().await.unwrap();
    assert_eq!(leagues(&level), json!([]));
}
