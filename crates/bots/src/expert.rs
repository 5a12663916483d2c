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
//! budget is a number of rollouts ([`ExpertConfig::rollouts`]), chosen so that a move takes
//! under 50 ms at the 99th percentile in release on a 2-core machine (see BENCHMARKS.md).
//! Every decision of its own turn does the same work, one legal move or twenty, a pass
//! included: the same number of sampled deals, each trying [`PER_DEAL`] candidates (in
//! turn: with fewer candidates some are tried twice on a deal, and counted once), so how
//! long it thinks does not tell the table how many tiles it could play. Only taking points
//! (public: everyone sees them unclaimed) answers at once.

use rand::Rng;

use super::greedy;
use super::playout::{self, Room};
use super::sampling::sample_hidden;
use domino_engine::tile::set_size;
use domino_engine::{Game, Move, Projection};

/// The search's budget and evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpertConfig {
    /// Rollouts per decision with double-6, shared among the candidate moves (each sampled
    /// deal tries every candidate, so more candidates mean fewer deals); larger sets get
    /// proportionally fewer (a rollout's length grows with the set). Always all spent.
    pub rollouts: u32,
    /// Points added for a rollout that wins the match (taken off for one that loses it).
    pub match_bonus: f64,
}

impl Default for ExpertConfig {
    fn default() -> ExpertConfig {
        ExpertConfig {
            rollouts: 2500,
            match_bonus: 50.0,
        }
    }
}

/// Rollouts on each sampled deal, whatever the number of candidate moves: sampling a deal
/// costs about half a rollout, so a decision with one candidate used to sample a deal per
/// rollout and take longest (3.6 ms for a pass, 2.7 for six moves). Four pairs the
/// candidates of most turns on the same deals.
pub const PER_DEAL: usize = 4;

/// What one decision cost: the same for every decision of the expert's own turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpertWork {
    /// Deals sampled.
    pub deals: u32,
    /// Rollouts played (each a candidate's move and a greedy play to the end of the round).
    pub rollouts: u32,
}

/// The expert's move with the default budget. `view` must be a seat's view with a move.
pub fn choose<R: Rng + ?Sized>(view: &Projection, rng: &mut R) -> Move {
    choose_with(view, &ExpertConfig::default(), rng)
}

/// The expert's move under `config`.
pub fn choose_with<R: Rng + ?Sized>(view: &Projection, config: &ExpertConfig, rng: &mut R) -> Move {
    search(view, config, rng).0
}

/// The expert's move under `config`, and its work: the same for any move of its own turn,
/// whatever the number of legal moves.
pub fn search<R: Rng + ?Sized>(
    view: &Projection,
    config: &ExpertConfig,
    rng: &mut R,
) -> (Move, ExpertWork) {
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
            ExpertWork {
                deals: 0,
                rollouts: 0,
            },
        );
    }
    let budget = (config.rollouts as usize * set_size(6) / set_size(view.rules.max_pip)).max(1);
    let deals = budget.div_ceil(PER_DEAL);
    // Per candidate: the sum of its rollouts' outcomes and how many deals it was tried on.
    let n = candidates.len();
    let mut totals = vec![(0.0f64, 0u32); n];
    let mut first = 0usize;
    let mut rollouts = 0u32;
    let mut room = Room::default();
    for _ in 0..deals {
        let (hands, boneyard) = sample_hidden(view, seat, rng);
        let game = Game::determinise(view, hands, boneyard);
        for j in 0..PER_DEAL {
            let c = (first + j) % n;
            // The same deal, move and greedy rollout give the same outcome: a candidate
            // tried again on this deal (fewer than PER_DEAL of them) is work done only so
            // that the decision takes as long, and is not counted twice.
            let counted = j < n;
            rollouts += 1;
            let Ok(game) = &game else { continue };
            let mut g = game.clone();
            room.events.clear();
            if g.play_into(seat, candidates[c], &mut room.events).is_err() {
                totals[c].0 = f64::NEG_INFINITY;
                continue;
            }
            playout::greedy_to_round_end(&mut g, &mut room);
            let value = playout::evaluate(&g, &view.scores, seat, config.match_bonus);
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
    let work = ExpertWork {
        deals: deals as u32,
        rollouts,
    };
    (mv, work)
}

/// The moves worth searching: every legal move, but under muggins rules a scoring play
/// only in its claimed form. Taking points, when possible, is the only candidate.
pub(crate) fn candidates(view: &Projection) -> Vec<Move> {
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

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use domino_engine::{Preset, Rules, Seed};

    /// Its thinking time must not say how many tiles it could play: a turn with one legal
    /// move costs the same rollouts as a turn with many (only taking points is instant).
    #[test]
    fn the_expert_spends_the_same_work_on_one_legal_move_as_on_many() {
        let config = ExpertConfig {
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
                    let expected = ExpertWork {
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

    #[test]
    fn the_same_view_and_seed_give_the_same_move() {
        let rules = Rules {
            opening: domino_engine::rules::Opening::SeatZero,
            ..Preset::AllFives.rules()
        };
        let game = Game::new(rules, 2, Seed::from_text("same"), None).unwrap();
        let view = game.project(Some(0));
        let config = ExpertConfig {
            rollouts: 40,
            ..ExpertConfig::default()
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
                opening: domino_engine::rules::Opening::SeatZero,
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
                        &ExpertConfig {
                            rollouts: 20,
                            ..ExpertConfig::default()
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
