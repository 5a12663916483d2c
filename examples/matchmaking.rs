//! Matchmaking load: players seek games through several server processes sharing one
//! store, and the figures say how many games the pairing makes a second and how long a
//! seek waits for its game.
//!
//! `scripts/bench-seeks.sh` builds the server, starts two processes on one Redis and runs
//! this; by hand:
//!
//! `cargo run --release --example matchmaking -- --url http://127.0.0.1:8080
//!  --url http://127.0.0.1:8081 --players 200 --seconds 20`
//!
//! **The load.** `--players` players are created, spread over the servers in turn; each
//! then loops for `--seconds`: it seeks a 2-seat `block` game through its server and reads
//! its seek back every `--poll-ms` until it is matched, then seeks again. Its game is left
//! alone (it expires with the server's idle ttl). A seek's wait is from the send of its
//! `POST` to the answer that says `matched` (the `POST` itself, when the seek completed a
//! game). Games a second are matched seeks a second over two.

use std::time::{Duration, Instant};

use clap::Parser;
use serde::Deserialize;

#[derive(Parser, Debug)]
#[command(about = "Seeks through several servers: games paired a second, and seeks' waits")]
struct Args {
    /// Base URL of a running server; give it once per process.
    #[arg(long, required = true)]
    url: Vec<String>,
    /// Players seeking at once, spread over the servers.
    #[arg(long, default_value_t = 200)]
    players: usize,
    /// Length of the load.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// How often a waiting seek is read back.
    #[arg(long, default_value_t = 20)]
    poll_ms: u64,
}

#[derive(Deserialize)]
struct Created {
    key: String,
}

#[derive(Deserialize)]
struct SeekAnswer {
    id: String,
    status: String,
}

/// Per player: seeks matched, and each one's wait in microseconds.
struct Tally {
    matched: u64,
    waits_us: Vec<u64>,
    failures: u64,
}

async fn play(
    http: reqwest::Client,
    url: String,
    key: String,
    args: &Args,
    until: Instant,
) -> Tally {
    let mut tally = Tally {
        matched: 0,
        waits_us: Vec::new(),
        failures: 0,
    };
    let body = serde_json::json!({"preset": "block", "seats": 2});
    while Instant::now() < until {
        let sent = Instant::now();
        let res = http
            .post(format!("{url}/v1/seeks"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await;
        let Ok(res) = res else {
            tally.failures += 1;
            continue;
        };
        if res.status().as_u16() != 201 {
            tally.failures += 1;
            tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
            continue;
        }
        let Ok(mut seek) = res.json::<SeekAnswer>().await else {
            tally.failures += 1;
            continue;
        };
        while seek.status == "waiting" && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
            let read = http
                .get(format!("{url}/v1/seeks/{}", seek.id))
                .bearer_auth(&key)
                .send()
                .await;
            match read {
                Ok(res) if res.status().is_success() => match res.json::<SeekAnswer>().await {
                    Ok(now) => seek = now,
                    Err(_) => tally.failures += 1,
                },
                _ => tally.failures += 1,
            }
        }
        if seek.status == "matched" {
            tally.matched += 1;
            tally.waits_us.push(sent.elapsed().as_micros() as u64);
        } else if seek.status == "waiting" {
            // The load ended: leave nothing waiting behind.
            let _ = http
                .delete(format!("{url}/v1/seeks/{}", seek.id))
                .bearer_auth(&key)
                .send()
                .await;
        }
    }
    tally
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank] as f64 / 1000.0
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.players)
        .build()
        .expect("an HTTP client");
    let run = uuid::Uuid::new_v4().simple().to_string();
    let mut players = Vec::with_capacity(args.players);
    for i in 0..args.players {
        let url = args.url[i % args.url.len()].clone();
        let created: Created = http
            .post(format!("{url}/v1/players"))
            .json(&serde_json::json!({"name": format!("m{}-{i}", &run[..8]), "bot": true}))
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("a player is created (is MAX_PLAYERS_PER_IP lifted?)");
        players.push((url, created.key));
    }
    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    let tasks: Vec<_> = players
        .into_iter()
        .map(|(url, key)| {
            let (http, args) = (http.clone(), &args);
            play(http, url, key, args, until)
        })
        .collect();
    let tallies = futures_util::future::join_all(tasks).await;
    let elapsed = started.elapsed().as_secs_f64();
    let matched: u64 = tallies.iter().map(|t| t.matched).sum();
    let failures: u64 = tallies.iter().map(|t| t.failures).sum();
    let mut waits: Vec<u64> = tallies.into_iter().flat_map(|t| t.waits_us).collect();
    waits.sort_unstable();
    println!(
        "servers {}, players {}, {:.1} s: {} seeks matched, {:.0} games/s ({:.0} seeks/s); \
         wait p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} failed requests",
        args.url.len(),
        args.players,
        elapsed,
        matched,
        matched as f64 / 2.0 / elapsed,
        matched as f64 / elapsed,
        percentile(&waits, 50.0),
        percentile(&waits, 99.0),
        percentile(&waits, 100.0),
        failures
    );
}
