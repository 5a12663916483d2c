//! The matches' shapes: making one, and a match with its games, score and margin.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::engine::{Rules, RulesPatch};
use crate::service::matches::series::VOID;
use crate::service::{ChallengeStatus, Match};

use super::*;

/// `POST /v1/matches`. `opponent` and `preset` are required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"opponent": "expert", "preset": "block", "deals": 50, "duplicate": true, "parallel": 4}))]
pub struct CreateMatch {
    /// A built-in level (`random`, `greedy`, `expert`, `master`: the match starts at once) or a
    /// player's name or id (who accepts it as a challenge, at
    /// `POST /v1/challenges/{id}/accept` with the match's id).
    #[schema(example = "expert")]
    pub opponent: String,
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default, deserialize_with = "super::rules::rules_named")]
    #[schema(value_type = Option<RulesOverridesDoc>)]
    pub rules: Option<RulesPatch>,
    /// 2, or 4 when the rules play in teams (`rules.teams`): then each side's second
    /// seat is played by `partner`, and a duplicate deal's twin swaps the teams; default 2.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: Option<u8>,
    /// Deals played, 1 to 500; default 10.
    #[schema(minimum = 1, maximum = 500)]
    pub deals: Option<u32>,
    /// Each deal twice, the same hands, the sides swapped; default true.
    pub duplicate: Option<bool>,
    pub clock: Option<ClockBody>,
    /// Games in play at once, 1 to 8; default 1. A duplicate deal's two games start
    /// together, so with `duplicate` an odd number is rounded up.
    #[schema(minimum = 1, maximum = 8)]
    pub parallel: Option<u8>,
    /// Whether its games are rated (the preset's rules as they stand); default false.
    #[serde(default)]
    pub rated: bool,
    /// Makes the deals from this text instead of a secret: the same text, the same
    /// deals, so two versions of a bot can be measured on one set of deals. Its games
    /// say `prearranged` and are unrated.
    #[schema(example = "my-bot-v2")]
    pub seed: Option<String>,
    /// A built-in level that plays your side: a reference match between two levels,
    /// which you own (read and cancel) without playing. Unrated.
    #[schema(value_type = Option<super::rules::BotLevelDoc>, example = "greedy")]
    pub play_as: Option<String>,
    /// At 4 seats: the level beside each side's player (the same for both sides, so the
    /// margin measures the players); default `greedy`.
    #[schema(value_type = Option<super::rules::BotLevelDoc>, example = "greedy")]
    pub partner: Option<String>,
}

/// One game of a match.
#[derive(Serialize, ToSchema)]
pub struct MatchGameView {
    /// The deal it plays, from 0 (both games of a duplicate deal share it).
    pub deal: u32,
    #[schema(format = Uuid)]
    pub game_id: String,
    /// Per seat, the name shown there.
    pub seats: Vec<String>,
    /// `playing` or `finished`.
    #[schema(example = "finished")]
    pub status: &'static str,
    /// Once finished, from the challenger's side.
    #[schema(required = true)]
    pub result: Option<MatchGameResult>,
}

/// A finished game of a match, from the challenger's side.
#[derive(Serialize, ToSchema)]
pub struct MatchGameResult {
    /// `win`, `loss` or `draw`; `void` for a game that expired unfinished (nobody moved
    /// for `GAME_IDLE_TTL_SECS`), which counts in neither the score nor the margin.
    #[schema(example = "win")]
    pub outcome: &'static str,
    pub points_for: i32,
    pub points_against: i32,
}

/// The challenger's tally over the games that ended.
#[derive(Serialize, ToSchema)]
pub struct MatchScore {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
    pub points_for: i64,
    pub points_against: i64,
}

/// The challenger's margin a deal: its final points less the opponent's over the deal's
/// games (the other way round under penalty scoring), over the deals whose games all
/// ended, with its 95% Student-t interval.
#[derive(Serialize, ToSchema)]
pub struct MatchMargin {
    pub per_deal_mean: f64,
    /// Null until two deals are done.
    #[schema(required = true, value_type = Option<Vec<f64>>)]
    pub ci95: Option<[f64; 2]>,
    pub deals_done: usize,
}

