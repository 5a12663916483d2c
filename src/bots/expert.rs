//! The expert player: determinised search (perfect-information Monte Carlo).
//!
//! For each of N samples it deals the tiles it cannot see at random, consistently with
//! what the table has shown (every other seat gets exactly its tile count, none carrying
//! a pip that seat is known to lack; a forced lead goes to the leader), builds a playable
//! game with [`Game::determinise`], and plays every candidate move in that same game
//! followed by a greedy rollout to the end of the round. The move with the best average
//! outcome for its side wins: its side's gain in the round minus the opponents' (the
//! opposite under penalty scoring), plus a bonus for winning the match and a malus for
//! losing it when the rollout ends the match.
//!
//! It reads nothing but the [`Projection`] and the RNG: no hidden tile, no clock. The
//! budget is a number of rollouts ([`Config::rollouts`]), chosen so that a move takes
//! under 50 ms at the 99th percentile in release on a 2-core machine (see BENCHMARKS.md).
//! Every decision of its own turn does the same work, one legal move or twenty, a pass
//! included: the same number of sampled deals, each trying [`PER_DEAL`] candidates (in
//! turn: with fewer candidates some are tried twice on a deal, and counted once), so how
//! long it thinks does not tell the table how many tiles it could play. Only taking points
//! (public: everyone sees them unclaimed) answers at once.

use rand::Rng;
use rand::seq::SliceRandom;

use super::greedy;
use crate::engine::rules::Scoring;
use crate::engine::tile::set_size;
use crate::engine::{Event, Game, Move, Projection, Seed, Tile, TileSet};

/// The search's budget and evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Rollouts per decision with double-6, shared among the candidate moves (each sampled
    /// deal tries every candidate, so more candidates mean fewer deals); larger sets get
    /// proportionally fewer (a rollout's length grows with the set). Always all spent.
    pub rollouts: u32,
    /// Points added for a rollout that wins the match (taken off for one that loses it).
    pub match_bonus: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rollouts: 2500,
            match_bonus: 50.0,
        }
    }
}

/// Tries of plain rejection sampling before dealing seat by seat under the constraints.
const REJECTION_TRIES: usize = 8;

/// Rollouts on each sampled deal, whatever the number of candidate moves: sampling a deal
/// costs about half a rollout, so a decision with one candidate used to sample a deal per
/// rollout and take longest (3.6 ms for a pass, 2.7 for six moves). Four pairs the
/// candidates of most turns on the same deals.
pub const PER_DEAL: usize = 4;

/// What one decision cost: the same for every decision of the expert's own turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    /// Deals sampled.
    pub deals: u32,
    /// Rollouts played (each a candidate's move and a greedy play to the end of the round).
    pub rollouts: u32,
}

/// The expert's move with the default budget. `view` must be a seat's view with a move.
pub fn choose<R: Rng + ?Sized>(view: &Projection, rng: &mut R) -> Move {
    choose_with(view, &Config::default(), rng)
}

/// The expert's move under `config`.
pub fn choose_with<R: Rng + ?Sized>(view: &Projection, config: &Config, rng: &mut R) -> Move {
    search(view, config, rng).0
}

