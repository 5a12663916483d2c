//! The standings: score, then Buchholz, Sonneborn-Berger, the points margin, entry order.
//!
//! Only finished pairings count (an unfinished one scores nothing yet, its margin
//! included). A bye scores a win but has no opponent: it adds nothing to its holder's
//! Buchholz or Sonneborn-Berger. A withdrawn entrant keeps its place and its games, and
//! its score still counts in its opponents' Buchholz.

use crate::history::{Entrant, History, Winner};
use crate::points::Points;

/// One entrant's line of the standings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    pub entrant: Entrant,
    /// The position in the standings, 1-based (no shared ranks: entry order breaks ties).
    pub rank: u16,
    pub score: Points,
    /// The sum of the opponents' scores.
    pub buchholz: Points,
    /// The scores of the opponents beaten plus half the scores of those drawn.
    pub sonneborn_berger: Points,
    /// The points scored minus those conceded, over every finished game.
    pub margin: i64,
}

impl Standing {
    pub fn score(&self) -> f64 {
        self.score.as_f64()
    }

    pub fn buchholz(&self) -> f64 {
        self.buchholz.as_f64()
    }

    pub fn sonneborn_berger(&self) -> f64 {
        self.sonneborn_berger.as_f64()
    }

    pub fn margin(&self) -> i64 {
        self.margin
    }

    /// Whether `self` stands above `other` (the standings order; total, as entrants differ).
    fn ahead_of(&self, other: &Standing) -> std::cmp::Ordering {
        other
            .score
            .cmp(&self.score)
            .then(other.buchholz.cmp(&self.buchholz))
            .then(other.sonneborn_berger.cmp(&self.sonneborn_berger))
            .then(other.margin.cmp(&self.margin))
            .then(self.entrant.cmp(&other.entrant))
    }
}

