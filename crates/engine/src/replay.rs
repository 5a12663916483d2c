//! Replaying a match from its record one move at a time.
//!
//! A match's record ([`super::history`]) is a few bits a move, but what it replays into
//! (each move in full and what it caused) is a hundred times larger: a long match's log
//! or export read back whole took gigabytes. A [`Replay`] holds only the game as it stands
//! after the moves read so far; its caller keeps what it needs of each move and drops
//! the rest.

use std::borrow::Borrow;

use super::event::{Event, RoundResult};
use super::game::Game;
use super::history::{Code, Cursor};
use super::moves::Move;

/// A match's moves read back from its record (each with its seat, in canonical form), and
/// the events of the start followed by those of each move.
pub type MovesAndEvents = (Vec<(u8, Move)>, Vec<Vec<Event>>);

/// A recorded match (`source`) replayed from its start, one move at a time.
pub struct Replay<G: Borrow<Game> = Game> {
    source: G,
    cursor: Cursor,
    /// The game after the first `done` moves of the record.
    game: Game,
    done: usize,
}

impl<G: Borrow<Game>> Replay<G> {
    /// The match dealt as `source` was, before its first move; `start` gets the events of
    /// the first deal. Fails when the record is damaged or the match does not start.
    pub fn new(source: G, start: &mut Vec<Event>) -> Result<Replay<G>, String> {
        let from = source.borrow();
        let cursor = from.history.cursor(&from.rules)?;
        let game = Game::start(
            from.rules,
            from.seats,
            from.seed,
            from.first_deal.clone(),
            start,
        )
        .map_err(|e| format!("the game does not start: {e}"))?;
        Ok(Replay {
            source,
            cursor,
            game,
            done: 0,
        })
    }

    /// The game as the moves replayed so far left it.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The game as the moves replayed so far left it, kept.
    pub fn into_game(self) -> Game {
        self.game
    }

    /// The recorded match.
    pub fn source(&self) -> &Game {
        self.source.borrow()
    }

    /// How many moves are replayed.
    pub fn done(&self) -> usize {
        self.done
    }

    /// The next recorded move (with its seat, in canonical form), played: `events` gets
    /// what it caused. `None` after the last move; fails when it does not replay.
    pub fn next_move(&mut self, events: &mut Vec<Event>) -> Option<Result<(u8, Move), String>> {
        let code = match self.source.borrow().history.read(&mut self.cursor)? {
            Ok(code) => code,
            Err(e) => return Some(Err(e)),
        };
        let game = &mut self.game;
        let turn = game.round.turn;
        let (seat, mv) = match code {
            Code::Draw => (turn, Move::Draw),
            Code::Pass => (turn, Move::Pass),
            Code::Muggins { seat } => (seat, Move::Muggins),
            Code::Table { seat, mv } => (seat, mv),
            Code::Play { tile, end, claimed } => {
                let end = (!game.round.layout.is_empty()).then_some(end);
                let claim = claimed.then(|| game.points_of(tile, end));
                (turn, Move::Play { tile, end, claim })
            }
        };
        self.done += 1;
        Some(
            game.play_into(seat, mv, events)
                .map(|mv| (seat, mv))
                .map_err(|e| format!("move {} does not replay: {e}", self.done)),
        )
    }

    /// Replays the next `n` moves (or up to the last), keeping nothing of them.
    pub fn skip(&mut self, n: usize) -> Result<(), String> {
        let mut events = Vec::new();
        for _ in 0..n {
            events.clear();
            match self.next_move(&mut events) {
                Some(played) => played?,
                None => break,
            };
        }
        Ok(())
    }

    /// The game after every recorded move, which must be the recorded match itself (else
    /// the record is damaged).
    pub fn finish(mut self) -> Result<Game, String> {
        self.skip(usize::MAX)?;
        if self.game != *self.source.borrow() {
            return Err("the moves do not lead to the stored game".into());
        }
        Ok(self.game)
    }
}

/// A match's history read back whole, for what needs it all at once (a retry's answer,
/// the deals of an export, the results of earlier rounds).
impl Game {
    /// This match's moves, read back from its compact record by replaying it from the
    /// start, with what each caused (the events of the start first, as [`Game::replay`]).
    /// Fails when the record does not replay into this very game (a damaged store); a game
    /// made by [`Game::determinise`] has no record to replay.
    pub fn replay_history(&self) -> Result<MovesAndEvents, String> {
        let (game, (moves, events)) = self.replay_first(self.move_count())?;
        if game != *self {
            return Err("the moves do not lead to the stored game".into());
        }
        Ok((moves, events))
    }

    /// The game as it was after its first `n` moves, with what each of them caused (the
    /// events of the start first): how the server answers a retried request again.
    pub fn after_moves(&self, n: usize) -> Result<(Game, Vec<Vec<Event>>), String> {
        if n > self.move_count() {
            return Err(format!("the match has only {} moves", self.move_count()));
        }
        let (game, (_, events)) = self.replay_first(n)?;
        Ok((game, events))
    }

    /// Replays the first `n` recorded moves from the start.
    fn replay_first(&self, n: usize) -> Result<(Game, MovesAndEvents), String> {
        let mut start = Vec::new();
        let mut replay = Replay::new(self, &mut start)?;
        let mut moves = Vec::with_capacity(n);
        let mut all = Vec::with_capacity(n + 1);
        all.push(start);
        while replay.done() < n {
            let mut events = Vec::new();
            let Some(played) = replay.next_move(&mut events) else {
                break;
            };
            moves.push(played?);
            all.push(events);
        }
        Ok((replay.into_game(), (moves, all)))
    }

