//! A tournament of built-in levels driven by several server processes sharing one store:
//! its wall time, each round's, and how long each round's pairing took.
//!
//! `scripts/bench-tournament.sh` builds the server, starts two processes on one Redis and
//! runs this; by hand:
//!
//! `cargo run --release --example tournament -- --url http://127.0.0.1:8080
//!  --url http://127.0.0.1:8081 --entrants 64 --rounds 7`
//!
//! **The run.** A player is made on the first server and creates a duplicate Swiss of
//! `--entrants` built-in levels (the `--levels` in turn, each entered as many times as it
//! comes round), one-round `--preset` games; it is started through the last server, and
//! read back every `--poll-ms` from each server in turn until it is over. Every game is
//! made and moved on by whichever process gets there (the games' bots, the clocks' sweep,
//! the tournament's poll). A round's time runs from the first read that shows it to the
//! first that shows the next (or the end). The pairing times are the servers' own
//! (`domino_tournament_pairing_seconds`), read from `/metrics` of every server as each
//! round appears. At the end the figures are checked: every round played, every game
//! finished, nobody paired twice with one opponent, each process's share of the games.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use clap::Parser;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "A Swiss of built-in levels through several servers: wall and pairing times")]
struct Args {
    /// Base URL of a running server; give it once per process.
    #[arg(long, required = true)]
    url: Vec<String>,
    /// Entrants, all built-in levels (at most the servers' MAX_TOURNAMENT_PLAYERS).
    #[arg(long, default_value_t = 64)]
    entrants: usize,
    /// Swiss rounds.
    #[arg(long, default_value_t = 7)]
    rounds: u16,
    /// The levels entered, in turn.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "random,greedy,expert,master"
    )]
    levels: Vec<String>,
    /// The preset of every game (one round of it).
    #[arg(long, default_value = "block")]
    preset: String,
    /// One game a pairing instead of two.
    #[arg(long)]
    single: bool,
    /// How often the tournament is read back.
    #[arg(long, default_value_t = 50)]
    poll_ms: u64,
    /// Give up after this long.
    #[arg(long, default_value_t = 1800)]
    timeout_secs: u64,
}

#[derive(Deserialize)]
struct Created {
    key: String,
}

/// The servers' pairing figures summed: rounds paired, seconds spent pairing them.
#[derive(Clone, Copy, Default, Debug)]
struct Pairing {
    rounds: f64,
    seconds: f64,
}

/// A sample's value from an OpenMetrics text, by its full name.
fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            (key == name).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0.0)
}

/// Errors as text: what the run prints when it stops.
fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn metrics(http: &reqwest::Client, url: &str) -> Result<String, String> {
    let res = http
        .get(format!("{url}/metrics"))
        .send()
        .await
        .map_err(err)?;
    res.error_for_status()
        .map_err(err)?
        .text()
        .await
        .map_err(err)
}

/// Summed over the servers.
async fn pairing(http: &reqwest::Client, urls: &[String]) -> Result<Pairing, String> {
    let mut total = Pairing::default();
    for url in urls {
        let text = metrics(http, url).await?;
        total.rounds += sample(&text, "domino_tournament_rounds_paired_total");
        total.seconds += sample(&text, "domino_tournament_pairing_seconds_sum");
    }
    Ok(total)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args).await {
        eprintln!("tournament: {e}");
        std::process::exit(1);
    }
}

