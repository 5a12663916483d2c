//! Where bots think: a bounded pool of blocking threads, never the async workers.
//!
//! A bot's move costs up to a few milliseconds (the expert's search), a master's the whole
//! `BOT_BUDGET_MS` (it thinks by the clock it is handed here, or does `BOT_MASTER_WORK`),
//! and a table of bots plays hundreds of them: on an async worker that would stall every
//! request sharing it.
//! So bots think on tokio's blocking threads, at most `BOT_THREADS` at once, so they cannot
//! take every blocking thread either. Each run has a time budget: bots answering inside a
//! request stop at `BOT_BUDGET_MS`, the wait for a thread included, and whatever they did
//! not play is played in the background, in runs of the same budget.
//!
//! Threads go to games with a human first: replies to a move or a join, clocks that ran
//! out, and what a reply's budget left over ([`Priority::Human`]), first come first served.
//! Tables of bots alone ([`Priority::BotsOnly`]) take the threads nobody else is waiting
//! for, at most all but one of them, and a run of theirs stops after its current move as
//! soon as a human's job waits: however many such tables play, a human's reply waits for
//! one bot's move at most, not for their runs. Among themselves, the table that has made
//! the fewest moves goes first, so a table just made waits for the runs under way, not
//! for every run of the many tables before it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::bots::{Budget, Clock, Thinking};
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
    /// Tables of bots alone this process plays at once (`BOT_TABLES`).
    pub tables: usize,
    /// How long a `master` bot thinks a move: `BOT_BUDGET_MS` on the clock, or a fixed
    /// amount of work (`BOT_MASTER_WORK`: deterministic, for tests).
    pub master: Budget,
}

/// The wall clock a master thinking by the clock is handed (the bots read none).
struct Wall(Instant);

impl Clock for Wall {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Whose thinking it is, which decides who gets a thread first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// A game a human plays: someone waits for these moves.
    Human,
    /// A table of bots alone, with the moves it has made: nobody waits, it may go slower.
    BotsOnly { moves: u64 },
}

pub(super) struct Pool {
    shared: Arc<PoolState>,
    budget: Duration,
    master: Budget,
    metrics: Arc<Metrics>,
}

struct PoolState {
    queue: Mutex<Queue>,
    /// Human jobs waiting for a thread: a bots-only run stops after its move while any do.
    humans_waiting: AtomicUsize,
}

struct Queue {
    free: usize,
    /// Threads held by bots-only runs, and how many they may hold.
    bots_only: usize,
    bots_only_max: usize,
    humans: VecDeque<oneshot::Sender<()>>,
    /// By the moves each table has made, fewest first; first come first among equals.
    tables: VecDeque<(u64, oneshot::Sender<()>)>,
}

impl Queue {
    /// Hands free threads to the waiting, humans first. A waiter that gave up (its
    /// receiver gone) is skipped; one that gives up later hands its thread back.
    fn dispatch(&mut self) {
        while self.free > 0 {
            if let Some(tx) = self.humans.pop_front() {
                if tx.send(()).is_ok() {
                    self.free -= 1;
                }
            } else if self.bots_only < self.bots_only_max
                && let Some((_, tx)) = self.tables.pop_front()
            {
                if tx.send(()).is_ok() {
                    self.free -= 1;
                    self.bots_only += 1;
                }
            } else {
                break;
            }
        }
    }
}

/// A thread of the pool, held until dropped.
struct Permit {
    shared: Arc<PoolState>,
    priority: Priority,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut queue = self.shared.lock();
        queue.free += 1;
        if matches!(self.priority, Priority::BotsOnly { .. }) {
            queue.bots_only -= 1;
        }
        queue.dispatch();
    }
}

/// A wait for a thread; dropped before its turn came, it leaves the queue, and dropped
/// after, it hands the thread on.
struct Waiting {
    rx: oneshot::Receiver<()>,
    shared: Arc<PoolState>,
    priority: Priority,
    done: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.priority == Priority::Human {
            self.shared.humans_waiting.fetch_sub(1, Ordering::Relaxed);
        }
        if !self.done {
            self.rx.close();
            if self.rx.try_recv().is_ok() {
                drop(Permit {
                    shared: self.shared.clone(),
                    priority: self.priority,
                });
            }
        }
    }
}

