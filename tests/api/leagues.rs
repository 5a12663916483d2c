//! Leagues: entrants paired in duplicate matches whenever they are available (a webhook
//! that is active, a stream that is open), each match counted once into a table that the
//! matches' own games bear out; and the caps and refusals of making and entering one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use domino_server::settings::Settings;
use serde_json::{Value, json};

use crate::child::ChildServer;
use crate::helpers::{
    EventStream, TestApp, assert_problem, spawn_app_with, test_settings, unique_prefix,
};
use crate::proxy::redis_url;
use crate::webhooks::{Answers, hooked, register, spawn_redis_under, start_bot};

/// How long an entrant that stopped answering rests in these tests' leagues.
const REST: Duration = Duration::from_secs(4);

fn league_settings(settings: Settings) -> Settings {
    Settings {
        league_rest: REST,
        ..hooked(settings)
    }
}

async fn spawn_memory() -> TestApp {
    spawn_app_with(league_settings(test_settings())).await
}

async fn spawn_redis() -> TestApp {
    spawn_app_with(league_settings(Settings {
        redis_url: Some(redis_url()),
        redis_key_prefix: unique_prefix(),
        game_idle_ttl: Duration::from_secs(600),
        ..test_settings()
    }))
    .await
}

macro_rules! on_both_stores_hooked {
    ($($name:ident),+ $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::spawn_memory().await).await
                }
            )+
        }
        mod redis {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::spawn_redis().await).await
                }
            )+
        }
    };
}

on_both_stores_hooked!(
    a_webhook_bot_plays_the_levels_and_the_table_agrees_with_the_games,
    a_pulling_bot_is_paired_only_while_its_stream_is_open,
    a_league_refuses_what_it_cannot_hold,
    an_entrant_that_lost_on_time_rests_then_is_paired_again,
    followers_of_a_league_share_one_feed,
);

