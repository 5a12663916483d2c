//! A match: rounds, turns, legal moves, and applying a move.
//!
//! Legality has one source: [`Game::check`] accepts exactly the moves [`Game::legal_moves`]
//! lists (plus two shorthands: a play without `end` when only one end fits, and `claim: 0`
//! for a play that scores nothing), and [`Game::play`] changes nothing unless `check`
//! accepted. The property tests hold the two to each other.
//!
//! The table actions ([`Move::Resign`], [`Move::TimedOut`], [`Move::Abandon`],
//! [`Move::Forfeit`]) are the one exception: they are about a seat, not the tiles, so no
//! client or bot is ever offered them, and `check` accepts them on their own conditions
//! (see [`Move`]). The engine reads no clock: the service decides when a seat ran out of
//! time and says so with these moves, which are recorded and replayed like any other.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::deal::{Deal, Seed, draw_lots, round_rng, shuffle_into};
use super::error::MoveError;
use super::event::{EarlyEnd, EndReason, Event, MatchEnd, Outcome, RoundResult};
use super::history::History;
use super::layout::{End, Layout};
use super::moves::Move;
use super::rules::{DrawRule, NextLeader, Opening, Rules, RulesError, Scoring, WhenStuck};
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

    fn all_rounds_done(&self) -> bool {
        self.rounds_done >= self.rules.last_round()
    }

    fn target_reached(&self) -> bool {
        self.rules
            .target
            .is_some_and(|t| self.scores().iter().any(|&s| s >= t as i32))
    }

    // ----- move generation -----

    fn can_draw_now(&self, seat: u8, can_play: bool) -> Result<(), &'static str> {
        let r = &self.round;
        if self.rules.draw == DrawRule::Block {
            return Err("this game has no drawing");
        }
        if r.layout.is_empty() {
            return Err("the lead comes first");
        }
        if r.boneyard.len() <= self.rules.boneyard_reserve as usize {
            return Err("the boneyard is empty");
        }
        if can_play && !self.rules.draw_anytime {
            return Err("you can play");
        }
        if self.rules.draw == DrawRule::One && r.drew && r.turn == seat {
            return Err("you have drawn your one tile this turn");
        }
        Ok(())
    }

    /// The pips `seat` is publicly known not to hold: every number open at its passes
    /// and forced draws since, as long as no tile it drew since may carry them.
    pub fn known_missing(&self, seat: u8) -> u16 {
        let r = &self.round;
        if r.drew && seat == r.turn {
            0
        } else {
            r.voids[seat as usize]
        }
    }

    /// Under `draw = one`, the seat to move has drawn its tile this turn: if it cannot
    /// play, it passes (it is not stuck: the boneyard gave it a tile).
    fn drew_its_one_tile(&self) -> bool {
        self.rules.draw == DrawRule::One && self.round.drew
    }

    /// The boneyard still gives tiles under these rules.
    fn boneyard_open(&self) -> bool {
        self.rules.draw != DrawRule::Block
            && self.round.boneyard.len() > self.rules.boneyard_reserve as usize
    }

    fn playable(&self, seat: u8) -> TileSet {
        let r = &self.round;
        let hand = r.hands[seat as usize];
        if r.layout.is_empty() {
            return match r.must_lead {
                Some(t) => [t].into_iter().collect::<TileSet>().intersect(hand),
                None => hand,
            };
        }
        hand.intersect(r.layout.tips().fits())
    }

    /// Points a play scores under fives (0 otherwise).
    pub fn points_of(&self, tile: Tile, end: Option<End>) -> u16 {
        self.round.layout.points_after(tile, end, &self.rules)
    }

    fn is_opponent(&self, seat: u8, of: u8) -> bool {
        self.rules.side_of(seat) != self.rules.side_of(of)
    }

    /// Every move `seat` may make now (empty when it may do nothing).
    pub fn legal_moves(&self, seat: u8) -> Vec<Move> {
        let mut out = Vec::new();
        self.legal_moves_into(seat, &mut out);
        out
    }

    /// [`Game::legal_moves`] into a reused buffer (cleared first): no allocation in playouts.
    pub fn legal_moves_into(&self, seat: u8, out: &mut Vec<Move>) {
        out.clear();
        if self.is_over() || seat >= self.seats {
            return;
        }
        if let Some(u) = self.unclaimed
            && self.is_opponent(seat, u.seat)
        {
            out.push(Move::Muggins);
        }
        let r = &self.round;
        if seat != r.turn {
            return;
        }
        let playable = self.playable(seat);
        if r.layout.is_empty() {
            for tile in playable.iter() {
                self.push_play(out, tile, None);
            }
            return;
        }
        for (end, value) in r.layout.tips().open_ends() {
            for tile in playable.intersect(TileSet::with_pip(value)).iter() {
                self.push_play(out, tile, Some(end));
            }
        }
        let can_play = !playable.is_empty();
        if self.can_draw_now(seat, can_play).is_ok() {
            out.push(Move::Draw);
        } else if !can_play {
            out.push(Move::Pass);
        }
    }

    /// Under muggins a scoring play is listed claimed first, then unclaimed: a client that
    /// takes the first listed move, or the one with the most points, keeps its points.
    fn push_play(&self, out: &mut Vec<Move>, tile: Tile, end: Option<End>) {
        if self.rules.muggins {
            let points = self.points_of(tile, end);
            if points > 0 {
                out.push(Move::Play {
                    tile,
                    end,
                    claim: Some(points),
                });
            }
        }
        out.push(Move::Play {
            tile,
            end,
            claim: None,
        });
    }

    /// Accepts a legal move, returning it in canonical form (the end filled in when it was
    /// left out, a zero claim dropped), or says why it is refused.
    pub fn check(&self, seat: u8, mv: Move) -> Result<Move, MoveError> {
        if self.is_over() {
            return Err(MoveError::GameOver);
        }
        if seat >= self.seats {
            return Err(MoveError::NoSuchSeat(seat));
        }
        let r = &self.round;
        if mv.is_table_action() {
            return self.check_table_action(seat, mv);
        }
        if mv == Move::Muggins {
            let u = self.unclaimed.ok_or(MoveError::NothingToTake)?;
            return if self.is_opponent(seat, u.seat) {
                Ok(mv)
            } else {
                Err(MoveError::OwnSide)
            };
        }
        if seat != r.turn {
            return Err(MoveError::NotYourTurn { turn: r.turn });
        }
        let can_play = !self.playable(seat).is_empty();
        match mv {
            Move::Muggins | Move::Resign | Move::TimedOut | Move::Abandon | Move::Forfeit => {
                unreachable!("handled above")
            }
            Move::Draw => self
                .can_draw_now(seat, can_play)
                .map(|_| mv)
                .map_err(MoveError::CannotDraw),
            Move::Pass => {
                if can_play {
                    Err(MoveError::MustPlay)
                } else if self.can_draw_now(seat, can_play).is_ok() {
                    Err(MoveError::MustDraw)
                } else {
                    Ok(mv)
                }
            }
            Move::Play { tile, end, claim } => {
                if !r.hands[seat as usize].contains(tile) {
                    return Err(MoveError::NotInHand(tile));
                }
                let end = if r.layout.is_empty() {
                    if end.is_some() {
                        return Err(MoveError::LeadTakesNoEnd);
                    }
                    if let Some(must) = r.must_lead
                        && must != tile
                    {
                        return Err(MoveError::MustLeadWith(must));
                    }
                    None
                } else {
                    let tips = r.layout.tips();
                    Some(match end {
                        Some(e) => {
                            let value = tips.value_at(e).ok_or(MoveError::EndNotOpen(e))?;
                            if !tile.has(value) {
                                return Err(MoveError::DoesNotFit {
                                    tile,
                                    end: e,
                                    value,
                                });
                            }
                            e
                        }
                        None => {
                            let mut fits = tips.open_ends().filter(|&(_, v)| tile.has(v));
                            match (fits.next(), fits.next()) {
                                (Some((e, _)), None) => e,
                                (None, _) => return Err(MoveError::FitsNowhere(tile)),
                                (Some(_), Some(_)) => return Err(MoveError::EndRequired(tile)),
                            }
                        }
                    })
                };
                let points = self.points_of(tile, end);
                let claim = match claim {
                    None => None,
                    Some(_) if !self.rules.muggins => return Err(MoveError::ClaimWithoutMuggins),
                    Some(0) if points == 0 => None,
                    Some(c) if c == points => Some(c),
                    Some(c) => return Err(MoveError::WrongClaim { claim: c, points }),
                };
                Ok(Move::Play { tile, end, claim })
            }
        }
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

    /// Tiles conserved and the round consistent: every tile of the set is in exactly one
    /// hand, the boneyard or the layout. The service checks this on every load, so it must
    /// hold for anything the engine goes on to use, and never panic, whatever was stored:
    /// the seat count and rules are valid, the layout is the one its tiles make.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !(2..=4).contains(&self.seats) {
            return Err(format!("{} seats", self.seats));
        }
        self.rules
            .validate(self.seats)
            .map_err(|e| format!("the rules: {e}"))?;
        let mut seen = TileSet::EMPTY;
        let mut count = 0usize;
        let r = &self.round;
        let places = r.hands[..self.seats as usize]
            .iter()
            .flat_map(|h| h.iter())
            .chain(r.boneyard.iter().copied())
            .chain(r.layout.tiles());
        for t in places {
            if seen.contains(t) {
                return Err(format!("{t} is in two places"));
            }
            seen.insert(t);
            count += 1;
        }
        if seen != TileSet::full(self.rules.max_pip)
            || count != super::tile::set_size(self.rules.max_pip)
        {
            return Err("tiles are missing".into());
        }
        if r.turn >= self.seats || r.leader >= self.seats {
            return Err("the turn names no seat".into());
        }
        if r.layout.rebuilt(&self.rules).as_ref() != Some(&r.layout) {
            return Err("the layout is not the one its tiles make".into());
        }
        let mut laid = TileSet::EMPTY;
        for (s, played) in r.played.iter().enumerate() {
            let both = laid.union(*played);
            if s >= usize::from(self.seats) && !played.is_empty()
                || both.len() != laid.len() + played.len()
            {
                return Err("a tile laid by no seat or by two".into());
            }
            laid = both;
        }
        // A start tile is laid by the deal, not a seat.
        if let Some(t) = r.start_tile {
            laid.insert(t);
        }
        let len = r.layout.len();
        if laid != r.layout.tiles().collect::<TileSet>()
            || r.held_since.iter().any(|&h| usize::from(h) > len)
        {
            return Err("who laid the layout's tiles is not told right".into());
        }
        // Round numbers: the round in play is the one after those done, or, once the match
        // is over, the last one done; a first deal, when given, is a valid one.
        let over = r.number == self.rounds_done && self.is_over();
        if r.number == 0
            || r.number > self.rules.last_round()
            || !(u32::from(r.number) == u32::from(self.rounds_done) + 1 || over)
        {
            return Err(format!(
                "round {} with {} rounds done",
                r.number, self.rounds_done
            ));
        }
        if let Some(deal) = &self.first_deal {
            deal.validate(&self.rules, self.seats)
                .map_err(|e| format!("the first deal: {e}"))?;
        }
        // Far beyond any real match, and far from overflowing as a round's award is added.
        if self.scores.iter().any(|s| s.unsigned_abs() > 1 << 30) {
            return Err("a score out of range".into());
        }
        if self.unclaimed.is_some_and(|u| u.seat >= self.seats) {
            return Err("a move names no seat".into());
        }
        if self.abandoned >> self.seats != 0 {
            return Err("an abandoned seat that does not exist".into());
        }
        if let Some(e) = self.early_end {
            if self.rules.sides(self.seats) != 2 {
                return Err("a match of more than two sides ended early".into());
            }
            if e.seat >= self.seats {
                return Err("the match was given up by no seat".into());
            }
            if !matches!(e.reason, MatchEnd::Resigned | MatchEnd::Timeout) {
                return Err(format!("an early end by {}", e.reason.as_str()));
            }
            // Nothing is played once the match is over: it ended with its round in play
            // and before the target or the last round ended it.
            if self.target_reached()
                || self.all_rounds_done()
                || u32::from(r.number) != u32::from(self.rounds_done) + 1
            {
                return Err("a match ended early after it was over".into());
            }
        }
        self.history.validate(&self.rules, self.seats)?;
        Ok(())
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
