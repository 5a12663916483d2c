//! The challenges' shapes: making one, and a challenge as its players see it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bots::Level;
use crate::engine::{Rules, RulesPatch};
use crate::service::{self, Challenge, Invitation, Match, Offer, Opponent};

use super::*;

/// `POST /v1/challenges`. `opponents` and `preset` are required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"opponents": ["bob"], "preset": "all_fives", "seats": 2, "rated": true}))]
pub struct CreateChallenge {
    /// Player names or ids, or built-in levels (`random`, `greedy`, `expert`, `master`): one per
    /// seat after the challenger's, who takes seat 0; they take the next seats in order.
    #[schema(example = json!(["bob"]), min_items = 1, max_items = 3)]
    pub opponents: Vec<String>,
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default, deserialize_with = "super::rules::rules_named")]
    #[schema(value_type = Option<RulesOverridesDoc>)]
    pub rules: Option<RulesPatch>,
    /// 2 to 4; default 2.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: Option<u8>,
    pub clock: Option<ClockBody>,
    /// Whether the game is to be rated (two sides, the preset's rules as they stand);
    /// default false.
    #[serde(default)]
    pub rated: bool,
}

/// A player of a challenge.
#[derive(Serialize, ToSchema)]
pub struct ChallengePlayer {
    /// The player's id; a built-in level's is its name.
    #[schema(example = "3f1c0b6a9d2e4f5a8b7c6d5e4f3a2b1c")]
    pub id: String,
    #[schema(example = "bob")]
    pub name: String,
    /// A built-in level (which accepts at once).
    pub bot: bool,
    /// Whether it accepted (the challenger's own entry is always true).
    pub accepted: bool,
}

/// A game's clock settings, as asked for.
#[derive(Serialize, ToSchema)]
pub struct ClockSettingsView {
    pub bank_secs: u64,
    pub increment_secs: u64,
    pub on_timeout: service::OnTimeout,
    #[schema(value_type = super::rules::BotLevelDoc)]
    pub timeout_bot: Level,
    pub abandon_after: u64,
}

/// A challenge, as its players see it.
#[derive(Serialize, ToSchema)]
pub struct ChallengeView {
    #[schema(format = Uuid)]
    pub id: String,
    /// `open` until every opponent accepted (`accepted`: `game_id` names the game), one
    /// declined (`declined`), the challenger canceled it (`canceled`) or 10 minutes went
    /// by (`expired`).
    #[schema(schema_with = challenge_status_schema)]
    pub status: &'static str,
    pub challenger: ChallengePlayer,
    /// Seats 1 and on, in order.
    pub opponents: Vec<ChallengePlayer>,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    /// The rules the game is played by: the preset's, with the overrides asked for.
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub seats: u8,
    #[schema(required = true)]
    pub clock: Option<ClockSettingsView>,
    pub rated: bool,
    /// Epoch milliseconds.
    pub created_ms: u64,
    /// When an open challenge expires (epoch milliseconds).
    pub expires_ms: u64,
    /// The game it became, once accepted.
    #[schema(required = true, format = Uuid)]
    pub game_id: Option<String>,
    /// The player who declined it, by id.
    #[schema(required = true)]
    pub declined_by: Option<String>,
}

impl ClockSettingsView {
    pub fn of(s: &service::ClockSettings) -> ClockSettingsView {
        ClockSettingsView {
            bank_secs: s.bank_secs,
            increment_secs: s.increment_secs,
            on_timeout: s.on_timeout,
            timeout_bot: s.timeout_bot,
            abandon_after: s.abandon_after,
        }
    }
}

fn challenge_status_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some([
            "open", "accepted", "declined", "canceled", "expired",
        ]))
        .build()
}

impl ChallengeView {
    pub fn of(c: &Challenge) -> ChallengeView {
        ChallengeView {
            game_id: c.game_id().map(|id| id.to_string()),
            ..ChallengeView::invitation(&c.id(), c.invitation())
        }
    }

    /// A match's invitation, as a challenge's (it makes no one game: no `game_id`).
    pub fn of_match(m: &Match) -> ChallengeView {
        ChallengeView::invitation(&m.id(), m.invitation())
    }

    pub fn of_offer(offer: &Offer) -> ChallengeView {
        match offer {
            Offer::Challenge(c) => ChallengeView::of(c),
            Offer::Match(m) => ChallengeView::of_match(m),
        }
    }

    /// What a challenge and a match's invitation both show.
    fn invitation(id: &str, i: &Invitation) -> ChallengeView {
        let opponent = |o: &Opponent| match o {
            Opponent::Player { party, accepted } => ChallengePlayer {
                id: party.id.clone(),
                name: party.name.clone(),
                bot: false,
                accepted: *accepted,
            },
            Opponent::Level(level) => ChallengePlayer {
                id: level.as_str().to_owned(),
                name: level.as_str().to_owned(),
                bot: true,
                accepted: true,
            },
        };
        ChallengeView {
            id: id.to_owned(),
            status: i.status_now().as_str(),
            challenger: ChallengePlayer {
                id: i.challenger().id.clone(),
                name: i.challenger().name.clone(),
                bot: false,
                accepted: true,
            },
            opponents: i.opponents().iter().map(opponent).collect(),
            preset: i.preset().name(),
            rules: i.preset().rules().with(i.overrides()),
            seats: i.seats(),
            clock: i.clock().map(ClockSettingsView::of),
            rated: i.rated(),
            created_ms: i.created_ms(),
            expires_ms: i.expires_ms(),
            game_id: None,
            declined_by: i.declined_by().map(str::to_owned),
        }
    }
}

/// A player's open challenges, newest first.
#[derive(Serialize, ToSchema)]
pub struct ChallengeList {
    pub challenges: Vec<ChallengeView>,
    pub page: usize,
    pub per_page: usize,
}
