//! Webhook bots: a player registers a URL (answering a ping), and the server calls it,
//! signed, whenever one of the player's seats is to move, playing the answer as a move;
//! failures in a row pause it, and addresses the server must not call are refused.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use futures_util::StreamExt;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use domino_server::settings::Settings;

use crate::child::ChildServer;
use crate::helpers::{TestApp, assert_problem, spawn_app_with, test_settings, unique_prefix};
use crate::proxy::redis_url;

/// What the test bot does with a move call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Answers {
    /// The first legal move.
    First,
    /// 500, every time.
    Errors,
    /// A pass, which is not legal while the seat can play or draw.
    Illegal,
    /// Nothing (a ping neither), for far longer than any budget.
    Never,
    /// The right challenge, answered wrongly.
    WrongChallenge,
    /// A move, after far longer than any budget (a ping at once).
    Late,
    /// Not JSON.
    Garbage,
    /// A move, one byte every half second.
    Drips,
    /// A megabyte.
    Huge,
    /// Nothing to the first move call, for far longer than any budget; the first legal
    /// move to every other.
    HoldsFirst,
}

/// A webhook bot in the test's process: checks each call's signature with the secret it
/// is told, and keeps every call it got.
pub(crate) struct Bot {
    answers: Answers,
    secret: Mutex<Option<String>>,
    pub(crate) calls: Mutex<Vec<Value>>,
    bad_signatures: AtomicUsize,
}

fn signed(secret: &str, header: &str, body: &[u8]) -> bool {
    let Some((t, v1)) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
    else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::decode(v1).is_ok_and(|sig| mac.verify_slice(&sig).is_ok())
}

async fn answer(req: HttpRequest, body: web::Bytes, bot: web::Data<Bot>) -> HttpResponse {
    let call: Value = serde_json::from_slice(&body).expect("a call is JSON");
    let header = req
        .headers()
        .get("domino-signature")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if bot.answers == Answers::Never {
        // Not a wait of the test's: the bot's behaviour under test (it never answers
        // within any budget; the server's call ends at its own).
        tokio::time::sleep(Duration::from_secs(60)).await;
        return HttpResponse::Ok().finish();
    }
    if call["type"] == "ping" {
        let challenge = if bot.answers == Answers::WrongChallenge {
            json!("not it")
        } else {
            call["challenge"].clone()
        };
        return HttpResponse::Ok().json(json!({ "challenge": challenge }));
    }
    let secret = bot.secret.lock().unwrap().clone().expect("told its secret");
    if !signed(&secret, &header, &body) {
        bot.bad_signatures.fetch_add(1, Ordering::SeqCst);
    }
    assert_eq!(
        req.headers()
            .get("domino-call-id")
            .unwrap()
            .to_str()
            .unwrap(),
        call["call_id"]
    );
    let first = {
        let mut calls = bot.calls.lock().unwrap();
        calls.push(call.clone());
        calls.len() == 1
    };
    match bot.answers {
        Answers::First | Answers::WrongChallenge => {
            HttpResponse::Ok().json(&call["view"]["legal_moves"][0])
        }
        Answers::HoldsFirst if first => {
            // The behaviour under test, as for `Never`: the call stays in flight.
            tokio::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::Ok().finish()
        }
        Answers::HoldsFirst => HttpResponse::Ok().json(&call["view"]["legal_moves"][0]),
        Answers::Errors => HttpResponse::InternalServerError().finish(),
        Answers::Illegal => HttpResponse::Ok().json(json!({"type": "pass"})),
        Answers::Never => unreachable!("answered above"),
        Answers::Late => {
            // The behaviour under test, as for `Never`.
            tokio::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::Ok().json(&call["view"]["legal_moves"][0])
        }
        Answers::Garbage => HttpResponse::Ok()
            .content_type("application/json")
            .body("<html>not a move</html>"),
        Answers::Drips => {
            let bytes = serde_json::to_vec(&call["view"]["legal_moves"][0]).unwrap();
            // The behaviour under test: a byte every 500 ms, past any budget.
            let drip = futures_util::stream::iter(bytes).then(|b| async move {
                tokio::time::sleep(Duration::from_millis(500)).await;
                Ok::<_, actix_web::Error>(web::Bytes::from(vec![b]))
            });
            HttpResponse::Ok()
                .content_type("application/json")
                .streaming(drip)
        }
        Answers::Huge => HttpResponse::Ok()
            .content_type("application/json")
            .body(vec![b' '; 1 << 20]),
    }
}

