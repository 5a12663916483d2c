//! Playing a determinised game forward, and what its end is worth to a seat: the
//! searching bots' leaf evaluation.

use super::greedy;
use domino_engine::rules::Scoring;
use domino_engine::{Event, Game, Move};

/// The seat that takes points left unclaimed (muggins) before anything else happens: the
/// first opponent after the seat that left them. `None` when nothing is unclaimed.
pub(crate) fn muggins_taker(g: &Game) -> Option<u8> {
    let u = g.unclaimed()?;
    let rules = g.rules();
    let seats = g.seats();
    (1..seats)
        .map(|k| (u.seat + k) % seats)
        .find(|&s| rules.side_of(s) != rules.side_of(u.seat))
}

/// Plays `g` forward with the greedy policy for every seat (and every unclaimed point
/// taken at once) until the round, or the match, ends. Returns the moves played: the
/// work done, which the master's fixed-work budget counts.
pub(crate) fn greedy_to_round_end(g: &mut Game, room: &mut Room) -> u32 {
    to_round_end(g, Policy::Greedy, room)
}

/// How a playout chooses its moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// The greedy player's move.
    Greedy,
    /// Each play's points less `weight` times the best points the next seat could make
    /// in reply (its hand is known in a sampled world), plus `block` points when the
    /// next seat cannot play at all; the greedy order breaks ties. Counted as the plays
    /// tried, each costing a move and the reply's look. Where no play scores (all but
    /// fives scoring) and `block` is 0, it is greedy's move, at greedy's cost.
    Defensive { weight: f64, block: f64 },
}

/// Where the searching bots play their moves, kept from one playout to the next so that
/// the hot loop allocates nothing: the legal moves, the events, the scratch game the
/// defensive policy tries its plays on (copied over with `clone_from`), and the moves
/// being ranked.
#[derive(Default)]
pub(crate) struct Room {
    pub(crate) buf: Vec<Move>,
    pub(crate) events: Vec<Event>,
    spare: Option<Game>,
    ranked: Vec<(greedy::Rank, Move)>,
}

/// Plays `g` forward under `policy` until the round, or the match, ends; the moves
/// applied (the replies looked at included) are returned as the work done.
pub(crate) fn to_round_end(g: &mut Game, policy: Policy, room: &mut Room) -> u32 {
    let start = g.rounds_done();
    let mut moves = 0;
    while g.rounds_done() == start {
        let Some(turn) = g.turn() else { break };
        let (who, mv) = match muggins_taker(g) {
            Some(t) => (t, Move::Muggins),
            None => {
                let mv = match policy {
                    Policy::Greedy => greedy::choose_in_game(g, turn, &mut room.buf),
                    Policy::Defensive { weight, block } => {
                        let (mv, tried) = defensive(g, turn, (weight, block), room);
                        moves += tried;
                        mv
                    }
                };
                (turn, mv.expect("the seat to move has a move"))
            }
        };
        room.events.clear();
        g.play_legal(who, mv, &mut room.events);
        moves += 1;
    }
    moves
}