/// The expert's move under `config`, and its work: the same for any move of its own turn,
/// whatever the number of legal moves.
pub fn search<R: Rng + ?Sized>(view: &Projection, config: &Config, rng: &mut R) -> (Move, Work) {
    let candidates = candidates(view);
    let seat = view.viewer.expect("a seat's view");
    // Out of turn a seat may only take points, and taking them is every level's public
    // reflex: answering at once there says nothing about a hand.
    if candidates == [Move::Muggins] || view.turn != Some(seat) {
        return (
            candidates
                .first()
                .copied()
                .unwrap_or_else(|| greedy::choose(view)),
            Work {
                deals: 0,
                rollouts: 0,
            },
        );
    }
    let budget = (config.rollouts as usize * set_size(6) / set_size(view.rules.max_pip)).max(1);
    let deals = budget.div_ceil(PER_DEAL);
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let seed = Seed(seed);
    // Per candidate: the sum of its rollouts' outcomes and how many deals it was tried on.
    let n = candidates.len();
    let mut totals = vec![(0.0f64, 0u32); n];
    let mut first = 0usize;
    let mut rollouts = 0u32;
    let mut buf = Vec::new();
    let mut events = Vec::new();
    for _ in 0..deals {
        let (hands, boneyard) = sample_hidden(view, seat, rng);
        let game = Game::determinise(view, hands, boneyard, seed);
        for j in 0..PER_DEAL {
            let c = (first + j) % n;
            // The same deal, move and greedy rollout give the same outcome: a candidate
            // tried again on this deal (fewer than PER_DEAL of them) is work done only so
            // that the decision takes as long, and is not counted twice.
            let counted = j < n;
            rollouts += 1;
            let Ok(game) = &game else { continue };
            let mut g = game.clone();
            events.clear();
            if g.play_into(seat, candidates[c], &mut events).is_err() {
                totals[c].0 = f64::NEG_INFINITY;
                continue;
            }
            let value = rollout(&mut g, view, seat, config, &mut buf, &mut events);
            if counted {
                totals[c].0 += value;
                totals[c].1 += 1;
            } else {
                std::hint::black_box(value);
            }
        }
        first = (first + PER_DEAL) % n;
    }
    let mean = |&(total, count): &(f64, u32)| {
        if count == 0 {
            f64::NEG_INFINITY
        } else {
            total / f64::from(count)
        }
    };
    let mut best = None;
    for (i, t) in totals.iter().enumerate() {
        if best.is_none_or(|b: usize| mean(t) > mean(&totals[b])) && mean(t) > f64::NEG_INFINITY {
            best = Some(i);
        }
    }
    let mv = best.map_or_else(|| greedy::choose(view), |b| candidates[b]);
    let work = Work {
        deals: deals as u32,
        rollouts,
    };
    (mv, work)
}

/// The moves worth searching: every legal move, but under muggins rules a scoring play
/// only in its claimed form. Taking points, when possible, is the only candidate.
fn candidates(view: &Projection) -> Vec<Move> {
    if view.legal_moves.iter().any(|m| m.mv == Move::Muggins) {
        return vec![Move::Muggins];
    }
    let claimed = |tile, end| {
        view.legal_moves.iter().any(|m| {
            matches!(m.mv, Move::Play { tile: t, end: e, claim: Some(_) } if t == tile && e == end)
        })
    };
    view.legal_moves
        .iter()
        .filter(|m| match m.mv {
            Move::Play {
                tile,
                end,
                claim: None,
            } => !claimed(tile, end),
            _ => true,
        })
        .map(|m| m.mv)
        .collect()
}

/// Plays `g` forward with the greedy policy for every seat until the round (or the match)
/// ends, and scores the result for `seat`'s side.
fn rollout(
    g: &mut Game,
    view: &Projection,
    seat: u8,
    config: &Config,
    buf: &mut Vec<Move>,
    events: &mut Vec<Event>,
) -> f64 {
    let start = g.rounds_done();
    let seats = g.seats();
    while g.rounds_done() == start {
        let Some(turn) = g.turn() else { break };
        let (who, mv) = match g.unclaimed() {
            Some(u) => {
                let rules = g.rules();
                let taker = (1..seats)
                    .map(|k| (u.seat + k) % seats)
                    .find(|&s| rules.side_of(s) != rules.side_of(u.seat));
                match taker {
                    Some(t) => (t, Move::Muggins),
                    None => (
                        turn,
                        greedy::choose_in_game(g, turn, buf).expect("the seat to move has a move"),
                    ),
                }
            }
            None => (
                turn,
                greedy::choose_in_game(g, turn, buf).expect("the seat to move has a move"),
            ),
        };
        events.clear();
        g.play_into(who, mv, events)
            .expect("the rollout policy plays legal moves");
    }
    evaluate(g, view, seat, config)
}

