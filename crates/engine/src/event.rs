//! What a move causes, and the public form of it.

use serde::{Deserialize, Serialize};

use super::layout::End;
use super::tile::{Tile, TileSet};

/// How a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A seat played its last tile.
    Domino,
    /// No seat could play or draw.
    Blocked,
    /// The seat to move could neither play nor draw, under `when_stuck = end_round`.
    Stuck,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Domino => "domino",
            EndReason::Blocked => "blocked",
            EndReason::Stuck => "stuck",
        }
    }
}

/// Why a match ended: a side reached the target, the last round was played, a seat ran
/// out of time under forfeit rules, or a seat resigned (the last two only with two sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchEnd {
    Target,
    Rounds,
    Timeout,
    Resigned,
}

/// A match that ended before its time (only with two sides): `seat` resigned, or ran out
/// of time under forfeit rules (`reason` is [`MatchEnd::Resigned`] or
/// [`MatchEnd::Timeout`]); the other side wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EarlyEnd {
    pub(crate) seat: u8,
    pub(crate) reason: MatchEnd,
}

impl MatchEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchEnd::Target => "target",
            MatchEnd::Rounds => "rounds",
            MatchEnd::Timeout => "timeout",
            MatchEnd::Resigned => "resigned",
        }
    }
}

/// A finished round: every hand revealed, the awards and the scores after them.
/// `winner`, `awards` and `scores` are per side: per seat, or per team under `teams`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundResult {
    pub number: u16,
    pub reason: EndReason,
    /// The seat that played its last tile, for a domino.
    pub went_out: Option<u8>,
    /// The side that won the round; `None` for an unbroken tie or under penalty scoring
    /// when nobody went out.
    pub winner: Option<u8>,
    pub hands: [TileSet; 4],
    pub awards: [i32; 4],
    pub scores: [i32; 4],
}

/// How a match ended: a side won, or the best totals tied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Won { side: u8 },
    Drawn,
}

impl Outcome {
    pub fn winner(self) -> Option<u8> {
        match self {
            Outcome::Won { side } => Some(side),
            Outcome::Drawn => None,
        }
    }
}

/// One consequence of a move. `Copy`, so a playout can collect events without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    RoundStarted {
        number: u16,
        leader: u8,
        start_tile: Option<Tile>,
    },
    /// `points`: what the play counted under fives; `credited`: whether they were scored
    /// (false only when a muggins player did not claim points it made; a play worth 0
    /// is credited).
    Played {
        seat: u8,
        tile: Tile,
        end: Option<End>,
        points: u16,
        credited: bool,
    },
    /// `tile` is `None` in the public form: only the drawer sees it.
    Drew {
        seat: u8,
        tile: Option<Tile>,
    },
    Passed {
        seat: u8,
    },
    MugginsTaken {
        seat: u8,
        from: u8,
        points: u16,
    },
    RoundEnded(RoundResult),
    MatchEnded {
        outcome: Outcome,
        scores: [i32; 4],
        reason: MatchEnd,
    },
    /// The seat to move ran out of time; the move made for it follows (none under forfeit
    /// rules: the match ends).
    TimedOut {
        seat: u8,
    },
    /// From now on a bot plays the seat.
    Abandoned {
        seat: u8,
    },
    Resigned {
        seat: u8,
    },
}

impl Event {
    /// The event as `viewer` (a seat, or `None` for a spectator) may see it: another
    /// seat's drawn tile is hidden. Every other event is public (a round's end reveals
    /// every hand by the rules; a timeout, a resignation and an abandoned seat are the
    /// whole table's business).
    pub fn visible_to(self, viewer: Option<u8>) -> Event {
        match self {
            Event::Drew { seat, tile } if viewer != Some(seat) => Event::Drew {
                seat,
                tile: tile.and(None),
            },
            other => other,
        }
    }
}
