//! Lobby: what a deep page of open games costs, and what listing costs everyone else.
//!
//! Against a running server (memory or Redis), started with its caps lifted for the fill
//! (`MAX_WAITING_PER_IP=0`, `MAX_GAMES_PER_IP=0`, `MEMORY_MAX_GAMES=0`, high
//! `RATE_LIMIT_PER_IP`):
//!
//! `cargo run --release --example lobby -- --url http://127.0.0.1:8080 --games 100000`
//!
//! 1. **Fill**: `--games` games waiting for players (classic, 2 seats, nobody seated),
//!    created by `--clients` concurrent clients.
//! 2. **One page at a time**: the first page and the deepest full page
//!    (`per_page=--per-page`), `--samples` times each, one request in flight: their
//!    latency (p50, p99).
//! 3. **Under listing**: `--clients` clients list the deepest page over and over for
//!    `--seconds`, while one more client reads one unrelated game (`GET /v1/games/{id}`)
//!    in a loop: pages per second, and the latency of the pages and of the unrelated
//!    reads (p50, p99). On the memory store a listing that holds the store's lock stalls
//!    the unrelated read; on Redis every page costs Redis calls.
//!
//! It prints the machine (CPU model, cores) and the server's store first.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "Deep lobby pages: their latency, and an unrelated read's during listing")]
struct Args {
    /// Base URL of the running server.
    #[arg(long)]
    url: String,
    /// Waiting games to create first.
    #[arg(long, default_value_t = 100_000)]
    games: usize,
    /// Concurrent clients for the fill and for the listing.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Games per page.
    #[arg(long, default_value_t = 20)]
    per_page: usize,
    /// Requests timed one at a time, per page.
    #[arg(long, default_value_t = 200)]
    samples: usize,
    /// Length of the listing under load.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
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
    format!("{model}, {cores} cores")
}

/// p50 and p99 of `samples`, in ms.
fn percentiles(samples: &mut [Duration]) -> String {
    if samples.is_empty() {
        return "no samples".into();
    }
    samples.sort_unstable();
    let at = |q: f64| {
        let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1e3
    };
    format!(
        "p50 {:.2} ms, p99 {:.2} ms ({} samples)",
        at(0.5),
        at(0.99),
        samples.len()
    )
}

/// The time to a whole successful answer; `None` for a failure (counted, not timed).
async fn timed(http: &reqwest::Client, url: &str) -> Option<Duration> {
    let started = Instant::now();
    let res = http.get(url).send().await.ok()?;
    if !res.status().is_success() {
        return None;
    }
    res.bytes().await.ok()?;
    Some(started.elapsed())
}

/// Timed answers, and how many failed.
#[derive(Default)]
struct Samples {
    ok: Vec<Duration>,
    failed: usize,
}

impl Samples {
    fn add(&mut self, sample: Option<Duration>) {
        match sample {
            Some(took) => self.ok.push(took),
            None => self.failed += 1,
        }
    }

    fn extend(&mut self, other: Samples) {
        self.ok.extend(other.ok);
        self.failed += other.failed;
    }

    fn report(&mut self) -> String {
        format!("{}, {} failed", percentiles(&mut self.ok), self.failed)
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.clients + 1)
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

    // 1. Fill.
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let fillers: Vec<_> = (0..args.clients)
        .map(|_| {
            let (http, next, url, games) =
                (http.clone(), next.clone(), args.url.clone(), args.games);
            tokio::spawn(async move {
                let mut last = None;
                while next.fetch_add(1, Ordering::Relaxed) < games {
                    let res = http
                        .post(format!("{url}/v1/games"))
                        .json(&json!({"preset": "classic"}))
                        .send()
                        .await
                        .expect("the server answers");
                    assert_eq!(res.status().as_u16(), 201, "create: {:?}", res.text().await);
                    let body: Value = res.json().await.unwrap();
                    last = body["game_id"].as_str().map(str::to_owned);
                }
                last
            })
        })
        .collect();
    let mut some_game = None;
    for filler in fillers {
        some_game = filler.await.unwrap().or(some_game);
    }
    let some_game = some_game.expect("a game was created");
    println!(
        "fill: {} waiting games in {:.1} s",
        args.games,
        started.elapsed().as_secs_f64()
    );

    // 2. One page at a time.
    let deepest = (args.games / args.per_page).max(1);
    let page_url = |page: usize| {
        format!(
            "{}/v1/games?page={page}&per_page={}",
            args.url, args.per_page
        )
    };
    for (what, page) in [("first page", 1), ("deepest page", deepest)] {
        let mut samples = Samples::default();
        for _ in 0..args.samples {
            samples.add(timed(&http, &page_url(page)).await);
        }
        println!(
            "{what} (page {page}, per_page {}), alone: {}",
            args.per_page,
            samples.report()
        );
    }

    // 3. Under listing.
    let stop = Arc::new(AtomicBool::new(false));
    let listers: Vec<_> = (0..args.clients)
        .map(|_| {
            let (http, stop, url) = (http.clone(), stop.clone(), page_url(deepest));
            tokio::spawn(async move {
                let mut samples = Samples::default();
                while !stop.load(Ordering::Relaxed) {
                    samples.add(timed(&http, &url).await);
                }
                samples
            })
        })
        .collect();
    let reader = {
        let (http, stop) = (http.clone(), stop.clone());
        let url = format!("{}/v1/games/{some_game}", args.url);
        tokio::spawn(async move {
            let mut samples = Samples::default();
            while !stop.load(Ordering::Relaxed) {
                samples.add(timed(&http, &url).await);
            }
            samples
        })
    };
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut pages = Samples::default();
    for lister in listers {
        pages.extend(lister.await.unwrap());
    }
    let mut reads = reader.await.unwrap();
    println!(
        "under listing ({} clients on page {deepest}, {} s): {:.0} pages/s, pages {}",
        args.clients,
        args.seconds,
        pages.ok.len() as f64 / args.seconds as f64,
        pages.report()
    );
    println!(
        "an unrelated read (GET /v1/games/{{id}}) meanwhile: {}",
        reads.report()
    );
}
