//! The time to pair one Swiss round of 64 entrants after 6 rounds (a figure for
//! BENCHMARKS.md, not a test): `cargo run --release -p domino-tournament --example pairing_time`
//! (`-- ENTRANTS ROUNDS` for another field).

use domino_tournament::{Bye, History, Played, Winner, swiss};
use std::time::Instant;

const RUNS: u32 = 200;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u16>().expect("a number"));
    let entrants = args.next().unwrap_or(64);
    let played_rounds = args.next().unwrap_or(6);
    // SplitMix64 from a fixed seed: the same history every run.
    let mut state = 0x5eed_u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let withdrawn = vec![false; usize::from(entrants)];
    let (mut played, mut byes) = (Vec::<Played>::new(), Vec::<Bye>::new());
    for round in 1..=played_rounds {
        let h = History {
            entrants,
            withdrawn: &withdrawn,
            played: &played,
            byes: &byes,
        };
        let pairing = swiss(&h, round).expect("the field pairs for these rounds");
        for (a, b) in pairing.pairs {
            let winner = [Winner::A, Winner::B, Winner::Draw][(next() % 3) as usize];
            let margin_a = (next() % 81) as i32 - 40;
            played.push(Played {
                round,
                a,
                b,
                winner: Some(winner),
                margin_a,
            });
        }
        byes.extend(
            pairing
                .byes
                .into_iter()
                .map(|entrant| Bye { round, entrant }),
        );
    }
    let h = History {
        entrants,
        withdrawn: &withdrawn,
        played: &played,
        byes: &byes,
    };
    let mut times: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let round = swiss(&h, played_rounds + 1);
            let elapsed = start.elapsed().as_secs_f64();
            assert!(round.is_some());
            elapsed * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "pairing round {} of {entrants} entrants: median {:.3} ms, min {:.3} ms, max {:.3} ms over {RUNS} runs (one thread)",
        played_rounds + 1,
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
    );
    println!("machine: {cores} cores (nproc), {cpu}");
}