/// Every entrant, withdrawn or not, in standings order.
pub fn standings(h: &History) -> Vec<Standing> {
    let n = usize::from(h.entrants);
    let mut lines: Vec<Standing> = (0..h.entrants)
        .map(|entrant| Standing {
            entrant,
            rank: 0,
            score: Points::ZERO,
            buchholz: Points::ZERO,
            sonneborn_berger: Points::ZERO,
            margin: 0,
        })
        .collect();
    let finished = || {
        h.played.iter().filter_map(|p| {
            let w = p.winner?;
            (usize::from(p.a) < n && usize::from(p.b) < n).then_some((p, w))
        })
    };
    for (p, w) in finished() {
        let (sa, sb) = match w {
            Winner::A => (Points::WIN, Points::ZERO),
            Winner::B => (Points::ZERO, Points::WIN),
            Winner::Draw => (Points::DRAW, Points::DRAW),
        };
        lines[usize::from(p.a)].score += sa;
        lines[usize::from(p.b)].score += sb;
        lines[usize::from(p.a)].margin += i64::from(p.margin_a);
        lines[usize::from(p.b)].margin -= i64::from(p.margin_a);
    }
    for b in h.byes.iter().filter(|b| usize::from(b.entrant) < n) {
        lines[usize::from(b.entrant)].score += Points::WIN;
    }
    // Tiebreaks read the final scores, so they come in a second pass.
    for (p, w) in finished() {
        let (a, b) = (usize::from(p.a), usize::from(p.b));
        let (score_a, score_b) = (lines[a].score, lines[b].score);
        lines[a].buchholz += score_b;
        lines[b].buchholz += score_a;
        match w {
            Winner::A => lines[a].sonneborn_berger += score_b,
            Winner::B => lines[b].sonneborn_berger += score_a,
            Winner::Draw => {
                lines[a].sonneborn_berger += score_b.half();
                lines[b].sonneborn_berger += score_a.half();
            }
        }
    }
    lines.sort_by(Standing::ahead_of);
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = u16::try_from(i + 1).expect("at most u16::MAX entrants");
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Bye, Played};

    fn played(round: u16, a: Entrant, b: Entrant, w: Winner, margin_a: i32) -> Played {
        Played {
            round,
            a,
            b,
            winner: Some(w),
            margin_a,
        }
    }

    fn order(lines: &[Standing]) -> Vec<Entrant> {
        lines.iter().map(|l| l.entrant).collect()
    }

    #[test]
    fn with_nothing_played_the_standings_are_the_entry_order() {
        let h = History {
            entrants: 3,
            withdrawn: &[],
            played: &[],
            byes: &[],
        };
        let lines = standings(&h);
        assert_eq!(order(&lines), [0, 1, 2]);
        assert_eq!(lines.iter().map(|l| l.rank).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn hand_computed_figures_of_a_four_player_event() {
        // Round 1: 0 beats 1 (+30), 2 draws 3 (+5 to 2).
        // Round 2: 0 draws 2 (−10 to 0), 3 beats 1 (+20).
        // Scores: 0: 1.5, 1: 0, 2: 1, 3: 1.5.
        let played = [
            played(1, 0, 1, Winner::A, 30),
            played(1, 2, 3, Winner::Draw, 5),
            played(2, 0, 2, Winner::Draw, -10),
            played(2, 3, 1, Winner::A, 20),
        ];
        let h = History {
            entrants: 4,
            withdrawn: &[],
            played: &played,
            byes: &[],
        };
        let lines = standings(&h);
        let line = |e: Entrant| *lines.iter().find(|l| l.entrant == e).unwrap();
        // 0: opponents 1 (0) and 2 (1): Buchholz 1; SB: beat 1 (0) + half of 2's 1 = 0.5.
        assert_eq!(
            (
                line(0).score(),
                line(0).buchholz(),
                line(0).sonneborn_berger()
            ),
            (1.5, 1.0, 0.5)
        );
        assert_eq!(line(0).margin(), 20);
        // 3: opponents 2 (1) and 1 (0): Buchholz 1; SB: half of 2's 1 + beat 1 (0) = 0.5.
        assert_eq!(
            (
                line(3).score(),
                line(3).buchholz(),
                line(3).sonneborn_berger()
            ),
            (1.5, 1.0, 0.5)
        );
        assert_eq!(line(3).margin(), 15);
        // 2: opponents 3 (1.5) and 0 (1.5): Buchholz 3; SB: 0.75 + 0.75.
        assert_eq!(
            (
                line(2).score(),
                line(2).buchholz(),
                line(2).sonneborn_berger()
            ),
            (1.0, 3.0, 1.5)
        );
        assert_eq!(line(2).margin(), 15);
        // 1: opponents 0 and 3: Buchholz 3, nothing beaten.
        assert_eq!(
            (
                line(1).score(),
                line(1).buchholz(),
                line(1).sonneborn_berger()
            ),
            (0.0, 3.0, 0.0)
        );
        assert_eq!(line(1).margin(), -50);
        // 0 and 3 tie on score, Buchholz and SB; 0 has the larger margin.
        assert_eq!(order(&lines), [0, 3, 2, 1]);
    }

    #[test]
    fn equal_on_every_figure_the_earlier_entry_stands_higher() {
        let played = [
            played(1, 3, 0, Winner::Draw, 0),
            played(1, 2, 1, Winner::Draw, 0),
        ];
        let h = History {
            entrants: 4,
            withdrawn: &[],
            played: &played,
            byes: &[],
        };
        assert_eq!(order(&standings(&h)), [0, 1, 2, 3]);
    }

    #[test]
    fn buchholz_breaks_a_tie_of_scores_before_sonneborn_berger() {
        // 0 and 1 both have 1 point; 0 beat 2 (who then beat 3: 1 point), 1 beat 3 (0).
        let played = [
            played(1, 0, 2, Winner::A, 1),
            played(1, 1, 3, Winner::A, 100),
            played(2, 2, 3, Winner::A, 1),
            played(2, 0, 1, Winner::Draw, 0),
        ];
        let h = History {
            entrants: 4,
            withdrawn: &[],
            played: &played,
            byes: &[],
        };
        let lines = standings(&h);
        // 0: 1.5 (beat 2, drew 1); 1: 1.5 (beat 3, drew 0); Buchholz 0: 1 + 1.5, 1: 0 + 1.5.
        assert_eq!(order(&lines)[..2], [0, 1]);
        assert_eq!(lines[0].buchholz(), 2.5);
        assert_eq!(lines[1].buchholz(), 1.5);
        assert!(lines[1].margin() > lines[0].margin());
    }

    #[test]
    fn sonneborn_berger_breaks_a_tie_of_buchholz_before_the_margin() {
        // 1 beats 2 (who ends on 2), loses to 3 (who ends on 1); 0 the other way round;
        // 0 and 1 draw. Equal scores and Buchholz; 1's win is worth more, 0's margin larger.
        let played = [
            played(1, 1, 2, Winner::A, 1),
            played(1, 0, 3, Winner::A, 50),
            played(2, 3, 1, Winner::A, 1),
            played(2, 2, 0, Winner::A, 1),
            played(3, 2, 4, Winner::A, 1),
            played(3, 5, 3, Winner::A, 1),
            played(3, 0, 1, Winner::Draw, 0),
        ];
        let h = History {
            entrants: 6,
            withdrawn: &[],
            played: &played,
            byes: &[],
        };
        let lines = standings(&h);
        let line = |e: Entrant| *lines.iter().find(|l| l.entrant == e).unwrap();
        assert_eq!(
            (
                line(1).score(),
                line(1).buchholz(),
                line(1).sonneborn_berger()
            ),
            (1.5, 4.5, 2.75)
        );
        assert_eq!(
            (
                line(0).score(),
                line(0).buchholz(),
                line(0).sonneborn_berger()
            ),
            (1.5, 4.5, 1.75)
        );
        assert!(line(0).margin() > line(1).margin());
        assert!(line(1).rank < line(0).rank);
    }

    #[test]
    fn a_bye_scores_a_win_and_adds_nothing_to_the_tiebreaks() {
        let played = [played(1, 0, 1, Winner::A, 12)];
        let byes = [Bye {
            round: 1,
            entrant: 2,
        }];
        let h = History {
            entrants: 3,
            withdrawn: &[],
            played: &played,
            byes: &byes,
        };
        let lines = standings(&h);
        let two = lines.iter().find(|l| l.entrant == 2).unwrap();
        assert_eq!(
            (
                two.score(),
                two.buchholz(),
                two.sonneborn_berger(),
                two.margin()
            ),
            (1.0, 0.0, 0.0, 0)
        );
        // 0 and 2 both have 1; 0's Buchholz is 1's 0: equal, SB equal; 0's margin wins.
        assert_eq!(order(&lines), [0, 2, 1]);
    }

    #[test]
    fn an_unfinished_pairing_scores_nothing_yet() {
        let played = [Played {
            round: 1,
            a: 1,
            b: 0,
            winner: None,
            margin_a: 40,
        }];
        let h = History {
            entrants: 2,
            withdrawn: &[],
            played: &played,
            byes: &[],
        };
        let lines = standings(&h);
        assert!(lines.iter().all(|l| l.score() == 0.0 && l.margin() == 0));
        assert_eq!(order(&lines), [0, 1]);
    }
}
