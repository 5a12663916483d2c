//! The greedy player: the best immediate result.
//!
//! Under fives scoring, the play that scores most (claimed, under muggins rules); then,
//! and under every other scoring, the heaviest tile by its value in a hand (ties by the
//! "heaviest" order of docs/rules.md, so the choice is unique up to the end it goes on: the
//! first end listed wins). It draws or passes only when it must. The same order is the
//! expert's rollout policy, so it works on a [`Game`] as well as on a [`Projection`].

use domino_engine::{Game, Move, Projection, Rules};

/// A move's rank for the greedy player: the largest is played.
pub(crate) type Rank = (u8, u16, u32, (u8, bool, u8));

/// Ranks `mv` making `points` under `rules`. Taking points beats everything, then plays
/// (by credited points, tile value, heaviness), then drawing, then passing. A scoring play
/// left unclaimed under muggins ranks as scoring nothing, so the claimed form wins.
pub(crate) fn rank(rules: &Rules, mv: Move, points: u16) -> Rank {
    match mv {
        Move::Muggins => (3, points, 0, (0, false, 0)),
        Move::Play { tile, claim, .. } => {
            let credited = if rules.muggins && claim != Some(points) {
                0
            } else {
                points
            };
            (2, credited, rules.tile_value(tile), tile.heaviness())
        }
        Move::Draw => (1, 0, 0, (0, false, 0)),
        Move::Pass => (0, 0, 0, (0, false, 0)),
        // Never legal moves: a bot is never offered them.
        Move::Resign | Move::TimedOut | Move::Abandon | Move::Forfeit => (0, 0, 0, (0, false, 0)),
    }
}

/// The first move of the best rank.
fn best(moves: impl Iterator<Item = (Move, Rank)>) -> Option<Move> {
    let mut best: Option<(Move, Rank)> = None;
    for (mv, r) in moves {
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((mv, r));
        }
    }
    best.map(|(mv, _)| mv)
}

/// The greedy move for the seat of `view`. `view.legal_moves` must not be empty.
pub fn choose(view: &Projection) -> Move {
    best(
        view.legal_moves
            .iter()
            .map(|m| (m.mv, rank(&view.rules, m.mv, m.points))),
    )
    .expect("a seat with a move to make")
}

/// The greedy move of `seat` in a game (the expert's rollout policy), using `buf` for the
/// legal moves. `None` when the seat may do nothing.
pub(crate) fn choose_in_game(game: &Game, seat: u8, buf: &mut Vec<Move>) -> Option<Move> {
    game.legal_moves_into(seat, buf);
    let rules = game.rules();
    best(buf.iter().map(|&mv| {
        let points = match mv {
            Move::Play { tile, end, .. } => game.points_of(tile, end),
            Move::Muggins => game.unclaimed().map_or(0, |u| u.points),
            _ => 0,
        };
        (mv, rank(rules, mv, points))
    }))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use domino_engine::rules::Opening;
    use domino_engine::{Deal, End, Preset, Seed, Tile};

    /// Tiles from their texts, "6-6 5-4 ...".
    pub(crate) fn tiles(list: &str) -> Vec<Tile> {
        list.split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect()
    }

    /// A two-seat game of `preset` from this deal, seat 0 leading any tile.
    pub(crate) fn game(preset: Preset, hand0: &str, hand1: &str) -> Game {
        let hands = vec![tiles(hand0), tiles(hand1)];
        let boneyard = Tile::all(6)
            .filter(|t| !hands.iter().flatten().any(|h| h == t))
            .collect();
        let rules = Rules {
            opening: Opening::SeatZero,
            ..preset.rules()
        };
        Game::new(
            rules,
            2,
            Seed::from_text("greedy"),
            Some(Deal { hands, boneyard }),
        )
        .unwrap()
    }

    fn points_of(view: &Projection, mv: Move) -> u16 {
        view.legal_moves
            .iter()
            .find(|m| m.mv == mv)
            .expect("a legal move")
            .points
    }

    #[test]
    fn greedy_takes_the_highest_scoring_play_in_a_fives_position() {
        let mut g = game(
            Preset::AllFives,
            "6-6 5-5 4-6 0-4 1-2 2-3 3-3",
            "5-6 5-4 0-5 0-0 1-1 0-1 1-3",
        );
        // Leads: 6-6 is heaviest but counts 12; 5-5 and 4-6 count 10, 5-5 is heavier.
        let view = g.project(Some(0));
        assert_eq!(choose(&view), Move::lead(Tile::new(5, 5)));
        g.play(0, Move::lead(Tile::new(5, 5))).unwrap();
        // On the crosswise 5-5: 0-5 makes 0 + 10 = 10; the heavier 5-6 makes 16, 5-4 14.
        let view = g.project(Some(1));
        let mv = choose(&view);
        assert_eq!(mv, Move::play(Tile::new(0, 5), End::Left));
        assert_eq!(points_of(&view, mv), 10);
        assert_eq!(view.legal_moves.iter().map(|m| m.points).max(), Some(10));
    }

    #[test]
    fn greedy_claims_its_points_under_muggins() {
        let mut g = game(
            Preset::Muggins,
            "6-6 5-5 4-6 0-4 1-2 2-3 3-3",
            "5-6 5-4 0-5 0-0 1-1 0-1 1-3",
        );
        g.play(
            0,
            Move::Play {
                tile: Tile::new(5, 5),
                end: None,
                claim: Some(10),
            },
        )
        .unwrap();
        // Muggins counts a lead double with one side covered as one half: 5 + 0 = 5.
        let view = g.project(Some(1));
        assert_eq!(
            choose(&view),
            Move::Play {
                tile: Tile::new(0, 5),
                end: Some(End::Left),
                claim: Some(5)
            }
        );
    }

    #[test]
    fn greedy_plays_the_heaviest_tile_without_fives_and_draws_only_when_forced() {
        let g = game(
            Preset::Draw,
            "6-6 5-5 4-6 0-5 1-2 2-3 3-3",
            "5-6 5-4 0-4 0-0 1-1 0-1 1-3",
        );
        assert_eq!(choose(&g.project(Some(0))), Move::lead(Tile::new(6, 6)));
        let mut g = g;
        g.play(0, Move::lead(Tile::new(6, 6))).unwrap();
        let view = g.project(Some(1));
        assert_eq!(choose(&view), Move::play(Tile::new(5, 6), End::Left));
        g.play(1, Move::play(Tile::new(5, 6), End::Left)).unwrap();
        g.play(0, Move::play(Tile::new(4, 6), End::Right)).unwrap();
        // Ends 5 and 4: seat 1 holds 5-4 and 0-4; 5-4 is heavier.
        assert_eq!(
            choose(&g.project(Some(1))),
            Move::play(Tile::new(4, 5), End::Left)
        );
    }
}
