//! Where bots think: a bounded pool of blocking threads, never the async workers.
//!
//! A bot's move costs up to a few milliseconds (the expert's search) and a table of bots
//! plays hundreds of them: on an async worker that would stall every request sharing it.
//! So bots think on tokio's blocking threads, at most `BOT_THREADS` at once (a semaphore,
//! fair: first come, first served), so they cannot take every blocking thread either. Each
//! run has a time budget: bots answering inside a request stop at `BOT_BUDGET_MS`, the
//! wait for a thread included, and whatever they did not play is played in the
//! background, in runs of the same budget.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::metrics::{BotPlace, Metrics};

use super::Error;

/// How bots may think.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotSettings {
    /// Bots thinking at once, at most (`BOT_THREADS`).
    pub threads: usize,
    /// The longest a request waits on bots, and the length of a background run
    /// (`BOT_BUDGET_MS`).
    pub budget: Duration,
}

pub(super) struct Pool {
    permits: Arc<Semaphore>,
    budget: Duration,
    metrics: Arc<Metrics>,
}

impl Pool {
    pub(super) fn new(settings: BotSettings, metrics: Arc<Metrics>) -> Pool {
        Pool {
            permits: Arc::new(Semaphore::new(settings.threads.max(1))),
            budget: settings.budget,
            metrics,
        }
    }

    /// Runs `think` on a pool thread with `keep_going`, true until the budget (counted from
    /// `since`, so the wait for a thread counts) is spent. In a request the budget may allow no
    /// move at all; in the background the first move is always allowed, so a run makes
    /// progress however busy the pool.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        place: BotPlace,
        since: Instant,
        think: impl FnOnce(&mut dyn FnMut() -> bool) -> T + Send + 'static,
    ) -> Result<T, Error> {
        let deadline = since + self.budget;
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Internal("the bots' pool is closed".into()))?;
        let histogram = self.metrics.bot_thinking.clone();
        let mut free_move = place == BotPlace::Background;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let started = Instant::now();
            let mut keep_going = || std::mem::take(&mut free_move) || Instant::now() < deadline;
            let value = think(&mut keep_going);
            histogram
                .get_or_create(&crate::metrics::BotLabels { r#where: place })
                .observe(started.elapsed().as_secs_f64());
            value
        })
        .await
        .map_err(|e| Error::Internal(format!("a bot's thinking failed: {e}")))
    }
}
