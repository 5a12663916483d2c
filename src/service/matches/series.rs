//! A match's series as it is stored: its games in order, the seed every deal's hands are
//! made from, and what its games add up to (the score, and the margin a deal). How a
//! match is made and driven is in [`super`]; the series is stored in its match's record
//! ([`super::record`]), one record with one format byte.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bots::Level;
use crate::domain::{GameId, MatchId};
use crate::engine::Seed;
use crate::margin::{Margin, margin};

use crate::service::shared::now_ms;

/// One game of a series.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesGame {
    /// Its place in the series, from 0.
    pub(super) index: u32,
    pub(super) game_id: GameId,
    /// The challenger's seat (the opponent holds the other).
    pub(super) seat: u8,
    /// Once the game is over: the challenger's final points, the opponent's, and the
    /// challenger's result (1 a win, 0.5 a draw, 0 a loss, as a tenth to stay exact; or
    /// [`VOID`]).
    pub(super) result: Option<(i32, i32, u8)>,
    /// When it was named (epoch ms): a game gone long after that expired unfinished.
    pub(super) named_ms: u64,
}

/// The result of a game that expired unfinished (nobody moved for the idle ttl): it
/// counts in neither the score nor the margin.
pub const VOID: u8 = u8::MAX;

/// A match's games and how to make them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Series {
    pub(super) deals: u32,
    pub(super) duplicate: bool,
    pub(super) parallel: u8,
    /// What every deal's seed is made from: a secret, so nobody may know the deals,
    /// unless `seeded`.
    seed: [u8; 32],
    /// Made from the challenger's seed text: its deals are known (its games are
    /// prearranged, so unrated) and the same text plays the same deals again.
    pub(super) seeded: bool,
    /// A built-in level that plays the challenger's side: a match between two levels,
    /// which its challenger owns (reads and cancels) without playing.
    pub(super) stand_in: Option<Level>,
    /// Named before they are made, in order.
    pub(super) games: Vec<SeriesGame>,
    /// No game is started after a cancel; those in play go on.
    pub(super) canceled: bool,
    /// When it was last saved (epoch ms): a running match is saved at least hourly (see
    /// [`crate::service::matches`]), and each save keeps it (`CHALLENGE_KEPT`) however long it runs.
    pub(super) saved_ms: u64,
}

/// A series as a challenge of format 3 held it, before seeded matches, stand-ins and renewed
/// saves: read as an unseeded series that every player plays, saved long ago (its next
/// drive saves it again, which keeps it).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(super) struct SeriesV3 {
    pub(super) deals: u32,
    pub(super) duplicate: bool,
    pub(super) parallel: u8,
    pub(super) seed: [u8; 32],
    pub(super) games: Vec<SeriesGame>,
    pub(super) canceled: bool,
}

impl From<SeriesV3> for Series {
    fn from(v3: SeriesV3) -> Series {
        Series {
            deals: v3.deals,
            duplicate: v3.duplicate,
            parallel: v3.parallel,
            seed: v3.seed,
            seeded: false,
            stand_in: None,
            games: v3.games,
            canceled: v3.canceled,
            saved_ms: 0,
        }
    }
}

/// A match as its players and anyone else see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchStatus {
    Waiting,
    Running,
    Finished,
    Canceled,
}

impl MatchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Waiting => "waiting",
            MatchStatus::Running => "running",
            MatchStatus::Finished => "finished",
            MatchStatus::Canceled => "canceled",
        }
    }
}

/// The challenger's tally over the games that ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
    pub points_for: i64,
    pub points_against: i64,
}

impl SeriesGame {
    /// Its place in the series, from 0.
    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn game_id(&self) -> GameId {
        self.game_id
    }

    /// The challenger's seat.
    pub fn seat(&self) -> u8 {
        self.seat
    }

    /// Once over: the challenger's points, the opponent's, and the challenger's result.
    pub fn result(&self) -> Option<(i32, i32, u8)> {
        self.result
    }
}

impl Series {
    pub fn deals(&self) -> u32 {
        self.deals
    }

    pub fn duplicate(&self) -> bool {
        self.duplicate
    }

