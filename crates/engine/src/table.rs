//! The table actions: resigning, running out of time, abandoned seats.
//!
//! The engine reads no clock. The service decides that the seat to move ran out of time
//! and says so with a move: [`Move::TimedOut`] (a bot moves for the seat next, as an
//! ordinary move), [`Move::Abandon`] (from now on a bot plays the seat) or
//! [`Move::Forfeit`] (the seat's side loses). [`Move::Resign`] is a seat's own request.
//! These moves are recorded and replayed like any other, so a match replays exactly,
//! abandoned seats and early ends included; [`Game::legal_moves`] never lists them, so
//! no client or bot is offered them.
//!
//! | move | who | effect | events |
//! |---|---|---|---|
//! | resign, two sides | any seat not abandoned, its turn or not | the other side wins | resigned, match ended (`resigned`) |
//! | resign, three or four sides | the same | the seat is abandoned; play goes on | resigned, abandoned |
//! | timed out | the seat to move | none | timed out |
//! | abandon | any seat not abandoned | the seat is abandoned | abandoned |
//! | forfeit (two sides only) | the seat to move | the other side wins | timed out, match ended (`timeout`) |
//!
//! An abandoned seat keeps its turn and its tiles: a bot makes its ordinary moves, which
//! the engine takes as it takes any seat's (refusing them from the seat's player is the
//! service's business). Like every move, a table action ends the chance to take points a
//! player left unclaimed under muggins rules: they are open until the next move, of any
//! kind.

use super::error::MoveError;
use super::event::{EarlyEnd, Event, MatchEnd};
use super::game::Game;
use super::moves::Move;

impl Game {
    /// Whether `seat` is abandoned: a bot plays it to the end.
    pub fn abandoned(&self, seat: u8) -> bool {
        seat < self.seats && self.abandoned & (1 << seat) != 0
    }

    /// Checks a table action for a seat that exists, in a match still in play.
    pub(super) fn check_table_action(&self, seat: u8, mv: Move) -> Result<Move, MoveError> {
        let turn = self.round.turn;
        match mv {
            Move::Resign | Move::Abandon if self.abandoned(seat) => {
                Err(MoveError::SeatAbandoned(seat))
            }
            Move::Forfeit if self.rules.sides(self.seats) != 2 => Err(MoveError::NotTwoSides),
            Move::TimedOut | Move::Forfeit if seat != turn => Err(MoveError::NotYourTurn { turn }),
            _ => Ok(mv),
        }
    }

    /// Applies a checked table action.
    pub(super) fn apply_table_action(&mut self, seat: u8, mv: Move, events: &mut Vec<Event>) {
        match mv {
            Move::Resign => {
                events.push(Event::Resigned { seat });
                if self.rules.sides(self.seats) == 2 {
                    self.end_early(seat, MatchEnd::Resigned, events);
                } else {
                    self.abandon(seat, events);
                }
            }
            Move::TimedOut => events.push(Event::TimedOut { seat }),
            Move::Abandon => self.abandon(seat, events),
            Move::Forfeit => {
                events.push(Event::TimedOut { seat });
                self.end_early(seat, MatchEnd::Timeout, events);
            }
            Move::Play { .. } | Move::Draw | Move::Pass | Move::Muggins => {
                unreachable!("not a table action")
            }
        }
    }

    fn abandon(&mut self, seat: u8, events: &mut Vec<Event>) {
        self.abandoned |= 1 << seat;
        events.push(Event::Abandoned { seat });
    }

    fn end_early(&mut self, seat: u8, reason: MatchEnd, events: &mut Vec<Event>) {
        self.early_end = Some(EarlyEnd { seat, reason });
        let ended = self.end_match_if_over(events);
        debug_assert!(ended, "an early end ends the match");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Outcome, Preset, Rules, Seed};

    fn game(rules: Rules, seats: u8) -> Game {
        Game::new(rules, seats, Seed::from_text("table"), None).unwrap()
    }

    fn teams() -> Rules {
        let mut rules = Preset::Classic.rules();
        rules.teams = true;
        rules
    }

