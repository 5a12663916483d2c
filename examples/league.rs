//! The league bench (issue 55): a league of the four built-in levels and `--copies` webhook
//! copies of each (12 by default) runs for `--secs` on the servers given (`--url`, one per
//! process, all on one store); then matches an hour, the servers' CPU a match (from
//! `/proc/<pid>/stat`, `--server-pid` for each), and the table at the end, checked: the
//! levels in the order master, expert, greedy, random with intervals (rating ± 2
//! deviations) that do not overlap, and each copy's rating within its original's interval.
//!
//! A copy is a player with a webhook on this program's bot server, which plays the seat as
//! its level would: from the view the server POSTs, a [`Recall`] per game and seat
//! rebuilds the seat's projection (the layout in the order it was laid, who laid which
//! tile: the view shows the arms, not that), and [`domino_bots::choose_thinking`] chooses,
//! as the server's bots do, the master with `--master-work` moves a decision (run the
//! servers with the same `BOT_MASTER_WORK`: the two are then the same player; a copy with
//! one legal move plays it without searching, the same move sooner). The rebuild
//! is exact where nobody draws and every turn is called (`--preset block`, the default);
//! the bench counts the views where it had to guess an order.
//!
//! `scripts/bench-league.sh` builds and starts two server processes on one Redis and runs
//! this; by hand: `cargo run --release --example league -- --url A --server-pid P --url B
//! --server-pid Q` (servers with `WEBHOOK_ALLOW_PRIVATE=true`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use clap::Parser;
use domino_bots::recall::{Recall, Seen};
use domino_bots::{Level, Thinking};
use domino_engine::layout::End;
use domino_engine::{LegalMove, Move, Rules, Tile, TileSet, Unclaimed};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

#[derive(Parser, Debug)]
#[command(about = "A league of the built-in levels and webhook copies of them")]
struct Args {
    /// A server process (repeat for each; all on one store).
    #[arg(long, required = true)]
    url: Vec<String>,
    /// Each server's process id, to read its CPU time.
    #[arg(long)]
    server_pid: Vec<u32>,
    /// Seconds the league runs.
    #[arg(long, default_value_t = 600)]
    secs: u64,
    /// Webhook copies of each level.
    #[arg(long, default_value_t = 3)]
    copies: usize,
    #[arg(long, default_value = "block")]
    preset: String,
    /// Deals a match (each played twice, the seats swapped).
    #[arg(long, default_value_t = 2)]
    deals_per_match: u16,
    /// Matches an entrant plays at once.
    #[arg(long, default_value_t = 2)]
    max_concurrent: u8,
    /// The master copies' moves searched a decision (the servers' `BOT_MASTER_WORK`).
    #[arg(long, default_value_t = domino_bots::master::DEFAULT_WORK)]
    master_work: u64,
    /// Seconds between progress lines.
    #[arg(long, default_value_t = 60)]
    every: u64,
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
    let busy: f64 = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse::<f64>().ok())
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4 && *i < 8)
        .map(|(_, t)| t)
        .sum();
    busy / 100.0
}

/// One request that must succeed: its body.
async fn ok(req: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
    let res = req.send().await.map_err(err)?;
    let status = res.status();
    let text = res.text().await.map_err(err)?;
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        Ok(body)
    } else {
        Err(format!("{what}: {status} {text}"))
    }
}

fn tile(v: &Value) -> Result<Tile, String> {
    v.as_str()
        .ok_or("a tile that is not a string")?
        .parse()
        .map_err(|_| format!("not a tile: {v}"))
}

fn tiles(v: &Value) -> Result<Vec<Tile>, String> {
    v.as_array()
        .map(|a| a.iter().map(tile).collect())
        .unwrap_or(Ok(Vec::new()))
}

/// A `legal_moves` entry as the engine's move.
fn legal_move(v: &Value) -> Result<LegalMove, String> {
    let mv = match v["type"].as_str() {
        Some("play") => Move::Play {
            tile: tile(&v["tile"])?,
            end: match v["end"].as_str() {
                Some(e) => Some(e.parse::<End>().map_err(|()| format!("an end {e}"))?),
                None => None,
            },
            claim: v["claim"].as_u64().map(|c| c as u16),
        },
        Some("draw") => Move::Draw,
        Some("pass") => Move::Pass,
        Some("muggins") => Move::Muggins,
        _ => return Err(format!("a move the bench does not know: {v}")),
    };
    Ok(LegalMove {
        mv,
        points: v["points"].as_u64().unwrap_or(0) as u16,
    })
}

