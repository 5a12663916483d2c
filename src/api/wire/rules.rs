//! The rules object and the words the engine and the service serialise themselves: only
//! their schemas are written here, so the document names exactly what is sent.

use utoipa::ToSchema;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

use crate::engine::RulesPatch;
use crate::engine::rules::{
    BlockedAward, BlockedTie, DoubleValue, DrawRule, LeadDoubleCount, MAX_ROUNDS, MAX_TARGET,
    NextLeader, Opening, Scoring, Spinner, WhenStuck,
};
use crate::service::{self, Status};

/// A body's `rules`, refused naming the field at fault (`rules.target: ...`): serde names
/// the type it expected but not which field of a nested object held the value.
pub(super) fn rules_named<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<RulesPatch>, D::Error> {
    use serde::Deserialize;
    use serde::de::Error;
    let Some(value) = Option::<serde_json::Value>::deserialize(d)? else {
        return Ok(None);
    };
    RulesPatch::deserialize(&value).map(Some).map_err(|whole| {
        let at_fault = value.as_object().and_then(|fields| {
            fields.iter().find_map(|(name, v)| {
                let alone =
                    serde_json::Value::Object([(name.clone(), v.clone())].into_iter().collect());
                RulesPatch::deserialize(&alone).err().map(|e| {
                    // A number out of its field's range says the range, not the parser's type.
                    match integer_range(name).filter(|_| v.is_number()) {
                        Some((lo, hi)) => format!("rules.{name} must be between {lo} and {hi}"),
                        None => format!("rules.{name}: {e}"),
                    }
                })
            })
        });
        D::Error::custom(at_fault.unwrap_or_else(|| format!("rules: {whole}")))
    })
}

/// An integer rule's range, `None` for a rule that is not a number: the bounds of the
/// engine's parser (probed, not restated), narrowed for the match's length to what the
/// engine's validation accepts. The schema and the refusals both read it.
fn integer_range(name: &str) -> Option<(u64, u64)> {
    let parses = |value: u64| {
        serde_json::from_value::<RulesPatch>(serde_json::json!({ name: value })).is_ok()
    };
    if !parses(0) {
        return None;
    }
    match name {
        "target" => return Some((1, MAX_TARGET.into())),
        "rounds" => return Some((1, MAX_ROUNDS.into())),
        _ => {}
    }
    [u8::MAX.into(), u16::MAX.into(), u32::MAX.into()]
        .into_iter()
        .find(|&max: &u64| !parses(max + 1))
        .map(|max| (0, max))
}

pub(super) fn words(
    values: impl IntoIterator<Item = &'static str>,
    description: &str,
) -> RefOr<Schema> {
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

/// A complete rule set (docs/rules.md, "A rule set"). Shown in every view and preset.
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
        for (name, property) in object.properties.iter_mut() {
            if let RefOr::T(Schema::Object(field)) = property
                && let Some((lo, hi)) = integer_range(name)
            {
                field.minimum = Some(lo.into());
                field.maximum = Some(hi.into());
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

/// The schemas of the engine's and the bots' words, which a crate of their own cannot
/// implement utoipa's traits for: fields of those types name these with `value_type`.
pub struct BotLevelDoc;
pub struct EndNameDoc;
pub struct RoundEndReasonDoc;
pub struct MatchEndDoc;

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
    BotLevelDoc,
    "BotLevel",
    ["random", "greedy", "expert", "master"],
    Some("A bot level.")
);
word_schema!(
    EndNameDoc,
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
    RoundEndReasonDoc,
    "RoundEndReason",
    ["domino", "blocked", "stuck"],
    None
);
word_schema!(
    MatchEndDoc,
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
word_schema!(
    service::Aborted,
    "Aborted",
    ["no_move"],
    Some(
        "Why a game made rated was not rated: it ended before every side made a move of its own (resigned, timed out or abandoned at once)."
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Preset;
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
}
