//! The master player: an information-set tree search over sampled worlds, exact at the
//! end of a round.
//!
//! Like the expert it samples the tiles it cannot see ([`sample_hidden`]: hand counts,
//! known voids, a forced lead) and builds a playable game with [`Game::determinise`]; unlike
//! it, it keeps a world less often the more points its other seats would have left on the
//! table in it ([`Inference`]: a seat that could have scored more probably could not; at
//! two seats where no play scores, one that could have shed more pips: [`SHED`]).
//! Before the endgame it grows one tree over all those worlds ([`super::tree`]): each
//! world walks the tree by the moves legal in it, every seat choosing by its own results,
//! so no seat's choice leans on a hand it cannot see (an alpha-beta search in each world
//! lets every seat see every hand of that world: measured, it gained nothing on the
//! expert however long it thought). The leaves are played to the end of the round by a
//! defensive policy ([`Policy::Defensive`]: the most points less the best reply the next
//! seat could make, and at two seats where no play scores, a play that leaves the next
//! seat without one first: [`BLOCK_BONUS`]), stronger than the greedy playouts of the
//! expert. Under fives scoring at two seats a playout's end is worth the points of the
//! round and the chance to win the match from the scores it leaves ([`RACE`]): the arena
//! counts matches won, not points. Once drawing is over and few tiles are left in the
//! hands, each world is
//! searched to the end of the round by alpha-beta with every move (its side maximising,
//! every other side minimising, exact for that world with two sides), and each
//! candidate's values are summed over the worlds. [`Method::AlphaBeta`] keeps that per-world search, to a fixed depth, for the
//! whole round: the arena compares the two.
//!
//! Its budget ([`Thinking`]) is time on a clock it is handed, or a number of moves applied
//! in the search (deterministic given the RNG). Either way a decision of its own turn
//! costs the same whatever the number of legal moves: with one candidate it searches more
//! worlds, not fewer, and under a time budget it always thinks until the clock says stop.
//! Only taking points (public) answers at once. It reads nothing but the [`Projection`],
//! the RNG and the clock.

use std::time::Duration;

use rand::{Rng, RngExt};

use super::alphabeta::Searcher;
pub use super::config::{BLOCK_BONUS, Config, Method, PAIRED, RACE, SHED, SHED_SHARPNESS};
use super::expert::candidates;
use super::greedy;
use super::inference::{Inference, Judge};
pub use super::playout::{Policy, Race};
use super::sampling::sample_hidden;
use super::think::{Budget, Meter, Thinking};
use super::tree::Tree;
use domino_engine::rules::Scoring;
use domino_engine::{Game, Move, Projection, Tile, TileSet};

/// Of a time budget, the part spent searching: the rest is room for the last world's
/// check and the answer (the think time's p99 must stay within the budget plus 10%).
const TIME_SHARE: f64 = 0.97;

/// A cap on the moves of a time-budgeted decision, in case its clock never moves.
const MAX_WORK: u64 = 200_000_000;

/// The fixed work of [`crate::choose`] (no clock), and the arena's default: about
/// 150 ms of thinking on one core of the benchmark machine (100,000 moves took 14.6 ms at
/// the median in all_fives, BENCHMARKS.md's third pass), so the service's 200 ms by the
/// clock does at least this much; tests use far less.
pub const DEFAULT_WORK: u64 = 1_000_000;

/// Sampling a world and building its game, counted in moves applied (about what they
/// cost): a decision with one candidate searches many small worlds, and must take as long
/// as one with many.
const WORLD_COST: u64 = 8;

/// Worlds sampled at most for one kept under [`Config::inference`]: when none is kept,
/// the least charged of them is.
const INFERENCE_TRIES: u32 = 16;

/// What one decision did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MasterWork {
    /// Worlds searched to the end (a world cut short by the clock is not counted).
    pub worlds: u32,
    /// Moves applied in the search, every world's included.
    pub moves: u64,
}

/// The master's move under `thinking`. `view` must be a seat's view with a move.
pub fn choose<R: Rng + ?Sized>(view: &Projection, thinking: Thinking<'_>, rng: &mut R) -> Move {
    search(
        view,
        &Config::for_table(&view.rules, view.seats),
        thinking,
        rng,
    )
    .0
}

