//! Wire types: the JSON shapes of API.md, with their OpenAPI schemas.
//!
//! Kept apart from the engine's types so the engine knows nothing of HTTP. Where the wire
//! shape is the engine's or the service's own serde form (the rules, the status, bot
//! levels, ends), that type is used as it is and only its schema is written here. The
//! renderings of the service's answers ([`Seen`] and the rest) live here too, so every
//! answer is built one way. Nothing here decides a rule or what a caller may see: a view
//! shows what the service's answer holds, and nothing else.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

use crate::bots::Level;
use crate::engine::rules::{
    BlockedAward, BlockedTie, DoubleValue, DrawRule, LeadDoubleCount, MAX_ROUNDS, MAX_TARGET,
    NextLeader, Opening, Scoring, Spinner, WhenStuck,
};
use crate::engine::{
    Deal, End, EndReason, Event, LegalMove, MatchEnd, Move, Outcome, Preset, RoundResult, Rules,
    RulesPatch, Tile,
};
use crate::service::{self, Seen, Status};

// ----- the rules object (engine's serde, documented here) -----

fn words(values: impl IntoIterator<Item = &'static str>, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .description(Some(description))
        .into()
}

macro_rules! word_schemas {
    ($($fn:ident: $ty:ty, $doc:literal;)+) => {$(
        fn $fn() -> RefOr<Schema> {
            words(<$ty>::ALL.iter().map(|w| w.as_str()), $doc)
        }
    )+};
}

word_schemas! {
    opening_schema: Opening, "Who leads the first round.";
    next_leader_schema: NextLeader, "Who leads later rounds.";
    spinner_schema: Spinner, "Whether the first double is a four-way spinner.";
    draw_schema: DrawRule, "What a seat that cannot play does.";
    when_stuck_schema: WhenStuck, "What a seat that can neither play nor draw does.";
    scoring_schema: Scoring, "How rounds are scored.";
    blocked_award_schema: BlockedAward, "What the lightest hand scores in a blocked round.";
    blocked_tie_schema: BlockedTie, "Who wins a blocked round when the lightest hands tie.";
    double_value_schema: DoubleValue, "What a double counts in a hand.";
    lead_double_count_schema: LeadDoubleCount, "What a lead double with one side covered counts under fives.";
}

/// A complete rule set (RULES.md "Rule set fields"). Shown in every view and preset.
#[derive(ToSchema)]
#[schema(as = Rules)]
#[allow(dead_code)] // documentation only: the engine's `Rules` is what is serialised
pub struct RulesDoc {
    /// The set: double-6, -9, -12 or -15.
    #[schema(minimum = 6, maximum = 15, example = 6)]
    max_pip: u8,
    #[schema(example = 7)]
    hand_size: u8,
    /// Seats 0+2 against 1+3 (4 seats only).
    teams: bool,
    #[schema(schema_with = opening_schema)]
    opening: String,
    #[schema(schema_with = next_leader_schema)]
    next_leader: String,
    #[schema(schema_with = spinner_schema)]
    spinner: String,
    #[schema(schema_with = draw_schema)]
    draw: String,
    draw_anytime: bool,
    /// Tiles never drawn from the bottom of the boneyard (0 or 2).
    boneyard_reserve: u8,
    #[schema(schema_with = when_stuck_schema)]
    when_stuck: String,
    #[schema(schema_with = scoring_schema)]
    scoring: String,
    #[schema(schema_with = blocked_award_schema)]
    blocked_award: String,
    #[schema(schema_with = blocked_tie_schema)]
    blocked_tie: String,
    /// Points must be claimed with the play (fives only).
    muggins: bool,
    boneyard_to_winner: bool,
    #[schema(schema_with = double_value_schema)]
    double_value: String,
    /// 0 or 14.
    double_blank_value: u8,
    #[schema(schema_with = lead_double_count_schema)]
    lead_double_count: String,
    /// Points that end the match (1 to 2000), or null.
    #[schema(minimum = 1, maximum = 2000)]
    target: Option<u16>,
    /// Rounds that end the match (1 to 1000), or null: then the match ends after 1000
    /// rounds if no side reached the target.
    #[schema(minimum = 1, maximum = 1000)]
    rounds: Option<u16>,
}

/// The schema of `rules` in `POST /v1/games`: [`RulesDoc`]'s fields, each optional.
/// Integers are parsed to their type's whole range (a value outside it is malformed, 400);
/// a value the rules refuse is `invalid_rules` (422), so the schema bounds them by type only.
pub struct RulesOverridesDoc;

