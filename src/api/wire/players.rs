//! The players' shapes: creating one, its profile, its key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::service::{
    ChallengeStatus, Keyed, PlayerItem, PlayerNews, Profile, RatingMoved, Status, View,
};

use super::{ChallengeView, MatchResult, MatchView, SeekView, WebhookSummary};
use crate::rating::Rating;

/// `POST /v1/players`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePlayer {
    /// 2 to 24 characters of `A-Z a-z 0-9 _ -`, unique ignoring case; `random`, `greedy`,
    /// `expert`, `master` (the built-in levels), each also followed by `bot` (`expert-bot`),
    /// and `me` are reserved.
    #[schema(
        example = "alice",
        min_length = 2,
        max_length = 24,
        pattern = "^[A-Za-z0-9_-]{2,24}$"
    )]
    pub name: String,
    /// A bot account says so (as lichess BOT accounts do); default false.
    #[serde(default)]
    pub bot: bool,
}

/// A rating or deviation as people read it: whole (the store keeps the exact value).
pub fn whole(x: f64) -> i64 {
    x.round() as i64
}

/// One preset's rating of a player (Glicko-2), rating and deviation rounded to whole
/// points.
#[derive(Serialize, ToSchema)]
pub struct RatingView {
    #[schema(example = 1662)]
    pub rating: i64,
    #[schema(example = 74)]
    pub deviation: i64,
    pub volatility: f64,
    pub games: u64,
    /// While the deviation is above 110.
    pub provisional: bool,
}

/// A player as anyone may see it. The built-in levels are players too (`bot: true`, their
/// name as their id).
#[derive(Serialize, ToSchema)]
pub struct PlayerProfile {
    #[schema(example = "3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c")]
    pub id: String,
    #[schema(example = "alice")]
    pub name: String,
    pub bot: bool,
    /// When the player was created (epoch ms; 0 for a built-in level).
    pub created_ms: u64,
    /// Games the player was seated in; null for a built-in level, whose games are not
    /// counted (it sits at any table that asks for it): its matches and tournaments are
    /// listed (`GET /v1/players/{id or name}/matches`, `.../tournaments`).
    #[schema(required = true)]
    pub games: Option<u64>,
    /// Per preset, the player's rating there: none until rated games are played.
    pub ratings: BTreeMap<String, RatingView>,
    /// How the server's calls to the player's webhook go, if it has one (its URL and why
    /// it is paused are the player's own: `GET /v1/players/me/webhook`).
    pub webhook: Option<WebhookSummary>,
    /// The leagues it is in (entered and not left), by name: each one's page is
    /// `/leagues/{id}`. Empty for a built-in level.
    pub leagues: Vec<PlayerLeague>,
}

/// A league a player is in.
#[derive(Serialize, ToSchema)]
pub struct PlayerLeague {
    #[schema(format = Uuid)]
    pub id: String,
    #[schema(example = "Fives around the clock")]
    pub name: String,
}

impl PlayerProfile {
    pub fn of(p: &Profile) -> PlayerProfile {
        PlayerProfile {
            id: p.id.clone(),
            name: p.name.clone(),
            bot: p.bot,
            created_ms: p.created_ms,
            games: p.games,
            ratings: p
                .ratings
                .iter()
                .map(|(preset, r)| (preset.clone(), RatingView::of(r.rating, r.games)))
                .collect(),
            webhook: p.webhook.as_ref().map(WebhookSummary::of),
            leagues: p
                .leagues
                .iter()
                .map(|l| PlayerLeague {
                    id: l.id.clone(),
                    name: l.name.clone(),
                })
                .collect(),
        }
    }
}

impl RatingView {
    pub fn of(r: Rating, games: u64) -> RatingView {
        RatingView {
            rating: whole(r.rating),
            deviation: whole(r.deviation),
            volatility: r.volatility,
            games,
            provisional: r.provisional(),
        }
    }
}

