//! One entrant of a league, as its record counts it: its rating and its history, its
//! results and margins, whether it may be paired. Part of the league's record
//! ([`super::record::League`]), changed by the leagues alone.

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::rating::Rating;
use crate::service::matchmaking::invitation::Party;
use crate::service::ratings::reference_rating;

/// An entrant's starting volatility, a sixth of a person's: a bot is a fixed program whose
/// skill does not drift between matches, and the deviation's floor (about 26 points, not
/// 61) lets ratings 100 points apart be told apart (docs/leagues.md, "Ratings").
pub const VOLATILITY: f64 = 0.01;

/// One entrant's row, as counted so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entrant {
    /// A player's id, or a built-in level's name.
    pub(super) id: String,
    pub(super) name: String,
    pub(super) bot: bool,
    pub(super) level: Option<Level>,
    pub(super) rating: Rating,
    pub(super) matches: u32,
    pub(super) wins: u32,
    pub(super) draws: u32,
    pub(super) losses: u32,
    /// Over its matches: the sum of each one's margin a deal, and of their squares (its
    /// mean and interval follow: [`Entrant::margin`]).
    pub(super) margin_sum: f64,
    pub(super) margin_squares: f64,
    /// Its rating after each match counted, newest last.
    pub(super) history: Vec<RatingPoint>,
    /// It left: never paired again; its row stays.
    pub(super) left: bool,
    /// Whether it could be paired when the league was last driven (a level always; a
    /// player with an active webhook or an open stream).
    pub(super) available: bool,
    /// When its latest matches were made (the last hour's, for the cap per hour).
    pub(super) started: Vec<u64>,
    pub(super) entered_ms: u64,
    /// Not paired before this (epoch ms; 0: never held back): it stopped answering in a
    /// match (lost a game on time, or a bot took its seat). Stored after the league.
    #[serde(skip)]
    pub(super) rest_until_ms: u64,
}

/// An entrant's rating right after a match counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatingPoint {
    pub(super) at_ms: u64,
    pub(super) rating: f64,
    pub(super) deviation: f64,
}

impl Entrant {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn bot(&self) -> bool {
        self.bot
    }

    pub fn rating(&self) -> &Rating {
        &self.rating
    }

    pub fn matches(&self) -> u32 {
        self.matches
    }

    pub fn wins(&self) -> u32 {
        self.wins
    }

    pub fn draws(&self) -> u32 {
        self.draws
    }

    pub fn losses(&self) -> u32 {
        self.losses
    }

    pub fn history(&self) -> &[RatingPoint] {
        &self.history
    }

    pub fn left(&self) -> bool {
        self.left
    }

    pub fn available(&self) -> bool {
        self.available
    }

    /// This new entrant starting from `rating` instead (a simulation's settings).
    pub fn starting_at(mut self, rating: Rating) -> Entrant {
        self.rating = rating;
        self
    }

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

impl RatingPoint {
    pub fn at_ms(&self) -> u64 {
        self.at_ms
    }

    pub fn rating(&self) -> f64 {
        self.rating
    }

    pub fn deviation(&self) -> f64 {
        self.deviation
    }
}