async fn create_league(app: &TestApp, key: &str, body: Value) -> Value {
    let res = app.post_as("/v1/leagues", key, Some(&body)).await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// Enters the league `id` as the player of `key`.
async fn enter(app: &TestApp, id: &str, key: &str) {
    let res = app
        .post_as(&format!("/v1/leagues/{id}/entrants"), key, None)
        .await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
}

/// `DELETE /v1/leagues/{id}/entrants/me` as the player of `key`.
async fn leave(app: &TestApp, id: &str, key: &str) -> reqwest::Response {
    app.client
        .delete(app.url(&format!("/v1/leagues/{id}/entrants/me")))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

async fn league(app: &TestApp, id: &str) -> Value {
    let res = app.get(&format!("/v1/leagues/{id}")).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    res.json().await.unwrap()
}

/// Polls league `id` until `check` holds, for 90 s at most.
async fn league_until(app: &TestApp, id: &str, check: impl Fn(&Value) -> bool) -> Value {
    league_until_on(app, id, None, check).await
}

/// [`league_until`] on a Redis store under `prefix` (if given): a failure also says when
/// the store has each running match, and each of its games, due.
async fn league_until_on(
    app: &TestApp,
    id: &str,
    prefix: Option<&str>,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let found = league(app, id).await;
        if check(&found) {
            return found;
        }
        if Instant::now() >= deadline {
            let running = running_described(app, &found, prefix).await;
            panic!("never: {found}\nits running matches now:\n{running}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What league `found`'s running matches are doing, for a failure's message: each one's
/// status and due time, and each of its games' status, version, seat to move and due
/// time (the due times from the store's indexes under `prefix`, on Redis).
async fn running_described(app: &TestApp, found: &Value, prefix: Option<&str>) -> String {
    let mut redis = match prefix {
        Some(_) => Some(
            ::redis::Client::open(redis_url())
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap(),
        ),
        None => None,
    };
    let mut due = async |index: &str, member: &str| -> String {
        let (Some(redis), Some(prefix)) = (redis.as_mut(), prefix) else {
            return "(not on Redis)".into();
        };
        let score: Option<u64> = ::redis::cmd("ZSCORE")
            .arg(format!("{prefix}{index}"))
            .arg(member)
            .query_async(redis)
            .await
            .unwrap();
        match score {
            Some(ms) => format!("due at {ms} ms"),
            None => "not due".into(),
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let mut told = format!("(now {now} ms)\n");
    for running in found["running"].as_array().into_iter().flatten() {
        let match_id = running["match_id"].as_str().unwrap_or_default();
        let m: Value = app
            .get(&format!("/v1/matches/{match_id}"))
            .await
            .json()
            .await
            .unwrap_or_default();
        let match_due = due("{challenges}:due", match_id).await;
        told += &format!(
            "match {match_id} ({} against {}): {}, {match_due}\n",
            running["a"], running["b"], m["status"]
        );
        for game in m["games"].as_array().into_iter().flatten() {
            let game_id = game["game_id"].as_str().unwrap_or_default();
            let view: Value = app
                .get(&format!("/v1/games/{game_id}"))
                .await
                .json()
                .await
                .unwrap_or_default();
            let game_due = due("{deadlines}", game_id).await;
            told += &format!(
                "  game {game_id} (seats {}): {}, version {}, seat to move {}, {game_due}\n",
                game["seats"], view["status"], view["version"], view["round"]["turn"]
            );
        }
    }
    told
}

fn row<'a>(league: &'a Value, id: &str) -> &'a Value {
    league["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no entrant {id}: {league}"))
}

/// A webhook bot entered beside two levels plays them, one match at a time, until three
/// are counted; then it leaves. Levels never meet each other; every match counted is
/// distinct, over, and its result and margin are what its games' final scores say; the
/// bot's row is the sum of its matches, and the levels' rows mirror it.
async fn a_webhook_bot_plays_the_levels_and_the_table_agrees_with_the_games(app: TestApp) {
    let (_, owner) = app.new_player("owner").await;
    let made = create_league(
        &app,
        &owner,
        json!({"name": "Fives", "preset": "all_fives", "deals_per_match": 1,
            "max_concurrent": 1, "levels": ["random", "greedy"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(made["entrants"].as_array().unwrap().len(), 2, "{made}");
    let mut events = EventStream::of(app.get(&format!("/v1/leagues/{id}/events")).await);
    let (hooky, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::First);
    register(&app, &key, &url, &bot).await;
    enter(&app, &id, &key).await;
    league_until(&app, &id, |l| l["matches_counted"].as_u64() >= Some(3)).await;
    let res = leave(&app, &id, &key).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    // What it was playing when it left finishes and counts; nothing new starts.
    let table = league_until(&app, &id, |l| l["running"].as_array().unwrap().is_empty()).await;
    let recent = table["recent"].as_array().unwrap();
    assert_eq!(
        recent.len() as u64,
        table["matches_counted"].as_u64().unwrap()
    );
    let mut ids: Vec<&str> = recent
        .iter()
        .map(|m| m["match_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), recent.len(), "a match counted twice: {table}");
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    for counted in recent {
        assert_eq!(counted["a"], hooky, "the bot challenges: {counted}");
        assert!(["random", "greedy"].contains(&counted["b"].as_str().unwrap()));
        let margin = margin_from_games(&app, counted["match_id"].as_str().unwrap(), &hooky).await;
        let result = match margin {
            m if m > 0 => "a",
            m if m < 0 => "b",
            _ => "draw",
        };
        assert_eq!(counted["result"], result, "{counted}");
        // One deal a match: its margin a deal is the whole match's.
        assert_eq!(
            counted["margin"].as_f64().unwrap(),
            margin as f64,
            "{counted}"
        );
        match result {
            "a" => wins += 1,
            "b" => losses += 1,
            _ => draws += 1,
        }
    }
    let me = row(&table, &hooky);
    assert_eq!(
        (&me["wins"], &me["draws"], &me["losses"], &me["matches"]),
        (
            &json!(wins),
            &json!(draws),
            &json!(losses),
            &json!(recent.len())
        ),
        "{table}"
    );
    assert_eq!(me["left"], true);
    assert_eq!(me["available"], false);
    let levels: u64 = ["random", "greedy"]
        .iter()
        .map(|l| row(&table, l)["matches"].as_u64().unwrap())
        .sum();
    assert_eq!(levels, recent.len() as u64, "{table}");
    assert_eq!(me["history"].as_array().unwrap().len(), recent.len());
    // Its stream told it all as it happened: the league first, each match started and
    // counted, and the standings after each count.
    let mut told = Vec::new();
    while let Some(event) = events.next(Duration::from_secs(10)).await {
        let name = event.event.clone().unwrap_or_default();
        if name == "match_finished" {
            let counted = recent
                .iter()
                .find(|m| m["match_id"] == event.data["match_id"]);
            assert_eq!(counted, Some(&event.data), "as the league counted it");
        }
        told.push(name);
        if told.iter().filter(|n| *n == "match_finished").count() == recent.len() {
            break;
        }
    }
    assert_eq!(
        told.first().map(String::as_str),
        Some("standings"),
        "{told:?}"
    );
    let count = |name: &str| told.iter().filter(|n| *n == name).count();
    assert_eq!(count("match_started"), recent.len(), "{told:?}");
    assert_eq!(count("match_finished"), recent.len(), "{told:?}");
    let next = events.next(Duration::from_secs(10)).await;
    assert_eq!(
        next.and_then(|e| e.event).as_deref(),
        Some("standings"),
        "after the last count"
    );
}

/// Match `match_id`'s margin for `player` from its games' final scores: its points less
/// the opponent's, over the match.
async fn margin_from_games(app: &TestApp, match_id: &str, player: &str) -> i64 {
    let found: Value = app
        .get(&format!("/v1/matches/{match_id}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(found["status"], "finished", "{found}");
    let mut margin = 0;
    for game in found["games"].as_array().unwrap() {
        let view = app.view(game["game_id"].as_str().unwrap(), None).await;
        assert_eq!(view["status"], "finished", "{view}");
        let seats = view["seats"].as_array().unwrap();
        let mine = seats
            .iter()
            .position(|s| s["player_id"] == player)
            .unwrap_or_else(|| panic!("{player} not seated: {view}"));
        let scores = view["scores"].as_array().unwrap();
        margin += scores[mine].as_i64().unwrap() - scores[1 - mine].as_i64().unwrap();
    }
    margin
}

/// A player with no webhook is not paired while nothing shows it is there; once its
/// stream is open it is, and its stream tells it of its game.
async fn a_pulling_bot_is_paired_only_while_its_stream_is_open(app: TestApp) {
    let (_, owner) = app.new_player("owner").await;
    let made = create_league(
        &app,
        &owner,
        json!({"name": "Pulled", "preset": "block", "deals_per_match": 1,
            "levels": ["greedy"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let (puller, key) = app.new_player("puller").await;
    enter(&app, &id, &key).await;
    // Driven (its row looked at) and still not paired: nothing shows it is there.
    let looked = league_until(&app, &id, |l| {
        l["entrants"].as_array().unwrap().len() == 2 && row(l, "greedy")["available"] == true
    })
    .await;
    assert_eq!(row(&looked, &puller)["available"], false, "{looked}");
    let mut stream = app.player_stream(&key).await;
    let paired = league_until(&app, &id, |l| !l["running"].as_array().unwrap().is_empty()).await;
    assert_eq!(row(&paired, &puller)["available"], true, "{paired}");
    assert_eq!(paired["running"][0]["a"], puller);
    let mut told = false;
    while let Some(event) = stream.next(Duration::from_secs(10)).await {
        if event.event.as_deref() == Some("game_started") {
            told = true;
            break;
        }
    }
    assert!(told, "the stream never told of the league's game");
}

/// A pulling bot whose stream is open but which never moves loses its games on time (a
/// one-second bank, forfeit): the drive that counts that match marks it unavailable and
/// pairs it with nobody, though the level it played is free; `REST` later it is paired
/// again.
async fn an_entrant_that_lost_on_time_rests_then_is_paired_again(app: TestApp) {
    let (_, owner) = app.new_player("owner").await;
    let made = create_league(
        &app,
        &owner,
        json!({"name": "Clocked", "preset": "block", "deals_per_match": 1,
            "max_concurrent": 1, "levels": ["greedy"],
            "clock": {"bank_secs": 1, "on_timeout": "forfeit"}}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let (sleeper, key) = app.new_player("sleeper").await;
    let _stream = app.player_stream(&key).await;
    enter(&app, &id, &key).await;
    let first = league_until(&app, &id, |l| !l["running"].as_array().unwrap().is_empty()).await;
    let match_id = first["running"][0]["match_id"].clone();
    // Counted and not paired again, in one save: the same drive would have paired it.
    let counted = league_until(&app, &id, |l| l["matches_counted"] == 1).await;
    assert_eq!(counted["recent"][0]["match_id"], match_id, "{counted}");
    assert_eq!(
        counted["recent"][0]["result"], "b",
        "lost on time: {counted}"
    );
    assert_eq!(row(&counted, &sleeper)["available"], false, "{counted}");
    assert_eq!(row(&counted, "greedy")["available"], true, "{counted}");
    assert!(
        counted["running"].as_array().unwrap().is_empty(),
        "paired while it rests: {counted}"
    );
    // Its stream still open, it is paired again once its rest is over.
    let again = league_until(&app, &id, |l| !l["running"].as_array().unwrap().is_empty()).await;
    // By the server's clock: the rest runs from the count to the next pairing.
    let rested = again["running"][0]["started_ms"].as_u64().unwrap()
        - counted["recent"][0]["ended_ms"].as_u64().unwrap();
    assert!(
        rested >= REST.as_millis() as u64,
        "rested {rested} ms: {again}"
    );
    assert_eq!(row(&again, &sleeper)["available"], true, "{again}");
    assert_ne!(again["running"][0]["match_id"], match_id);
}

/// Followers of one league on one process read the same events, rendered once: a webhook
/// bot plays two levels until two matches are counted and leaves; then each of four
/// followers reads as many events as the feed rendered, and they are the same.
async fn followers_of_a_league_share_one_feed(app: TestApp) {
    let (_, owner) = app.new_player("owner").await;
    let made = create_league(
        &app,
        &owner,
        json!({"name": "Followed", "preset": "all_fives", "deals_per_match": 1,
            "max_concurrent": 1, "levels": ["random", "greedy"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let mut followers = Vec::new();
    for _ in 0..4 {
        let mut follower = EventStream::of(app.get(&format!("/v1/leagues/{id}/events")).await);
        let whole = follower
            .next(Duration::from_secs(10))
            .await
            .expect("standings");
        assert_eq!(whole.event.as_deref(), Some("standings"));
        assert!(whole.data["entrants"].is_array(), "{}", whole.data);
        followers.push((
            follower,
            vec![json!({"event": whole.event, "data": whole.data})],
        ));
    }
    let (_, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::First);
    register(&app, &key, &url, &bot).await;
    enter(&app, &id, &key).await;
    league_until(&app, &id, |l| l["matches_counted"].as_u64() >= Some(2)).await;
    let res = leave(&app, &id, &key).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    league_until(&app, &id, |l| l["running"].as_array().unwrap().is_empty()).await;
    let rendered = app.events_rendered("league").await;
    // At least each of two matches started, finished, and the standings after it.
    assert!(rendered >= 6, "{rendered} events rendered");
    for (follower, events) in &mut followers {
        while events.len() < rendered + 1 {
            let event = follower.next(Duration::from_secs(10)).await;
            let event = event.unwrap_or_else(|| panic!("{} of {rendered} read", events.len() - 1));
            events.push(json!({"event": event.event, "data": event.data}));
        }
    }
    let events = &followers[0].1;
    assert!(
        followers.iter().all(|(_, e)| e == events),
        "every follower reads the same events"
    );
    let kinds = |kind: &str| events.iter().filter(|e| e["event"] == kind).count();
    assert!(kinds("match_finished") >= 2, "{events:?}");
    assert!(kinds("standings") > kinds("match_finished"), "{events:?}");
}

/// Unknown leagues, bad settings, a second entry, a leave by one not in it, a full
/// league and a player's cap on the leagues it makes.
async fn a_league_refuses_what_it_cannot_hold(app: TestApp) {
    let (_, key) = app.new_player("maker").await;
    let unknown = uuid::Uuid::new_v4();
    assert_problem(
        app.get(&format!("/v1/leagues/{unknown}")).await,
        404,
        "not_found",
    )
    .await;
    assert_problem(app.get("/v1/leagues/not-an-id").await, 404, "not_found").await;
    for (body, what) in [
        (
            json!({"name": "x", "preset": "block", "deals_per_match": 0}),
            "deals_per_match",
        ),
        (
            json!({"name": "x", "preset": "block", "max_concurrent": 9}),
            "max_concurrent",
        ),
        (
            json!({"name": "x", "preset": "block", "levels": ["greedy", "greedy"]}),
            "levels",
        ),
        (
            json!({"name": "x", "preset": "block", "levels": ["grandmaster"]}),
            "levels",
        ),
    ] {
        let res = app.post_as("/v1/leagues", &key, Some(&body)).await;
        let problem = assert_problem(res, 422, "invalid_rules").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(what),
            "{problem}"
        );
    }
    let res = app
        .post_as(
            "/v1/leagues",
            "dk_nope",
            Some(&json!({"name": "x", "preset": "block"})),
        )
        .await;
    assert_eq!(res.status().as_u16(), 401);
    // Made once, however often its request is sent again with its key.
    let mut ids = Vec::new();
    for _ in 0..2 {
        let res = app
            .client
            .post(app.url("/v1/leagues"))
            .bearer_auth(&key)
            .header("Idempotency-Key", "league-one")
            .json(&json!({"name": "One", "preset": "block"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 201);
        ids.push(res.json::<Value>().await.unwrap()["id"].clone());
    }
    assert_eq!(ids[0], ids[1]);
    let id = ids[0].as_str().unwrap();
    let enter = format!("/v1/leagues/{id}/entrants");
    assert_eq!(app.post_as(&enter, &key, None).await.status().as_u16(), 200);
    assert_problem(
        app.post_as(&enter, &key, None).await,
        409,
        "already_entered",
    )
    .await;
    let (_, stranger) = app.new_player("stranger").await;
    let res = leave(&app, id, &stranger).await;
    assert_problem(res, 403, "forbidden").await;
    for n in 2..=3 {
        create_league(
            &app,
            &key,
            json!({"name": format!("League {n}"), "preset": "block"}),
        )
        .await;
    }
    let res = app
        .post_as(
            "/v1/leagues",
            &key,
            Some(&json!({"name": "Four", "preset": "block"})),
        )
        .await;
    let problem = assert_problem(res, 429, "too_many_leagues").await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("MAX_LEAGUES_PER_PLAYER"),
        "{problem}"
    );
    let listed: Value = app.get("/v1/leagues").await.json().await.unwrap();
    assert_eq!(listed["leagues"].as_array().unwrap().len(), 3, "{listed}");
    // Newest first; two made in the same millisecond may come in either order.
    let leagues = listed["leagues"].as_array().unwrap();
    let made: Vec<u64> = leagues
        .iter()
        .map(|l| l["created_ms"].as_u64().unwrap())
        .collect();
    assert!(
        made.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {listed}"
    );
    let first = leagues
        .iter()
        .find(|l| l["id"] == id)
        .expect("the first league");
    assert_eq!(
        first["created_ms"].as_u64(),
        made.last().copied(),
        "{listed}"
    );
}

/// A pulling bot of the test's: keeps its player's stream open (which is what makes it
/// available to a league) and plays the first legal move wherever it is to move, polling
/// its games, until `stop`.
async fn pulling_bot(base: String, key: String, stop: Arc<AtomicBool>) {
    let http = reqwest::Client::new();
    let events = http
        .get(format!("{base}/v1/players/me/events"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status().as_u16(), 200);
    // Read, so that the server never waits on a full socket.
    let mut events = events;
    tokio::spawn(async move { while let Ok(Some(_)) = events.chunk().await {} });
    while !stop.load(Ordering::SeqCst) {
        let listed = http
            .get(format!(
                "{base}/v1/players/me/games?status=playing&per_page=100"
            ))
            .bearer_auth(&key)
            .send()
            .await;
        let Ok(listed) = listed else { continue };
        let listed: Value = listed.json().await.unwrap_or_default();
        for game in listed["games"].as_array().into_iter().flatten() {
            let id = game["game_id"].as_str().unwrap();
            let view: Value = match http
                .get(format!("{base}/v1/games/{id}"))
                .bearer_auth(&key)
                .send()
                .await
            {
                Ok(res) => res.json().await.unwrap_or_default(),
                Err(_) => continue,
            };
            if view["your_turn"] == true {
                // A move refused (the game moved on meanwhile) is looked at again.
                let _ = http
                    .post(format!("{base}/v1/games/{id}/moves"))
                    .bearer_auth(&key)
                    .json(&view["legal_moves"][0])
                    .send()
                    .await;
            }
        }
        // The behaviour under test, a bot's pace: not a wait for an assert.
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Two processes on one Redis drive a league of the four levels and two pulling bots;
/// one is SIGKILLed with matches in play. The other goes on: every match is made once,
/// each of its games once, every match counted once, and the table agrees with the
/// matches' own games.
#[tokio::test]
async fn a_league_on_two_processes_survives_one_killed_and_counts_every_match_once() {
    let prefix = unique_prefix();
    let mut child = ChildServer::start(&prefix);
    let app = spawn_redis_under(&prefix).await;
    let (_, owner) = app.new_player("owner").await;
    let made = create_league(
        &app,
        &owner,
        json!({"name": "Killed", "preset": "block", "rules": {"target": null, "rounds": 1},
            "deals_per_match": 1, "max_concurrent": 1,
            "levels": ["random", "greedy", "expert", "master"]}),
    )
    .await;
    let id = made["id"].as_str().unwrap().to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let mut bots = Vec::new();
    for name in ["ann", "bob"] {
        let (player, key) = app.new_player(name).await;
        enter(&app, &id, &key).await;
        tokio::spawn(pulling_bot(app.url(""), key.clone(), stop.clone()));
        bots.push((player, key));
    }
    // Killed with matches in play, after it took part.
    league_until(&app, &id, |l| {
        l["matches_counted"].as_u64() >= Some(2) && !l["running"].as_array().unwrap().is_empty()
    })
    .await;
    child.kill();
    let on = Some(prefix.as_str());
    league_until_on(&app, &id, on, |l| l["matches_counted"].as_u64() >= Some(6)).await;
    for (_, key) in &bots {
        assert_eq!(leave(&app, &id, key).await.status().as_u16(), 200);
    }
    let table = league_until_on(&app, &id, on, |l| {
        l["running"].as_array().unwrap().is_empty()
    })
    .await;
    stop.store(true, Ordering::SeqCst);

    let recent = table["recent"].as_array().unwrap();
    assert_eq!(
        recent.len() as u64,
        table["matches_counted"].as_u64().unwrap()
    );
    let mut matches: Vec<&str> = recent
        .iter()
        .map(|m| m["match_id"].as_str().unwrap())
        .collect();
    matches.sort_unstable();
    matches.dedup();
    assert_eq!(
        matches.len(),
        recent.len(),
        "a match counted twice: {table}"
    );
    let levels = ["random", "greedy", "expert", "master"];
    let mut games = Vec::new();
    for counted in recent {
        let (a, b) = (
            counted["a"].as_str().unwrap(),
            counted["b"].as_str().unwrap(),
        );
        assert!(!levels.contains(&a), "a level never challenges: {counted}");
        let match_id = counted["match_id"].as_str().unwrap();
        let found: Value = app
            .get(&format!("/v1/matches/{match_id}"))
            .await
            .json()
            .await
            .unwrap();
        let made: Vec<String> = found["games"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["game_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(made.len(), 2, "one deal, twice: {found}");
        games.extend(made);
        let margin = margin_from_games(&app, match_id, a).await;
        let result = match margin {
            m if m > 0 => "a",
            m if m < 0 => "b",
            _ => "draw",
        };
        assert_eq!(counted["result"], result, "{counted} ({a} against {b})");
    }
    let all = games.len();
    games.sort_unstable();
    games.dedup();
    assert_eq!(games.len(), all, "a game made twice");
    for entrant in table["entrants"].as_array().unwrap() {
        let played = recent
            .iter()
            .filter(|m| m["a"] == entrant["id"] || m["b"] == entrant["id"])
            .count();
        assert_eq!(entrant["matches"], json!(played), "{entrant}");
    }
}
