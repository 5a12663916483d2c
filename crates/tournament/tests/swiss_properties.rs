//! Swiss pairings over many random histories: what every round must satisfy.

mod common;

use common::{Record, Rng, pairable, pairable_without, random_history};
use domino_tournament::{Entrant, Points, Round, standings, swiss};
use proptest::prelude::*;

/// The active entrants in standings order, with their scores.
fn ranked(r: &Record) -> Vec<(Entrant, Points)> {
    standings(&r.history())
        .iter()
        .filter(|s| !r.withdrawn[usize::from(s.entrant)])
        .map(|s| (s.entrant, s.score))
        .collect()
}

fn check_round(r: &Record, round: &Round) {
    let active = r.active();
    let mut seen = vec![0u8; usize::from(r.entrants)];
    for &(a, b) in &round.pairs {
        assert!(!r.met(a, b), "{a} and {b} meet again");
        seen[usize::from(a)] += 1;
        seen[usize::from(b)] += 1;
    }
    for &e in &round.byes {
        seen[usize::from(e)] += 1;
    }
    for e in 0..r.entrants {
        let expected = u8::from(active.contains(&e));
        assert_eq!(
            seen[usize::from(e)],
            expected,
            "entrant {e} placed {} times",
            seen[usize::from(e)]
        );
    }
    assert_eq!(
        round.byes.len(),
        active.len() % 2,
        "one bye exactly when the count is odd"
    );
}

/// The bye went to the lowest-placed entrant with the fewest byes who could take it.
fn check_bye(r: &Record, round: &Round) {
    let Some(&bye) = round.byes.first() else {
        return;
    };
    let h = r.history();
    let active = r.active();
    let order: Vec<Entrant> = ranked(r).iter().map(|&(e, _)| e).collect();
    let held = h.byes_of(bye);
    for &other in order.iter().rev() {
        if other == bye {
            break;
        }
        if h.byes_of(other) <= held {
            assert!(
                !pairable_without(r, &active, Some(other)),
                "{other} could have had the bye, not {bye}"
            );
        }
    }
    for &other in &order {
        if h.byes_of(other) < held {
            assert!(
                !pairable_without(r, &active, Some(other)),
                "{bye} has a second bye, {other} none"
            );
        }
    }
}

/// Score groups from the top, while each is even, has no meeting inside it and leaves a
/// field below it that can be paired alone: its top half meets its bottom half in order.
fn check_halves(r: &Record, round: &Round) {
    let field: Vec<(Entrant, Points)> = ranked(r)
        .into_iter()
        .filter(|(e, _)| !round.byes.contains(e))
        .collect();
    let paired = |x: Entrant, y: Entrant| {
        round
            .pairs
            .iter()
            .any(|&(a, b)| (a, b) == (x, y) || (a, b) == (y, x))
    };
    let mut start = 0;
    while start < field.len() {
        let end = (start..field.len())
            .find(|&i| field[i].1 != field[start].1)
            .unwrap_or(field.len());
        let group: Vec<Entrant> = field[start..end].iter().map(|&(e, _)| e).collect();
        let below: Vec<Entrant> = field[end..].iter().map(|&(e, _)| e).collect();
        let clean = group.len() % 2 == 0
            && group
                .iter()
                .all(|&x| group.iter().all(|&y| x == y || !r.met(x, y)))
            && pairable(r, &below);
        if !clean {
            return;
        }
        let half = group.len() / 2;
        for i in 0..half {
            assert!(
                paired(group[i], group[half + i]),
                "{} should meet {} in {group:?}",
                group[i],
                group[half + i]
            );
        }
        start = end;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_round_pairs_each_active_entrant_once_without_a_repeat(
        seed in any::<u64>(), entrants in 2u16..=18, rounds in 0u16..=6,
    ) {
        let r = random_history(&mut Rng::new(seed), entrants, rounds);
        let active = r.active();
        match swiss(&r.history(), rounds + 1) {
            Some(round) => {
                check_round(&r, &round);
                check_bye(&r, &round);
                check_halves(&r, &round);
            }
            None => {
                let possible = active.len() >= 2
                    && (active.len() % 2 == 0 && pairable(&r, &active)
                        || active.len() % 2 == 1
                            && active.iter().any(|&e| pairable_without(&r, &active, Some(e))));
                prop_assert!(!possible, "a repeat-free pairing of {active:?} exists");
            }
        }
    }

    #[test]
    fn a_field_nobody_has_met_is_paired_top_half_against_bottom_half(entrants in 2u16..=40) {
        let r = Record { entrants, withdrawn: vec![false; usize::from(entrants)], ..Record::default() };
        let round = swiss(&r.history(), 1).unwrap();
        let paired = entrants / 2;
        let mut pairs: Vec<(Entrant, Entrant)> = round.pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        pairs.sort_unstable();
        let expected: Vec<(Entrant, Entrant)> = (0..paired).map(|i| (i, i + paired)).collect();
        prop_assert_eq!(pairs, expected);
        prop_assert_eq!(round.byes, if entrants % 2 == 1 { vec![entrants - 1] } else { vec![] });
    }
}
