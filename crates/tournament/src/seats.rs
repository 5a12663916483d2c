//! Who takes the first seat of a pairing's (first) game: balanced over an entrant's rounds.
//!
//! As the Dutch system gives colours, without its colour criteria (a duplicate pairing
//! plays both seats anyway): the entrant who sat first less often sits first; if even,
//! each takes the seat it did not take last time; if they sat alike, the higher-placed
//! entrant alternates; with no game behind either, boards alternate from the top.

use crate::history::{Entrant, Played};

/// An entrant's seats so far: first seats minus second seats, and the last one taken.
#[derive(Clone, Copy, Debug, Default)]
struct Seats {
    balance: i32,
    last_first: Option<bool>,
}

fn seats(played: &[Played], e: Entrant) -> Seats {
    let mut s = Seats::default();
    let mut last_round = 0;
    for p in played {
        let first = if p.a == e {
            true
        } else if p.b == e {
            false
        } else {
            continue;
        };
        s.balance += if first { 1 } else { -1 };
        if s.last_first.is_none() || p.round >= last_round {
            last_round = p.round;
            s.last_first = Some(first);
        }
    }
    s
}

/// `(first, second)` for the pair of `higher` (placed above) and `lower` on `board`
/// (0-based, from the top).
pub(crate) fn allocate(
    played: &[Played],
    higher: Entrant,
    lower: Entrant,
    board: usize,
) -> (Entrant, Entrant) {
    let (h, l) = (seats(played, higher), seats(played, lower));
    let higher_first = if h.balance != l.balance {
        h.balance < l.balance
    } else {
        match (h.last_first, l.last_first) {
            (Some(hf), Some(lf)) if hf != lf => !hf,
            (Some(hf), _) => !hf,
            (None, Some(lf)) => lf,
            (None, None) => board % 2 == 0,
        }
    };
    if higher_first {
        (higher, lower)
    } else {
        (lower, higher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Winner;

    fn game(round: u16, a: Entrant, b: Entrant) -> Played {
        Played {
            round,
            a,
            b,
            winner: Some(Winner::Draw),
            margin_a: 0,
        }
    }

    #[test]
    fn who_sat_first_less_often_sits_first() {
        let played = [game(1, 0, 2), game(2, 0, 3), game(2, 1, 4)];
        assert_eq!(allocate(&played, 0, 1, 0), (1, 0));
    }

    #[test]
    fn even_seats_alternate_from_the_last_game() {
        let played = [game(1, 0, 2), game(1, 3, 1)];
        assert_eq!(allocate(&played, 0, 1, 0), (1, 0));
        let played = [game(1, 2, 0), game(2, 0, 3), game(1, 1, 4), game(2, 5, 1)];
        assert_eq!(allocate(&played, 0, 1, 0), (1, 0));
    }

    #[test]
    fn in_the_first_round_boards_alternate_from_the_top() {
        assert_eq!(allocate(&[], 0, 4, 0), (0, 4));
        assert_eq!(allocate(&[], 1, 5, 1), (5, 1));
    }
}
