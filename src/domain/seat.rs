//! A seat at a table.

use std::fmt;

/// A seat, by its index at the table (from 0). `Copy`, a byte: the engine counts seats
/// in bytes. Any index parses; whether a table has that seat is the table's to say (its
/// seat count is in the stored game, and its refusal names the seats it has).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Seat(u8);

impl Seat {
    pub const fn new(index: u8) -> Seat {
        Seat(index)
    }

    /// The index, as the engine and the wire take it.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The index, for a table's per-seat lists.
    pub const fn at(self) -> usize {
        self.0 as usize
    }
}

impl From<u8> for Seat {
    fn from(index: u8) -> Seat {
        Seat(index)
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
