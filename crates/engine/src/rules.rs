//! Rule sets: every option of docs/rules.md as a field, overrides on top of a preset
//! ([`super::preset`]), and validation that names the offending field.
//!
//! The serde names are the API's (`rules` in a view, overrides when a game is created), so
//! this module is the one place where those words are spelled.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use super::tile::set_size;

macro_rules! word_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }
        }
    };
}

word_enum!(
    /// Who leads the first round.
    Opening { HighestDouble = "highest_double", HeaviestTile = "heaviest_tile", DrawLots = "draw_lots", Random = "random", StartTile = "start_tile", SeatZero = "seat_zero" }
);
word_enum!(
    /// Who leads later rounds.
    NextLeader { Opening = "opening", Winner = "winner", Alternate = "alternate" }
);
word_enum!(
    /// Whether the first double becomes a four-way spinner.
    Spinner { None = "none", FirstDouble = "first_double" }
);
word_enum!(
    /// What a seat that cannot play does.
    DrawRule { Block = "block", UntilPlayable = "until_playable", One = "one" }
);
word_enum!(
    /// What a seat that can neither play nor draw does.
    WhenStuck { Pass = "pass", EndRound = "end_round" }
);
word_enum!(
    /// How rounds are scored.
    Scoring { Pips = "pips", Fives = "fives", Penalty = "penalty" }
);
word_enum!(
    /// What the lightest hand scores in a blocked round.
    BlockedAward { Others = "others", Difference = "difference" }
);
word_enum!(
    /// Who wins a blocked round when the lightest hands tie.
    BlockedTie { Split = "split", LowestTile = "lowest_tile", None = "none" }
);
word_enum!(
    /// What a double counts in a hand.
    DoubleValue { BothHalves = "both_halves", OneHalf = "one_half" }
);
word_enum!(
    /// What a lead double with one long side covered counts under fives.
    LeadDoubleCount { Both = "both", One = "one" }
);

/// Writes the rule set's fields once: [`Rules`], its partial [`RulesPatch`], and taking a
/// patch over, so a new rule is one line here.
macro_rules! rule_set {
    ($($field:ident: $ty:ty),+ $(,)?) => {
        /// A complete rule set. `Copy`; stored with every game and shown in every view.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub struct Rules {
            $(pub $field: $ty,)+
        }

        /// Partial overrides on top of a preset: every field optional, unknown fields
        /// refused. A field given as `null` sets it to nothing where the rule allows that
        /// (`target`, `rounds`), and is refused elsewhere.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RulesPatch {
            $(
                #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )+
        }

        impl Rules {
            /// Every field the patch gives, taken over as it is.
            fn take(mut self, patch: &RulesPatch) -> Rules {
                $(if let Some(value) = patch.$field {
                    self.$field = value;
                })+
                self
            }
        }
    };
}

rule_set! {
    max_pip: u8,
    hand_size: u8,
    teams: bool,
    opening: Opening,
    next_leader: NextLeader,
    spinner: Spinner,
    draw: DrawRule,
    draw_anytime: bool,
    boneyard_reserve: u8,
    when_stuck: WhenStuck,
    scoring: Scoring,
    blocked_award: BlockedAward,
    blocked_tie: BlockedTie,
    muggins: bool,
    boneyard_to_winner: bool,
    double_value: DoubleValue,
    double_blank_value: u8,
    lead_double_count: LeadDoubleCount,
    target: Option<u16>,
    rounds: Option<u16>,
}

/// The most rounds a match plays: `rounds` is at most this, and a match played to a
/// `target` alone ends after this many rounds if no side reached it (a round may score
/// nothing, so a target by itself bounds nothing). A thousand rounds of double-15 are
/// at most some 300,000 moves: about 300 KB stored, replayed in a fifth of a second.
pub const MAX_ROUNDS: u16 = 1000;

/// The highest `target`: 10 times the largest preset's (200). Random play reaches it
/// inside [`MAX_ROUNDS`] on every preset: in about 550 rounds in the slowest, classic
/// (blocked rounds there score the difference, under 4 points a round for the leader).
pub const MAX_TARGET: u16 = 2_000;

/// The documented default hand for each set: 7 with double-6, 9 with double-9 (seed 001),
/// and for the larger sets, which no sheet covers, one tile per pip of the set (12 and 15),
/// which keeps a boneyard for four seats.
pub fn default_hand_size(max_pip: u8) -> u8 {
    match max_pip {
        6 => 7,
        9 => 9,
        other => other,
    }
}

