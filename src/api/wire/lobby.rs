//! The lobby's shapes: presets, creating and joining a game, the list of open games and
//! its events. What a client sends before it plays.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::bots::Level;
use crate::engine::{Deal, Preset, Rules, RulesPatch, Tile};
use crate::service::{self, View};

use super::*;

/// A preset of docs/rules.md with its full rule set.
#[derive(Serialize, ToSchema)]
pub struct PresetInfo {
    #[schema(example = "all_fives")]
    pub name: &'static str,
    pub description: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    /// The seat counts these rules allow as they stand (`seats` in `POST /v1/games`);
    /// overrides, such as a smaller `hand_size`, may allow others.
    #[schema(example = json!([2, 3, 4]))]
    pub seats: Vec<u8>,
}

impl From<Preset> for PresetInfo {
    fn from(p: Preset) -> PresetInfo {
        let rules = p.rules();
        PresetInfo {
            name: p.name(),
            description: p.description(),
            seats: rules.seat_counts(),
            rules,
        }
    }
}

/// A built-in player for one seat.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BotSeat {
    /// 0 to the game's seats less one.
    #[schema(maximum = 3)]
    pub seat: u8,
    #[schema(value_type = super::rules::BotLevelDoc)]
    pub level: Level,
}

/// A fixed first deal: hands by seat and the boneyard, top first. Together they must be a
/// permutation of the set.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DealBody {
    #[schema(value_type = Vec<Vec<TileText>>, example = json!([["6-6", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"], ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]]))]
    pub hands: Vec<Vec<String>>,
    #[schema(value_type = Vec<TileText>, example = json!(["0-2", "0-4", "0-5", "0-6", "1-4", "1-5", "1-6", "2-4", "2-5", "3-4", "3-5", "3-6", "4-5", "4-6"]))]
    pub boneyard: Vec<String>,
}

impl DealBody {
    pub fn parse(&self) -> Result<Deal, String> {
        let tiles = |list: &[String]| {
            list.iter()
                .map(|t| parse_tile(t))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Deal {
            hands: self
                .hands
                .iter()
                .map(|h| tiles(h))
                .collect::<Result<_, _>>()?,
            boneyard: tiles(&self.boneyard)?,
        })
    }

    pub fn from_deal(deal: &Deal) -> DealBody {
        let tiles = |list: &[Tile]| list.iter().map(|t| t.to_string()).collect();
        DealBody {
            hands: deal.hands.iter().map(|h| tiles(h)).collect(),
            boneyard: tiles(&deal.boneyard),
        }
    }
}

pub fn parse_tile(text: &str) -> Result<Tile, String> {
    text.parse().map_err(|e| format!("bad tile {text:?}: {e}"))
}

pub(super) fn preset_schema() -> RefOr<Schema> {
    words(
        Preset::ALL.map(Preset::name),
        "The preset the rules start from (docs/rules.md, \"The presets\").",
    )
}

/// `POST /v1/games`. Only `preset` is required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"preset": "all_fives", "seats": 2, "bots": [{"seat": 1, "level": "greedy"}]}))]
pub struct CreateGame {
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default, deserialize_with = "super::rules::rules_named")]
    #[schema(value_type = Option<RulesOverridesDoc>)]
    pub rules: Option<RulesPatch>,
    /// 2 to 4; default 2.
    #[schema(minimum = 2, maximum = 4)]
    pub seats: Option<u8>,
    #[serde(default)]
    pub bots: Vec<BotSeat>,
    /// Any text: the same rules and seed give the same deals. `hex:` and 64 hex digits
    /// give the seed's 32 bytes themselves: `"hex:" + seed` of an export deals its rounds
    /// again. Other text is hashed (SHA-256).
    pub seed: Option<String>,
    pub deal: Option<DealBody>,
    /// Turn clocks: without one a seat may think as long as the game lives.
    pub clock: Option<ClockBody>,
}

/// A game's clock (docs/bots.md, "Clocks, resigning"). Only `bank_secs` is
/// required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"bank_secs": 120, "increment_secs": 5, "on_timeout": "bot", "timeout_bot": "greedy", "abandon_after": 3}))]
pub struct ClockBody {
    /// Each human seat's bank of time, 1 to 86400 seconds.
    #[schema(minimum = 1, maximum = 86400)]
    pub bank_secs: u64,
    /// Added to a seat's bank after each of its moves; 0 to 3600, default 0.
    #[schema(minimum = 0, maximum = 3600)]
    pub increment_secs: Option<u64>,
    /// `bot` (default) or `forfeit` (two sides only).
    #[schema(value_type = Option<service::OnTimeout>)]
    pub on_timeout: Option<String>,
    /// The level of the bot that moves for a seat out of time (default `greedy`).
    #[schema(value_type = Option<super::rules::BotLevelDoc>)]
    pub timeout_bot: Option<String>,
    /// Timeouts in a row after which the bot takes the seat over; 1 to 100, default 3.
    #[schema(minimum = 1, maximum = 100)]
    pub abandon_after: Option<u64>,
}

