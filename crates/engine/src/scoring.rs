//! Round awards: who wins a round and what every side scores for it.
//!
//! Decisions docs/rules.md leaves to the engine, as a careful referee would take them:
//! - With more than two sides, `difference` is all opposing hands' value minus the
//!   winner's own, as docs/rules.md words it (never below zero).
//! - A `split` tie shares the award among the tied sides, rounded down; "opposing" hands
//!   are then those of the sides not in the tie, and the boneyard is shared too.
//! - `lowest_tile` compares the lightest single tile of each tied side by its value under
//!   `double_value`/`double_blank_value`, then by the tile order of docs/rules.md; the tie can
//!   never persist since tiles are unique. Hands that are empty cannot tie (a domino is not
//!   a blocked round).
//! - Under fives every award is rounded to the nearest 5 separately (after a split).
//! - A stuck round (`when_stuck = end_round`) is scored as a blocked one.
//! - Under penalty scoring every side adds its hand, the sides that did not go out add 5
//!   more after a domino, and the side that went out is the round's winner.

use super::event::EndReason;
use super::rules::{BlockedAward, BlockedTie, Rules, Scoring};
use super::tile::{Tile, TileSet};

/// Rounds to the nearest multiple of 5 (12 → 10, 13 → 15).
pub fn round_to_five(points: i32) -> i32 {
    (points + 2).div_euclid(5) * 5
}

