//! What a caller may see: the service's answers. Handlers render these; none of them holds
//! the engine's whole game, so no answer can carry a hidden tile by mistake.

use crate::domain::{GameId, Seat};
use crate::engine::{Event, Preset, Projection, Rules};

use super::clock::ClockSettings;
use super::record::{Aborted, Record, Status};
use super::seating::Occupant;

/// A game as one caller (a seat, or a spectator) may see it.
#[derive(Clone, Debug)]
pub struct View {
    pub id: String,
    pub version: u64,
    pub status: Status,
    pub preset: Preset,
    pub rules: Rules,
    pub prearranged: bool,
    pub created_ms: u64,
    pub seats: Vec<Occupant>,
    /// Per seat, the id of the player it is bound to (taken with a player's key): what
    /// tells the player alice from an anonymous seat that calls itself alice.
    pub players: Vec<Option<String>>,
    pub free_seats: Vec<u8>,
    /// The caller's seat; `None` for a spectator.
    pub viewer: Option<u8>,
    /// Per side (seat, or team under `rules.teams`).
    pub scores: Vec<i32>,
    /// The caller's knowledge of the play; `None` while the game waits for players (the
    /// first round is dealt, not shown: nobody sees a hand or a move before it starts).
    pub projection: Option<Projection>,
    pub clock: Option<ClockState>,
    /// Made by a rated challenge or seek, and not aborted.
    pub rated: bool,
    /// Why a game made rated was not rated.
    pub aborted: Option<Aborted>,
}

/// A game's clock as one answer shows it.
#[derive(Clone, Debug)]
pub struct ClockState {
    pub settings: ClockSettings,
    /// Per seat, its bank now (ms); `None` for a seat a bot plays.
    pub banks_ms: Vec<Option<u64>>,
    /// When the human seat to move runs out (epoch ms), if one is to move.
    pub deadline_ms: Option<u64>,
    /// The server's clock when it answered (epoch ms): a client's offset to it.
    pub now_ms: u64,
}

impl View {
    pub(super) fn of(id: GameId, version: u64, record: &Record, viewer: Option<u8>) -> View {
        let status = record.status();
        let aborted = record.aborted();
        View {
            id: id.to_string(),
            version,
            status,
            preset: record.preset,
            rules: *record.game.rules(),
            prearranged: record.prearranged,
            created_ms: record.created_ms,
            seats: record.seating().occupants().to_vec(),
            players: (0..record.seating().occupants().len() as u8)
                .map(|seat| {
                    record
                        .seating()
                        .player_at(Seat::new(seat))
                        .map(str::to_owned)
                })
                .collect(),
            free_seats: record.seating().free_seats(),
            viewer,
            rated: record.rated && aborted.is_none(),
            aborted,
            scores: record.game.scores().to_vec(),
            projection: (status != Status::Waiting).then(|| {
                let mut p = record.game.project(viewer);
                // A bot plays an abandoned seat: its player may read, not move.
                if viewer.is_some_and(|s| record.game.abandoned(s)) {
                    p.legal_moves.clear();
                }
                p
            }),
            clock: record.clock.as_ref().map(|clock| {
                let now = crate::service::shared::now_ms();
                let bots = record.bots();
                ClockState {
                    settings: clock.settings,
                    banks_ms: (0..record.seating().occupants().len() as u8)
                        .map(Seat::new)
                        .map(|s| bots[s.at()].is_none().then(|| clock.bank_at(s, now)))
                        .collect(),
                    deadline_ms: clock.deadline(),
                    now_ms: now,
                }
            }),
        }
    }

    /// The game as it was made, in play at its first version, with nothing of how it went:
    /// how a sealed game is listed to those who may not read it.
    pub(super) fn shown_as_made(self) -> View {
        View {
            version: 1,
            status: Status::Playing,
            scores: vec![0; self.scores.len()],
            projection: None,
            clock: None,
            aborted: None,
            ..self
        }
    }

    /// The caller's seat is to move (and may: the game is in play).
    pub fn your_turn(&self) -> bool {
        self.status == Status::Playing
            && self.viewer.is_some()
            && self.projection.as_ref().is_some_and(|p| {
                p.turn == self.viewer && self.viewer.is_some_and(|s| !p.abandoned[s as usize])
            })
    }

    /// The team a seat plays for under `rules.teams` (0: seats 0+2, 1: seats 1+3).
    pub fn team(&self, seat: Seat) -> Option<u8> {
        self.rules.teams.then(|| self.rules.side_of(seat.index()))
    }
}

/// The answer to a move: the seat's new view and what the move (and the bots' after it)
/// caused, as that seat saw it.
#[derive(Clone, Debug)]
pub struct AfterMove {
    pub view: View,
    pub events: Vec<Event>,
}

/// The answer to taking a seat.
#[derive(Clone, Debug)]
pub struct NewSeat {
    pub seat: Seat,
    /// The seat's bearer secret, shown this once.
    pub token: String,
    pub view: View,
}