/// A rating at one moment (Glicko-2), rating and deviation rounded to whole points.
#[derive(Serialize, ToSchema)]
pub struct RatingPoint {
    #[schema(example = 1562)]
    pub rating: i64,
    pub deviation: i64,
    pub volatility: f64,
}

impl RatingPoint {
    fn of(r: Rating) -> RatingPoint {
        RatingPoint {
            rating: whole(r.rating),
            deviation: whole(r.deviation),
            volatility: r.volatility,
        }
    }
}

/// A player's rating right after a rated game: a point of its chart.
#[derive(Serialize, ToSchema)]
pub struct RatingHistoryPoint {
    /// When the game moved it (epoch milliseconds).
    pub at_ms: u64,
    /// Rounded to whole points, as is the deviation.
    #[schema(example = 1562)]
    pub rating: i64,
    pub deviation: i64,
    /// The rated game that moved it.
    #[schema(format = Uuid)]
    pub game_id: String,
}

impl RatingHistoryPoint {
    pub fn of(p: &RatingMoved) -> RatingHistoryPoint {
        RatingHistoryPoint {
            at_ms: p.at_ms,
            rating: whole(p.rating.rating),
            deviation: whole(p.rating.deviation),
            game_id: p.game_id.to_string(),
        }
    }
}

/// A player's rating before and after a rated game.
#[derive(Serialize, ToSchema)]
pub struct RatingChangeView {
    pub before: RatingPoint,
    pub after: RatingPoint,
}

/// A player and its key: the answer to creating a player or rotating its key.
#[derive(Serialize, ToSchema)]
pub struct PlayerKey {
    pub player: PlayerProfile,
    /// The player's bearer secret, shown once (`Authorization: Bearer <key>`); the server
    /// keeps only its hash. It starts with `dpk_`, so scanners can find a leaked one.
    #[schema(example = "dpk_3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c_9c1e...")]
    pub key: String,
}

impl PlayerKey {
    pub fn of(k: Keyed) -> PlayerKey {
        PlayerKey {
            player: PlayerProfile::of(&k.profile),
            key: k.key,
        }
    }
}

/// One of a player's games, as its seat sees the table.
#[derive(Serialize, ToSchema)]
pub struct PlayerGame {
    pub game_id: String,
    /// The player's seat.
    pub seat: u8,
    pub status: Status,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    pub version: u64,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Per seat, the name shown there (`null` while free).
    pub names: Vec<Option<String>>,
    /// Per seat, the player it is bound to (taken with a player's key), by id; `null`
    /// for a seat taken anonymously, whatever its name, or played by a bot, or free.
    pub player_ids: Vec<Option<String>>,
    /// Per side (seat, or team).
    pub scores: Vec<i32>,
    /// Whether its end moves ratings: made by a rated challenge or seek, and not aborted.
    pub rated: bool,
    /// Why a game made rated was not rated; null otherwise.
    #[schema(required = true)]
    pub aborted: Option<crate::service::Aborted>,
    /// Once finished, how it ended for the player's side: `won`, `lost` or `drawn`;
    /// null before.
    #[schema(required = true, schema_with = player_outcome_schema)]
    pub outcome: Option<&'static str>,
    /// Once finished, the result (the winning side, the scores, why it ended); null before.
    #[schema(required = true)]
    pub result: Option<MatchResult>,
}

fn player_outcome_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            utoipa::openapi::Type::String,
            utoipa::openapi::Type::Null,
        ]))
        .enum_values(Some([Some("won"), Some("lost"), Some("drawn"), None]))
        .build()
}

impl PlayerGame {
    /// `None` for a game seen by nobody's seat (never: the service lists seats).
    pub fn of(s: &View) -> Option<PlayerGame> {
        let seat = s.viewer?;
        let ended = s.projection.as_ref().and_then(|p| p.outcome);
        Some(PlayerGame {
            game_id: s.id.clone(),
            seat,
            status: s.status,
            preset: s.preset.name(),
            version: s.version,
            created_ms: s.created_ms,
            names: s.seats.iter().map(|seat| seat.name.clone()).collect(),
            player_ids: s.players.clone(),
            scores: s.scores.clone(),
            rated: s.rated,
            aborted: s.aborted,
            outcome: ended.map(|o| match o.winner() {
                None => "drawn",
                Some(side) if side == s.rules.side_of(seat) => "won",
                Some(_) => "lost",
            }),
            result: s
                .projection
                .as_ref()
                .and_then(|p| MatchResult::of_projection(p, &s.scores)),
        })
    }
}

