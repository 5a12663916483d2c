//! A league's ratings simulated (issue 55): which starting volatility σ and system constant
//! τ let a league's intervals separate levels of different skill while each copy of a level
//! stays within its original's interval. No server: the league's own pure code
//! (`League::pairings` and `League::count_with`) on the bench's league (`scripts/bench-
//! league.sh`): the four built-in levels and three copies of each (players), fixed true
//! strengths, two matches at once an entrant, paired at each 2 s look as the drive does.
//!
//! A match's result is drawn from the true strengths: `a`'s expected score `E` is the
//! logistic of the true gap (400 points a factor of ten, as Glicko's), a draw comes with
//! probability `d · 2 · min(E, 1 - E)` (so the expected score stays `E`), `d` the family
//! pair's draw rate seen in the bench (greedy against greedy draws most). A match lasts the
//! sum of both sides' thinking, so a master plays about as few matches as in the bench.
//!
//! `cargo run --release --example league_sim -- [--secs 600] [--seeds 20]`: for each σ/τ,
//! over the seeds, the deviations at the end, how often each pair of adjacent levels has
//! intervals (rating ± 2 deviations) apart, the copies within their originals' intervals,
//! and the calibration: the root mean square, over every pair of entrants, of the error of
//! their rating difference over its deviation (`sqrt(dev_i² + dev_j²)`); near 1 when the
//! deviations are honest, above 1 when they claim more than they know.

use clap::Parser;
use domino_server::bots::Level;
use domino_server::domain::{LeagueId, MatchId};
use domino_server::engine::{Preset, RulesPatch};
use domino_server::service::leagues::record::{Entrant, League};
use domino_server::service::matchmaking::invitation::Party;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser, Debug)]
struct Args {
    /// Simulated seconds the league runs.
    #[arg(long, default_value_t = 600)]
    secs: u64,
    /// Runs for each choice, seeded 1, 2, ...
    #[arg(long, default_value_t = 20)]
    seeds: u64,
    /// Choices as `sigma:tau` or `sigma:tau:level_deviation` (the levels' starting
    /// deviation; the league's when not given), repeated (a few when none).
    #[arg(long)]
    model: Vec<String>,
}

/// The families, strongest first: the bench's final ratings, each family's mean
/// (BENCHMARKS.md, "Leagues", commit 06882c0), as the true strengths.
const FAMILIES: [(Level, f64); 4] = [
    (Level::Master, 1739.0),
    (Level::Expert, 1634.0),
    (Level::Greedy, 1417.0),
    (Level::Random, 1267.0),
];

/// Seconds of a side's thinking in a match (the bench: a master plays about 85 matches in
/// 600 s two at once, a random about 290).
fn thinking(level: Level) -> f64 {
    match level {
        Level::Master => 11.0,
        Level::Expert => 2.5,
        Level::Greedy | Level::Random => 1.5,
    }
}

/// A family pair's draw rate `d` (the bench's W-D-L: greedy against greedy 65-80% draws,
/// random's few, the rest about a quarter).
fn draw_rate(x: Level, y: Level) -> f64 {
    match (x, y) {
        (Level::Greedy, Level::Greedy) => 0.75,
        (Level::Random, Level::Random) => 0.05,
        _ => 0.25,
    }
}

struct Run {
    /// The highest volatility at the end.
    volatility: f64,
    /// Each family's mean deviation at the end, and mean matches an entrant.
    deviations: Vec<f64>,
    played: Vec<f64>,
    apart: [bool; 3],
    ordered: bool,
    copies_within: usize,
    /// Copies whose difference from their original is within its own interval,
    /// ± 2 sqrt(dev_copy² + dev_original²).
    copies_near: usize,
    calibration: f64,
    matches: u64,
}

