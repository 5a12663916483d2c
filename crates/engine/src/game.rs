//! A match: rounds, turns, applying a move, and the results.
//!
//! Which moves a seat may make is [`super::legal`]'s; [`Game::play`] changes nothing
//! unless [`Game::check`] accepted. The table actions ([`Move::Resign`],
//! [`Move::TimedOut`], [`Move::Abandon`], [`Move::Forfeit`]) are about a seat, not the
//! tiles (see [`super::table`]). The engine reads no clock: the service decides when a
//! seat ran out of time and says so with these moves, which are recorded and replayed
//! like any other.

use serde::{Deserialize, Serialize};

use super::deal::{Deal, Seed};
use super::error::MoveError;
use super::event::{EarlyEnd, EndReason, Event, MatchEnd, Outcome, RoundResult};
use super::history::History;
use super::layout::{End, Layout};
use super::moves::Move;
use super::round::Round;
use super::rules::{Rules, RulesError, Scoring, WhenStuck};
use super::tile::{Tile, TileSet};

/// Points a player made but did not claim (muggins rules), open to the opponents until
/// the next move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unclaimed {
    pub seat: u8,
    pub points: u16,
}

/// A replayed match: the game after the last move, and the events of the start followed
/// by those of each move.
pub type Replayed = (Game, Vec<Vec<Event>>);

/// A whole match, from the first deal to the result. Pure: no I/O, no clock, and the only
/// randomness comes from the seed.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    pub(crate) rules: Rules,
    pub(crate) seats: u8,
    pub(crate) seed: Seed,
    pub(crate) first_deal: Option<Deal>,
    /// Per side (seat, or team); penalty points under penalty scoring.
    pub(crate) scores: [i32; 4],
    pub(crate) rounds_done: u16,
    pub(crate) round: Round,
    pub(crate) unclaimed: Option<Unclaimed>,
    pub(crate) last_round: Option<RoundResult>,
    /// Bit `s`: seat `s` is abandoned (a bot plays it to the end).
    pub(crate) abandoned: u8,
    /// Set when a seat resigned or forfeited on time with two sides.
    pub(crate) early_end: Option<EarlyEnd>,
    /// Every applied move, in order: with the rules, seed and first deal, enough to replay.
    pub(crate) history: History,
    /// A world a bot made up to search ([`Game::determinise`]): it records no history (it
    /// has no past to replay) and deals no round after its own (a search reads only the
    /// scores its round ends with). The engine's hottest loop runs in such games.
    #[serde(skip)]
    pub(crate) sampled: bool,
}

// `clone_from` keeps the target's allocations: the searching bots copy a game into the
// same scratch game for every candidate of every playout. The exhaustive patterns make a
// new field a compile error here, not a field left stale.
impl Clone for Game {
    fn clone(&self) -> Game {
        Game {
            rules: self.rules,
            seats: self.seats,
            seed: self.seed,
            first_deal: self.first_deal.clone(),
            scores: self.scores,
            rounds_done: self.rounds_done,
            round: self.round.clone(),
            unclaimed: self.unclaimed,
            last_round: self.last_round,
            abandoned: self.abandoned,
            early_end: self.early_end,
            history: self.history.clone(),
            sampled: self.sampled,
        }
    }

    fn clone_from(&mut self, source: &Game) {
        let Game {
            rules,
            seats,
            seed,
            first_deal,
            scores,
            rounds_done,
            round,
            unclaimed,
            last_round,
            abandoned,
            early_end,
            history,
            sampled,
        } = source;
        self.rules = *rules;
        self.seats = *seats;
        self.seed = *seed;
        self.first_deal.clone_from(first_deal);
        self.scores = *scores;
        self.rounds_done = *rounds_done;
        self.round.clone_from(round);
        self.unclaimed = *unclaimed;
        self.last_round = *last_round;
        self.abandoned = *abandoned;
        self.early_end = *early_end;
        self.history.clone_from(history);
        self.sampled = *sampled;
    }
}

impl Game {
    /// A new match, its first round dealt: from `first_deal` if given, else from the seed.
    pub fn new(
        rules: Rules,
        seats: u8,
        seed: Seed,
        first_deal: Option<Deal>,
    ) -> Result<Game, RulesError> {
        Game::start(rules, seats, seed, first_deal, &mut Vec::new())
    }

