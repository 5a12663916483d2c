//! What a move costs the store: on a game this process wrote last, one command on the
//! game's keys (the save script; the game is not loaded first), counted on a real Redis
//! with `MONITOR`; and a view, one `GET`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::helpers::{TestApp, spawn_app_with_redis};
use crate::proxy::redis_url;

/// Every command the Redis at `REDIS_URL` runs from its start, as `MONITOR` prints them
/// (`<time> [<db> <client>] "COMMAND" "arg"...`; a script's own calls show `lua` as their
/// client).
struct Monitor {
    seen: Arc<Mutex<Vec<String>>>,
    /// Lines already handed out.
    read: usize,
    task: tokio::task::JoinHandle<()>,
    redis: redis::aio::MultiplexedConnection,
}

impl Monitor {
    async fn start() -> Monitor {
        let url = redis_url();
        let address = url
            .strip_prefix("redis://")
            .and_then(|rest| rest.split('/').next())
            .filter(|a| !a.contains('@'))
            .expect("a redis://host:port URL");
        let (read, mut write) = tokio::net::TcpStream::connect(address)
            .await
            .expect("Redis answers")
            .into_split();
        write.write_all(b"MONITOR\r\n").await.unwrap();
        let mut lines = BufReader::new(read).lines();
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("+OK"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                let _write = write;
                while let Ok(Some(line)) = lines.next_line().await {
                    seen.lock().unwrap().push(line);
                }
            }
        });
        let redis = redis::Client::open(url)
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        Monitor {
            seen,
            read: 0,
            task,
            redis,
        }
    }

    /// The commands clients sent naming game `id` (its keys, its channel) since the last
    /// call, once Redis has run every command sent before this call: a marker is sent
    /// after them, and read back.
    async fn commands_on(&mut self, id: &str) -> Vec<String> {
        let marker = format!("marker-{}", uuid::Uuid::new_v4());
        let _: String = redis::cmd("ECHO")
            .arg(&marker)
            .query_async(&mut self.redis)
            .await
            .unwrap();
        let start = Instant::now();
        loop {
            let found = {
                let seen = self.seen.lock().unwrap();
                let from = self.read;
                seen[from..]
                    .iter()
                    .position(|l| l.contains(&marker))
                    .map(|at| {
                        let lines: Vec<String> = seen[from..from + at]
                            .iter()
                            .filter(|l| l.contains(id) && !l.contains(" lua]"))
                            .cloned()
                            .collect();
                        (at, lines)
                    })
            };
            if let Some((at, lines)) = found {
                self.read += at + 1;
                return lines;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "MONITOR is silent"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The command names of `MONITOR` lines.
fn names(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.split("] \"").nth(1)?.split('"').next())
        .map(str::to_uppercase)
        .collect()
}

/// The seat to move's token and one of its legal moves.
async fn next_move(app: &TestApp, id: &str, tokens: &[String]) -> Option<(String, Value)> {
    let spectator = app.view(id, None).await;
    let turn = spectator["round"]["turn"].as_u64()? as usize;
    let view = app.view(id, Some(&tokens[turn])).await;
    Some((tokens[turn].clone(), view["legal_moves"][0].clone()))
}

#[tokio::test]
async fn a_move_on_a_game_this_process_wrote_is_one_command_and_a_view_one_get() {
    let app = spawn_app_with_redis().await;
    let (id, players) = app
        .start_game(json!({"preset": "block", "seats": 2, "seed": "one round trip"}))
        .await;
    let tokens: Vec<String> = players.into_iter().map(|p| p.token).collect();
    let mut monitor = Monitor::start().await;
    for n in 0..8 {
        let (token, mv) = next_move(&app, &id, &tokens).await.expect("in play");
        let viewed = monitor.commands_on(&id).await;
        assert_eq!(names(&viewed), ["GET", "GET"], "two views: {viewed:?}");
        let res = app
            .client
            .post(app.url(&format!("/v1/games/{id}/moves")))
            .bearer_auth(&token)
            .header("idempotency-key", format!("move-{n}"))
            .json(&mv)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 200, "{}", res.text().await.unwrap());
        let moved = monitor.commands_on(&id).await;
        assert_eq!(names(&moved), ["EVALSHA"], "move {n}: {moved:?}");
    }
    let metrics = app.get("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("domino_game_cache_total{outcome=\"hit\"} 10"),
        "two joins and eight moves from the cache: {metrics}"
    );
}
