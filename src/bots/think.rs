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