/// A rule set refused: `field` names the option at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for RulesError {}

fn refuse(field: &'static str, message: impl Into<String>) -> Result<(), RulesError> {
    Err(RulesError {
        field,
        message: message.into(),
    })
}

/// A field that is present is `Some`, even when it is `null` (which only an
/// `Option` rule accepts: `Some(None)`, "set to nothing"), unlike a missing field.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

impl Rules {
    /// This rule set with `patch` applied. Changing `max_pip` without `hand_size` moves the
    /// hand to that set's default, so `{"max_pip": 9}` gives the double-9 game of seed 001.
    pub fn with(self, patch: &RulesPatch) -> Rules {
        let mut r = self.take(patch);
        if patch.max_pip.is_some() && patch.hand_size.is_none() {
            r.hand_size = default_hand_size(r.max_pip);
        }
        r
    }

    /// The seat counts these rules can be played with, fewest first.
    pub fn seat_counts(&self) -> Vec<u8> {
        (2..=4).filter(|&n| self.validate(n).is_ok()).collect()
    }

    /// Refuses a rule set that contradicts itself or cannot be dealt to `seats` seats.
    pub fn validate(&self, seats: u8) -> Result<(), RulesError> {
        if !(2..=4).contains(&seats) {
            return refuse("seats", format!("a game has 2 to 4 seats, not {seats}"));
        }
        if ![6, 9, 12, 15].contains(&self.max_pip) {
            return refuse(
                "max_pip",
                "the supported sets are double-6, double-9, double-12 and double-15",
            );
        }
        if self.hand_size == 0 {
            return refuse("hand_size", "a hand holds at least one tile");
        }
        let tiles = set_size(self.max_pip);
        let start_tile = usize::from(self.opening == Opening::StartTile);
        let needed =
            seats as usize * self.hand_size as usize + start_tile + self.boneyard_reserve as usize;
        if seats as usize + start_tile + self.boneyard_reserve as usize > tiles {
            return refuse(
                "boneyard_reserve",
                format!(
                    "a reserve of {} leaves no tile for {seats} hands in double-{} ({tiles} tiles)",
                    self.boneyard_reserve, self.max_pip
                ),
            );
        }
        if needed > tiles {
            return refuse(
                "hand_size",
                format!(
                    "{seats} hands of {} tiles{}{} need {needed} tiles, but double-{} has only {tiles}",
                    self.hand_size,
                    if start_tile == 1 {
                        " plus a start tile"
                    } else {
                        ""
                    },
                    if self.boneyard_reserve > 0 {
                        format!(" plus a reserve of {}", self.boneyard_reserve)
                    } else {
                        String::new()
                    },
                    self.max_pip
                ),
            );
        }
        if self.teams && seats != 4 {
            return refuse(
                "teams",
                format!("teams (seats 0+2 against 1+3) need 4 seats, not {seats}"),
            );
        }
        if self.muggins && self.scoring != Scoring::Fives {
            return refuse("muggins", "muggins claims exist only under fives scoring");
        }
        if self.draw_anytime && self.draw == DrawRule::Block {
            return refuse(
                "draw_anytime",
                "a block game has no drawing, so it cannot allow drawing any time",
            );
        }
        if self.boneyard_to_winner && self.scoring == Scoring::Penalty {
            return refuse(
                "boneyard_to_winner",
                "penalty scoring has no winner's award to add the boneyard to",
            );
        }
        // Seed 004 pays the winner the tiles its reserve keeps back; without a reserve a
        // block game would pay the whole undealt stock.
        if self.boneyard_to_winner && self.boneyard_reserve == 0 {
            return refuse(
                "boneyard_to_winner",
                "the boneyard goes to the winner only in a game with a boneyard reserve (seed 004); set boneyard_reserve too",
            );
        }
        if self.double_blank_value != 0 && self.double_blank_value != 14 {
            return refuse("double_blank_value", "the double blank counts 0 or 14");
        }
        if self.target.is_none() && self.rounds.is_none() {
            return refuse(
                "target",
                "a match needs a target, a number of rounds, or both",
            );
        }
        if let Some(target) = self.target
            && !(1..=MAX_TARGET).contains(&target)
        {
            return refuse(
                "target",
                format!("a target is 1 to {MAX_TARGET} points, not {target}"),
            );
        }
        if let Some(rounds) = self.rounds
            && !(1..=MAX_ROUNDS).contains(&rounds)
        {
            return refuse(
                "rounds",
                format!("a match has 1 to {MAX_ROUNDS} rounds, not {rounds}"),
            );
        }
        Ok(())
    }

