//! What the other seats' plays tell of their hands: how likely a sampled world is.
//!
//! A seat that scored less than it could have probably did not hold the tile that would
//! have scored more. Every play a seat made while holding every tile it holds now (since
//! its last draw: [`Projection::held_since`]) is looked at on the layout as it was then:
//! a world that gives the seat a tile that would have scored more than the play made (and
//! more than the tiles it is known to have held then: the ones it laid from then on) is
//! charged the points that seat left on the table. The master keeps a world with a
//! probability falling with that charge ([`Inference::penalty`]). Only public facts are
//! read: who laid which tile, in what order, and when each seat drew.
//!
//! Where no play scores, a play can be judged by the pips it sheds instead
//! ([`Judge::Weight`]): a seat that laid a lighter tile than it could have probably did
//! not hold the heavier one, as a hand's pips are what a blocked round or a domino costs.

use domino_engine::{Layout, Projection, Tile, TileSet};

/// What makes one play better than another, as evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Judge {
    /// The points the play scores.
    Points,
    /// The pips of the tile laid: the weight shed.
    Weight,
}

/// One play of another seat, as evidence.
struct Play {
    seat: u8,
    /// The unseen tiles that would have scored more than the most the seat is known to
    /// have been able to score then (the play's own points, or more with a tile it laid
    /// later), and by how much.
    better: Vec<(Tile, u16)>,
}

/// The evidence of one view: the other seats' plays since their last draws.
pub(super) struct Inference {
    plays: Vec<Play>,
}

impl Inference {
    /// The evidence in `view` about every seat but `seat`'s, plays judged by `judge`.
    pub(super) fn of(view: &Projection, seat: u8, judge: Judge) -> Inference {
        let rules = &view.rules;
        let unseen = view.unseen();
        let mut plays = Vec::new();
        let mut layout = Layout::default();
        // Per seat, the tiles it has laid so far in the walk.
        let mut laid = [TileSet::EMPTY; 4];
        for (at, (end, tile)) in view.layout.placements().enumerate() {
            // A start tile is laid by no seat. A lead is no evidence: it may be forced, and
            // a free one taken as evidence too was measured no better (BENCHMARKS).
            let by = (0..view.seats).find(|&s| view.played[s as usize].contains(tile));
            if let Some(by) = by
                && end.is_some()
                && by != seat
                && at >= usize::from(view.held_since[by as usize])
            {
                let value = |t: Tile, e| match judge {
                    Judge::Points => layout.points_after(t, e, rules),
                    Judge::Weight => u16::from(t.weight()),
                };
                let best = |t: Tile| -> Option<u16> {
                    layout
                        .tips()
                        .open_ends()
                        .filter(|&(_, pips)| t.has(pips))
                        .map(|(e, _)| value(t, Some(e)))
                        .max()
                };
                let held = view.played[by as usize].without(laid[by as usize]);
                let made = value(tile, end);
                let floor = held.iter().filter_map(best).fold(made, u16::max);
                let better: Vec<(Tile, u16)> = unseen
                    .iter()
                    .filter_map(|t| best(t).filter(|&p| p > floor).map(|p| (t, p - floor)))
                    .collect();
                if !better.is_empty() {
                    plays.push(Play { seat: by, better });
                }
            }
            if let Some(by) = by {
                laid[by as usize].insert(tile);
            }
            match end {
                None => layout.lead_with(tile, rules),
                Some(e) => layout.place(tile, e, rules),
            }
        }
        Inference { plays }
    }

    /// Whether no world is less likely than another.
    pub(super) fn is_empty(&self) -> bool {
        self.plays.is_empty()
    }

    /// The points the seats of a world with `hands` would have left on the table, summed
    /// over their plays: 0 for a world in which every play was the best its seat could make.
    pub(super) fn penalty(&self, hands: &[TileSet; 4]) -> u32 {
        self.plays
            .iter()
            .map(|p| {
                let hand = hands[p.seat as usize];
                p.better
                    .iter()
                    .filter(|&&(t, _)| hand.contains(t))
                    .map(|&(_, gain)| u32::from(gain))
                    .max()
                    .unwrap_or(0)
            })
            .sum()
    }

