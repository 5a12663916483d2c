//! What a webhook seat costs the server beside a pulled one (issue 54), in one server
//! process: `--players` players, paired, play each other in challenge games for `--secs`,
//! first with every player's webhook on one local bot server (phase "called": the server
//! POSTs each turn's view and plays the answer), then with as many other players pulling
//! (phase "pulled": each seat long-polls `GET /v1/games/{id}?after=V` and posts its
//! move). Both play the first of `legal_moves`, in games of the same preset and rounds; a
//! pair starts its next game when one ends. Per phase: moves a second, and the server's
//! CPU (from /proc, `--server-pid`) over the moves it applied (`/metrics`,
//! `domino_moves_applied_total`), both read at the phase's start and end; then the ratio
//! called / pulled. The called phase adds the calls by outcome, the call latency (the
//! server's histogram, and each webhook's own p50/p99 from `GET /v1/players/me/webhook`),
//! and the server's turnaround as the bot sees it: from its answer to the next call of
//! the same game.
//!
//! `scripts/bench-webhook.sh` builds and starts the server (`WEBHOOK_ALLOW_PRIVATE=true`)
//! and runs this; by hand:
//! `cargo run --release --example webhooks -- --url URL --server-pid PID`

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[derive(Parser, Debug)]
#[command(about = "Server CPU a webhook move beside a pulled move, in one server process")]
struct Args {
    #[arg(long)]
    url: String,
    /// The server's process id, to read its CPU time.
    #[arg(long)]
    server_pid: u32,
    /// Players in each phase, paired (an even number).
    #[arg(long, default_value_t = 64)]
    players: usize,
    /// Seconds each phase is measured.
    #[arg(long, default_value_t = 20)]
    secs: u64,
    #[arg(long, default_value = "block")]
    preset: String,
    /// Rounds of a game: more rounds spread a game's making (challenge, accept) over more
    /// moves, so that the figures are the moves'.
    #[arg(long, default_value_t = 4)]
    rounds: u32,
    /// The phases run, in order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "called,pulled"
    )]
    phases: Vec<Phase>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum)]
enum Phase {
    Called,
    Pulled,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// CPU seconds process `pid` has used (user and system), from /proc.
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|t| t.parse::<f64>().ok());
    (ticks(11).unwrap_or(0.0) + ticks(12).unwrap_or(0.0)) / 100.0
}

/// CPU seconds every core has been busy, from /proc/stat.
fn machine_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user, nice, system, irq, softirq, steal: all but idle (3) and iowait (4).
    let busy: f64 = ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4 && *i < 8)
        .map(|(_, t)| t)
        .sum();
    busy / 100.0
}

/// The samples of an OpenMetrics text whose names (labels included) start with `prefix`.
fn samples(text: &str, prefix: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            Some((key.to_owned(), value.trim().parse().ok()?))
        })
        .collect()
}

/// What the server had done at one moment: its CPU, its metrics, when.
struct Mark {
    at: Instant,
    cpu: f64,
    /// This process's CPU (the clients and the bot server) and the whole machine's: what
    /// else ran beside the server.
    own_cpu: f64,
    machine_cpu: f64,
    metrics: String,
}

