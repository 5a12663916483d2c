//! Random playouts: how many whole rounds (deal to result) the engine plays per second on
//! one core, every move chosen uniformly among the legal ones.
//!
//! `cargo run --release --example playouts -- --preset classic --seats 2 --seconds 3`
//! prints, as its last line, `<preset> <seats> seats: <N> rounds/s`.

use std::time::{Duration, Instant};

use clap::Parser;
use domino_server::engine::{Event, Game, Move, Preset, Rules, Seed};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser)]
struct Args {
    /// classic, block, draw, all_fives, muggins or penalty
    #[arg(long, default_value = "classic")]
    preset: String,
    #[arg(long, default_value_t = 2)]
    seats: u8,
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Override the hand size (when the preset's hand does not fit this many seats)
    #[arg(long)]
    hand: Option<u8>,
    /// Stop after this many rounds instead of after `--seconds` (for instruction counts
    /// under callgrind, which are repeatable on a busy machine).
    #[arg(long)]
    rounds: Option<u64>,
}

fn main() {
    let args = Args::parse();
    let preset: Preset = args.preset.parse().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut rules: Rules = preset.rules();
    if let Some(hand) = args.hand {
        rules.hand_size = hand;
    }
    if let Err(e) = rules.validate(args.seats) {
        // Penalty's 7-tile hands, start tile and reserve do not fit four seats in a
        // double-6: play the largest hand that fits, and say so.
        let fit = (1..rules.hand_size).rev().find(|&h| {
            Rules {
                hand_size: h,
                ..rules
            }
            .validate(args.seats)
            .is_ok()
        });
        match fit {
            Some(h) if args.hand.is_none() => {
                eprintln!("note: {e}; playing with hand_size {h}");
                rules.hand_size = h;
            }
            _ => {
                eprintln!("{e}");
                std::process::exit(2)
            }
        }
    }

    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut legal: Vec<Move> = Vec::with_capacity(64);
    let mut events: Vec<Event> = Vec::with_capacity(16);
    let budget = Duration::from_secs_f64(args.seconds);
    let start = Instant::now();
    let (mut rounds, mut moves, mut matches) = (0u64, 0u64, 0u64);
    'outer: loop {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let mut game = Game::new(rules, args.seats, Seed(seed), None).expect("valid rules");
        matches += 1;
        while let Some(turn) = game.turn() {
            game.legal_moves_into(turn, &mut legal);
            let mv = legal[(rng.next_u32() as usize) % legal.len()];
            events.clear();
            game.play_into(turn, mv, &mut events)
                .expect("a legal move applies");
            moves += 1;
            for e in &events {
                if let Event::RoundEnded(_) = e {
                    rounds += 1;
                    if args.rounds.is_some_and(|n| rounds >= n)
                        || (rounds % 4096 == 0
                            && args.rounds.is_none()
                            && start.elapsed() >= budget)
                    {
                        break 'outer;
                    }
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{rounds} rounds, {moves} moves, {matches} matches in {secs:.2} s ({:.0} moves/s); one thread",
        moves as f64 / secs
    );
    println!(
        "{} {} seats: {:.0} rounds/s",
        preset.name(),
        args.seats,
        rounds as f64 / secs
    );
}
