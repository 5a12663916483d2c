//! The expert's time per decision by how many legal moves it had: a timing observer must
//! not learn from it that only one tile fits, or that the seat must pass.
//!
//! `cargo run --release --example expert_timing -- --positions 30 --repeats 5`
//!
//! Finds positions of a preset (`--preset`, default `block`; two seats, greedy play from
//! many seeds)
//! where the seat to move has only a pass, only one play, 2 to 5 moves, or 6 and more,
//! times the expert's default budget on each (`--repeats` times), and prints the machine,
//! then per class the mean and the median time of a decision. `--hand 4` keeps positions
//! where the seat holds 4 tiles: how long the rollouts are follows how far the round is.

use std::time::{Duration, Instant};

use clap::Parser;
use domino_server::bots::{self, Level, expert};
use domino_server::engine::{Game, Move, Preset, Projection, Seed};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// Positions per class.
    #[arg(long, default_value_t = 30)]
    positions: usize,
    /// Decisions timed per position.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Only positions where the seat holds this many tiles (the rollouts' length follows
    /// how far the round is: compare like with like).
    #[arg(long)]
    hand: Option<usize>,
    /// The preset (block: no drawing, so every class has rollouts of the same kind).
    #[arg(long, default_value = "block")]
    preset: Preset,
}

const CLASSES: [&str; 4] = ["pass only", "one play", "2-5 moves", "6+ moves"];

fn class(view: &Projection) -> Option<usize> {
    let moves = &view.legal_moves;
    match moves.len() {
        0 => None,
        1 if moves[0].mv == Move::Pass => Some(0),
        1 if matches!(moves[0].mv, Move::Play { .. }) => Some(1),
        1 => None,
        2..=5 => Some(2),
        _ => Some(3),
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    format!("{cpu}, {cores} cores, load average {load}")
}

fn main() {
    let args = Args::parse();
    let mut found: [Vec<Projection>; 4] = Default::default();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    'seeds: for n in 0..10_000 {
        for preset in [args.preset] {
            let seed = Seed::from_text(&format!("timing {n}"));
            let mut game = Game::new(preset.rules(), 2, seed, None).unwrap();
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                let held = view.hand.map_or(0, |h| h.len());
                if let Some(c) = class(&view)
                    && args.hand.is_none_or(|n| n == held)
                    && found[c].len() < args.positions
                {
                    found[c].push(view.clone());
                }
                let mv = bots::choose(Level::Greedy, &view, &mut rng).unwrap();
                game.play(turn, mv).unwrap();
            }
            if found.iter().all(|f| f.len() >= args.positions) {
                break 'seeds;
            }
        }
    }
    println!("machine: {}", machine());
    println!(
        "expert, default budget ({} rollouts), {}; {} positions a class{}, {} decisions each",
        expert::ExpertConfig::default().rollouts,
        args.preset.name(),
        args.positions,
        args.hand
            .map_or(String::new(), |n| format!(" holding {n} tiles")),
        args.repeats
    );
    // Warm up caches and frequency before the first class.
    for view in found.iter().flatten().take(20) {
        expert::choose(view, &mut rng);
    }
    for (c, views) in found.iter().enumerate() {
        let mut times: Vec<Duration> = Vec::new();
        for view in views {
            for _ in 0..args.repeats {
                let started = Instant::now();
                std::hint::black_box(expert::choose(view, &mut rng));
                times.push(started.elapsed());
            }
        }
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len().max(1) as u32;
        let median = times.get(times.len() / 2).copied().unwrap_or_default();
        println!(
            "{:>10}: mean {:.2} ms, median {:.2} ms over {} decisions",
            CLASSES[c],
            mean.as_secs_f64() * 1e3,
            median.as_secs_f64() * 1e3,
            times.len()
        );
    }
}
