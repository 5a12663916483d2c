//! Game clocks: each human seat's bank of time, and when the seat to move runs out.
//!
//! Plain arithmetic on times the service passes in (epoch milliseconds): nothing here
//! reads a clock, so every rule is unit-tested with made-up times. A bank runs only while
//! its seat is the human seat to move in a game in play; a move by that seat stops it and
//! adds the increment; a move by anyone else (a muggins call, a resignation) leaves it
//! running. Bots have no bank.

use serde::{Deserialize, Serialize};

use crate::bots::Level;
use crate::domain::Seat;

/// What happens to a seat that runs out of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// A bot of `timeout_bot`'s level moves for it; after `abandon_after` timeouts in a
    /// row the seat is abandoned to that bot.
    Bot,
    /// The seat's side loses the match (two sides only).
    Forfeit,
}

impl OnTimeout {
    pub const ALL: [OnTimeout; 2] = [OnTimeout::Bot, OnTimeout::Forfeit];

    pub fn as_str(self) -> &'static str {
        match self {
            OnTimeout::Bot => "bot",
            OnTimeout::Forfeit => "forfeit",
        }
    }
}

/// A game's clock as it was created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSettings {
    pub bank_secs: u64,
    pub increment_secs: u64,
    pub on_timeout: OnTimeout,
    pub timeout_bot: Level,
    pub abandon_after: u64,
}

/// Bounds of the settings: a bank longer than a day would outlive an idle game.
pub const MAX_BANK_SECS: u64 = 86_400;
pub const MAX_INCREMENT_SECS: u64 = 3_600;
pub const MAX_ABANDON_AFTER: u64 = 100;

impl ClockSettings {
    /// Refuses settings out of range, naming the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_BANK_SECS).contains(&self.bank_secs) {
            return Err(format!(
                "clock.bank_secs: 1 to {MAX_BANK_SECS} seconds (got {})",
                self.bank_secs
            ));
        }
        if self.increment_secs > MAX_INCREMENT_SECS {
            return Err(format!(
                "clock.increment_secs: 0 to {MAX_INCREMENT_SECS} seconds (got {})",
                self.increment_secs
            ));
        }
        if !(1..=MAX_ABANDON_AFTER).contains(&self.abandon_after) {
            return Err(format!(
                "clock.abandon_after: 1 to {MAX_ABANDON_AFTER} timeouts (got {})",
                self.abandon_after
            ));
        }
        Ok(())
    }
}

/// A game's clock as it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameClock {
    pub settings: ClockSettings,
    /// Per seat, its bank when its clock last stopped (ms).
    banks: Vec<u64>,
    /// The seat whose bank runs, and since when (epoch ms).
    running: Option<(u8, u64)>,
    /// Per seat, its timeouts in a row.
    timeouts: Vec<u8>,
}

impl GameClock {
    pub fn new(settings: ClockSettings, seats: u8) -> GameClock {
        GameClock {
            settings,
            banks: vec![settings.bank_secs * 1000; seats as usize],
            running: None,
            timeouts: vec![0; seats as usize],
        }
    }

    /// The seat whose bank runs.
    pub fn running(&self) -> Option<u8> {
        self.running.map(|(seat, _)| seat)
    }

    /// When the running seat runs out (epoch ms).
    pub fn deadline(&self) -> Option<u64> {
        self.running
            .map(|(seat, since)| since + self.banks[seat as usize])
    }

    /// `seat`'s bank at `now`, its running time taken off.
    pub fn bank_at(&self, seat: Seat, now: u64) -> u64 {
        let bank = self.banks[seat.at()];
        match self.running {
            Some((s, since)) if s == seat.index() => bank.saturating_sub(now.saturating_sub(since)),
            _ => bank,
        }
    }

    /// After a stored change: `mover` made its first move (`None` for a seat taken or a
    /// timeout), `turn_over` says whether that move ended its turn (it played or passed; a
    /// draw that leaves it to move does not, so a turn earns the increment once however
    /// many tiles it draws), and `next` is the human seat to move now (`None` if none).
    /// A bank stops at `now`, when the change was asked for; the next one starts at
    /// `visible`, when the change is stored: the bots' replies before it, and their wait
    /// for a thread, are nobody's time.
    pub fn settle(
        &mut self,
        mover: Option<u8>,
        turn_over: bool,
        next: Option<u8>,
        now: u64,
        visible: u64,
    ) {
        let mut restart = self.running.is_none();
        if let Some((seat, _)) = self.running {
            let left = self.bank_at(Seat::new(seat), now);
            if mover == Some(seat) {
                self.timeouts[seat as usize] = 0;
            }
            let bank = &mut self.banks[seat as usize];
            if mover == Some(seat) && turn_over {
                *bank = left + self.settings.increment_secs * 1000;
                restart = true;
            } else if next != Some(seat) {
                // Stopped by someone else's move (the match ended, say): no increment.
                *bank = left;
                restart = true;
            }
            // Else it runs on: another seat's call, or its own draw.
        }
        if restart {
            self.running = next.map(|seat| (seat, visible));
        }
    }

