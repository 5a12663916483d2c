//! A game's rounds: each one's deal from the seed, who leads it, and its end and scoring.
//! Apart from [`super::round`] (the round's own state), which the game holds and which
//! therefore must not depend on it.
//!
//! Each round draws from its own `(seed, round)` stream ([`super::deal::round_rng`]), so
//! a round's deal can be told again without replaying the rounds before it, except for
//! who leads it under `next_leader = winner`, which turns on how the last one ended.

use rand::RngExt;

use super::deal::{Deal, draw_lots, round_rng, shuffle_into};
use super::event::{EndReason, Event, RoundResult};
use super::game::Game;
use super::round::Round;
use super::rules::{NextLeader, Opening};
use super::scoring;
use super::tile::{Tile, TileSet};

impl Game {
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
    pub(super) fn deal_into(
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

    pub(super) fn end_round(
        &mut self,
        reason: EndReason,
        went_out: Option<u8>,
        events: &mut Vec<Event>,
    ) {
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
        if !self.end_match_if_over(events) && !self.sampled {
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

    pub(super) fn start_round(&mut self, number: u16, events: &mut Vec<Event>) {
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
