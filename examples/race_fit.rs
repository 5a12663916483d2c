//! Race fit: how well the master's match race ([`master::Race`]) foretells who wins a
//! match of two seats under fives scoring, from the scores at the start of each round.
//!
//! `cargo run --release --example race_fit -- --matches 20000 --level greedy`
//!
//! Plays `--matches` matches of the preset between two bots of one level, keeps the scores
//! every round begins with (the positions a playout of the master ends in) and who won the
//! match, and scores every `(per_round, spread)` of a grid by the mean log-likelihood of
//! those results under [`master::Race::chance`]: the best fit, the built-in
//! [`master::RACE`] and a few around them are printed, with, for comparison, the
//! likelihood of a coin (no model: ln ½).

use std::str::FromStr;

use clap::Parser;
use domino_server::bots::{self, Level, expert, master, turns};
use domino_server::engine::{Game, Outcome, Preset, Seed};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Parser, Debug)]
#[command(about = "Fits the master's match race to self-play results")]
struct Args {
    /// Preset (a fives-scoring one with a target: all_fives, muggins).
    #[arg(long, default_value = "all_fives", value_parser = |s: &str| Preset::from_str(s).map_err(|e| e.message))]
    preset: Preset,
    /// Matches to play.
    #[arg(long, default_value_t = 20_000)]
    matches: usize,
    /// The level both seats play (random, greedy or expert).
    #[arg(long, default_value = "greedy")]
    level: Level,
    /// Expert: rollouts per decision.
    #[arg(long, default_value_t = 200)]
    rollouts: u32,
    /// Seed text for the deals and the bots.
    #[arg(long, default_value = "race")]
    seed: String,
}

/// One round's start: the scores of seat 0 and seat 1, and whether seat 0 won the match.
struct Sample {
    scores: [i32; 2],
    won: f64,
}

fn main() {
    let args = Args::parse();
    let rules = args.preset.rules();
    let target = rules.target.expect("a preset with a target") as f64;
    let config = expert::ExpertConfig {
        rollouts: args.rollouts,
        ..expert::ExpertConfig::default()
    };
    let mut samples = Vec::new();
    let mut rounds = 0usize;
    for index in 0..args.matches {
        let seed = Seed::from_text(&format!("{}/{index}", args.seed));
        let mut game = Game::new(rules, 2, seed, None).expect("a table of two");
        let mut rng = ChaCha8Rng::from_seed(seed.0);
        let mut starts = vec![[0, 0]];
        let mut round = game.rounds_done();
        while let Some(seat) = turns::next_bot(&game, &[Some(args.level); 2]) {
            let view = game.project(Some(seat));
            let mv = match args.level {
                Level::Expert => expert::choose_with(&view, &config, &mut rng),
                level => bots::choose(level, &view, &mut rng).expect("a move"),
            };
            game.play(seat, mv).expect("a legal move");
            if game.rounds_done() != round && !game.is_over() {
                round = game.rounds_done();
                starts.push([game.scores()[0], game.scores()[1]]);
            }
        }
        let won = match game.outcome() {
            Some(Outcome::Won { side: 0 }) => 1.0,
            Some(Outcome::Drawn) => 0.5,
            _ => 0.0,
        };
        rounds += starts.len();
        // The first round's 0-0 says nothing of the race (every model gives ½).
        samples.extend(
            starts
                .into_iter()
                .skip(1)
                .map(|scores| Sample { scores, won }),
        );
    }
    let fit = |race: master::Race| {
        samples
            .iter()
            .map(|s| {
                let p = race
                    .chance(s.scores[0] as f64, s.scores[1] as f64, target)
                    .clamp(1e-9, 1.0 - 1e-9);
                s.won * p.ln() + (1.0 - s.won) * (1.0 - p).ln()
            })
            .sum::<f64>()
            / samples.len() as f64
    };
    let mut grid = Vec::new();
    for per_round in (10..=100).step_by(5) {
        for spread in (10..=100).step_by(5) {
            let race = master::Race {
                per_round: f64::from(per_round),
                spread: f64::from(spread),
            };
            grid.push((fit(race), race));
        }
    }
    grid.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!(
        "preset {}, {} matches of {} against itself, {} rounds, {} positions after a round (target {target})",
        args.preset.name(),
        args.matches,
        args.level.as_str(),
        rounds,
        samples.len()
    );
    println!(
        "mean log-likelihood of the match's result (a coin: {:.4})",
        0.5f64.ln()
    );
    for (ll, race) in grid.iter().take(5) {
        println!(
            "  per_round {:>3}, spread {:>3}: {ll:.4}",
            race.per_round, race.spread
        );
    }
    println!(
        "  built-in per_round {}, spread {}: {:.4}",
        master::RACE.per_round,
        master::RACE.spread,
        fit(master::RACE)
    );
}
