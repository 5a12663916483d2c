//! What followers cost the server: a duplicate Swiss of built-in levels followed by
//! `--followers` event streams from `--addresses` loopback addresses (127.0.0.1, .2, ...),
//! then the same Swiss with nobody following; and a game of bots watched by as many
//! spectators, then the same game unwatched. The server's CPU (from /proc, `--server-pid`)
//! with followers less without, over the events delivered, is what one delivered event
//! costs; the bytes are the events' as sent (the first of each stream, the whole
//! tournament, counted apart).
//!
//! `scripts/bench-followers.sh` builds and starts the server and runs this; by hand:
//! `cargo run --release --example followers -- --url http://127.0.0.1:8080 --server-pid PID`

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(
    about = "Followers of a tournament and spectators of a game: server CPU and bytes an event"
)]
struct Args {
    #[arg(long)]
    url: String,
    /// The server's process id, to read its CPU time.
    #[arg(long)]
    server_pid: u32,
    /// Entrants, built-in levels in turn from `--levels`.
    #[arg(long, default_value_t = 64)]
    entrants: usize,
    #[arg(long, default_value_t = 7)]
    rounds: u16,
    #[arg(long, value_delimiter = ',', default_value = "random,greedy")]
    levels: Vec<String>,
    /// Event streams following the tournament (and the game).
    #[arg(long, default_value_t = 128)]
    followers: usize,
    /// Loopback addresses the followers come from.
    #[arg(long, default_value_t = 4)]
    addresses: u8,
    #[arg(long, default_value_t = 900)]
    timeout_secs: u64,
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
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// What one follower read: its events and bytes, the first (whole) event apart.
#[derive(Default, Clone, Copy)]
struct Read {
    events: usize,
    bytes: usize,
    first_bytes: usize,
}

/// Follows `path` from `from` until `last` (an event name) arrives or the stream ends.
async fn follow(
    url: String,
    from: IpAddr,
    last: &'static str,
    ready: tokio::sync::mpsc::Sender<()>,
) -> Result<Read, String> {
    let http = reqwest::Client::builder()
        .local_address(from)
        .build()
        .map_err(err)?;
    let mut res = http.get(url).send().await.map_err(err)?;
    if !res.status().is_success() {
        return Err(format!("follow: {}", res.status()));
    }
    let mut read = Read::default();
    let mut pending = String::new();
    let mut told_ready = false;
    while let Some(chunk) = res.chunk().await.map_err(err)? {
        if !told_ready {
            told_ready = true;
            let _ = ready.send(()).await;
        }
        pending.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = pending.find("\n\n") {
            let frame: String = pending.drain(..end + 2).collect();
            if !frame.starts_with("event: ") && !frame.starts_with("id: ") {
                continue; // a comment: keep-alive or hello
            }
            read.events += 1;
            if read.events == 1 {
                read.first_bytes = frame.len();
            } else {
                read.bytes += frame.len();
            }
            if frame.starts_with(&format!("event: {last}\n")) {
                return Ok(read);
            }
        }
    }
    Ok(read)
}

/// Opens `n` followers of `path`, waits until each has its first bytes, runs `go`, then
/// waits for every follower to end: answers their reads and the server's CPU meanwhile.
async fn followed<F: std::future::Future<Output = Result<(), String>>>(
    args: &Args,
    path: &str,
    n: usize,
    last: &'static str,
    go: F,
) -> Result<(Vec<Read>, f64), String> {
    let (ready_tx, mut ready) = tokio::sync::mpsc::channel(n.max(1));
    let mut tasks = Vec::new();
    for i in 0..n {
        let from = IpAddr::V4(Ipv4Addr::new(
            127,
            0,
            0,
            1 + (i % usize::from(args.addresses.max(1))) as u8,
        ));
        tasks.push(tokio::spawn(follow(
            format!("{}{path}", args.url),
            from,
            last,
            ready_tx.clone(),
        )));
    }
    drop(ready_tx);
    for _ in 0..n {
        ready.recv().await.ok_or("a follower never connected")?;
    }
    let cpu = process_cpu(args.server_pid);
    go.await?;
    let mut reads = Vec::new();
    for t in tasks {
        reads.push(t.await.map_err(err)??);
    }
    Ok((reads, process_cpu(args.server_pid) - cpu))
}

async fn post(
    http: &reqwest::Client,
    url: String,
    key: Option<&str>,
    body: &Value,
) -> Result<Value, String> {
    let mut req = http.post(url).json(body);
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let res = req.send().await.map_err(err)?;
    let status = res.status();
    let text = res.text().await.map_err(err)?;
    if !status.is_success() {
        return Err(format!("{status}: {text}"));
    }
    serde_json::from_str(&text).map_err(err)
}

/// Makes a Swiss of levels; answers its id once made.
async fn swiss(args: &Args, http: &reqwest::Client, key: &str) -> Result<String, String> {
    let levels: Vec<&String> = args.levels.iter().cycle().take(args.entrants).collect();
    let body = json!({"name": "Followed Swiss", "preset": "block", "format": "swiss",
        "rounds": args.rounds, "rules": {"target": null, "rounds": 1},
        "max_players": args.entrants, "levels": levels});
    let t = post(
        http,
        format!("{}/v1/tournaments", args.url),
        Some(key),
        &body,
    )
    .await?;
    Ok(t["id"].as_str().ok_or("no id")?.to_owned())
}

/// Starts tournament `id` and waits until it is over.
async fn run_to_the_end(
    args: &Args,
    http: &reqwest::Client,
    key: &str,
    id: &str,
) -> Result<(), String> {
    post(
        http,
        format!("{}/v1/tournaments/{id}/start", args.url),
        Some(key),
        &json!({}),
    )
    .await?;
    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    loop {
        let t: Value = http
            .get(format!("{}/v1/tournaments/{id}", args.url))
            .send()
            .await
            .map_err(err)?
            .json()
            .await
            .map_err(err)?;
        if t["status"] == "finished" || t["status"] == "canceled" {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the tournament did not finish in time".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A game of all_fives dealt from `seed`, seat 1 greedy: answers its id and seat 0's token.
async fn game_against_greedy(
    args: &Args,
    http: &reqwest::Client,
    seed: u64,
) -> Result<(String, String), String> {
    let body = json!({"preset": "all_fives", "seed": seed.to_string(), "bots": [{"seat": 1, "level": "greedy"}]});
    let g = post(http, format!("{}/v1/games", args.url), None, &body).await?;
    let id = g["game_id"].as_str().ok_or("no game id")?.to_owned();
    let seat = post(
        http,
        format!("{}/v1/games/{id}/seats", args.url),
        None,
        &json!({"name": "bench"}),
    )
    .await?;
    Ok((id, seat["token"].as_str().ok_or("no token")?.to_owned()))
}

/// Plays seat 0 of game `id` (the first legal move each turn) to the end.
async fn play_out(
    args: &Args,
    http: &reqwest::Client,
    id: &str,
    token: &str,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    loop {
        let view: Value = http
            .get(format!("{}/v1/games/{id}", args.url))
            .bearer_auth(token)
            .send()
            .await
            .map_err(err)?
            .json()
            .await
            .map_err(err)?;
        if view["status"] == "finished" {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the game did not finish in time".into());
        }
        match view["legal_moves"].get(0) {
            Some(first) if view["your_turn"] == true => {
                post(
                    http,
                    format!("{}/v1/games/{id}/moves", args.url),
                    Some(token),
                    first,
                )
                .await?;
            }
            _ => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

fn summary(what: &str, reads: &[Read], with: f64, without: f64) {
    let events: usize = reads.iter().map(|r| r.events.saturating_sub(1)).sum();
    let bytes: usize = reads.iter().map(|r| r.bytes).sum();
    let first: usize = reads.iter().map(|r| r.first_bytes).sum::<usize>() / reads.len().max(1);
    let per_stream = reads.first().map_or(0, |r| r.events);
    println!(
        "{what}: {} streams, {per_stream} events each, {events} delivered after the first; \
         {:.0} bytes an event after the first (the first: {first} bytes); server CPU {with:.2} s \
         followed, {without:.2} s not: {:.1} us a delivered event",
        reads.len(),
        bytes as f64 / events.max(1) as f64,
        (with - without) * 1e6 / events.max(1) as f64
    );
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args).await {
        eprintln!("followers: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), String> {
    let http = reqwest::Client::new();
    let name = format!("f{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let key = post(
        &http,
        format!("{}/v1/players", args.url),
        None,
        &json!({"name": name}),
    )
    .await?;
    let key = key["key"].as_str().ok_or("no key")?.to_owned();

    let id = swiss(args, &http, &key).await?;
    let began = Instant::now();
    let path = format!("/v1/tournaments/{id}/events");
    let (reads, with) = followed(
        args,
        &path,
        args.followers,
        "tournament_finished",
        run_to_the_end(args, &http, &key, &id),
    )
    .await?;
    let wall = began.elapsed();
    let id = swiss(args, &http, &key).await?;
    let (_, without) = followed(
        args,
        &path,
        0,
        "tournament_finished",
        run_to_the_end(args, &http, &key, &id),
    )
    .await?;
    summary(
        &format!(
            "tournament ({} levels, {} rounds, {:.0} s)",
            args.entrants,
            args.rounds,
            wall.as_secs_f64()
        ),
        &reads,
        with,
        without,
    );

    // A game's spectators, for comparison: the same deal and moves, watched then not.
    let seed = 7;
    let (game, token) = game_against_greedy(args, &http, seed).await?;
    let path = format!("/v1/games/{game}/events");
    let (reads, with) = followed(
        args,
        &path,
        args.followers,
        "never",
        play_out(args, &http, &game, &token),
    )
    .await?;
    let (game, token) = game_against_greedy(args, &http, seed).await?;
    let (_, without) = followed(
        args,
        &path,
        0,
        "never",
        play_out(args, &http, &game, &token),
    )
    .await?;
    summary(
        "game spectators (all_fives against greedy)",
        &reads,
        with,
        without,
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
    Ok(())
}
