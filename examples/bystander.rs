//! A bystander's table beside many tables of bots alone (issue 44): how long its first
//! move waits.
//!
//! Against a running server started with `RATE_LIMIT_PROXY_HOPS=1` (so the tables'
//! `X-Forwarded-For` names their address) and its other settings at their defaults:
//!
//! `cargo run --release --example bystander -- --url http://127.0.0.1:8080`
//!
//! 1. **The crowd**: `--tables` tables of bots alone (`--level` on each of `--seats`
//!    seats, `--preset` to `--target` points), made by one address (`10.0.0.1`, within
//!    `MAX_GAMES_PER_IP`), then `--settle` seconds for them to fill every place a process
//!    plays tables in.
//! 2. **The bystander**: `--samples` times, one after another, another address
//!    (`10.0.0.2`) makes one table of the same bots and waits (long polls) for its first
//!    move: the time from its create's answer to the view that shows it moved.
//!
//! It prints the machine, the server, each wait (with the crowd's tables still playing)
//! and their median and maximum.

use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "How long a bystander's table of bots waits for its first move")]
struct Args {
    /// Base URL of the running server.
    #[arg(long)]
    url: String,
    /// Tables of bots alone made first, by one address.
    #[arg(long, default_value_t = 64)]
    tables: usize,
    /// The bots' level at every table.
    #[arg(long, default_value = "expert")]
    level: String,
    #[arg(long, default_value = "draw")]
    preset: String,
    /// Seats at every table, each a bot.
    #[arg(long, default_value_t = 4)]
    seats: u8,
    /// The points that win a match (long matches keep the crowd playing through the samples).
    #[arg(long, default_value_t = 1000)]
    target: u32,
    /// Seconds between the crowd's creates and the first bystander.
    #[arg(long, default_value_t = 5)]
    settle: u64,
    /// Bystander tables, one after another.
    #[arg(long, default_value_t = 5)]
    samples: usize,
    /// The longest a bystander waits before it is counted as never served.
    #[arg(long, default_value_t = 120)]
    give_up: u64,
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_owned();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!("{model}, {cores} cores, load average {}", load.join(" "))
}

/// Makes a table of bots alone as `address`; its id.
async fn table(http: &reqwest::Client, args: &Args, address: &str) -> String {
    let res = http
        .post(format!("{}/v1/games", args.url))
        .header("X-Forwarded-For", address)
        .json(&json!({
            "preset": args.preset,
            "seats": args.seats,
            "rules": {"target": args.target},
            "bots": (0..args.seats)
                .map(|seat| json!({"seat": seat, "level": args.level}))
                .collect::<Vec<_>>(),
        }))
        .send()
        .await
        .expect("the server answers");
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert!(
        status.is_success(),
        "a table's create answered {status}: {body}"
    );
    body["game_id"].as_str().expect("a game's id").to_owned()
}

/// How many of `ids` are still playing.
async fn playing(http: &reqwest::Client, url: &str, ids: &[String]) -> usize {
    let mut n = 0;
    for id in ids {
        let view: Value = match http.get(format!("{url}/v1/games/{id}")).send().await {
            Ok(res) => res.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        n += usize::from(view["status"] == "playing");
    }
    n
}

/// Waits for game `id`'s first move (its version past its creation's, 1) by long polls;
/// `None` past `give_up`.
async fn first_move(http: &reqwest::Client, url: &str, id: &str, give_up: Duration) -> Option<()> {
    let deadline = Instant::now() + give_up;
    while Instant::now() < deadline {
        let view: Value = http
            .get(format!("{url}/v1/games/{id}?after=1&wait=10"))
            .header("X-Forwarded-For", "10.0.0.2")
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        if view["version"].as_u64().unwrap_or(0) > 1 {
            return Some(());
        }
    }
    None
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let ready: Value = http
        .get(format!("{}/readyz", args.url))
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .unwrap_or(Value::Null);
    println!("machine: {}", machine());
    println!("server: {} ({ready})", args.url);
    println!(
        "crowd: {} tables of {} {} bots ({} to {}), then {} s",
        args.tables, args.seats, args.level, args.preset, args.target, args.settle
    );
    let mut crowd = Vec::new();
    for _ in 0..args.tables {
        crowd.push(table(&http, &args, "10.0.0.1").await);
    }
    tokio::time::sleep(Duration::from_secs(args.settle)).await;
    let mut waits = Vec::new();
    let mut never = 0;
    for sample in 1..=args.samples {
        let id = table(&http, &args, "10.0.0.2").await;
        let started = Instant::now();
        match first_move(&http, &args.url, &id, Duration::from_secs(args.give_up)).await {
            Some(()) => {
                let took = started.elapsed();
                let left = playing(&http, &args.url, &crowd).await;
                println!(
                    "bystander {sample}: first move after {:.3} s ({left} of the crowd's tables playing)",
                    took.as_secs_f64()
                );
                waits.push(took);
            }
            None => {
                println!("bystander {sample}: no move in {} s", args.give_up);
                never += 1;
            }
        }
    }
    waits.sort_unstable();
    if let (Some(median), Some(max)) = (waits.get(waits.len() / 2), waits.last()) {
        println!(
            "first move: median {:.3} s, max {:.3} s over {} bystanders ({never} never moved)",
            median.as_secs_f64(),
            max.as_secs_f64(),
            waits.len()
        );
    } else {
        println!(
            "first move: no bystander moved ({never} waited {} s)",
            args.give_up
        );
    }
}
