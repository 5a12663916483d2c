//! Property tests of the engine over thousands of random games of every preset and seat
//! count: tiles are conserved, every legal move applies, every other move is refused
//! without change, every game ends, no projection shows another seat's tile in play,
//! and the same seed and moves give the same state.

use domino_server::engine::{End, Event, Game, Move, Preset, Rules, Seed, Tile, TileSet};
use domino_server::service::Record;
use proptest::prelude::*;
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Every preset with every seat count its set can deal (penalty with 4 seats needs a
/// smaller hand: 4 x 7 + start tile + reserve 2 exceeds double-6).
fn configurations() -> Vec<(Preset, Rules, u8)> {
    let mut out = Vec::new();
    for preset in Preset::ALL {
        for seats in 2..=4u8 {
            let mut rules = preset.rules();
            if rules.validate(seats).is_err() {
                rules.hand_size = 6;
            }
            out.push((preset, rules, seats));
            if seats == 4 && matches!(preset, Preset::AllFives | Preset::Muggins) {
                out.push((
                    preset,
                    Rules {
                        teams: true,
                        ..rules
                    },
                    seats,
                ));
            }
        }
    }
    out
}

/// Every move that could be written for `seat` (legal or not), over the whole set.
fn move_universe(game: &Game) -> Vec<Move> {
    let mut out = vec![Move::Draw, Move::Pass, Move::Muggins];
    let ends = [
        None,
        Some(End::Left),
        Some(End::Right),
        Some(End::Up),
        Some(End::Down),
    ];
    for tile in Tile::all(game.rules().max_pip) {
        for end in ends {
            for claim in [None, Some(0), Some(5), Some(10), Some(15), Some(20)] {
                out.push(Move::Play { tile, end, claim });
            }
        }
    }
    out
}

/// Plays one random game to its end, checking every property along the way. With
/// `exhaustive`, every written move of every seat is tried at every step.
fn play_random_game(rules: Rules, seats: u8, seed: u64, exhaustive: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let game_seed = Seed::from_text(&format!("prop {seed}"));
    let mut game = Game::new(rules, seats, game_seed, None).expect("valid rules");
    let universe = move_universe(&game);
    let mut moves = 0usize;
    let mut played: Vec<(u8, Move)> = Vec::new();
    while !game.is_over() {
        game.check_invariants().unwrap();
        let stored = Record::new(0, Preset::Classic, false, game.clone()).encode();
        assert_eq!(
            Record::decode(&stored).map(|r| r.game).ok().as_ref(),
            Some(&game),
            "the stored form round-trips"
        );
        check_projections(&game);

        // Every seat's legal moves apply; everything else is refused without change.
        let mut options: Vec<(u8, Move)> = Vec::new();
        for seat in 0..seats {
            let legal = game.legal_moves(seat);
            for &mv in &legal {
                let mut copy = game.clone();
                copy.play(seat, mv)
                    .unwrap_or_else(|e| panic!("legal {mv:?} by {seat} refused: {e}"));
                assert_ne!(copy, game, "a legal move changes the game");
                options.push((seat, mv));
            }
            if exhaustive {
                for &mv in &universe {
                    let accepted = game.check(seat, mv);
                    match accepted {
                        Ok(canonical) => {
                            assert!(
                                legal.contains(&canonical),
                                "{mv:?} accepted as {canonical:?} but not listed"
                            )
                        }
                        Err(_) => {
                            let mut copy = game.clone();
                            assert!(copy.play(seat, mv).is_err());
                            assert_eq!(copy, game, "a refused move changes nothing");
                        }
                    }
                }
            }
        }
        let turn = game.turn().expect("a game in play has a turn");
        assert!(
            options.iter().any(|&(s, _)| s == turn),
            "the seat to move always has a legal move"
        );
        let &(seat, mv) = options.choose(&mut rng).expect("some move");
        // Muggins calls are rare in random play; mostly follow the turn.
        let (seat, mv) = if seat != turn && rng.random_range(0..4) != 0 {
            **options
                .iter()
                .filter(|&&(s, _)| s == turn)
                .collect::<Vec<_>>()
                .choose(&mut rng)
                .unwrap()
        } else {
            (seat, mv)
        };
        played.push((seat, game.check(seat, mv).unwrap()));
        let events = game.play(seat, mv).unwrap();
        check_events(&events, seats);
        moves += 1;
        assert!(moves < 20_000, "the game ends");
    }
    assert!(
        game.legal_moves(0).is_empty(),
        "nothing is legal after the end"
    );
    // The compact record reads back as the moves played, in canonical form.
    let (recorded, _) = game.replay_history().expect("the record replays");
    assert_eq!(recorded, played);
    // Same seed, same moves: same game.
    let (replayed, _) =
        Game::replay(rules, seats, game_seed, None, &played).expect("the moves replay");
    assert_eq!(replayed, game);
}

fn check_projections(game: &Game) {
    let seats = game.seats();
    let spectator = game.project(None);
    assert_eq!(spectator.hand, None);
    assert!(spectator.legal_moves.is_empty());
    let boneyard = TileSet::full(game.rules().max_pip)
        .without((0..seats).fold(TileSet::EMPTY, |a, s| a.union(game.hand(s))))
        .without(game.layout().tiles().collect());
    for seat in 0..seats {
        let view = game.project(Some(seat));
        assert_eq!(view.hand, Some(game.hand(seat)));
        let others = (0..seats)
            .filter(|&s| s != seat)
            .fold(TileSet::EMPTY, |a, s| a.union(game.hand(s)));
        // What the seat cannot see is exactly the other hands and the boneyard.
        assert_eq!(view.unseen(), others.union(boneyard));
        for lm in &view.legal_moves {
            if let Move::Play { tile, .. } = lm.mv {
                assert!(game.hand(seat).contains(tile));
            }
        }
        // A revealed hand belongs to a finished round only.
        if let Some(last) = view.last_round {
            assert!(last.number < view.round || game.is_over());
        }
        for s in 0..seats {
            assert_eq!(view.hand_counts[s as usize] as usize, game.hand(s).len());
            let void_tiles = game.hand(s).with_any_pip(view.voids[s as usize]);
            assert!(
                void_tiles.is_empty() || (s == game.turn().unwrap() && view.drew),
                "seat {s} holds {void_tiles:?} of pips it is known not to hold"
            );
        }
    }
}

fn check_events(events: &[Event], seats: u8) {
    for &e in events {
        if let Event::Drew { seat, tile } = e {
            assert!(tile.is_some());
            for viewer in (0..seats).map(Some).chain([None]) {
                let seen = e.visible_to(viewer);
                assert_eq!(
                    matches!(seen, Event::Drew { tile: Some(_), .. }),
                    viewer == Some(seat)
                );
            }
        }
    }
}

#[test]
fn thousands_of_random_games_of_every_preset_and_seat_count_keep_every_property() {
    let configs = configurations();
    let per_config = 120;
    for (preset, rules, seats) in &configs {
        for i in 0..per_config {
            play_random_game(*rules, *seats, i * 7919 + *seats as u64, false);
        }
        eprintln!(
            "{preset} {seats} seats (teams: {}): {per_config} games",
            rules.teams
        );
    }
}

#[test]
fn every_written_move_is_refused_unless_listed_in_sampled_games_of_every_preset() {
    for (_, rules, seats) in configurations() {
        for i in 0..3 {
            play_random_game(rules, seats, 1_000_000 + i, true);
        }
    }
}

#[test]
fn larger_sets_play_to_the_end() {
    for max_pip in [9u8, 12, 15] {
        for preset in [Preset::Draw, Preset::AllFives, Preset::Muggins] {
            let rules = preset
                .rules()
                .with(&serde_json::from_str(&format!(r#"{{"max_pip": {max_pip}}}"#)).unwrap());
            for seats in 2..=4 {
                play_random_game(rules, seats, max_pip as u64 * 100 + seats as u64, false);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_seed_of_any_configuration_plays_to_the_end(config in 0usize..22, seed in any::<u64>()) {
        let configs = configurations();
        let (_, rules, seats) = configs[config % configs.len()];
        play_random_game(rules, seats, seed, false);
    }
}
