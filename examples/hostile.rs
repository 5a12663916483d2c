//! Two hostile loads against a server running at its public defaults, each measured from
//! a bystander's side (issue "hold under hostile load, round 4"):
//! - `flood-start`: addresses 127.0.0.2.. make tournaments due at once that cancel
//!   themselves (too few entrants), as fast as their caps let them, while a bystander's
//!   tournament of levels is set to start a few seconds later: how late it starts.
//! - `fill`: two addresses make every kind of thing a store keeps (tables of bots alone
//!   that finish in milliseconds, waiting games, tournaments that cancel themselves) for
//!   `--secs`: the server's RSS against `MEMORY_MAX_BYTES`, and whether a bystander from a
//!   third address can still create a game.
//!
//! `scripts/bench-hostile.sh` builds and starts the server and runs both; by hand:
//! `cargo run --release --example hostile -- --url URL --server-pid PID fill`

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Parser, Debug)]
#[command(about = "Hostile loads at the defaults, seen from a bystander")]
struct Args {
    #[arg(long)]
    url: String,
    /// The server's process id, to read its memory and CPU.
    #[arg(long)]
    server_pid: u32,
    /// Requests each hostile address keeps in flight.
    #[arg(long, default_value_t = 16)]
    workers: usize,
    #[command(subcommand)]
    load: Load,
}

#[derive(Subcommand, Debug)]
enum Load {
    /// Tournaments due at once that cancel themselves, beside a bystander's start.
    FloodStart {
        #[arg(long, default_value_t = 3)]
        flooders: u8,
        /// The bystander's tournaments, one after another: each starts this long after it
        /// was made.
        #[arg(long, default_value_t = 5)]
        lead_secs: u64,
        /// Starts measured before the flood, and during it.
        #[arg(long, default_value_t = 5)]
        starts: usize,
    },
    /// Everything a store keeps, from two addresses, for `--secs`.
    Fill {
        #[arg(long, default_value_t = 600)]
        secs: u64,
        #[arg(long, default_value_t = 2)]
        hostiles: u8,
        /// The server's `MEMORY_MAX_BYTES`, to compare its RSS with.
        #[arg(long)]
        memory_max_bytes: u64,
        /// Seconds between the bystander's creates.
        #[arg(long, default_value_t = 5)]
        every_secs: u64,
    },
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

fn client(from: IpAddr) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .local_address(from)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(err)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Resident bytes of process `pid`, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// CPU seconds process `pid` has used, from /proc.
fn process_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|t| t.parse::<f64>().ok());
    (ticks(11).unwrap_or(0.0) + ticks(12).unwrap_or(0.0)) / 100.0
}