impl utoipa::PartialSchema for RulesOverridesDoc {
    fn schema() -> RefOr<Schema> {
        let RefOr::T(Schema::Object(mut object)) = RulesDoc::schema() else {
            unreachable!("a struct's schema is an object")
        };
        object.required.clear();
        object.description = Some(
            "Overrides on top of a preset: any field of `Rules`; unknown fields are refused. \
             `null` clears `target` or `rounds`."
                .into(),
        );
        object.example = Some(serde_json::json!({"max_pip": 9, "target": 250}));
        object.additional_properties = Some(Box::new(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ));
        // An integer rule's bounds are those of the engine's parser: probed, not restated.
        let parses = |name: &str, value: u64| {
            serde_json::from_value::<RulesPatch>(serde_json::json!({ name: value })).is_ok()
        };
        for (name, property) in object.properties.iter_mut() {
            if let RefOr::T(Schema::Object(field)) = property
                && parses(name, 0)
            {
                let max = [u8::MAX.into(), u16::MAX.into(), u32::MAX.into()]
                    .into_iter()
                    .find(|&max: &u64| !parses(name, max + 1));
                field.minimum = Some(0.into());
                field.maximum = max.map(Into::into);
            }
        }
        // The match's length is bounded by validation, not by its type.
        for (name, max) in [("target", MAX_TARGET), ("rounds", MAX_ROUNDS)] {
            if let Some(RefOr::T(Schema::Object(field))) = object.properties.get_mut(name) {
                field.minimum = Some(1.into());
                field.maximum = Some(max.into());
            }
        }
        RefOr::T(Schema::Object(object))
    }
}

impl ToSchema for RulesOverridesDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        "RulesOverrides".into()
    }
}

// ----- lobby -----

/// A preset of RULES.md with its full rule set.
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

/// Documents a type whose serde form is a word (a unit-variant enum in snake case) under
/// the schema name the API has always used.
macro_rules! word_schema {
    ($ty:ty, $name:literal, [$($word:literal),+], $doc:expr) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                let schema = ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some([$($word),+]));
                let doc: Option<&str> = $doc;
                schema.description(doc).into()
            }
        }

        impl ToSchema for $ty {
            fn name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
        }
    };
}

word_schema!(
    Level,
    "BotLevel",
    ["random", "greedy", "expert"],
    Some("A bot level.")
);
word_schema!(
    End,
    "EndName",
    ["left", "right", "up", "down"],
    Some("An end of the layout.")
);
word_schema!(
    Status,
    "GameStatus",
    ["waiting", "playing", "finished"],
    None
);
word_schema!(
    EndReason,
    "RoundEndReason",
    ["domino", "blocked", "stuck"],
    None
);
word_schema!(
    MatchEnd,
    "MatchEnd",
    ["target", "rounds", "timeout", "resigned"],
    Some(
        "Why the match ended: a side reached the target, the last round was played, a seat ran out of time, or one resigned."
    )
);
word_schema!(
    service::OnTimeout,
    "OnTimeout",
    ["bot", "forfeit"],
    Some("What happens to a seat that runs out of time: a bot moves for it, or its side loses.")
);

/// A built-in player for one seat.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BotSeat {
    /// 0 to the game's seats less one.
    #[schema(maximum = 3)]
    pub seat: u8,
    pub level: Level,
}

/// A fixed first deal: hands by seat and the boneyard, top first. Together they must be a
/// permutation of the set.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DealBody {
    #[schema(example = json!([["6-6", "5-5", "1-2", "0-3", "4-4", "2-6", "1-1"], ["3-3", "0-0", "2-2", "0-1", "1-3", "2-3", "5-6"]]))]
    pub hands: Vec<Vec<String>>,
    #[schema(example = json!(["0-2", "0-4", "0-5", "0-6", "1-4", "1-5", "1-6", "2-4", "2-5", "3-4", "3-5", "3-6", "4-5", "4-6"]))]
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

fn preset_schema() -> RefOr<Schema> {
    words(
        Preset::ALL.map(Preset::name),
        "The preset the rules start from (RULES.md).",
    )
}

