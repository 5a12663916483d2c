//! The seeks' shapes: making one, and a seek as its player sees it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bots::Level;
use crate::service::Seek;
use crate::store::seeks::SeekState;

use super::*;

/// Fill the missing seats with a built-in level if no player came in time.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FallbackBody {
    /// 1 to 300.
    #[schema(minimum = 1, maximum = 300, example = 15)]
    pub after_secs: u64,
    #[schema(value_type = super::rules::BotLevelDoc)]
    pub level: Level,
}

/// `POST /v1/seeks`. Only `preset` is required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"preset": "all_fives", "seats": 2, "rated": true, "fallback": {"after_secs": 15, "level": "greedy"}}))]
pub struct CreateSeek {
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    /// 2 to 4; default 2.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: Option<u8>,
    pub clock: Option<ClockBody>,
    /// Whether the game is to be rated (two sides); default false.
    #[serde(default)]
    pub rated: bool,
    pub fallback: Option<FallbackBody>,
}

/// A seek, as its player sees it.
#[derive(Serialize, ToSchema)]
pub struct SeekView {
    #[schema(format = Uuid)]
    pub id: String,
    /// `waiting` for players; `matched` (`game_id` names the game); `canceled`;
    /// `expired` (5 minutes went by).
    #[schema(schema_with = seek_status_schema)]
    pub status: &'static str,
    #[schema(example = "all_fives")]
    pub preset: &'static str,
    pub seats: u8,
    #[schema(required = true)]
    pub clock: Option<ClockSettingsView>,
    pub rated: bool,
    #[schema(required = true)]
    pub fallback: Option<FallbackBody>,
    /// Epoch milliseconds.
    pub created_ms: u64,
    /// When a waiting seek expires (epoch milliseconds).
    pub expires_ms: u64,
    /// The game it was matched into.
    #[schema(required = true, format = Uuid)]
    pub game_id: Option<String>,
}

fn seek_status_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["waiting", "matched", "canceled", "expired"]))
        .build()
}

impl SeekView {
    pub fn of(s: &Seek) -> SeekView {
        let (status, game_id) = match s.state_now() {
            SeekState::Waiting => ("waiting", None),
            SeekState::Matched(game) => ("matched", Some(game)),
            SeekState::Canceled => ("canceled", None),
            SeekState::Expired => ("expired", None),
        };
        SeekView {
            id: s.id().to_owned(),
            status,
            preset: s.wish().preset.name(),
            seats: s.wish().seats,
            clock: s.wish().clock.map(|c| ClockSettingsView::of(&c)),
            rated: s.wish().rated,
            fallback: s.fallback().map(|(after, level)| FallbackBody {
                after_secs: after.as_secs(),
                level,
            }),
            created_ms: s.created_ms(),
            expires_ms: s.expires_ms(),
            game_id,
        }
    }
}

/// A page of a player's waiting seeks, newest first.
#[derive(Serialize, ToSchema)]
pub struct SeekList {
    pub seeks: Vec<SeekView>,
    pub page: usize,
    pub per_page: usize,
}
