//! The leagues' shapes: making one, a league with its table, its matches in play and the
//! latest counted, and a page of leagues.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::MatchId;
use crate::engine::{Rules, RulesPatch};
use crate::service::leagues::record::{Entrant, League};

use super::*;

/// `POST /v1/leagues`. `name` and `preset` are required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Fives around the clock", "preset": "all_fives", "deals_per_match": 2, "levels": ["random", "greedy", "expert", "master"]}))]
pub struct CreateLeague {
    /// 1 to 64 characters, shown on its page.
    #[schema(example = "Fives around the clock")]
    pub name: String,
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default, deserialize_with = "super::rules::rules_named")]
    #[schema(value_type = Option<RulesOverridesDoc>)]
    pub rules: Option<RulesPatch>,
    /// The clock of every game; default none (a webhook seat still answers within its
    /// budget, a pulling bot is waited for).
    pub clock: Option<ClockBody>,
    /// Deals each match plays, each twice with the seats swapped: 1 to 50, default 2.
    #[schema(minimum = 1, maximum = 50, example = 2)]
    pub deals_per_match: Option<u16>,
    /// Matches an entrant plays at once: 1 to 8, default 2.
    #[schema(minimum = 1, maximum = 8, example = 2)]
    pub max_concurrent: Option<u8>,
    /// Built-in levels entered for good: they anchor the scale (each starts at its
    /// reference rating, and moves as it plays). Each level once.
    #[schema(value_type = Option<Vec<super::rules::BotLevelDoc>>, example = json!(["greedy", "expert"]))]
    pub levels: Option<Vec<String>>,
}

/// An entrant's rating right after a match counted: a point of its chart.
#[derive(Serialize, ToSchema)]
pub struct LeagueRatingPoint {
    pub at_ms: u64,
    pub rating: i64,
    pub deviation: i64,
}

/// One row of a league's table, in rank order.
#[derive(Serialize, ToSchema)]
pub struct LeagueEntrantView {
    /// A player's id, or a built-in level's name.
    #[schema(example = "greedy")]
    pub id: String,
    pub name: String,
    pub bot: bool,
    /// 1 for the highest rating; entrants that left come last.
    pub rank: usize,
    /// Its league rating (Glicko-2, one update a match), rounded.
    #[schema(example = 1512)]
    pub rating: i64,
    pub deviation: i64,
    pub matches: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Its points less its opponents' a deal, over its matches (each match one sample).
    pub margin_per_deal: f64,
    /// The 95% interval of `margin_per_deal`, once two matches are counted.
    pub margin_ci95: Option<[f64; 2]>,
    /// Whether it could be paired when the league last looked: a level always; a player
    /// with an active webhook, or a stream open (`GET /v1/players/me/events`).
    pub available: bool,
    /// It left the league: never paired again.
    pub left: bool,
    /// Its rating after each of its latest matches (up to 100), oldest first.
    pub history: Vec<LeagueRatingPoint>,
}

/// A match of a league in play.
#[derive(Serialize, ToSchema)]
pub struct LeagueMatchView {
    #[schema(format = Uuid)]
    pub match_id: String,
    /// The entrants' ids: `a` is the match's challenger.
    pub a: String,
    pub b: String,
    pub started_ms: u64,
}

/// A match of a league counted.
#[derive(Serialize, ToSchema)]
pub struct LeagueResultView {
    #[schema(format = Uuid)]
    pub match_id: String,
    pub a: String,
    pub b: String,
    /// On the match's total points: `a` or `b` (who won), `draw`, or `void` (never
    /// played out: it moved no rating).
    #[schema(example = "a")]
    pub result: &'static str,
    /// `a`'s points less `b`'s a deal; null when void.
    pub margin: Option<f64>,
    pub ended_ms: u64,
}

/// A league: its settings, its table, its matches in play and the latest counted.
#[derive(Serialize, ToSchema)]
pub struct LeagueView {
    #[schema(format = Uuid)]
    pub id: String,
    pub name: String,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub clock: Option<ClockSettingsView>,
    pub deals_per_match: u16,
    pub max_concurrent: u8,
    /// Its creator's player id.
    pub creator: String,
    pub created_ms: u64,
    /// Matches counted since it was made.
    pub matches_counted: u64,
    pub entrants: Vec<LeagueEntrantView>,
    pub running: Vec<LeagueMatchView>,
    /// The latest matches counted (up to 50), newest first.
    pub recent: Vec<LeagueResultView>,
}

