//! Playing a determinised game forward, and what its end is worth to a seat: the
//! searching bots' leaf evaluation.

use super::greedy;
use crate::engine::rules::Scoring;
use crate::engine::{Event, Game, Move};

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
pub(crate) fn greedy_to_round_end(
    g: &mut Game,
    buf: &mut Vec<Move>,
    events: &mut Vec<Event>,
) -> u32 {
    let start = g.rounds_done();
    let mut moves = 0;
    while g.rounds_done() == start {
        let Some(turn) = g.turn() else { break };
        let (who, mv) = match muggins_taker(g) {
            Some(t) => (t, Move::Muggins),
            None => (
                turn,
                greedy::choose_in_game(g, turn, buf).expect("the seat to move has a move"),
            ),
        };
        events.clear();
        g.play_into(who, mv, events)
            .expect("the rollout policy plays legal moves");
        moves += 1;
    }
    moves
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