/// `POST /v1/games`. Only `preset` is required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"preset": "all_fives", "seats": 2, "bots": [{"seat": 1, "level": "greedy"}]}))]
pub struct CreateGame {
    #[schema(schema_with = preset_schema)]
    pub preset: String,
    #[serde(default)]
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

/// A game's clock (API.md "Clocks, resigning and absent players"). Only `bank_secs` is
/// required.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"bank_secs": 120, "increment_secs": 5, "on_timeout": "bot", "timeout_bot": "greedy", "abandon_after": 3}))]
pub struct ClockBody {
    /// Each human seat's bank of time, 1 to 86400 seconds.
    pub bank_secs: u64,
    /// Added to a seat's bank after each of its moves; 0 to 3600, default 0.
    pub increment_secs: Option<u64>,
    /// `bot` (default) or `forfeit` (two sides only).
    #[schema(value_type = Option<service::OnTimeout>)]
    pub on_timeout: Option<String>,
    /// The level of the bot that moves for a seat out of time (default `greedy`).
    #[schema(value_type = Option<Level>)]
    pub timeout_bot: Option<String>,
    /// Timeouts in a row after which the bot takes the seat over; 1 to 100, default 3.
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
    /// 1 to 32 characters once leading and trailing white space is trimmed; no control
    /// characters.
    #[schema(
        min_length = 1,
        max_length = 32,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub name: String,
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
    pub game_id: String,
    pub preset: &'static str,
    pub seats: u8,
    pub free_seats: Vec<u8>,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Created with a `seed` or a `deal`: its creator may know every hand.
    pub prearranged: bool,
}

/// News of the lobby, on `GET /v1/lobby/events`.
#[derive(Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = LobbyEvent)]
pub enum LobbyEventView {
    /// A game was listed: it waits for players.
    Opened { game: GameSummary },
    /// Its last seat was taken: it left the list and started.
    Filled { game_id: String },
    /// Its match ended.
    Finished { game_id: String },
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
                game: GameSummary::of(event.seen.as_ref()?),
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

// ----- moves -----

/// A tile as text: `"a-b"`, read in either order, written `a <= b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileText(pub Tile);

impl Serialize for TileText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for TileText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TileText, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse_tile(&text)
            .map(TileText)
            .map_err(serde::de::Error::custom)
    }
}

