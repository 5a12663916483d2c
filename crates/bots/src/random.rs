//! The random player: any legal move, uniformly.

use rand::Rng;
use rand::seq::IndexedRandom;

use domino_engine::{Move, Projection};

/// A legal move chosen uniformly. `view.legal_moves` must not be empty.
pub fn choose<R: Rng + ?Sized>(view: &Projection, rng: &mut R) -> Move {
    view.legal_moves
        .choose(rng)
        .expect("a seat with a move to make")
        .mv
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use domino_engine::{Game, Preset, Seed};

    #[test]
    fn random_picks_every_legal_lead_sometimes_and_nothing_else() {
        let rules = domino_engine::Rules {
            opening: domino_engine::rules::Opening::SeatZero,
            ..Preset::Block.rules()
        };
        let game = Game::new(rules, 2, Seed::from_text("random"), None).unwrap();
        let view = game.project(Some(0));
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..500 {
            let mv = choose(&view, &mut rng);
            assert!(view.legal_moves.iter().any(|m| m.mv == mv));
            seen.insert(mv);
        }
        assert_eq!(seen.len(), view.legal_moves.len(), "seven leads, all tried");
    }
}
