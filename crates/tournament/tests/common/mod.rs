//! What the tests share: a seeded generator, random histories, and a brute-force check of
//! whether a set of entrants can all be paired without a repeat (independent of the crate's
//! matching, so that the two can disagree).
#![allow(dead_code)]

use domino_tournament::{Bye, Entrant, History, Played, Winner};

/// SplitMix64: enough randomness for tests, from a seed proptest picks.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }

    pub fn winner(&mut self) -> Winner {
        match self.below(5) {
            0 => Winner::Draw,
            1 | 2 => Winner::A,
            _ => Winner::B,
        }
    }
}

/// An owned history, lent out as a [`History`].
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub entrants: u16,
    pub withdrawn: Vec<bool>,
    pub played: Vec<Played>,
    pub byes: Vec<Bye>,
}

impl Record {
    pub fn history(&self) -> History<'_> {
        History {
            entrants: self.entrants,
            withdrawn: &self.withdrawn,
            played: &self.played,
            byes: &self.byes,
        }
    }

    pub fn met(&self, x: Entrant, y: Entrant) -> bool {
        self.history().met(x, y)
    }

    pub fn active(&self) -> Vec<Entrant> {
        (0..self.entrants)
            .filter(|&e| !self.withdrawn[usize::from(e)])
            .collect()
    }
}

/// A random repeat-free history of `rounds` rounds: each round pairs a random part of the
/// field (some sit out, a few take a bye, at most one each), and some entrants withdraw.
pub fn random_history(rng: &mut Rng, entrants: u16, rounds: u16) -> Record {
    let mut r = Record {
        entrants,
        withdrawn: vec![false; usize::from(entrants)],
        ..Record::default()
    };
    for round in 1..=rounds {
        let mut field = r.active();
        rng.shuffle(&mut field);
        let mut waiting: Option<Entrant> = None;
        for e in field {
            if rng.chance(10) {
                continue;
            }
            match waiting {
                Some(w) if !r.met(w, e) => {
                    let margin_a = rng.below(61) as i32 - 30;
                    r.played.push(Played {
                        round,
                        a: w,
                        b: e,
                        winner: Some(rng.winner()),
                        margin_a,
                    });
                    waiting = None;
                }
                Some(_) => {}
                None => waiting = Some(e),
            }
        }
        if let Some(w) = waiting {
            if r.history().byes_of(w) == 0 && rng.chance(50) {
                r.byes.push(Bye { round, entrant: w });
            }
        }
        for e in 0..usize::from(entrants) {
            if rng.chance(3) {
                r.withdrawn[e] = true;
            }
        }
    }
    r
}

/// Whether `set` can be paired completely without a repeat (exhaustive, memoised).
pub fn pairable(r: &Record, set: &[Entrant]) -> bool {
    assert!(set.len() <= 24, "exhaustive search over a small field only");
    if set.len() % 2 == 1 {
        return false;
    }
    let n = set.len();
    let mut memo = vec![0u8; 1 << n];
    let met: Vec<bool> = (0..n * n).map(|i| r.met(set[i / n], set[i % n])).collect();
    fn go(met: &[bool], n: usize, left: usize, memo: &mut [u8]) -> bool {
        if left == 0 {
            return true;
        }
        if memo[left] != 0 {
            return memo[left] == 1;
        }
        let x = left.trailing_zeros() as usize;
        let rest = left & !(1 << x);
        let mut ok = false;
        let mut m = rest;
        while m != 0 {
            let y = m.trailing_zeros() as usize;
            m &= m - 1;
            if !met[x * n + y] && go(met, n, rest & !(1 << y), memo) {
                ok = true;
                break;
            }
        }
        memo[left] = if ok { 1 } else { 2 };
        ok
    }
    go(&met, n, (1usize << n) - 1, &mut memo)
}

/// Whether the active field can be paired with `bye` (if any) left out.
pub fn pairable_without(r: &Record, active: &[Entrant], bye: Option<Entrant>) -> bool {
    let rest: Vec<Entrant> = active.iter().copied().filter(|&e| Some(e) != bye).collect();
    pairable(r, &rest)
}