/// One request: its status and body (the body's JSON, or Null).
async fn send(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    key: Option<&str>,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let mut req = http.request(method, url);
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    if let Some(body) = body {
        req = req.json(body);
    }
    let res = req.send().await.map_err(err)?;
    let status = res.status().as_u16();
    let text = res.text().await.map_err(err)?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

async fn post(
    http: &reqwest::Client,
    url: String,
    key: Option<&str>,
    body: &Value,
) -> Result<(u16, Value), String> {
    send(http, reqwest::Method::POST, url, key, Some(body)).await
}

/// Answers counted by what was asked and how it was answered ("201", "429 too_many_games").
#[derive(Default)]
struct Tally(BTreeMap<String, u64>);

impl Tally {
    fn count(&mut self, what: &str, status: u16, body: &Value) {
        let code = body["code"].as_str().unwrap_or("");
        let key = if code.is_empty() {
            format!("{what} {status}")
        } else {
            format!("{what} {status} {code}")
        };
        *self.0.entry(key).or_default() += 1;
    }
}

/// Up to `n` players made from one address (the rest refused by `MAX_PLAYERS_PER_IP`):
/// their keys.
async fn players(
    http: &reqwest::Client,
    url: &str,
    n: usize,
    tag: &str,
) -> Result<Vec<String>, String> {
    let mut keys = Vec::new();
    for i in 0..n {
        let name = format!(
            "{tag}{}x{i}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let (status, body) = post(
            http,
            format!("{url}/v1/players"),
            None,
            &json!({"name": name, "bot": true}),
        )
        .await?;
        match body["key"].as_str() {
            Some(key) if status == 201 => keys.push(key.to_owned()),
            _ => break,
        }
    }
    Ok(keys)
}

/// A tournament due at once with nobody entered: it cancels itself when swept.
fn self_canceling() -> Value {
    json!({"name": "flood", "preset": "block", "format": "round_robin",
        "rules": {"target": null, "rounds": 1}, "starts_at_ms": 0})
}

/// Makes self-canceling tournaments from `from` with its players, `workers` at once, until
/// `stop`: every answer tallied.
async fn flood_tournaments(
    url: String,
    from: IpAddr,
    workers: usize,
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
) -> Result<(), String> {
    let http = client(from)?;
    let keys = players(&http, &url, 20, "fl").await?;
    if keys.is_empty() {
        return Err(format!("{from}: no player could be made"));
    }
    let keys = Arc::new(keys);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (http, url, keys, stop, tally) = (
            http.clone(),
            url.clone(),
            keys.clone(),
            stop.clone(),
            tally.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                let key = &keys[i % keys.len()];
                i += workers;
                let (status, body) = post(
                    &http,
                    format!("{url}/v1/tournaments"),
                    Some(key),
                    &self_canceling(),
                )
                .await?;
                tally.lock().await.count("tournament", status, &body);
                if status == 429 && body["code"] == "rate_limited" {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(err)??;
    }
    Ok(())
}

/// The bystander's tournament of two levels, starting `lead` after it is made: how late
/// (ms) its status left `registering` after `starts_at_ms`, polled every 20 ms.
async fn late_start(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    lead: Duration,
) -> Result<i64, String> {
    let starts_at = now_ms() + lead.as_millis() as u64;
    let body = json!({"name": "bystander's", "preset": "block", "format": "round_robin",
        "rules": {"target": null, "rounds": 1}, "levels": ["random", "greedy"],
        "starts_at_ms": starts_at});
    let (status, t) = post(http, format!("{url}/v1/tournaments"), Some(key), &body).await?;
    if status != 201 {
        return Err(format!("the bystander's tournament: {status} {t}"));
    }
    let id = t["id"].as_str().ok_or("no id")?.to_owned();
    let deadline = Instant::now() + lead + Duration::from_secs(120);
    loop {
        let (_, t) = send(
            http,
            reqwest::Method::GET,
            format!("{url}/v1/tournaments/{id}"),
            None,
            None,
        )
        .await?;
        if t["status"] != "registering" {
            let late = now_ms() as i64 - starts_at as i64;
            // Canceled at once, so that the bystander's slot frees for the next.
            let _ = send(
                http,
                reqwest::Method::DELETE,
                format!("{url}/v1/tournaments/{id}"),
                Some(key),
                None,
            )
            .await;
            return Ok(late);
        }
        if Instant::now() > deadline {
            return Err("the bystander's tournament never started".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn spread(lates: &[i64]) -> String {
    let mut sorted = lates.to_vec();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    let max = sorted.last().copied().unwrap_or(0);
    format!(
        "{} starts: median {median} ms, max {max} ms late ({sorted:?})",
        sorted.len()
    )
}

async fn flood_start(
    args: &Args,
    flooders: u8,
    lead: Duration,
    starts: usize,
) -> Result<(), String> {
    let bystander = client(loopback(1))?;
    let key = players(&bystander, &args.url, 1, "by")
        .await?
        .pop()
        .ok_or("the bystander could not make a player")?;
    let mut quiet = Vec::new();
    for _ in 0..starts {
        quiet.push(late_start(&bystander, &args.url, &key, lead).await?);
    }
    println!("no flood: {}", spread(&quiet));

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let floods: Vec<_> = (0..flooders)
        .map(|f| {
            tokio::spawn(flood_tournaments(
                args.url.clone(),
                loopback(2 + f),
                args.workers,
                stop.clone(),
                tally.clone(),
            ))
        })
        .collect();
    // The flood's players are made, and its tournaments due, before the first start.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let began = Instant::now();
    let cpu = process_cpu(args.server_pid);
    let mut flooded = Vec::new();
    for _ in 0..starts {
        flooded.push(late_start(&bystander, &args.url, &key, lead).await?);
    }
    let cpu = process_cpu(args.server_pid) - cpu;
    let secs = began.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for f in floods {
        f.await.map_err(err)??;
    }
    println!("{flooders} addresses flooding: {}", spread(&flooded));
    let tally = tally.lock().await;
    let made = tally.0.get("tournament 201").copied().unwrap_or(0);
    println!(
        "the flood: {made} self-canceling tournaments made in {secs:.0} s ({:.0} a second), \
         server CPU {:.0}% of a core; answers: {:?}",
        made as f64 / secs,
        cpu * 100.0 / secs,
        tally.0
    );
    Ok(())
}

/// One hostile address: `workers` loops, each making in turn a table of bots alone that
/// finishes at once, a waiting game and a self-canceling tournament, until `stop`.
async fn hostile(
    url: String,
    from: IpAddr,
    workers: usize,
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
) -> Result<(), String> {
    let http = client(from)?;
    let keys = Arc::new(players(&http, &url, 20, "ho").await?);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (http, url, keys, stop, tally) = (
            http.clone(),
            url.clone(),
            keys.clone(),
            stop.clone(),
            tally.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let table = json!({"preset": "block", "rules": {"target": null, "rounds": 1},
                "bots": [{"seat": 0, "level": "random"}, {"seat": 1, "level": "random"}]});
            let waiting = json!({"preset": "block"});
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let sent = match i % 3 {
                    0 if !keys.is_empty() => {
                        let key = &keys[i % keys.len()];
                        let sent = post(
                            &http,
                            format!("{url}/v1/tournaments"),
                            Some(key),
                            &self_canceling(),
                        )
                        .await;
                        ("tournament", sent)
                    }
                    1 => (
                        "waiting game",
                        post(&http, format!("{url}/v1/games"), None, &waiting).await,
                    ),
                    _ => (
                        "bot table",
                        post(&http, format!("{url}/v1/games"), None, &table).await,
                    ),
                };
                // A request the server did not answer (a connection refused or timed
                // out) is counted, and the load goes on.
                let (what, (status, body)) = match sent {
                    (what, Ok(answer)) => (what, answer),
                    (what, Err(e)) => (what, (0, json!({"code": format!("no answer: {e}")}))),
                };
                tally.lock().await.count(what, status, &body);
                if status == 429 || status == 503 || status == 0 {
                    // A refusal costs the server little: ask again soon, not at once.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(err)??;
    }
    Ok(())
}

async fn fill(
    args: &Args,
    secs: u64,
    hostiles: u8,
    memory_max_bytes: u64,
    every: Duration,
) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let loads: Vec<_> = (0..hostiles)
        .map(|h| {
            tokio::spawn(hostile(
                args.url.clone(),
                loopback(2 + h),
                args.workers,
                stop.clone(),
                tally.clone(),
            ))
        })
        .collect();
    let bystander = client(loopback(2 + hostiles))?;
    // A table of bots that finishes at once: the bystander holds no waiting game and no
    // game in play, so only the store's room (or its own kept games) could refuse it.
    let game = json!({"preset": "block", "rules": {"target": null, "rounds": 1},
        "bots": [{"seat": 0, "level": "greedy"}, {"seat": 1, "level": "greedy"}]});
    let began = Instant::now();
    let cpu = process_cpu(args.server_pid);
    let (mut max_rss, mut created, mut refused) = (0u64, 0u64, Vec::new());
    let mut next_create = Instant::now();
    let mut next_print = Instant::now();
    while began.elapsed() < Duration::from_secs(secs) {
        max_rss = max_rss.max(rss_bytes(args.server_pid));
        if Instant::now() >= next_create {
            next_create += every;
            let (status, body) = post(&bystander, format!("{}/v1/games", args.url), None, &game)
                .await
                .unwrap_or_else(|e| (0, json!({"code": format!("no answer: {e}")})));
            if status == 201 {
                created += 1;
            } else {
                refused.push(format!(
                    "{:.0} s: {status} {body}",
                    began.elapsed().as_secs_f64()
                ));
            }
        }
        if Instant::now() >= next_print {
            next_print += Duration::from_secs(60);
            let made: u64 = tally
                .lock()
                .await
                .0
                .iter()
                .filter(|(k, _)| k.ends_with(" 201"))
                .map(|(_, n)| n)
                .sum();
            eprintln!(
                "{:>4.0} s: RSS {:.1} MiB (max {:.1}), {made} made by the hostile addresses",
                began.elapsed().as_secs_f64(),
                rss_bytes(args.server_pid) as f64 / 1048576.0,
                max_rss as f64 / 1048576.0
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cpu = process_cpu(args.server_pid) - cpu;
    stop.store(true, Ordering::Relaxed);
    for l in loads {
        l.await.map_err(err)??;
    }
    let (status, body) = post(&bystander, format!("{}/v1/games", args.url), None, &game).await?;
    let mib = |b: u64| b as f64 / 1048576.0;
    println!(
        "{hostiles} hostile addresses for {secs} s: RSS max {:.1} MiB, at the end {:.1} MiB, \
         MEMORY_MAX_BYTES {:.1} MiB: max {:.2}x; server CPU {:.0}% of a core",
        mib(max_rss),
        mib(rss_bytes(args.server_pid)),
        mib(memory_max_bytes),
        max_rss as f64 / memory_max_bytes as f64,
        cpu * 100.0 / secs as f64
    );
    println!(
        "the bystander (another address): {created} of {} creates answered 201 during the \
         load, and after it {status}{}",
        created + refused.len() as u64,
        if status == 201 {
            String::new()
        } else {
            format!(" {body}")
        }
    );
    for r in refused.iter().take(5) {
        println!("  refused at {r}");
    }
    println!("the hostile answers: {:?}", tally.lock().await.0);
    Ok(())
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let done = match args.load {
        Load::FloodStart {
            flooders,
            lead_secs,
            starts,
        } => flood_start(&args, flooders, Duration::from_secs(lead_secs), starts).await,
        Load::Fill {
            secs,
            hostiles,
            memory_max_bytes,
            every_secs,
        } => {
            fill(
                &args,
                secs,
                hostiles,
                memory_max_bytes,
                Duration::from_secs(every_secs),
            )
            .await
        }
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.trim());
    if let Err(e) = done {
        eprintln!("hostile: {e}");
        std::process::exit(1);
    }
}