    /// Like [`Game::new`], collecting the events of the start (the first round's deal).
    pub fn start(
        rules: Rules,
        seats: u8,
        seed: Seed,
        first_deal: Option<Deal>,
        events: &mut Vec<Event>,
    ) -> Result<Game, RulesError> {
        rules.validate(seats)?;
        if let Some(deal) = &first_deal {
            deal.validate(&rules, seats)?;
        }
        let mut game = Game {
            rules,
            seats,
            seed,
            first_deal,
            scores: [0; 4],
            rounds_done: 0,
            round: Round {
                number: 0,
                leader: 0,
                turn: 0,
                hands: [TileSet::EMPTY; 4],
                boneyard: Vec::new(),
                layout: Layout::default(),
                must_lead: None,
                start_tile: None,
                drew: false,
                voids: [0; 4],
                played: [TileSet::EMPTY; 4],
                held_since: [0; 4],
            },
            unclaimed: None,
            last_round: None,
            abandoned: 0,
            early_end: None,
            history: History::default(),
            sampled: false,
        };
        game.start_round(1, events);
        Ok(game)
    }

    /// Replays a recorded match: the game after every move, and each move's events.
    pub fn replay(
        rules: Rules,
        seats: u8,
        seed: Seed,
        first_deal: Option<Deal>,
        moves: &[(u8, Move)],
    ) -> Result<Replayed, (usize, MoveError)> {
        let mut start = Vec::new();
        let mut game = Game::start(rules, seats, seed, first_deal, &mut start)
            .map_err(|_| (0, MoveError::GameOver))?;
        let mut all = vec![start];
        for (i, &(seat, mv)) in moves.iter().enumerate() {
            let mut events = Vec::new();
            game.play_into(seat, mv, &mut events).map_err(|e| (i, e))?;
            all.push(events);
        }
        Ok((game, all))
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn seats(&self) -> u8 {
        self.seats
    }

    pub fn seed(&self) -> Seed {
        self.seed
    }

    pub fn first_deal(&self) -> Option<&Deal> {
        self.first_deal.as_ref()
    }

    /// How many moves the match has seen.
    pub fn move_count(&self) -> usize {
        self.history.len()
    }

    /// Scores per side (seat, or team under `teams`).
    pub fn scores(&self) -> &[i32] {
        &self.scores[..self.rules.sides(self.seats) as usize]
    }

    /// Sets the first sides' scores, as if earlier rounds had made them: for the bots'
    /// tests of a race, in another crate. Hidden from the docs.
    #[doc(hidden)]
    pub fn set_scores(&mut self, scores: &[i32]) {
        self.scores[..scores.len()].copy_from_slice(scores);
    }

    pub fn round_number(&self) -> u16 {
        self.round.number
    }

    pub fn rounds_done(&self) -> u16 {
        self.rounds_done
    }

    /// The seat to move; `None` once the match is over (or a sampled world's round).
    pub fn turn(&self) -> Option<u8> {
        if !self.in_play() {
            None
        } else {
            Some(self.round.turn)
        }
    }

    pub fn leader(&self) -> u8 {
        self.round.leader
    }

    pub fn layout(&self) -> &Layout {
        &self.round.layout
    }

    pub fn hand(&self, seat: u8) -> TileSet {
        self.round.hands[seat as usize]
    }

    pub fn boneyard_count(&self) -> usize {
        self.round.boneyard.len()
    }

    pub fn unclaimed(&self) -> Option<Unclaimed> {
        self.unclaimed
    }

    /// Why the match ended; `None` while it is in play. A normal end is
    /// [`MatchEnd::Target`] when a side reached the target, else [`MatchEnd::Rounds`].
    pub fn match_end(&self) -> Option<MatchEnd> {
        if let Some(e) = self.early_end {
            return Some(e.reason);
        }
        if self.target_reached() {
            Some(MatchEnd::Target)
        } else if self.all_rounds_done() {
            Some(MatchEnd::Rounds)
        } else {
            None
        }
    }

    pub fn last_round(&self) -> Option<&RoundResult> {
        self.last_round.as_ref()
    }

    /// The match's result, computed from the scores: a side reaching the target ends it
    /// (the best total wins; equal best totals draw), as does the last of `rounds`. A seat
    /// that resigned or forfeited on time (two sides) loses, whatever the scores.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(e) = self.early_end {
            return Some(Outcome::Won {
                side: 1 - self.rules.side_of(e.seat).min(1),
            });
        }
        let scores = self.scores();
        let penalty = self.rules.scoring == Scoring::Penalty;
        if !self.target_reached() && !self.all_rounds_done() {
            return None;
        }
        let best = if penalty {
            scores.iter().min()
        } else {
            scores.iter().max()
        }
        .copied()?;
        let mut leaders = (0..scores.len() as u8).filter(|&s| scores[s as usize] == best);
        match (leaders.next(), leaders.next()) {
            (Some(side), None) => Some(Outcome::Won { side }),
            _ => Some(Outcome::Drawn),
        }
    }

    /// A round is in play: the match is not over, and a sampled world's one round has not
    /// ended (it deals no other).
    pub(crate) fn in_play(&self) -> bool {
        self.rounds_done < self.round.number && !self.is_over()
    }

    /// Whether the match is over: [`Game::outcome`] without working out who won (asked on
    /// every move, so kept to a comparison or two).
    pub fn is_over(&self) -> bool {
        self.early_end.is_some() || self.all_rounds_done() || self.target_reached()
    }

    pub(super) fn all_rounds_done(&self) -> bool {
        self.rounds_done >= self.rules.last_round()
    }

    pub(super) fn target_reached(&self) -> bool {
        self.rules
            .target
            .is_some_and(|t| self.scores().iter().any(|&s| s >= t as i32))
    }

    // ----- applying moves -----

    /// Applies a move for `seat`, returning what it caused. A refused move changes nothing.
    pub fn play(&mut self, seat: u8, mv: Move) -> Result<Vec<Event>, MoveError> {
        let mut events = Vec::new();
        self.play_into(seat, mv, &mut events)?;
        Ok(events)
    }

    /// [`Game::play`] appending the events to a reused buffer; answers the move in
    /// canonical form (as [`Game::check`] does).
    pub fn play_into(
        &mut self,
        seat: u8,
        mv: Move,
        events: &mut Vec<Event>,
    ) -> Result<Move, MoveError> {
        let mv = self.check(seat, mv)?;
        self.apply(seat, mv, events);
        Ok(mv)
    }

    /// Plays a move [`Game::legal_moves`] listed, as listed, without asking [`Game::check`]
    /// again: the searching bots play only moves from move generation, millions a
    /// decision. Debug builds still check. For the bots' crate only: hidden from the docs.
    #[doc(hidden)]
    pub fn play_legal(&mut self, seat: u8, mv: Move, events: &mut Vec<Event>) {
        debug_assert_eq!(self.check(seat, mv), Ok(mv), "a listed move");
        self.apply(seat, mv, events);
    }

    /// Applies a checked move in canonical form.
    fn apply(&mut self, seat: u8, mv: Move, events: &mut Vec<Event>) {
        if !self.sampled {
            self.history.push(&self.rules, seat, mv);
        }
        // Unclaimed points are open until the next move of any kind, a table action included.
        let taken = self.unclaimed.take();
        match mv {
            Move::Resign | Move::TimedOut | Move::Abandon | Move::Forfeit => {
                self.apply_table_action(seat, mv, events)
            }
            Move::Muggins => {
                let u = taken.expect("checked");
                self.award(seat, u.points as i32);
                events.push(Event::MugginsTaken {
                    seat,
                    from: u.seat,
                    points: u.points,
                });
                self.end_match_if_over(events);
            }
            Move::Play { tile, end, claim } => self.apply_play(seat, tile, end, claim, events),
            Move::Draw => {
                // A draw made because the seat could not play shows the hand it drew to
                // holds none of the open numbers (under draw_anytime a draw shows
                // nothing). That knowledge is kept aside: the tile drawn is hidden, so
                // nothing is known of the hand with it until a play shows which tile left.
                let known = self.known_missing(seat);
                let r = &mut self.round;
                r.voids[seat as usize] = if self.rules.draw_anytime {
                    known
                } else {
                    known | r.layout.tips().end_pips()
                };
                let tile = r.boneyard.pop().expect("checked: the boneyard gives tiles");
                r.hands[seat as usize].insert(tile);
                r.held_since[seat as usize] = r.layout.len() as u8;
                r.drew = true;
                events.push(Event::Drew {
                    seat,
                    tile: Some(tile),
                });
                self.settle(events);
            }
            Move::Pass => {
                let known = self.known_missing(seat);
                let r = &mut self.round;
                r.voids[seat as usize] = known | r.layout.tips().end_pips();
                events.push(Event::Passed { seat });
                self.next_turn();
                self.settle(events);
            }
        }
    }

    fn apply_play(
        &mut self,
        seat: u8,
        tile: Tile,
        end: Option<End>,
        claim: Option<u16>,
        events: &mut Vec<Event>,
    ) {
        let points = self.points_of(tile, end);
        let r = &mut self.round;
        r.hands[seat as usize].remove(tile);
        r.played[seat as usize].insert(tile);
        // After a draw, a tile carrying a number the rest of the hand was known not to
        // hold must be the one drawn (after a forced draw every playable tile does): what
        // was known of the rest holds again. Any other tile may have come from the rest.
        if r.drew {
            let rest = r.voids[seat as usize];
            let known_drawn = rest & (1 << tile.lo() | 1 << tile.hi()) != 0;
            r.voids[seat as usize] = if known_drawn { rest } else { 0 };
        }
        match end {
            None => r.layout.lead_with(tile, &self.rules),
            Some(e) => r.layout.place(tile, e, &self.rules),
        }
        r.must_lead = None;
        // A play worth nothing has nothing to lose to a muggins call: it is credited.
        let credited = points == 0 || !self.rules.muggins || claim == Some(points);
        events.push(Event::Played {
            seat,
            tile,
            end,
            points,
            credited,
        });
        if points > 0 {
            if credited {
                self.award(seat, points as i32);
                if self.end_match_if_over(events) {
                    return;
                }
            } else {
                self.unclaimed = Some(Unclaimed { seat, points });
            }
        }
        if self.round.hands[seat as usize].is_empty() {
            self.end_round(EndReason::Domino, Some(seat), events);
        } else {
            self.next_turn();
            self.settle(events);
        }
    }

    fn award(&mut self, seat: u8, points: i32) {
        self.scores[self.rules.side_of(seat) as usize] += points;
    }

    pub(super) fn end_match_if_over(&self, events: &mut Vec<Event>) -> bool {
        if !self.is_over() {
            return false;
        }
        match (self.outcome(), self.match_end()) {
            (Some(outcome), Some(reason)) => {
                events.push(Event::MatchEnded {
                    outcome,
                    scores: self.scores,
                    reason,
                });
                true
            }
            _ => false,
        }
    }

    fn next_turn(&mut self) {
        let r = &mut self.round;
        r.turn = (r.turn + 1) % self.seats;
        r.drew = false;
    }

    /// After a move: ends the round if the table is blocked or the seat to move is stuck
    /// under `when_stuck = end_round`. Otherwise the seat to move has a legal move.
    pub(super) fn settle(&mut self, events: &mut Vec<Event>) {
        let turn = self.round.turn;
        if !self.playable(turn).is_empty() || self.boneyard_open() {
            return;
        }
        // Nobody can draw; if nobody can play either, the round is blocked.
        if (0..self.seats).all(|s| self.playable(s).is_empty()) {
            self.end_round(EndReason::Blocked, None, events);
        } else if self.rules.when_stuck == WhenStuck::EndRound && !self.drew_its_one_tile() {
            self.end_round(EndReason::Stuck, None, events);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;
    use crate::rules::{MAX_ROUNDS, MAX_TARGET};

    #[test]
    fn a_match_to_a_target_alone_ends_after_the_most_rounds_if_no_side_reaches_it() {
        let rules = Rules {
            target: Some(MAX_TARGET),
            rounds: None,
            ..Preset::Block.rules()
        };
        let mut game = Game::new(rules, 2, Seed::from_text("cap"), None).unwrap();
        // As if the match had played all rounds but the last without reaching the target.
        game.rounds_done = MAX_ROUNDS - 1;
        game.round.number = MAX_ROUNDS;
        game.check_invariants().unwrap();
        while let Some(turn) = game.turn() {
            let mv = game.legal_moves(turn)[0];
            game.play(turn, mv).unwrap();
        }
        assert_eq!(game.match_end(), Some(MatchEnd::Rounds));
        assert_eq!(
            (game.rounds_done(), game.round_number()),
            (MAX_ROUNDS, MAX_ROUNDS)
        );
        assert!(game.scores().iter().all(|&s| s < MAX_TARGET as i32));
        assert!(game.outcome().is_some());
        game.check_invariants().unwrap();
    }
}
