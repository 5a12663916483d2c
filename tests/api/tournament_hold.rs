//! Tournaments under hostile load: a game the admission refuses waits (the round says
//! why) and is played, never scored unplayed; a start on a full store waits instead of
//! failing; a flood of tournaments due at once cannot starve one due before them; the
//! followers of a tournament share one feed whose events say only what changed.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::helpers::{
    EventStream, TestApp, assert_problem, spawn_app_with, test_settings, unique_prefix,
};

/// The same test on memory and on Redis, each server built from `settings`.
macro_rules! on_both_stores_with {
    ($settings:expr, $($name:ident),+ $(,)?) => {
        mod memory {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(crate::helpers::spawn_app_with($settings).await).await
                }
            )+
        }
        mod redis {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::on_redis($settings).await).await
                }
            )+
        }
    };
}

mod capped {
    use super::*;
    on_both_stores_with!(
        Settings {
            max_games_per_ip: Some(2),
            ..test_settings()
        },
        a_round_whose_games_are_refused_waits_saying_why_and_plays_them_later,
    );
}

mod flooded {
    use super::*;
    on_both_stores_with!(
        Settings {
            max_tournaments_per_player: None,
            ..test_settings()
        },
        a_flood_of_tournaments_due_at_once_cannot_starve_one_due_before_them,
    );
}

mod made_per_address {
    use super::*;
    on_both_stores_with!(
        Settings {
            max_tournaments_per_ip: Some(2),
            ..test_settings()
        },
        an_address_makes_at_most_its_tournaments_an_hour_whoever_makes_them,
    );
}

mod followed {
    use super::*;
    on_both_stores_with!(
        test_settings(),
        followers_share_one_feed_whose_events_say_only_what_changed,
    );
}

#[tokio::test]
async fn a_start_on_a_store_full_by_bytes_waits_instead_of_failing() {
    // The memory store alone counts bytes (MEMORY_MAX_BYTES).
    let app = spawn_app_with(Settings {
        memory_max_bytes: Some(48 << 10),
        ..test_settings()
    })
    .await;
    let (_, org) = app.new_player("org").await;
    let id = create(&app, &org, round_robin_of_levels("Full")).await;
    // Games waiting for a player until the store holds no more.
    let body =
        json!({"preset": "block", "seed": "full store", "bots": [{"seat": 1, "level": "greedy"}]});
    let mut refused = None;
    for _ in 0..10_000 {
        let res = app.post_json("/v1/games", &body).await;
        if res.status().as_u16() != 201 {
            refused = Some(res);
            break;
        }
    }
    let refused = refused.expect("the store fills");
    assert_eq!(refused.status().as_u16(), 503);
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let t: Value = res.json().await.unwrap();
    assert_eq!(t["status"], "running", "{t}");
    let reason = t["waiting"]["reason"].as_str().expect("the round waits");
    assert!(reason.contains("bytes"), "{reason}");
    // Nothing was scored: the games were never played.
    assert!(
        t["pairings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["result"].is_null()),
        "{t}"
    );
}

/// A server on Redis, with a key prefix of its own, built from `settings`.
async fn on_redis(settings: Settings) -> TestApp {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    spawn_app_with(Settings {
        redis_url: Some(url),
        redis_key_prefix: unique_prefix(),
        game_idle_ttl: Duration::from_secs(600),
        ..settings
    })
    .await
}

/// A round robin of two built-in levels, one round a game, to be started by hand.
fn round_robin_of_levels(name: &str) -> Value {
    json!({"name": name, "preset": "block", "rules": {"target": null, "rounds": 1},
        "format": "round_robin", "levels": ["random", "greedy"]})
}

/// Two players of one address make three tournaments that cancel themselves at once: the
/// third is refused (the first two, canceled, free no place: the cap counts creations).
async fn an_address_makes_at_most_its_tournaments_an_hour_whoever_makes_them(app: TestApp) {
    let (_, ann) = app.new_player("ann").await;
    let (_, bob) = app.new_player("bob").await;
    let body = json!({"name": "flood", "preset": "block", "format": "round_robin",
        "starts_at_ms": 0});
    create(&app, &ann, body.clone()).await;
    create(&app, &bob, body.clone()).await;
    let res = app.post_as("/v1/tournaments", &ann, Some(&body)).await;
    let retry = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse::<u64>()
        .unwrap();
    assert!((3000..=3600).contains(&retry), "{retry}");
    let problem = assert_problem(res, 429, "rate_limited").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_TOURNAMENTS_PER_IP"),
        "{problem}"
    );
}