/// The master's move under `config` and `thinking`, and the work it did.
pub fn search<R: Rng + ?Sized>(
    view: &Projection,
    config: &Config,
    thinking: Thinking<'_>,
    rng: &mut R,
) -> (Move, MasterWork) {
    let started = thinking.clock.now();
    let seat = view.viewer.expect("a seat's view");
    let mut candidates = candidates(view);
    let nothing = MasterWork {
        worlds: 0,
        moves: 0,
    };
    // Out of turn a seat may only take points, and taking them is every level's public
    // reflex: answering at once there says nothing about a hand.
    if candidates == [Move::Muggins] || view.turn != Some(seat) {
        let mv = candidates
            .first()
            .copied()
            .unwrap_or_else(|| greedy::choose(view));
        return (mv, nothing);
    }
    // The greedy order first, so that equal sums go to the greedy choice.
    let rank = |mv: Move| {
        let points = view
            .legal_moves
            .iter()
            .find(|m| m.mv == mv)
            .map_or(0, |m| m.points);
        greedy::rank(&view.rules, mv, points)
    };
    candidates.sort_by_key(|&mv| std::cmp::Reverse(rank(mv)));

    let (limit, deadline) = match thinking.budget {
        Budget::Work(moves) => (moves.max(1), None),
        Budget::Time(budget) => {
            let share = started + Duration::from_secs_f64(budget.as_secs_f64() * TIME_SHARE);
            (
                MAX_WORK,
                Some(thinking.until.map_or(share, |u| u.min(share))),
            )
        }
    };
    let mut meter = Meter::new(thinking, deadline, limit);
    let mut worlds = 0u32;
    // The endgame, searched to the end of the round in every world: no tile can be drawn
    // any more and few are left in the hands.
    let in_hands: usize = view.hand_counts.iter().map(|&c| usize::from(c)).sum();
    let no_draw = view.rules.draw == domino_engine::rules::DrawRule::Block
        || usize::from(view.boneyard_count) <= view.rules.boneyard_reserve as usize;
    let endgame = no_draw && in_hands <= usize::from(config.endgame);
    let judge = match view.rules.scoring {
        Scoring::Fives => Some(Judge::Points),
        _ => config.shed.then_some(Judge::Weight),
    };
    let evidence = judge
        .filter(|_| config.inference > 0.0)
        .map(|judge| Inference::of(view, seat, judge))
        .filter(|e| !e.is_empty())
        .map(|e| (e, config.inference));
    if config.method == Method::Tree && !endgame {
        let mut tree = Tree::new(seat, &view.scores, view.rounds_done, config);
        while !meter.spent() {
            let (hands, boneyard) = sample_world(view, seat, &evidence, rng, &mut meter);
            let Ok(world) = Game::determinise(view, hands, boneyard) else {
                continue;
            };
            if config.paired {
                for c in 1..candidates.len() {
                    tree.iterate(world.clone(), &candidates, Some(c), &mut meter);
                }
                tree.iterate(world, &candidates, Some(0), &mut meter);
            } else {
                tree.iterate(world, &candidates, None, &mut meter);
            }
            worlds += 1;
            meter.may_stop = true;
        }
        let mv = tree.best().unwrap_or_else(|| greedy::choose(view));
        return (
            mv,
            MasterWork {
                worlds,
                moves: meter.moves,
            },
        );
    }
    let mut searcher = Searcher::new(
        seat,
        view.rules.side_of(seat),
        (&view.scores, view.rounds_done),
        config,
        meter,
    );
    let mut totals = vec![0.0f64; candidates.len()];
    let mut values = vec![0.0f64; candidates.len()];
    while !searcher.meter.spent() {
        let (hands, boneyard) = sample_world(view, seat, &evidence, rng, &mut searcher.meter);
        let Ok(world) = Game::determinise(view, hands, boneyard) else {
            // Never expected: the samples are consistent (and counted, so the loop ends).
            continue;
        };
        if !searcher.world_values(&world, &candidates, endgame, &mut values) {
            break;
        }
        for (t, v) in totals.iter_mut().zip(&values) {
            *t += v;
        }
        worlds += 1;
        searcher.meter.may_stop = true;
    }
    let mut best: Option<usize> = None;
    for (c, &t) in totals.iter().enumerate() {
        if t > f64::NEG_INFINITY && best.is_none_or(|b| t > totals[b]) {
            best = Some(c);
        }
    }
    let mv = match best {
        Some(b) if worlds > 0 => candidates[b],
        _ => greedy::choose(view),
    };
    (
        mv,
        MasterWork {
            worlds,
            moves: searcher.meter.moves,
        },
    )
}