impl PoolState {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing under this lock panics; a poisoned one is still consistent.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn acquire(self: &Arc<Self>, priority: Priority) -> Permit {
        // Made only once the thread is this job's: its drop hands the thread on.
        let permit = || Permit {
            shared: self.clone(),
            priority,
        };
        let rx = {
            let mut queue = self.lock();
            let free = match priority {
                Priority::Human => queue.free > 0,
                Priority::BotsOnly { .. } => {
                    queue.free > 0
                        && queue.bots_only < queue.bots_only_max
                        && queue.humans.is_empty()
                        && queue.tables.is_empty()
                }
            };
            if free {
                queue.free -= 1;
                if matches!(priority, Priority::BotsOnly { .. }) {
                    queue.bots_only += 1;
                }
                return permit();
            }
            let (tx, rx) = oneshot::channel();
            match priority {
                Priority::Human => {
                    self.humans_waiting.fetch_add(1, Ordering::Relaxed);
                    queue.humans.push_back(tx);
                }
                Priority::BotsOnly { moves } => {
                    let place = queue.tables.partition_point(|&(ahead, _)| ahead <= moves);
                    queue.tables.insert(place, (moves, tx));
                }
            }
            rx
        };
        let mut waiting = Waiting {
            rx,
            shared: self.clone(),
            priority,
            done: false,
        };
        // The sender lives in the queue until it is used: it is never dropped unsent.
        let granted = (&mut waiting.rx).await.is_ok();
        waiting.done = granted;
        debug_assert!(granted, "a waiter's sender is only dropped once sent");
        permit()
    }
}

impl Pool {
    pub(super) fn new(settings: BotSettings, metrics: Arc<Metrics>) -> Pool {
        let threads = settings.threads.max(1);
        Pool {
            shared: Arc::new(PoolState {
                queue: Mutex::new(Queue {
                    free: threads,
                    bots_only: 0,
                    bots_only_max: threads.saturating_sub(1).max(1),
                    humans: VecDeque::new(),
                    tables: VecDeque::new(),
                }),
                humans_waiting: AtomicUsize::new(0),
            }),
            budget: settings.budget,
            master: settings.master,
            metrics,
        }
    }

