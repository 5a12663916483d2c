//! Load: many HTTP clients play whole games against a running server, and the figures
//! that say whether the server or Redis is the limit.
//!
//! `scripts/bench-load.sh` builds the server, finds or starts a Redis, starts the server
//! and runs this; by hand:
//!
//! `cargo run --release --example load -- --url http://127.0.0.1:8080 --seconds 20
//!  --redis-url redis://127.0.0.1:6379 --key-prefix domino:`
//!
//! **The load.** `--clients` tasks (one keep-alive connection each) each play complete
//! games, one after another: create a 2-seat game with a seed, take both seats, then post
//! the moves of both seats in turn until the match is over. One request per move: the
//! client keeps a replica of the game (the engine, dealt from the same seed), picks a
//! random legal move there, posts it in its wire form, and checks the answer against the
//! replica (the new version, and the mover's hand), so a server that answered wrongly
//! would be caught. Moves per second and the latency of the move requests (send to
//! last byte) are counted after `--warmup` seconds, until `--seconds` or `--max-moves`.
//!
//! **Redis's ceiling** (with `--redis-url`): what Redis alone allows for the calls a move
//! makes: `EVALSHA` of the store's save script (the compare-and-set, run here exactly as
//! the store sends it, with a 400-byte blob and a public event), and for a game the
//! server has not written itself a `GET` of the game before it, each measured by
//! `redis-benchmark` with `--redis-clients` connections: `evalsha` moves/s, or
//! `1 / (1/get + 1/evalsha)` with the `GET`.
//!
//! **What a player sees** (`--follow`): each seat reads its own event stream, and a move
//! counts when the opponent's stream has delivered it; the latency runs from sending the
//! move to then. **Redis calls per move** (`--count-calls`): MONITOR on every master,
//! counting what clients send (not a script's own calls), in a paced run of its own.
//! **The floor** (`--probe PATH`): no games; each client sends `GET PATH` in a closed
//! loop, and the server's CPU a request is printed (`scripts/bench-floor.sh`).
//!
//! **Bytes stored per game** (with `--redis-url` and `--key-prefix`, the server's
//! `REDIS_KEY_PREFIX`): one classic 2-seat game is played to the end, and `MEMORY USAGE`
//! of its keys (the game with its last events, the idempotency hash) is read during the
//! game and at its end; then again with an `Idempotency-Key` on every move.

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use domino_server::api::wire::MadeMove;
use domino_server::engine::{Game, Move, Preset, Seed};
use domino_server::store::History;
use domino_server::store::value::{game_value, read_game_value};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

#[derive(Parser, Debug)]
#[command(about = "HTTP load of whole games, Redis's ceiling, and bytes stored per game")]
struct Args {
    /// Base URL of the running server.
    #[arg(long)]
    url: String,
    /// Concurrent clients (each one game at a time, one request in flight).
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Length of the load, warm-up included.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Seconds at the start not counted (connections, allocator, caches).
    #[arg(long, default_value_t = 2)]
    warmup: u64,
    /// Offered load in moves a second, shared evenly by the clients (each paces its moves
    /// on a fixed schedule, started staggered), instead of each client moving as soon as
    /// its last answer is back. Two stores compared at one rate do the same work with the
    /// same batching, so their CPU per move compares the code; a closed loop compares
    /// them at different rates. Must be below what the slowest store sustains.
    #[arg(long)]
    rate: Option<f64>,
    /// Stop after this many counted moves (whichever comes first with --seconds).
    #[arg(long, default_value_t = 10_000_000)]
    max_moves: u64,
    /// Preset of the games played.
    #[arg(long, default_value = "classic", value_parser = |s: &str| Preset::from_str(s).map_err(|e| e.message))]
    preset: Preset,
    /// Send an `Idempotency-Key` with every move of the load.
    #[arg(long)]
    idempotency: bool,
    /// Play every game with a clock of this many seconds a seat (long enough that nobody
    /// runs out): what clocks cost a move.
    #[arg(long)]
    clock_secs: Option<u64>,
    /// Instead of the load: open this many games with a clock running (a day's bank,
    /// both seats taken, nobody moving), then measure for `--seconds` what the idle
    /// server and Redis spend on them (the clocks' sweep, mostly).
    #[arg(long)]
    idle_clocks: Option<usize>,
    /// Instead of the games: each client sends `GET` of this path (for instance
    /// `/healthz`) again and again, and the server's CPU a request is printed: the floor
    /// of what any request costs, against which a move's CPU reads (the same client, the
    /// same connections; `examples/bare_http.rs` is the floor of the HTTP stack alone).
    #[arg(long)]
    probe: Option<String>,
    /// Each seat follows its own event stream (`GET /v1/games/{id}/events` with its
    /// token, which carries its view), as a socket-based client would, and a move counts
    /// when the opponent's stream has delivered it: moves/s and latency are the player's
    /// (from sending the move to the opponent's event), not the mover's.
    #[arg(long)]
    follow: bool,
    /// Count the commands clients send Redis during the load, with MONITOR on every
    /// master among `--redis-url` / `--redis-cpu-urls` (a script's own calls are not
    /// counted): MONITOR slows Redis, so measure this in a run of its own, paced.
    #[arg(long)]
    count_calls: bool,
    /// Worker threads of the client's runtime.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The server's Redis: measure its ceiling and the bytes stored per game.
    #[arg(long)]
    redis_url: Option<String>,
    /// The server's REDIS_KEY_PREFIX (for the bytes stored per game).
    #[arg(long)]
    key_prefix: Option<String>,
    /// Redis Cluster mode: the URLs of every node (masters and replicas), whose CPU time
    /// is added up for the Redis CPU per move. The ceiling and bytes-per-game figures,
    /// which need one Redis (`--redis-url`), are not measured then.
    #[arg(long, value_delimiter = ',')]
    redis_cpu_urls: Vec<String>,
    /// The server's process id: its CPU time per move is printed (Linux).
    #[arg(long)]
    server_pid: Option<u32>,
    /// redis-benchmark: connections.
    #[arg(long, default_value_t = 64)]
    redis_clients: usize,
    /// redis-benchmark: requests per command.
    #[arg(long, default_value_t = 200_000)]
    redis_requests: usize,
}

