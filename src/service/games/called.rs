//! Webhook seats: the seats of a game whose player's webhook the server calls when they
//! are to move, and where the current turn's calls stand. Part of the game's record
//! ([`super::record::Record`]), so the due index knows when a call is owed and every
//! process sees the same.

use serde::{Deserialize, Serialize};

/// A game's webhook seats, as its record keeps them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Called {
    /// Per seat (when any is called), whether the server calls its player's webhook.
    seats: Vec<bool>,
    /// After a turn's calls all failed: the move count of that turn, and when to call
    /// again (`None`: not this turn; the seat's clock decides).
    failed: Option<(u32, Option<u64>)>,
}

impl Called {
    /// Seat `seat` is called from now on, this turn too (a webhook put again after its
    /// pause is called at once).
    pub fn hook(&mut self, seat: u8) {
        let at = usize::from(seat);
        if self.seats.len() <= at {
            self.seats.resize(at + 1, false);
        }
        self.seats[at] = true;
        self.failed = None;
    }

    pub fn unhook(&mut self, seat: u8) {
        if let Some(called) = self.seats.get_mut(seat as usize) {
            *called = false;
        }
    }

    pub fn is_hooked(&self, seat: u8) -> bool {
        self.seats.get(seat as usize).copied().unwrap_or(false)
    }

    /// When the seat to move at move `moves` is next to be called: `now`, unless this
    /// turn's calls failed already (then when they are tried again, if ever).
    pub fn due(&self, moves: u32, now: u64) -> Option<u64> {
        match self.failed {
            Some((at, retry)) if at == moves => retry,
            _ => Some(now),
        }
    }

    /// This turn's (move `moves`) calls failed: called again at `retry`, or never.
    pub fn failed(&mut self, moves: u32, retry: Option<u64>) {
        self.failed = Some((moves, retry));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_turn_waits_for_its_retry_and_the_next_turn_is_called_at_once() {
        let mut called = Called::default();
        assert!(!called.is_hooked(1));
        called.hook(1);
        assert!(called.is_hooked(1) && !called.is_hooked(0));
        assert_eq!(called.due(7, 100), Some(100));
        called.failed(7, Some(1_100));
        assert_eq!(called.due(7, 200), Some(1_100));
        assert_eq!(
            called.due(8, 200),
            Some(200),
            "a new turn is called at once"
        );
        called.failed(8, None);
        assert_eq!(called.due(8, 300), None, "the clock decides");
        called.unhook(1);
        assert!(!called.is_hooked(1));
    }
}