/// The round's winning side (if any) and each side's award.
pub(crate) fn round_awards(
    rules: &Rules,
    seats: u8,
    hands: &[TileSet; 4],
    boneyard: TileSet,
    reason: EndReason,
    went_out: Option<u8>,
) -> (Option<u8>, [i32; 4]) {
    let sides = rules.sides(seats) as usize;
    let mut side_hand = [TileSet::EMPTY; 4];
    for seat in 0..seats {
        let side = rules.side_of(seat) as usize;
        side_hand[side] = side_hand[side].union(hands[seat as usize]);
    }
    let value = |side: usize| rules.hand_value(side_hand[side]) as i32;
    let mut awards = [0i32; 4];

    if rules.scoring == Scoring::Penalty {
        let out = went_out.map(|s| rules.side_of(s) as usize);
        for (side, award) in awards.iter_mut().enumerate().take(sides) {
            *award = value(side) + if out.is_some_and(|o| o != side) { 5 } else { 0 };
        }
        return (out.map(|s| s as u8), awards);
    }

    let bonus = if rules.boneyard_to_winner {
        rules.hand_value(boneyard) as i32
    } else {
        0
    };
    let finish = |points: i32| {
        let p = points.max(0);
        if rules.scoring == Scoring::Fives {
            round_to_five(p)
        } else {
            p
        }
    };
    let opposing = |winners: &[usize]| {
        (0..sides)
            .filter(|s| !winners.contains(s))
            .map(value)
            .sum::<i32>()
    };

    if reason == EndReason::Domino {
        let w = rules.side_of(went_out.expect("a domino has a seat that went out")) as usize;
        awards[w] = finish(opposing(&[w]) + bonus);
        return (Some(w as u8), awards);
    }

    let lightest = (0..sides).map(value).min().unwrap_or(0);
    let tied: Vec<usize> = (0..sides).filter(|&s| value(s) == lightest).collect();
    let own = |w: usize| {
        if rules.blocked_award == BlockedAward::Difference {
            value(w)
        } else {
            0
        }
    };
    if let [w] = tied[..] {
        awards[w] = finish(opposing(&[w]) - own(w) + bonus);
        return (Some(w as u8), awards);
    }
    match rules.blocked_tie {
        BlockedTie::None => (None, awards),
        BlockedTie::Split => {
            let share = (opposing(&tied) - own(tied[0]) + bonus).max(0) / tied.len() as i32;
            for &s in &tied {
                awards[s] = finish(share);
            }
            (None, awards)
        }
        BlockedTie::LowestTile => {
            let key = |t: Tile| (rules.tile_value(t), t.heaviness());
            let lightest_tile = |s: usize| side_hand[s].iter().map(key).min();
            let w = *tied
                .iter()
                .min_by_key(|&&s| lightest_tile(s))
                .expect("a tie has two sides");
            awards[w] = finish(opposing(&[w]) - own(w) + bonus);
            (Some(w as u8), awards)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;

    fn hand(tiles: &[&str]) -> TileSet {
        tiles.iter().map(|t| t.parse::<Tile>().unwrap()).collect()
    }

    #[test]
    fn rounding_goes_to_the_nearest_five() {
        assert_eq!(round_to_five(12), 10);
        assert_eq!(round_to_five(13), 15);
        assert_eq!(round_to_five(0), 0);
        assert_eq!(round_to_five(2), 0);
        assert_eq!(round_to_five(3), 5);
    }

    #[test]
    fn classic_blocked_round_scores_the_difference() {
        let rules = Preset::Classic.rules();
        let hands = [
            hand(&["1-2", "0-3"]),
            hand(&["6-6"]),
            TileSet::EMPTY,
            TileSet::EMPTY,
        ];
        let (w, awards) = round_awards(&rules, 2, &hands, TileSet::EMPTY, EndReason::Blocked, None);
        assert_eq!((w, awards[0], awards[1]), (Some(0), 12 - 6, 0));
    }

    #[test]
    fn classic_tie_goes_to_the_holder_of_the_lowest_tile() {
        let rules = Preset::Classic.rules();
        // both hands weigh 6; seat 1 holds 0-1, lighter than anything of seat 0
        let hands = [
            hand(&["1-2", "0-3"]),
            hand(&["0-1", "2-3"]),
            TileSet::EMPTY,
            TileSet::EMPTY,
        ];
        let (w, awards) = round_awards(&rules, 2, &hands, TileSet::EMPTY, EndReason::Blocked, None);
        assert_eq!(w, Some(1));
        assert_eq!(awards[1], 0, "difference of equal hands");
    }

    #[test]
    fn three_seat_split_tie_shares_the_others_rounded_down() {
        let rules = Preset::Block.rules();
        let hands = [
            hand(&["2-3"]),
            hand(&["1-4"]),
            hand(&["6-5", "0-0"]),
            TileSet::EMPTY,
        ];
        let (w, awards) = round_awards(&rules, 3, &hands, TileSet::EMPTY, EndReason::Blocked, None);
        assert_eq!(w, None);
        assert_eq!(&awards[..3], &[5, 5, 0], "11 split two ways, rounded down");
    }

    #[test]
    fn teams_add_partners_hands() {
        let rules = crate::Rules {
            teams: true,
            ..Preset::Block.rules()
        };
        let hands = [
            hand(&["0-1"]),
            hand(&["0-2"]),
            hand(&["0-3"]),
            hand(&["6-6"]),
        ];
        // team 0: 1 + 3 = 4, team 1: 2 + 12 = 14
        let (w, awards) = round_awards(&rules, 4, &hands, TileSet::EMPTY, EndReason::Blocked, None);
        assert_eq!((w, awards[0], awards[1]), (Some(0), 14, 0));
        let (w, awards) = round_awards(
            &rules,
            4,
            &hands,
            TileSet::EMPTY,
            EndReason::Domino,
            Some(1),
        );
        assert_eq!((w, awards[1]), (Some(1), 4));
    }

    #[test]
    fn penalty_adds_every_hand_and_five_for_being_dominoed() {
        let rules = Preset::Penalty.rules();
        let hands = [
            TileSet::EMPTY,
            hand(&["3-4", "1-1"]),
            TileSet::EMPTY,
            TileSet::EMPTY,
        ];
        let (w, awards) = round_awards(
            &rules,
            2,
            &hands,
            TileSet::EMPTY,
            EndReason::Domino,
            Some(0),
        );
        assert_eq!((w, awards[0], awards[1]), (Some(0), 0, 9 + 5));
        let hands = [
            hand(&["0-1"]),
            hand(&["3-4"]),
            TileSet::EMPTY,
            TileSet::EMPTY,
        ];
        let (w, awards) = round_awards(&rules, 2, &hands, TileSet::EMPTY, EndReason::Stuck, None);
        assert_eq!((w, awards[0], awards[1]), (None, 1, 7));
    }

    #[test]
    fn fives_awards_round_and_the_boneyard_goes_to_the_winner() {
        let rules = crate::Rules {
            boneyard_to_winner: true,
            ..Preset::AllFives.rules()
        };
        let hands = [
            TileSet::EMPTY,
            hand(&["3-4", "1-1"]),
            TileSet::EMPTY,
            TileSet::EMPTY,
        ];
        let (_, awards) = round_awards(
            &rules,
            2,
            &hands,
            hand(&["0-4"]),
            EndReason::Domino,
            Some(0),
        );
        assert_eq!(awards[0], 15, "9 + 4 = 13 rounds to 15");
    }
}
