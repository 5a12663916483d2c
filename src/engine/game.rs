//! A match: rounds, turns, applying a move, and the results.
//!
//! Which moves a seat may make is [`super::legal`]'s; [`Game::play`] changes nothing
//! unless [`Game::check`] accepted. The table actions ([`Move::Resign`],
//! [`Move::TimedOut`], [`Move::Abandon`], [`Move::Forfeit`]) are about a seat, not the
//! tiles (see [`super::table`]). The engine reads no clock: the service decides when a
//! seat ran out of time and says so with these moves, which are recorded and replayed
//! like any other.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::deal::{Deal, Seed, draw_lots, round_rng, shuffle_into};
use super::error::MoveError;
use super::event::{EarlyEnd, EndReason, Event, MatchEnd, Outcome, RoundResult};
use super::history::History;
use super::layout::{End, Layout};
use super::moves::Move;
use super::rules::{NextLeader, Opening, Rules, RulesError, Scoring, WhenStuck};
use super::scoring;
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

/// The round in play.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Round {
    pub(crate) number: u16,
    pub(crate) leader: u8,
    pub(crate) turn: u8,
    pub(crate) hands: [TileSet; 4],
    /// Bottom first: the top tile is the last, so a draw is a `pop`.
    pub(crate) boneyard: Vec<Tile>,
    pub(crate) layout: Layout,
    pub(crate) must_lead: Option<Tile>,
    pub(crate) start_tile: Option<Tile>,
    /// The seat to move has drawn this turn (`draw = one` allows one draw).
    pub(crate) drew: bool,
    /// Per seat, pips it is publicly known not to hold (bit `p` = pip `p`). For the seat
    /// to move once it has drawn this turn, what the rest of its hand, without the tile
    /// drawn last, is known not to hold: see [`Game::known_missing`].
    pub(crate) voids: [u16; 4],
    /// Per seat, the tiles it has laid this round (the lead included; a start tile is no
    /// seat's): public, as everyone saw who laid each one.
    pub(crate) played: [TileSet; 4],
    /// Per seat, the tiles on the table when it last drew this round (0 if it has not):
    /// every play it made from then on, it made holding every tile it holds now.
    pub(crate) held_since: [u8; 4],
}

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
}

// `clone_from` keeps the target's allocations: the searching bots copy a game into the
// same scratch game for every candidate of every playout. The exhaustive patterns make a
// new field a compile error here, not a field left stale.
impl Clone for Round {
    fn clone(&self) -> Round {
        let mut round = Round {
            boneyard: Vec::new(),
            layout: Layout::default(),
            ..*self
        };
        round.boneyard.clone_from(&self.boneyard);
        round.layout.clone_from(&self.layout);
        round
    }