/// What the seat's view (`GET /v1/games/{id}`, as the call carries it) shows.
fn seen(view: &Value) -> Result<Seen, String> {
    let round = &view["round"];
    let layout = &round["layout"];
    let seats = view["seats"].as_array().ok_or("a view without seats")?;
    let arms = &layout["arms"];
    let u8_of = |v: &Value| v.as_u64().map(|n| n as u8);
    Ok(Seen {
        viewer: u8_of(&view["you"]).ok_or("a view without a seat")?,
        rules: serde_json::from_value::<Rules>(view["rules"].clone()).map_err(err)?,
        seats: seats.len() as u8,
        round: round["number"].as_u64().ok_or("a view without a round")? as u16,
        leader: u8_of(&round["leader"]).unwrap_or(0),
        turn: u8_of(&round["turn"]),
        hand: tiles(&view["hand"])?.into_iter().collect::<TileSet>(),
        hand_counts: seats
            .iter()
            .map(|s| u8_of(&s["hand_count"]).unwrap_or(0))
            .collect(),
        boneyard_count: u8_of(&round["boneyard_count"]).unwrap_or(0),
        lead: match &layout["lead"] {
            Value::Null => None,
            t => Some(tile(t)?),
        },
        arms: [
            tiles(&arms["left"])?,
            tiles(&arms["right"])?,
            tiles(&arms["up"])?,
            tiles(&arms["down"])?,
        ],
        start_tile: match &round["start_tile"] {
            Value::Null => None,
            t => Some(tile(t)?),
        },
        must_lead: match &round["must_lead"] {
            Value::Null => None,
            t => Some(tile(t)?),
        },
        scores: view["scores"]
            .as_array()
            .map(|a| a.iter().map(|s| s.as_i64().unwrap_or(0) as i32).collect())
            .unwrap_or_default(),
        legal_moves: view["legal_moves"]
            .as_array()
            .map(|a| a.iter().map(legal_move).collect())
            .unwrap_or(Ok(Vec::new()))?,
        voids: seats
            .iter()
            .map(|s| {
                s["known_missing"].as_array().map_or(0, |pips| {
                    pips.iter()
                        .filter_map(Value::as_u64)
                        .fold(0u16, |m, p| m | 1 << p)
                })
            })
            .collect(),
        unclaimed: match &round["unclaimed"] {
            Value::Null => None,
            u => Some(Unclaimed {
                seat: u8_of(&u["seat"]).unwrap_or(0),
                points: u["points"].as_u64().unwrap_or(0) as u16,
            }),
        },
        abandoned: seats
            .iter()
            .map(|s| s["abandoned"].as_bool().unwrap_or(false))
            .collect(),
    })
}

/// The bot server's state: each game's recall by seat, and what it did.
#[derive(Default)]
struct Bots {
    recalls: Mutex<HashMap<(String, u8), Recall>>,
    answered: AtomicU64,
    failed: AtomicU64,
    /// Thinking times (microseconds) by level, of the decisions with a choice.
    times: Mutex<HashMap<Level, Vec<u64>>>,
    /// Decisions with one legal move, played at once.
    forced: AtomicU64,
    master_work: AtomicU64,
}

/// Plays a call for the copy of the level in the path (`/{level}/{n}`).
async fn answer(
    path: web::Path<(String, usize)>,
    body: web::Bytes,
    bots: web::Data<Bots>,
) -> HttpResponse {
    let Ok(call) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    if call["type"] == "ping" {
        return HttpResponse::Ok().json(json!({"challenge": call["challenge"]}));
    }
    let Ok(level) = path.0.parse::<Level>() else {
        return HttpResponse::NotFound().finish();
    };
    let chosen = web::block(move || choose(&bots, level, &call))
        .await
        .map_err(err)
        .and_then(|chosen| chosen);
    match chosen {
        Ok(entry) => HttpResponse::Ok().json(entry),
        Err(why) => {
            eprintln!("league: a call not answered: {why}");
            HttpResponse::InternalServerError().body(why)
        }
    }
}

