//! A league as it is stored: its settings, its entrants (never removed: one that leaves
//! is marked so, and its record stays in the table's history), the matches it has in play
//! (each named here before it is made) and the latest it counted. Everything the table
//! shows is kept per entrant as it is counted, once per match: a match is counted by the
//! same save that takes it out of `running`, so it cannot be counted twice.

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::domain::{LeagueId, MatchId};
use crate::engine::{Preset, RulesPatch};
use crate::rating::{self, Rating};
use crate::service::Error;
use crate::service::codec;
use crate::service::games::clock::ClockSettings;
use crate::service::matchmaking::invitation::Party;
use crate::service::ratings::reference_rating;

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
/// An entrant's starting volatility, a sixth of a person's: a bot is a fixed program whose
/// skill does not drift between matches, and the deviation's floor (about 26 points, not
/// 61) lets ratings 100 points apart be told apart (docs/leagues.md, "Ratings").
pub const VOLATILITY: f64 = 0.01;
/// The league's Glicko-2 system constant: the server's. With a match a rating period the
/// volatility hardly moves under any τ (`examples/league_sim.rs`: 0.2 and 0.5 alike).
pub const TAU: f64 = rating::TAU;

/// One entrant's row, as counted so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entrant {
    /// A player's id, or a built-in level's name.
    pub id: String,
    pub name: String,
    pub bot: bool,
    pub level: Option<Level>,
    pub rating: Rating,
    pub matches: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Over its matches: the sum of each one's margin a deal, and of their squares (its
    /// mean and interval follow: [`Entrant::margin`]).
    pub margin_sum: f64,
    pub margin_squares: f64,
    /// Its rating after each match counted, newest last.
    pub history: Vec<RatingPoint>,
    /// It left: never paired again; its row stays.
    pub left: bool,
    /// Whether it could be paired when the league was last driven (a level always; a
    /// player with an active webhook or an open stream).
    pub available: bool,
    /// When its latest matches were made (the last hour's, for the cap per hour).
    pub started: Vec<u64>,
    pub entered_ms: u64,
    /// Not paired before this (epoch ms; 0: never held back): it stopped answering in a
    /// match (lost a game on time, or a bot took its seat). Stored after the league.
    #[serde(skip)]
    pub rest_until_ms: u64,
}

/// An entrant's rating right after a match counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatingPoint {
    pub at_ms: u64,
    pub rating: f64,
    pub deviation: f64,
}

/// A match in play, named before it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Running {
    pub match_id: MatchId,
    /// The entrants (by index): `a` is the match's challenger.
    pub a: u16,
    pub b: u16,
    pub started_ms: u64,
}

/// A match counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counted {
    pub match_id: MatchId,
    pub a: u16,
    pub b: u16,
    /// `a`'s score (1 a win, 0.5 a draw, 0 a loss on the match's points), and its margin a
    /// deal; `None` for a match that was not played out (it moved no rating).
    pub result: Option<(f64, f64)>,
    pub ended_ms: u64,
}

/// A league, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct League {
    pub id: LeagueId,
    pub name: String,
    pub creator: Party,
    pub created_ms: u64,
    pub preset: Preset,
    #[serde(with = "crate::service::matchmaking::invitation::patch_as_json")]
    pub overrides: RulesPatch,
    pub clock: Option<ClockSettings>,
    pub deals_per_match: u16,
    pub max_concurrent: u8,
    pub entrants: Vec<Entrant>,
    pub running: Vec<Running>,
    pub recent: Vec<Counted>,
    /// Matches counted since it was made.
    pub counted: u64,
}

impl Entrant {
    /// A built-in level, starting from its reference rating (the scale's anchor).
    pub fn level(level: Level, now: u64) -> Entrant {
        Entrant {
            rating: Rating {
                volatility: VOLATILITY,
                ..reference_rating(level)
            },
            level: Some(level),
            bot: true,
            available: true,
            ..Entrant::player(
                Party {
                    id: level.as_str().to_owned(),
                    name: level.as_str().to_owned(),
                },
                true,
                now,
            )
        }
    }

    /// A player, starting as a newcomer does.
    pub fn player(party: Party, bot: bool, now: u64) -> Entrant {
        Entrant {
            id: party.id,
            name: party.name,
            bot,
            level: None,
            rating: Rating {
                volatility: VOLATILITY,
                ..Rating::default()
            },
            matches: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            margin_sum: 0.0,
            margin_squares: 0.0,
            history: Vec::new(),
            left: false,
            available: false,
            started: Vec::new(),
            entered_ms: now,
            rest_until_ms: 0,
        }
    }

    /// Its margin a deal over its matches (each match's a sample), with a 95% interval
    /// once two matches are counted.
    pub fn margin(&self) -> (f64, Option<(f64, f64)>) {
        let n = f64::from(self.played());
        if n == 0.0 {
            return (0.0, None);
        }
        let mean = self.margin_sum / n;
        if n < 2.0 {
            return (mean, None);
        }
        let variance = ((self.margin_squares - n * mean * mean) / (n - 1.0)).max(0.0);
        let half = 1.96 * (variance / n).sqrt();
        (mean, Some((mean - half, mean + half)))
    }

    /// Matches counted with a result.
    fn played(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Matches it made within the hour before `now`.
    pub fn started_within_hour(&self, now: u64) -> usize {
        self.started
            .iter()
            .filter(|&&at| at + 3_600_000 > now)
            .count()
    }
}

impl League {
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
