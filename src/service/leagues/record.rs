//! A league as it is stored: its settings, its entrants (never removed: one that leaves
//! is marked so, and its record stays in the table's history), the matches it has in play
//! (each named here before it is made) and the latest it counted. Everything the table
//! shows is kept per entrant as it is counted, once per match: a match is counted by the
//! same save that takes it out of `running`, so it cannot be counted twice.

use serde::{Deserialize, Serialize};

use crate::domain::{LeagueId, MatchId};
use crate::engine::{Preset, RulesPatch};
use crate::rating;
use crate::service::Error;
use crate::service::codec;
use crate::service::games::clock::ClockSettings;
use crate::service::matchmaking::invitation::Party;

pub use super::entrant::{Entrant, RatingPoint, VOLATILITY};

/// The record's format byte, then postcard: the league, then (since format 2) each
/// entrant's `rest_until_ms`, kept out of [`Entrant`]'s serialised fields so that format 1,
/// without them, reads with the same structs. Leagues last: a later format keeps a reader
/// for the earlier ones until a migration has rewritten every record.
const FORMAT: u8 = 2;
/// Before entrants rested after a match they stopped answering in.
const FORMAT_V1: u8 = 1;

/// Counted matches the record keeps, newest last.
pub const RECENT_KEPT: usize = 50;
/// Points of each entrant's rating history the record keeps, newest last.
pub const HISTORY_KEPT: usize = 100;
/// A match's deals, at most (each played twice).
pub const MAX_DEALS_PER_MATCH: u16 = 50;
/// Matches one entrant may play at once in a league, at most.
pub const MAX_CONCURRENT: u8 = 8;
/// How much a pair that met in the latest match counts against meeting again, in rating
/// points; it fades by a fifth with each match they did not play since.
const MET_PENALTY: f64 = 300.0;
/// The league's Glicko-2 system constant: the server's. With a match a rating period the
/// volatility hardly moves under any τ (`examples/league_sim.rs`: 0.2 and 0.5 alike).
pub const TAU: f64 = rating::TAU;

/// A match in play, named before it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Running {
    pub(super) match_id: MatchId,
    /// The entrants (by index): `a` is the match's challenger.
    pub(super) a: u16,
    pub(super) b: u16,
    pub(super) started_ms: u64,
}

/// A match counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub(super) match_id: MatchId,
    pub(super) a: u16,
    pub(super) b: u16,
    /// `a`'s score (1 a win, 0.5 a draw, 0 a loss on the match's points), and its margin a
    /// deal; `None` for a match that was not played out (it moved no rating).
    pub(super) result: Option<(f64, f64)>,
    pub(super) ended_ms: u64,
}

/// A league, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct League {
    pub(super) id: LeagueId,
    pub(super) name: String,
    pub(super) creator: Party,
    pub(super) created_ms: u64,
    pub(super) preset: Preset,
    #[serde(with = "crate::service::matchmaking::invitation::patch_as_json")]
    pub(super) overrides: RulesPatch,
    pub(super) clock: Option<ClockSettings>,
    pub(super) deals_per_match: u16,
    pub(super) max_concurrent: u8,
    pub(super) entrants: Vec<Entrant>,
    pub(super) running: Vec<Running>,
    pub(super) recent: Vec<Counted>,
    /// Matches counted since it was made.
    pub(super) counted: u64,
}

impl Running {
    pub fn match_id(&self) -> MatchId {
        self.match_id
    }

    /// The entrants (by index): `a` is the match's challenger.
    pub fn a(&self) -> u16 {
        self.a
    }

    pub fn b(&self) -> u16 {
        self.b
    }

    pub fn started_ms(&self) -> u64 {
        self.started_ms
    }
}

impl Counted {
    pub fn match_id(&self) -> MatchId {
        self.match_id
    }

    pub fn a(&self) -> u16 {
        self.a
    }

    pub fn b(&self) -> u16 {
        self.b
    }

    /// `a`'s score and its margin a deal; `None` for a match not played out.
    pub fn result(&self) -> Option<(f64, f64)> {
        self.result
    }

    pub fn ended_ms(&self) -> u64 {
        self.ended_ms
    }
}

impl League {
    /// A new league: its rules (`game`: preset, overrides, clock), its sizes (deals a
    /// match, matches an entrant plays at once) and its first entrants, nothing played.
    pub fn new(
        id: LeagueId,
        name: String,
        creator: Party,
        created_ms: u64,
        (preset, overrides, clock): (Preset, RulesPatch, Option<ClockSettings>),
        (deals_per_match, max_concurrent): (u16, u8),
        entrants: Vec<Entrant>,
    ) -> League {
        League {
            id,
            name,
            creator,
            created_ms,
            preset,
            overrides,
            clock,
            deals_per_match,
            max_concurrent,
            entrants,
            running: Vec::new(),
            recent: Vec::new(),
            counted: 0,
        }
    }

