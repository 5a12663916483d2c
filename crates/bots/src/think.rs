//! How long a searching bot may think: by the clock, or a fixed amount of work.
//!
//! The bots read no clock of their own: a bot that thinks by the clock is handed one, so a
//! test can give it a clock it controls, and the fixed-work budget (tests, the arena)
//! makes the same view and seed give the same move.

use std::time::Duration;

/// A monotonic clock, read by a bot that thinks by the clock.
pub trait Clock {
    /// The time now, from any fixed origin.
    fn now(&self) -> Duration;
}

/// The clock of a bot that does a fixed amount of work: it never moves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stopped;

impl Clock for Stopped {
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

/// A decision's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// Think until this much time has passed on the clock, whatever the position.
    Time(Duration),
    /// Apply this many moves in the search (sampled games played forward), then answer:
    /// deterministic given the RNG.
    Work(u64),
}

/// A budget and the clock it is counted on.
#[derive(Clone, Copy)]
pub struct Thinking<'a> {
    pub budget: Budget,
    pub clock: &'a dyn Clock,
    /// Under a time budget, a time on `clock` to have answered by, whatever is left of the
    /// budget: a move started late in a request gets what is left of the request's.
    pub until: Option<Duration>,
}

impl Thinking<'static> {
    /// A fixed amount of work: no clock is read.
    pub fn work(moves: u64) -> Thinking<'static> {
        Thinking {
            budget: Budget::Work(moves),
            clock: &Stopped,
            until: None,
        }
    }
}

impl std::fmt::Debug for Thinking<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thinking")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// Moves applied between two looks at the clock: about a tenth of a millisecond.
pub(super) const CLOCK_EVERY: u64 = 1024;

/// A decision's budget as it is spent: moves applied, and the clock looked at now and then.
pub(super) struct Meter<'a> {
    thinking: Thinking<'a>,
    deadline: Option<Duration>,
    limit: u64,
    /// Moves counted so far.
    pub(super) moves: u64,
    next_look: u64,
    /// A world was searched whole: the clock may stop the search now (before, it may not,
    /// so that a budget too small for a world still gets one).
    pub(super) may_stop: bool,
    /// The clock ran out: the world in hand is dropped.
    pub(super) stop: bool,
}

impl<'a> Meter<'a> {
    /// A budget of at most `limit` moves, and under a time budget until `deadline`.
    pub(super) fn new(thinking: Thinking<'a>, deadline: Option<Duration>, limit: u64) -> Self {
        Meter {
            thinking,
            deadline,
            limit,
            moves: 0,
            next_look: CLOCK_EVERY,
            may_stop: false,
            stop: false,
        }
    }

    /// Counts `moves` applied, and looks at the clock now and then.
    pub(super) fn count(&mut self, moves: u64) {
        self.moves += moves;
        if let Some(deadline) = self.deadline
            && self.may_stop
            && self.moves >= self.next_look
        {
            self.next_look = self.moves + CLOCK_EVERY;
            if self.thinking.clock.now() >= deadline {
                self.stop = true;
            }
        }
    }

    /// Whether the budget is spent.
    pub(super) fn spent(&self) -> bool {
        self.stop || self.moves >= self.limit
    }
}
