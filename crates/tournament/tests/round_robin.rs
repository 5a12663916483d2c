//! Round robins of every allowed size: everyone meets everyone once, seats balanced.

use domino_tournament::{Entrant, History, MAX_ROUND_ROBIN, round_robin, round_robin_rounds};

fn history(entrants: u16, withdrawn: &[bool]) -> History<'_> {
    History {
        entrants,
        withdrawn,
        played: &[],
        byes: &[],
    }
}

#[test]
fn every_size_from_2_to_16_meets_everyone_once_with_one_bye_a_round_when_odd() {
    for n in 2..=MAX_ROUND_ROBIN {
        let h = history(n, &[]);
        let rounds = round_robin_rounds(n);
        assert_eq!(rounds, if n % 2 == 0 { n - 1 } else { n });
        let size = usize::from(n);
        let mut meetings = vec![0u8; size * size];
        let mut firsts = vec![0i32; size];
        let mut byes = vec![0u8; size];
        for r in 1..=rounds {
            let round = round_robin(&h, r);
            let mut placed: Vec<Entrant> = round
                .pairs
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .chain(round.byes.iter().copied())
                .collect();
            placed.sort_unstable();
            assert_eq!(placed, (0..n).collect::<Vec<_>>(), "round {r} of {n}");
            assert_eq!(round.byes.len(), size % 2, "round {r} of {n}");
            for &(a, b) in &round.pairs {
                meetings[usize::from(a) * size + usize::from(b)] += 1;
                meetings[usize::from(b) * size + usize::from(a)] += 1;
                firsts[usize::from(a)] += 1;
                firsts[usize::from(b)] -= 1;
            }
            for &e in &round.byes {
                byes[usize::from(e)] += 1;
            }
        }
        for a in 0..size {
            for b in 0..size {
                assert_eq!(
                    meetings[a * size + b],
                    u8::from(a != b),
                    "{a} and {b} of {n}"
                );
            }
            assert!(
                firsts[a].abs() <= 1,
                "entrant {a} of {n}: first seats minus second {}",
                firsts[a]
            );
            assert_eq!(byes[a], u8::from(n % 2 == 1), "entrant {a} of {n}");
        }
        assert!(
            round_robin(&h, 0).pairs.is_empty() && round_robin(&h, rounds + 1).pairs.is_empty()
        );
    }
}

#[test]
fn a_withdrawn_entrants_opponents_have_byes_instead() {
    let withdrawn = [false, true, false, false];
    let h = history(4, &withdrawn);
    for r in 1..=3 {
        let round = round_robin(&h, r);
        assert_eq!(round.pairs.len(), 1, "round {r}");
        assert_eq!(round.byes.len(), 1, "round {r}");
        assert!(round.pairs.iter().all(|&(a, b)| a != 1 && b != 1));
        assert_ne!(round.byes, [1]);
    }
}

#[test]
fn an_odd_field_with_a_withdrawn_entrant_leaves_the_empty_pairing_unplayed() {
    // Five entrants, 1 withdrawn: its opponents have byes, and in the round that was
    // 1's bye, nobody has one.
    let withdrawn = [false, true, false, false, false];
    let h = history(5, &withdrawn);
    let mut byes = [0u8; 5];
    let mut pairs = 0;
    for r in 1..=5 {
        let round = round_robin(&h, r);
        pairs += round.pairs.len();
        for e in round.byes {
            byes[usize::from(e)] += 1;
        }
    }
    assert_eq!(pairs, 6, "the four active entrants meet each other once");
    // Each active entrant: its own bye round and the round it would have met 1.
    assert_eq!(byes, [2, 0, 2, 2, 2]);
}
