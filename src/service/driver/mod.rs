//! The driver: the work on games that no request waits for. Every process sweeps the
//! store's due games a few times a second ([`Driver::sweep`]): a clock run out, a rated
//! end whose reactions were lost, bots a request's budget left to move, tables of bots
//! alone from the queue; the bots are played by a task of this process under a lease in
//! the store, so that one process at a time drives a game ([`task`]).
//!
//! It stands above the games aggregate and changes a game only through its use cases
//! ([`Games::play_due`], [`Games::overdue`]); the games hand it a game whose bots are to
//! move through their port ([`Drive`]), never by naming it. What a due game needs is
//! decided in one place, [`Due::of`]: a seat to move of another kind (a bot called at
//! its URL) is one more case there.

mod task;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures_util::StreamExt;

use crate::domain::GameId;
use crate::store::{GameStore, QUEUE_END};

use super::Error;
use super::games::due::{Drive, SweepOutcome};
use super::games::record::Record;
use super::games::{Calls, Games};
use super::shared::{Shared, now_ms};

/// Games a sweep acts on at most, and how many at once.
const SWEEP_BATCH: usize = 256;
const SWEEP_CONCURRENCY: usize = 16;

pub(super) struct Driver {
    ctx: Arc<Shared>,
    games: Arc<Games>,
    calls: Arc<Calls>,
    /// Tables of bots alone this process plays at once, at most (`BOT_TABLES`).
    tables: usize,
    /// Games whose bots this process is playing in the background now (so its sweep
    /// leaves them to that task rather than race it), each true when it counts against
    /// `tables`.
    driving: Mutex<HashMap<GameId, bool>>,
    /// This process, as the holder of the games' leases it drives.
    holder: String,
    /// Itself, for the tasks it starts: they end with it.
    me: Weak<Driver>,
}

/// What a game the sweep found due needs, read from its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// A rated game's end: the reactions that must follow it once.
    Settle,
    /// Bots to move, or a webhook seat to call: a task of this process plays them.
    Bots,
    /// A clock, which may have run out.
    Clock,
}

impl Due {
    /// The one place that decides what a due game needs.
    fn of(record: &Record) -> Due {
        if record.rated_end() {
            Due::Settle
        } else if record.bots_to_move() || record.call_owed(now_ms()).is_some() {
            Due::Bots
        } else {
            Due::Clock
        }
    }
}

impl Driver {
    pub(super) fn new(
        ctx: Arc<Shared>,
        games: Arc<Games>,
        calls: Arc<Calls>,
        tables: usize,
    ) -> Arc<Driver> {
        Arc::new_cyclic(|me| Driver {
            ctx,
            games,
            calls,
            tables: tables.max(1),
            driving: Mutex::new(HashMap::new()),
            holder: uuid::Uuid::new_v4().to_string(),
            me: me.clone(),
        })
    }

    fn driving(&self) -> MutexGuard<'_, HashMap<GameId, bool>> {
        self.driving.lock().expect("not poisoned")
    }

    /// Tables of bots alone this process drives now.
    fn tables_driven(driving: &HashMap<GameId, bool>) -> usize {
        driving.values().filter(|&&table| table).count()
    }

    /// Drops `entry` (a game's id, as the index holds it) from the index of due games: its
    /// game expired, or it names none this server made.
    async fn forget_due(&self, entry: &str) {
        if let Err(e) = self
            .ctx
            .store
            .games()
            .index_deadline(entry, u64::MAX, None)
            .await
        {
            tracing::warn!(game_id = %entry, error = %e, "could not drop an expired game's deadline");
        }
    }

    /// One pass over the store's due games (every process runs this a few times a
    /// second, from `Services::sweep`): clocks that ran out and games with bots to move
    /// that no task of this process plays already, then, while this process has room,
    /// tables of bots alone from the queue. Returns how many games it acted on.
    pub(super) async fn sweep(&self) -> Result<usize, Error> {
        let due = self
            .ctx
            .store
            .games()
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
            .games()
            .due_between(0, QUEUE_END - 1, room + driven)
            .await?;
        let started = queued
            .iter()
            .filter_map(|id| GameId::stored(id))
            .filter(|id| !self.driving().contains_key(id))
            .take(room)
            .filter(|&id| self.start(id, true))
            .count();
        Ok(acted + started)
    }

    /// Acts on a due game the sweep found, as [`Due::of`] says: what must follow a rated
    /// end once, bots to move played by a task of this process (if it has room, and gets
    /// the lease), a clock that ran out at once.
    async fn tend(&self, id: GameId) -> Result<bool, Error> {
        let (version, record) = self.games.load(id).await?;
        match Due::of(&record) {
            Due::Settle => {
                self.games.overdue(id, version, &record).await?;
                Ok(true)
            }
            Due::Bots => Ok(self.start(id, false)),
            Due::Clock => Ok(match self.games.play_due(id).await? {
                SweepOutcome::Nothing => false,
                SweepOutcome::TimedOut { bots_left } | SweepOutcome::Bots { bots_left } => {
                    if bots_left {
                        self.start(id, false);
                    }
                    true
                }
            }),
        }
    }
}

impl Drive for Driver {
    fn drive(&self, id: GameId, table: bool) -> bool {
        self.start(id, table)
    }
}
