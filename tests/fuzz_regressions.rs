//! The fuzzing harnesses of `domino_server::fuzz`, on stable: every input saved under
//! `fuzz/regressions/<target>/` (crashes the fuzzer found, kept fixed), then a bounded
//! number of pseudo-random inputs, and for the storage target, stored games with bytes
//! flipped. The real fuzzing is `cargo +nightly fuzz run <target>`; see `fuzz/README.md`.

use std::path::PathBuf;

use domino_server::engine::{Game, Move, Preset, Seed};
use domino_server::fuzz;
use domino_server::service::Record;

/// A small deterministic generator (xorshift64*), so every run tries the same inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let len = self.next() as usize % (max_len + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn saved_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut inputs: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn engine_saved_inputs() {
    for (path, input) in saved_inputs("engine") {
        eprintln!("{}", path.display());
        fuzz::engine(&input);
    }
}

#[test]
fn engine_random_inputs() {
    let mut rng = Rng(0x5eed_d0d1);
    for _ in 0..300 {
        fuzz::engine(&rng.bytes(600));
    }
}

/// Inputs that make the table actions (raw move kinds 0x63 resign, 0x67 timed out, 0x6b
/// abandon, 0x6f forfeit) by every seat between legal moves, with two, three and four
/// seats: accepted or refused, the game holds and replays.
#[test]
fn engine_table_actions() {
    const KINDS: [u8; 4] = [0x63, 0x67, 0x6b, 0x6f];
    for head in [0u8, 8, 16, 1, 9, 17, 5, 13, 21] {
        for order in 0..4usize {
            let mut input = vec![head];
            input.extend([0; 18]); // the preset's rules
            input.extend([1, 2, 3, order as u8]); // the seed
            input.push(2); // dealt from the seed
            for step in 0..40usize {
                input.push((step * 7 % 0xc0) as u8); // a legal move
                let kind = KINDS[(step + order) % 4];
                input.extend([0xc0, (step % 5) as u8, kind]);
            }
            fuzz::engine(&input);
        }
    }
}

#[test]
fn storage_saved_inputs() {
    for (path, input) in saved_inputs("storage") {
        eprintln!("{}", path.display());
        fuzz::storage(&input);
    }
}

#[test]
fn storage_random_and_corrupted_games() {
    let mut rng = Rng(0xbad_5eed);
    for _ in 0..300 {
        fuzz::storage(&rng.bytes(300));
    }
    // Real games, played a little, then damaged one byte at a time.
    for (i, preset) in Preset::ALL.into_iter().enumerate() {
        let seats = [2 + (i % 3) as u8, 2]
            .into_iter()
            .find(|&n| preset.rules().validate(n).is_ok())
            .unwrap();
        let mut game = Game::new(preset.rules(), seats, Seed([i as u8; 32]), None).unwrap();
        for _ in 0..(5 + 7 * i) {
            let Some(turn) = game.turn() else { break };
            let moves = game.legal_moves(turn);
            let mv = moves[rng.next() as usize % moves.len()];
            game.play(turn, mv).unwrap();
        }
        // A timeout and an abandoned seat, so the stored table state is damaged too.
        if let Some(turn) = game.turn() {
            game.play(turn, Move::TimedOut).unwrap();
            game.play((turn + 1) % seats, Move::Abandon).unwrap();
        }
        let bytes = Record::new(0, preset, false, None, game).encode();
        fuzz::storage(&bytes);
        for _ in 0..200 {
            let mut damaged = bytes.clone();
            let at = rng.next() as usize % damaged.len();
            damaged[at] = rng.next() as u8;
            fuzz::storage(&damaged);
        }
    }
}
