//! What a tournament was made to be: its name, creator, preset and rules, format, rounds,
//! clock, start and size. Part of its record ([`super::record::Tournament`]), stored in
//! its place there, and set by the tournaments alone (at its making, and its rounds at
//! the start).

use serde::{Deserialize, Serialize};

use crate::engine::{Preset, RulesPatch};
use crate::service::games::clock::ClockSettings;
use crate::service::matchmaking::invitation::Party;

/// How a tournament pairs its players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    Swiss,
    RoundRobin,
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Swiss, Format::RoundRobin];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Swiss => "swiss",
            Format::RoundRobin => "round_robin",
        }
    }
}

/// What a tournament was made to be (and the rounds it plays, worked out at the start).
/// Stored in its place in the record: postcard writes a nested struct as its fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Terms {
    pub(super) name: String,
    pub(super) creator: Party,
    pub(super) created_ms: u64,
    pub(super) preset: Preset,
    #[serde(with = "crate::service::matchmaking::invitation::patch_as_json")]
    pub(super) overrides: RulesPatch,
    pub(super) format: Format,
    /// Rounds it plays: at the start, a Swiss's default is worked out from its entrants,
    /// and a round robin's is implied.
    pub(super) rounds: u16,
    /// The rounds the creator asked for, if any.
    pub(super) rounds_asked: Option<u16>,
    pub(super) duplicate: bool,
    pub(super) clock: ClockSettings,
    pub(super) starts_at_ms: u64,
    pub(super) max_players: u16,
    pub(super) rated: bool,
}

impl Terms {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn creator(&self) -> &Party {
        &self.creator
    }

    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn preset(&self) -> Preset {
        self.preset
    }

    pub fn overrides(&self) -> &RulesPatch {
        &self.overrides
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Rounds it plays (0 until the start works them out for a Swiss that named none).
    pub fn rounds(&self) -> u16 {
        self.rounds
    }

    pub fn duplicate(&self) -> bool {
        self.duplicate
    }

    pub fn clock(&self) -> &ClockSettings {
        &self.clock
    }

    pub fn starts_at_ms(&self) -> u64 {
        self.starts_at_ms
    }

    pub fn max_players(&self) -> u16 {
        self.max_players
    }

    pub fn rated(&self) -> bool {
        self.rated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TournamentId;
    use crate::service::tournaments::DEFAULT_CLOCK;
    use crate::service::tournaments::record::{Tournament, TournamentStatus};

    #[test]
    fn the_terms_are_stored_where_their_fields_stood_so_format_2_is_unchanged() {
        let terms = Terms {
            name: "Open".into(),
            creator: Party {
                id: "a".into(),
                name: "ann".into(),
            },
            created_ms: 1_000,
            preset: Preset::Draw,
            overrides: RulesPatch {
                rounds: Some(Some(3)),
                ..RulesPatch::default()
            },
            format: Format::Swiss,
            rounds: 4,
            rounds_asked: None,
            duplicate: true,
            clock: DEFAULT_CLOCK,
            starts_at_ms: 2_000,
            max_players: 16,
            rated: false,
        };
        let t = Tournament {
            id: TournamentId::from(uuid::Uuid::nil()),
            terms: terms.clone(),
            status: TournamentStatus::Registering,
            reason: None,
            entrants: Vec::new(),
            round: 0,
            pairings: Vec::new(),
            byes: Vec::new(),
            seed: [7; 32],
            address: None,
            saved_ms: 3_000,
            deals_per_pairing: 1,
            waiting: None,
        };
        // The record's fields in their order before `Terms` (commit 45671cc), flat: a
        // tuple is written as a struct is, its fields one after another.
        let overrides = serde_json::to_string(&terms.overrides).unwrap();
        let head = (
            t.id,
            terms.name,
            terms.creator,
            terms.created_ms,
            terms.preset,
        );
        let made = (overrides, terms.format, terms.rounds, terms.rounds_asked);
        let rest = (
            terms.duplicate,
            terms.clock,
            terms.starts_at_ms,
            terms.max_players,
        );
        let state = (terms.rated, t.status, &t.reason, &t.entrants, t.round);
        let tail = (&t.pairings, &t.byes, t.seed, t.address, t.saved_ms);
        let flat = (head, made, rest, state, tail);
        let bytes = t.encode();
        let old = postcard::to_allocvec(&flat).unwrap();
        assert_eq!(&bytes[1..1 + old.len()], &old[..]);
        assert_eq!(Tournament::decode(&bytes).unwrap(), t);
    }
}