    /// A move is refused with `err` and changes nothing.
    fn refused(g: &mut Game, seat: u8, mv: Move, err: MoveError) {
        let before = g.clone();
        assert_eq!(g.play(seat, mv), Err(err), "{mv:?} by seat {seat}");
        assert_eq!(*g, before, "a refused {mv:?} changed the game");
    }

    /// The game replays from its record into itself, and its invariants hold.
    fn replays(g: &Game) {
        g.check_invariants().unwrap();
        let (moves, _) = g.replay_history().unwrap();
        assert_eq!(moves.len(), g.move_count());
    }

    const ALL: [Move; 4] = [Move::Resign, Move::TimedOut, Move::Abandon, Move::Forfeit];

    #[test]
    fn never_listed_as_legal() {
        for (rules, seats) in [
            (Preset::Classic.rules(), 2),
            (teams(), 4),
            (Preset::Muggins.rules(), 3),
        ] {
            let g = game(rules, seats);
            for seat in 0..seats {
                assert!(g.legal_moves(seat).iter().all(|m| !m.is_table_action()));
                let view = g.project(Some(seat));
                assert!(view.legal_moves.iter().all(|m| !m.mv.is_table_action()));
                assert_eq!(view.abandoned, vec![false; seats as usize]);
                assert_eq!(view.match_end, None);
            }
        }
    }

    #[test]
    fn resigning_with_two_seats_off_turn_ends_the_match() {
        let mut g = game(Preset::Classic.rules(), 2);
        let off = 1 - g.turn().unwrap();
        let events = g.play(off, Move::Resign).unwrap();
        let winner = 1 - off;
        assert_eq!(
            events,
            vec![
                Event::Resigned { seat: off },
                Event::MatchEnded {
                    outcome: Outcome::Won { side: winner },
                    scores: [0; 4],
                    reason: MatchEnd::Resigned,
                },
            ]
        );
        assert!(g.is_over());
        assert_eq!(g.turn(), None);
        assert_eq!(g.outcome(), Some(Outcome::Won { side: winner }));
        assert_eq!(g.match_end(), Some(MatchEnd::Resigned));
        assert!(
            !g.abandoned(off),
            "a resignation with two sides abandons nobody"
        );
        assert!(g.legal_moves(winner).is_empty());
        let view = g.project(None);
        assert_eq!(view.match_end, Some(MatchEnd::Resigned));
        assert_eq!(view.outcome, Some(Outcome::Won { side: winner }));
        replays(&g);
    }

    #[test]
    fn resigning_in_teams_gives_the_match_to_the_other_team() {
        for seat in 0..4 {
            let mut g = game(teams(), 4);
            let events = g.play(seat, Move::Resign).unwrap();
            let other = 1 - seat % 2;
            assert_eq!(events[0], Event::Resigned { seat });
            assert!(matches!(
                events[1],
                Event::MatchEnded { outcome: Outcome::Won { side }, reason: MatchEnd::Resigned, .. }
                    if side == other
            ));
            assert_eq!(events.len(), 2);
            assert_eq!(g.outcome(), Some(Outcome::Won { side: other }));
            replays(&g);
        }
    }

    #[test]
    fn resigning_with_three_seats_abandons_the_seat_and_play_goes_on() {
        let mut g = game(Preset::Classic.rules(), 3);
        let turn = g.turn().unwrap();
        let off = (turn + 1) % 3;
        let legal = g.legal_moves(turn);
        let events = g.play(off, Move::Resign).unwrap();
        assert_eq!(
            events,
            vec![
                Event::Resigned { seat: off },
                Event::Abandoned { seat: off }
            ]
        );
        assert!(g.abandoned(off) && !g.abandoned(turn));
        assert!(!g.is_over());
        assert_eq!(g.match_end(), None);
        assert_eq!(g.turn(), Some(turn), "the turn did not move");
        assert_eq!(g.legal_moves(turn), legal);
        assert_eq!(
            g.project(Some(turn)).abandoned,
            (0..3).map(|s| s == off).collect::<Vec<_>>()
        );
        // An abandoned seat can neither resign nor be abandoned again.
        refused(&mut g, off, Move::Resign, MoveError::SeatAbandoned(off));
        refused(&mut g, off, Move::Abandon, MoveError::SeatAbandoned(off));
        // The seat to move resigns: still its turn, and its bot's moves are taken.
        g.play(turn, Move::Resign).unwrap();
        assert_eq!(g.turn(), Some(turn));
        let mv = g.legal_moves(turn)[0];
        g.play(turn, mv).unwrap();
        replays(&g);
    }

