//! What a game due for its seats to move takes: a clock run out, or bots a request left
//! to move, played through the write path like a move ([`Games::play_due`]). When and
//! where that runs (the sweep, a task under a lease) is the driver's
//! (`crate::service::driver`), which this aggregate hands such games to through [`Drive`].

use crate::bots;
use crate::domain::GameId;
use crate::engine::{Event, Game, Move};
use crate::metrics::BotPlace;
use crate::store::GameStore;

use crate::service::shared::now_ms;

use super::bot_work::{BotWork, Think, bots_play};
use super::clock::ClockSettings;
use super::clock::OnTimeout;
use super::record::Record;
use super::saved::Saved;
use super::write::{Change, Decision, Written};
use super::{Error, Games};

/// What [`Games::play_due`] did with a game the sweep found due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SweepOutcome {
    /// Nothing was due after all.
    Nothing,
    /// A seat ran out of time.
    TimedOut { bots_left: bool },
    /// Bots moved in the background.
    Bots { bots_left: bool },
}

impl Games {
    /// Acts on game `id` if it is due: bots to move play a budget's worth of moves (in the
    /// background: a table of bots alone, or what a request's budget left), else if the
    /// seat to move has run out of time, a bot of the clock's level plays its turn (and
    /// after `abandon_after` timeouts in a row takes the seat over), or under `forfeit` its
    /// side loses. Exactly once, whichever process sweeps first: the change goes through
    /// the compare-and-set like a move.
    pub(crate) async fn play_due(&self, id: GameId) -> Result<SweepOutcome, Error> {
        let updated = self
            .update(id, None, |_, now, record| {
                if record.bots_to_move() {
                    return Ok(Decision::Store(Change {
                        think: BotWork::bots(record, BotPlace::Background),
                        ..Change::quiet(None)
                    }));
                }
                let Some(clock) = record.clock.as_mut() else {
                    return Ok(Decision::Leave(()));
                };
                if clock.deadline().is_none_or(|deadline| deadline > now) {
                    return Ok(Decision::Leave(()));
                }
                let settings = clock.settings;
                let (seat, in_row) = clock.time_out().expect("a clock with a deadline runs");
                let mv = match settings.on_timeout {
                    OnTimeout::Forfeit => Move::Forfeit,
                    OnTimeout::Bot => Move::TimedOut,
                };
                let played = record
                    .game
                    .play_into(seat, mv, &mut Vec::new())
                    .map_err(|e| Error::Internal(format!("a timeout was refused: {e}")))?;
                let abandon = u64::from(in_row) >= settings.abandon_after;
                let think: Think = Box::new(move |record, events, keep_going, thinking| {
                    timed_out_turn(
                        record, events, keep_going, thinking, seat, settings, abandon,
                    )
                });
                Ok(Decision::Store(Change {
                    moves: vec![(seat, played)],
                    think: Some(BotWork {
                        place: BotPlace::Background,
                        think,
                    }),
                    ..Change::quiet(Some((seat, in_row)))
                }))
            })
            .await?;
        match updated {
            Written::Saved {
                value,
                version,
                record,
                ..
            } => {
                let bots_left = record.bots_to_move();
                Ok(match value {
                    Some((seat, in_row)) => {
                        self.ctx.metrics.timeouts.inc();
                        tracing::info!(game_id = %id, seat, in_row, version, "a seat ran out of time");
                        SweepOutcome::TimedOut { bots_left }
                    }
                    None => SweepOutcome::Bots { bots_left },
                })
            }
            // Listed as due but nothing is due yet (the index keeps an earlier state's
            // entry until then): tell it the truth, or the sweep would look every time.
            Written::Unchanged {
                why: (),
                version,
                record,
            } => {
                self.ctx
                    .store
                    .games()
                    .index_deadline(&id, version, record.due(now_ms()))
                    .await?;
                Ok(SweepOutcome::Nothing)
            }
            // A background change has no key, so it repeats nothing.
            Written::Repeated { .. } => Ok(SweepOutcome::Nothing),
        }
    }

    /// A finished game the driver's sweep found still due: the reactions that must follow
    /// its end once (its ratings), which the process that saved it may not have run (it
    /// died after the save).
    pub(crate) async fn overdue(
        &self,
        id: GameId,
        version: u64,
        record: &Record,
    ) -> Result<(), Error> {
        let saved = Saved {
            id,
            version,
            record,
            made: false,
            started: false,
            history: None,
        };
        match self.reactions.get() {
            Some(reactions) => reactions.overdue(&saved).await,
            None => Ok(()),
        }
    }

    /// Hands game `id`, whose bots are to move with no request to play them, to the
    /// driver (none once the services are gone: stopping). `table`: a table of bots
    /// alone, just made.
    pub(super) fn drive(&self, id: GameId, table: bool) {
        if let Some(driver) = self.driver.get() {
            driver.drive(id, table);
        }
    }
}

/// Where a game with seats to move that no request plays is handed: the driver's, which
/// lives above this aggregate (it calls [`Games::play_due`]), so the write path reaches
/// it only through this port.
pub trait Drive: Send + Sync {
    /// Plays game `id`'s due seats in the background unless this process does already;
    /// false when there is no room for it here (it stays in the store's queue).
    fn drive(&self, id: GameId, table: bool) -> bool;
}

/// The turn of a seat that ran out of time, on the bots' pool: under `bot`, a bot of the
/// clock's level plays the seat's one turn (and takes the seat over when `abandon`); then
/// the bots whose turn follows move, while `keep_going` says so.
fn timed_out_turn(
    record: &mut Record,
    events: &mut Vec<Event>,
    keep_going: &mut dyn FnMut() -> bool,
    thinking: bots::Thinking<'_>,
    seat: u8,
    settings: ClockSettings,
    abandon: bool,
) -> Result<Vec<(u8, Move)>, Error> {
    let game = &mut record.game;
    let mut moves = Vec::new();
    let mut play = |game: &mut Game, mv: Move, events: &mut Vec<Event>| {
        game.play_into(seat, mv, events)
            .map(|played| moves.push((seat, played)))
            .map_err(|e| Error::Internal(format!("a timeout was refused: {e}")))
    };
    if settings.on_timeout == OnTimeout::Bot {
        // The bot plays the seat's one turn: draws and a muggins call keep
        // it, a play or a pass ends it. The seat may be to move again at
        // once (it went out and leads the next round): that is a new turn
        // with a bank of 0, its own timeout.
        for _ in 0..bots::turns::MAX_MOVES {
            if game.turn() != Some(seat) {
                break;
            }
            let level = settings.timeout_bot;
            let Some(mv) = bots::turns::choose_for(game, seat, level, thinking) else {
                break;
            };
            play(game, mv, events)?;
            if matches!(mv, Move::Play { .. } | Move::Pass) {
                break;
            }
        }
        if abandon && !game.is_over() {
            play(game, Move::Abandon, events)?;
        }
    }
    moves.extend(bots_play(record, events, keep_going, thinking));
    Ok(moves)
}