    fn clone_from(&mut self, source: &Round) {
        let Round {
            number,
            leader,
            turn,
            hands,
            boneyard,
            layout,
            must_lead,
            start_tile,
            drew,
            voids,
            played,
            held_since,
        } = source;
        self.number = *number;
        self.leader = *leader;
        self.turn = *turn;
        self.hands = *hands;
        self.boneyard.clone_from(boneyard);
        self.layout.clone_from(layout);
        self.must_lead = *must_lead;
        self.start_tile = *start_tile;
        self.drew = *drew;
        self.voids = *voids;
        self.played = *played;
        self.held_since = *held_since;
    }
}

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

    /// A game consistent with what `view`'s seat knows, with the hidden tiles placed as
    /// given: `hands` for every seat (the viewer's own hand must be its real one) and the
    /// boneyard, top last. This is how a bot searches: it samples the hidden tiles and
    /// plays the game forward, never looking at the real one. Later rounds deal from
    /// `seed`. Fails when the tiles given are not the ones `view` cannot see.
    pub fn determinise(
        view: &super::Projection,
        hands: [TileSet; 4],
        boneyard_top_last: Vec<Tile>,
        seed: Seed,
    ) -> Result<Game, String> {
        let mut scores = [0; 4];
        scores[..view.scores.len()].copy_from_slice(&view.scores);
        let game = Game {
            rules: view.rules,
            seats: view.seats,
            seed,
            first_deal: None,
            scores,
            rounds_done: view.rounds_done,
            round: Round {
                number: view.round,
                leader: view.leader,
                turn: view.turn.ok_or("the match is over")?,
                hands,
                boneyard: boneyard_top_last,
                layout: view.layout.clone(),
                must_lead: view.must_lead,
                start_tile: view.start_tile,
                drew: view.drew,
                voids: {
                    let mut v = [0; 4];
                    v[..view.voids.len()].copy_from_slice(&view.voids);
                    v
                },
                played: {
                    let mut p = [TileSet::EMPTY; 4];
                    p[..view.played.len()].copy_from_slice(&view.played);
                    p
                },
                held_since: {
                    let mut h = [0; 4];
                    h[..view.held_since.len()].copy_from_slice(&view.held_since);
                    h
                },
            },
            unclaimed: view.unclaimed,
            last_round: view.last_round,
            abandoned: view
                .abandoned
                .iter()
                .take(view.seats as usize)
                .enumerate()
                .fold(0, |m, (s, &a)| m | (u8::from(a) << s)),
            early_end: None,
            history: History::off(),
        };
        if let (Some(seat), Some(hand)) = (view.viewer, view.hand)
            && game.round.hands[seat as usize] != hand
        {
            return Err("the viewer's hand differs from its real hand".into());
        }
        for seat in 0..view.seats as usize {
            if game.round.hands[seat].len() != view.hand_counts[seat] as usize {
                return Err(format!(
                    "seat {seat} must hold {} tiles",
                    view.hand_counts[seat]
                ));
            }
        }
        if game.round.boneyard.len() != view.boneyard_count as usize {
            return Err(format!(
                "the boneyard must hold {} tiles",
                view.boneyard_count
            ));
        }
        game.check_invariants()?;
        Ok(game)
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

    pub fn round_number(&self) -> u16 {
        self.round.number
    }

    pub fn rounds_done(&self) -> u16 {
        self.rounds_done
    }

    /// The seat to move; `None` once the match is over.
    pub fn turn(&self) -> Option<u8> {
        if self.is_over() {
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

    /// The deal of round `number` as it was dealt (for a round not yet dealt, as it would
    /// be after a blocked round): the seed's stream for that round gives the lots (when
    /// drawn), the shuffle, and then the round's other chances.
    pub fn deal_of_round(&self, number: u16) -> Deal {
        self.deal_dealt(number, self.opening_applied(number))
    }

    /// Every round's deal so far, in order, as [`Game::deal_of_round`] gives each, from
    /// one replay of the record at most (each round's leader may turn on how the one
    /// before ended): an export of a thousand rounds costs one replay, not a thousand.
    pub fn deals(&self) -> Vec<Deal> {
        let went_out: Option<Vec<bool>> = (self.rules.next_leader == NextLeader::Winner
            && self.round.number > 1)
            .then(|| self.round_ends().ok())
            .flatten()
            .map(|ends| ends.iter().map(|r| r.went_out.is_some()).collect());
        (1..=self.round.number)
            .map(|n| {
                let by_opening = match &went_out {
                    Some(out) if n > 1 => !out.get(n as usize - 2).copied().unwrap_or(false),
                    _ => self.opening_applied(n),
                };
                self.deal_dealt(n, by_opening)
            })
            .collect()
    }

    /// Round `number`'s deal, its leader chosen by the opening rule or not.
    fn deal_dealt(&self, number: u16, by_opening: bool) -> Deal {
        let mut stock = Vec::new();
        self.deal_into(
            number,
            by_opening,
            &mut round_rng(&self.seed, number),
            &mut stock,
        );
        Deal::from_stock(&self.rules, self.seats, &stock)
    }

    /// Whether round `number`'s leader came from the opening rule. Under `next_leader =
    /// winner` that turns on how round `number - 1` ended, which `last_round` tells only
    /// while round `number` is in play; for earlier rounds the record is replayed.
    fn opening_applied(&self, number: u16) -> bool {
        if number <= 1 || self.rules.next_leader != NextLeader::Winner {
            return self.opening_applies(number);
        }
        let before = number - 1;
        if let Some(r) = self.last_round.filter(|r| r.number == before) {
            return r.went_out.is_none();
        }
        match self.round_ends() {
            Ok(ends) => ends
                .iter()
                .find(|r| r.number == before)
                .is_none_or(|r| r.went_out.is_none()),
            // No record to replay (a game a bot made up): the last result is all there is.
            Err(_) => self.opening_applies(number),
        }
    }

    /// Fills `stock` with round `number`'s deal in deal order (hands, then the boneyard
    /// top first), drawing from `rng`, the round's stream; returns the lots' leader when
    /// the opening rule picks the leader (`by_opening`) by drawing lots. A reused `stock`
    /// keeps playouts free of allocation.
    fn deal_into(
        &self,
        number: u16,
        by_opening: bool,
        rng: &mut rand_chacha::ChaCha8Rng,
        stock: &mut Vec<Tile>,
    ) -> Option<u8> {
        let (rules, seats) = (&self.rules, self.seats);
        let lots = (by_opening && rules.opening == Opening::DrawLots)
            .then(|| draw_lots(rules, seats, rng));
        shuffle_into(rules, rng, stock);
        // An explicit deal replaces the shuffle but draws it all the same, so the round's
        // later chances (a random leader) are those of a seeded game with the same deal:
        // a game rebuilt from its export's first deal and seed is the game itself.
        if let (Some(d), 1) = (&self.first_deal, number) {
            stock.clear();
            stock.extend(d.hands.iter().flatten().chain(&d.boneyard));
        }
        // A start tile is never a double: reshuffle the rare stock whose boneyard holds
        // only doubles (an explicit deal like that was refused when the game was made).
        let dealt = seats as usize * rules.hand_size as usize;
        while rules.opening == Opening::StartTile && stock[dealt..].iter().all(|t| t.is_double()) {
            shuffle_into(rules, rng, stock);
        }
        lots
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
        self.history.push(&self.rules, seat, mv);
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
        Ok(mv)
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
    fn settle(&mut self, events: &mut Vec<Event>) {
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

    fn end_round(&mut self, reason: EndReason, went_out: Option<u8>, events: &mut Vec<Event>) {
        let boneyard: TileSet = self.round.boneyard.iter().copied().collect();
        let (winner, awards) = scoring::round_awards(
            &self.rules,
            self.seats,
            &self.round.hands,
            boneyard,
            reason,
            went_out,
        );
        for (score, award) in self.scores.iter_mut().zip(awards) {
            *score += award;
        }
        self.rounds_done += 1;
        let result = RoundResult {
            number: self.round.number,
            reason,
            went_out,
            winner,
            hands: self.round.hands,
            awards,
            scores: self.scores,
        };
        self.last_round = Some(result);
        events.push(Event::RoundEnded(result));
        if !self.end_match_if_over(events) {
            self.start_round(self.round.number + 1, events);
        }
    }

    /// Whether round `number`'s leader comes from the opening rule, as the round is
    /// dealt: `last_round` is then round `number - 1`'s result.
    fn opening_applies(&self, number: u16) -> bool {
        number == 1
            || match self.rules.next_leader {
                NextLeader::Opening => true,
                NextLeader::Winner => self.last_round.is_none_or(|r| r.went_out.is_none()),
                NextLeader::Alternate => false,
            }
    }

    fn start_round(&mut self, number: u16, events: &mut Vec<Event>) {
        let rules = self.rules;
        let seats = self.seats;
        let mut rng = round_rng(&self.seed, number);
        let by_opening = self.opening_applies(number);
        let mut stock = std::mem::take(&mut self.round.boneyard);
        let lots = self.deal_into(number, by_opening, &mut rng, &mut stock);
        let n = rules.hand_size as usize;
        let mut hands = [TileSet::EMPTY; 4];
        for (s, h) in hands.iter_mut().enumerate().take(seats as usize) {
            *h = stock[s * n..(s + 1) * n].iter().copied().collect();
        }
        stock.drain(..seats as usize * n);
        let mut boneyard = stock;
        let mut layout = std::mem::take(&mut self.round.layout);
        layout.clear();
        // Every round of a start_tile game begins with a start tile: the first non-double
        // from the top; the next_leader rule picks who plays onto it.
        let start_tile = (rules.opening == Opening::StartTile).then(|| {
            let i = boneyard
                .iter()
                .position(|t| !t.is_double())
                .expect("checked above");
            let tile = boneyard.remove(i);
            layout.lead_with(tile, &rules);
            tile
        });
        boneyard.reverse();
        let holder = |tile: Tile| {
            (0..seats)
                .find(|&s| hands[s as usize].contains(tile))
                .unwrap_or(0)
        };
        let all: TileSet = hands.iter().fold(TileSet::EMPTY, |a, h| a.union(*h));
        let (leader, must_lead) = if by_opening {
            match rules.opening {
                Opening::HighestDouble => match all.highest_double().or_else(|| all.heaviest()) {
                    Some(t) => (holder(t), Some(t)),
                    None => (0, None),
                },
                Opening::HeaviestTile => match all.heaviest() {
                    Some(t) => (holder(t), Some(t)),
                    None => (0, None),
                },
                Opening::DrawLots => (lots.unwrap_or(0), None),
                Opening::Random => (rng.random_range(0..seats), None),
                Opening::StartTile | Opening::SeatZero => (0, None),
            }
        } else {
            match self.rules.next_leader {
                NextLeader::Winner => (self.last_round.and_then(|r| r.went_out).unwrap_or(0), None),
                _ => ((self.round.leader + 1) % seats, None),
            }
        };
        self.round = Round {
            number,
            leader,
            turn: leader,
            hands,
            boneyard,
            layout,
            must_lead,
            start_tile,
            drew: false,
            voids: [0; 4],
            played: [TileSet::EMPTY; 4],
            held_since: [0; 4],
        };
        events.push(Event::RoundStarted {
            number,
            leader,
            start_tile,
        });
        self.settle(events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rules::{MAX_ROUNDS, MAX_TARGET, Preset};

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
