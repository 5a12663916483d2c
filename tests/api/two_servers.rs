//! Two servers on one Redis, or on one Redis Cluster (the same key prefix): either serves
//! any game, and news of a move made through one reaches clients of the other.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::{EventStream, TestApp};

/// Two servers sharing one key prefix: on one Redis (`redis::…`) or on a Redis Cluster
/// (`cluster::…`), where the live events travel by sharded pub/sub.
macro_rules! on_two_servers {
    ($($name:ident),+ $(,)?) => {
        mod redis {
            $(
                #[tokio::test]
                async fn $name() {
                    let prefix = crate::helpers::unique_prefix();
                    super::$name(
                        crate::helpers::spawn_app_with_redis_prefix(&prefix).await,
                        crate::helpers::spawn_app_with_redis_prefix(&prefix).await,
                    )
                    .await
                }
            )+
        }
        mod cluster {
            $(
                #[tokio::test]
                async fn $name() {
                    let prefix = crate::helpers::unique_prefix();
                    super::$name(
                        crate::helpers::spawn_app_with_cluster_prefix(&prefix).await,
                        crate::helpers::spawn_app_with_cluster_prefix(&prefix).await,
                    )
                    .await
                }
            )+
        }
    };
}

on_two_servers!(
    a_match_played_alternately_through_two_servers_on_one_redis_completes,
    moves_alternating_between_two_servers_start_from_stale_copies_and_are_answered_right,
    an_event_stream_on_one_server_sees_a_move_made_through_the_other,
    a_long_poll_on_one_server_wakes_when_the_other_stores_a_move,
    copies_of_a_move_sent_through_two_servers_at_once_are_applied_once,
    tables_of_bots_alone_are_played_by_one_server_at_a_time_and_finish,
    a_table_of_bots_alone_is_taken_over_when_its_server_stops,
);

/// Four expert bots, a few rounds: a table that plays for a while.
fn table_of_experts(rounds: u32) -> Value {
    json!({"preset": "draw", "seats": 4, "rules": {"target": null, "rounds": rounds},
        "bots": [{"seat": 0, "level": "expert"}, {"seat": 1, "level": "expert"},
                 {"seat": 2, "level": "expert"}, {"seat": 3, "level": "expert"}]})
}

