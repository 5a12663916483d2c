//! Swiss pairing: the FIDE Dutch system's brackets, paired greedily under a completion check.
//!
//! Entrants are ranked by the standings (score, then the tiebreaks, then entry order).
//! A bye, when the count is odd, goes to the lowest-placed entrant with the fewest byes
//! whose absence leaves the rest pairable. Then score groups are paired from the top: the
//! floaters from above first, each against the highest resident it may meet; then the
//! residents' top half against their bottom half, each top-half entrant taking the first
//! bottom-half entrant it may meet (the Dutch transpositions' order), then the top half
//! below it from the lowest up (an exchange); whoever is left floats down. "May meet":
//! never met, and the entrants left after the pair can still all be paired without a
//! repeat (a maximum matching kept up to date, `matching`). So a repeat-free
//! pairing is found whenever one exists, in polynomial time (memory: a flag of who met
//! whom per pair of active entrants, so fields of hundreds, not of tens of thousands).

use crate::MAX_ROUNDS;
use crate::history::{Bye, Entrant, History, Played};
use crate::matching::Matching;
use crate::points::Points;
use crate::round::Round;
use crate::seats;
use crate::standings::standings;

/// The pairings of Swiss round `round` (1-based) from the pairings and byes of the rounds
/// before it; `None` when the active entrants (fewer than two, or all met) cannot all be
/// paired without a repeat: the tournament ends.
pub fn swiss(h: &History, round: u16) -> Option<Round> {
    let played: Vec<Played> = h
        .played
        .iter()
        .filter(|p| p.round < round)
        .copied()
        .collect();
    let byes: Vec<Bye> = h.byes.iter().filter(|b| b.round < round).copied().collect();
    let past = History {
        played: &played,
        byes: &byes,
        ..*h
    };
    let active: Vec<(Entrant, Points)> = standings(&past)
        .iter()
        .filter(|s| !past.is_withdrawn(s.entrant))
        .map(|s| (s.entrant, s.score))
        .collect();
    let n = active.len();
    if n < 2 {
        return None;
    }
    let mut local = vec![usize::MAX; usize::from(h.entrants)];
    for (i, &(e, _)) in active.iter().enumerate() {
        local[usize::from(e)] = i;
    }
    let mut met = vec![false; n * n];
    for p in &played {
        let (Some(&a), Some(&b)) = (local.get(usize::from(p.a)), local.get(usize::from(p.b)))
        else {
            continue;
        };
        if a != usize::MAX && b != usize::MAX {
            met[a * n + b] = true;
            met[b * n + a] = true;
        }
    }
    let mut m = Matching::maximum(n, |u, v| !met[u * n + v]);
    if m.exposed() > n % 2 {
        return None;
    }
    let bye = if n % 2 == 1 {
        // The lowest-placed first among those with the fewest byes (a stable sort).
        let mut order: Vec<usize> = (0..n).rev().collect();
        order.sort_by_key(|&i| past.byes_of(active[i].0));
        Some(order.into_iter().find(|&i| m.remove_one(i))?)
    } else {
        None
    };
    let scores: Vec<Points> = active.iter().map(|&(_, s)| s).collect();
    let mut pairs = pair_brackets(&mut m, &scores, bye);
    pairs.sort_unstable();
    Some(Round {
        pairs: pairs
            .iter()
            .enumerate()
            .map(|(board, &(x, y))| seats::allocate(&played, active[x].0, active[y].0, board))
            .collect(),
        byes: bye.map(|b| active[b].0).into_iter().collect(),
    })
}

/// The pairs (higher-placed first, as local indices in standings order) of every bracket.
fn pair_brackets(m: &mut Matching, scores: &[Points], bye: Option<usize>) -> Vec<(usize, usize)> {
    let n = scores.len();
    let mut b = Bracket {
        m,
        paired: vec![false; n],
        pairs: Vec::with_capacity(n / 2),
    };
    if let Some(bye) = bye {
        b.paired[bye] = true;
    }
    let mut floaters = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start..n)
            .find(|&i| scores[i] != scores[start])
            .unwrap_or(n);
        let residents: Vec<usize> = (start..end).filter(|&i| !b.paired[i]).collect();
        floaters = b.pair(&floaters, &residents);
        start = end;
    }
    debug_assert!(
        floaters.is_empty(),
        "the completion check leaves nobody over"
    );
    b.pairs
}

struct Bracket<'m> {
    m: &'m mut Matching,
    paired: Vec<bool>,
    pairs: Vec<(usize, usize)>,
}

impl Bracket<'_> {
    /// Pairs `x` with the first of `candidates` it may meet; whether it found one.
    fn first_of<'c>(&mut self, x: usize, candidates: impl IntoIterator<Item = &'c usize>) -> bool {
        if self.paired[x] {
            return true;
        }
        for &y in candidates {
            if !self.paired[y] && self.m.remove_pair(x, y) {
                self.paired[x] = true;
                self.paired[y] = true;
                self.pairs.push((x.min(y), x.max(y)));
                return true;
            }
        }
        false
    }

    /// Pairs one bracket: the floaters from above (`down`) and a score group's residents
    /// (both in standings order). Returns who floats on down.
    fn pair(&mut self, down: &[usize], residents: &[usize]) -> Vec<usize> {
        for &x in down {
            self.first_of(x, residents);
        }
        let rest: Vec<usize> = residents
            .iter()
            .copied()
            .filter(|&i| !self.paired[i])
            .collect();
        let (top, bottom) = rest.split_at(rest.len() / 2);
        for (i, &x) in top.iter().enumerate() {
            self.first_of(x, bottom.iter().chain(top[i + 1..].iter().rev()));
        }
        let mut left: Vec<usize> = down
            .iter()
            .chain(residents)
            .copied()
            .filter(|&i| !self.paired[i])
            .collect();
        left.sort_unstable();
        for i in 0..left.len() {
            self.first_of(left[i], &left[i + 1..]);
        }
        left.retain(|&i| !self.paired[i]);
        left
    }
}

/// Rounds enough to separate the field: one more than it takes for a single entrant to
/// win every game (⌈log₂ n⌉ + 1), no more than a repeat-free schedule allows (n − 1 with
/// an even count, n with an odd one: everyone's bye), at most [`MAX_ROUNDS`].
pub fn default_swiss_rounds(entrants: u16) -> u16 {
    if entrants < 2 {
        return 0;
    }
    let log2 = u16::try_from(u32::from(entrants).next_power_of_two().trailing_zeros())
        .unwrap_or(MAX_ROUNDS);
    let most = if entrants % 2 == 0 {
        entrants - 1
    } else {
        entrants
    };
    (log2 + 1).min(most).min(MAX_ROUNDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_rounds_separate_the_field_within_what_a_schedule_allows() {
        let rounds: Vec<u16> = [0, 1, 2, 3, 4, 5, 8, 9, 64, 65, 1000, u16::MAX]
            .iter()
            .map(|&n| default_swiss_rounds(n))
            .collect();
        assert_eq!(rounds, [0, 0, 1, 3, 3, 4, 4, 5, 7, 8, 11, 17]);
        assert!((2..=u16::MAX).all(|n| default_swiss_rounds(n) <= MAX_ROUNDS));
    }
}
