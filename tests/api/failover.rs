//! A master of the Redis Cluster dies (SIGKILL) while games are played: its replica takes
//! over, no move the server acknowledged is lost or applied twice, and the game is served
//! again within seconds.
//!
//! The replica that takes over has no replica of its own, so until one joins it its
//! games' moves answer 503 (a move no replica holds is not acknowledged) and `/readyz`
//! says `degraded`, naming it; the cluster's spare replica migrates to it (Redis's replica
//! migration). Unless the killed master was the one with the spare: its other replica
//! then follows the new master at once. Last, a whole shard is killed: `/readyz` answers
//! 503, the cluster failed.
//!
//! Ignored by default, as it kills nodes of the cluster it is given: `scripts/test.sh`
//! runs it last (`cargo test --test api failover -- --ignored`) on the local cluster it
//! started (3 masters with a replica each and one spare replica, `cluster-node-timeout`
//! 1 s), then stops it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::helpers::{
    Player, TestApp, cluster_nodes, cluster_settings, redis_info, spawn_app_with, unique_prefix,
};
use domino_server::settings::Settings;

/// Games played at once; the one killed is the master of the first game's slot.
const GAMES: usize = 6;
/// Longest the whole test may take, and the longest one request may be retried.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);
/// The game must be served again within this after the kill: a failover takes about 2 s
/// with a 1 s node timeout, then the spare replica migrates to the new master 5 s after
/// it was left without one (Redis's own delay); the rest is slack for a loaded CI machine.
const SERVED_AGAIN_WITHIN: Duration = Duration::from_secs(25);

/// What one game's player saw: each acknowledged move's version, and when the first one
/// after the kill was acknowledged.
#[derive(Default)]
pub(crate) struct Played {
    pub(crate) acked: Vec<u64>,
    first_ack_after_kill: Option<Instant>,
    pub(crate) finished: bool,
    pub(crate) retried_503: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "kills a master of REDIS_CLUSTER_NODES: scripts/test.sh runs it last, on its own cluster"]