/// A counter of the server's `/metrics`.
async fn counter(server: &TestApp, name: &str) -> u64 {
    let text = server.get("/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

async fn wait_until_finished(server: &TestApp, id: &str, within: Duration) {
    let start = Instant::now();
    loop {
        let view = server.view(id, None).await;
        if view["status"] == "finished" {
            return;
        }
        assert!(
            start.elapsed() < within,
            "not finished within {within:?}: {view}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Both servers see every table in the store's queue; a lease lets one play each, so their
/// writes do not collide, and every table still plays to its end.
async fn tables_of_bots_alone_are_played_by_one_server_at_a_time_and_finish(
    a: TestApp,
    b: TestApp,
) {
    let mut ids = Vec::new();
    for i in 0..4 {
        let server = if i % 2 == 0 { &a } else { &b };
        ids.push(server.create_game(table_of_experts(3)).await.0);
    }
    for id in &ids {
        wait_until_finished(&a, id, Duration::from_secs(120)).await;
    }
    let conflicts = counter(&a, "domino_store_conflicts_total").await
        + counter(&b, "domino_store_conflicts_total").await;
    assert!(conflicts <= 2, "{conflicts} write conflicts");
}

/// The server playing a table stops; the other takes the table over once the lease runs
/// out, and plays it to its end.
async fn a_table_of_bots_alone_is_taken_over_when_its_server_stops(a: TestApp, b: TestApp) {
    let (id, _) = a.create_game(table_of_experts(6)).await;
    // Under way on `a` (which created it, and has room for it).
    let start = Instant::now();
    while a.view(&id, None).await["version"].as_u64().unwrap() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "it never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.stop().await;
    assert_eq!(
        b.view(&id, None).await["status"],
        "playing",
        "stopped mid-match"
    );
    wait_until_finished(&b, &id, Duration::from_secs(120)).await;
}

async fn a_match_played_alternately_through_two_servers_on_one_redis_completes(
    a: TestApp,
    b: TestApp,
) {
    let servers = [&a, &b];
    let (id, _) = a
        .create_game(
            json!({"preset": "all_fives", "seats": 3, "seed": "two servers",
                            "bots": [{"seat": 2, "level": "greedy"}]}),
        )
        .await;
    // The game is listed by both.
    for server in servers {
        let list: Value = server.get("/v1/games").await.json().await.unwrap();
        assert_eq!(list["games"][0]["game_id"], id.as_str());
    }
    let ann = b.take_seat(&id, "ann").await;
    let bob = a.take_seat(&id, "bob").await;
    let tokens = [ann.token, bob.token];
    let mut request = 0;
    let mut moves = 0;
    let mut rng: u64 = 99;
    loop {
        let server = servers[request % 2];
        request += 1;
        let spectator = server.view(&id, None).await;
        if spectator["status"] == "finished" {
            break;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let server = servers[request % 2];
        request += 1;
        let view = server.view(&id, Some(&tokens[turn])).await;
        assert_eq!(
            view["version"], spectator["version"],
            "both see the same game"
        );
        let legal = view["legal_moves"].as_array().unwrap();
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mv = &legal[((rng >> 33) % legal.len() as u64) as usize];
        let server = servers[request % 2];
        request += 1;
        let answer = server.play(&id, &tokens[turn], mv).await;
        assert_eq!(answer["version"], view["version"].as_u64().unwrap() + 1);
        moves += 1;
        assert!(moves < 2_000, "the match ends");
    }
    let exports: Vec<Value> = futures_util::future::join_all(servers.map(|s| async {
        let res = s.get(&format!("/v1/games/{id}/export")).await;
        assert_eq!(res.status().as_u16(), 200);
        res.json::<Value>().await.unwrap()
    }))
    .await;
    assert_eq!(exports[0], exports[1]);
    assert!(exports[0]["result"].is_object());
    assert!(exports[0]["moves"].as_array().unwrap().len() > moves);
}

async fn an_event_stream_on_one_server_sees_a_move_made_through_the_other(a: TestApp, b: TestApp) {
    let (id, players) = a
        .start_game(json!({"preset": "block", "seed": "fan out"}))
        .await;
    let spectator = b.view(&id, None).await;
    let version = spectator["version"].as_u64().unwrap();
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let mut stream = EventStream::open(&a, &id, None).await;
    let opening = stream
        .next(Duration::from_secs(4))
        .await
        .expect("the current version first");
    assert_eq!(opening.id, Some(version));
    let view = b.view(&id, Some(&players[turn].token)).await;
    b.play(&id, &players[turn].token, &view["legal_moves"][0])
        .await;
    let event = stream
        .next(Duration::from_secs(4))
        .await
        .expect("the move made through the other server");
    assert_eq!(event.id, Some(version + 1));
    assert_eq!(event.data["moves"][0]["seat"], turn);
}

async fn a_long_poll_on_one_server_wakes_when_the_other_stores_a_move(a: TestApp, b: TestApp) {
    let (id, players) = a
        .start_game(json!({"preset": "draw", "seed": "poll across"}))
        .await;
    let spectator = a.view(&id, None).await;
    let version = spectator["version"].as_u64().unwrap();
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let view = b.view(&id, Some(&players[turn].token)).await;
    let poll = async {
        let res = a
            .get(&format!("/v1/games/{id}?after={version}&wait=5"))
            .await;
        (Instant::now(), res.json::<Value>().await.unwrap())
    };
    let mv = async {
        // Not a wait for a result: the move comes later than the poll, to wake it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        b.play(&id, &players[turn].token, &view["legal_moves"][0])
            .await;
        Instant::now()
    };
    let ((answered, seen), moved) = tokio::join!(poll, mv);
    assert!(answered.duration_since(moved) < Duration::from_secs(4));
    assert_eq!(seen["version"], version + 1);
}

async fn copies_of_a_move_sent_through_two_servers_at_once_are_applied_once(
    a: TestApp,
    b: TestApp,
) {
    let (id, players) = a
        .start_game(json!({"preset": "block", "seed": "race across"}))
        .await;
    let spectator = a.view(&id, None).await;
    let version = spectator["version"].as_u64().unwrap();
    let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
    let token = &players[turn].token;
    let id = id.as_str();
    let view = a.view(id, Some(token)).await;
    let mv = &view["legal_moves"][0];
    let sends = (0..20).map(|i| {
        let server = if i % 2 == 0 { &a } else { &b };
        async move { server.post_move(id, token, mv).await.status().as_u16() }
    });
    let statuses = futures_util::future::join_all(sends).await;
    assert_eq!(
        statuses.iter().filter(|&&s| s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|&s| s == 200 || s == 409 || s == 422),
        "{statuses:?}"
    );
    assert_eq!(b.view(id, None).await["version"], version + 1);
    // And with one Idempotency-Key, every copy gets the one answer.
    let other = &players[1 - turn].token;
    let view = b.view(id, Some(other)).await;
    let mv = &view["legal_moves"][0];
    let sends = (0..20).map(|i| {
        let server = if i % 2 == 0 { &a } else { &b };
        async move {
            let res = server
                .client
                .post(server.url(&format!("/v1/games/{id}/moves")))
                .bearer_auth(other)
                .header("idempotency-key", "across")
                .json(mv)
                .send()
                .await
                .unwrap();
            (res.status().as_u16(), res.text().await.unwrap())
        }
    });
    let answers = futures_util::future::join_all(sends).await;
    for answer in &answers {
        assert_eq!(answer, &answers[0]);
    }
    assert_eq!(answers[0].0, 200);
    assert_eq!(a.view(id, None).await["version"], version + 2);
}

/// A labelled counter of the server's `/metrics` (0 when it has not been counted yet).
async fn labelled(server: &TestApp, name: &str, label: &str) -> u64 {
    let text = server.get("/metrics").await.text().await.unwrap();
    let line = format!("{name}{{{label}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&line)?.parse().ok())
        .unwrap_or(0)
}

/// Two servers take turns moving one game, so each one's copy of the game (from its own
/// last move) is a move behind when it moves next: its save finds another version stored,
/// answers that, and the move is made on it at once. Every answer is the stored game's,
/// one version on, as the other server then shows it; both servers' copies went stale.
async fn moves_alternating_between_two_servers_start_from_stale_copies_and_are_answered_right(
    a: TestApp,
    b: TestApp,
) {
    let servers = [&a, &b];
    let (id, players) = a
        .start_game(json!({"preset": "block", "seats": 2, "seed": "stale copies"}))
        .await;
    let mut version = a.view(&id, None).await["version"].as_u64().unwrap();
    let mut moves = 0;
    while moves < 12 {
        let (mover, other) = (servers[moves % 2], servers[(moves + 1) % 2]);
        let spectator = other.view(&id, None).await;
        if spectator["status"] != "playing" {
            break;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let token = &players[turn].token;
        let view = other.view(&id, Some(token)).await;
        let answer = mover.play(&id, token, &view["legal_moves"][0]).await;
        version += 1;
        assert_eq!(answer["version"], version, "move {moves}: {answer}");
        let stored = other.view(&id, Some(token)).await;
        assert_eq!(answer["version"], stored["version"], "move {moves}");
        assert_eq!(answer["hand"], stored["hand"], "move {moves}");
        assert_eq!(answer["round"], stored["round"], "move {moves}");
        moves += 1;
    }
    assert!(moves >= 6, "only {moves} moves were played");
    for server in servers {
        let stale = labelled(server, "domino_game_cache_total", "outcome=\"stale\"").await;
        assert!(stale >= 2, "{stale} stale copies met");
        assert_eq!(counter(server, "domino_store_conflicts_total").await, 0);
    }
}

/// A server stops right after it stored a human's move, before it wrote anything else
/// (as if killed there): the bot whose turn follows is played by another server's sweep.
/// The first server answers moves without waiting for bots (its bot budget is 0) and
/// reaches Redis through a proxy that holds its scripts' answers back; the test takes
/// Redis from it as soon as the move is in the store.
#[tokio::test]
async fn a_move_stored_by_a_server_that_stops_at_once_still_gets_its_bots_reply() {
    let (first, proxy, settings) = crate::helpers::spawn_app_to_be_left().await;
    let (id, _) = first
        .create_game(json!({"preset": "block", "seed": "left after a move",
            "bots": [{"seat": 1, "level": "greedy"}]}))
        .await;
    let ann = first.take_seat(&id, "ann").await;
    first.until_bots_replied(&id, &ann.token).await;
    let before = first.view(&id, Some(&ann.token)).await;
    let game_key = format!("{}game:{{{id}}}", settings.redis_key_prefix);
    let mut redis = ::redis::Client::open(crate::proxy::redis_url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let stored = |redis: &mut ::redis::aio::MultiplexedConnection| {
        let cmd = ::redis::cmd("GET").arg(&game_key).clone();
        let mut redis = redis.clone();
        async move { cmd.query_async::<Vec<u8>>(&mut redis).await.unwrap() }
    };
    let unmoved = stored(&mut redis).await;
    proxy.delay_scripts(Duration::from_secs(1));
    let moving = tokio::spawn({
        let app = TestApp::at(first.address.clone());
        let (id, token) = (id.clone(), ann.token.clone());
        let body = before["legal_moves"][0].clone();
        // Answered or cut short when Redis is taken away: what counts is the store.
        async move { app.post_move(&id, &token, &body).await }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored(&mut redis).await == unmoved {
        assert!(Instant::now() < deadline, "the move was never stored");
        // A poll of the store, far shorter than the answer held back.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    proxy.stop();
    let _ = moving.await;
    first.stop().await;
    let moved = before["version"].as_u64().unwrap() + 1;
    let second = crate::helpers::spawn_app_with(settings).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = second.view(&id, Some(&ann.token)).await;
        if view["version"].as_u64().unwrap() > moved || view["status"] == "finished" {
            break;
        }
        assert_eq!(view["version"], moved, "the move was stored: {view}");
        assert!(Instant::now() < deadline, "the bot never replied: {view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