    /// Per side (seat, or team), whether one of its seats made a move of its own: a play,
    /// a draw, a pass or a muggins call, not a table action nor a move made for it (by the
    /// stand-in of a seat that timed out, on that turn, or abandoned, from then on). A game
    /// that ended before every side moved is one the server leaves unrated. Replays the
    /// record until every side has moved: a few moves in a game played at all.
    pub fn sides_moved(&self) -> Result<Vec<bool>, String> {
        let rules = self.rules;
        let mut moved = vec![false; usize::from(rules.sides(self.seats))];
        // Per seat: left to a stand-in for good (abandoned), or for its current turn.
        let mut left = vec![false; usize::from(self.seats)];
        let mut timed_out = vec![false; usize::from(self.seats)];
        let mut replay = Replay::new(self, &mut Vec::new())?;
        let mut events = Vec::new();
        while !moved.iter().all(|&m| m) {
            events.clear();
            let Some(played) = replay.next_move(&mut events) else {
                break;
            };
            let (seat, mv) = played?;
            let s = usize::from(seat);
            match mv {
                Move::Abandon => left[s] = true,
                Move::TimedOut => timed_out[s] = true,
                Move::Resign | Move::Forfeit => {}
                _ if left[s] || timed_out[s] => {
                    // A stand-in's turn ends as a turn does: with a play or a pass.
                    if matches!(mv, Move::Play { .. } | Move::Pass) {
                        timed_out[s] = false;
                    }
                }
                _ => moved[usize::from(rules.side_of(seat))] = true,
            }
        }
        Ok(moved)
    }

    /// Every round result of the match so far, by replaying its record.
    pub(super) fn round_ends(&self) -> Result<Vec<RoundResult>, String> {
        let (_, (_, events)) = self.replay_first(self.move_count())?;
        Ok(events
            .iter()
            .flatten()
            .filter_map(|e| match *e {
                Event::RoundEnded(r) => Some(r),
                _ => None,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Preset, Seed};

    /// A muggins match played to its end by the first legal move of each turn.
    fn played() -> Game {
        let mut rules = Preset::Muggins.rules();
        rules.target = Some(61);
        let mut game = Game::new(rules, 3, Seed::from_text("replay"), None).unwrap();
        let mut n = 0usize;
        while let Some(turn) = game.turn() {
            let legal = game.project(Some(turn)).legal_moves;
            game.play(turn, legal[n % legal.len()].mv).unwrap();
            n += 1;
        }
        game
    }

    #[test]
    fn a_replay_one_move_at_a_time_gives_what_the_whole_replay_gives() {
        let game = played();
        let (moves, events) = game.replay_history().unwrap();
        let mut start = Vec::new();
        let mut replay = Replay::new(&game, &mut start).unwrap();
        assert_eq!(start, events[0]);
        let mut caused = Vec::new();
        for (i, &mv) in moves.iter().enumerate() {
            caused.clear();
            assert_eq!(replay.next_move(&mut caused).unwrap().unwrap(), mv);
            assert_eq!(caused, events[i + 1]);
            assert_eq!(replay.done(), i + 1);
        }
        assert!(replay.next_move(&mut caused).is_none());
        assert_eq!(replay.finish().unwrap(), game);
    }

    #[test]
    fn a_replay_that_skips_reaches_the_same_game() {
        let game = played();
        let half = game.move_count() / 2;
        let mut replay = Replay::new(game.clone(), &mut Vec::new()).unwrap();
        replay.skip(half).unwrap();
        assert_eq!(replay.game(), &game.after_moves(half).unwrap().0);
        assert_eq!(replay.finish().unwrap(), game);
    }

    /// The first legal move of the seat to move.
    fn first_legal(game: &mut Game) {
        let turn = game.turn().unwrap();
        let mv = game.project(Some(turn)).legal_moves[0].mv;
        game.play(turn, mv).unwrap();
    }

    #[test]
    fn a_side_that_resigned_or_timed_out_before_moving_has_not_moved() {
        let new = || Game::new(Preset::Block.rules(), 2, Seed::from_text("moved"), None).unwrap();
        let mut resigned = new();
        resigned.play(0, Move::Resign).unwrap();
        assert_eq!(resigned.sides_moved().unwrap(), [false, false]);
        // One seat moves, the other resigns on its turn.
        let mut one = new();
        let first = one.turn().unwrap();
        first_legal(&mut one);
        one.play(one.turn().unwrap(), Move::Resign).unwrap();
        let mut expected = [false, false];
        expected[usize::from(first)] = true;
        assert_eq!(one.sides_moved().unwrap(), expected);
        // A turn played for a seat that timed out is not its own; its next one is.
        let mut stood_in = new();
        let seat = stood_in.turn().unwrap();
        stood_in.play(seat, Move::TimedOut).unwrap();
        while stood_in.turn() == Some(seat) {
            first_legal(&mut stood_in);
        }
        assert_eq!(stood_in.sides_moved().unwrap(), [false, false]);
        while !stood_in.sides_moved().unwrap().iter().all(|&m| m) {
            first_legal(&mut stood_in);
        }
        assert!(stood_in.move_count() > 3);
    }
}