/// A page of a player's games, newest first.
#[derive(Serialize, ToSchema)]
pub struct PlayerGameList {
    pub games: Vec<PlayerGame>,
    pub page: usize,
    pub per_page: usize,
}

/// News on a player's stream (`GET /v1/players/me/events`).
#[derive(Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = PlayerEvent)]
pub enum PlayerEventView {
    /// A game with a seat bound to the player started.
    GameStarted {
        game_id: String,
        /// The player's seat.
        seat: u8,
        #[schema(example = "all_fives")]
        preset: &'static str,
        rated: bool,
        /// Per seat, the name shown there.
        players: Vec<Option<String>>,
    },
    /// A challenge to the player was made: accept or decline it.
    Challenge(ChallengeView),
    /// An opponent declined a challenge the player is in.
    ChallengeDeclined(ChallengeView),
    /// The challenger canceled a challenge to the player.
    ChallengeCanceled(ChallengeView),
    /// A challenge the player is in expired unanswered.
    ChallengeExpired(ChallengeView),
    /// A seek of the player's expired unmatched.
    SeekExpired(SeekView),
    /// A match the player is in moved on: a game started or ended, or it is over.
    MatchUpdated(MatchView),
    /// A game with a seat bound to the player ended.
    GameFinished {
        game_id: String,
        result: MatchResult,
        /// In a rated game, the player's rating in its preset before and after it; null
        /// in a game not rated.
        #[schema(required = true)]
        rating: Option<RatingChangeView>,
    },
    /// A tournament the player is in started a round: the player's games in it (none:
    /// the player has the bye).
    TournamentRound {
        tournament_id: String,
        round: u16,
        game_ids: Vec<String>,
    },
    /// A tournament the player is in is over: its status (`finished` or `canceled`), and
    /// the player's place and score in its standings.
    TournamentFinished {
        tournament_id: String,
        status: String,
        rank: u16,
        score: f64,
    },
    /// The player's webhook was paused after failures in a row (`WEBHOOK_MAX_FAILURES`):
    /// its seats are played as absent players' are until it is `PUT` again.
    WebhookPaused { reason: String },
    /// News was lost (the stream fell behind, or the server lost its subscription for a
    /// moment): list `GET /v1/players/me/games?status=playing` again; the news goes on.
    Resync {},
}