    #[test]
    fn timed_out_only_for_the_seat_to_move_and_changes_nothing_else() {
        for (rules, seats) in [(Preset::Classic.rules(), 2), (Preset::Classic.rules(), 4)] {
            let mut g = game(rules, seats);
            let turn = g.turn().unwrap();
            let off = (turn + 1) % seats;
            refused(&mut g, off, Move::TimedOut, MoveError::NotYourTurn { turn });
            let before = g.clone();
            assert_eq!(
                g.play(turn, Move::TimedOut).unwrap(),
                vec![Event::TimedOut { seat: turn }]
            );
            assert_eq!(g.move_count(), before.move_count() + 1);
            assert_eq!(g.project(Some(turn)), before.project(Some(turn)));
            assert_eq!(g.turn(), Some(turn));
            // The move made for the seat follows as an ordinary one.
            let mv = g.legal_moves(turn)[0];
            g.play(turn, mv).unwrap();
            replays(&g);
        }
    }

    #[test]
    fn forfeit_needs_two_sides_and_the_seat_to_move() {
        for (rules, seats) in [(Preset::Classic.rules(), 3), (Preset::Classic.rules(), 4)] {
            let mut g = game(rules, seats);
            let turn = g.turn().unwrap();
            refused(&mut g, turn, Move::Forfeit, MoveError::NotTwoSides);
        }
        for (rules, seats) in [(Preset::Classic.rules(), 2), (teams(), 4)] {
            let mut g = game(rules, seats);
            let turn = g.turn().unwrap();
            let off = (turn + 1) % seats;
            refused(&mut g, off, Move::Forfeit, MoveError::NotYourTurn { turn });
            let events = g.play(turn, Move::Forfeit).unwrap();
            let other = 1 - rules.side_of(turn);
            assert_eq!(
                events,
                vec![
                    Event::TimedOut { seat: turn },
                    Event::MatchEnded {
                        outcome: Outcome::Won { side: other },
                        scores: [0; 4],
                        reason: MatchEnd::Timeout,
                    },
                ]
            );
            assert_eq!(g.match_end(), Some(MatchEnd::Timeout));
            assert_eq!(g.turn(), None);
            replays(&g);
        }
    }