    /// The rounds after which the match ends whatever the scores: `rounds`, else
    /// [`MAX_ROUNDS`].
    pub fn last_round(&self) -> u16 {
        self.rounds.unwrap_or(MAX_ROUNDS)
    }

    /// Scores are kept per team under `teams`, else per seat.
    pub fn sides(&self, seats: u8) -> u8 {
        if self.teams { 2 } else { seats }
    }

    /// The side (seat, or team) a seat plays for.
    pub fn side_of(&self, seat: u8) -> u8 {
        if self.teams { seat % 2 } else { seat }
    }

    /// A tile's value in a hand (double_value, double_blank_value).
    pub fn tile_value(&self, tile: super::Tile) -> u32 {
        if tile.is_double() {
            if tile.hi() == 0 {
                return self.double_blank_value as u32;
            }
            if self.double_value == DoubleValue::OneHalf {
                return tile.hi() as u32;
            }
        }
        tile.weight() as u32
    }

    pub fn hand_value(&self, hand: super::TileSet) -> u32 {
        hand.iter().map(|t| self.tile_value(t)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;

    #[test]
    fn every_preset_is_valid_for_every_seat_count_its_set_can_deal() {
        for p in Preset::ALL {
            for seats in 2..=4 {
                let r = p.rules();
                if p == Preset::Penalty && seats == 4 {
                    // 4 x 7 + a start tile + a reserve of 2 = 31 tiles: does not fit double-6.
                    assert_eq!(r.validate(seats).unwrap_err().field, "hand_size");
                    assert_eq!(Rules { hand_size: 6, ..r }.validate(seats), Ok(()));
                } else {
                    assert_eq!(r.validate(seats), Ok(()), "{p} with {seats} seats");
                }
            }
        }
    }

    #[test]
    fn presets_follow_the_table_of_rules_md() {
        let c = Preset::Classic.rules();
        assert_eq!(
            (c.blocked_award, c.blocked_tie, c.target),
            (BlockedAward::Difference, BlockedTie::LowestTile, Some(100))
        );
        let m = Preset::Muggins.rules();
        assert!(m.muggins && m.draw_anytime);
        assert_eq!(
            (m.lead_double_count, m.target),
            (LeadDoubleCount::One, Some(200))
        );
        // Muggins scores a blocked round like the Block Game; All Fives by difference.
        assert_eq!(m.blocked_award, BlockedAward::Others);
        assert_eq!(
            Preset::AllFives.rules().blocked_award,
            BlockedAward::Difference
        );
        let p = Preset::Penalty.rules();
        assert_eq!(
            (p.opening, p.next_leader, p.boneyard_reserve, p.rounds),
            (Opening::StartTile, NextLeader::Alternate, 2, Some(4))
        );
        assert_eq!(p.when_stuck, WhenStuck::EndRound);
    }

    #[test]
    fn overriding_the_set_moves_the_hand_to_that_sets_default() {
        let patch: RulesPatch = serde_json::from_str(r#"{"max_pip": 9}"#).unwrap();
        let r = Preset::AllFives.rules().with(&patch);
        assert_eq!((r.max_pip, r.hand_size), (9, 9));
        let patch: RulesPatch = serde_json::from_str(r#"{"max_pip": 9, "hand_size": 7}"#).unwrap();
        assert_eq!(Preset::AllFives.rules().with(&patch).hand_size, 7);
        // The larger sets, which no sheet covers: one tile per pip, dealable to 4 seats.
        for max_pip in [12, 15] {
            let patch: RulesPatch =
                serde_json::from_str(&format!(r#"{{"max_pip": {max_pip}}}"#)).unwrap();
            let r = Preset::Draw.rules().with(&patch);
            assert_eq!((r.max_pip, r.hand_size), (max_pip, max_pip));
            assert_eq!(r.validate(4), Ok(()));
        }
    }

    #[test]
    fn an_explicit_null_clears_the_target_but_a_missing_field_keeps_it() {
        let patch: RulesPatch = serde_json::from_str(r#"{"target": null, "rounds": 3}"#).unwrap();
        let r = Preset::Classic.rules().with(&patch);
        assert_eq!((r.target, r.rounds), (None, Some(3)));
        let patch: RulesPatch = serde_json::from_str(r#"{"rounds": 3}"#).unwrap();
        assert_eq!(Preset::Classic.rules().with(&patch).target, Some(100));
    }

    #[test]
    fn null_is_refused_for_a_rule_that_cannot_be_nothing() {
        for field in ["max_pip", "teams", "draw", "double_blank_value"] {
            let json = format!(r#"{{"{field}": null}}"#);
            assert!(
                serde_json::from_str::<RulesPatch>(&json).is_err(),
                "{field}"
            );
        }
    }

    #[test]
    fn penalty_s_start_tile_and_reserve_leave_no_room_for_four_hands() {
        assert_eq!(Preset::Penalty.rules().seat_counts(), [2, 3]);
        assert_eq!(Preset::Classic.rules().seat_counts(), [2, 3, 4]);
    }

    #[test]
    fn unknown_override_fields_are_refused() {
        assert!(serde_json::from_str::<RulesPatch>(r#"{"spinners": "none"}"#).is_err());
    }

    #[test]
    fn contradictions_are_refused_naming_the_field() {
        let field = |r: Rules, seats| r.validate(seats).unwrap_err().field;
        let block = Preset::Block.rules();
        assert_eq!(
            field(
                Rules {
                    muggins: true,
                    ..block
                },
                2
            ),
            "muggins"
        );
        assert_eq!(
            field(
                Rules {
                    teams: true,
                    ..block
                },
                3
            ),
            "teams"
        );
        assert_eq!(
            field(
                Rules {
                    hand_size: 8,
                    ..block
                },
                4
            ),
            "hand_size"
        );
        assert_eq!(
            field(
                Rules {
                    draw_anytime: true,
                    ..block
                },
                2
            ),
            "draw_anytime"
        );
        assert_eq!(
            field(
                Rules {
                    target: None,
                    rounds: None,
                    ..block
                },
                2
            ),
            "target"
        );
        assert_eq!(
            field(
                Rules {
                    max_pip: 7,
                    ..block
                },
                2
            ),
            "max_pip"
        );
        assert_eq!(
            field(
                Rules {
                    double_blank_value: 3,
                    ..block
                },
                2
            ),
            "double_blank_value"
        );
        assert_eq!(field(Preset::Penalty.rules(), 5), "seats");
        for (rounds, target, named) in [
            (Some(0), None, "rounds"),
            (Some(MAX_ROUNDS + 1), None, "rounds"),
            (None, Some(0), "target"),
            (None, Some(MAX_TARGET + 1), "target"),
        ] {
            assert_eq!(
                field(
                    Rules {
                        rounds,
                        target,
                        ..block
                    },
                    2
                ),
                named
            );
        }
        assert_eq!(
            Rules {
                rounds: Some(MAX_ROUNDS),
                target: Some(MAX_TARGET),
                ..block
            }
            .validate(2),
            Ok(())
        );
        // Without a reserve the winner would score the whole undealt stock.
        assert_eq!(
            field(
                Rules {
                    boneyard_to_winner: true,
                    ..block
                },
                2
            ),
            "boneyard_to_winner"
        );
        assert_eq!(
            Rules {
                boneyard_to_winner: true,
                boneyard_reserve: 2,
                ..block
            }
            .validate(2),
            Ok(())
        );
        assert_eq!(
            field(
                Rules {
                    boneyard_reserve: 200,
                    ..block
                },
                2
            ),
            "boneyard_reserve"
        );
        // 2 x 13 + start tile + reserve 2 = 29 > 28
        let msg = Rules {
            hand_size: 13,
            ..Preset::Penalty.rules()
        }
        .validate(2)
        .unwrap_err()
        .message;
        assert!(msg.contains("start tile") && msg.contains("29"), "{msg}");
    }

    #[test]
    fn doubles_count_per_the_double_value_options() {
        let r = Preset::Classic.rules();
        let t = |s: &str| s.parse().unwrap();
        assert_eq!(r.tile_value(t("6-6")), 12);
        assert_eq!(
            Rules {
                double_value: DoubleValue::OneHalf,
                ..r
            }
            .tile_value(t("6-6")),
            6
        );
        assert_eq!(r.tile_value(t("0-0")), 0);
        assert_eq!(
            Rules {
                double_blank_value: 14,
                ..r
            }
            .tile_value(t("0-0")),
            14
        );
    }
}