/// The `legal_moves` entry `level` chooses for the call's seat.
fn choose(bots: &Bots, level: Level, call: &Value) -> Result<Value, String> {
    let view = &call["view"];
    let seen = seen(view).inspect_err(|_| {
        bots.failed.fetch_add(1, Ordering::Relaxed);
    })?;
    let key = (
        call["game_id"].as_str().unwrap_or_default().to_owned(),
        seen.viewer,
    );
    let projection = {
        let mut recalls = bots.recalls.lock().expect("not poisoned");
        recalls.entry(key).or_default().see(&seen)
    }
    .inspect_err(|_| {
        bots.failed.fetch_add(1, Ordering::Relaxed);
    })?;
    // A seed of the call's own (its id names the game and version): a call made again
    // gets the same move.
    let seed: [u8; 32] = Sha256::digest(call["call_id"].to_string().as_bytes()).into();
    let mut rng = ChaCha8Rng::from_seed(seed);
    // One legal move is every level's move: the server's searching levels think there
    // anyway, so that their time does not tell the table how many tiles fit, but a copy's
    // time tells nobody anything, and its search would only take the cores from the
    // servers and the other copies (the arena's `--forced-at-once`: the same moves).
    let mv = if let [only] = projection.legal_moves.as_slice() {
        bots.forced.fetch_add(1, Ordering::Relaxed);
        only.mv
    } else {
        let began = Instant::now();
        let work = bots.master_work.load(Ordering::Relaxed);
        let mv = domino_bots::choose_thinking(level, &projection, Thinking::work(work), &mut rng)
            .ok_or("no move to make")?;
        let took = began.elapsed().as_micros() as u64;
        bots.times
            .lock()
            .expect("not poisoned")
            .entry(level)
            .or_default()
            .push(took);
        mv
    };
    let entries = view["legal_moves"].as_array().ok_or("no legal moves")?;
    let entry = entries
        .iter()
        .find(|e| legal_move(e).is_ok_and(|lm| lm.mv == mv))
        .ok_or_else(|| format!("{mv:?} is not among the legal moves"))?;
    bots.answered.fetch_add(1, Ordering::Relaxed);
    Ok(entry.clone())
}

/// Starts the bot server on a free loopback port: its URL.
fn start_bots(bots: web::Data<Bots>) -> Result<String, String> {
    let server = HttpServer::new(move || {
        App::new()
            .app_data(bots.clone())
            .route("/{level}/{n}", web::post().to(answer))
    })
    .workers(2)
    .bind(("127.0.0.1", 0))
    .map_err(err)?;
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());
    Ok(format!("http://127.0.0.1:{port}"))
}

/// The value at quantile `q` of `sorted`.
fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

struct Row {
    name: String,
    /// The level it is or copies.
    level: Level,
    copy: bool,
    rating: f64,
    deviation: f64,
    entry: Value,
}

impl Row {
    fn low(&self) -> f64 {
        self.rating - 2.0 * self.deviation
    }
    fn high(&self) -> f64 {
        self.rating + 2.0 * self.deviation
    }
}

/// Prints the table and checks its order: returns whether every check held.
fn report_table(league: &Value, copies: &HashMap<String, Level>) -> bool {
    let mut rows = Vec::new();
    println!(
        "{:>4} {:<16} {:>7} {:>5} {:>17} {:>7} {:>11} {:>8} {:>19} {:>5}",
        "rank",
        "entrant",
        "rating",
        "dev",
        "rating ± 2 dev",
        "matches",
        "W-D-L",
        "margin",
        "margin 95%",
        "avail"
    );
    for e in league["entrants"].as_array().into_iter().flatten() {
        let id = e["id"].as_str().unwrap_or_default();
        let name = e["name"].as_str().unwrap_or_default().to_owned();
        let (rating, deviation) = (
            e["rating"].as_f64().unwrap_or(0.0),
            e["deviation"].as_f64().unwrap_or(0.0),
        );
        let ci = match e["margin_ci95"].as_array() {
            Some(ci) => format!(
                "[{:+.1}, {:+.1}]",
                ci[0].as_f64().unwrap_or(0.0),
                ci[1].as_f64().unwrap_or(0.0)
            ),
            None => "-".into(),
        };
        println!(
            "{:>4} {:<16} {:>7} {:>5} {:>17} {:>7} {:>11} {:>+8.1} {:>19} {:>5}",
            e["rank"].to_string(),
            name,
            rating,
            deviation,
            format!(
                "[{:.0}, {:.0}]",
                rating - 2.0 * deviation,
                rating + 2.0 * deviation
            ),
            e["matches"].to_string(),
            format!("{}-{}-{}", e["wins"], e["draws"], e["losses"]),
            e["margin_per_deal"].as_f64().unwrap_or(0.0),
            ci,
            e["available"].to_string()
        );
        let (level, copy) = match (id.parse::<Level>(), copies.get(id)) {
            (Ok(level), _) => (level, false),
            (_, Some(&level)) => (level, true),
            _ => continue,
        };
        rows.push(Row {
            name,
            level,
            copy,
            rating,
            deviation,
            entry: e.clone(),
        });
    }
    let level = |l: Level| rows.iter().find(|r| !r.copy && r.level == l);
    let mut held = true;
    let order = [Level::Master, Level::Expert, Level::Greedy, Level::Random];
    for pair in order.windows(2) {
        let (Some(hi), Some(lo)) = (level(pair[0]), level(pair[1])) else {
            continue;
        };
        let above = hi.rating > lo.rating;
        let apart = hi.low() > lo.high();
        let margins = hi.entry["margin_per_deal"].as_f64() > lo.entry["margin_per_deal"].as_f64();
        println!(
            "{} above {}: rating {} ({:.0} vs {:.0}); intervals (rating ± 2 dev) {} \
             ([{:.0}, {:.0}] vs [{:.0}, {:.0}]); margin a deal {}",
            pair[0].as_str(),
            pair[1].as_str(),
            if above { "yes" } else { "NO" },
            hi.rating,
            lo.rating,
            if apart { "apart" } else { "OVERLAP" },
            hi.low(),
            hi.high(),
            lo.low(),
            lo.high(),
            if margins { "higher" } else { "NOT higher" },
        );
        held &= above && apart;
    }
    for r in rows.iter().filter(|r| r.copy) {
        let Some(orig) = level(r.level) else { continue };
        let within = (orig.low()..=orig.high()).contains(&r.rating);
        // Two honest estimates of one skill differ by about sqrt(dev² + dev²): the
        // difference's own interval, which holds 95% of the time (the check above, less).
        let spread = 2.0 * (r.deviation.powi(2) + orig.deviation.powi(2)).sqrt();
        let near = (r.rating - orig.rating).abs() <= spread;
        println!(
            "{}: rating {:.0} {} {}'s interval [{:.0}, {:.0}]; the difference {:+.0} {} ± {:.0}",
            r.name,
            r.rating,
            if within { "within" } else { "OUTSIDE" },
            r.level.as_str(),
            orig.low(),
            orig.high(),
            r.rating - orig.rating,
            if near { "within" } else { "OUTSIDE" },
            spread,
        );
        held &= within;
    }
    held
}

