//! Playing a game: a seat's move, and the views of a game (at once, or as a long poll
//! that answers at the next version). A move writes through [`Games::update`].

use std::convert::Infallible;
use std::time::Duration;

use futures_util::StreamExt;

use crate::domain::{Caller, GameId, Seat};
use crate::engine::{Event, Game, Move, MoveError};
use crate::metrics::BotPlace;

use super::bot_work::BotWork;
use super::idempotency::RequestKey;
use super::record::{Record, Status};
use super::seating::TokenHash;
use super::view::{AfterMove, View};
use super::write::{Change, Decision, Written};
use super::{Error, Games, seat_of, viewer_of};

/// A move request after parsing.
#[derive(Debug, Clone, Copy)]
pub struct MoveRequest {
    pub mv: Move,
    pub expected_version: Option<u64>,
}

impl Games {
    /// The game as `caller`'s seat (or a spectator, without a bearer) may see it.
    pub async fn view(&self, id: GameId, caller: &Caller) -> Result<View, Error> {
        let (version, record, viewer) = self.load_as(id, caller).await?;
        Ok(View::of(id, version, &record, viewer))
    }

    /// Long poll: the view as soon as the version is greater than `after`, or after
    /// `wait` (at most the configured cap) the view unchanged.
    pub async fn view_after(
        &self,
        id: GameId,
        caller: &Caller,
        after: u64,
        wait: Duration,
    ) -> Result<View, Error> {
        let wait = wait.min(self.ctx.long_poll_max);
        let bearer = self.bearer(caller, None).await?;
        // Watched before looking, so a move stored in between still wakes the poll.
        let (mut live, version, record) = self.watch(id).await?;
        let viewer = viewer_of(&record, bearer.as_ref())?;
        self.unsealed(&record, viewer, false).await?;
        let view = View::of(id, version, &record, viewer);
        if version > after || wait.is_zero() {
            return Ok(view);
        }
        // The client has every version up to the current one: only live news can wake it.
        let news = async {
            while let Some(event) = live.next().await {
                if event.version > after {
                    return;
                }
            }
        };
        tokio::select! {
            // News, or the live stream ended (a lost connection): look again.
            () = news => self.view(id, caller).await,
            // The wait ran out, or the server is stopping: the view unchanged.
            () = tokio::time::sleep(wait) => Ok(view),
            () = self.ctx.stopping.cancelled() => Ok(view),
        }
    }

    /// Makes a move for `caller`'s seat (`hash`: its token's, when computed already),
    /// then lets the bots whose turn follows move, and stores it all as one version. With
    /// a key, a retry of the same request gets the first answer again.
    pub async fn make_move(
        &self,
        id: GameId,
        caller: &Caller,
        hash: Option<TokenHash>,
        request: MoveRequest,
        key: Option<&RequestKey>,
    ) -> Result<AfterMove, Error> {
        let bearer = self
            .bearer(caller, hash)
            .await?
            .ok_or_else(|| Error::Internal("a move without a bearer".into()))?;
        let updated = self
            .update::<_, Infallible>(
                id,
                key.map(|key| (key, Some(&bearer))),
                |version, _, record| {
                    let seat = seat_of(record, &bearer)?;
                    seat_moves(version, record, seat, request, BotPlace::Request)
                },
            )
            .await?;
        Ok(match updated {
            Written::Saved {
                version,
                record,
                value: (seat, mut events),
                thought,
                ..
            } => {
                if record.bots_to_move() || record.called_to_move().is_some() {
                    self.drive(id, false);
                }
                events.extend(thought.iter().map(|e| e.visible_to(Some(seat))));
                AfterMove {
                    view: View::of(id, version, &record, Some(seat)),
                    events,
                }
            }
            Written::Repeated { stored, record, .. } => {
                let receipt = stored.receipt;
                let (then, events) = receipt.replay(&record)?;
                AfterMove {
                    view: View::of(id, receipt.version, &then, Some(receipt.seat)),
                    events,
                }
            }
        })
    }
}

/// Seat `seat`'s move `request` on `record` at `version`: the change to store, or why it
/// is refused (the game changes not).
pub(super) fn seat_moves(
    version: u64,
    record: &mut Record,
    seat: u8,
    request: MoveRequest,
    place: BotPlace,
) -> Result<Decision<(u8, Vec<Event>), Infallible>, Error> {
    if record.game.abandoned(seat) {
        return Err(Error::SeatAbandoned);
    }
    match record.status() {
        Status::Waiting => return Err(Error::NotStarted),
        Status::Finished => return Err(Error::Finished),
        Status::Playing => {}
    }
    if let Some(expected) = request.expected_version
        && expected != version
    {
        return Err(Error::VersionConflict { current: version });
    }
    let mut events = Vec::new();
    let played = record
        .game
        .play_into(seat, request.mv, &mut events)
        .map_err(|e| refuse(&record.game, Seat::new(seat), e))?;
    let events: Vec<_> = events.iter().map(|e| e.visible_to(Some(seat))).collect();
    Ok(Decision::Store(Change {
        value: (seat, events),
        mover: Some(seat),
        moves: vec![(seat, played)],
        seat: Some(seat),
        unlist: false,
        relist: false,
        think: BotWork::bots(record, place),
    }))
}

/// Maps an engine refusal to the service's error, with the seat's legal moves.
fn refuse(game: &Game, seat: Seat, e: MoveError) -> Error {
    match e {
        MoveError::GameOver => Error::Finished,
        MoveError::NotYourTurn { .. } => Error::NotYourTurn(e.to_string()),
        other => Error::IllegalMove {
            message: other.to_string(),
            legal: game.project(Some(seat.index())).legal_moves,
        },
    }
}
