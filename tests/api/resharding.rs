//! The Redis Cluster moves a game's slot to another master (resharding: how a cluster
//! grows) while the game is played and watched: every move is answered at once through
//! the migration (the store follows `ASK` while the slot's keys move one by one,
//! `TRYAGAIN` while the keys of one script are split, and `MOVED` after), every
//! acknowledged move is in the game's log once, and a spectator's event stream, resumed
//! with `Last-Event-ID` when the slot's move ends it, misses nothing.
//!
//! It leaves the cluster whole (the slot served by its new master), so it runs with the
//! other tests on the local cluster of `scripts/test.sh`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use serde_json::json;
use tokio::sync::Mutex;

use crate::failover::{DEADLINE, Played, assert_logged_once, play, retry_get, shard_of};
use crate::helpers::{EventStream, spawn_app_with_cluster_prefix, unique_prefix};

/// Moves acknowledged before the migration starts, and after it ends.
const MOVES_AROUND: usize = 4;
/// Between two keys of the game moved: moves land while the slot is half moved (a few
/// each time), and well within the store's timeout (1 s), for which a move that finds
/// the game's keys split waits at most this long plus one MIGRATE.
const BETWEEN_KEYS: Duration = Duration::from_millis(100);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_game_plays_on_and_is_watched_while_its_slot_moves_to_another_master() {
    let prefix = unique_prefix();
    let app = Arc::new(spawn_app_with_cluster_prefix(&prefix).await);
    let (id, players) = app
        .start_game(json!({"preset": "block", "seed": "resharding"}))
        .await;
    let from_version = retry_get(&app, &format!("/v1/games/{id}")).await["version"]
        .as_u64()
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let played: Arc<Mutex<Played>> = Arc::default();
    let player = {
        let (app, id, played, stop) = (app.clone(), id.clone(), played.clone(), stop.clone());
        tokio::spawn(async move {
            play(&app, &id, &players, &played, &stop, &Mutex::new(None)).await;
        })
    };
    let watcher = {
        let (app, id, stop) = (app.clone(), id.clone(), stop.clone());
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut reopened = 0;
            let mut stream = EventStream::open(&app, &id, Some(from_version)).await;
            while !stop.load(Ordering::Relaxed) {
                match stream.next(Duration::from_millis(200)).await {
                    Some(event) => seen.push(event.id.expect("an event id")),
                    None if stream.ended => {
                        reopened += 1;
                        let last = seen.last().copied().unwrap_or(from_version);
                        stream = EventStream::open(&app, &id, Some(last)).await;
                    }
                    None => {}
                }
            }
            // What was acknowledged last may still be on its way.
            while let Some(event) = stream.next(Duration::from_secs(1)).await {
                seen.push(event.id.expect("an event id"));
            }
            (seen, reopened)
        })
    };
    wait_for(&played, MOVES_AROUND).await;

    let (source, _) = shard_of(&prefix, &id).await;
    let before = played.lock().await.acked.len();
    let started = Instant::now();
    let target = migrate(&prefix, &id, &source).await;
    let during = played.lock().await.acked.len();
    println!(
        "moved the game's slot from {source} to {target} in {} ms",
        started.elapsed().as_millis()
    );
    assert_eq!(
        shard_of(&prefix, &id).await.0,
        target,
        "the slot's new master"
    );
    wait_for(&played, during + MOVES_AROUND).await;
    stop.store(true, Ordering::Relaxed);
    player.await.unwrap();
    let (seen, reopened) = watcher.await.unwrap();

    let played = played.lock().await;
    println!(
        "{} moves acknowledged, {} while the slot moved; {} answers of 503 retried; the stream was resumed {reopened} times",
        played.acked.len(),
        during - before,
        played.retried_503
    );
    assert!(
        played.acked.len() >= during + MOVES_AROUND || played.finished,
        "moves go on after the migration"
    );
    // Each move was answered at once: the store followed the slot's keys.
    assert_eq!(
        played.retried_503, 0,
        "moves answered 503 during the migration"
    );
    let last = assert_logged_once(&app, &id, &played, from_version + 1).await;
    let all: Vec<u64> = (from_version + 1..=last).collect();
    assert_eq!(seen, all, "the spectator's events");
}

/// Until `n` moves are acknowledged, or the game is over.
async fn wait_for(played: &Mutex<Played>, n: usize) {
    let started = Instant::now();
    loop {
        let played = played.lock().await;
        if played.acked.len() >= n || played.finished {
            return;
        }
        drop(played);
        assert!(
            started.elapsed() < DEADLINE,
            "moves stopped being acknowledged"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Moves the slot of game `id` from its master `source` to another master, key by key as
/// `redis-cli --cluster reshard` does (IMPORTING, MIGRATING, MIGRATE, then the new owner
/// told to every master), pausing between keys. Returns the new master's address.
async fn migrate(prefix: &str, id: &str, source: &str) -> String {
    let mut from = connect(source).await;
    let nodes: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut from)
        .await
        .unwrap();
    // `<id> <host:port@bus> <flags> ...`
    let masters: Vec<(String, String)> = nodes
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f[2].split(',').any(|flag| flag == "master") && !f[2].contains("fail"))
        .map(|f| (f[0].to_owned(), f[1].split('@').next().unwrap().to_owned()))
        .collect();
    let source_id = &masters.iter().find(|(_, a)| a == source).unwrap().0;
    let (target_id, target) = masters.iter().find(|(_, a)| a != source).unwrap().clone();
    let mut to = connect(&target).await;
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(format!("{prefix}game:{{{id}}}"))
        .query_async(&mut from)
        .await
        .unwrap();
    let setslot = |state: &str, node: &str| {
        let mut cmd = redis::cmd("CLUSTER");
        cmd.arg("SETSLOT").arg(slot).arg(state).arg(node);
        cmd
    };
    let _: () = setslot("IMPORTING", source_id)
        .query_async(&mut to)
        .await
        .unwrap();
    let _: () = setslot("MIGRATING", &target_id)
        .query_async(&mut from)
        .await
        .unwrap();
    let (host, port) = target.rsplit_once(':').unwrap();
    loop {
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(1)
            .query_async(&mut from)
            .await
            .unwrap();
        let Some(key) = keys.first() else { break };
        let _: () = redis::cmd("MIGRATE")
            .arg(host)
            .arg(port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(key)
            .query_async(&mut from)
            .await
            .unwrap();
        // Not a wait for a result: the migration's pace, so games are played during it.
        tokio::time::sleep(BETWEEN_KEYS).await;
    }
    for (_, address) in &masters {
        let mut master = connect(address).await;
        let _: () = setslot("NODE", &target_id)
            .query_async(&mut master)
            .await
            .unwrap();
    }
    target
}

async fn connect(address: &str) -> MultiplexedConnection {
    redis::Client::open(format!("redis://{address}"))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}