async fn run(args: &Args) -> Result<(), String> {
    let http = reqwest::Client::new();
    let (first, last) = (&args.url[0], &args.url[args.url.len() - 1]);
    let name = format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let created: Created = http
        .post(format!("{first}/v1/players"))
        .json(&json!({"name": name}))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(err)?
        .json()
        .await
        .map_err(err)?;
    let levels: Vec<&String> = args.levels.iter().cycle().take(args.entrants).collect();
    let body = json!({"name": "Bench Swiss", "preset": args.preset, "format": "swiss",
        "rounds": args.rounds, "rules": {"target": null, "rounds": 1},
        "duplicate": !args.single, "max_players": args.entrants, "levels": levels});
    let res = http
        .post(format!("{first}/v1/tournaments"))
        .bearer_auth(&created.key)
        .json(&body)
        .send()
        .await
        .map_err(err)?;
    if res.status().as_u16() != 201 {
        return Err(format!("create: {}", res.text().await.unwrap_or_default()));
    }
    let t: Value = res.json().await.map_err(err)?;
    let id = t["id"].as_str().ok_or("create: no id")?.to_owned();

    let before = pairing(&http, &args.url).await?;
    let began = Instant::now();
    let res = http
        .post(format!("{last}/v1/tournaments/{id}/start"))
        .bearer_auth(&created.key)
        .send()
        .await
        .map_err(err)?;
    if !res.status().is_success() {
        return Err(format!("start: {}", res.text().await.unwrap_or_default()));
    }
    // Per round: when it was first seen, and the pairing seconds the servers spent on it.
    let mut rounds: Vec<(u64, Duration, f64)> = Vec::new();
    let mut seen = before;
    let mut reads = 0usize;
    let deadline = began + Duration::from_secs(args.timeout_secs);
    let last_read = loop {
        let url = &args.url[reads % args.url.len()];
        reads += 1;
        let t: Value = http
            .get(format!("{url}/v1/tournaments/{id}"))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(err)?
            .json()
            .await
            .map_err(err)?;
        let round = t["round"].as_u64().unwrap_or(0);
        if round > rounds.last().map_or(0, |r| r.0) {
            let now = pairing(&http, &args.url).await?;
            rounds.push((round, began.elapsed(), now.seconds - seen.seconds));
            seen = now;
        }
        let status = t["status"].as_str().unwrap_or("").to_owned();
        if status == "finished" || status == "canceled" {
            break t;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "not over after {} s: round {round}, {status}",
                args.timeout_secs
            ));
        }
        tokio::time::sleep(Duration::from_millis(args.poll_ms)).await;
    };
    let wall = began.elapsed();
    let after = pairing(&http, &args.url).await?;

    // The checks: every round played, every game finished, no pair met twice.
    let status = last_read["status"].as_str().unwrap_or("");
    let pairings = last_read["pairings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut met = HashSet::new();
    let mut games = 0usize;
    for p in &pairings {
        let (a, b) = (p["a"].as_str().unwrap_or(""), p["b"].as_str().unwrap_or(""));
        let pair = if a < b { (a, b) } else { (b, a) };
        if !met.insert(pair) {
            return Err(format!("{a} and {b} were paired twice"));
        }
        if p["result"].is_null() {
            return Err(format!("a pairing of round {} has no result", p["round"]));
        }
        games += p["games"].as_array().map_or(0, Vec::len);
    }
    let played = last_read["round"].as_u64().unwrap_or(0);
    println!(
        "tournament {id}: {} entrants ({}), {} rounds asked, {played} played, {status}{}",
        args.entrants,
        args.levels.join(", "),
        args.rounds,
        last_read["reason"]
            .as_str()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    );
    println!(
        "{} pairings, {games} games ({} a pairing), {} byes, nobody paired twice, every pairing decided",
        pairings.len(),
        if args.single { 1 } else { 2 },
        last_read["byes"].as_array().map_or(0, Vec::len)
    );
    println!("wall time, start to finish: {:.1} s", wall.as_secs_f64());
    println!("round  seen at (s)  played for (s)  pairing (ms)");
    for (i, &(round, at, paired)) in rounds.iter().enumerate() {
        let until = rounds.get(i + 1).map_or(wall, |r| r.1);
        println!(
            "{round:>5}  {:>11.2}  {:>14.2}  {:>12.3}",
            at.as_secs_f64(),
            (until - at).as_secs_f64(),
            paired * 1e3
        );
    }
    let paired = after.rounds - before.rounds;
    println!(
        "pairing: {paired} rounds paired, {:.3} ms in all, {:.3} ms a round on average",
        (after.seconds - before.seconds) * 1e3,
        if paired > 0.0 {
            (after.seconds - before.seconds) * 1e3 / paired
        } else {
            0.0
        }
    );
    for url in &args.url {
        let text = metrics(&http, url).await?;
        println!(
            "{url}: {} games created, {} rounds paired, {} bot moves",
            sample(&text, "domino_games_created_total"),
            sample(&text, "domino_tournament_rounds_paired_total"),
            sample(&text, "domino_bot_moves_total{where=\"background\"}")
                + sample(&text, "domino_bot_moves_total{where=\"request\"}")
        );
    }
    if status != "finished" || played != u64::from(args.rounds) {
        return Err(format!(
            "the tournament ended {status} after {played} rounds"
        ));
    }
    Ok(())
}