    pub fn parallel(&self) -> u8 {
        self.parallel
    }

    /// Made from the challenger's seed text: its deals are known.
    pub fn seeded(&self) -> bool {
        self.seeded
    }

    /// The level that plays the challenger's side, if any.
    pub fn stand_in(&self) -> Option<Level> {
        self.stand_in
    }

    /// Its games named so far, in order.
    pub fn games(&self) -> &[SeriesGame] {
        &self.games
    }

    /// Starts no game from now on (those in play go on).
    pub(super) fn cancel(&mut self) {
        self.canceled = true;
    }

    /// A series on one made from `seed` text, else on the server's `secret`.
    pub(crate) fn new(
        deals: u32,
        duplicate: bool,
        parallel: u8,
        seed: Option<&str>,
        secret: [u8; 32],
    ) -> Series {
        let bytes = match seed {
            Some(text) => Sha256::digest(text.as_bytes()).into(),
            None => secret,
        };
        Series {
            deals,
            duplicate,
            parallel,
            seed: bytes,
            seeded: seed.is_some(),
            stand_in: None,
            games: Vec::new(),
            canceled: false,
            saved_ms: now_ms(),
        }
    }

    /// Games it plays in all.
    pub fn total(&self) -> u32 {
        self.deals * if self.duplicate { 2 } else { 1 }
    }