/// A move a seat makes: the body of `POST /v1/games/{id}/moves`, and each entry of
/// `legal_moves`, which may be posted back as it is. `type` says which move, and which
/// other fields it may have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[schema(as = Move, example = json!({"type": "play", "tile": "5-3", "end": "right"}))]
pub enum MoveBody {
    /// Play a tile.
    Play {
        /// `"a-b"`, in either order.
        #[schema(value_type = String, example = "5-3")]
        tile: TileText,
        /// Omitted for the lead, or when only one end fits.
        #[serde(skip_serializing_if = "Option::is_none")]
        end: Option<End>,
        /// Points claimed with the play (muggins rules only); must equal the count. Listed
        /// moves that score carry it: post them back and the points are yours.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        claim: Option<u16>,
        /// In `legal_moves`: the points this move credits to you. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Draw from the boneyard.
    Draw {
        /// In `legal_moves`: 0. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Pass.
    Pass {
        /// In `legal_moves`: 0. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Take the points an opponent made but did not claim (muggins rules).
    Muggins {
        /// In `legal_moves`: the points the call takes. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Concede, on your turn or not: with two sides the other side wins; with three or
    /// four seats a bot plays yours to the end and play goes on. Never in `legal_moves`.
    Resign {
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
}

impl MoveBody {
    /// The move asked for, and the version it is conditional on.
    pub fn to_request(&self) -> service::MoveRequest {
        let (mv, expected_version) = match *self {
            MoveBody::Play {
                tile,
                end,
                claim,
                expected_version,
                ..
            } => (
                Move::Play {
                    tile: tile.0,
                    end,
                    claim,
                },
                expected_version,
            ),
            MoveBody::Draw {
                expected_version, ..
            } => (Move::Draw, expected_version),
            MoveBody::Pass {
                expected_version, ..
            } => (Move::Pass, expected_version),
            MoveBody::Muggins {
                expected_version, ..
            } => (Move::Muggins, expected_version),
            MoveBody::Resign { expected_version } => (Move::Resign, expected_version),
        };
        service::MoveRequest {
            mv,
            expected_version,
        }
    }

    /// A seat's move as the wire shows it, with `points` when it is listed; `None` for
    /// the server's own moves.
    fn of(mv: Move, points: Option<u16>) -> Option<MoveBody> {
        Some(match mv {
            Move::Play { tile, end, claim } => MoveBody::Play {
                tile: TileText(tile),
                end,
                claim,
                points,
                expected_version: None,
            },
            Move::Draw => MoveBody::Draw {
                points,
                expected_version: None,
            },
            Move::Pass => MoveBody::Pass {
                points,
                expected_version: None,
            },
            Move::Muggins => MoveBody::Muggins {
                points,
                expected_version: None,
            },
            Move::Resign => MoveBody::Resign {
                expected_version: None,
            },
            Move::TimedOut | Move::Abandon | Move::Forfeit => return None,
        })
    }

    /// `legal_moves` as listed: each with the points it credits.
    pub fn listed(legal: &[LegalMove]) -> Vec<MoveBody> {
        legal
            .iter()
            .filter_map(|lm| MoveBody::of(lm.mv, Some(lm.points)))
            .collect()
    }
}

/// A move only the server makes, as the log, the export and the event stream show it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMove {
    /// The seat to move ran out of time; a bot's move for it follows.
    TimedOut,
    /// The seat is handed to a bot for good.
    Abandon,
    /// The seat ran out of time under `on_timeout: forfeit`.
    Forfeit,
}

/// A move as it was made, in its public form (a draw never names its tile): a seat's, or
/// the server's.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum MadeMove {
    Seat(MoveBody),
    Server(ServerMove),
}

impl MadeMove {
    pub fn of(mv: Move) -> MadeMove {
        match mv {
            Move::TimedOut => MadeMove::Server(ServerMove::TimedOut),
            Move::Abandon => MadeMove::Server(ServerMove::Abandon),
            Move::Forfeit => MadeMove::Server(ServerMove::Forfeit),
            Move::Play { .. } | Move::Draw | Move::Pass | Move::Muggins | Move::Resign => {
                MadeMove::Seat(MoveBody::of(mv, None).expect("a seat's move has a body"))
            }
        }
    }
}

/// What a move caused, as the caller may see it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = Event)]
pub enum EventView {
    RoundStarted {
        round: u16,
        leader: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        start_tile: Option<String>,
    },
    /// `points`: what the play counted; `credited`: whether they were scored (false when
    /// not claimed under muggins rules).
    Played {
        seat: u8,
        tile: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        end: Option<End>,
        points: u16,
        credited: bool,
    },
    /// `tile` only for the seat that drew.
    Drew {
        seat: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        tile: Option<String>,
    },
    Passed {
        seat: u8,
    },
    MugginsTaken {
        seat: u8,
        from: u8,
        points: u16,
    },
    RoundEnded {
        result: RoundResultView,
    },
    MatchEnded {
        result: MatchResult,
    },
    /// The seat to move ran out of time; the move made for it follows.
    TimedOut {
        seat: u8,
    },
    /// A bot plays this seat to the end.
    Abandoned {
        seat: u8,
    },
    Resigned {
        seat: u8,
    },
}

impl EventView {
    /// Events already in the caller's visible form, rendered for the game `seen`.
    pub fn all(events: &[Event], seen: &Seen) -> Vec<EventView> {
        let (seats, sides) = (seen.seats.len(), seen.scores.len());
        events
            .iter()
            .map(|e| EventView::of(e, seats, sides))
            .collect()
    }

    /// `event` must already be in the caller's visible form.
    pub fn of(event: &Event, seats: usize, sides: usize) -> EventView {
        match *event {
            Event::RoundStarted {
                number,
                leader,
                start_tile,
            } => EventView::RoundStarted {
                round: number,
                leader,
                start_tile: start_tile.map(|t| t.to_string()),
            },
            Event::Played {
                seat,
                tile,
                end,
                points,
                credited,
            } => EventView::Played {
                seat,
                tile: tile.to_string(),
                end,
                points,
                credited,
            },
            Event::Drew { seat, tile } => EventView::Drew {
                seat,
                tile: tile.map(|t| t.to_string()),
            },
            Event::Passed { seat } => EventView::Passed { seat },
            Event::MugginsTaken { seat, from, points } => {
                EventView::MugginsTaken { seat, from, points }
            }
            Event::RoundEnded(r) => EventView::RoundEnded {
                result: RoundResultView::of(&r, seats, sides),
            },
            Event::MatchEnded {
                outcome,
                scores,
                reason,
            } => EventView::MatchEnded {
                result: MatchResult::of(outcome, reason, &scores[..sides]),
            },
            Event::TimedOut { seat } => EventView::TimedOut { seat },
            Event::Abandoned { seat } => EventView::Abandoned { seat },
            Event::Resigned { seat } => EventView::Resigned { seat },
        }
    }
}

// ----- the view -----

/// One seat as everyone sees it.
#[derive(Serialize, ToSchema)]
pub struct SeatView {
    pub seat: u8,
    pub name: Option<String>,
    pub bot: Option<Level>,
    pub hand_count: u8,
    /// The seat's team under `rules.teams` (0: seats 0+2, 1: seats 1+3), else null.
    pub team: Option<u8>,
    /// Numbers this seat is publicly known not to hold (from its passes and forced
    /// draws), so every player starts from the same information.
    pub known_missing: Vec<u8>,
    /// Its player left (resigned among three or more, or ran out of time too often): a
    /// bot plays it to the end.
    pub abandoned: bool,
}

/// An open end of the layout.
#[derive(Serialize, ToSchema)]
pub struct EndView {
    pub end: End,
    pub value: u8,
    /// The tip is a crosswise double (it counts both halves under fives).
    pub double: bool,
}

/// The arms' tiles from the lead (or, for up and down, the spinner) outward; each tile's
/// first half faces the lead.
#[derive(Serialize, ToSchema, Default)]
pub struct Arms {
    pub left: Vec<String>,
    pub right: Vec<String>,
    pub up: Vec<String>,
    pub down: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub struct LayoutView {
    pub lead: Option<String>,
    pub arms: Arms,
    pub ends: Vec<EndView>,
    /// The sum of the open ends as fives scoring counts it.
    pub count: u32,
}

#[derive(Serialize, ToSchema)]
pub struct UnclaimedView {
    pub seat: u8,
    pub points: u16,
}

#[derive(Serialize, ToSchema)]
pub struct RoundView {
    pub number: u16,
    pub leader: u8,
    /// The seat to move; null once the match is over.
    pub turn: Option<u8>,
    pub boneyard_count: u8,
    /// Points made but not claimed (muggins), open to the opponents until the next move.
    pub unclaimed: Option<UnclaimedView>,
    pub layout: LayoutView,
    /// The tile turned up to start the round (`opening: start_tile`).
    pub start_tile: Option<String>,
    /// In the leader's own view, the tile it must lead when the opening rule forces one
    /// (the highest double dealt, or the heaviest tile); null once the lead is down, when
    /// any tile may lead, and in every other view (the tile is in the leader's hidden hand
    /// until it is played).
    pub must_lead: Option<String>,
}

/// A finished round: every hand revealed.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RoundResultView {
    pub number: u16,
    pub reason: EndReason,
    /// The winning seat (a team under `rules.teams`), or null.
    pub winner: Option<u8>,
    /// The seat that played its last tile, for a domino.
    pub went_out: Option<u8>,
    pub hands: Vec<Vec<String>>,
    /// Per seat, or per team.
    pub awards: Vec<i32>,
    pub scores: Vec<i32>,
}

impl RoundResultView {
    pub fn of(r: &RoundResult, seats: usize, sides: usize) -> RoundResultView {
        RoundResultView {
            number: r.number,
            reason: r.reason,
            winner: r.winner,
            went_out: r.went_out,
            hands: r.hands[..seats]
                .iter()
                .map(|h| h.iter().map(|t| t.to_string()).collect())
                .collect(),
            awards: r.awards[..sides].to_vec(),
            scores: r.scores[..sides].to_vec(),
        }
    }
}

/// The match's result.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct MatchResult {
    /// The winning seat (team under `rules.teams`); null for a drawn match.
    pub winner: Option<u8>,
    pub scores: Vec<i32>,
    pub reason: MatchEnd,
}

impl MatchResult {
    fn of(outcome: Outcome, reason: MatchEnd, scores: &[i32]) -> MatchResult {
        MatchResult {
            winner: outcome.winner(),
            scores: scores.to_vec(),
            reason,
        }
    }

    /// The result a projection shows, once the match is over.
    fn of_projection(p: &crate::engine::Projection, scores: &[i32]) -> Option<MatchResult> {
        Some(MatchResult::of(p.outcome?, p.match_end?, scores))
    }
}

/// A game's clock as an answer shows it: its settings, and the banks now.
#[derive(Serialize, ToSchema)]
pub struct ClockView {
    pub bank_secs: u64,
    pub increment_secs: u64,
    pub on_timeout: service::OnTimeout,
    pub timeout_bot: Level,
    pub abandon_after: u64,
    /// Per seat, its bank now in milliseconds; null for a seat a bot plays.
    pub banks_ms: Vec<Option<u64>>,
    /// When the human seat to move runs out (epoch milliseconds); null when no human seat
    /// is to move. Compare it with `now_ms`, not with your own clock.
    pub deadline_ms: Option<u64>,
    /// The server's clock when it answered (epoch milliseconds).
    pub now_ms: u64,
}

impl ClockView {
    fn of(c: &service::ClockView) -> ClockView {
        let s = c.settings;
        ClockView {
            bank_secs: s.bank_secs,
            increment_secs: s.increment_secs,
            on_timeout: s.on_timeout,
            timeout_bot: s.timeout_bot,
            abandon_after: s.abandon_after,
            banks_ms: c.banks_ms.clone(),
            deadline_ms: c.deadline_ms,
            now_ms: c.now_ms,
        }
    }
}

/// The game as the caller may see it: a seat's view with its token, else the spectator's.
#[derive(Serialize, ToSchema)]
#[schema(example = view_example)]
pub struct GameView {
    pub game_id: String,
    /// Grows by one with every stored change; the `ETag`.
    pub version: u64,
    pub status: Status,
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    /// Made with a seed or a fixed deal.
    pub prearranged: bool,
    /// Your seat, or null for a spectator.
    pub you: Option<u8>,
    pub seats: Vec<SeatView>,
    /// Per seat, or per team under `rules.teams`; penalty points under penalty scoring.
    pub scores: Vec<i32>,
    /// Null while the game waits for players.
    pub round: Option<RoundView>,
    /// Your tiles; null for a spectator (and while waiting).
    pub hand: Option<Vec<String>>,
    pub your_turn: bool,
    /// Every move you may make now, in the body form of `POST .../moves`.
    pub legal_moves: Vec<MoveBody>,
    pub last_round: Option<RoundResultView>,
    pub result: Option<MatchResult>,
    /// Null for a game without a clock.
    pub clock: Option<ClockView>,
}

/// The answer to a move: your new view plus what the move (and the bots after it) caused.
#[derive(Serialize, ToSchema)]
#[schema(example = move_result_example)]
pub struct MoveResult {
    #[serde(flatten)]
    pub view: GameView,
    pub events: Vec<EventView>,
}

// Examples for the document, taken from a real game (seat 0 against a greedy bot).
fn view_example() -> serde_json::Value {
    serde_json::from_str(include_str!("examples/view.json")).expect("the example is JSON")
}

fn move_result_example() -> serde_json::Value {
    serde_json::from_str(include_str!("examples/move_result.json")).expect("the example is JSON")
}

fn pips(mask: u16) -> Vec<u8> {
    (0..16).filter(|p| mask & (1 << p) != 0).collect()
}

impl GameView {
    pub fn of(s: &Seen) -> GameView {
        let p = s.projection.as_ref();
        let sides = s.scores.len();
        let seats = s
            .seats
            .iter()
            .enumerate()
            .map(|(i, seat)| SeatView {
                seat: i as u8,
                name: seat.name.clone(),
                bot: seat.bot,
                hand_count: p.map_or(0, |p| p.hand_counts[i]),
                team: s.team(i as u8),
                abandoned: p.is_some_and(|p| p.abandoned[i]),
                known_missing: p.map_or_else(Vec::new, |p| pips(p.voids[i])),
            })
            .collect();
        let round = p.map(|p| {
            let arms = p.layout.arms();
            let strings = |arm: &Vec<(u8, u8)>| {
                arm.iter()
                    .map(|(a, b)| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
            };
            let tips = p.layout.tips();
            RoundView {
                number: p.round,
                leader: p.leader,
                turn: p.turn,
                boneyard_count: p.boneyard_count,
                unclaimed: p.unclaimed.map(|u| UnclaimedView {
                    seat: u.seat,
                    points: u.points,
                }),
                layout: LayoutView {
                    lead: p.layout.lead().map(|t| t.to_string()),
                    arms: Arms {
                        left: strings(&arms[0]),
                        right: strings(&arms[1]),
                        up: strings(&arms[2]),
                        down: strings(&arms[3]),
                    },
                    ends: tips
                        .open_ends()
                        .map(|(end, value)| EndView {
                            end,
                            value,
                            double: tips.counts_double(end, &p.rules),
                        })
                        .collect(),
                    count: p.count,
                },
                start_tile: p.start_tile.map(|t| t.to_string()),
                must_lead: p
                    .must_lead
                    .filter(|_| p.viewer == Some(p.leader))
                    .map(|t| t.to_string()),
            }
        });
        GameView {
            game_id: s.id.clone(),
            version: s.version,
            status: s.status,
            preset: s.preset.name(),
            rules: s.rules,
            prearranged: s.prearranged,
            you: s.viewer,
            seats,
            scores: s.scores.clone(),
            round,
            hand: p
                .and_then(|p| p.hand)
                .map(|h| h.iter().map(|t| t.to_string()).collect()),
            your_turn: s.your_turn(),
            legal_moves: p.map_or_else(Vec::new, |p| MoveBody::listed(&p.legal_moves)),
            last_round: p
                .and_then(|p| p.last_round)
                .map(|r| RoundResultView::of(&r, s.seats.len(), sides)),
            result: p.and_then(|p| MatchResult::of_projection(p, &s.scores)),
            clock: s.clock.as_ref().map(ClockView::of),
        }
    }
}

impl MoveResult {
    pub fn of(moved: &service::Moved) -> MoveResult {
        MoveResult {
            view: GameView::of(&moved.seen),
            events: EventView::all(&moved.events, &moved.seen),
        }
    }
}

impl GameSummary {
    pub fn of(s: &Seen) -> GameSummary {
        GameSummary {
            game_id: s.id.clone(),
            preset: s.preset.name(),
            seats: s.seats.len() as u8,
            free_seats: s.free_seats.clone(),
            created_ms: s.created_ms,
            prearranged: s.prearranged,
        }
    }
}

impl GameLog {
    pub fn of(log: &service::Log) -> GameLog {
        GameLog {
            game_id: log.seen.id.clone(),
            version: log.seen.version,
            start: EventView::all(&log.start, &log.seen),
            moves: log
                .moves
                .iter()
                .map(|entry| LogEntry {
                    index: entry.index,
                    seat: entry.seat,
                    mv: MadeMove::of(entry.mv),
                    events: EventView::all(&entry.events, &log.seen),
                })
                .collect(),
            next: log.next,
        }
    }
}

/// The fields of an export before its deals and moves (see [`ExportWriter`]).
#[derive(Serialize)]
struct ExportHead<'a> {
    game_id: &'a str,
    preset: &'static str,
    rules: Rules,
    seats: u8,
    names: Vec<Option<String>>,
    seed: String,
    result: Option<MatchResult>,
}

/// Bytes of JSON an export chunk holds, about.
const EXPORT_CHUNK: usize = 32 * 1024;

/// A [`GameExport`] written as it is sent: its fields, then its deals and moves as the
/// service makes them, a chunk of about 32 KB at a time, so a long match's export is never
/// whole in memory.
pub struct ExportWriter {
    head: Option<Vec<u8>>,
    parts: service::log::ExportParts,
    in_moves: bool,
    first: bool,
    done: bool,
}

impl ExportWriter {
    pub fn of(export: service::Export) -> ExportWriter {
        let s = &export.seen;
        let head = ExportHead {
            game_id: &s.id,
            preset: s.preset.name(),
            rules: s.rules,
            seats: s.seats.len() as u8,
            names: s.seats.iter().map(|seat| seat.name.clone()).collect(),
            seed: export.seed.to_hex(),
            result: s
                .projection
                .as_ref()
                .and_then(|p| MatchResult::of_projection(p, &s.scores)),
        };
        let mut head = serde_json::to_vec(&head).expect("an export serialises");
        head.pop(); // its closing brace: the deals and moves follow
        head.extend_from_slice(br#","deals":["#);
        ExportWriter {
            head: Some(head),
            parts: export.parts,
            in_moves: false,
            first: true,
            done: false,
        }
    }

    /// The next chunk; `None` after the last. An error ends the export unfinished (the
    /// stored history does not replay): the client sees the answer cut short.
    pub fn chunk(&mut self) -> Option<Result<Vec<u8>, service::Error>> {
        if self.done {
            return None;
        }
        let mut buf = self
            .head
            .take()
            .unwrap_or_else(|| Vec::with_capacity(EXPORT_CHUNK + 1024));
        while buf.len() < EXPORT_CHUNK {
            let part = match self.parts.next() {
                Some(Ok(part)) => part,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    if !self.in_moves {
                        buf.extend_from_slice(br#"],"moves":["#);
                    }
                    buf.extend_from_slice(b"]}");
                    self.done = true;
                    break;
                }
            };
            if matches!(part, service::ExportPart::Move(..)) && !self.in_moves {
                buf.extend_from_slice(br#"],"moves":["#);
                (self.in_moves, self.first) = (true, true);
            }
            if !std::mem::take(&mut self.first) {
                buf.push(b',');
            }
            let written = match part {
                service::ExportPart::Deal(deal) => {
                    serde_json::to_writer(&mut buf, &DealBody::from_deal(&deal))
                }
                service::ExportPart::Move(seat, mv) => {
                    serde_json::to_writer(&mut buf, &ExportedMove::of((seat, mv)))
                }
            };
            written.expect("an export serialises");
        }
        Some(Ok(buf))
    }
}

impl ExportedMove {
    pub fn of((seat, mv): (u8, Move)) -> ExportedMove {
        ExportedMove {
            seat,
            mv: MadeMove::of(mv),
        }
    }
}

/// One entry of the move log.
#[derive(Serialize, ToSchema)]
pub struct LogEntry {
    /// The move's place in the match's history: the `n`th move made at the table, from 1.
    /// A page's `next` is the last index it holds.
    pub index: u64,
    pub seat: u8,
    #[serde(rename = "move")]
    pub mv: MadeMove,
    /// What it caused, as the caller may see it (another seat's draws are "drew a tile").
    pub events: Vec<EventView>,
}

/// A page of the move log: the moves after the page's `after` index, oldest first.
#[derive(Serialize, ToSchema)]
pub struct GameLog {
    pub game_id: String,
    /// The game's version when the page was read.
    pub version: u64,
    /// The first round's deal events (who leads, the start tile), which precede every
    /// move: on the first page (`after` 0) only, empty on the others.
    pub start: Vec<EventView>,
    /// At most `limit` moves.
    pub moves: Vec<LogEntry>,
    /// The `after` to ask for the next page (the last index of this one); null on the
    /// last page. A game in play has more moves later: ask after the last index again.
    pub next: Option<u64>,
}

/// A finished game, complete: enough to replay it exactly. Sent as it is made (chunked):
/// a long match's export is never whole in the server's memory, and an answer cut short
/// means the server could not finish it.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // the export's schema: its JSON is written by `ExportWriter`
pub struct GameExport {
    pub game_id: String,
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub seats: u8,
    pub names: Vec<Option<String>>,
    /// The seed of every shuffle, hex (32 bytes); a text seed is hashed with SHA-256.
    /// Created again with `"seed": "hex:" + seed` and these rules and seats, a game deals
    /// the same rounds.
    pub seed: String,
    /// Every round's deal, in order.
    pub deals: Vec<DealBody>,
    pub moves: Vec<ExportedMove>,
    pub result: Option<MatchResult>,
}

#[derive(Serialize, ToSchema)]
pub struct ExportedMove {
    pub seat: u8,
    #[serde(rename = "move")]
    pub mv: MadeMove,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use utoipa::PartialSchema;

    /// The documented rules object names exactly the fields the engine serialises.
    #[test]
    fn the_rules_schema_names_exactly_the_engines_fields() {
        let json = serde_json::to_value(Preset::Classic.rules()).unwrap();
        let mut engine: Vec<String> = json.as_object().unwrap().keys().cloned().collect();
        let schema = serde_json::to_value(RulesDoc::schema()).unwrap();
        let mut doc: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let overrides = serde_json::to_value(RulesOverridesDoc::schema()).unwrap();
        let mut over: Vec<String> = overrides["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        engine.sort();
        doc.sort();
        over.sort();
        assert_eq!(engine, doc);
        assert_eq!(engine, over);
    }

    #[test]
    fn a_legal_move_posted_back_verbatim_parses_to_the_same_move() {
        let mv = Move::Play {
            tile: "3-5".parse().unwrap(),
            end: Some(End::Right),
            claim: Some(10),
        };
        let listed = MoveBody::listed(&[LegalMove { mv, points: 10 }]);
        let body: MoveBody =
            serde_json::from_value(serde_json::to_value(&listed[0]).unwrap()).unwrap();
        assert_eq!(body.to_request().mv, mv);
    }

    #[test]
    fn a_move_body_refuses_fields_its_type_does_not_take() {
        for body in [
            json!({"type": "draw", "tile": "1-2"}),
            json!({"type": "resign", "points": 0}),
            json!({"type": "timed_out"}),
            json!({"type": "play"}),
            json!({"type": "play", "tile": "1-2", "spin": true}),
        ] {
            assert!(
                serde_json::from_value::<MoveBody>(body.clone()).is_err(),
                "{body} was accepted"
            );
        }
    }

    #[test]
    fn the_server_s_moves_are_shown_by_their_type_alone() {
        assert_eq!(
            serde_json::to_value(MadeMove::of(Move::TimedOut)).unwrap(),
            json!({"type": "timed_out"})
        );
        assert_eq!(
            serde_json::to_value(MadeMove::of(Move::Draw)).unwrap(),
            json!({"type": "draw"})
        );
    }
}