async fn acknowledged_moves_survive_a_master_failover() {
    let started = Instant::now();
    let prefix = unique_prefix();
    // The store's answer within 1 s, the server's default, not the tests' 5 s: while the
    // server's map of the cluster still names the killed master, /readyz waits that long
    // on it, and at 5 s a poll or two spanned the whole time the new master had no replica.
    let app = Arc::new(
        spawn_app_with(Settings {
            store_timeout: Duration::from_secs(1),
            ..cluster_settings(&prefix)
        })
        .await,
    );
    let mut games = Vec::new();
    for i in 0..GAMES {
        let (id, players) = app
            .start_game(json!({"preset": "block", "seed": format!("failover {i}")}))
            .await;
        games.push((id, players));
    }
    let killed_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let played: Vec<Arc<Mutex<Played>>> = (0..GAMES).map(|_| Arc::default()).collect();
    let tasks: Vec<_> = games
        .iter()
        .cloned()
        .zip(&played)
        .map(|((id, players), played)| {
            let (app, played, stop, killed_at) =
                (app.clone(), played.clone(), stop.clone(), killed_at.clone());
            tokio::spawn(async move { play(&app, &id, &players, &played, &stop, &killed_at).await })
        })
        .collect();

    // Every game has moves stored before the kill.
    while !played
        .iter()
        .all(|p| p.try_lock().is_ok_and(|p| p.acked.len() >= 2 || p.finished))
    {
        assert!(started.elapsed() < DEADLINE, "the games did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The cluster's spare replica belongs to one of the masters: when that is the one
    // killed, its other replica follows the new master at once, and no master is ever
    // short of a replica; else the new master has none until the spare migrates to it.
    let (address, replicas) = shard_of(&prefix, &games[0].0).await;
    let pid = pid_of(&address).await;
    let left_alone = replicas.len() == 1;
    kill(pid);
    let killed = Instant::now();
    *killed_at.lock().await = Some(killed);
    println!(
        "killed the master {address} (pid {pid}) of game {}, which had the replicas {replicas:?}",
        games[0].0
    );

    // Play on until every game has moves acknowledged after the kill (or is over). The
    // killed master's replica takes over with no replica of its own until the spare one
    // migrates to it: meanwhile its games' moves cannot be confirmed (503), and
    // `/readyz` says which master is short.
    let mut degraded_seen = None;
    // How long the test itself saw the new master with no replica (`INFO replication` on
    // it): the spare may migrate to it within moments, too soon for any poll of /readyz.
    let (mut alone_since, mut alone_for) = (None::<Instant>, Duration::ZERO);
    loop {
        if degraded_seen.is_none() {
            let ready: Value = app.get("/readyz").await.json().await.unwrap_or_default();
            if ready["status"] == "degraded" {
                degraded_seen = Some((killed.elapsed(), ready["degraded"].clone()));
            }
        }
        if left_alone {
            let url = format!("redis://{}", replicas[0]);
            let info =
                tokio::time::timeout(Duration::from_secs(1), redis_info(&url, "replication"))
                    .await
                    .unwrap_or_default();
            let alone = info.contains("role:master") && info.contains("connected_slaves:0");
            match (alone, alone_since) {
                (true, None) => alone_since = Some(Instant::now()),
                (true, Some(since)) => alone_for = alone_for.max(since.elapsed()),
                (false, _) => alone_since = None,
            }
        }
        let mut done = true;
        for p in &played {
            let p = p.lock().await;
            done &= p.finished || p.first_ack_after_kill.is_some_and(|_| p.acked.len() >= 6);
        }
        if done {
            break;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the games were not served again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("a player does not panic");
    }

    let mut retried = 0;
    for p in &played {
        retried += p.lock().await.retried_503;
    }
    let target = played[0].lock().await;
    let again = target
        .first_ack_after_kill
        .expect("the killed master's game moved again")
        .duration_since(killed);
    println!(
        "the game on the killed master was served again {} ms after the kill ({retried} moves answered 503 and were retried, across all games)",
        again.as_millis(),
    );
    match &degraded_seen {
        Some((at, why)) => println!(
            "/readyz said degraded {} ms after the kill: {why}",
            at.as_millis()
        ),
        None => println!("/readyz was not seen degraded"),
    }
    if left_alone && degraded_seen.is_none() && alone_for < Duration::from_secs(1) {
        println!(
            "the new master was seen without a replica for {alone_for:?} only: too short to ask /readyz to have said so"
        );
    } else if left_alone {
        // It names the new master: the killed one's replica.
        let (_, why) = degraded_seen.unwrap_or_else(|| {
            panic!(
                "/readyz never said degraded while the new master had no replica for {alone_for:?}"
            )
        });
        let port = replicas[0].rsplit(':').next().unwrap();
        assert!(
            why.to_string()
                .contains(&format!(":{port} has 0 of the 1 replicas")),
            "/readyz names the new master {}: {why}",
            replicas[0]
        );
    }
    assert!(again < SERVED_AGAIN_WITHIN, "served again after {again:?}");
    drop(target);

    // Every acknowledged move is in its game's log exactly once.
    for ((id, _), played) in games.iter().zip(&played) {
        let played = played.lock().await;
        let first = played.acked.first().copied().expect("moves were made");
        assert_logged_once(&app, id, &played, first).await;
    }

    // Last, a shard lost whole (a master and every replica of it): the cluster stops
    // serving (`cluster_state:fail`), and `/readyz` says so.
    let (master, replicas) = shard_of(&prefix, &games[1].0).await;
    let mut pids = vec![pid_of(&master).await];
    for replica in &replicas {
        pids.push(pid_of(replica).await);
    }
    for pid in pids {
        kill(pid);
    }
    let lost = Instant::now();
    println!("killed the shard of {master} (replicas {replicas:?})");
    let detail = loop {
        let res = app.get("/readyz").await;
        let status = res.status().as_u16();
        let last: Value = res.json().await.unwrap_or_default();
        if status == 503 {
            let detail = last["detail"].as_str().unwrap_or_default().to_owned();
            if detail.contains("state is fail") {
                break detail;
            }
        }
        assert!(
            lost.elapsed() < SERVED_AGAIN_WITHIN,
            "/readyz never said the cluster failed; it last said {last}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    println!(
        "/readyz answered 503 {} ms after the shard was lost: {detail}",
        lost.elapsed().as_millis()
    );
}

/// Plays one game move after move, each with its own idempotency key, retrying a move
/// answered 503 (or not answered) with the same key until it is acknowledged.
pub(crate) async fn play(
    app: &TestApp,
    id: &str,
    players: &[Player],
    played: &Mutex<Played>,
    stop: &AtomicBool,
    killed_at: &Mutex<Option<Instant>>,
) {
    let started = Instant::now();
    let mut key = 0;
    while !stop.load(Ordering::Relaxed) {
        let spectator = retry_get(app, &format!("/v1/games/{id}")).await;
        if spectator["status"] != "playing" {
            played.lock().await.finished = true;
            return;
        }
        let turn = spectator["round"]["turn"].as_u64().unwrap() as usize;
        let token = &players[turn].token;
        let res = app.get_as(&format!("/v1/games/{id}"), Some(token)).await;
        if res.status().as_u16() == 503 {
            continue;
        }
        let view: Value = res.json().await.unwrap();
        let mv = view["legal_moves"][0].clone();
        key += 1;
        let idempotency_key = format!("failover-{key}");
        loop {
            assert!(
                started.elapsed() < DEADLINE,
                "game {id}: a move is never acknowledged"
            );
            let sent = app
                .client
                .post(app.url(&format!("/v1/games/{id}/moves")))
                .bearer_auth(token)
                .header("idempotency-key", &idempotency_key)
                .json(&mv)
                .send()
                .await;
            let Ok(res) = sent else { continue };
            let status = res.status().as_u16();
            let body: Value = res.json().await.unwrap_or(Value::Null);
            match status {
                200 => {
                    let now = Instant::now();
                    let killed = *killed_at.lock().await;
                    let mut played = played.lock().await;
                    played
                        .acked
                        .push(body["version"].as_u64().expect("a version"));
                    if killed.is_some() && played.first_ack_after_kill.is_none() {
                        played.first_ack_after_kill = Some(now);
                    }
                    break;
                }
                503 => {
                    played.lock().await.retried_503 += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                _ => panic!("game {id}: a move answered {status}: {body}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every move acknowledged in `played` is in game `id`'s log exactly once: the versions
/// acknowledged follow each other from `first`, the game's version is the last one, and
/// its log holds as many moves as were acknowledged (nobody else plays the game).
/// Returns the game's version.
pub(crate) async fn assert_logged_once(
    app: &TestApp,
    id: &str,
    played: &Played,
    first: u64,
) -> u64 {
    let expected: Vec<u64> = (first..).take(played.acked.len()).collect();
    assert_eq!(played.acked, expected, "game {id}: acknowledged versions");
    let view = retry_get(app, &format!("/v1/games/{id}")).await;
    let version = view["version"].as_u64().expect("a version");
    assert_eq!(
        Some(version),
        played.acked.last().copied(),
        "game {id}: an acknowledged move is missing"
    );
    let log = retry_get(app, &format!("/v1/games/{id}/log")).await;
    assert_eq!(
        log["moves"].as_array().expect("a log").len(),
        played.acked.len(),
        "game {id}: the log"
    );
    version
}

/// `GET` as a spectator, retried while the store is unavailable.
pub(crate) async fn retry_get(app: &TestApp, path: &str) -> Value {
    let started = Instant::now();
    loop {
        if let Ok(res) = app.client.get(app.url(path)).send().await
            && res.status().as_u16() == 200
        {
            return res.json().await.unwrap();
        }
        assert!(started.elapsed() < DEADLINE, "{path} is never served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One shard of the cluster as `CLUSTER NODES` (asked of the first node that answers)
/// shows it: the address of the master that owns the game's slot, and of its replicas.
pub(crate) async fn shard_of(prefix: &str, id: &str) -> (String, Vec<String>) {
    let mut seed = None;
    for node in cluster_nodes() {
        let client = redis::Client::open(node.as_str()).unwrap();
        if let Ok(Ok(conn)) = tokio::time::timeout(
            Duration::from_secs(1),
            client.get_multiplexed_async_connection(),
        )
        .await
        {
            seed = Some(conn);
            break;
        }
    }
    let mut seed = seed.expect("a node of REDIS_CLUSTER_NODES answers");
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(format!("{prefix}game:{{{id}}}"))
        .query_async(&mut seed)
        .await
        .unwrap();
    let table: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut seed)
        .await
        .unwrap();
    // `<id> <host:port@bus> <flags> <master> <ping> <pong> <epoch> <state> <slots>...`
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    let address = |row: &[&str]| row[1].split('@').next().unwrap().to_owned();
    let master = rows
        .iter()
        .find(|fields| {
            let master = fields[2].split(',').any(|f| f == "master");
            let owns = fields.iter().skip(8).any(|range| {
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                matches!((lo.parse::<u16>(), hi.parse::<u16>()), (Ok(lo), Ok(hi)) if lo <= slot && slot <= hi)
            });
            master && owns
        })
        .expect("a master owns the slot");
    let master = address(master);
    // Its replicas as the master itself knows them (`slaveN:ip=…,port=…,state=…`): the
    // cluster's gossip may lag behind a replica that just migrated.
    let info = redis_info(&format!("redis://{master}"), "replication").await;
    let replicas = info
        .lines()
        .filter(|line| line.starts_with("slave"))
        .filter_map(|line| {
            let field = |name: &str| {
                line.split([':', ','])
                    .find_map(|f| f.strip_prefix(name))
                    .map(str::to_owned)
            };
            Some(format!("{}:{}", field("ip=")?, field("port=")?))
        })
        .collect();
    (master, replicas)
}

/// The process id of the Redis node at `address`.
async fn pid_of(address: &str) -> u32 {
    redis_info(&format!("redis://{address}"), "server")
        .await
        .lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
        .expect("INFO server gives the process id")
}

fn kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -9 {pid}");
}