    /// Runs `think` on a pool thread with `keep_going`, true until the budget (counted from
    /// `since`, so the wait for a thread counts) is spent, and for a bots-only run, while
    /// no human's job waits. In a request the budget may allow no move at all; in the
    /// background the first move is always allowed, so a run makes progress however busy
    /// the pool. `think` is also given how a master thinks each of its moves: in a
    /// request, none past the request's budget.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        place: BotPlace,
        priority: Priority,
        since: Instant,
        think: impl FnOnce(&mut dyn FnMut() -> bool, Thinking<'_>) -> T + Send + 'static,
    ) -> Result<T, Error> {
        let deadline = since + self.budget;
        let permit = self.shared.acquire(priority).await;
        let histogram = self.metrics.bot_thinking.clone();
        let mut free_move = place == BotPlace::Background;
        let shared = self.shared.clone();
        let master = self.master;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let started = Instant::now();
            let mut keep_going = || {
                std::mem::take(&mut free_move)
                    || (Instant::now() < deadline
                        && (priority == Priority::Human
                            || shared.humans_waiting.load(Ordering::Relaxed) == 0))
            };
            let wall = Wall(started);
            let thinking = match master {
                Budget::Work(moves) => Thinking::work(moves),
                budget => Thinking {
                    budget,
                    clock: &wall,
                    until: (place == BotPlace::Request)
                        .then(|| deadline.saturating_duration_since(started)),
                },
            };
            let value = think(&mut keep_going, thinking);
            histogram
                .get_or_create(&crate::metrics::BotLabels { r#where: place })
                .observe(started.elapsed().as_secs_f64());
            value
        })
        .await
        .map_err(|e| Error::Internal(format!("a bot's thinking failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn pool(threads: usize, budget: Duration) -> Pool {
        Pool::new(
            BotSettings {
                threads,
                budget,
                tables: 1,
                master: Budget::Work(1_000),
            },
            Arc::new(Metrics::new()),
        )
    }

    /// Starts a job that holds its thread until told, and waits until it holds it.
    async fn hold(
        pool: &Arc<Pool>,
        priority: Priority,
    ) -> (mpsc::Sender<()>, tokio::task::JoinHandle<()>) {
        let (release, held) = mpsc::channel::<()>();
        let (started_tx, started) = oneshot::channel();
        let pool = pool.clone();
        let job = tokio::spawn(async move {
            pool.run(
                BotPlace::Background,
                priority,
                Instant::now(),
                move |_, _| {
                    started_tx.send(()).unwrap();
                    held.recv().unwrap();
                },
            )
            .await
            .unwrap();
        });
        started.await.unwrap();
        (release, job)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_humans_job_is_served_before_bots_only_jobs_queued_earlier() {
        let order = served(&[
            ("table 1", Priority::BotsOnly { moves: 0 }),
            ("table 2", Priority::BotsOnly { moves: 0 }),
            ("human", Priority::Human),
        ])
        .await;
        assert_eq!(order, ["human", "table 1", "table 2"]);
    }

    /// Jobs queued one by one while the pool's one thread is held, in `arrivals` order;
    /// the order they ran in.
    async fn served(arrivals: &[(&'static str, Priority)]) -> Vec<&'static str> {
        let pool = Arc::new(pool(1, Duration::from_secs(1)));
        let (release, holder) = hold(&pool, Priority::Human).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut jobs = Vec::new();
        for &(name, priority) in arrivals {
            let (job_pool, order) = (pool.clone(), order.clone());
            jobs.push(tokio::spawn(async move {
                job_pool
                    .run(
                        BotPlace::Background,
                        priority,
                        Instant::now(),
                        move |_, _| {
                            order.lock().unwrap().push(name);
                        },
                    )
                    .await
                    .unwrap();
            }));
            // Each in the queue before the next comes.
            let queued = || {
                let queue = pool.shared.lock();
                queue.humans.len() + queue.tables.len()
            };
            while queued() < jobs.len() {
                tokio::task::yield_now().await;
            }
        }
        release.send(()).unwrap();
        holder.await.unwrap();
        for job in jobs {
            job.await.unwrap();
        }
        order.lock().unwrap().clone()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_table_that_moved_less_is_served_first_and_equals_in_their_order() {
        let table = |moves| Priority::BotsOnly { moves };
        let order = served(&[
            ("long under way", table(400)),
            ("under way", table(40)),
            ("also under way", table(40)),
            ("just made", table(0)),
        ])
        .await;
        assert_eq!(
            order,
            ["just made", "under way", "also under way", "long under way"]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bots_only_jobs_leave_a_thread_to_humans() {
        let pool = Arc::new(pool(2, Duration::from_secs(1)));
        let (release, holder) = hold(&pool, Priority::BotsOnly { moves: 0 }).await;
        // A second table waits though a thread is free: that one is kept for humans.
        let (pool2, ran) = (pool.clone(), Arc::new(AtomicUsize::new(0)));
        let ran2 = ran.clone();
        let table = tokio::spawn(async move {
            pool2
                .run(
                    BotPlace::Background,
                    Priority::BotsOnly { moves: 0 },
                    Instant::now(),
                    move |_, _| {
                        ran2.fetch_add(1, Ordering::SeqCst);
                    },
                )
                .await
                .unwrap();
        });
        while pool.shared.lock().tables.is_empty() {
            tokio::task::yield_now().await;
        }
        pool.run(
            BotPlace::Request,
            Priority::Human,
            Instant::now(),
            |_, _| (),
        )
        .await
        .unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 0, "the table still waits");
        release.send(()).unwrap();
        holder.await.unwrap();
        table.await.unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bots_only_run_stops_after_its_move_when_a_human_waits() {
        // A long budget: only a waiting human stops the table's run early.
        let pool = Arc::new(pool(1, Duration::from_secs(600)));
        let (moving_tx, moving) = oneshot::channel();
        let table = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run(
                    BotPlace::Background,
                    Priority::BotsOnly { moves: 0 },
                    Instant::now(),
                    move |keep_going, _| {
                        let mut moves = 0u64;
                        let mut moving_tx = Some(moving_tx);
                        while keep_going() {
                            moves += 1;
                            if let Some(tx) = moving_tx.take() {
                                tx.send(()).unwrap();
                            }
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        moves
                    },
                )
                .await
                .unwrap()
            })
        };
        moving.await.unwrap();
        let started = Instant::now();
        pool.run(
            BotPlace::Request,
            Priority::Human,
            Instant::now(),
            |_, _| (),
        )
        .await
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "served long before the budget"
        );
        assert!(table.await.unwrap() >= 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wait_given_up_leaves_the_queue_and_its_thread_goes_on() {
        let pool = Arc::new(pool(1, Duration::from_secs(1)));
        let (release, holder) = hold(&pool, Priority::Human).await;
        let gone = {
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run(
                    BotPlace::Request,
                    Priority::Human,
                    Instant::now(),
                    |_, _| (),
                )
                .await
            })
        };
        while pool.shared.lock().humans.is_empty() {
            tokio::task::yield_now().await;
        }
        gone.abort();
        let _ = gone.await;
        release.send(()).unwrap();
        holder.await.unwrap();
        pool.run(
            BotPlace::Request,
            Priority::Human,
            Instant::now(),
            |_, _| (),
        )
        .await
        .unwrap();
        assert_eq!(pool.shared.lock().free, 1, "every thread back");
        assert_eq!(pool.shared.humans_waiting.load(Ordering::Relaxed), 0);
    }
}