    /// The seat of each play that is evidence.
    #[cfg(test)]
    fn seats(&self) -> Vec<u8> {
        self.plays.iter().map(|p| p.seat).collect()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::greedy;
    use crate::greedy::tests::tiles;
    use domino_engine::{End, Game, Move, Preset};

    /// `seat` lays `tile` on the first end it fits.
    fn lay(g: &mut Game, seat: u8, tile: &str) {
        let tile = tiles(tile)[0];
        let mv = g
            .legal_moves(seat)
            .into_iter()
            .find(|m| matches!(m, Move::Play { tile: t, .. } if *t == tile))
            .unwrap();
        g.play(seat, mv).unwrap();
    }

    /// An all_fives game where seat 0 leads 5-5, seat 1 lays 5-3 (no points) though it
    /// holds 5-0, and seat 0 lays 3-2 (no points); with the points 5-0 would have made.
    pub(crate) fn after_a_missed_score() -> (Game, u16) {
        let mut g = greedy::tests::game(
            Preset::AllFives,
            "5-5 3-2 1-1 6-6 4-4 0-0 2-2",
            "5-3 5-0 1-2 6-1 4-1 0-1 2-4",
        );
        lay(&mut g, 0, "5-5");
        let missed = g.points_of(tiles("5-0")[0], Some(End::Left));
        assert!(missed > 0);
        lay(&mut g, 1, "5-3");
        lay(&mut g, 0, "3-2");
        (g, missed)
    }

    #[test]
    fn a_world_giving_a_seat_a_tile_it_would_have_scored_with_is_charged_the_points() {
        let (g, missed) = after_a_missed_score();
        let inference = Inference::of(&g.project(Some(0)), 0, Judge::Points);
        assert_eq!(inference.seats(), vec![1]);
        let mut hands = [TileSet::EMPTY; 4];
        hands[1] = tiles("1-2 6-1 4-1 0-1 2-4 6-3").into_iter().collect();
        assert_eq!(inference.penalty(&hands), 0);
        hands[1].insert(tiles("5-0")[0]);
        assert_eq!(inference.penalty(&hands), u32::from(missed));
        // Seen from seat 1, only seat 0's plays are evidence.
        let theirs = Inference::of(&g.project(Some(1)), 1, Judge::Points);
        assert!(!theirs.is_empty());
        assert!(theirs.seats().iter().all(|&s| s == 0));
    }

    #[test]
    fn a_lighter_tile_laid_where_no_play_scores_charges_a_world_the_pips_of_a_heavier_one() {
        let mut g = greedy::tests::game(
            Preset::Block,
            "5-5 3-2 1-1 6-6 4-4 0-0 2-2",
            "5-0 6-5 1-2 6-1 4-1 0-1 2-4",
        );
        lay(&mut g, 0, "5-5");
        lay(&mut g, 1, "5-0");
        let view = g.project(Some(0));
        assert!(Inference::of(&view, 0, Judge::Points).is_empty());
        let inference = Inference::of(&view, 0, Judge::Weight);
        assert_eq!(inference.seats(), vec![1]);
        let mut hands = [TileSet::EMPTY; 4];
        hands[1] = tiles("1-2 6-1 4-1 0-1 2-4 6-3").into_iter().collect();
        assert_eq!(inference.penalty(&hands), 0);
        // 5-1 sheds one pip more than 5-0 did, 6-5 six more: the most is charged.
        hands[1].insert(tiles("5-1")[0]);
        assert_eq!(inference.penalty(&hands), 1);
        hands[1].insert(tiles("6-5")[0]);
        assert_eq!(inference.penalty(&hands), 6);
    }

    #[test]
    fn plays_before_a_seats_last_draw_are_not_evidence() {
        let (g, _) = after_a_missed_score();
        let mut view = g.project(Some(0));
        // As if seat 1 had drawn once all three tiles were down.
        view.held_since[1] = 3;
        assert!(Inference::of(&view, 0, Judge::Points).is_empty());
    }
}