    pub fn id(&self) -> LeagueId {
        self.id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn creator(&self) -> &Party {
        &self.creator
    }

    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn preset(&self) -> Preset {
        self.preset
    }

    pub fn overrides(&self) -> &RulesPatch {
        &self.overrides
    }

    pub fn clock(&self) -> Option<&ClockSettings> {
        self.clock.as_ref()
    }

    pub fn deals_per_match(&self) -> u16 {
        self.deals_per_match
    }

    pub fn max_concurrent(&self) -> u8 {
        self.max_concurrent
    }

    pub fn entrants(&self) -> &[Entrant] {
        &self.entrants
    }

    pub fn running(&self) -> &[Running] {
        &self.running
    }

    pub fn recent(&self) -> &[Counted] {
        &self.recent
    }

    pub fn counted(&self) -> u64 {
        self.counted
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let rests: Vec<u64> = self.entrants.iter().map(|e| e.rest_until_ms).collect();
        codec::Encoder::new(FORMAT, self).then(&rests).finish()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<League, Error> {
        match codec::open("league", bytes)? {
            (FORMAT, mut body) => {
                let mut league: League = body.next()?;
                let rests: Vec<u64> = body.last()?;
                for (e, rest) in league.entrants.iter_mut().zip(rests) {
                    e.rest_until_ms = rest;
                }
                Ok(league)
            }
            (FORMAT_V1, body) => body.last(),
            (other, body) => Err(body.unknown(other)),
        }
    }

    /// Whether entrant `i` is held back at `now` after a match it stopped answering in.
    pub fn resting(&self, i: usize, now: u64) -> bool {
        self.entrants[i].rest_until_ms > now
    }

    /// Entrant `player`'s index, if it entered (and did not leave).
    pub fn entrant_of(&self, player: &str) -> Option<usize> {
        self.entrants.iter().position(|e| e.id == player && !e.left)
    }

    /// Matches entrant `i` is playing now.
    pub fn busy(&self, i: usize) -> usize {
        self.running
            .iter()
            .filter(|r| usize::from(r.a) == i || usize::from(r.b) == i)
            .count()
    }

    /// How many matches ago `i` and `j` last met among those counted (0: the latest).
    fn met_ago(&self, i: usize, j: usize) -> Option<usize> {
        let pair = |c: &Counted| {
            let (a, b) = (usize::from(c.a), usize::from(c.b));
            (a == i && b == j) || (a == j && b == i)
        };
        self.recent.iter().rev().position(pair)
    }

    /// The pairs to start now: among the entrants `available` (by index), those below
    /// their matches at once and `per_hour`, each in one new pair at most, at least one
    /// side of each a player (levels among themselves would keep the server's bots
    /// thinking around the clock for a scale the players' matches measure anyway), two
    /// who play each other now never again. The entrant that has waited longest chooses
    /// first, the one nearest its rating, less the more recently they met. The first of
    /// each pair is a player: the match's challenger.
    pub fn pairings(&self, available: &[bool], per_hour: usize, now: u64) -> Vec<(u16, u16)> {
        let free = |i: usize| {
            let e = &self.entrants[i];
            !e.left
                && available.get(i).copied().unwrap_or(false)
                && self.busy(i) < usize::from(self.max_concurrent)
                && e.started_within_hour(now) < per_hour
        };
        let mut order: Vec<usize> = (0..self.entrants.len()).filter(|&i| free(i)).collect();
        // Who waited longest first (the oldest latest start, a newcomer before all), a
        // player before a level: the levels are always there, the players choose.
        order.sort_by_key(|&i| {
            let e = &self.entrants[i];
            (e.started.last().copied().unwrap_or(0), e.level.is_some(), i)
        });
        let mut taken = vec![false; self.entrants.len()];
        let mut pairs = Vec::new();
        for &i in &order {
            if taken[i] {
                continue;
            }
            let cost = |j: usize| {
                let gap = (self.entrants[i].rating.rating - self.entrants[j].rating.rating).abs();
                let met = self
                    .met_ago(i, j)
                    .map_or(0.0, |ago| MET_PENALTY * 0.8f64.powi(ago as i32));
                gap + met
            };
            let playing = |j: usize| {
                self.running.iter().any(|r| {
                    let (a, b) = (usize::from(r.a), usize::from(r.b));
                    (a == i && b == j) || (a == j && b == i)
                })
            };
            let both_levels =
                |j: usize| self.entrants[i].level.is_some() && self.entrants[j].level.is_some();
            let best = order
                .iter()
                .copied()
                .filter(|&j| j != i && !taken[j] && !playing(j) && !both_levels(j))
                .min_by(|&x, &y| cost(x).total_cmp(&cost(y)).then(x.cmp(&y)));
            if let Some(j) = best {
                taken[i] = true;
                taken[j] = true;
                let (a, b) = if self.entrants[i].level.is_none() {
                    (i, j)
                } else {
                    (j, i)
                };
                pairs.push((a as u16, b as u16));
            }
        }
        pairs
    }

    /// Names the match `match_id` between entrants `a` and `b` as in play from `now`.
    pub fn start(&mut self, match_id: MatchId, (a, b): (u16, u16), now: u64) {
        for i in [a, b] {
            let started = &mut self.entrants[usize::from(i)].started;
            started.retain(|&at| at + 3_600_000 > now);
            started.push(now);
        }
        self.running.push(Running {
            match_id,
            a,
            b,
            started_ms: now,
        });
    }

    /// Counts running match `match_id` once, and takes it out of play: `outcome` is `a`'s
    /// points less `b`'s over the match and `a`'s margin a deal, or `None` for a match
    /// not played out. Both ratings move from where they stood before it (Glicko-2, the
    /// match one game). Returns false, changing nothing, if it is not in play.
    pub fn count(&mut self, match_id: MatchId, outcome: Option<(i64, f64)>, now: u64) -> bool {
        self.count_with(match_id, outcome, now, TAU)
    }

    /// [`League::count`] under the system constant `tau` (a simulation's choice).
    pub fn count_with(
        &mut self,
        match_id: MatchId,
        outcome: Option<(i64, f64)>,
        now: u64,
        tau: f64,
    ) -> bool {
        let Some(at) = self.running.iter().position(|r| r.match_id == match_id) else {
            return false;
        };
        let Running { a, b, .. } = self.running.remove(at);
        let result = outcome.map(|(diff, margin)| {
            let score = match diff.signum() {
                1 => 1.0,
                0 => 0.5,
                _ => 0.0,
            };
            (score, margin)
        });
        if let Some((score, margin)) = result {
            let (ia, ib) = (usize::from(a), usize::from(b));
            let (ra, rb) = (self.entrants[ia].rating, self.entrants[ib].rating);
            for (i, rating, score, margin) in [
                (
                    ia,
                    rating::update_with(ra, &[(rb, score)], tau),
                    score,
                    margin,
                ),
                (
                    ib,
                    rating::update_with(rb, &[(ra, 1.0 - score)], tau),
                    1.0 - score,
                    -margin,
                ),
            ] {
                let e = &mut self.entrants[i];
                e.rating = rating;
                e.matches += 1;
                match score {
                    s if s > 0.75 => e.wins += 1,
                    s if s < 0.25 => e.losses += 1,
                    _ => e.draws += 1,
                }
                e.margin_sum += margin;
                e.margin_squares += margin * margin;
                e.history.push(RatingPoint {
                    at_ms: now,
                    rating: rating.rating,
                    deviation: rating.deviation,
                });
                if e.history.len() > HISTORY_KEPT {
                    e.history.remove(0);
                }
            }
        }
        self.recent.push(Counted {
            match_id,
            a,
            b,
            result,
            ended_ms: now,
        });
        if self.recent.len() > RECENT_KEPT {
            self.recent.remove(0);
        }
        self.counted += 1;
        true
    }

    /// The entrants' indexes by rank: by rating, highest first (a left entrant last).
    pub fn ranked(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.entrants.len()).collect();
        order.sort_by(|&x, &y| {
            let (ex, ey) = (&self.entrants[x], &self.entrants[y]);
            ex.left
                .cmp(&ey.left)
                .then(ey.rating.rating.total_cmp(&ex.rating.rating))
                .then(x.cmp(&y))
        });
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::Level;
    use crate::rating::Rating;

    fn league(levels: &[Level], players: usize) -> League {
        let mut entrants: Vec<Entrant> = levels.iter().map(|&l| Entrant::level(l, 0)).collect();
        for p in 0..players {
            let party = Party {
                id: format!("p{p}"),
                name: format!("bot{p}"),
            };
            entrants.push(Entrant::player(party, true, 0));
        }
        League {
            id: LeagueId::random(),
            name: "test".into(),
            creator: Party {
                id: "p0".into(),
                name: "bot0".into(),
            },
            created_ms: 0,
            preset: Preset::AllFives,
            overrides: RulesPatch::default(),
            clock: None,
            deals_per_match: 2,
            max_concurrent: 1,
            entrants,
            running: Vec::new(),
            recent: Vec::new(),
            counted: 0,
        }
    }

    #[test]
    fn levels_are_paired_only_with_players_and_a_player_is_the_challenger() {
        let l = league(&[Level::Random, Level::Greedy, Level::Expert], 1);
        let pairs = l.pairings(&[true; 4], 10, 1_000);
        assert_eq!(pairs.len(), 1, "one player: one pair");
        let (a, b) = pairs[0];
        assert_eq!(a, 3, "the player challenges");
        // Greedy sits at 1500, as a newcomer does: the nearest.
        assert_eq!(l.entrants[usize::from(b)].level, Some(Level::Greedy));
    }

    #[test]
    fn the_unavailable_the_busy_and_those_over_their_hour_are_not_paired() {
        let mut l = league(&[], 4);
        assert_eq!(l.pairings(&[true, false, false, false], 10, 0), []);
        l.start(MatchId::random(), (0, 1), 0);
        let pairs = l.pairings(&[true; 4], 10, 10);
        assert_eq!(pairs, [(2, 3)], "0 and 1 are playing (one at once)");
        l.max_concurrent = 2;
        let pairs = l.pairings(&[true; 4], 1, 10);
        assert_eq!(pairs, [(2, 3)], "0 and 1 made their one match this hour");
        assert_eq!(l.pairings(&[true; 4], 1, 3_600_001).len(), 2, "an hour on");
    }

    #[test]
    fn a_pair_that_just_met_gives_way_to_one_that_did_not() {
        let mut l = league(&[], 3);
        let id = MatchId::random();
        l.start(id, (0, 1), 0);
        assert!(l.count(id, Some((0, 0.0)), 1));
        // 0 waited longest (a tie broken by index) and all are level: 0 meets 2, not 1.
        assert_eq!(l.pairings(&[true; 3], 10, 2), [(0, 2)]);
    }

    #[test]
    fn a_match_is_counted_once_moving_both_ratings_from_where_they_stood() {
        let mut l = league(&[Level::Greedy], 1);
        let id = MatchId::random();
        l.start(id, (1, 0), 5);
        let before = (l.entrants[0].rating, l.entrants[1].rating);
        assert!(l.count(id, Some((40, 10.0)), 9));
        assert!(!l.count(id, Some((40, 10.0)), 10), "counted once");
        let (greedy, player) = (&l.entrants[0], &l.entrants[1]);
        assert!(player.rating.rating > before.1.rating);
        assert!(greedy.rating.rating < before.0.rating);
        assert_eq!((player.wins, greedy.losses, l.counted), (1, 1, 1));
        assert_eq!(player.margin(), (10.0, None));
        assert_eq!(greedy.margin(), (-10.0, None));
        assert!(l.running.is_empty());
        assert_eq!(l.recent[0].result, Some((1.0, 10.0)));
        let void = MatchId::random();
        l.start(void, (1, 0), 20);
        assert!(l.count(void, None, 21));
        assert_eq!(l.entrants[1].matches, 1, "a void match moves nothing");
    }

    #[test]
    fn the_margins_interval_narrows_around_its_mean() {
        let mut e = Entrant::player(
            Party {
                id: "p".into(),
                name: "p".into(),
            },
            true,
            0,
        );
        for m in [10.0, 14.0, 6.0, 10.0] {
            e.wins += 1;
            e.margin_sum += m;
            e.margin_squares += m * m;
        }
        let (mean, ci) = e.margin();
        let (low, high) = ci.unwrap();
        assert_eq!(mean, 10.0);
        assert!(
            low < 10.0 && high > 10.0 && high - low < 10.0,
            "{low} {high}"
        );
    }

    #[test]
    fn a_league_reads_back_as_it_was_saved() {
        let mut l = league(&[Level::Random], 2);
        l.start(MatchId::random(), (1, 0), 3);
        l.entrants[2].rest_until_ms = 99;
        assert_eq!(League::decode(&l.encode()).unwrap(), l);
    }

    #[test]
    fn a_league_of_format_1_reads_with_nobody_resting_and_its_ratings_kept() {
        let mut l = league(&[Level::Random], 1);
        // Entered before leagues had a volatility of their own.
        l.entrants[1].rating = Rating::default();
        let v1 = codec::encode(FORMAT_V1, &l);
        let read = League::decode(&v1).unwrap();
        assert_eq!(read, l);
        assert_eq!(read.entrants[1].rating.volatility, 0.06);
        assert!(read.entrants.iter().all(|e| e.rest_until_ms == 0));
    }

    #[test]
    fn an_entrant_rests_until_its_time_and_no_longer() {
        let mut l = league(&[], 2);
        l.entrants[0].rest_until_ms = 1_000;
        assert!(l.resting(0, 999) && !l.resting(0, 1_000) && !l.resting(1, 0));
    }
}
