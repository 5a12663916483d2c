//! Sampling the tiles a seat cannot see: the searching bots' worlds.
//!
//! A sampled world is consistent with everything public in the seat's [`Projection`]:
//! every other seat gets exactly its tile count, none carrying a pip it is known to lack
//! (its passes and forced draws), a forced lead goes to the leader, and the rest is the
//! boneyard. Nothing else is read: no hidden tile can reach a sample.

use rand::Rng;
use rand::seq::SliceRandom;

use domino_engine::{Projection, Tile, TileSet};

/// Tries of plain rejection sampling before dealing seat by seat under the constraints.
const REJECTION_TRIES: usize = 8;

/// A random placement of the tiles `seat` cannot see: a hand for every seat (its own the
/// real one) and the boneyard, top last. Consistent with the public facts: each other seat
/// gets `hand_counts` tiles carrying none of its known voids, and a forced lead is in the
/// leader's hand. Plain rejection first (uniform over the consistent deals); when that
/// keeps failing, seat by seat, the most constrained first; and when even that cannot
/// satisfy every void (it always can with two seats), the void is given up for the tiles
/// that will not fit anywhere else.
pub(crate) fn sample_hidden<R: Rng + ?Sized>(
    view: &Projection,
    seat: u8,
    rng: &mut R,
) -> ([TileSet; 4], Vec<Tile>) {
    let seats = view.seats as usize;
    let mut hands = [TileSet::EMPTY; 4];
    hands[seat as usize] = view.hand.unwrap_or_default();
    let mut need = [0usize; 4];
    for (s, (n, &count)) in need.iter_mut().zip(&view.hand_counts).enumerate() {
        if s != seat as usize {
            *n = count as usize;
        }
    }
    let mut pool: Vec<Tile> = view.unseen().iter().collect();
    if let (true, Some(lead), Some(turn)) = (view.layout.is_empty(), view.must_lead, view.turn)
        && turn != seat
        && need[turn as usize] > 0
        && let Some(i) = pool.iter().position(|&t| t == lead)
    {
        pool.swap_remove(i);
        hands[turn as usize].insert(lead);
        need[turn as usize] -= 1;
    }
    let allowed = |s: usize, t: Tile| view.voids[s] & (1 << t.lo() | 1 << t.hi()) == 0;

    for _ in 0..REJECTION_TRIES {
        pool.shuffle(rng);
        let mut at = 0;
        let mut ok = true;
        for s in 0..seats {
            ok &= pool[at..at + need[s]].iter().all(|&t| allowed(s, t));
            at += need[s];
        }
        if ok {
            let mut at = 0;
            for s in 0..seats {
                hands[s] = pool[at..at + need[s]].iter().fold(hands[s], |mut h, &t| {
                    h.insert(t);
                    h
                });
                at += need[s];
            }
            return (hands, pool[at..].to_vec());
        }
    }

    // Seat by seat, fewest allowed tiles first.
    let mut order: Vec<usize> = (0..seats).filter(|&s| need[s] > 0).collect();
    order.sort_by_key(|&s| pool.iter().filter(|&&t| allowed(s, t)).count());
    pool.shuffle(rng);
    for s in order {
        // Allowed tiles to the front, keeping their shuffled order, then take `need`.
        let mut front = 0;
        for i in 0..pool.len() {
            if allowed(s, pool[i]) {
                pool.swap(front, i);
                front += 1;
            }
        }
        for t in pool.drain(..need[s]) {
            hands[s].insert(t);
        }
    }
    pool.shuffle(rng);
    (hands, pool)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::greedy;
    use domino_engine::{Game, Preset, Seed};

    /// A view with known voids: a block game played by greedy until some seat passed.
    fn view_with_voids(seats: u8) -> Option<Projection> {
        for n in 0..50 {
            let mut game = Game::new(
                Preset::Block.rules(),
                seats,
                Seed::from_text(&format!("voids {n}")),
                None,
            )
            .unwrap();
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                if view
                    .voids
                    .iter()
                    .enumerate()
                    .any(|(s, &v)| s != turn as usize && v != 0)
                    && view
                        .hand_counts
                        .iter()
                        .enumerate()
                        .all(|(s, &c)| s == turn as usize || c > 1)
                {
                    return Some(view);
                }
                game.play(turn, greedy::choose(&view)).unwrap();
            }
        }
        None
    }

    #[test]
    fn sampled_deals_respect_counts_voids_and_the_unseen_tiles() {
        for seats in 2..=4 {
            let view = view_with_voids(seats).expect("some seat passes");
            let seat = view.viewer.unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seats as u64);
            for _ in 0..200 {
                let (hands, boneyard) = sample_hidden(&view, seat, &mut rng);
                assert_eq!(hands[seat as usize], view.hand.unwrap());
                let mut all: TileSet = boneyard.iter().copied().collect();
                assert_eq!(boneyard.len(), view.boneyard_count as usize);
                for (s, hand) in hands.iter().enumerate().take(seats as usize) {
                    assert_eq!(hand.len(), view.hand_counts[s] as usize);
                    if s != seat as usize {
                        assert!(
                            hand.with_any_pip(view.voids[s]).is_empty(),
                            "seat {s} got a void pip"
                        );
                        all = all.union(*hand);
                    }
                }
                assert_eq!(all, view.unseen());
                Game::determinise(&view, hands, boneyard).unwrap();
            }
        }
    }

    #[test]
    fn a_forced_lead_is_dealt_to_the_leader() {
        for n in 0..20 {
            let game = Game::new(
                Preset::AllFives.rules(),
                3,
                Seed::from_text(&format!("lead {n}")),
                None,
            )
            .unwrap();
            let leader = game.turn().unwrap();
            let me = (leader + 1) % 3;
            let view = game.project(Some(me));
            let lead = view.must_lead.unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(n);
            let (hands, _) = sample_hidden(&view, me, &mut rng);
            assert!(hands[leader as usize].contains(lead));
        }
    }
}