async fn create(app: &TestApp, key: &str, body: Value) -> String {
    let res = app.post_as("/v1/tournaments", key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let made: Value = res.json().await.unwrap();
    made["id"].as_str().unwrap().to_owned()
}

async fn tournament(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/tournaments/{id}")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// Polls tournament `id` until `done` holds of it, within `within`.
async fn until(app: &TestApp, id: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let t = tournament(app, id).await;
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "not so within {within:?}: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn a_round_whose_games_are_refused_waits_saying_why_and_plays_them_later(app: TestApp) {
    // Two games of this address in play (MAX_GAMES_PER_IP is 2): the tournament's, which
    // count against its creator's address, are refused.
    let body =
        json!({"preset": "block", "seed": "blockers", "bots": [{"seat": 1, "level": "greedy"}]});
    let mut blockers = Vec::new();
    for _ in 0..2 {
        let (game, _) = app.create_game(body.clone()).await;
        let seat = app.take_seat(&game, "blocker").await;
        blockers.push((game, seat));
    }
    let (_, org) = app.new_player("org").await;
    let id = create(&app, &org, round_robin_of_levels("Refused")).await;
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let t = until(&app, &id, Duration::from_secs(10), |t| {
        !t["waiting"].is_null()
    })
    .await;
    let reason = t["waiting"]["reason"].as_str().unwrap();
    assert!(reason.contains("MAX_GAMES_PER_IP"), "{reason}");
    assert!(t["waiting"]["since_ms"].as_u64().unwrap() > 0, "{t}");
    let games: Vec<String> = t["pairings"][0]["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect();
    for game in &games {
        let res = app.get(&format!("/v1/games/{game}")).await;
        assert_eq!(res.status().as_u16(), 404, "refused, so not made: {game}");
    }
    // The blockers end: the round's games are made and played, and the round waits no more.
    for (game, seat) in &blockers {
        let res = app
            .post_move(game, &seat.token, &json!({"type": "resign"}))
            .await;
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    }
    let t = until(&app, &id, Duration::from_secs(60), |t| {
        t["status"] == "finished"
    })
    .await;
    assert!(t["waiting"].is_null(), "{t}");
    for pairing in t["pairings"].as_array().unwrap() {
        assert!(!pairing["result"].is_null(), "{t}");
        for game in pairing["games"].as_array().unwrap() {
            let view = app.view(game.as_str().unwrap(), None).await;
            assert_eq!(view["status"], "finished", "every game was played: {view}");
        }
    }
}

async fn a_flood_of_tournaments_due_at_once_cannot_starve_one_due_before_them(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let mut body = round_robin_of_levels("Due first");
    body["starts_at_ms"] = json!(now_ms() + 500);
    let id = create(&app, &org, body).await;
    // Four flooders make tournaments that start "at 0" with too few players, so each is
    // due at once and cancels itself, until the first one starts (or 20 s pass).
    let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut flood = Vec::new();
    for f in 0..4 {
        let (app, started) = (TestApp::at(app.address.clone()), started.clone());
        flood.push(tokio::spawn(async move {
            let (_, key) = app.new_player(&format!("flood{f}")).await;
            let until = Instant::now() + Duration::from_secs(20);
            let mut made = 0;
            while !started.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < until {
                let body = json!({"name": "flood", "preset": "block", "format": "swiss",
                    "starts_at_ms": 0});
                let res = app.post_as("/v1/tournaments", &key, Some(&body)).await;
                assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
                let t: Value = res.json().await.unwrap();
                // A start in the past is now: it never sorts before one made earlier.
                assert!(
                    t["starts_at_ms"].as_u64() >= t["created_ms"].as_u64(),
                    "{t}"
                );
                made += 1;
            }
            made
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if tournament(&app, &id).await["status"] != "registering" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = tournament(&app, &id).await["status"].clone();
    started.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut made = 0;
    for f in flood {
        made += f.await.unwrap();
    }
    assert_ne!(
        status, "registering",
        "not started while {made} tournaments due at once were made"
    );
}

async fn followers_share_one_feed_whose_events_say_only_what_changed(app: TestApp) {
    let (_, org) = app.new_player("org").await;
    let body = json!({"name": "Followed", "preset": "block",
        "rules": {"target": null, "rounds": 1}, "format": "swiss", "rounds": 3,
        "levels": ["random", "random", "greedy", "greedy", "expert", "random", "greedy"]});
    let id = create(&app, &org, body).await;
    let mut followers = Vec::new();
    for _ in 0..5 {
        let res = app.get(&format!("/v1/tournaments/{id}/events")).await;
        assert_eq!(res.status().as_u16(), 200);
        followers.push(EventStream::of(res));
    }
    let res = app
        .post_as(&format!("/v1/tournaments/{id}/start"), &org, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for stream in &mut followers {
        let mut events = Vec::new();
        while let Some(event) = stream.next(Duration::from_secs(60)).await {
            let done = event.event.as_deref() == Some("tournament_finished");
            events.push(event.data);
            if done {
                break;
            }
        }
        seen.push(events);
    }
    let events = &seen[0];
    assert!(
        seen.iter().all(|e| e == events),
        "every follower reads the same events"
    );
    let (first, last) = (&events[0], events.last().unwrap());
    assert_eq!(first["type"], "standings");
    assert!(first["tournament"].is_object(), "{first}");
    assert_eq!(last["type"], "tournament_finished", "{events:?}");
    // Between, what changed only: no event carries the tournament, and each pairing is
    // told at most twice (when made, when decided; one word may tell both), so what the
    // stream sends grows with the tournament, not with its square.
    let mut t = first["tournament"].clone();
    let mut told: HashMap<String, usize> = HashMap::new();
    for event in &events[1..events.len() - 1] {
        assert!(event["tournament"].is_null(), "{event}");
        for p in event["pairings"].as_array().unwrap() {
            *told.entry(p["games"][0].to_string()).or_default() += 1;
        }
        apply(&mut t, event);
    }
    assert!(told.values().all(|&n| n <= 2), "{told:?}");
    // The changes, applied to the first event, make the table the server ends with.
    let end = tournament(&app, &id).await;
    assert_eq!(last["tournament"], end);
    let lines = |t: &Value| -> Vec<(String, u64, String)> {
        t["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].to_string(),
                    p["rank"].as_u64().unwrap(),
                    p["score"].to_string(),
                )
            })
            .collect()
    };
    assert_eq!(lines(&t), lines(&end));
    assert_eq!(t["pairings"], end["pairings"]);
    // Rendered once for the five: no more events rendered than one follower read.
    let rendered = app.events_rendered("tournament").await;
    assert!(
        rendered <= events.len(),
        "{rendered} events rendered for 5 followers of {} events",
        events.len()
    );
    // A follower that comes now is told the whole tournament, and that it is over.
    let res = app.get(&format!("/v1/tournaments/{id}/events")).await;
    let mut late = EventStream::of(res);
    let event = late.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(event.event.as_deref(), Some("tournament_finished"));
    assert_eq!(event.data["tournament"], end);
}

/// A change event applied to tournament `t`, as a client does (the page's
/// `applyTournamentEvent`).
fn apply(t: &mut Value, event: &Value) {
    t["status"] = event["status"].clone();
    t["round"] = event["round"].clone();
    t["waiting"] = event["waiting"].clone();
    let pairings = t["pairings"].as_array_mut().unwrap();
    for p in event["pairings"].as_array().unwrap() {
        match pairings.iter_mut().find(|q| q["games"][0] == p["games"][0]) {
            Some(q) => *q = p.clone(),
            None => pairings.push(p.clone()),
        }
    }
    let byes = t["byes"].as_array_mut().unwrap();
    byes.extend(event["byes"].as_array().unwrap().iter().cloned());
    let mut players: HashMap<String, Value> = t["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].to_string(), p.clone()))
        .collect();
    for p in event["players"].as_array().unwrap() {
        players.insert(p["id"].to_string(), p.clone());
    }
    let mut players: Vec<Value> = players.into_values().collect();
    let key = |p: &Value| {
        let f = |k: &str| (p[k].as_f64().unwrap() * 4.0) as i64;
        (
            -f("score"),
            -f("buchholz"),
            -f("sonneborn_berger"),
            -p["margin"].as_i64().unwrap(),
            p["entry"].as_u64().unwrap(),
        )
    };
    players.sort_by_key(key);
    for (i, p) in players.iter_mut().enumerate() {
        p["rank"] = json!(i + 1);
    }
    t["players"] = Value::Array(players);
}