/// Starts a bot answering as `answers`: its URL and itself.
pub(crate) fn start_bot(answers: Answers) -> (String, web::Data<Bot>) {
    let bot = web::Data::new(Bot {
        answers,
        secret: Mutex::new(None),
        calls: Mutex::new(Vec::new()),
        bad_signatures: AtomicUsize::new(0),
    });
    let data = bot.clone();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .default_service(web::to(answer))
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());
    (format!("http://127.0.0.1:{port}/move"), bot)
}

/// Settings that let the server call the test's own loopback bots, with a budget that a
/// busy test machine keeps, and two failures in a row pausing.
pub(crate) fn hooked(settings: Settings) -> Settings {
    let mut settings = settings;
    settings.webhooks.allow_private = true;
    settings.webhooks.timeout = Duration::from_millis(3_000);
    settings.webhooks.max_failures = 2;
    settings
}

async fn spawn_memory() -> TestApp {
    spawn_app_with(hooked(test_settings())).await
}

async fn spawn_redis() -> TestApp {
    spawn_redis_under(&unique_prefix()).await
}

pub(crate) async fn spawn_redis_under(prefix: &str) -> TestApp {
    spawn_app_with(hooked(Settings {
        redis_url: Some(redis_url()),
        redis_key_prefix: prefix.to_owned(),
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
    a_webhook_bot_plays_a_whole_game_from_signed_calls,
    a_webhook_bot_plays_a_whole_duplicate_match_against_greedy,
    failures_in_a_row_pause_the_webhook_and_the_player_plays_by_pulling_again,
    a_webhook_put_again_after_its_pause_is_called_in_the_games_in_play,
    an_illegal_answer_is_a_failure_that_changes_nothing,
    a_late_answer_is_a_failure_and_the_seats_clock_decides,
    a_dripped_answer_is_cut_at_the_budget_and_the_seats_clock_decides,
    an_answer_over_16_kib_is_a_failure_and_the_seats_clock_decides,
    an_answer_that_is_not_a_move_is_a_failure_and_the_seats_clock_decides,
);

async fn put_webhook(app: &TestApp, key: &str, url: &str) -> reqwest::Response {
    app.client
        .put(app.url("/v1/players/me/webhook"))
        .bearer_auth(key)
        .json(&json!({ "url": url }))
        .send()
        .await
        .unwrap()
}

async fn get_webhook(app: &TestApp, key: &str) -> reqwest::Response {
    app.client
        .get(app.url("/v1/players/me/webhook"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
}

/// Registers `bot` at `url` as `key`'s webhook and tells the bot its secret.
pub(crate) async fn register(app: &TestApp, key: &str, url: &str, bot: &Bot) -> Value {
    let res = put_webhook(app, key, url).await;
    assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
    let set: Value = res.json().await.unwrap();
    *bot.secret.lock().unwrap() = Some(set["secret"].as_str().unwrap().to_owned());
    set
}

/// A game of all_fives with greedy in seat 1, dealt from `seed`, and the key's player
/// seated at 0: its id.
async fn game_against_greedy(app: &TestApp, key: &str, seed: &str) -> String {
    let (id, _) = app
        .create_game(json!({"preset": "all_fives", "seed": seed,
            "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let res = app
        .post_as(&format!("/v1/games/{id}/seats"), key, Some(&json!({})))
        .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    id
}

/// Polls `check` on the webhook's state until it holds, for 20 s at most.
async fn webhook_until(app: &TestApp, key: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let state: Value = get_webhook(app, key).await.json().await.unwrap();
        if check(&state) {
            return state;
        }
        assert!(std::time::Instant::now() < deadline, "never: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_webhook_is_active_once_it_answered_its_ping_and_its_secret_is_shown_once() {
    let app = spawn_memory().await;
    let (_, key) = app.new_player("hooky").await;
    assert_problem(get_webhook(&app, &key).await, 404, "not_found").await;
    let (url, bot) = start_bot(Answers::First);
    let set = register(&app, &key, &url, &bot).await;
    assert_eq!(set["status"], "active", "{set}");
    assert_eq!(set["url"], url.as_str());
    assert!(set["secret"].as_str().unwrap().starts_with("dwh_"), "{set}");
    let state: Value = get_webhook(&app, &key).await.json().await.unwrap();
    assert_eq!(
        (&state["status"], &state["calls"], &state["latency_ms"]),
        (&json!("active"), &json!(0), &Value::Null),
        "{state}"
    );
    assert!(state.get("secret").is_none(), "{state}");
    // Registered again: a new secret.
    let again = register(&app, &key, &url, &bot).await;
    assert_ne!(again["secret"], set["secret"]);
    let res = app
        .client
        .delete(app.url("/v1/players/me/webhook"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 204);
    assert_problem(get_webhook(&app, &key).await, 404, "not_found").await;
    // Without a key, nothing.
    let res = app
        .client
        .get(app.url("/v1/players/me/webhook"))
        .send()
        .await
        .unwrap();
    assert_problem(res, 401, "unauthorized").await;
}

#[tokio::test]
async fn a_url_the_server_does_not_call_is_refused_saying_why() {
    // At the defaults: only public addresses.
    let app = spawn_app_with(test_settings()).await;
    let (_, key) = app.new_player("hooky").await;
    let (url, _bot) = start_bot(Answers::First);
    for (url, says) in [
        (url.as_str(), "loopback"),
        ("http://169.254.169.254/latest", "metadata"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://10.0.0.1/", "private"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("ftp://bot.example/", "http or https"),
        ("http://localhost:9/", "loopback"),
    ] {
        let problem =
            assert_problem(put_webhook(&app, &key, url).await, 422, "invalid_webhook").await;
        assert!(
            problem["detail"].as_str().unwrap().contains(says),
            "{url}: {problem}"
        );
    }
    // Allowed to call loopback, the server still needs the ping answered.
    let app = spawn_memory().await;
    let (_, key) = app.new_player("hooky").await;
    let (url, _bot) = start_bot(Answers::WrongChallenge);
    let problem = assert_problem(put_webhook(&app, &key, &url).await, 422, "invalid_webhook").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("challenge"),
        "{problem}"
    );
    let (url, _bot) = start_bot(Answers::Never);
    let problem = assert_problem(put_webhook(&app, &key, &url).await, 422, "invalid_webhook").await;
    assert!(
        problem["detail"].as_str().unwrap().contains("ping"),
        "{problem}"
    );
    assert_problem(get_webhook(&app, &key).await, 404, "not_found").await;
}

async fn a_webhook_bot_plays_a_whole_game_from_signed_calls(app: TestApp) {
    let (player, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::First);
    register(&app, &key, &url, &bot).await;
    let id = game_against_greedy(&app, &key, "4242").await;
    // Nobody moves but the server, calling the bot.
    let finished = app.wait_until_finished(&id, None).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    let calls = bot.calls.lock().unwrap().clone();
    assert!(!calls.is_empty());
    assert_eq!(bot.bad_signatures.load(Ordering::SeqCst), 0);
    // Each call is the seat's view at its turn, once: its id names the game's version.
    let mut ids: Vec<&str> = calls
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), calls.len(), "a turn called twice: {ids:?}");
    for call in &calls {
        assert_eq!(
            (&call["type"], &call["game_id"], &call["seat"]),
            (&json!("move"), &json!(id), &json!(0))
        );
        assert_eq!(call["view"]["your_turn"], true, "{call}");
        assert_eq!(
            call["call_id"],
            format!("{id}.{}", call["view"]["version"]),
            "{call}"
        );
        assert!(call["deadline_ms"].as_u64().unwrap() > 0);
    }
    let state = webhook_until(&app, &key, |s| s["calls"] == calls.len()).await;
    assert_eq!(state["failures"], 0, "{state}");
    assert!(state["latency_ms"]["p99"].as_u64().is_some(), "{state}");
    // Anyone sees on the profile how the bot answers, never where it lives.
    let profile: Value = app
        .get(&format!("/v1/players/{player}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        (&profile["webhook"]["status"], &profile["webhook"]["calls"]),
        (&json!("active"), &json!(calls.len())),
        "{profile}"
    );
    assert!(profile["webhook"].get("url").is_none(), "{profile}");
    assert!(!profile.to_string().contains(&url), "{profile}");
}

async fn failures_in_a_row_pause_the_webhook_and_the_player_plays_by_pulling_again(app: TestApp) {
    let (_, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::Errors);
    register(&app, &key, &url, &bot).await;
    let mut stream = app.player_stream(&key).await;
    // Greedy leads or the bot does: either way seat 0's turn comes.
    let id = game_against_greedy(&app, &key, "4242").await;
    let state = webhook_until(&app, &key, |s| s["status"] == "paused").await;
    assert_eq!(state["failures"], 2, "{state}");
    assert!(
        state["paused_reason"]
            .as_str()
            .unwrap()
            .contains("answered 500"),
        "{state}"
    );
    let mut told = false;
    while let Some(event) = stream.next(Duration::from_secs(10)).await {
        if event.event.as_deref() == Some("webhook_paused") {
            assert!(
                event.data["reason"]
                    .as_str()
                    .unwrap()
                    .contains("answered 500"),
                "{}",
                event.data
            );
            told = true;
            break;
        }
    }
    assert!(told, "the player's stream never told the pause");
    // The seat plays by pulling again: its key moves it.
    app.until_bots_replied(&id, &key).await;
    let view = app.view(&id, Some(&key)).await;
    app.play(&id, &key, &view["legal_moves"][0]).await;
    assert_eq!(bot.calls.lock().unwrap().len(), 2, "called after the pause");
}

/// A webhook paused in the middle of a game (its seat then played by pulling), put again
/// at a bot that answers: the game in play is called again, and finished by its calls.
async fn a_webhook_put_again_after_its_pause_is_called_in_the_games_in_play(app: TestApp) {
    let (_, key) = app.new_player("hooky").await;
    let (url, failing) = start_bot(Answers::Errors);
    register(&app, &key, &url, &failing).await;
    let id = game_against_greedy(&app, &key, "4242").await;
    webhook_until(&app, &key, |s| s["status"] == "paused").await;
    let (url, bot) = start_bot(Answers::First);
    let set = register(&app, &key, &url, &bot).await;
    assert_eq!(set["status"], "active", "{set}");
    let finished = app.wait_until_finished(&id, None).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    assert!(!bot.calls.lock().unwrap().is_empty(), "never called");
    assert_eq!(
        failing.calls.lock().unwrap().len(),
        2,
        "called after the pause"
    );
}

async fn an_illegal_answer_is_a_failure_that_changes_nothing(app: TestApp) {
    let (_, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::Illegal);
    register(&app, &key, &url, &bot).await;
    let id = game_against_greedy(&app, &key, "4242").await;
    let state = webhook_until(&app, &key, |s| s["status"] == "paused").await;
    assert!(
        state["paused_reason"].as_str().unwrap().contains("refused"),
        "{state}"
    );
    // Its turn is still to be played, by the player.
    let view = app.view(&id, Some(&key)).await;
    assert_eq!(view["your_turn"], true, "{view}");
    assert_eq!(bot.calls.lock().unwrap().len(), 2);
}

/// A bot answering as `answers` plays a game with an 8 s bank against greedy: its turn's
/// two calls (3 s each at most) fail, which pauses it (its `reason` said), and the seat's
/// clock plays the turn they lost (a timeout in the log) and the game goes on. Meanwhile a
/// bystander plays by pulling in the same process, at its usual pace.
async fn each_turn_is_left_to_the_clock(app: TestApp, answers: Answers, reason: &str) {
    // Calls that last their budget leave the bystander time for several moves.
    let slow = matches!(answers, Answers::Late | Answers::Drips);
    let (_, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(answers);
    register(&app, &key, &url, &bot).await;
    let (id, _) = app
        .create_game(json!({"preset": "all_fives", "seed": "4242",
            "bots": [{"seat": 1, "level": "greedy"}],
            "clock": {"bank_secs": 8, "abandon_after": 100}}))
        .await;
    let res = app
        .post_as(&format!("/v1/games/{id}/seats"), &key, Some(&json!({})))
        .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let state = bystander_plays_until_paused(&app, &key, if slow { 3 } else { 0 }).await;
    assert!(
        state["paused_reason"].as_str().unwrap().contains(reason),
        "{state}"
    );
    // Each failed turn was the clock's: a timeout of seat 0, and its bot moved for it.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let log = app.log(&id, None).await;
        let timeouts = log["moves"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["seat"] == 0 && m["move"]["type"] == "timed_out")
            .count();
        if timeouts >= 1 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no timeouts: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!bot.calls.lock().unwrap().is_empty());
}

/// A bystander's game against greedy, played by pulling a move every 100 ms until `key`'s
/// webhook is paused (its calls meanwhile in flight; `at_least` moves if they are slow):
/// the webhook's state then. The
/// bystander's moves are not held up by the calls: each is answered well within one call's
/// budget (3 s), the generous bound of a busy test machine.
async fn bystander_plays_until_paused(app: &TestApp, key: &str, at_least: usize) -> Value {
    let (_, bystander) = app.new_player("bystander").await;
    let id = game_against_greedy(app, &bystander, "1717").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (mut moves, mut slowest) = (0, Duration::ZERO);
    loop {
        let state: Value = get_webhook(app, key).await.json().await.unwrap();
        if state["status"] == "paused" {
            assert!(
                moves >= at_least,
                "the bystander moved {moves} times meanwhile"
            );
            assert!(
                slowest < Duration::from_secs(2),
                "a bystander's move took {slowest:?} while a webhook was called"
            );
            return state;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never paused: {state}"
        );
        let view = app.view(&id, Some(&bystander)).await;
        if view["your_turn"] == true {
            let began = std::time::Instant::now();
            app.play(&id, &bystander, &view["legal_moves"][0]).await;
            slowest = slowest.max(began.elapsed());
            moves += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn a_late_answer_is_a_failure_and_the_seats_clock_decides(app: TestApp) {
    each_turn_is_left_to_the_clock(app, Answers::Late, "no whole answer within the time").await;
}

async fn a_dripped_answer_is_cut_at_the_budget_and_the_seats_clock_decides(app: TestApp) {
    each_turn_is_left_to_the_clock(app, Answers::Drips, "no whole answer within the time").await;
}

async fn an_answer_over_16_kib_is_a_failure_and_the_seats_clock_decides(app: TestApp) {
    each_turn_is_left_to_the_clock(app, Answers::Huge, "over 16384 bytes").await;
}

async fn an_answer_that_is_not_a_move_is_a_failure_and_the_seats_clock_decides(app: TestApp) {
    each_turn_is_left_to_the_clock(app, Answers::Garbage, "not a move body").await;
}

async fn a_webhook_bot_plays_a_whole_duplicate_match_against_greedy(app: TestApp) {
    let (_, key) = app.new_player("hooky").await;
    let (url, bot) = start_bot(Answers::First);
    register(&app, &key, &url, &bot).await;
    let res = app
        .post_as(
            "/v1/matches",
            &key,
            Some(
                &json!({"opponent": "greedy", "preset": "all_fives", "deals": 2,
                "parallel": 2, "rated": true}),
            ),
        )
        .await;
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Nobody plays but the server, calling the bot for its seat in each of the 4 games.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let done = loop {
        let m: Value = app
            .get(&format!("/v1/matches/{id}"))
            .await
            .json()
            .await
            .unwrap();
        if m["status"] == "finished" {
            break m;
        }
        assert!(std::time::Instant::now() < deadline, "never finished: {m}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let games = done["games"].as_array().unwrap();
    assert_eq!(games.len(), 4, "{done}");
    let calls = bot.calls.lock().unwrap().clone();
    for game in games {
        let game_id = game["game_id"].as_str().unwrap();
        assert!(
            calls.iter().any(|c| c["game_id"] == game_id),
            "game {game_id} was never called: {done}"
        );
    }
    assert_eq!(bot.bad_signatures.load(Ordering::SeqCst), 0);
    let state: Value = get_webhook(&app, &key).await.json().await.unwrap();
    assert_eq!(state["failures"], 0, "{state}");
}

/// The only process calling a webhook seat is SIGKILLed while its call is in flight (no
/// shutdown, nothing handed over): a server started afterwards on the same Redis makes the
/// call again, under the same call id, and the game goes on with each turn played once.
#[tokio::test]
async fn a_call_lost_with_its_killed_process_is_made_again_by_another_and_played_once() {
    let prefix = unique_prefix();
    // A budget far past the test: the call is still in flight when the process dies.
    let mut child = ChildServer::start_with(
        &prefix,
        &[
            ("WEBHOOK_ALLOW_PRIVATE", "true"),
            ("WEBHOOK_TIMEOUT_MS", "60000"),
        ],
    );
    let http = reqwest::Client::new();
    let base = child.base.clone();
    let created: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": "hooky"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let key = created["key"].as_str().unwrap().to_owned();
    let (url, bot) = start_bot(Answers::HoldsFirst);
    let set: Value = http
        .put(format!("{base}/v1/players/me/webhook"))
        .bearer_auth(&key)
        .json(&json!({ "url": url }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    *bot.secret.lock().unwrap() = Some(set["secret"].as_str().expect("a secret").to_owned());
    let created: Value = http
        .post(format!("{base}/v1/games"))
        .json(&json!({"preset": "all_fives", "seed": "sigkill-call",
            "bots": [{"seat": 1, "level": "greedy"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["game_id"].as_str().unwrap().to_owned();
    let res = http
        .post(format!("{base}/v1/games/{id}/seats"))
        .bearer_auth(&key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while bot.calls.lock().unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "never called");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill();

    let second = spawn_redis_under(&prefix).await;
    let finished = second.wait_until_finished(&id, None).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    let calls = bot.calls.lock().unwrap().clone();
    let ids: Vec<&str> = calls
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert!(ids.len() >= 2, "{ids:?}");
    assert_eq!(ids[0], ids[1], "the lost call is made again under its id");
    let mut turns = ids.clone();
    turns.dedup();
    assert_eq!(
        turns.len(),
        ids.len() - 1,
        "only the lost call made twice: {ids:?}"
    );
    let log = second.log(&id, None).await;
    let ours = log["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["seat"] == 0)
        .count();
    assert_eq!(ours, turns.len(), "each turn called, played once: {log}");
    assert_eq!(bot.bad_signatures.load(Ordering::SeqCst), 0);
}
