//! The bots of a game played by a task of this process, run after run, under a lease in
//! the store so that one process at a time drives a game; and the tables of bots alone
//! taking turns by how far they have moved.

use std::time::{Duration, Instant};

use crate::domain::GameId;
use crate::store::{GameStore, QUEUE_END};

use crate::service::Error;
use crate::service::games::due::SweepOutcome;
use crate::service::shared::now_ms;

use super::Driver;

/// How long a process's lease on a game's bots lasts unrenewed: another process takes the
/// game over this long after its driver died. Renewed every third of it while it drives.
const LEASE_TTL: Duration = Duration::from_secs(5);
const RENEW_EVERY: Duration = Duration::from_millis(1_666);

impl Driver {
    /// Whether this process has begun to stop: its bots' tasks end.
    fn is_stopping(&self) -> bool {
        self.ctx.stopping.is_cancelled()
    }

    /// Plays game `id`'s bots in the background, run after run, until none is to move (or,
    /// at a table of bots alone, until a table that moved less waits: [`Self::gives_way`]),
    /// unless this process does so already. `table`: it is a table of bots alone taken
    /// from the queue, counted against `BOT_TABLES` from the start (else it is counted
    /// once found to be one). Returns false when there is no room for it here: it stays in
    /// the store's queue. The bots play under a lease in the store, so that one process at
    /// a time drives a game; should this one stop, the lease expires and the game comes
    /// due again for another process's sweep.
    pub(super) fn start(&self, id: GameId, table: bool) -> bool {
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
        // Holds the driver weakly between runs: it ends with the server.
        tokio::spawn(async move {
            let mut renewed: Option<Instant> = None;
            let mut held = false;
            while let Some(driver) = me.upgrade() {
                // A stopping process leaves its games to the others, as a dead one would.
                if driver.is_stopping() {
                    break;
                }
                if renewed.is_none_or(|at| at.elapsed() >= RENEW_EVERY) {
                    match driver.hold(id).await {
                        Ok(true) => (renewed, held) = (Some(Instant::now()), true),
                        Ok(false) => break,
                        Err(e) => {
                            tracing::warn!(game_id = %id, error = %e, "could not take the bots' lease; the sweep tries again");
                            break;
                        }
                    }
                }
                let more = match driver.drive_once(id).await {
                    Ok(more) => more,
                    Err(Error::NotFound) => {
                        driver.forget_due(&id).await;
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
                match driver.gives_way(id).await {
                    Ok(false) => {}
                    Ok(true) => break,
                    Err(e) => {
                        tracing::debug!(game_id = %id, error = %e, "could not look for tables that moved less; plays on");
                    }
                }
            }
            if let Some(driver) = me.upgrade() {
                driver.driving().remove(&id);
                if held && let Err(e) = driver.ctx.store.games().release(&id, &driver.holder).await
                {
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
        let (version, record) = self.games.load(id).await?;
        let calling = record.call_owed(now_ms()).is_some();
        if !record.bots_to_move() && !calling {
            // A stale place in the queue would have tables give way to it for ever.
            self.ctx
                .store
                .games()
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
                .games()
                .index_deadline(&id, version, record.due(now_ms()))
                .await?;
            return Ok(false);
        }
        if !self
            .ctx
            .store
            .games()
            .lease(&id, &self.holder, LEASE_TTL)
            .await?
        {
            return Ok(false);
        }
        // Out of the sweeps' sight until the lease would expire: a table of bots alone,
        // and a webhook seat being called (the call's own save indexes it again).
        if alone || calling {
            let expires = now_ms() + LEASE_TTL.as_millis() as u64;
            self.ctx
                .store
                .games()
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
        let (version, record) = self.games.load(id).await?;
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
        let ahead = self
            .ctx
            .store
            .games()
            .due_between(0, place - 1, driven + 1)
            .await?;
        let driving = |other: &String| {
            GameId::stored(other).is_some_and(|other| self.driving().contains_key(&other))
        };
        if ahead.iter().all(driving) {
            return Ok(false);
        }
        self.ctx
            .store
            .games()
            .index_deadline(&id, version, Some(place))
            .await?;
        Ok(true)
    }

    /// One run of game `id`'s bots, or one call of its webhook seat; the lease is renewed
    /// meanwhile (a run waiting long for a thread, a call given a long budget). Returns
    /// whether more is owed at once, and this process still holds the lease.
    async fn drive_once(&self, id: GameId) -> Result<bool, Error> {
        // A webhook seat to move is called first; the bots that follow move in its write.
        // A table of bots alone has no seat to call: its runs skip the look (a load of
        // the game each).
        let table = self.driving().get(&id).copied().unwrap_or(false);
        if !table {
            let (more, held) = self.renewing(id, self.calls.call_turn(id)).await;
            if more? {
                return Ok(held);
            }
        }
        let (played, held) = self.renewing(id, self.games.play_due(id)).await;
        let left = matches!(
            played?,
            SweepOutcome::Bots { bots_left: true } | SweepOutcome::TimedOut { bots_left: true }
        );
        Ok(left && held)
    }

    /// `work` on game `id`, renewing this process's lease on it every [`RENEW_EVERY`]
    /// until it is done: its outcome, and whether the lease is still held.
    async fn renewing<T>(&self, id: GameId, work: impl Future<Output = T>) -> (T, bool) {
        let mut work = std::pin::pin!(work);
        let mut held = true;
        loop {
            tokio::select! {
                done = &mut work => return (done, held),
                () = tokio::time::sleep(RENEW_EVERY) => {
                    held &= self.ctx.store.games().lease(&id, &self.holder, LEASE_TTL).await.unwrap_or(false);
                }
            }
        }
    }
}