type Failure = String;

/// The few fields of an answer the client checks.
#[derive(Deserialize)]
struct Answer {
    game_id: Option<String>,
    version: u64,
    hand: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Seat {
    seat: u8,
    token: String,
}

/// Counters shared by the clients.
struct Shared {
    /// Each client's time between two moves, when the load is paced (`--rate`).
    pace: Option<Duration>,
    started: Instant,
    counted_from: Instant,
    deadline: Instant,
    max_moves: u64,
    counted: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }
}

#[derive(Default)]
struct Tally {
    /// Move latencies in the counted window, microseconds.
    latencies: Vec<u32>,
    games: u64,
    failures: Vec<Failure>,
    /// When the last counted move completed.
    last: Option<Instant>,
}

struct Client {
    http: reqwest::Client,
    base: String,
    preset: Preset,
    idempotency: bool,
    clock_secs: Option<u64>,
    follow: bool,
}

/// One game in play, as the client knows it.
struct Table {
    id: String,
    tokens: [String; 2],
    replica: Game,
    version: u64,
    rng: ChaCha8Rng,
    moves: u64,
    /// With `--follow`: the last version each seat's event stream delivered.
    streams: Option<[Follower; 2]>,
}

/// A seat's event stream, read by a task of its own.
struct Follower {
    version: tokio::sync::watch::Receiver<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Follower {
    /// Opens seat `token`'s stream of game `id`; answers once the stream is open.
    async fn open(client: &Client, id: &str, token: &str) -> Result<Follower, Failure> {
        let mut res = client
            .http
            .get(format!("{}/v1/games/{id}/events", client.base))
            .bearer_auth(token)
            .timeout(Duration::from_secs(3600))
            .send()
            .await
            .map_err(|e| format!("events: {}", with_causes(&e)))?;
        if res.status().as_u16() != 200 {
            return Err(format!("events: {}", res.status()));
        }
        let (tx, version) = tokio::sync::watch::channel(0);
        let task = tokio::spawn(async move {
            let mut pending = Vec::new();
            while let Ok(Some(chunk)) = res.chunk().await {
                pending.extend_from_slice(&chunk);
                // Whole lines only; an event's `id:` is its version.
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    if let Some(v) = std::str::from_utf8(&line)
                        .ok()
                        .and_then(|l| l.strip_prefix("id: "))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                    {
                        tx.send_replace(v);
                    }
                }
            }
        });
        Ok(Follower { version, task })
    }

    /// Waits until the stream has delivered `version`.
    async fn delivered(&mut self, version: u64) -> Result<(), Failure> {
        match tokio::time::timeout(
            Duration::from_secs(10),
            self.version.wait_for(|&v| v >= version),
        )
        .await
        {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(format!("the stream ended before version {version}")),
            Err(_) => Err(format!("version {version} was not delivered within 10 s")),
        }
    }
}