    /// The id of game `index` of match `match_id`: the same whenever it is named, so a
    /// game refused and named again later keeps its id, and its deal's other game names it
    /// as its twin from the start.
    pub(crate) fn game_id(match_id: MatchId, index: u32) -> GameId {
        let mut hash = Sha256::new();
        hash.update(match_id.as_bytes());
        hash.update(index.to_le_bytes());
        let bytes: [u8; 16] = hash.finalize()[..16].try_into().expect("16 of 32 bytes");
        GameId::from(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    /// The other games of game `index`'s deal (its twin, in a duplicate match), by id.
    pub(crate) fn twins_of(&self, match_id: MatchId, index: u32) -> Vec<GameId> {
        (0..self.total())
            .filter(|&other| other != index && self.deal_of(other) == self.deal_of(index))
            .map(|other| match self.games.get(other as usize) {
                Some(game) => game.game_id,
                None => Series::game_id(match_id, other),
            })
            .collect()
    }

    /// The deal game `index` plays.
    pub fn deal_of(&self, index: u32) -> u32 {
        if self.duplicate { index / 2 } else { index }
    }

    /// The challenger's seat in game `index` (and its side: at 4 seats, teams play seats
    /// 0 and 2 against 1 and 3): the second game of a duplicate deal swaps the sides.
    pub(crate) fn challenger_seat(&self, index: u32) -> u8 {
        u8::from(self.duplicate && index % 2 == 1)
    }

    /// Deal `deal`'s seed: the same for both games of a duplicate deal.
    pub(crate) fn seed_of(&self, deal: u32) -> Seed {
        let mut hash = Sha256::new();
        hash.update(self.seed);
        hash.update(deal.to_le_bytes());
        Seed(hash.finalize().into())
    }

    /// The secret every deal was made from, in hex, once the match is over (finished, or
    /// canceled with none of its games in play): before, it would tell the deals of the
    /// games still to play, and of their twins.
    pub fn revealed_seed(&self, accepted: bool) -> Option<String> {
        let over = match self.status(accepted) {
            MatchStatus::Finished => true,
            MatchStatus::Canceled => self.in_play() == 0,
            MatchStatus::Waiting | MatchStatus::Running => false,
        };
        over.then(|| hex::encode(self.seed))
    }

    pub(crate) fn in_play(&self) -> usize {
        self.games.iter().filter(|g| g.result.is_none()).count()
    }

    pub fn status(&self, accepted: bool) -> MatchStatus {
        if !accepted {
            MatchStatus::Waiting
        } else if self.games.len() as u32 == self.total() && self.in_play() == 0 {
            MatchStatus::Finished
        } else if self.canceled {
            MatchStatus::Canceled
        } else {
            MatchStatus::Running
        }
    }

    pub fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for (points_for, points_against, result) in self.games.iter().filter_map(|g| g.result) {
            match result {
                VOID => continue,
                10 => tally.wins += 1,
                0 => tally.losses += 1,
                _ => tally.draws += 1,
            }
            tally.points_for += i64::from(points_for);
            tally.points_against += i64::from(points_against);
        }
        tally
    }

    /// The challenger's margin a deal over the deals whose games all ended: its points
    /// less the opponent's over the deal's games (the other way round when points are
    /// penalties).
    pub fn margin(&self, penalty: bool) -> Margin {
        let per_deal = if self.duplicate { 2 } else { 1 };
        let deals: Vec<f64> = self
            .games
            .chunks(per_deal)
            .filter(|deal| {
                deal.len() == per_deal
                    && deal
                        .iter()
                        .all(|g| g.result.is_some_and(|(_, _, r)| r != VOID))
            })
            .map(|deal| {
                let diff: i64 = deal
                    .iter()
                    .filter_map(|g| g.result)
                    .map(|(f, a, _)| i64::from(f) - i64::from(a))
                    .sum();
                if penalty { -diff as f64 } else { diff as f64 }
            })
            .collect();
        margin(&deals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_deal_is_played_twice_on_one_seed_with_the_sides_swapped() {
        let series = Series::new(3, true, 2, None, [1; 32]);
        assert_eq!(series.total(), 6);
        assert_eq!(series.deal_of(4), 2);
        assert_eq!(series.deal_of(5), 2);
        assert_eq!(series.challenger_seat(4), 0);
        assert_eq!(series.challenger_seat(5), 1);
        assert_eq!(
            series.seed_of(series.deal_of(4)),
            series.seed_of(series.deal_of(5))
        );
        assert_ne!(series.seed_of(0), series.seed_of(1));
        let single = Series::new(3, false, 1, None, [2; 32]);
        assert_eq!(single.total(), 3);
        assert_eq!(single.challenger_seat(1), 0);
    }

    #[test]
    fn a_seed_text_makes_the_same_deals_again_and_another_text_others() {
        let (a, again) = (
            Series::new(2, true, 1, Some("x"), [3; 32]),
            Series::new(2, true, 1, Some("x"), [4; 32]),
        );
        assert!(a.seeded);
        assert_eq!(a.seed_of(1), again.seed_of(1));
        assert_ne!(
            a.seed_of(1),
            Series::new(2, true, 1, Some("y"), [5; 32]).seed_of(1)
        );
        let secret = Series::new(2, true, 1, None, [6; 32]);
        assert!(!secret.seeded);
        assert_ne!(
            secret.seed_of(1),
            Series::new(2, true, 1, None, [7; 32]).seed_of(1)
        );
    }

    #[test]
    fn the_margin_counts_only_deals_whose_games_all_ended() {
        let mut series = Series::new(2, true, 2, None, [8; 32]);
        for (index, result) in [
            (0, Some((100, 40, 10))),
            (1, Some((30, 100, 0))),
            (2, Some((100, 0, 10))),
            (3, None),
        ] {
            series.games.push(SeriesGame {
                index,
                game_id: Series::game_id(MatchId::random(), index),
                seat: series.challenger_seat(index),
                result,
                named_ms: 0,
            });
        }
        let m = series.margin(false);
        assert_eq!(m.deals_done, 1);
        assert_eq!(m.per_deal_mean, 60.0 - 70.0);
        assert_eq!(series.margin(true).per_deal_mean, 10.0);
        let tally = series.tally();
        assert_eq!((tally.wins, tally.losses, tally.draws), (2, 1, 0));
        assert_eq!(series.status(true), MatchStatus::Running);
        // A game that expired unfinished counts nowhere: its deal leaves the margin.
        series.games[3].result = Some((0, 0, VOID));
        assert_eq!(series.margin(false).deals_done, 1);
        assert_eq!(series.tally().wins + series.tally().losses, 3);
        series.games[2].result = Some((0, 0, VOID));
        assert_eq!(series.status(true), MatchStatus::Finished);
    }
}