/// The [`Policy::Defensive`] move of `seat` under `(weight, block)`, and the plays it
/// tried. Each play is tried on the room's spare game, copied over.
fn defensive(
    g: &Game,
    seat: u8,
    (weight, block): (f64, f64),
    room: &mut Room,
) -> (Option<Move>, u32) {
    let rules = g.rules();
    if rules.scoring != Scoring::Fives && block == 0.0 {
        // No play scores before the round ends: every reply is worth 0, and the look would
        // only spend the budget to choose greedy's move.
        return (greedy::choose_in_game(g, seat, &mut room.buf), 0);
    }
    g.legal_moves_into(seat, &mut room.buf);
    let mine = rules.side_of(seat);
    let mut best: Option<(f64, greedy::Rank, Move)> = None;
    let mut tried = 0;
    for &mv in room.buf.iter() {
        let points = match mv {
            Move::Play { tile, end, .. } => g.points_of(tile, end),
            _ => 0,
        };
        let rank = greedy::rank(rules, mv, points);
        let mut value = f64::from(rank.1);
        // Under muggins a scoring play counts only in its claimed form.
        let unclaimed = rules.muggins
            && points > 0
            && !matches!(mv, Move::Play { claim: Some(c), .. } if c == points);
        if let Move::Play { .. } = mv
            && !unclaimed
        {
            let after = match &mut room.spare {
                Some(after) => {
                    after.clone_from(g);
                    after
                }
                None => room.spare.insert(g.clone()),
            };
            room.events.clear();
            after.play_legal(seat, mv, &mut room.events);
            tried += 1;
            if let Some(next) = after.turn()
                && after.rounds_done() == g.rounds_done()
                && after.unclaimed().is_none()
                && rules.side_of(next) != mine
            {
                value -= match after.best_play_points(next) {
                    Some(p) => weight * f64::from(p),
                    None => -block,
                };
            }
        } else if matches!(mv, Move::Play { .. }) {
            // The unclaimed form of a scoring play: never better than its claimed form.
            continue;
        }
        // A play before a draw before a pass, as greedy: under `draw_anytime` a draw is
        // legal beside plays, and drawing to dodge a reply is not this policy's idea.
        let better = best.as_ref().is_none_or(|b: &(f64, greedy::Rank, Move)| {
            (rank.0, value) > (b.1.0, b.0) || ((rank.0, value) == (b.1.0, b.0) && rank > b.1)
        });
        if better {
            best = Some((value, rank, mv));
        }
    }
    (best.map(|b| b.2), tried)
}

/// A match as a race to its target, for [`match_equity`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Race {
    /// Points a round the side nearer the target may expect: the rounds left are the
    /// points it still needs over this (at least one).
    pub per_round: f64,
    /// How far one round may move the lead (a standard deviation, in points).
    pub spread: f64,
}

/// What the scores of `g` are worth to `seat`'s side for the rest of the match, in the
/// points of `bonus` (what winning the match is worth): `bonus × (2p − 1)`, `p` the
/// chance to win a `race` from here (the lead over the spread of the rounds left, a
/// logistic normal). 0 unless two sides race to a target and the match is not over (an
/// ended match is [`evaluate`]'s bonus).
pub(crate) fn match_equity(g: &Game, seat: u8, bonus: f64, race: Race) -> f64 {
    let rules = g.rules();
    let scores = g.scores();
    let (Some(target), None) = (rules.target, g.outcome()) else {
        return 0.0;
    };
    if scores.len() != 2 || rules.scoring == Scoring::Penalty {
        return 0.0;
    }
    let me = rules.side_of(seat) as usize;
    let (mine, theirs) = (f64::from(scores[me]), f64::from(scores[1 - me]));
    bonus * (2.0 * race.chance(mine, theirs, f64::from(target)) - 1.0)
}

impl Race {
    /// The chance that the side with `mine` points wins the race to `target` against the
    /// side with `theirs`: the lead over `spread × √rounds left`, a logistic normal.
    pub fn chance(&self, mine: f64, theirs: f64, target: f64) -> f64 {
        let left = (target - mine.max(theirs)).max(0.0);
        let rounds = (left / self.per_round).max(1.0);
        let z = (mine - theirs) / (self.spread * rounds.sqrt());
        // The logistic close to the normal's distribution function.
        1.0 / (1.0 + (-1.702 * z).exp())
    }
}