/// A league in a list.
#[derive(Serialize, ToSchema)]
pub struct LeagueSummary {
    #[schema(format = Uuid)]
    pub id: String,
    pub name: String,
    pub preset: &'static str,
    /// Entrants that have not left, its levels counted.
    pub entrants: usize,
    pub matches_counted: u64,
    pub created_ms: u64,
}

/// A page of leagues, newest first.
#[derive(Serialize, ToSchema)]
pub struct LeagueList {
    pub leagues: Vec<LeagueSummary>,
    pub page: usize,
    pub per_page: usize,
}

fn whole(x: f64) -> i64 {
    x.round() as i64
}

impl LeagueEntrantView {
    fn of(e: &Entrant, rank: usize) -> LeagueEntrantView {
        let (margin, ci) = e.margin();
        LeagueEntrantView {
            id: e.id().to_owned(),
            name: e.name().to_owned(),
            bot: e.bot(),
            rank,
            rating: whole(e.rating().rating),
            deviation: whole(e.rating().deviation),
            matches: e.matches(),
            wins: e.wins(),
            draws: e.draws(),
            losses: e.losses(),
            margin_per_deal: margin,
            margin_ci95: ci.map(|(low, high)| [low, high]),
            available: e.available() && !e.left(),
            left: e.left(),
            history: e
                .history()
                .iter()
                .map(|p| LeagueRatingPoint {
                    at_ms: p.at_ms(),
                    rating: whole(p.rating()),
                    deviation: whole(p.deviation()),
                })
                .collect(),
        }
    }
}

impl LeagueView {
    pub fn of(l: &League) -> LeagueView {
        let id_of = |i: u16| l.entrants()[usize::from(i)].id().to_owned();
        LeagueView {
            id: l.id().to_string(),
            name: l.name().to_owned(),
            preset: l.preset().name(),
            rules: l.preset().rules().with(l.overrides()),
            clock: l.clock().map(ClockSettingsView::of),
            deals_per_match: l.deals_per_match(),
            max_concurrent: l.max_concurrent(),
            creator: l.creator().id.clone(),
            created_ms: l.created_ms(),
            matches_counted: l.counted(),
            entrants: l
                .ranked()
                .into_iter()
                .enumerate()
                .map(|(rank, i)| LeagueEntrantView::of(&l.entrants()[i], rank + 1))
                .collect(),
            running: l
                .running()
                .iter()
                .map(|r| LeagueMatchView {
                    match_id: r.match_id().to_string(),
                    a: id_of(r.a()),
                    b: id_of(r.b()),
                    started_ms: r.started_ms(),
                })
                .collect(),
            recent: l
                .recent()
                .iter()
                .rev()
                .map(|c| {
                    LeagueResultView::of(
                        c.match_id(),
                        id_of(c.a()),
                        id_of(c.b()),
                        c.result(),
                        c.ended_ms(),
                    )
                })
                .collect(),
        }
    }
}

impl LeagueResultView {
    /// Match `match_id` of `a` against `b` counted at `ended_ms`: `a`'s score and margin
    /// a deal, or `None` for a void one.
    pub fn of(
        match_id: MatchId,
        a: String,
        b: String,
        result: Option<(f64, f64)>,
        ended_ms: u64,
    ) -> LeagueResultView {
        LeagueResultView {
            match_id: match_id.to_string(),
            a,
            b,
            result: match result {
                None => "void",
                Some((score, _)) if score > 0.75 => "a",
                Some((score, _)) if score < 0.25 => "b",
                Some(_) => "draw",
            },
            margin: result.map(|(_, margin)| margin),
            ended_ms,
        }
    }
}

impl LeagueSummary {
    pub fn of(l: &League) -> LeagueSummary {
        LeagueSummary {
            id: l.id().to_string(),
            name: l.name().to_owned(),
            preset: l.preset().name(),
            entrants: l.entrants().iter().filter(|e| !e.left()).count(),
            matches_counted: l.counted(),
            created_ms: l.created_ms(),
        }
    }
}