impl PlayerEventView {
    pub fn of(item: &PlayerItem) -> PlayerEventView {
        match item {
            PlayerItem::News(PlayerNews::GameStarted {
                game_id,
                seat,
                preset,
                rated,
                players,
            }) => PlayerEventView::GameStarted {
                game_id: game_id.clone(),
                seat: *seat,
                preset: preset.name(),
                rated: *rated,
                players: players.clone(),
            },
            PlayerItem::News(PlayerNews::GameFinished {
                game_id,
                outcome,
                reason,
                scores,
                rating,
            }) => PlayerEventView::GameFinished {
                game_id: game_id.clone(),
                result: MatchResult::of(*outcome, *reason, scores),
                rating: rating.map(|c| RatingChangeView {
                    before: RatingPoint::of(c.before),
                    after: RatingPoint::of(c.after),
                }),
            },
            PlayerItem::News(PlayerNews::Challenge(c)) => {
                PlayerEventView::Challenge(ChallengeView::of(c))
            }
            PlayerItem::News(PlayerNews::ChallengeDeclined(c)) => {
                PlayerEventView::ChallengeDeclined(ChallengeView::of(c))
            }
            PlayerItem::News(PlayerNews::ChallengeCanceled(c)) => {
                PlayerEventView::ChallengeCanceled(ChallengeView::of(c))
            }
            PlayerItem::News(PlayerNews::ChallengeExpired(c)) => {
                PlayerEventView::ChallengeExpired(ChallengeView::of(c))
            }
            PlayerItem::News(PlayerNews::MatchUpdated(m)) => {
                PlayerEventView::MatchUpdated(MatchView::of(m))
            }
            // A match's invitation is told as a challenge's.
            PlayerItem::News(PlayerNews::MatchOffered(m)) => {
                PlayerEventView::Challenge(ChallengeView::of_match(m))
            }
            PlayerItem::News(PlayerNews::MatchClosed(m)) => {
                let view = ChallengeView::of_match(m);
                // Told only once closed unaccepted: its stored status says how.
                match m.status_now() {
                    ChallengeStatus::Declined => PlayerEventView::ChallengeDeclined(view),
                    ChallengeStatus::Canceled => PlayerEventView::ChallengeCanceled(view),
                    _ => PlayerEventView::ChallengeExpired(view),
                }
            }
            PlayerItem::News(PlayerNews::SeekExpired(s)) => {
                PlayerEventView::SeekExpired(SeekView::of(s))
            }
            PlayerItem::News(PlayerNews::TournamentRound {
                tournament_id,
                round,
                game_ids,
            }) => PlayerEventView::TournamentRound {
                tournament_id: tournament_id.clone(),
                round: *round,
                game_ids: game_ids.clone(),
            },
            PlayerItem::News(PlayerNews::TournamentFinished {
                tournament_id,
                status,
                rank,
                score,
            }) => PlayerEventView::TournamentFinished {
                tournament_id: tournament_id.clone(),
                status: status.clone(),
                rank: *rank,
                score: *score,
            },
            PlayerItem::News(PlayerNews::WebhookPaused { reason }) => {
                PlayerEventView::WebhookPaused {
                    reason: reason.clone(),
                }
            }
            PlayerItem::Resync => PlayerEventView::Resync {},
        }
    }

    /// The event's name on the stream (its `event:` field), as its `type`.
    pub fn name(&self) -> &'static str {
        match self {
            PlayerEventView::GameStarted { .. } => "game_started",
            PlayerEventView::GameFinished { .. } => "game_finished",
            PlayerEventView::Challenge(_) => "challenge",
            PlayerEventView::ChallengeDeclined(_) => "challenge_declined",
            PlayerEventView::ChallengeCanceled(_) => "challenge_canceled",
            PlayerEventView::ChallengeExpired(_) => "challenge_expired",
            PlayerEventView::SeekExpired(_) => "seek_expired",
            PlayerEventView::MatchUpdated(_) => "match_updated",
            PlayerEventView::TournamentRound { .. } => "tournament_round",
            PlayerEventView::TournamentFinished { .. } => "tournament_finished",
            PlayerEventView::WebhookPaused { .. } => "webhook_paused",
            PlayerEventView::Resync {} => "resync",
        }
    }
}

/// One place on a leaderboard.
#[derive(Serialize, ToSchema)]
pub struct LeaderboardEntry {
    /// 1 for the top of the board.
    pub rank: usize,
    #[schema(example = "3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c")]
    pub id: String,
    #[schema(example = "alice")]
    pub name: String,
    /// A bot account, or a built-in level (whose id is its name).
    pub bot: bool,
    /// Rounded to whole points, as is the deviation.
    #[schema(example = 1662)]
    pub rating: i64,
    pub deviation: i64,
    /// Rated games played in this preset.
    pub games: u64,
    /// While the deviation is above 110: listed after every established rating.
    pub provisional: bool,
}

/// A page of a preset's leaderboard.
#[derive(Serialize, ToSchema)]
pub struct Leaderboard {
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    pub players: Vec<LeaderboardEntry>,
    pub page: usize,
    pub per_page: usize,
    /// The same as `per_page` (the query's older name for it).
    pub limit: usize,
}