    #[test]
    fn abandon_twice_is_refused() {
        let mut g = game(Preset::Classic.rules(), 2);
        let off = 1 - g.turn().unwrap();
        assert_eq!(
            g.play(off, Move::Abandon).unwrap(),
            vec![Event::Abandoned { seat: off }]
        );
        assert!(g.abandoned(off) && !g.is_over());
        refused(&mut g, off, Move::Abandon, MoveError::SeatAbandoned(off));
        refused(&mut g, off, Move::Resign, MoveError::SeatAbandoned(off));
        // The other seat may still resign: an abandoned seat's side wins then.
        g.play(1 - off, Move::Resign).unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Won { side: off }));
        replays(&g);
    }

    #[test]
    fn the_invariants_check_the_table_state() {
        let g = game(Preset::Classic.rules(), 3);
        let mut bad = g.clone();
        bad.abandoned = 1 << 3;
        assert!(bad.check_invariants().is_err(), "seat 3 of 3 abandoned");
        let mut bad = g.clone();
        bad.early_end = Some(EarlyEnd {
            seat: 0,
            reason: MatchEnd::Resigned,
        });
        assert!(bad.check_invariants().is_err(), "three sides ended early");
        let mut two = game(Preset::Classic.rules(), 2);
        two.play(0, Move::Resign).unwrap();
        two.check_invariants().unwrap();
        for (seat, reason) in [(2, MatchEnd::Resigned), (0, MatchEnd::Target)] {
            let mut bad = two.clone();
            bad.early_end = Some(EarlyEnd { seat, reason });
            assert!(bad.check_invariants().is_err(), "{seat} {reason:?}");
        }
        let mut bad = two.clone();
        bad.scores[1] = 1000;
        assert!(
            bad.check_invariants().is_err(),
            "ended early past the target"
        );
    }

    #[test]
    fn no_such_seat() {
        let mut g = game(Preset::Classic.rules(), 3);
        for mv in ALL {
            refused(&mut g, 3, mv, MoveError::NoSuchSeat(3));
        }
    }

    #[test]
    fn after_the_match_ends_every_one_is_refused() {
        let ended = |how: Move| {
            let mut g = game(Preset::Classic.rules(), 2);
            let turn = g.turn().unwrap();
            g.play(turn, how).unwrap();
            g
        };
        // Ended early, or by playing to the end.
        let mut played = game(Preset::Classic.rules(), 2);
        while let Some(turn) = played.turn() {
            let mv = played.legal_moves(turn)[0];
            played.play(turn, mv).unwrap();
        }
        assert!(matches!(
            played.match_end(),
            Some(MatchEnd::Target | MatchEnd::Rounds)
        ));
        for mut g in [ended(Move::Resign), ended(Move::Forfeit), played] {
            for seat in 0..2 {
                for mv in ALL {
                    refused(&mut g, seat, mv, MoveError::GameOver);
                }
            }
            replays(&g);
        }
    }

    #[test]
    fn a_normal_end_says_target_or_rounds() {
        let mut rules = Preset::Classic.rules();
        rules.target = None;
        rules.rounds = Some(1);
        let mut g = game(rules, 2);
        while let Some(turn) = g.turn() {
            let mv = g.legal_moves(turn)[0];
            g.play(turn, mv).unwrap();
        }
        assert_eq!(g.match_end(), Some(MatchEnd::Rounds));
        let mut rules = Preset::Classic.rules();
        rules.target = Some(1);
        rules.rounds = None;
        let mut g = game(rules, 2);
        let mut last = Vec::new();
        while let Some(turn) = g.turn() {
            let mv = g.legal_moves(turn)[0];
            last = g.play(turn, mv).unwrap();
        }
        assert_eq!(g.match_end(), Some(MatchEnd::Target));
        assert!(matches!(
            last.last(),
            Some(Event::MatchEnded {
                reason: MatchEnd::Target,
                ..
            })
        ));
    }

    #[test]
    fn a_table_action_ends_unclaimed_points() {
        // Play muggins games, leaving scoring plays unclaimed, until points are open.
        for n in 0.. {
            let mut g = Game::new(
                Preset::Muggins.rules(),
                2,
                Seed::from_text(&format!("unclaimed {n}")),
                None,
            )
            .unwrap();
            while let Some(turn) = g.turn() {
                if g.unclaimed().is_some() {
                    assert!(g.legal_moves(turn).contains(&Move::Muggins));
                    let mut timed = g.clone();
                    timed.play(turn, Move::TimedOut).unwrap();
                    assert_eq!(timed.unclaimed(), None, "the marker is a move");
                    let mut abandoned = g.clone();
                    abandoned.play(1 - turn, Move::Abandon).unwrap();
                    assert_eq!(abandoned.unclaimed(), None);
                    replays(&timed);
                    replays(&abandoned);
                    return;
                }
                let legal = g.legal_moves(turn);
                let unclaimed = legal.iter().find(|m| {
                    matches!(**m, Move::Play { tile, end, claim: None }
                        if g.points_of(tile, end) > 0)
                });
                let mv = *unclaimed.unwrap_or(&legal[0]);
                g.play(turn, mv).unwrap();
            }
            assert!(n < 200, "no unclaimed points in 200 games");
        }
    }
}