async fn run(args: Args) -> Result<bool, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(err)?;
    let server = |i: usize| args.url[i % args.url.len()].as_str();
    let bots = web::Data::new(Bots::default());
    bots.master_work.store(args.master_work, Ordering::Relaxed);
    let bot_url = start_bots(bots.clone())?;
    let run = &uuid::Uuid::new_v4().simple().to_string()[..6];
    let player = |name: String, i: usize| {
        let http = http.clone();
        let url = server(i).to_owned();
        async move {
            let made = ok(
                http.post(format!("{url}/v1/players"))
                    .json(&json!({"name": name, "bot": true})),
                "a player",
            )
            .await?;
            Ok::<_, String>(made["key"].as_str().ok_or("no key")?.to_owned())
        }
    };
    let creator = player(format!("league{run}"), 0).await?;
    let league = ok(
        http.post(format!("{}/v1/leagues", server(0)))
            .bearer_auth(&creator)
            .json(&json!({
                "name": format!("bench {run}"),
                "preset": args.preset,
                "rules": {"target": null, "rounds": 1},
                "deals_per_match": args.deals_per_match,
                "max_concurrent": args.max_concurrent,
                "levels": ["random", "greedy", "expert", "master"],
            })),
        "a league",
    )
    .await?;
    let id = league["id"]
        .as_str()
        .ok_or("a league without an id")?
        .to_owned();
    let t0 = Instant::now();
    let cpu0: Vec<f64> = args.server_pid.iter().map(|&p| process_cpu(p)).collect();
    let (own0, machine0) = (process_cpu(std::process::id()), machine_cpu());
    // The copies: each a bot player with its webhook on this program, entered through the
    // servers in turn.
    let mut copies = HashMap::new();
    let mut keys = Vec::new();
    for level in Level::ALL {
        for n in 1..=args.copies {
            let i = keys.len();
            let key = player(format!("{}_copy_{n}_{run}", level.as_str()), i).await?;
            let hook = ok(
                http.put(format!("{}/v1/players/me/webhook", server(i)))
                    .bearer_auth(&key)
                    .json(&json!({"url": format!("{bot_url}/{}/{n}", level.as_str())})),
                "a webhook",
            )
            .await?;
            if hook["status"] != "active" {
                return Err(format!("a webhook not active: {hook}"));
            }
            let me = ok(
                http.get(format!("{}/v1/players/me", server(i)))
                    .bearer_auth(&key),
                "me",
            )
            .await?;
            let pid = me["id"]
                .as_str()
                .or(me["player_id"].as_str())
                .ok_or_else(|| format!("no id in {me}"))?;
            copies.insert(pid.to_owned(), level);
            ok(
                http.post(format!("{}/v1/leagues/{id}/entrants", server(i + 1)))
                    .bearer_auth(&key),
                "an entry",
            )
            .await?;
            keys.push((level, n, key, i));
        }
    }
    println!(
        "league {id}: {} preset, one-round games, {} deals a match (each twice), {} matches \
         at once an entrant; the 4 levels and {} webhook copies; {} s from its making",
        args.preset,
        args.deals_per_match,
        args.max_concurrent,
        copies.len(),
        args.secs
    );
    loop {
        let left = args.secs.saturating_sub(t0.elapsed().as_secs());
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(left.min(args.every))).await;
        let now = ok(
            http.get(format!("{}/v1/leagues/{id}", server(1))),
            "a league",
        )
        .await?;
        println!(
            "  {:>4} s: {} matches counted, {} running; calls answered {}",
            t0.elapsed().as_secs(),
            now["matches_counted"],
            now["running"].as_array().map_or(0, Vec::len),
            bots.answered.load(Ordering::Relaxed)
        );
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu: f64 = args
        .server_pid
        .iter()
        .zip(&cpu0)
        .map(|(&p, c)| process_cpu(p) - c)
        .sum();
    let own = process_cpu(std::process::id()) - own0;
    let machine = machine_cpu() - machine0;
    let end = ok(
        http.get(format!("{}/v1/leagues/{id}", server(1))),
        "a league",
    )
    .await?;
    let counted = end["matches_counted"].as_f64().unwrap_or(0.0);
    let per_cpu: Vec<String> = args
        .server_pid
        .iter()
        .zip(&cpu0)
        .map(|(&p, c)| format!("{:.1} s", process_cpu(p) - c))
        .collect();
    println!(
        "{counted:.0} matches counted in {secs:.0} s = {:.0} matches an hour ({} running at \
         the end); games of a match: {}",
        counted * 3600.0 / secs,
        end["running"].as_array().map_or(0, Vec::len),
        2 * args.deals_per_match
    );
    println!(
        "server CPU {cpu:.1} s ({} by process; {:.0}% of a core) = {:.2} s a match counted \
         (the built-in levels' thinking included)",
        per_cpu.join(" + "),
        cpu * 100.0 / secs,
        cpu / counted.max(1.0)
    );
    println!(
        "beside them: this bench (the copies' thinking and their bot server) {:.0}% of a \
         core, everything else {:.0}%",
        own * 100.0 / secs,
        (machine - cpu - own).max(0.0) * 100.0 / secs
    );
    let guessed: u64 = bots
        .recalls
        .lock()
        .expect("not poisoned")
        .values()
        .map(|r| r.guessed)
        .sum();
    println!(
        "webhook calls answered {}, failed here {}; views whose order was guessed {guessed}",
        bots.answered.load(Ordering::Relaxed),
        bots.failed.load(Ordering::Relaxed)
    );
    println!(
        "  the copies' decisions with one legal move, played at once: {}",
        bots.forced.load(Ordering::Relaxed)
    );
    for (level, times) in bots.times.lock().expect("not poisoned").iter_mut() {
        times.sort_unstable();
        println!(
            "  {} copies' thinking: {} decisions with a choice, p50 {:.2} ms, p99 {:.2} ms",
            level.as_str(),
            times.len(),
            quantile(times, 0.5) as f64 / 1000.0,
            quantile(times, 0.99) as f64 / 1000.0
        );
    }
    let (mut calls, mut failures, mut paused) = (0, 0, 0);
    for (_, _, key, i) in &keys {
        let hook = ok(
            http.get(format!("{}/v1/players/me/webhook", server(*i)))
                .bearer_auth(key),
            "a webhook",
        )
        .await?;
        calls += hook["calls"].as_u64().unwrap_or(0);
        failures += hook["failures"].as_u64().unwrap_or(0);
        paused += usize::from(hook["status"] != "active");
    }
    println!(
        "the copies' webhooks as the server counts them: {calls} calls, {failures} failures, \
         {paused} not active at the end"
    );
    Ok(report_table(&end, &copies))
}

#[tokio::main]
async fn main() {
    let done = run(Args::parse()).await;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.trim());
    match done {
        Ok(true) => println!("every check of the table held"),
        Ok(false) => println!("some check of the table did not hold (above)"),
        Err(e) => {
            eprintln!("league: {e}");
            std::process::exit(1);
        }
    }
}