/// A match: its games, the challenger's score and margin.
#[derive(Serialize, ToSchema)]
pub struct MatchView {
    #[schema(format = Uuid)]
    pub id: String,
    /// `waiting` for the opponent to accept, `running`, `finished`, or `canceled` (no
    /// game starts any more; those in play go on). A match declined or never accepted
    /// says `canceled` too.
    #[schema(example = "running")]
    pub status: &'static str,
    #[schema(example = "block")]
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub deals: u32,
    pub duplicate: bool,
    pub parallel: u8,
    pub rated: bool,
    /// Its deals were made from the challenger's seed text, not a secret.
    pub seeded: bool,
    /// The secret (or the seed text's hash) every deal was made from, in hex, shown once
    /// the match is over: deal `n`'s seed is SHA-256 of these 32 bytes followed by `n` as
    /// 4 little-endian bytes, which each game's export shows. Null while a game may still
    /// be played.
    #[schema(required = true, example = json!(null))]
    pub seed: Option<String>,
    /// The challenger (or the level playing its side, `play_as`), then the opponent; at 4
    /// seats then both partners.
    pub players: Vec<ChallengePlayer>,
    pub games: Vec<MatchGameView>,
    pub score: MatchScore,
    pub margin: MatchMargin,
}

impl MatchView {
    pub fn of(c: &Match) -> MatchView {
        let (series, invitation) = (c.series(), c.invitation());
        let challenge = ChallengeView::of_match(c);
        let status = match c.status_now() {
            ChallengeStatus::Open => "waiting",
            ChallengeStatus::Accepted => series.status(true).as_str(),
            _ => "canceled",
        };
        let challenger = match series.stand_in() {
            Some(level) => ChallengePlayer {
                id: level.as_str().to_owned(),
                name: level.as_str().to_owned(),
                bot: true,
                accepted: true,
            },
            None => challenge.challenger,
        };
        let mut players = vec![challenger];
        players.extend(challenge.opponents);
        let names: Vec<String> = players.iter().map(|p| p.name.clone()).collect();
        let tally = series.tally();
        let margin = series.margin(c.penalty_scoring());
        MatchView {
            id: c.id().to_string(),
            status,
            preset: invitation.preset().name(),
            rules: challenge.rules,
            deals: series.deals(),
            duplicate: series.duplicate(),
            parallel: series.parallel(),
            rated: invitation.rated(),
            seeded: series.seeded(),
            seed: series.revealed_seed(c.status_now() == ChallengeStatus::Accepted),
            games: series
                .games()
                .iter()
                .map(|g| {
                    // Seat i plays for side i % 2; the challenger's side is its seat's.
                    let seats = (0..usize::from(invitation.seats()))
                        .map(|i| {
                            let other = usize::from(i % 2 != usize::from(g.seat()));
                            names[other + 2 * (i / 2)].clone()
                        })
                        .collect();
                    MatchGameView {
                        deal: series.deal_of(g.index()),
                        game_id: g.game_id().to_string(),
                        seats,
                        status: if g.result().is_some() {
                            "finished"
                        } else {
                            "playing"
                        },
                        result: g.result().map(|(points_for, points_against, result)| {
                            MatchGameResult {
                                outcome: match result {
                                    VOID => "void",
                                    10 => "win",
                                    0 => "loss",
                                    _ => "draw",
                                },
                                points_for,
                                points_against,
                            }
                        }),
                    }
                })
                .collect(),
            players,
            score: MatchScore {
                wins: tally.wins,
                losses: tally.losses,
                draws: tally.draws,
                points_for: tally.points_for,
                points_against: tally.points_against,
            },
            margin: MatchMargin {
                per_deal_mean: margin.per_deal_mean,
                ci95: margin.ci95.map(|(lo, hi)| [lo, hi]),
                deals_done: margin.deals_done,
            },
        }
    }
}

/// A page of a player's matches, newest first.
#[derive(Serialize, ToSchema)]
pub struct MatchList {
    pub matches: Vec<MatchView>,
    pub page: usize,
    pub per_page: usize,
}
