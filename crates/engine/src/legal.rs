//! Move generation: the moves a seat may make, and checking one it asks for.
//!
//! Legality has one source: [`Game::check`] accepts exactly the moves [`Game::legal_moves`]
//! lists (plus two shorthands: a play without `end` when only one end fits, and `claim: 0`
//! for a play that scores nothing), and [`Game::play`] changes nothing unless `check`
//! accepted. The property tests hold the two to each other.
//!
//! The table actions ([`Move::Resign`], [`Move::TimedOut`], [`Move::Abandon`],
//! [`Move::Forfeit`]) are the one exception: they are about a seat, not the tiles, so no
//! client or bot is ever offered them, and `check` accepts them on their own conditions
//! (see [`Move`] and [`super::table`]).

use super::error::MoveError;
use super::game::Game;
use super::layout::End;
use super::moves::Move;
use super::rules::DrawRule;
use super::tile::{Tile, TileSet};

impl Game {
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
    pub(super) fn drew_its_one_tile(&self) -> bool {
        self.rules.draw == DrawRule::One && self.round.drew
    }

    /// The boneyard still gives tiles under these rules.
    pub(super) fn boneyard_open(&self) -> bool {
        self.rules.draw != DrawRule::Block
            && self.round.boneyard.len() > self.rules.boneyard_reserve as usize
    }

    pub(super) fn playable(&self, seat: u8) -> TileSet {
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
        if !self.in_play() || seat >= self.seats {
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
        let playable = self.plays(seat, |tile, end| self.push_play(out, tile, end));
        if r.layout.is_empty() {
            return;
        }
        let can_play = !playable.is_empty();
        if self.can_draw_now(seat, can_play).is_ok() {
            out.push(Move::Draw);
        } else if !can_play {
            out.push(Move::Pass);
        }
    }

    /// The most points a play of `seat` would score now, `None` when it has no play: what
    /// [`Game::legal_moves`]' plays say, without listing them (the searching bots ask it
    /// of the reply to every play they try).
    pub fn best_play_points(&self, seat: u8) -> Option<u16> {
        if !self.in_play() || seat >= self.seats || seat != self.round.turn {
            return None;
        }
        let mut best = None;
        self.plays(seat, |tile, end| {
            best = best.max(Some(self.points_of(tile, end)));
        });
        best
    }

    /// Calls `f` with every play of `seat` (the seat to move), tile and end (`None` for a
    /// lead), in [`Game::legal_moves`]' order; answers the tiles it may play.
    fn plays(&self, seat: u8, mut f: impl FnMut(Tile, Option<End>)) -> TileSet {
        let playable = self.playable(seat);
        let layout = &self.round.layout;
        if layout.is_empty() {
            for tile in playable.iter() {
                f(tile, None);
            }
        } else {
            for (end, value) in layout.tips().open_ends() {
                for tile in playable.intersect(TileSet::with_pip(value)).iter() {
                    f(tile, Some(end));
                }
            }
        }
        playable
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
        if !self.in_play() {
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
                if tile.hi() > self.rules.max_pip {
                    return Err(MoveError::NotInSet {
                        tile,
                        max_pip: self.rules.max_pip,
                    });
                }
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
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::{Preset, Seed};

    #[test]
    fn the_best_play_points_are_the_most_any_listed_play_scores() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut compared = 0;
        for preset in [Preset::AllFives, Preset::Muggins, Preset::Block] {
            for seats in 2..=4 {
                let seed = Seed::from_text(&format!("{preset:?} {seats}"));
                let Ok(mut game) = Game::new(preset.rules(), seats, seed, None) else {
                    continue;
                };
                while let Some(turn) = game.turn() {
                    for seat in 0..seats {
                        let listed = game
                            .legal_moves(seat)
                            .iter()
                            .filter_map(|&mv| match mv {
                                Move::Play { tile, end, .. } => Some(game.points_of(tile, end)),
                                _ => None,
                            })
                            .max();
                        assert_eq!(game.best_play_points(seat), listed, "{preset:?}");
                        compared += usize::from(listed.is_some_and(|p| p > 0));
                    }
                    let moves = game.legal_moves(turn);
                    let mv = moves[rng.random_range(0..moves.len())];
                    game.play(turn, mv).unwrap();
                }
            }
        }
        assert!(compared > 50, "only {compared} scoring positions");
    }
}
