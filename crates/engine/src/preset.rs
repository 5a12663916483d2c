//! The six presets, one per rule sheet of docs/rules.md: their names, what a player reads
//! of each, and the rule set each stands for.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::rules::*;

/// The six presets, one per rule sheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    Classic,
    Block,
    Draw,
    AllFives,
    Muggins,
    Penalty,
}

impl Preset {
    pub const ALL: [Preset; 6] = [
        Preset::Classic,
        Preset::Block,
        Preset::Draw,
        Preset::AllFives,
        Preset::Muggins,
        Preset::Penalty,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Classic => "classic",
            Preset::Block => "block",
            Preset::Draw => "draw",
            Preset::AllFives => "all_fives",
            Preset::Muggins => "muggins",
            Preset::Penalty => "penalty",
        }
    }

    /// The rule sheet it follows, for people reading the preset list.
    pub fn description(self) -> &'static str {
        match self {
            Preset::Classic => {
                "The classic block game (seed 000): highest double leads, no drawing, blocked rounds scored by difference, ties to the lowest tile; 100 points."
            }
            Preset::Block => {
                "Block game (seed 002): no drawing; the lightest hand takes all others when blocked, ties split; 100 points."
            }
            Preset::Draw => {
                "Draw game (seed 002): draw until you can play; otherwise as block; 100 points."
            }
            Preset::AllFives => {
                "All Fives (seed 001): score the open ends when they make a multiple of 5; the first double is a spinner; the winner leads next; 100 points."
            }
            Preset::Muggins => {
                "Muggins (seed 002): All Fives where you must claim your points or an opponent takes them; draw any time; a blocked round's lightest hand takes all the others; 200 points."
            }
            Preset::Penalty => {
                "Penalty game (seed 003): a start tile is turned up, 2 tiles stay in the boneyard, a stuck seat ends the round, fewest penalty points after 4 rounds wins."
            }
        }
    }

    pub fn rules(self) -> Rules {
        let block = Rules {
            max_pip: 6,
            hand_size: 7,
            teams: false,
            opening: Opening::HighestDouble,
            next_leader: NextLeader::Opening,
            spinner: Spinner::None,
            draw: DrawRule::Block,
            draw_anytime: false,
            boneyard_reserve: 0,
            when_stuck: WhenStuck::Pass,
            scoring: Scoring::Pips,
            blocked_award: BlockedAward::Others,
            blocked_tie: BlockedTie::Split,
            muggins: false,
            boneyard_to_winner: false,
            double_value: DoubleValue::BothHalves,
            double_blank_value: 0,
            lead_double_count: LeadDoubleCount::Both,
            target: Some(100),
            rounds: None,
        };
        let all_fives = Rules {
            next_leader: NextLeader::Winner,
            spinner: Spinner::FirstDouble,
            draw: DrawRule::UntilPlayable,
            scoring: Scoring::Fives,
            blocked_award: BlockedAward::Difference,
            ..block
        };
        match self {
            Preset::Classic => Rules {
                blocked_award: BlockedAward::Difference,
                blocked_tie: BlockedTie::LowestTile,
                ..block
            },
            Preset::Block => block,
            Preset::Draw => Rules {
                draw: DrawRule::UntilPlayable,
                ..block
            },
            Preset::AllFives => all_fives,
            // Seed 002's Muggins "plays like the Draw Game": a blocked round is scored
            // like the Block Game's, `others` (All Fives, seed 001, takes the difference).
            Preset::Muggins => Rules {
                blocked_award: BlockedAward::Others,
                draw_anytime: true,
                lead_double_count: LeadDoubleCount::One,
                muggins: true,
                target: Some(200),
                ..all_fives
            },
            Preset::Penalty => Rules {
                opening: Opening::StartTile,
                next_leader: NextLeader::Alternate,
                draw: DrawRule::UntilPlayable,
                boneyard_reserve: 2,
                when_stuck: WhenStuck::EndRound,
                scoring: Scoring::Penalty,
                target: None,
                rounds: Some(4),
                ..block
            },
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = RulesError;

    fn from_str(s: &str) -> Result<Preset, RulesError> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| RulesError {
                field: "preset",
                message: format!(
                    "unknown preset \"{s}\"; the presets are {}",
                    Preset::ALL.map(|p| p.name()).join(", ")
                ),
            })
    }
}
