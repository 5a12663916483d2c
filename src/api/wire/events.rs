//! What a move caused, as the caller may see it: the events of a move's answer, the log
//! and the event stream.

use serde::Serialize;
use utoipa::ToSchema;

use crate::engine::{End, Event};
use crate::service::View;

use super::*;

/// What a move caused, as the caller may see it.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schema(as = Event)]
pub enum EventView {
    RoundStarted {
        round: u16,
        leader: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<TileText>)]
        start_tile: Option<String>,
    },
    /// `points`: what the play counted; `credited`: whether they were scored (false when
    /// not claimed under muggins rules).
    Played {
        seat: u8,
        #[schema(value_type = TileText)]
        tile: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<super::rules::EndNameDoc>)]
        end: Option<End>,
        points: u16,
        credited: bool,
    },
    /// `tile` only for the seat that drew.
    Drew {
        seat: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<TileText>)]
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
    /// Events already in the caller's visible form, rendered for the game `view`.
    pub fn all(events: &[Event], view: &View) -> Vec<EventView> {
        let (seats, sides) = (view.seats.len(), view.scores.len());
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