/// The outcome for `seat`'s side of reaching `g` from scores `before`: its gain minus the
/// opponents' average gain (negated under penalty scoring, where points are bad), plus
/// `match_bonus` when the match is won and minus it when it is lost.
pub(crate) fn evaluate(g: &Game, before: &[i32], seat: u8, match_bonus: f64) -> f64 {
    let rules = g.rules();
    let me = rules.side_of(seat) as usize;
    let after = g.scores();
    let gain = |s: usize| (after[s] - before[s]) as f64;
    let sides = after.len();
    let others = (0..sides).filter(|&s| s != me).map(gain).sum::<f64>() / (sides - 1).max(1) as f64;
    let mut value = gain(me) - others;
    if rules.scoring == Scoring::Penalty {
        value = -value;
    }
    if let Some(outcome) = g.outcome() {
        match outcome.winner() {
            Some(w) if w as usize == me => value += match_bonus,
            Some(_) => value -= match_bonus,
            None => {}
        }
    }
    value
}

/// What a playout's end `g` is worth to `seat` ([`evaluate`]'s outcome from `before`),
/// with a `race`: the round's points at `points`' weight, the match's bonus when it ended,
/// and else what the scores are worth for the rest of it ([`match_equity`]).
pub(super) fn leaf_value(
    g: &Game,
    before: &[i32],
    seat: u8,
    bonus: f64,
    race: Option<Race>,
    points: f64,
) -> f64 {
    let Some(race) = race else {
        return evaluate(g, before, seat, bonus);
    };
    let round = evaluate(g, before, seat, 0.0);
    let ended = evaluate(g, before, seat, bonus) - round;
    points * round + ended + match_equity(g, seat, bonus, race)
}