/// One request: its status and body (the body's JSON, or Null).
async fn send(req: reqwest::RequestBuilder) -> Result<(u16, Value), String> {
    let res = req.send().await.map_err(err)?;
    let status = res.status().as_u16();
    let text = res.text().await.map_err(err)?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// A request that must succeed: its body.
async fn ok(req: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
    match send(req).await? {
        (200..=299, body) => Ok(body),
        (status, body) => Err(format!("{what}: {status} {body}")),
    }
}

#[derive(Clone)]
struct Player {
    name: String,
    key: String,
}

/// The bench's client of the server, and the server's marks.
struct Bench {
    http: reqwest::Client,
    url: String,
    pid: u32,
}

impl Bench {
    async fn mark(&self) -> Result<Mark, String> {
        // CPU first: the /metrics request is then the mark's own cost, not the phase's.
        let cpu = process_cpu(self.pid);
        let own_cpu = process_cpu(std::process::id());
        let machine_cpu = machine_cpu();
        let at = Instant::now();
        let metrics = self
            .http
            .get(format!("{}/metrics", self.url))
            .send()
            .await
            .and_then(|res| res.error_for_status())
            .map_err(err)?
            .text()
            .await
            .map_err(err)?;
        Ok(Mark {
            at,
            cpu,
            own_cpu,
            machine_cpu,
            metrics,
        })
    }

    async fn players(&self, n: usize, tag: &str) -> Result<Vec<Player>, String> {
        let run = &uuid::Uuid::new_v4().simple().to_string()[..6];
        let mut players = Vec::new();
        for i in 0..n {
            let name = format!("{tag}{run}x{i}");
            let made = ok(
                self.http
                    .post(format!("{}/v1/players", self.url))
                    .json(&json!({"name": name, "bot": true})),
                "a player",
            )
            .await?;
            let key = made["key"].as_str().ok_or("a player without a key")?;
            players.push(Player {
                name,
                key: key.to_owned(),
            });
        }
        Ok(players)
    }

    /// A challenge from `a` to `b`, accepted: the game's id.
    async fn game(&self, a: &Player, b: &Player, rules: &Value) -> Result<String, String> {
        let challenge = ok(
            self.http
                .post(format!("{}/v1/challenges", self.url))
                .bearer_auth(&a.key)
                .json(&json!({"opponents": [b.name], "preset": rules["preset"],
                    "rules": rules["rules"]})),
            "a challenge",
        )
        .await?;
        let id = challenge["id"]
            .as_str()
            .ok_or("a challenge without an id")?;
        let accepted = ok(
            self.http
                .post(format!("{}/v1/challenges/{id}/accept", self.url))
                .bearer_auth(&b.key),
            "an accept",
        )
        .await?;
        Ok(accepted["game_id"]
            .as_str()
            .ok_or_else(|| format!("accepted without a game: {accepted}"))?
            .to_owned())
    }

    /// Plays `key`'s seat of game `id` by pulling until the game ends: the moves it made.
    async fn pull(&self, id: &str, key: &str) -> Result<u64, String> {
        let game = format!("{}/v1/games/{id}", self.url);
        let mut view = ok(self.http.get(&game).bearer_auth(key), "a view").await?;
        let mut moves = 0;
        while view["status"] != "finished" {
            if view["your_turn"] == true {
                let (status, body) = send(
                    self.http
                        .post(format!("{game}/moves"))
                        .bearer_auth(key)
                        .json(&view["legal_moves"][0]),
                )
                .await?;
                view = match status {
                    200..=299 => {
                        moves += 1;
                        body
                    }
                    // The view was out of date: read it again.
                    409 => ok(self.http.get(&game).bearer_auth(key), "a view").await?,
                    _ => return Err(format!("a move: {status} {body}")),
                };
            } else {
                let version = &view["version"];
                view = ok(
                    self.http
                        .get(format!("{game}?after={version}&wait=30"))
                        .bearer_auth(key),
                    "a long poll",
                )
                .await?;
            }
        }
        Ok(moves)
    }
}

/// The bot server's state: its calls, and when it last answered each game.
#[derive(Default)]
struct Bot {
    moves: AtomicU64,
    answered: Mutex<HashMap<String, Instant>>,
    /// From an answer to the next call of the same game, in microseconds.
    turnarounds: Mutex<Vec<u64>>,
}

/// Every webhook's bot: echoes a ping's challenge, plays the first legal move.
async fn answer(body: web::Bytes, bot: web::Data<Bot>) -> HttpResponse {
    let Ok(call) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if call["type"] == "ping" {
        return HttpResponse::Ok().json(json!({"challenge": call["challenge"]}));
    }
    let game = call["game_id"].as_str().unwrap_or_default().to_owned();
    let now = Instant::now();
    let last = bot.answered.lock().expect("not poisoned").insert(game, now);
    if let Some(last) = last {
        let took = now.duration_since(last).as_micros() as u64;
        bot.turnarounds.lock().expect("not poisoned").push(took);
    }
    bot.moves.fetch_add(1, Ordering::Relaxed);
    HttpResponse::Ok().json(&call["view"]["legal_moves"][0])
}

/// Starts the bot server on a free loopback port: its URL.
fn start_bot(bot: web::Data<Bot>) -> Result<String, String> {
    let server = HttpServer::new(move || {
        App::new()
            .app_data(bot.clone())
            .default_service(web::to(answer))
    })
    // One worker, as a small bot host would run: the bench's two cores are shared.
    .workers(1)
    .bind(("127.0.0.1", 0))
    .map_err(err)?;
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());
    Ok(format!("http://127.0.0.1:{port}/move"))
}