fn simulate((sigma, tau, level_dev): (f64, f64, Option<f64>), secs: u64, seed: u64) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut entrants = Vec::new();
    let mut family = Vec::new();
    for &(level, _) in &FAMILIES {
        let e = Entrant::level(level, 0);
        let mut rating = *e.rating();
        rating.volatility = sigma;
        if let Some(dev) = level_dev {
            rating.deviation = dev;
        }
        entrants.push(e.starting_at(rating));
        family.push(level);
    }
    for &(level, _) in &FAMILIES {
        for copy in 1..=3 {
            let party = Party {
                id: format!("{}-{copy}", level.as_str()),
                name: format!("{} copy {copy}", level.as_str()),
            };
            let e = Entrant::player(party, true, 0);
            let mut rating = *e.rating();
            rating.volatility = sigma;
            entrants.push(e.starting_at(rating));
            family.push(level);
        }
    }
    let truth = |i: usize| FAMILIES.iter().find(|f| f.0 == family[i]).unwrap().1;
    let sim = Party {
        id: "sim".into(),
        name: "sim".into(),
    };
    let game = (Preset::Block, RulesPatch::default(), None);
    let mut league = League::new(
        LeagueId::random(),
        "sim".into(),
        sim,
        0,
        game,
        (2, 2),
        entrants,
    );
    let available = vec![true; league.entrants().len()];
    // Matches in play: their end (ms) and `a`'s result, drawn when made.
    let mut ends: Vec<(u64, MatchId, i64)> = Vec::new();
    let mut now = 0;
    while now <= secs * 1000 {
        ends.sort_by_key(|e| e.0);
        let over = ends.iter().take_while(|e| e.0 <= now).count();
        for (_, id, diff) in ends.drain(..over) {
            league.count_with(id, Some((diff, diff as f64)), now, tau);
        }
        for (a, b) in league.pairings(&available, usize::MAX, now) {
            let (ia, ib) = (usize::from(a), usize::from(b));
            let expected = 1.0 / (1.0 + 10f64.powf(-(truth(ia) - truth(ib)) / 400.0));
            let draw = draw_rate(family[ia], family[ib]) * 2.0 * expected.min(1.0 - expected);
            let u: f64 = rng.random();
            let diff = if u < draw {
                0
            } else if u < draw + expected - draw / 2.0 {
                1
            } else {
                -1
            };
            let secs = (thinking(family[ia]) + thinking(family[ib])) * rng.random_range(0.7..1.3);
            let id = MatchId::random();
            league.start(id, (a, b), now);
            ends.push((now + (secs * 1000.0) as u64, id, diff));
        }
        now += 2000;
    }
    let r = |i: usize| league.entrants()[i].rating();
    let apart = [0, 1, 2]
        .map(|f| r(f).rating - 2.0 * r(f).deviation > r(f + 1).rating + 2.0 * r(f + 1).deviation);
    let ordered = (0..3).all(|f| r(f).rating > r(f + 1).rating);
    let copies_within = (4..16)
        .filter(|&i| {
            let original = r((i - 4) / 3);
            (r(i).rating - original.rating).abs() <= 2.0 * original.deviation
        })
        .count();
    let copies_near = (4..16)
        .filter(|&i| {
            let original = r((i - 4) / 3);
            let spread = 2.0 * (r(i).deviation.powi(2) + original.deviation.powi(2)).sqrt();
            (r(i).rating - original.rating).abs() <= spread
        })
        .count();
    let (mut squares, mut pairs) = (0.0, 0.0);
    for i in 0..16 {
        for j in i + 1..16 {
            let error = (r(i).rating - r(j).rating) - (truth(i) - truth(j));
            squares += error * error / (r(i).deviation.powi(2) + r(j).deviation.powi(2));
            pairs += 1.0;
        }
    }
    let deviations = (0..4)
        .map(|f| {
            let members = [f, 4 + 3 * f, 5 + 3 * f, 6 + 3 * f];
            members.iter().map(|&i| r(i).deviation).sum::<f64>() / 4.0
        })
        .collect();
    let played = (0..4)
        .map(|f| {
            let members = [f, 4 + 3 * f, 5 + 3 * f, 6 + 3 * f];
            members
                .iter()
                .map(|&i| f64::from(league.entrants()[i].matches()))
                .sum::<f64>()
                / 4.0
        })
        .collect();
    let volatility = league
        .entrants()
        .iter()
        .map(|e| e.rating().volatility)
        .fold(0.0, f64::max);
    Run {
        volatility,
        deviations,
        played,
        apart,
        ordered,
        copies_within,
        copies_near,
        calibration: (squares / pairs).sqrt(),
        matches: league.counted(),
    }
}

fn main() {
    let args = Args::parse();
    let models: Vec<(f64, f64, Option<f64>)> = if args.model.is_empty() {
        vec![
            (0.06, 0.5, None),
            (0.03, 0.5, None),
            (0.02, 0.5, None),
            (0.01, 0.5, None),
            (0.01, 0.2, None),
            (0.005, 0.2, None),
        ]
    } else {
        args.model
            .iter()
            .map(|m| {
                let parts: Vec<f64> = m.split(':').map(|p| p.parse().expect("a number")).collect();
                (parts[0], parts[1], parts.get(2).copied())
            })
            .collect()
    };
    println!(
        "{} s simulated, {} seeds each; deviation: each family's mean (level and copies) at the end",
        args.secs, args.seeds
    );
    println!(
        "| σ | τ | levels' dev | matches | an entrant's, master / expert / greedy / random | dev master / expert / greedy / random | m>e apart | e>g apart | g>r apart | all apart | order | copies within (of 12) | differences within | calibration | highest σ |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for model in models {
        let (sigma, tau, level_dev) = model;
        let runs: Vec<Run> = (1..=args.seeds)
            .map(|seed| simulate(model, args.secs, seed))
            .collect();
        let n = runs.len() as f64;
        let share = |f: &dyn Fn(&Run) -> bool| runs.iter().filter(|r| f(r)).count();
        let mean = |f: &dyn Fn(&Run) -> f64| runs.iter().map(f).sum::<f64>() / n;
        let devs: Vec<String> = (0..4)
            .map(|f| format!("{:.0}", mean(&|r: &Run| r.deviations[f])))
            .collect();
        let played: Vec<String> = (0..4)
            .map(|f| format!("{:.0}", mean(&|r: &Run| r.played[f])))
            .collect();
        println!(
            "| {sigma} | {tau} | {} | {:.0} | {} | {} | {}/{} | {}/{} | {}/{} | {}/{} | {}/{} | {:.1} (min {}) | {:.1} | {:.2} | {:.4} |",
            level_dev.unwrap_or(Entrant::level(Level::Greedy, 0).rating().deviation),
            mean(&|r: &Run| r.matches as f64),
            played.join(" / "),
            devs.join(" / "),
            share(&|r: &Run| r.apart[0]),
            runs.len(),
            share(&|r: &Run| r.apart[1]),
            runs.len(),
            share(&|r: &Run| r.apart[2]),
            runs.len(),
            share(&|r: &Run| r.apart.iter().all(|&a| a)),
            runs.len(),
            share(&|r: &Run| r.ordered),
            runs.len(),
            mean(&|r: &Run| r.copies_within as f64),
            runs.iter().map(|r| r.copies_within).min().unwrap_or(0),
            mean(&|r: &Run| r.copies_near as f64),
            mean(&|r: &Run| r.calibration),
            runs.iter().map(|r| r.volatility).fold(0.0, f64::max),
        );
    }
}