impl ClockBody {
    /// The settings, with every word checked (an unknown one names its field).
    pub fn parse(&self) -> Result<service::ClockSettings, String> {
        let on_timeout = match self.on_timeout.as_deref() {
            None | Some("bot") => service::OnTimeout::Bot,
            Some("forfeit") => service::OnTimeout::Forfeit,
            Some(other) => {
                return Err(format!(
                    "clock.on_timeout: `bot` or `forfeit`, not {other:?}"
                ));
            }
        };
        let timeout_bot = match self.timeout_bot.as_deref() {
            None => Level::Greedy,
            Some(text) => text
                .parse()
                .map_err(|e| format!("clock.timeout_bot: {e}"))?,
        };
        Ok(service::ClockSettings {
            bank_secs: self.bank_secs,
            increment_secs: self.increment_secs.unwrap_or(0),
            on_timeout,
            timeout_bot,
            abandon_after: self.abandon_after.unwrap_or(3),
        })
    }
}

/// `POST /v1/games/{id}/seats`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "alice"}))]
pub struct JoinGame {
    /// 1 to 32 characters once leading and trailing white space is trimmed; no control,
    /// format or separator characters (Unicode Cc, Cf, Zl, Zp), and not a built-in level's
    /// look (`Expert Bot`, `greedy`). Required, unless the request carries a player's key:
    /// the seat then shows the player's name.
    #[schema(
        min_length = 1,
        max_length = 32,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub name: Option<String>,
    /// The seat wanted (0 to the game's seats less one); default the lowest free one.
    #[schema(maximum = 3)]
    pub seat: Option<u8>,
}

/// The answer to taking a seat. The token is shown this once.
#[derive(Serialize, ToSchema)]
pub struct SeatGranted {
    pub seat: u8,
    /// The seat's bearer secret: send it as `Authorization: Bearer <token>`.
    pub token: String,
    pub view: GameView,
}

/// An open game in the lobby.
#[derive(Serialize, ToSchema)]
pub struct GameSummary {
    #[schema(format = Uuid)]
    pub game_id: String,
    #[schema(schema_with = preset_schema)]
    pub preset: &'static str,
    pub seats: u8,
    pub free_seats: Vec<u8>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Created with a `seed` or a `deal`: its creator may know every hand.
    pub prearranged: bool,
    /// Per seat, the name shown there (`null` while free).
    pub names: Vec<Option<String>>,
    /// Per seat, the player it is bound to (taken with a player's key), by id; `null`
    /// for a seat taken anonymously, whatever its name, or played by a bot, or free.
    pub player_ids: Vec<Option<String>>,
}

/// News of the lobby, on `GET /v1/lobby/events`.
#[derive(Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = LobbyEvent)]
pub enum LobbyEventView {
    /// A game was listed: it waits for players.
    Opened { game: GameSummary },
    /// Its last seat was taken: it left the list and started.
    Filled {
        #[schema(format = Uuid)]
        game_id: String,
    },
    /// Its match ended.
    Finished {
        #[schema(format = Uuid)]
        game_id: String,
    },
    /// News was lost: this stream fell behind (more news came at once than it could
    /// hold) or the server lost its subscription for a moment. List the open games again
    /// (`GET /v1/games?status=waiting`); the stream goes on with the news from now.
    Resync {},
}

impl LobbyEventView {
    /// `None` for an opened game gone before its news could be shown.
    pub fn of(event: &service::LobbyEvent) -> Option<LobbyEventView> {
        let game_id = event.game_id.clone();
        Some(match event.news {
            service::LobbyNews::Opened => LobbyEventView::Opened {
                game: GameSummary::of(event.view.as_ref()?),
            },
            service::LobbyNews::Filled => LobbyEventView::Filled { game_id },
            service::LobbyNews::Finished => LobbyEventView::Finished { game_id },
        })
    }

    /// The event's name on the stream (its `event:` field), as its `type`.
    pub fn name(&self) -> &'static str {
        match self {
            LobbyEventView::Opened { .. } => "opened",
            LobbyEventView::Filled { .. } => "filled",
            LobbyEventView::Finished { .. } => "finished",
            LobbyEventView::Resync {} => "resync",
        }
    }
}

/// A page of open games, newest first.
#[derive(Serialize, ToSchema)]
pub struct GameList {
    pub games: Vec<GameSummary>,
    pub page: usize,
    pub per_page: usize,
}

impl GameSummary {
    pub fn of(s: &View) -> GameSummary {
        GameSummary {
            game_id: s.id.clone(),
            preset: s.preset.name(),
            seats: s.seats.len() as u8,
            free_seats: s.free_seats.clone(),
            created_ms: s.created_ms,
            prearranged: s.prearranged,
            names: s.seats.iter().map(|seat| seat.name.clone()).collect(),
            player_ids: s.players.clone(),
        }
    }
}