/// A sampled world's hands and boneyard ([`sample_hidden`]), kept with the likelihood
/// `evidence` gives it (the evidence and [`Config::inference`]), each try counted on
/// `meter`.
fn sample_world<R: Rng + ?Sized>(
    view: &Projection,
    seat: u8,
    evidence: &Option<(Inference, f64)>,
    rng: &mut R,
    meter: &mut Meter<'_>,
) -> ([TileSet; 4], Vec<Tile>) {
    let mut least: Option<(u32, [TileSet; 4], Vec<Tile>)> = None;
    for _ in 0..INFERENCE_TRIES {
        let (hands, boneyard) = sample_hidden(view, seat, rng);
        meter.count(WORLD_COST);
        let Some((inference, sharpness)) = evidence else {
            return (hands, boneyard);
        };
        let penalty = inference.penalty(&hands);
        if penalty == 0 || rng.random::<f64>() < (-sharpness * f64::from(penalty)).exp() {
            return (hands, boneyard);
        }
        if least.as_ref().is_none_or(|l| penalty < l.0) {
            least = Some((penalty, hands, boneyard));
        }
    }
    let (_, hands, boneyard) = least.expect("at least one try");
    (hands, boneyard)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::think::{CLOCK_EVERY, Clock};
    use domino_engine::rules::Opening;
    use domino_engine::{Preset, Rules, Seed};

    const SMALL: u64 = 20_000;

    /// A clock that moves `step` every time it is read.
    struct Ticking {
        now: Cell<Duration>,
        step: Duration,
    }

    impl Clock for Ticking {
        fn now(&self) -> Duration {
            let now = self.now.get();
            self.now.set(now + self.step);
            now
        }
    }

    #[test]
    fn worlds_in_which_another_seat_left_points_on_the_table_are_kept_less_often() {
        let (game, missed) = crate::inference::tests::after_a_missed_score();
        let view = game.project(Some(0));
        let five_blank = crate::greedy::tests::tiles("5-0")[0];
        let given = |sharpness: f64| {
            let evidence = Some((Inference::of(&view, 0, Judge::Points), sharpness))
                .filter(|_| sharpness > 0.0);
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let mut meter = Meter::new(Thinking::work(u64::MAX), None, u64::MAX);
            (0..2000)
                .filter(|_| {
                    let (hands, _) = sample_world(&view, 0, &evidence, &mut rng, &mut meter);
                    hands[1].contains(five_blank)
                })
                .count()
        };
        // Seat 1 holds 6 of the 20 tiles seat 0 cannot see: 5-0 in about 30% of the worlds,
        // and in far fewer once its 5-3 for nothing says it probably had no 5-0.
        let (plain, inferred) = (given(0.0), given(0.3));
        assert!((500..700).contains(&plain), "{plain}");
        assert!(
            inferred * 3 < plain,
            "{inferred} of 2000 ({missed} points missed)"
        );
    }

    #[test]
    fn blocking_playouts_and_shed_evidence_are_for_two_seats_where_no_play_scores() {
        for preset in Preset::ALL {
            let rules = preset.rules();
            for seats in 2..=4 {
                let config = Config::for_table(&rules, seats);
                let block = match config.playout {
                    Policy::Defensive { block, .. } => block,
                    Policy::Greedy => panic!("{preset:?}: greedy playouts"),
                };
                let scores = rules.scoring == domino_engine::rules::Scoring::Fives;
                let (bonus, shed, sharpness) = if scores || seats > 2 {
                    (0.0, false, Config::default().inference)
                } else {
                    (BLOCK_BONUS, SHED, SHED_SHARPNESS)
                };
                let table = format!("{preset:?} at {seats} seats");
                assert_eq!(block, bonus, "{table}");
                assert_eq!(
                    (config.shed, config.inference),
                    (shed, sharpness),
                    "{table}"
                );
            }
        }
    }

    /// Whole matches against greedy on the larger sets and every seat count: legal moves
    /// only, to the end (a low target keeps it short).
    #[test]
    fn the_master_plays_whole_matches_on_double_9_to_double_15() {
        for (max_pip, seats, preset) in [
            (9, 2, Preset::Block),
            (9, 4, Preset::AllFives),
            (12, 3, Preset::Draw),
            (15, 2, Preset::Muggins),
            (15, 4, Preset::Block),
        ] {
            let rules = Rules {
                max_pip,
                hand_size: domino_engine::rules::default_hand_size(max_pip),
                target: Some(40),
                ..preset.rules()
            };
            let seed = Seed::from_text(&format!("big {max_pip} {seats}"));
            let mut game = Game::new(rules, seats, seed, None).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(u64::from(max_pip));
            let mut searched = 0;
            while let Some(turn) = game.turn() {
                // Out of turn, a seat that may take points does so first.
                let seat = (1..=seats)
                    .map(|k| (turn + k) % seats)
                    .find(|&s| s == turn || !game.legal_moves(s).is_empty())
                    .unwrap();
                let view = game.project(Some(seat));
                let mv = if seat % 2 == 0 {
                    searched += 1;
                    crate::choose_thinking(
                        crate::Level::Master,
                        &view,
                        Thinking::work(2_000),
                        &mut rng,
                    )
                    .unwrap()
                } else {
                    greedy::choose(&view)
                };
                assert!(view.legal_moves.iter().any(|m| m.mv == mv), "{mv:?}");
                game.play(seat, mv).unwrap();
            }
            assert!(searched > 0 && game.outcome().is_some());
        }
    }

    #[test]
    fn the_same_view_and_seed_give_the_same_move() {
        let rules = Rules {
            opening: Opening::SeatZero,
            ..Preset::AllFives.rules()
        };
        let game = Game::new(rules, 2, Seed::from_text("same"), None).unwrap();
        let view = game.project(Some(0));
        let think = Thinking::work(SMALL);
        let a = search(
            &view,
            &Config::default(),
            think,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        let b = search(
            &view,
            &Config::default(),
            think,
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        assert_eq!(a, b);
        assert!(a.1.worlds > 1);
        assert!(view.legal_moves.iter().any(|m| m.mv == a.0));
    }

    /// Under a time budget it stops by the clock, shortly after the budget's share, and
    /// reads the clock throughout (a clock read per 1,024 moves: 1 ms a read here).
    #[test]
    fn under_a_time_budget_it_thinks_until_the_clock_says_stop() {
        let game = Game::new(Preset::Block.rules(), 2, Seed::from_text("clock"), None).unwrap();
        let turn = game.turn().unwrap();
        let view = game.project(Some(turn));
        let clock = Ticking {
            now: Cell::new(Duration::from_secs(7)),
            step: Duration::from_millis(1),
        };
        let thinking = Thinking {
            budget: Budget::Time(Duration::from_millis(100)),
            clock: &clock,
            until: None,
        };
        let (_, work) = search(
            &view,
            &Config::default(),
            thinking,
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        let reads = (clock.now.get() - Duration::from_secs(7)).as_millis();
        // 97 ms of the 100 searching: the start's read, then the 97th look stops it.
        assert_eq!(reads, 1 + 97, "{work:?}");
        assert!(work.moves >= 96 * CLOCK_EVERY, "{work:?}");
        assert!(work.worlds > 0);
        // Started late in a request, it answers by the request's end, not its budget's.
        clock.now.set(Duration::from_secs(7));
        let late = Thinking {
            until: Some(Duration::from_secs(7) + Duration::from_millis(40)),
            ..thinking
        };
        search(
            &view,
            &Config::default(),
            late,
            &mut ChaCha8Rng::seed_from_u64(1),
        );
        let reads = (clock.now.get() - Duration::from_secs(7)).as_millis();
        assert_eq!(reads, 1 + 40);
    }
}
