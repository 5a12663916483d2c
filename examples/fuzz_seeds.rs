//! Seeds for the `storage` fuzz target: stored games (the service's `Record`) of every preset,
//! at every move of a few random matches, one file each. Mutating real games reaches far
//! deeper than random bytes, which almost never decode into a game.
//!
//! `cargo run --example fuzz_seeds -- fuzz/corpus/storage` (see `fuzz/README.md`).

use domino_server::engine::{Game, Preset, Seed};
use domino_server::service::Record;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: fuzz_seeds <directory>");
    std::fs::create_dir_all(&dir).expect("the directory can be made");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut written = 0;
    for (p, preset) in Preset::ALL.into_iter().enumerate() {
        for seats in 2..=4u8 {
            if preset.rules().validate(seats).is_err() {
                continue;
            }
            let seed = Seed([p as u8 * 4 + seats; 32]);
            let mut game = Game::new(preset.rules(), seats, seed, None).expect("a valid game");
            // Every few moves of one match, so early, middle and late states are there.
            for step in 0.. {
                if step % 7 == 0 {
                    let path = format!("{dir}/{}-{seats}-{step:03}", preset.name());
                    std::fs::write(
                        path,
                        Record::new(0, preset, false, None, game.clone()).encode(),
                    )
                    .expect("the seed is written");
                    written += 1;
                }
                let Some(turn) = game.turn() else { break };
                let moves = game.legal_moves(turn);
                let mv = moves[rng.next_u32() as usize % moves.len()];
                game.play(turn, mv).expect("a legal move");
            }
        }
    }
    println!("{written} stored games written to {dir}");
}
