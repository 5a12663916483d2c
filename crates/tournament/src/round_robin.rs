//! Round robin by the circle method: everyone meets everyone once.
//!
//! The last entrant (or, with an odd count, an empty place whose opponent has the bye)
//! stays put while the others turn around the circle one place a round. A pairing with a
//! withdrawn entrant is not played and the other entrant has a bye instead.

use crate::history::{Entrant, History};
use crate::round::Round;

/// How many rounds a round robin of `entrants` takes.
pub fn round_robin_rounds(entrants: u16) -> u16 {
    match entrants {
        0 | 1 => 0,
        n if n % 2 == 0 => n - 1,
        n => n,
    }
}

/// The pairings of round `round` (1-based); empty outside `1..=round_robin_rounds`.
pub fn round_robin(h: &History, round: u16) -> Round {
    let n = h.entrants;
    let rounds = round_robin_rounds(n);
    let mut out = Round::default();
    if round == 0 || round > rounds {
        return out;
    }
    // The circle has `rounds` places (0..rounds, an odd count, so no place faces itself);
    // the fixed place is `rounds` itself, empty when the count of entrants is odd.
    let circle = rounds;
    let k = round - 1;
    let mut place = |x: Entrant, y: Entrant| {
        let (xs, ys) = (x < n && !h.is_withdrawn(x), y < n && !h.is_withdrawn(y));
        match (xs, ys) {
            (true, true) => out.pairs.push((x, y)),
            (true, false) => out.byes.push(x),
            (false, true) => out.byes.push(y),
            (false, false) => {}
        }
    };
    // Seats: the fixed place alternates by round; on the circle, whoever sits at an odd
    // distance ahead takes the first seat, so each entrant is first once and second once
    // at every distance.
    if k % 2 == 1 {
        place(circle, k);
    } else {
        place(k, circle);
    }
    for i in 1..=(circle / 2) {
        let ahead = (k + i) % circle;
        let behind = (k + circle - i) % circle;
        if i % 2 == 1 {
            place(ahead, behind);
        } else {
            place(behind, ahead);
        }
    }
    out
}
