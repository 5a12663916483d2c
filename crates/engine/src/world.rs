//! A bot's world: a game made up from a seat's view with the hidden tiles placed, to
//! search from ([`Game::determinise`]). It records no history and its round is its last.

use super::deal::Seed;
use super::game::Game;
use super::history::History;
use super::round::Round;
use super::tile::{Tile, TileSet};

impl Game {
    /// A game consistent with what `view`'s seat knows, with the hidden tiles placed as
    /// given: `hands` for every seat (the viewer's own hand must be its real one) and the
    /// boneyard, top last. This is how a bot searches: it samples the hidden tiles and
    /// plays the game forward, never looking at the real one. Its round is its last: when
    /// it ends, nothing more is dealt or played. Fails when the tiles given are not the
    /// ones `view` cannot see.
    pub fn determinise(
        view: &super::Projection,
        hands: [TileSet; 4],
        boneyard_top_last: Vec<Tile>,
    ) -> Result<Game, String> {
        let mut scores = [0; 4];
        scores[..view.scores.len()].copy_from_slice(&view.scores);
        let game = Game {
            rules: view.rules,
            seats: view.seats,
            // Never read: a world deals no round.
            seed: Seed([0; 32]),
            first_deal: None,
            scores,
            rounds_done: view.rounds_done,
            round: Round {
                number: view.round,
                leader: view.leader,
                turn: view.turn.ok_or("the match is over")?,
                hands,
                boneyard: boneyard_top_last,
                layout: view.layout.clone(),
                must_lead: view.must_lead,
                start_tile: view.start_tile,
                drew: view.drew,
                voids: {
                    let mut v = [0; 4];
                    v[..view.voids.len()].copy_from_slice(&view.voids);
                    v
                },
                played: {
                    let mut p = [TileSet::EMPTY; 4];
                    p[..view.played.len()].copy_from_slice(&view.played);
                    p
                },
                held_since: {
                    let mut h = [0; 4];
                    h[..view.held_since.len()].copy_from_slice(&view.held_since);
                    h
                },
            },
            unclaimed: view.unclaimed,
            last_round: view.last_round,
            abandoned: view
                .abandoned
                .iter()
                .take(view.seats as usize)
                .enumerate()
                .fold(0, |m, (s, &a)| m | (u8::from(a) << s)),
            early_end: None,
            history: History::default(),
            sampled: true,
        };
        if let (Some(seat), Some(hand)) = (view.viewer, view.hand)
            && game.round.hands[seat as usize] != hand
        {
            return Err("the viewer's hand differs from its real hand".into());
        }
        for seat in 0..view.seats as usize {
            if game.round.hands[seat].len() != view.hand_counts[seat] as usize {
                return Err(format!(
                    "seat {seat} must hold {} tiles",
                    view.hand_counts[seat]
                ));
            }
        }
        if game.round.boneyard.len() != view.boneyard_count as usize {
            return Err(format!(
                "the boneyard must hold {} tiles",
                view.boneyard_count
            ));
        }
        // The rest of the world is the view's, which a checked game projected: the tiles
        // given are all the caller adds. Each of the unseen ones exactly once (the counts
        // add up and the sets match) leaves every tile in one place. A bot samples
        // thousands of worlds a decision; the whole check stays for debug builds.
        let r = &game.round;
        let mut hidden = TileSet::EMPTY;
        let mut count = r.boneyard.len();
        for t in &r.boneyard {
            hidden.insert(*t);
        }
        for (seat, hand) in r.hands.iter().enumerate() {
            if view.viewer != Some(seat as u8) {
                hidden = hidden.union(*hand);
                count += hand.len();
            }
        }
        if hidden != view.unseen() || count != hidden.len() {
            return Err("the tiles given are not the ones the view cannot see, once each".into());
        }
        debug_assert_eq!(game.check_invariants(), Ok(()));
        Ok(game)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Game, Move, MoveError, Preset, Seed};

    /// A game of `preset` for two seats, and seat 0's world with every hidden tile where
    /// it really is.
    fn real_and_world(preset: Preset, seed: &str) -> (Game, Game) {
        let real = Game::new(preset.rules(), 2, Seed::from_text(seed), None).unwrap();
        let view = real.project(Some(0));
        let world =
            Game::determinise(&view, real.round.hands, real.round.boneyard.clone()).unwrap();
        (real, world)
    }

    #[test]
    fn a_sampled_world_scores_its_round_as_the_real_game_and_deals_no_other() {
        for (preset, seed) in [(Preset::AllFives, "w1"), (Preset::Block, "w2")] {
            let (mut real, mut world) = real_and_world(preset, seed);
            while real.rounds_done() == 0 {
                let turn = real.turn().unwrap();
                let mv = real.legal_moves(turn)[0];
                assert_eq!(world.legal_moves(turn), real.legal_moves(turn));
                real.play(turn, mv).unwrap();
                world.play(turn, mv).unwrap();
            }
            assert_eq!(world.scores(), real.scores(), "{preset:?}");
            assert_eq!(world.rounds_done(), 1);
            assert!(real.turn().is_some() && real.round_number() == 2);
            assert_eq!(world.turn(), None, "{preset:?}: nothing more is played");
            assert!(world.legal_moves(0).is_empty() && world.legal_moves(1).is_empty());
            assert_eq!(world.play(0, Move::Pass), Err(MoveError::GameOver));
            assert_eq!(world.move_count(), 0, "a world records no history");
        }
    }

    #[test]
    fn a_world_is_refused_unless_it_places_each_unseen_tile_once() {
        let (real, _) = real_and_world(Preset::AllFives, "w3");
        let view = real.project(Some(0));
        let (hands, boneyard) = (real.round.hands, real.round.boneyard.clone());
        let theirs = hands[1].iter().next().unwrap();
        // A boneyard tile given to seat 1 as well, in place of one of its own.
        let mut twice = hands;
        twice[1].remove(theirs);
        twice[1].insert(boneyard[0]);
        assert!(Game::determinise(&view, twice, boneyard.clone()).is_err());
        // One of the viewer's own tiles given to seat 1.
        let mut mine = hands;
        mine[1].remove(theirs);
        mine[1].insert(hands[0].iter().next().unwrap());
        assert!(Game::determinise(&view, mine, boneyard.clone()).is_err());
        // A hand for a third seat of a two-seat game.
        let mut extra = hands;
        extra[2].insert(theirs);
        assert!(Game::determinise(&view, extra, boneyard).is_err());
        assert!(Game::determinise(&view, hands, real.round.boneyard.clone()).is_ok());
    }
}
