//! Whole Swiss tournaments played out with random results, and small fields by hand.

mod common;

use common::{Record, Rng, pairable_without};
use domino_tournament::{
    Bye, Entrant, Played, Round, Winner, default_swiss_rounds, standings, swiss,
};
use proptest::prelude::*;

/// Plays `round` into the record with random results.
fn play(r: &mut Record, rng: &mut Rng, number: u16, round: &Round) {
    for &(a, b) in &round.pairs {
        let margin_a = rng.below(81) as i32 - 40;
        r.played.push(Played {
            round: number,
            a,
            b,
            winner: Some(rng.winner()),
            margin_a,
        });
    }
    for &entrant in &round.byes {
        r.byes.push(Bye {
            round: number,
            entrant,
        });
    }
}

/// Checks one round of a simulation: no repeat, everyone active placed once, and the bye
/// to the lowest-placed entrant without one who can take it (a second bye only when none can).
fn check(r: &Record, round: &Round) {
    let active = r.active();
    let mut placed: Vec<Entrant> = round
        .pairs
        .iter()
        .flat_map(|&(a, b)| [a, b])
        .chain(round.byes.iter().copied())
        .collect();
    placed.sort_unstable();
    assert_eq!(placed, active);
    for &(a, b) in &round.pairs {
        assert!(!r.met(a, b), "{a} and {b} meet twice");
    }
    let Some(&bye) = round.byes.first() else {
        return;
    };
    let h = r.history();
    let order: Vec<Entrant> = standings(&h)
        .iter()
        .map(|s| s.entrant)
        .filter(|&e| !r.withdrawn[usize::from(e)])
        .collect();
    let without: Vec<Entrant> = order
        .iter()
        .copied()
        .filter(|&e| h.byes_of(e) == 0)
        .collect();
    if h.byes_of(bye) == 0 {
        let below: Vec<Entrant> = without
            .iter()
            .copied()
            .skip_while(|&e| e != bye)
            .skip(1)
            .collect();
        for e in below {
            assert!(
                !pairable_without(r, &active, Some(e)),
                "{e}, placed below {bye}, could have had the bye"
            );
        }
    } else {
        for e in without {
            assert!(
                !pairable_without(r, &active, Some(e)),
                "{bye} has a second bye while {e} could take one"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Twenty entrants, one of whom withdraws after round 3 (so the count turns odd), paired
    /// until no repeat-free pairing is left.
    #[test]
    fn a_twenty_entrant_swiss_runs_to_its_end_without_a_repeat_and_with_fair_byes(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let mut r = Record { entrants: 20, withdrawn: vec![false; 20], ..Record::default() };
        let quitter = rng.below(20) as usize;
        let mut number = 1;
        while let Some(round) = swiss(&r.history(), number) {
            check(&r, &round);
            play(&mut r, &mut rng, number, &round);
            if number == 3 {
                r.withdrawn[quitter] = true;
            }
            number += 1;
        }
        // It ends only when nobody can be paired without a repeat (every bye taken counts).
        let active = r.active();
        prop_assert!(active.iter().all(|&e| !pairable_without(&r, &active, Some(e))));
        prop_assert!(number > default_swiss_rounds(20), "ended after round {}", number - 1);
    }
}

fn record(entrants: u16) -> Record {
    Record {
        entrants,
        withdrawn: vec![false; usize::from(entrants)],
        ..Record::default()
    }
}

#[test]
fn three_entrants_each_take_one_bye_then_the_tournament_ends() {
    let mut r = record(3);
    let mut rng = Rng::new(7);
    for number in 1..=3 {
        let round = swiss(&r.history(), number).expect("a pairing");
        check(&r, &round);
        play(&mut r, &mut rng, number, &round);
    }
    let mut byes: Vec<Entrant> = r.byes.iter().map(|b| b.entrant).collect();
    byes.sort_unstable();
    assert_eq!(byes, [0, 1, 2]);
    assert_eq!(swiss(&r.history(), 4), None);
}

#[test]
fn two_entrants_who_have_met_cannot_be_paired_again() {
    let mut r = record(2);
    r.played.push(Played {
        round: 1,
        a: 0,
        b: 1,
        winner: None,
        margin_a: 0,
    });
    assert_eq!(swiss(&r.history(), 2), None);
    // A round's own pairings are not part of the history it is paired from.
    assert!(swiss(&r.history(), 1).is_some());
}

#[test]
fn withdrawn_entrants_are_not_paired_and_one_active_entrant_alone_ends_it() {
    let mut r = record(4);
    r.withdrawn[1] = true;
    let round = swiss(&r.history(), 1).unwrap();
    assert_eq!(round.byes, [3]);
    assert_eq!(round.pairs, [(0, 2)]);
    r.withdrawn[2] = true;
    r.withdrawn[3] = true;
    assert_eq!(swiss(&r.history(), 1), None);
}

#[test]
fn winners_meet_winners_and_of_two_who_sat_alike_the_higher_placed_changes_seat() {
    // Round 1 of 8: 0-4, 5-1, 2-6, 7-3 (boards alternate who sits first).
    let mut r = record(8);
    let round = swiss(&r.history(), 1).unwrap();
    assert_eq!(round.pairs, [(0, 4), (5, 1), (2, 6), (7, 3)]);
    // The first seats win: 0, 2, 5, 7 on 1 point (equal on every tiebreak: entry order),
    // top half 0, 2 against bottom half 5, 7; then 1, 3 against 4, 6.
    for &(a, b) in &round.pairs {
        r.played.push(Played {
            round: 1,
            a,
            b,
            winner: Some(Winner::A),
            margin_a: 10,
        });
    }
    // Both of a pair sat alike last time, so the higher-placed one alternates.
    let round = swiss(&r.history(), 2).unwrap();
    assert_eq!(round.pairs, [(5, 0), (7, 2), (1, 4), (3, 6)]);
}

#[test]
fn a_repeat_in_the_natural_pairing_is_resolved_by_the_next_of_the_bottom_half() {
    // Four entrants on ½ point after 0-2 and 1-3 were drawn: the natural 0-2 is a repeat,
    // so 0 takes 3, the next of the bottom half, and 1 takes 2.
    let mut r = record(4);
    r.played.push(Played {
        round: 1,
        a: 0,
        b: 2,
        winner: Some(Winner::Draw),
        margin_a: 0,
    });
    r.played.push(Played {
        round: 1,
        a: 1,
        b: 3,
        winner: Some(Winner::Draw),
        margin_a: 0,
    });
    let round = swiss(&r.history(), 2).unwrap();
    let mut pairs: Vec<(Entrant, Entrant)> = round
        .pairs
        .iter()
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    pairs.sort_unstable();
    assert_eq!(pairs, [(0, 3), (1, 2)]);
}

#[test]
fn an_odd_group_floats_its_lowest_down_to_meet_the_top_of_the_next() {
    // 0, 1 and 2 win round 1: 0 meets 1 and 2 floats down to 3, the highest loser it has
    // not met; 4 and 5 are left.
    let mut r = record(6);
    for (a, b) in [(0, 3), (1, 4), (2, 5)] {
        r.played.push(Played {
            round: 1,
            a,
            b,
            winner: Some(Winner::A),
            margin_a: 10,
        });
    }
    let round = swiss(&r.history(), 2).unwrap();
    let mut pairs: Vec<(Entrant, Entrant)> = round
        .pairs
        .iter()
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    pairs.sort_unstable();
    assert_eq!(pairs, [(0, 1), (2, 3), (4, 5)]);
}
