//! The work no request waits for: the clock sweep every process runs a few times a
//! second, and the bots at tables (a table of bots alone, or the bots a request's budget
//! left to move), played by a task of this process under a lease in the store so that one
//! process at a time drives a game.

use std::collections::HashMap;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::bots;
use crate::domain::GameId;
use crate::engine::{Event, Game, Move};
use crate::metrics::BotPlace;
use crate::store::{GameStore, QUEUE_END};

use crate::service::shared::now_ms;

use super::clock::ClockSettings;
use super::clock::OnTimeout;
use super::record::Record;
use super::saved::Saved;
use super::write::{BotWork, Change, Decision, Think, Written, bots_play};
use super::{Error, Games};

/// Games a sweep acts on at most, and how many at once.
const SWEEP_BATCH: usize = 256;
const SWEEP_CONCURRENCY: usize = 16;
/// How long a process's lease on a game's bots lasts unrenewed: another process takes the
/// game over this long after its driver died. Renewed every third of it while it drives.
const LEASE_TTL: Duration = Duration::from_secs(5);
const RENEW_EVERY: Duration = Duration::from_millis(1_666);

/// What [`Games::play_due`] did with a game the sweep found due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SweepOutcome {
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
    async fn play_due(&self, id: GameId) -> Result<SweepOutcome, Error> {
        let updated = self
            .update(id, None, |_, now, record| {
                if record.bots_to_move() {
                    return Ok(Decision::Store(Change {
                        value: None,
                        mover: None,
                        moves: Vec::new(),
                        seat: None,
                        unlist: false,
                        relist: false,
                        think: BotWork::bots(record, BotPlace::Background),
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
                    value: Some((seat, in_row)),
                    mover: None,
                    moves: vec![(seat, played)],
                    seat: None,
                    unlist: false,
                    relist: false,
                    think: Some(BotWork {
                        place: BotPlace::Background,
                        think,
                    }),
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
                    .index_deadline(&id, version, record.due(now_ms()))
                    .await?;
                Ok(SweepOutcome::Nothing)
            }
            // A background change has no key, so it repeats nothing.
            Written::Repeated { .. } => Ok(SweepOutcome::Nothing),
        }
    }

    /// Whether this process has begun to stop: its bots' tasks end.
    fn is_stopping(&self) -> bool {
        self.ctx.stopping.is_cancelled()
    }

    fn driving(&self) -> MutexGuard<'_, HashMap<GameId, bool>> {
        self.driving.lock().expect("not poisoned")
    }

    /// Tables of bots alone this process drives now.
    fn tables_driven(driving: &HashMap<GameId, bool>) -> usize {
        driving.values().filter(|&&table| table).count()
    }

    /// Plays game `id`'s bots in the background, run after run, until none is to move (or,
    /// at a table of bots alone, until a table that moved less waits: [`Self::gives_way`]),
    /// unless this process does so already. `table`: it is a table of bots alone taken
    /// from the queue, counted against `BOT_TABLES` from the start (else it is counted
    /// once found to be one). Returns false when there is no room for it here: it stays in
    /// the store's queue. The bots play under a lease in the store, so that one process at
    /// a time drives a game; should this one stop, the lease expires and the game comes
    /// due again for another process's sweep.
    pub(super) fn drive(&self, id: GameId, table: bool) -> bool {
        {
            let mut driving = self.driving();
            if driving.contains_key(&id) {
                return true;
            }
            if table && Self::tables_driven(&driving) >= self.tables {
                return false;
            }
            driving.insert(id, table);
        }
        let me = self.me.clone();
        // Holds the service weakly between runs: it ends with the server.
        tokio::spawn(async move {
            let mut renewed: Option<Instant> = None;
            let mut held = false;
            while let Some(service) = me.upgrade() {
                // A stopping process leaves its games to the others, as a dead one would.
                if service.is_stopping() {
                    break;
                }
                if renewed.is_none_or(|at| at.elapsed() >= RENEW_EVERY) {
                    match service.hold(id).await {
                        Ok(true) => (renewed, held) = (Some(Instant::now()), true),
                        Ok(false) => break,
                        Err(e) => {
                            tracing::warn!(game_id = %id, error = %e, "could not take the bots' lease; the sweep tries again");
                            break;
                        }
                    }
                }
                let more = match service.drive_once(id).await {
                    Ok(more) => more,
                    Err(Error::NotFound) => {
                        service.forget_due(&id).await;
                        false
                    }
                    Err(e) => {
                        tracing::warn!(game_id = %id, error = %e, "bots could not move; the sweep tries again");
                        false
                    }
                };
                if !more {
                    break;
                }
                match service.gives_way(id).await {
                    Ok(false) => {}
                    Ok(true) => break,
                    Err(e) => {
                        tracing::debug!(game_id = %id, error = %e, "could not look for tables that moved less; plays on");
                    }
                }
            }
            if let Some(service) = me.upgrade() {
                service.driving().remove(&id);
                if held && let Err(e) = service.ctx.store.release(&id, &service.holder).await {
                    tracing::debug!(game_id = %id, error = %e, "could not give the bots' lease up; it expires");
                }
            }
        });
        true
    }

    /// Before driving game `id` (and every [`RENEW_EVERY`] while it does): whether its
    /// bots are still to move, there is room here for it, and this process holds its lease
    /// (taken or renewed). A table of bots alone is then moved out of the sweeps' sight
    /// until the lease would expire.
    async fn hold(&self, id: GameId) -> Result<bool, Error> {
        let (version, record) = self.load(id).await?;
        let calling = record.call_owed(now_ms()).is_some();
        if !record.bots_to_move() && !calling {
            // A stale place in the queue would have tables give way to it for ever.
            self.ctx
                .store
                .index_deadline(&id, version, record.due(now_ms()))
                .await?;
            return Ok(false);
        }
        let alone = record.bots_alone();
        let room = {
            let mut driving = self.driving();
            let counted = driving.get(&id).copied().unwrap_or(false);
            let room = !alone || counted || Self::tables_driven(&driving) < self.tables;
            if room {
                driving.insert(id, alone);
            }
            room
        };
        if !room {
            // Back in the queue, for whichever process has room.
            self.ctx
                .store
                .index_deadline(&id, version, record.due(now_ms()))
                .await?;
            return Ok(false);
        }
        if !self.ctx.store.lease(&id, &self.holder, LEASE_TTL).await? {
            return Ok(false);
        }
        // Out of the sweeps' sight until the lease would expire: a table of bots alone,
        // and a webhook seat being called (the call's own save indexes it again).
        if alone || calling {
            let expires = now_ms() + LEASE_TTL.as_millis() as u64;
            self.ctx
                .store
                .index_deadline(&id, version, Some(expires))
                .await?;
        }
        Ok(true)
    }

    /// After a run of game `id`: whether it is a table of bots alone that a table which has
    /// moved less waits behind, in the store's queue. If so it goes back into the queue at
    /// its own place ([`crate::store::queue_place`]) and the caller gives its lease up, so
    /// that a table just made is played within a run of those under way, not after their
    /// whole games.
    async fn gives_way(&self, id: GameId) -> Result<bool, Error> {
        let (version, record) = self.load(id).await?;
        if !record.bots_alone() {
            return Ok(false);
        }
        let Some(place) = record
            .due(now_ms())
            .filter(|&place| place > 0 && place < QUEUE_END)
        else {
            return Ok(false);
        };
        let driven = self.driving().len();
        let ahead = self.ctx.store.due_between(0, place - 1, driven + 1).await?;
        let driving = |other: &String| {
            GameId::stored(other).is_some_and(|other| self.driving().contains_key(&other))
        };
        if ahead.iter().all(driving) {
            return Ok(false);
        }
        self.ctx
            .store
            .index_deadline(&id, version, Some(place))
            .await?;
        Ok(true)
    }

    /// One run of game `id`'s bots; the lease is renewed meanwhile if the run waits long
    /// for a thread. Returns whether bots are left to move, and this process still
    /// holds the lease.
    async fn drive_once(&self, id: GameId) -> Result<bool, Error> {
        // A webhook seat to move is called first; the bots that follow move in its write.
        if self.call_turn(id).await? {
            return Ok(true);
        }
        let mut playing = std::pin::pin!(self.play_due(id));
        let mut held = true;
        loop {
            tokio::select! {
                played = &mut playing => {
                    let left = matches!(
                        played?,
                        SweepOutcome::Bots { bots_left: true } | SweepOutcome::TimedOut { bots_left: true }
                    );
                    return Ok(left && held);
                }
                () = tokio::time::sleep(RENEW_EVERY) => {
                    held &= self.ctx.store.lease(&id, &self.holder, LEASE_TTL).await.unwrap_or(false);
                }
            }
        }
    }

    /// Drops game `id`'s entry from the index of due games: it expired.
    async fn forget_due(&self, id: &str) {
        if let Err(e) = self.ctx.store.index_deadline(id, u64::MAX, None).await {
            tracing::warn!(game_id = %id, error = %e, "could not drop an expired game's deadline");
        }
    }

    /// One pass over the store's due games (every process runs this a few times a
    /// second, from `Services::sweep`): clocks that ran out and games with bots to move
    /// that no task of this process plays already, then, while this process has room,
    /// tables of bots alone from the queue. Returns how many games it acted on.
    pub(crate) async fn sweep(&self) -> Result<usize, Error> {
        let due = self
            .ctx
            .store
            .due_between(QUEUE_END, now_ms(), SWEEP_BATCH)
            .await?;
        let acted = futures_util::stream::iter(due)
            .filter(|id| {
                let driven = GameId::stored(id).is_some_and(|id| self.driving().contains_key(&id));
                std::future::ready(!driven)
            })
            .map(|id| async move {
                let tended = match GameId::stored(&id) {
                    Some(game) => self.tend(game).await,
                    // Not an id this server made: nothing will ever be due there.
                    None => Err(Error::NotFound),
                };
                match tended {
                    Ok(acted) => acted,
                    // Expired since it was indexed: nothing will ever be due there.
                    Err(Error::NotFound) => {
                        self.forget_due(&id).await;
                        false
                    }
                    Err(e) => {
                        tracing::warn!(game_id = %id, error = %e, "a due game could not be acted on; retried on the next sweep");
                        false
                    }
                }
            })
            .buffer_unordered(SWEEP_CONCURRENCY)
            .filter(|&acted| std::future::ready(acted))
            .count()
            .await;
        let (driven, room) = {
            let driving = self.driving();
            let tables = Self::tables_driven(&driving);
            (driving.len(), self.tables.saturating_sub(tables))
        };
        if room == 0 {
            return Ok(acted);
        }
        // The queue's first entries may be games this process drives (the memory store
        // queues a table again with each of its saves): look past them.
        let queued = self
            .ctx
            .store
            .due_between(0, QUEUE_END - 1, room + driven)
            .await?;
        let started = queued
            .iter()
            .filter_map(|id| GameId::stored(id))
            .filter(|id| !self.driving().contains_key(id))
            .take(room)
            .filter(|&id| self.drive(id, true))
            .count();
        Ok(acted + started)
    }

    /// Acts on a due game the sweep found: bots to move are played by a task of this
    /// process (if it has room, and gets the lease), a clock that ran out at once.
    async fn tend(&self, id: GameId) -> Result<bool, Error> {
        let (version, record) = self.load(id).await?;
        if record.rated_end() {
            // What had to follow its end once (its ratings), if the process that
            // finished it did not see to it.
            let saved = Saved {
                id,
                version,
                record: &record,
                made: false,
                started: false,
                history: None,
            };
            if let Some(reactions) = self.reactions.get() {
                reactions.overdue(&saved).await?;
            }
            return Ok(true);
        }
        if record.bots_to_move() || record.call_owed(now_ms()).is_some() {
            return Ok(self.drive(id, false));
        }
        Ok(match self.play_due(id).await? {
            SweepOutcome::Nothing => false,
            SweepOutcome::TimedOut { bots_left } | SweepOutcome::Bots { bots_left } => {
                if bots_left {
                    self.drive(id, false);
                }
                true
            }
        })
    }
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