/// An error and what caused it, down the chain: reqwest's own text ("error sending
/// request") does not say whether the connection was refused, reset or closed.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    text
}

impl Client {
    async fn post(
        &self,
        path: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: Vec<u8>,
    ) -> Result<(u16, actix_web::web::Bytes), Failure> {
        let mut req = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(key) = key {
            req = req.header("idempotency-key", key);
        }
        let res = req
            .send()
            .await
            .map_err(|e| format!("POST {path}: {}", with_causes(&e)))?;
        let status = res.status().as_u16();
        let body = res
            .bytes()
            .await
            .map_err(|e| format!("POST {path}: body: {}", with_causes(&e)))?;
        Ok((status, body))
    }

    /// Creates a game with this seed and takes both seats.
    async fn open(&self, seed: &str) -> Result<Table, Failure> {
        let mut body = serde_json::json!({"preset": self.preset.name(), "seats": 2, "seed": seed});
        if let Some(secs) = self.clock_secs {
            body["clock"] = serde_json::json!({ "bank_secs": secs });
        }
        let (status, answer) = self
            .post("/v1/games", None, None, serde_json::to_vec(&body).unwrap())
            .await?;
        if status != 201 {
            return Err(format!(
                "create: {status} {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        let created: Answer = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
        let id = created.game_id.ok_or("create: no game_id")?;
        let mut tokens = [String::new(), String::new()];
        for name in ["north", "south"] {
            let (status, answer) = self
                .post(
                    &format!("/v1/games/{id}/seats"),
                    None,
                    None,
                    format!(r#"{{"name":"{name}"}}"#).into_bytes(),
                )
                .await?;
            if status != 201 {
                return Err(format!(
                    "seat: {status} {}",
                    String::from_utf8_lossy(&answer)
                ));
            }
            let seat: Seat = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
            tokens[seat.seat as usize] = seat.token;
        }
        let replica = Game::new(self.preset.rules(), 2, Seed::from_text(seed), None)
            .map_err(|e| e.to_string())?;
        let streams = if self.follow {
            Some([
                Follower::open(self, &id, &tokens[0]).await?,
                Follower::open(self, &id, &tokens[1]).await?,
            ])
        } else {
            None
        };
        Ok(Table {
            id,
            tokens,
            replica,
            version: 3,
            rng: ChaCha8Rng::from_seed(Seed::from_text(seed).0),
            moves: 0,
            streams,
        })
    }

    /// Posts one random legal move of the seat to move; checks the answer; returns the
    /// seat that moved.
    async fn step(&self, t: &mut Table) -> Result<u8, Failure> {
        let seat = t.replica.turn().ok_or("the replica's game is over")?;
        let legal = t.replica.legal_moves(seat);
        let mv: Move = *legal.choose(&mut t.rng).ok_or("no legal move")?;
        let body = serde_json::to_vec(&MadeMove::of(mv)).unwrap();
        let key = self.idempotency.then(|| format!("{}-{}", t.id, t.moves));
        let (status, answer) = self
            .post(
                &format!("/v1/games/{}/moves", t.id),
                Some(&t.tokens[seat as usize]),
                key.as_deref(),
                body,
            )
            .await?;
        if status != 200 {
            return Err(format!(
                "move: {status} {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        t.replica
            .play(seat, mv)
            .map_err(|e| format!("replica refused {mv:?}: {e}"))?;
        t.version += 1;
        t.moves += 1;
        let answer: Answer = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
        let hand: Vec<String> = t.replica.hand(seat).iter().map(|t| t.to_string()).collect();
        if answer.version != t.version || answer.hand.as_ref() != Some(&hand) {
            return Err(format!(
                "desync: server at version {} with hand {:?}, replica at {} with {hand:?}",
                answer.version, answer.hand, t.version
            ));
        }
        Ok(seat)
    }
}

/// One client: games one after another until the load stops.
async fn run_client(client: Arc<Client>, shared: Arc<Shared>, index: usize, of: usize) -> Tally {
    let mut tally = Tally::default();
    let mut n = 0u64;
    // Clients start a fraction of a period apart, so that the moves arrive evenly.
    let mut pace = shared.pace.map(|period| {
        let first = shared.started + period.mul_f64(index as f64 / of as f64);
        let mut ticks = tokio::time::interval_at(first.into(), period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks
    });
    'games: while !shared.stopping() {
        n += 1;
        let mut table = match client.open(&format!("load-{index}-{n}")).await {
            Ok(t) => t,
            Err(e) => {
                tally.failures.push(e);
                continue;
            }
        };
        while !table.replica.is_over() {
            if let Some(ticks) = pace.as_mut() {
                ticks.tick().await;
            }
            if shared.stopping() {
                break 'games;
            }
            let sent = Instant::now();
            let seat = match client.step(&mut table).await {
                Ok(seat) => seat,
                Err(e) => {
                    tally.failures.push(e);
                    continue 'games;
                }
            };
            // With --follow, the move is done when the opponent's stream has it.
            let version = table.version;
            if let Some(streams) = table.streams.as_mut()
                && let Err(e) = streams[usize::from(1 - seat)].delivered(version).await
            {
                tally.failures.push(e);
                continue 'games;
            }
            let done = Instant::now();
            if sent >= shared.counted_from && done <= shared.deadline {
                if shared.counted.fetch_add(1, Ordering::Relaxed) + 1 >= shared.max_moves {
                    shared.stop.store(true, Ordering::Relaxed);
                }
                tally
                    .latencies
                    .push(u32::try_from(done.duration_since(sent).as_micros()).unwrap_or(u32::MAX));
                tally.last = Some(done);
            }
        }
        tally.games += 1;
    }
    tally
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

/// CPU seconds used so far by the server (from /proc) and by Redis (INFO cpu), and the
/// moves the server has applied (its metrics): read before and after the load.
#[derive(Clone, Copy, Default)]
struct Usage {
    client_cpu: Option<f64>,
    server_cpu: Option<f64>,
    /// The part of `server_cpu` spent in the kernel.
    server_system_cpu: Option<f64>,
    redis_cpu: Option<f64>,
    moves: Option<f64>,
}

/// CPU seconds a process has used, user and system (in the kernel), from /proc (Linux).
fn process_cpu(pid: &str) -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): utime is the 12th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<f64>().ok().map(|t| t / 100.0); // USER_HZ
    Some((ticks(11)?, ticks(12)?))
}

async fn usage_now(args: &Args, http: &reqwest::Client) -> Usage {
    let client_cpu = process_cpu("self").map(|(user, system)| user + system);
    let server = process_cpu_of(args);
    let (server_cpu, server_system_cpu) = (
        server.map(|(user, system)| user + system),
        server.map(|(_, system)| system),
    );
    let urls: Vec<&str> = match &args.redis_url {
        Some(url) => vec![url.as_str()],
        None => args.redis_cpu_urls.iter().map(String::as_str).collect(),
    };
    let mut redis_cpu = (!urls.is_empty()).then_some(0.0);
    for url in urls {
        let node = async {
            let client = redis::Client::open(url).ok()?;
            let mut conn = client.get_multiplexed_async_connection().await.ok()?;
            let info: String = redis::cmd("INFO")
                .arg("cpu")
                .query_async(&mut conn)
                .await
                .ok()?;
            let field = |name: &str| {
                info.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .and_then(|v| v.trim().parse::<f64>().ok())
            };
            Some(field("used_cpu_user:")? + field("used_cpu_sys:")?)
        }
        .await;
        redis_cpu = redis_cpu.zip(node).map(|(sum, node)| sum + node);
    }
    let moves = async {
        let text = http
            .get(format!("{}/metrics", args.url.trim_end_matches('/')))
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("domino_moves_applied_total "))
            .and_then(|v| v.trim().parse().ok())
    }
    .await;
    Usage {
        client_cpu,
        server_cpu,
        server_system_cpu,
        redis_cpu,
        moves,
    }
}

async fn load(args: &Args) -> Result<(), Failure> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.clients)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let client = Arc::new(Client {
        http,
        base: args.url.trim_end_matches('/').to_owned(),
        preset: args.preset,
        idempotency: args.idempotency,
        clock_secs: args.clock_secs,
        follow: args.follow,
    });
    let calls = if args.count_calls {
        Some(CallCounter::start(args).await?)
    } else {
        None
    };
    let before = usage_now(args, &client.http).await;
    let started = Instant::now();
    let shared = Arc::new(Shared {
        pace: args
            .rate
            .map(|rate| Duration::from_secs_f64(args.clients as f64 / rate)),
        started,
        counted_from: started + Duration::from_secs(args.warmup),
        deadline: started + Duration::from_secs(args.seconds.max(args.warmup + 1)),
        max_moves: args.max_moves,
        counted: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let tasks: Vec<_> = (0..args.clients)
        .map(|i| tokio::spawn(run_client(client.clone(), shared.clone(), i, args.clients)))
        .collect();
    let mut latencies = Vec::new();
    let mut games = 0;
    let mut failures = Vec::new();
    let mut last = shared.counted_from;
    for task in tasks {
        let tally = task.await.map_err(|e| e.to_string())?;
        latencies.extend(tally.latencies);
        games += tally.games;
        failures.extend(tally.failures);
        if let Some(t) = tally.last {
            last = last.max(t);
        }
    }
    let window = last.duration_since(shared.counted_from).as_secs_f64();
    latencies.sort_unstable();
    let moves = latencies.len();
    if args.follow {
        println!(
            "following: each seat reads its own event stream; a move counts when the opponent's stream delivered it, its latency from sending it to then"
        );
    }
    println!(
        "load: {} clients{}, preset {}, {} s ({} s warm-up not counted){}{}, {:.1} s in all",
        args.clients,
        args.rate
            .map(|rate| format!(" paced at {rate:.0} moves/s in all"))
            .unwrap_or_default(),
        args.preset.name(),
        args.seconds,
        args.warmup,
        if args.idempotency {
            ", Idempotency-Key on every move"
        } else {
            ""
        },
        args.clock_secs
            .map(|s| format!(", a {s} s clock on every game"))
            .unwrap_or_default(),
        shared.started.elapsed().as_secs_f64()
    );
    println!(
        "moves: {moves} in {window:.1} s = {:.0} moves/s ({games} games finished)",
        moves as f64 / window.max(1e-9)
    );
    if let Some(rate) = args.rate
        && (moves as f64 / window.max(1e-9)) < rate * 0.97
    {
        println!("the paced rate was not reached: the store is the limit, not the pace");
    }
    println!(
        "move latency: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        percentile(&latencies, 100.0),
    );
    let after = usage_now(args, &client.http).await;
    if let (Some(m0), Some(m1)) = (before.moves, after.moves) {
        let applied = m1 - m0;
        let per_move = |a: Option<f64>, b: Option<f64>| {
            a.zip(b).map(|(a, b)| (b - a) / applied.max(1.0) * 1e6)
        };
        let mut line = format!("cpu per move ({applied:.0} moves applied, warm-up included):");
        if let Some(us) = per_move(before.server_cpu, after.server_cpu) {
            line += &format!(" server {us:.1} us");
            if let Some(system) = per_move(before.server_system_cpu, after.server_system_cpu) {
                line += &format!(" (kernel {system:.1})");
            }
        }
        if let Some(us) = per_move(before.redis_cpu, after.redis_cpu) {
            line += &format!(", redis {us:.1} us");
        }
        if let Some(us) = per_move(before.client_cpu, after.client_cpu) {
            line += &format!(", this load client {us:.1} us");
        }
        println!("{line}");
        if let Some(calls) = calls {
            let counted = calls.stop().await;
            let total: u64 = counted.iter().map(|(_, n)| n).sum();
            let by_command: Vec<String> = counted
                .iter()
                .filter(|(_, n)| *n as f64 / applied.max(1.0) >= 0.001)
                .map(|(name, n)| format!("{name} {:.3}", *n as f64 / applied.max(1.0)))
                .collect();
            println!(
                "redis calls per move (MONITOR on the masters, warm-up included; a script's own calls not counted): {:.3} ({})",
                total as f64 / applied.max(1.0),
                by_command.join(", ")
            );
        }
    }
    println!("failures: {}", failures.len());
    for f in failures.iter().take(5) {
        println!("  {f}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{} requests failed", failures.len()))
    }
}

/// Commands clients send Redis, by name, read from MONITOR on each master.
struct CallCounter {
    counts: Arc<std::sync::Mutex<std::collections::BTreeMap<String, u64>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl CallCounter {
    async fn start(args: &Args) -> Result<CallCounter, Failure> {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let urls: Vec<&str> = match &args.redis_url {
            Some(url) => vec![url.as_str()],
            None => args.redis_cpu_urls.iter().map(String::as_str).collect(),
        };
        let counts = Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
        let mut tasks = Vec::new();
        for url in urls {
            let mut conn = redis::Client::open(url)
                .map_err(|e| e.to_string())?
                .get_multiplexed_async_connection()
                .await
                .map_err(|e| e.to_string())?;
            let role: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut conn)
                .await
                .map_err(|e| e.to_string())?;
            // A replica's MONITOR shows its master's stream again: not counted.
            if !role.contains("role:master") {
                continue;
            }
            let address = url
                .strip_prefix("redis://")
                .and_then(|rest| rest.split('/').next())
                .ok_or_else(|| format!("{url}: a redis://host:port URL"))?;
            let stream = tokio::net::TcpStream::connect(address)
                .await
                .map_err(|e| e.to_string())?;
            let (read, mut write) = stream.into_split();
            write
                .write_all(b"MONITOR\r\n")
                .await
                .map_err(|e| e.to_string())?;
            let mut lines = tokio::io::BufReader::new(read).lines();
            let counts = counts.clone();
            tasks.push(tokio::spawn(async move {
                let _write = write;
                while let Ok(Some(line)) = lines.next_line().await {
                    // `+<time> [<db> <client>] "COMMAND" ...`; a script's calls: `lua`.
                    let Some((client, rest)) = line.split_once("] \"") else {
                        continue;
                    };
                    if client.ends_with(" lua") {
                        continue;
                    }
                    let name = rest.split('"').next().unwrap_or("").to_uppercase();
                    if name == "INFO" {
                        continue; // this tool's own measurements
                    }
                    *counts.lock().unwrap().entry(name).or_insert(0) += 1;
                }
            }));
        }
        Ok(CallCounter { counts, tasks })
    }

    /// The counts, by command.
    async fn stop(self) -> Vec<(String, u64)> {
        // What Redis ran before this call is printed by now, give or take the pipe.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for task in &self.tasks {
            task.abort();
        }
        let counts = self.counts.lock().unwrap();
        counts.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// The store's save script, as the store builds it, so the benchmark runs exactly it.
fn save_script() -> String {
    domino_server::store::redis::save_script_source()
}

/// Requests per second of one command under redis-benchmark.
fn redis_benchmark(args: &Args, url: &str, command: &[&str]) -> Result<f64, Failure> {
    let out = std::process::Command::new("redis-benchmark")
        .args(["-u", url, "-c", &args.redis_clients.to_string()])
        .args(["-n", &args.redis_requests.to_string(), "--csv"])
        .args(command)
        .output()
        .map_err(|e| format!("redis-benchmark: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "test","rps",<6 latencies>  then  "<command>","<rps>",...: the command may hold
    // commas and quotes (the event is JSON), so the figures are read from the right.
    text.lines()
        .nth(1)
        .and_then(|line| line.rsplit(',').nth(6))
        .and_then(|rps| rps.trim_matches('"').parse().ok())
        .ok_or_else(|| {
            format!(
                "redis-benchmark said: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// A real game's blob, last public event and kept events, for the benchmarked save.
struct Sample {
    blob: Vec<u8>,
    /// Bytes of the last public event as stored (version and payload).
    event_len: usize,
    /// Bytes of the events the game kept (each with its length).
    history_len: usize,
}

async fn redis_ceiling(
    args: &Args,
    url: &str,
    prefix: &str,
    sample: &Sample,
) -> Result<(), Failure> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let id = format!("ceiling-{}", std::process::id());
    let game = format!("{prefix}game:{{{id}}}");
    let idem = format!("{game}:idem");
    let window = format!("{game}:idem:0");
    let channel = format!("{prefix}events:{{{id}}}");
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(save_script())
        .query_async(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    // redis-benchmark takes its arguments as text: the blob, the events kept and the
    // event (binary) are stood in for by as many bytes of text (the script reads none of
    // them). Every call expects the header the value starts with and sets the same value
    // again, so it passes the check and writes everything a real save writes.
    let blob = "b".repeat(sample.history_len + sample.blob.len());
    let value = String::from_utf8(game_value(7, &History::default(), blob.as_bytes()))
        .map_err(|e| e.to_string())?;
    let header = &value[..value.len() - blob.len()];
    let event = "e".repeat(sample.event_len);
    let _: () = redis::cmd("SET")
        .arg(&game)
        .arg(&value)
        .query_async(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let get = redis_benchmark(args, url, &["GET", &game])?;
    let evalsha = redis_benchmark(
        args,
        url,
        &[
            "EVALSHA", &sha, "3", &game, &idem, &window, header, &value, "86400000", &channel,
            &event, "0", "", "", "32",
        ],
    )?;
    let _: () = redis::cmd("DEL")
        .arg(&game)
        .arg(&idem)
        .query_async(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "redis-benchmark, {} connections, {} requests each: GET of a game {get:.0} req/s, \
         EVALSHA of the store's save script ({} B blob, {} B of events kept, {} B event) \
         {evalsha:.0} req/s",
        args.redis_clients,
        args.redis_requests,
        sample.blob.len(),
        sample.history_len,
        event.len()
    );
    println!(
        "redis ceiling: {evalsha:.0} moves/s with one EVALSHA a move (a game this process wrote \
         last); {:.0} with a GET before it (a game it has not seen, and every move before issue 26)",
        1.0 / (1.0 / get + 1.0 / evalsha)
    );
    Ok(())
}

/// `MEMORY USAGE` of a game's keys: the game (its version, last events and blob in one
/// string) and its idempotency hash.
async fn usage(
    conn: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
    id: &str,
) -> Result<[u64; 2], Failure> {
    let mut out = [0; 2];
    for (i, suffix) in ["", ":idem"].iter().enumerate() {
        let bytes: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(format!("{prefix}game:{{{id}}}{suffix}"))
            .arg("SAMPLES")
            .arg(0)
            .query_async(conn)
            .await
            .map_err(|e| e.to_string())?;
        out[i] = bytes.unwrap_or(0);
    }
    Ok(out)
}

/// Plays one game to the end and reports what its keys take in Redis; returns the blob
/// and the last event as they were halfway through the game.
async fn stored_size(
    args: &Args,
    url: &str,
    prefix: &str,
    idempotency: bool,
) -> Result<Sample, Failure> {
    let client = Client {
        http: reqwest::Client::new(),
        base: args.url.trim_end_matches('/').to_owned(),
        preset: args.preset,
        idempotency,
        clock_secs: args.clock_secs,
        follow: false,
    };
    let redis = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut conn = redis
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let mut table = client.open("stored-size").await?;
    let key = format!("{prefix}game:{{{}}}", table.id);
    let mut during = vec![usage(&mut conn, prefix, &table.id).await?];
    let mut samples = Vec::new();
    while !table.replica.is_over() {
        client.step(&mut table).await?;
        during.push(usage(&mut conn, prefix, &table.id).await?);
        let value: Vec<u8> = redis::cmd("GET")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
        let game = read_game_value(&value).ok_or("the game's value does not read")?;
        samples.push(Sample {
            blob: game.blob.to_vec(),
            event_len: game.events.last().map_or(0, |e| e.len()),
            history_len: game.events.iter().map(|e| 3 + e.len()).sum(),
        });
    }
    let blob = samples.last().map_or(0, |s| s.blob.len());
    let total = |u: &[u64; 2]| u.iter().sum::<u64>();
    let end = during.last().expect("measured");
    let half = &during[during.len() / 2];
    let peak = during.iter().map(total).max().unwrap_or(0);
    let rounds = table.replica.round_number();
    let how = if idempotency {
        "with an Idempotency-Key on every move"
    } else {
        "no Idempotency-Key"
    };
    println!(
        "stored per finished {} game: {} bytes (game key {}, idempotency hash {}; {} moves in {rounds} rounds, blob {blob} B, {how})",
        args.preset.name(),
        total(end),
        end[0],
        end[1],
        table.moves,
    );
    println!(
        "stored per {} game in progress: {} bytes after {} of {} moves (game key {}, idempotency hash {}), at most {} bytes during the game",
        args.preset.name(),
        total(half),
        during.len() / 2,
        table.moves,
        half[0],
        half[1],
        peak
    );
    let half = samples.len() / 2;
    Ok(samples.swap_remove(half))
}

/// `--idle-clocks`: what games with running clocks cost a server that nobody calls.
async fn idle_clocks(args: &Args, games: usize) -> Result<(), Failure> {
    let client = Arc::new(Client {
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(args.clients)
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| e.to_string())?,
        base: args.url.trim_end_matches('/').to_owned(),
        preset: args.preset,
        idempotency: false,
        clock_secs: Some(86_400),
        follow: false,
    });
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let openers: Vec<_> = (0..args.clients)
        .map(|_| {
            let (client, next) = (client.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n as usize >= games {
                        break;
                    }
                    client.open(&format!("idle-{n}")).await?;
                }
                Ok::<(), Failure>(())
            })
        })
        .collect();
    for opener in openers {
        opener.await.map_err(|e| e.to_string())??;
    }
    println!(
        "idle clocks: {games} games with a clock running opened in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let calls = async || -> Option<f64> {
        let url = args.redis_url.as_deref()?;
        let mut conn = redis::Client::open(url)
            .ok()?
            .get_multiplexed_async_connection()
            .await
            .ok()?;
        let info: String = redis::cmd("INFO")
            .arg("stats")
            .query_async(&mut conn)
            .await
            .ok()?;
        info.lines()
            .find_map(|l| l.strip_prefix("total_commands_processed:"))
            .and_then(|v| v.trim().parse().ok())
    };
    let (before, calls_before) = (usage_now(args, &client.http).await, calls().await);
    let window = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    let (after, calls_after) = (usage_now(args, &client.http).await, calls().await);
    let secs = window.elapsed().as_secs_f64();
    let per_sec = |a: Option<f64>, b: Option<f64>, scale: f64| {
        a.zip(b).map_or("unknown".to_owned(), |(a, b)| {
            format!("{:.2}", (b - a) * scale / secs)
        })
    };
    println!(
        "idle for {secs:.1} s: server CPU {} ms/s, Redis CPU {} ms/s, Redis calls {} /s (the 4 INFO calls of this measurement included)",
        per_sec(before.server_cpu, after.server_cpu, 1000.0),
        per_sec(before.redis_cpu, after.redis_cpu, 1000.0),
        per_sec(calls_before, calls_after, 1.0),
    );
    Ok(())
}

/// `--probe`: requests of one path in a closed loop, and the server's CPU a request
/// (every request sent counts, warm-up included, as the moves' CPU does).
async fn probe(args: &Args, path: &str) -> Result<(), Failure> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.clients)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("{}{path}", args.url.trim_end_matches('/'));
    let before = process_cpu_of(args);
    let started = Instant::now();
    let counted_from = started + Duration::from_secs(args.warmup);
    let deadline = started + Duration::from_secs(args.seconds.max(args.warmup + 1));
    let tasks: Vec<_> = (0..args.clients)
        .map(|_| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                let (mut sent, mut counted, mut failed) = (0u64, Vec::new(), 0u64);
                while Instant::now() < deadline {
                    let at = Instant::now();
                    let ok = match http.get(&url).send().await {
                        Ok(answer) => answer.status().is_success() && answer.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    sent += 1;
                    if !ok {
                        failed += 1;
                    } else if at >= counted_from {
                        counted.push(u32::try_from(at.elapsed().as_micros()).unwrap_or(u32::MAX));
                    }
                }
                (sent, counted, failed)
            })
        })
        .collect();
    let (mut sent, mut latencies, mut failed) = (0u64, Vec::new(), 0u64);
    for task in tasks {
        let (s, c, f) = task.await.map_err(|e| e.to_string())?;
        sent += s;
        latencies.extend(c);
        failed += f;
    }
    let after = process_cpu_of(args);
    latencies.sort_unstable();
    let window = deadline.duration_since(counted_from).as_secs_f64();
    println!(
        "probe: GET {path}, {} clients, {} s ({} s warm-up not counted): {} requests = {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {failed} failed",
        args.clients,
        args.seconds,
        args.warmup,
        latencies.len(),
        latencies.len() as f64 / window,
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
    );
    if let (Some((u0, s0)), Some((u1, s1))) = (before, after) {
        let per = |a: f64, b: f64| (b - a) / sent.max(1) as f64 * 1e6;
        println!(
            "cpu per request ({sent} sent, warm-up included): server {:.1} us (kernel {:.1})",
            per(u0 + s0, u1 + s1),
            per(s0, s1)
        );
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("{failed} requests failed"))
    }
}

fn process_cpu_of(args: &Args) -> Option<(f64, f64)> {
    args.server_pid
        .and_then(|pid| process_cpu(&pid.to_string()))
}

async fn run(args: Args) -> Result<(), Failure> {
    if let Some(games) = args.idle_clocks {
        return idle_clocks(&args, games).await;
    }
    if let Some(path) = &args.probe {
        return probe(&args, path).await;
    }
    let loaded = load(&args).await;
    if let Some(url) = &args.redis_url {
        let prefix = args.key_prefix.as_deref().unwrap_or("domino:");
        let sample = stored_size(&args, url, prefix, false).await?;
        stored_size(&args, url, prefix, true).await?;
        redis_ceiling(&args, url, prefix, &sample).await?;
    }
    loaded
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args
        .rate
        .is_some_and(|rate| !(rate > 0.0 && rate.is_finite()))
    {
        eprintln!("load: --rate must be a positive number of moves a second");
        return std::process::ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("load: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