/// The game ids of the `game_finished` events on a player's stream `res`, as they come.
async fn finished_games(
    mut res: reqwest::Response,
    tx: mpsc::UnboundedSender<String>,
) -> Result<(), String> {
    let mut pending = String::new();
    while let Some(chunk) = res.chunk().await.map_err(err)? {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find("\n\n") {
            let frame: String = pending.drain(..end + 2).collect();
            for data in frame.lines().filter_map(|l| l.strip_prefix("data:")) {
                let event: Value = serde_json::from_str(data.trim()).unwrap_or(Value::Null);
                if event["type"] == "game_finished"
                    && let Some(id) = event["game_id"].as_str()
                    && tx.send(id.to_owned()).is_err()
                {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// One pair playing game after game until `stop`: the games they finished.
async fn pair(
    bench: Arc<Bench>,
    phase: Phase,
    a: Player,
    b: Player,
    rules: Value,
    stop: Arc<AtomicBool>,
) -> Result<u64, String> {
    // Called, nobody plays the games here: the challenger's stream says when one ended.
    let mut finished = None;
    if phase == Phase::Called {
        let res = bench
            .http
            .get(format!("{}/v1/players/me/events", bench.url))
            .bearer_auth(&a.key)
            .send()
            .await
            .and_then(|res| res.error_for_status())
            .map_err(err)?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(finished_games(res, tx));
        finished = Some(rx);
    }
    let mut games = 0;
    while !stop.load(Ordering::Relaxed) {
        let id = bench.game(&a, &b, &rules).await?;
        match finished.as_mut() {
            Some(rx) => {
                let ended = tokio::time::timeout(Duration::from_secs(120), async {
                    while let Some(done) = rx.recv().await {
                        if done == id {
                            return true;
                        }
                    }
                    false
                });
                if !ended.await.unwrap_or(false) {
                    return Err(format!("called game {id} did not end within 120 s"));
                }
            }
            None => {
                tokio::try_join!(bench.pull(&id, &a.key), bench.pull(&id, &b.key))?;
            }
        }
        games += 1;
    }
    Ok(games)
}

/// A histogram's quantile `q` over the samples between two marks, as the upper bound of
/// the bucket it falls in (`name`: the histogram's, without `_bucket`).
fn bucket_quantile(before: &str, after: &str, name: &str, q: f64) -> Option<String> {
    let prefix = format!("{name}_bucket{{");
    let (b, a) = (samples(before, &prefix), samples(after, &prefix));
    let mut buckets: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|(key, n)| {
            let le = key.split("le=\"").nth(1)?.split('"').next()?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, n - b.get(key).copied().unwrap_or(0.0)))
        })
        .collect();
    buckets.sort_by(|x, y| x.0.total_cmp(&y.0));
    let total = buckets.last()?.1;
    let (le, _) = buckets
        .iter()
        .find(|(_, n)| *n >= q * total && total > 0.0)?;
    Some(if le.is_finite() {
        format!("<= {} ms", le * 1000.0)
    } else {
        "over the last bucket".into()
    })
}

/// The value at quantile `q` of `sorted`.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// One phase's figures: moves and CPU between the marks.
struct Measured {
    moves: f64,
    cpu: f64,
    secs: f64,
}

impl Measured {
    fn of(start: &Mark, end: &Mark) -> Measured {
        let moves = |m: &Mark| {
            samples(&m.metrics, "domino_moves_applied_total ")
                .values()
                .sum::<f64>()
        };
        Measured {
            moves: moves(end) - moves(start),
            cpu: end.cpu - start.cpu,
            secs: end.at.duration_since(start.at).as_secs_f64(),
        }
    }

    fn us_a_move(&self) -> f64 {
        self.cpu * 1e6 / self.moves.max(1.0)
    }
}

async fn phase(
    bench: &Arc<Bench>,
    args: &Args,
    phase: Phase,
    players: Vec<Player>,
    bot: &Bot,
) -> Result<Measured, String> {
    let rules = json!({"preset": args.preset, "rules": {"target": null, "rounds": args.rounds}});
    let stop = Arc::new(AtomicBool::new(false));
    bot.turnarounds.lock().expect("not poisoned").clear();
    let bot_moves = bot.moves.load(Ordering::Relaxed);
    let start = bench.mark().await?;
    let mut players = players.into_iter();
    let mut pairs = Vec::new();
    while let (Some(a), Some(b)) = (players.next(), players.next()) {
        pairs.push(tokio::spawn(pair(
            bench.clone(),
            phase,
            a,
            b,
            rules.clone(),
            stop.clone(),
        )));
    }
    tokio::time::sleep(Duration::from_secs(args.secs)).await;
    let end = bench.mark().await?;
    let bot_moves = bot.moves.load(Ordering::Relaxed) - bot_moves;
    let mut turnarounds = bot.turnarounds.lock().expect("not poisoned").clone();
    // The games under way finish, unmeasured, before the next phase.
    stop.store(true, Ordering::Relaxed);
    let mut games = 0;
    for p in pairs {
        games += p.await.map_err(err)??;
    }
    let m = Measured::of(&start, &end);
    println!(
        "{phase:?}: {:.0} moves in {:.1} s = {:.0} moves/s; server CPU {:.2} s ({:.0}% of a \
         core) = {:.1} us a move; {games} games finished by {} pairs",
        m.moves,
        m.secs,
        m.moves / m.secs,
        m.cpu,
        m.cpu * 100.0 / m.secs,
        m.us_a_move(),
        args.players / 2,
    );
    let own = end.own_cpu - start.own_cpu;
    println!(
        "  beside it: this bench's clients and bot server {:.0}% of a core, everything else \
         {:.0}%",
        own * 100.0 / m.secs,
        (end.machine_cpu - start.machine_cpu - m.cpu - own).max(0.0) * 100.0 / m.secs
    );
    if phase == Phase::Called {
        let calls = |mark: &Mark| samples(&mark.metrics, "domino_webhook_calls_total{");
        let (before, after) = (calls(&start), calls(&end));
        let outcomes: Vec<String> = after
            .iter()
            .map(|(k, n)| {
                let outcome = k.split('"').nth(1).unwrap_or(k);
                format!("{outcome} {}", n - before.get(k).copied().unwrap_or(0.0))
            })
            .collect();
        println!(
            "  domino_webhook_calls_total: {}; moves the bot answered: {bot_moves}",
            outcomes.join(", ")
        );
        let hist = "domino_webhook_call_seconds";
        println!(
            "  call latency (the server's histogram): p50 {}, p99 {}",
            bucket_quantile(&start.metrics, &end.metrics, hist, 0.5).unwrap_or_default(),
            bucket_quantile(&start.metrics, &end.metrics, hist, 0.99).unwrap_or_default()
        );
        turnarounds.sort_unstable();
        println!(
            "  turnaround (the bot's answer to the next call of its game): p50 {:.2} ms, \
             p99 {:.2} ms, {} samples",
            quantile(&turnarounds, 0.5) as f64 / 1000.0,
            quantile(&turnarounds, 0.99) as f64 / 1000.0,
            turnarounds.len()
        );
    }
    Ok(m)
}

/// Each webhook's own figures (`GET /v1/players/me/webhook`), summed over the players.
async fn webhook_report(bench: &Bench, players: &[Player]) -> Result<(), String> {
    let (mut p50s, mut p99s, mut calls, mut failures) = (Vec::new(), Vec::new(), 0, 0);
    for p in players {
        let state = ok(
            bench
                .http
                .get(format!("{}/v1/players/me/webhook", bench.url))
                .bearer_auth(&p.key),
            "a webhook",
        )
        .await?;
        p50s.extend(state["latency_ms"]["p50"].as_u64());
        p99s.extend(state["latency_ms"]["p99"].as_u64());
        calls += state["calls"].as_u64().unwrap_or(0);
        failures += state["failures"].as_u64().unwrap_or(0);
    }
    p50s.sort_unstable();
    p99s.sort_unstable();
    println!(
        "  GET /v1/players/me/webhook over {} webhooks (their last 200 calls): p50 median {} ms \
         (max {}), p99 median {} ms (max {}); {calls} calls, {failures} failures",
        players.len(),
        quantile(&p50s, 0.5),
        p50s.last().unwrap_or(&0),
        quantile(&p99s, 0.5),
        p99s.last().unwrap_or(&0),
    );
    Ok(())
}

async fn run(args: Args) -> Result<(), String> {
    if args.players < 2 || args.players % 2 != 0 {
        return Err("--players: an even number, at least 2".into());
    }
    let bench = Arc::new(Bench {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(err)?,
        url: args.url.clone(),
        pid: args.server_pid,
    });
    let bot = web::Data::new(Bot::default());
    let bot_url = start_bot(bot.clone())?;
    let mut figures = HashMap::new();
    for &which in &args.phases {
        let tag = if which == Phase::Called { "wc" } else { "wp" };
        let players = bench.players(args.players, tag).await?;
        if which == Phase::Called {
            for p in &players {
                let set = ok(
                    bench
                        .http
                        .put(format!("{}/v1/players/me/webhook", bench.url))
                        .bearer_auth(&p.key)
                        .json(&json!({"url": bot_url})),
                    "a webhook",
                )
                .await?;
                if set["status"] != "active" {
                    return Err(format!("a webhook not active: {set}"));
                }
            }
        }
        figures.insert(
            which,
            phase(&bench, &args, which, players.clone(), &bot).await?,
        );
        if which == Phase::Called {
            webhook_report(&bench, &players).await?;
        }
    }
    // What the server spends with nothing to do (its sweeps), beside the phases' CPU.
    let idle = process_cpu(args.server_pid);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let idle = (process_cpu(args.server_pid) - idle) / 5.0;
    println!("idle: server CPU {:.1} ms a second", idle * 1000.0);
    if let (Some(called), Some(pulled)) = (figures.get(&Phase::Called), figures.get(&Phase::Pulled))
    {
        println!(
            "called / pulled server CPU a move: {:.1} / {:.1} us = {:.2}x (goal: at most 1.5x)",
            called.us_a_move(),
            pulled.us_a_move(),
            called.us_a_move() / pulled.us_a_move()
        );
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    let done = run(Args::parse()).await;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.trim());
    if let Err(e) = done {
        eprintln!("webhooks: {e}");
        std::process::exit(1);
    }
}
