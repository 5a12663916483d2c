//! Tournament pairings and standings: pure functions of a tournament's history.
//!
//! No I/O, no async, no clock, no global RNG; the service stores the history and calls
//! these to know the standings and the next round. Entrants are indices in entry order.
//!
//! - [`history`]: entrants, pairings played, byes, withdrawals: what the functions read.
//! - [`points`]: exact points (quarters), so ties compare exactly.
//! - [`mod@standings`]: score, Buchholz, Sonneborn-Berger, margin, entry order.
//! - [`mod@swiss`]: the Swiss pairing of a round (FIDE Dutch brackets; docs/tournaments.md
//!   says where it simplifies); [`mod@round_robin`]: the circle method; [`round`]: what
//!   both hand back, a round's pairs (first seat first) and byes.
//! - `seats` (private): who takes the first seat, balanced over the rounds.
//! - `matching` (private): maximum matching, the check that a pairing can be completed.

pub mod history;
mod matching;
pub mod points;
pub mod round;
pub mod round_robin;
mod seats;
pub mod standings;
pub mod swiss;

pub use history::{Bye, Entrant, History, Played, Winner};
pub use points::Points;
pub use round::Round;
pub use round_robin::{round_robin, round_robin_rounds};
pub use standings::{Standing, standings};
pub use swiss::{default_swiss_rounds, swiss};

/// The most rounds a tournament may have.
pub const MAX_ROUNDS: u16 = 20;
/// The most entrants of a round robin (15 rounds).
pub const MAX_ROUND_ROBIN: u16 = 16;