    /// The running seat ran out: its bank is 0 and stays stopped until [`GameClock::settle`].
    /// Returns the seat and its timeouts in a row, this one included.
    pub fn time_out(&mut self) -> Option<(u8, u8)> {
        let (seat, _) = self.running.take()?;
        self.banks[seat as usize] = 0;
        let count = &mut self.timeouts[seat as usize];
        *count = count.saturating_add(1);
        Some((seat, *count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(bank_secs: u64, increment_secs: u64) -> GameClock {
        GameClock::new(
            ClockSettings {
                bank_secs,
                increment_secs,
                on_timeout: OnTimeout::Bot,
                timeout_bot: Level::Greedy,
                abandon_after: 3,
            },
            2,
        )
    }

    #[test]
    fn a_turn_starts_the_bank_of_the_seat_to_move_only() {
        let mut c = clock(10, 0);
        assert_eq!((c.running(), c.deadline()), (None, None));
        c.settle(None, true, Some(0), 1_000, 1_000);
        assert_eq!(c.deadline(), Some(11_000));
        assert_eq!(c.bank_at(Seat::new(0), 4_000), 7_000);
        assert_eq!(c.bank_at(Seat::new(1), 4_000), 10_000);
        assert_eq!(c.bank_at(Seat::new(0), 20_000), 0, "never below zero");
    }

    #[test]
    fn a_move_stops_the_bank_and_adds_the_increment() {
        let mut c = clock(10, 2);
        c.settle(None, true, Some(0), 0, 0);
        c.settle(Some(0), true, Some(1), 3_000, 3_000);
        assert_eq!(
            c.bank_at(Seat::new(0), 9_000),
            9_000,
            "7 s left, 2 s added, stopped"
        );
        assert_eq!(c.deadline(), Some(13_000));
    }

    #[test]
    fn draws_within_a_turn_earn_no_increment_and_the_bank_runs_on() {
        let mut c = clock(10, 2);
        c.settle(None, true, Some(0), 0, 0);
        for draw in 1..=14 {
            c.settle(Some(0), false, Some(0), draw * 100, draw * 100);
            assert_eq!(c.deadline(), Some(10_000), "draw {draw}: nothing earned");
        }
        // The play that ends the turn earns the increment, once.
        c.settle(Some(0), true, Some(1), 3_000, 3_000);
        assert_eq!(c.bank_at(Seat::new(0), 3_000), 7_000 + 2_000);
    }

    #[test]
    fn the_next_bank_starts_when_the_change_is_visible_not_when_it_was_asked() {
        let mut c = clock(10, 0);
        c.settle(None, true, Some(0), 0, 0);
        // Seat 0 moved at 1 s; the bots' replies were stored at 4 s: seat 1 starts then,
        // and seat 0's bank stopped at 1 s.
        c.settle(Some(0), true, Some(1), 1_000, 4_000);
        assert_eq!(c.bank_at(Seat::new(0), 9_000), 9_000);
        assert_eq!(c.deadline(), Some(4_000 + 10_000));
        assert_eq!(c.bank_at(Seat::new(1), 4_000), 10_000);
    }

    #[test]
    fn another_seats_move_leaves_the_running_bank_alone() {
        let mut c = clock(10, 5);
        c.settle(None, true, Some(0), 0, 0);
        c.settle(Some(1), true, Some(0), 4_000, 4_000); // a muggins call by seat 1
        assert_eq!(c.deadline(), Some(10_000));
        assert_eq!(
            c.bank_at(Seat::new(1), 4_000),
            10_000,
            "no increment for a call"
        );
        c.settle(Some(1), true, None, 6_000, 6_000); // seat 1 resigns: the match is over
        assert_eq!(
            (c.running(), c.bank_at(Seat::new(0), 99_000)),
            (None, 4_000)
        );
    }

    #[test]
    fn a_timeout_empties_the_bank_and_counts_in_a_row_until_the_seat_moves() {
        let mut c = clock(1, 0);
        c.settle(None, true, Some(0), 0, 0);
        assert_eq!(c.time_out(), Some((0, 1)));
        assert_eq!((c.running(), c.bank_at(Seat::new(0), 5_000)), (None, 0));
        c.settle(None, true, Some(1), 1_000, 1_000);
        c.settle(Some(1), true, Some(0), 1_500, 1_500);
        assert_eq!(c.deadline(), Some(1_500), "a bank at 0 runs out at once");
        assert_eq!(c.time_out(), Some((0, 2)));
        c.settle(None, true, Some(0), 2_000, 2_000);
        c.settle(Some(0), true, Some(1), 2_000, 2_000);
        c.settle(Some(1), true, Some(0), 2_100, 2_100);
        assert_eq!(
            c.time_out(),
            Some((0, 1)),
            "a move of its own resets the count"
        );
        assert_eq!(c.time_out(), None, "nothing runs");
    }

    #[test]
    fn settings_out_of_range_are_refused_naming_the_field() {
        let ok = clock(1, 0).settings;
        assert!(ok.validate().is_ok());
        for (bad, field) in [
            (ClockSettings { bank_secs: 0, ..ok }, "clock.bank_secs"),
            (
                ClockSettings {
                    bank_secs: MAX_BANK_SECS + 1,
                    ..ok
                },
                "clock.bank_secs",
            ),
            (
                ClockSettings {
                    increment_secs: MAX_INCREMENT_SECS + 1,
                    ..ok
                },
                "clock.increment_secs",
            ),
            (
                ClockSettings {
                    abandon_after: 0,
                    ..ok
                },
                "clock.abandon_after",
            ),
        ] {
            assert!(bad.validate().unwrap_err().starts_with(field), "{bad:?}");
        }
    }
}