/// The outcome for `seat`'s side: its gain since `view` minus the opponents' average gain
/// (negated under penalty scoring, where points are bad), plus or minus the match bonus.
fn evaluate(g: &Game, view: &Projection, seat: u8, config: &Config) -> f64 {
    let rules = g.rules();
    let me = rules.side_of(seat) as usize;
    let after = g.scores();
    let gain = |s: usize| (after[s] - view.scores[s]) as f64;
    let sides = after.len();
    let others = (0..sides).filter(|&s| s != me).map(gain).sum::<f64>() / (sides - 1).max(1) as f64;
    let mut value = gain(me) - others;
    if rules.scoring == Scoring::Penalty {
        value = -value;
    }
    if let Some(outcome) = g.outcome() {
        match outcome.winner() {
            Some(w) if w as usize == me => value += config.match_bonus,
            Some(_) => value -= config.match_bonus,
            None => {}
        }
    }
    value
}

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
    use crate::engine::{Preset, Rules};

    /// Its thinking time must not say how many tiles it could play: a turn with one legal
    /// move costs the same rollouts as a turn with many (only taking points is instant).
    #[test]
    fn the_expert_spends_the_same_work_on_one_legal_move_as_on_many() {
        let config = Config {
            rollouts: 30,
            match_bonus: 50.0,
        };
        let (mut one, mut many) = (0, 0);
        for n in 0..40 {
            let seed = Seed::from_text(&format!("work {n}"));
            let mut game = Game::new(Preset::Draw.rules(), 2, seed, None).unwrap();
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                let candidates = candidates(&view);
                let mut rng = ChaCha8Rng::seed_from_u64(n);
                let (mv, work) = search(&view, &config, &mut rng);
                if candidates != [Move::Muggins] {
                    let deals = config.rollouts.div_ceil(PER_DEAL as u32);
                    let expected = Work {
                        deals,
                        rollouts: deals * PER_DEAL as u32,
                    };
                    assert_eq!(work, expected, "{} candidates", candidates.len());
                    match candidates.len() {
                        1 => one += 1,
                        _ => many += 1,
                    }
                }
                game.play(turn, mv).unwrap();
                if game.rounds_done() > 0 {
                    break;
                }
            }
        }
        assert!(one > 0 && many > 0, "both cases seen: {one} and {many}");
    }

    /// Under muggins a scoring play is listed claimed and unclaimed (worth 0); only the
    /// claimed form is worth searching. Plays that score nothing stay candidates.
    #[test]
    fn under_muggins_only_the_claimed_form_of_a_scoring_play_is_searched() {
        let mut claims = 0;
        for n in 0..20 {
            let seed = Seed::from_text(&format!("claims {n}"));
            let mut game = Game::new(Preset::Muggins.rules(), 2, seed, None).unwrap();
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                let searched = candidates(&view);
                for lm in &view.legal_moves {
                    if let Move::Play { tile, end, claim } = lm.mv {
                        let gives_away = claim.is_none() && game.points_of(tile, end) > 0;
                        assert_eq!(searched.contains(&lm.mv), !gives_away, "{lm:?}");
                        claims += usize::from(claim.is_some());
                    }
                }
                game.play(turn, greedy::choose(&view)).unwrap();
            }
        }
        assert!(claims > 20, "only {claims} claims seen");
    }

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
                Game::determinise(&view, hands, boneyard, Seed::from_text("x")).unwrap();
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

    #[test]
    fn the_same_view_and_seed_give_the_same_move() {
        let rules = Rules {
            opening: crate::engine::rules::Opening::SeatZero,
            ..Preset::AllFives.rules()
        };
        let game = Game::new(rules, 2, Seed::from_text("same"), None).unwrap();
        let view = game.project(Some(0));
        let config = Config {
            rollouts: 40,
            ..Config::default()
        };
        let a = choose_with(&view, &config, &mut ChaCha8Rng::seed_from_u64(3));
        let b = choose_with(&view, &config, &mut ChaCha8Rng::seed_from_u64(3));
        assert_eq!(a, b);
        assert!(view.legal_moves.iter().any(|m| m.mv == a));
    }

    #[test]
    fn the_expert_finds_the_winning_domino() {
        // Block, two seats, late: seat 0 holds 6-6 and 0-1 with ends 6 and 1... built by
        // playing greedy until seat 0 has two tiles and one of them ends the round.
        for n in 0..200 {
            let rules = Rules {
                opening: crate::engine::rules::Opening::SeatZero,
                ..Preset::Block.rules()
            };
            let mut game =
                Game::new(rules, 2, Seed::from_text(&format!("domino {n}")), None).unwrap();
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                if view.hand_counts[turn as usize] == 1 && view.legal_moves.len() > 1 {
                    // Any play of the last tile is a domino; the expert must make one.
                    let mv = choose_with(
                        &view,
                        &Config {
                            rollouts: 20,
                            ..Config::default()
                        },
                        &mut ChaCha8Rng::seed_from_u64(n),
                    );
                    assert!(matches!(mv, Move::Play { .. }));
                    return;
                }
                game.play(turn, greedy::choose(&view)).unwrap();
            }
        }
        panic!("no position found");
    }
}