/// Who moves in `g`, with its moves in `out`, best first by the greedy order: taking
/// unclaimed points before anything, and a scoring play only in its claimed form.
pub(super) fn ranked_moves(g: &Game, room: &mut Room, out: &mut Vec<Move>) -> u8 {
    out.clear();
    if let Some(taker) = muggins_taker(g) {
        out.push(Move::Muggins);
        return taker;
    }
    let who = g.turn().expect("a game in play");
    g.legal_moves_into(who, &mut room.buf);
    let rules = g.rules();
    let ranked = &mut room.ranked;
    ranked.clear();
    ranked.extend(room.buf.iter().filter_map(|&mv| {
        let points = match mv {
            Move::Play { tile, end, claim } => {
                let points = g.points_of(tile, end);
                if rules.muggins && claim.is_none() && points > 0 {
                    return None;
                }
                points
            }
            _ => 0,
        };
        Some((greedy::rank(rules, mv, points), mv))
    }));
    ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
    out.extend(ranked.iter().map(|&(_, mv)| mv));
    who
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::greedy;
    use domino_engine::rules::{Opening, Rules};
    use domino_engine::{Preset, Seed, Tile};

    /// The best points `seat` could make in `g`.
    fn best_reply(g: &Game, seat: u8) -> u16 {
        g.legal_moves(seat)
            .iter()
            .filter_map(|&mv| match mv {
                Move::Play { tile, end, .. } => Some(g.points_of(tile, end)),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// A race (the master's first guess) and the all_fives rules it is tried under.
    const RACE: Race = Race {
        per_round: 30.0,
        spread: 35.0,
    };

    fn all_fives() -> Rules {
        Rules {
            opening: Opening::SeatZero,
            ..Preset::AllFives.rules()
        }
    }

    /// An all_fives game of two seats whose scores are `scores`.
    fn scored(scores: [i32; 2]) -> Game {
        let mut g = Game::new(all_fives(), 2, Seed::from_text("race"), None).unwrap();
        g.set_scores(&scores);
        g
    }

    #[test]
    fn the_side_ahead_values_its_lead_more_the_nearer_the_target_and_the_other_side_as_much_less() {
        let (race, rules) = (RACE, all_fives());
        let at = |scores: [i32; 2]| {
            let g = scored(scores);
            (
                match_equity(&g, 0, 50.0, race),
                match_equity(&g, 1, 50.0, race),
            )
        };
        assert_eq!(at([20, 20]), (0.0, 0.0));
        let (early, theirs) = at([30, 10]);
        assert!(early > 0.0 && early < 50.0, "{early}");
        assert!((early + theirs).abs() < 1e-9);
        let (late, _) = at([90, 70]);
        assert!(late > early, "{late} <= {early}");
        // Without a target, or with more than two sides, there is no race.
        let endless = Rules {
            target: None,
            rounds: Some(3),
            ..rules
        };
        let mut g = Game::new(endless, 2, Seed::from_text("race"), None).unwrap();
        g.set_scores(&[30, 10]);
        assert_eq!(match_equity(&g, 0, 50.0, race), 0.0);
        let mut g = Game::new(rules, 3, Seed::from_text("race"), None).unwrap();
        g.set_scores(&[30, 10, 0]);
        assert_eq!(match_equity(&g, 0, 50.0, race), 0.0);
    }

    #[test]
    fn with_the_race_the_rounds_points_count_at_their_weight_beside_the_matchs_equity() {
        let race = RACE;
        let g = scored([60, 40]);
        let equity = match_equity(&g, 0, 50.0, race);
        // The round took seat 0 from 40 to 60 and seat 1 from 35 to 40: 15 points ahead.
        let before = [40, 35];
        assert_eq!(leaf_value(&g, &before, 0, 50.0, None, 0.0), 15.0);
        assert_eq!(
            leaf_value(&g, &before, 0, 50.0, Some(race), 1.0),
            15.0 + equity
        );
        assert_eq!(
            leaf_value(&g, &before, 0, 50.0, Some(race), 0.5),
            7.5 + equity
        );
        // The match alone: the same scores are worth the same, however the round went.
        assert_eq!(leaf_value(&g, &before, 0, 50.0, Some(race), 0.0), equity);
        assert_eq!(leaf_value(&g, &[0, 40], 0, 50.0, Some(race), 0.0), equity);
        let theirs = leaf_value(&g, &before, 1, 50.0, Some(race), 0.0);
        assert!((theirs + equity).abs() < 1e-9, "{theirs} against {equity}");
    }

    #[test]
    fn where_no_play_scores_a_defensive_playout_is_greedy_at_greedys_cost() {
        for preset in [
            Preset::Block,
            Preset::Draw,
            Preset::Classic,
            Preset::Penalty,
        ] {
            let rules = Rules {
                opening: Opening::SeatZero,
                ..preset.rules()
            };
            let mut g = Game::new(rules, 2, Seed::from_text("no scoring"), None).unwrap();
            let mut room = Room::default();
            while let Some(turn) = g.turn() {
                let greedy = greedy::choose_in_game(&g, turn, &mut Vec::new());
                let (mv, tried) = defensive(&g, turn, (1.0, 0.0), &mut room);
                assert_eq!((mv, tried), (greedy, 0), "{preset:?}");
                g.play(turn, mv.unwrap()).unwrap();
            }
        }
    }

    #[test]
    fn a_defensive_playout_leads_nothing_the_next_seat_can_score_on() {
        // No lead of seat 0 scores; greedy leads its heaviest, 2-6, on which the next
        // seat's 3-6 makes 5 (ends 2 and 3).
        let g = greedy::tests::game(
            Preset::AllFives,
            "2-6 1-2 0-1 0-2 1-1 3-3 1-5",
            "3-6 0-5 4-4 0-0 5-5 4-5 0-4",
        );
        let mut buf = Vec::new();
        let greedy = greedy::choose_in_game(&g, 0, &mut buf).unwrap();
        assert_eq!(greedy, Move::lead(Tile::new(2, 6)));
        let mut after = g.clone();
        after.play(0, greedy).unwrap();
        assert_eq!(best_reply(&after, 1), 5);

        let (mv, tried) = defensive(&g, 0, (1.0, 0.0), &mut Room::default());
        let mv = mv.unwrap();
        assert_eq!(tried, 7, "every lead is tried");
        let mut after = g.clone();
        after.play(0, mv).unwrap();
        assert_eq!(best_reply(&after, 1), 0, "{mv:?}");
    }
}
