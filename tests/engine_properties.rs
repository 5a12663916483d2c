//! Property tests of the engine over thousands of random games of every preset and seat
//! count: tiles are conserved, every legal move applies, every other move is refused
//! without change, every game ends, no projection shows another seat's tile in play,
//! the same seed and moves give the same state, and a finished game's export (rules, seed,
//! every round's deal, the moves) is the game: its deals are the ones the seats were dealt,
//! and it replays to the same final view. The same hold when the table actions (resign,
//! timed out, abandon, forfeit) are made at random along the way: each is accepted exactly
//! when its conditions hold, and a game with abandoned seats or an early end replays.

use domino_server::engine::rules::{DrawRule, MAX_ROUNDS, MAX_TARGET, NextLeader, Opening};
use domino_server::engine::{
    End, Event, Game, LegalMove, MatchEnd, Move, MoveError, Outcome, Preset, RoundResult, Rules,
    Seed, Tile, TileSet,
};
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

const TABLE_ACTIONS: [Move; 4] = [Move::Resign, Move::TimedOut, Move::Abandon, Move::Forfeit];

/// Whether a table action should be accepted, from its conditions alone (see
/// `crates/engine/src/table.rs`): the model the engine's `check` is held to.
fn table_action_allowed(game: &Game, seat: u8, mv: Move) -> bool {
    let in_play = !game.is_over() && seat < game.seats();
    let two_sides = game.rules().sides(game.seats()) == 2;
    in_play
        && match mv {
            Move::Resign | Move::Abandon => !game.abandoned(seat),
            Move::TimedOut => game.turn() == Some(seat),
            Move::Forfeit => two_sides && game.turn() == Some(seat),
            _ => unreachable!(),
        }
}

/// Makes a table action if `check` accepts it, holding acceptance to the model and the
/// effect to the rules of `crates/engine/src/table.rs`. Returns the move in canonical form when
/// it was made.
fn try_table_action(game: &mut Game, seat: u8, mv: Move) -> Option<Move> {
    let allowed = table_action_allowed(game, seat, mv);
    let before = game.clone();
    let Ok(events) = game.play(seat, mv) else {
        assert!(!allowed, "{mv:?} by seat {seat} refused");
        assert_eq!(*game, before, "a refused {mv:?} changes nothing");
        return None;
    };
    assert!(allowed, "{mv:?} by seat {seat} accepted");
    game.check_invariants().unwrap();
    assert_eq!(game.move_count(), before.move_count() + 1);
    assert_eq!(
        game.unclaimed(),
        None,
        "a table action ends unclaimed points"
    );
    let rules = *game.rules();
    let two_sides = rules.sides(game.seats()) == 2;
    let mut scores = [0; 4];
    scores[..before.scores().len()].copy_from_slice(before.scores());
    let ended = |reason| Event::MatchEnded {
        outcome: Outcome::Won {
            side: 1 - rules.side_of(seat),
        },
        scores,
        reason,
    };
    let expected = match mv {
        Move::Resign if two_sides => vec![Event::Resigned { seat }, ended(MatchEnd::Resigned)],
        Move::Resign => vec![Event::Resigned { seat }, Event::Abandoned { seat }],
        Move::TimedOut => vec![Event::TimedOut { seat }],
        Move::Abandon => vec![Event::Abandoned { seat }],
        Move::Forfeit => vec![Event::TimedOut { seat }, ended(MatchEnd::Timeout)],
        _ => unreachable!(),
    };
    assert_eq!(events, expected);
    // Nothing else changes: the tiles, the turn, the scores, the other seats.
    for s in 0..game.seats() {
        assert_eq!(game.hand(s), before.hand(s));
        let newly = matches!(expected.last(), Some(Event::Abandoned { seat: a }) if *a == s);
        assert_eq!(game.abandoned(s), before.abandoned(s) || newly);
    }
    assert_eq!(game.scores(), before.scores());
    if game.is_over() {
        assert_eq!(game.turn(), None);
        assert!(matches!(
            game.match_end(),
            Some(MatchEnd::Resigned | MatchEnd::Timeout)
        ));
    } else {
        assert_eq!(game.turn(), before.turn());
        for s in 0..game.seats() {
            let legal = before
                .legal_moves(s)
                .into_iter()
                .filter(|&m| m != Move::Muggins)
                .collect::<Vec<_>>();
            assert_eq!(game.legal_moves(s), legal, "seat {s}'s choices");
        }
    }
    Some(mv)
}

/// Every move that could be written for `seat` (legal or not), over the whole set.
fn move_universe(game: &Game) -> Vec<Move> {
    let mut out = vec![Move::Draw, Move::Pass, Move::Muggins];
    out.extend(TABLE_ACTIONS);
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
    play_random_game_with(rules, seats, seed, exhaustive, 0);
}

/// [`play_random_game`], making a random table action (any seat, any of the four; made
/// only when accepted) before about one move in `table_rate` (never when 0).
fn play_random_game_with(rules: Rules, seats: u8, seed: u64, exhaustive: bool, table_rate: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let game_seed = Seed::from_text(&format!("prop {seed}"));
    let mut game = Game::new(rules, seats, game_seed, None).expect("valid rules");
    let universe = move_universe(&game);
    let mut moves = 0usize;
    let mut played: Vec<(u8, Move)> = Vec::new();
    while !game.is_over() {
        game.check_invariants().unwrap();
        let stored = Record::new(0, Preset::Classic, false, None, game.clone()).encode();
        assert_eq!(
            Record::decode(&stored)
                .map(|r| r.game().clone())
                .ok()
                .as_ref(),
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
                        Ok(canonical) if mv.is_table_action() => {
                            assert_eq!(canonical, mv);
                            assert!(table_action_allowed(&game, seat, mv), "{mv:?} by {seat}");
                        }
                        Err(_) if mv.is_table_action() => {
                            assert!(!table_action_allowed(&game, seat, mv), "{mv:?} by {seat}");
                            let mut copy = game.clone();
                            assert!(copy.play(seat, mv).is_err());
                            assert_eq!(copy, game, "a refused move changes nothing");
                        }
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
        assert!(options.iter().all(|(_, m)| !m.is_table_action()));
        if table_rate > 0 && rng.random_range(0..table_rate) == 0 {
            let seat = rng.random_range(0..seats);
            let mv = *TABLE_ACTIONS.choose(&mut rng).unwrap();
            if let Some(mv) = try_table_action(&mut game, seat, mv) {
                played.push((seat, mv));
            }
            moves += 1;
            continue;
        }
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
    for seat in 0..seats {
        for mv in TABLE_ACTIONS {
            assert_eq!(game.check(seat, mv), Err(MoveError::GameOver));
        }
    }
    check_projections(&game);
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
    let abandoned: Vec<bool> = (0..seats).map(|s| game.abandoned(s)).collect();
    assert_eq!(spectator.abandoned, abandoned);
    assert_eq!(spectator.match_end, game.match_end());
    assert_eq!(spectator.match_end.is_some(), game.is_over());
    assert_eq!(spectator.outcome.is_some(), game.is_over());
    assert!(spectator.legal_moves.is_empty());
    let boneyard = TileSet::full(game.rules().max_pip)
        .without((0..seats).fold(TileSet::EMPTY, |a, s| a.union(game.hand(s))))
        .without(game.layout().tiles().collect());
    for seat in 0..seats {
        let view = game.project(Some(seat));
        assert_eq!(view.hand, Some(game.hand(seat)));
        assert_eq!(view.abandoned, abandoned);
        assert_eq!(view.match_end, game.match_end());
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
        check_listed_points(game, seat, &view.legal_moves);
        // A revealed hand belongs to a finished round only.
        if let Some(last) = view.last_round {
            assert!(last.number < view.round || game.is_over());
        }
        for s in 0..seats {
            assert_eq!(view.hand_counts[s as usize] as usize, game.hand(s).len());
            let void_tiles = game.hand(s).with_any_pip(view.voids[s as usize]);
            assert!(
                void_tiles.is_empty(),
                "seat {s} holds {void_tiles:?} of pips it is known not to hold"
            );
        }
    }
}

/// A listed move's `points` are what it credits its side at once, and under muggins a
/// scoring play's claiming form is listed before the unclaimed one: a client taking the
/// first move, or the one with the most points, never gives its points away.
fn check_listed_points(game: &Game, seat: u8, listed: &[LegalMove]) {
    for (i, lm) in listed.iter().enumerate() {
        let mut copy = game.clone();
        let credited: u16 = copy
            .play(seat, lm.mv)
            .expect("a listed move applies")
            .iter()
            .map(|e| match *e {
                Event::Played {
                    points,
                    credited: true,
                    ..
                }
                | Event::MugginsTaken { points, .. } => points,
                _ => 0,
            })
            .sum();
        assert_eq!(
            lm.points, credited,
            "{:?} lists {} points",
            lm.mv, lm.points
        );
        if let Move::Play {
            tile,
            end,
            claim: None,
        } = lm.mv
        {
            let claimed = listed.iter().position(|m| {
                matches!(m.mv, Move::Play { tile: t, end: e, claim: Some(_) } if t == tile && e == end)
            });
            assert!(
                claimed.is_none_or(|j| j < i),
                "{:?} is listed before its claim",
                lm.mv
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
fn random_table_actions_keep_every_property_and_replay() {
    let (mut ended_early, mut abandoned) = (0, 0);
    for (preset, rules, seats) in &configurations() {
        for i in 0..40 {
            let seed = 5_000_000 + i * 7919 + *seats as u64;
            play_random_game_with(*rules, *seats, seed, false, 12);
            // Count what the random actions reached, so the test is known to cover them.
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut game = Game::new(*rules, *seats, Seed::from_text("count"), None).unwrap();
            while let Some(turn) = game.turn() {
                let seat = rng.random_range(0..*seats);
                let mv = *TABLE_ACTIONS.choose(&mut rng).unwrap();
                if rng.random_range(0..12) == 0 {
                    try_table_action(&mut game, seat, mv);
                } else {
                    let legal = game.legal_moves(turn);
                    game.play(turn, *legal.choose(&mut rng).unwrap()).unwrap();
                }
            }
            ended_early += usize::from(matches!(
                game.match_end(),
                Some(MatchEnd::Resigned | MatchEnd::Timeout)
            ));
            abandoned += (0..*seats).filter(|&s| game.abandoned(s)).count();
        }
        eprintln!("{preset} {seats} seats (teams: {}): 40 games", rules.teams);
    }
    assert!(
        ended_early > 100 && abandoned > 100,
        "{ended_early} early ends, {abandoned} abandoned seats"
    );
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

/// Issue 27, 2: `known_missing` (the projection's `voids`) is what every seat may know,
/// so it is never false: over random games of every preset, under each of its drawing
/// rules, no seat is ever shown not to hold a number it holds, in any view; and a pass
/// always adds the open numbers, so the list is not merely empty.
#[test]
fn no_seat_is_ever_known_not_to_hold_a_number_it_holds() {
    let mut passes = 0;
    for (preset, rules, seats) in configurations() {
        let draws = match rules.draw {
            DrawRule::Block => vec![DrawRule::Block],
            _ => vec![DrawRule::UntilPlayable, DrawRule::One],
        };
        for draw in draws {
            for anytime in [false, true] {
                let rules = Rules {
                    draw,
                    draw_anytime: anytime && draw != DrawRule::Block,
                    ..rules
                };
                for i in 0..40u64 {
                    let mut rng = ChaCha8Rng::seed_from_u64(i * 31 + seats as u64);
                    let seed = Seed::from_text(&format!("known missing {preset} {i}"));
                    let mut game = Game::new(rules, seats, seed, None).unwrap();
                    while let Some(turn) = game.turn() {
                        for viewer in (0..seats).map(Some).chain([None]) {
                            let view = game.project(viewer);
                            for s in 0..seats {
                                let held = game.hand(s).with_any_pip(view.voids[s as usize]);
                                assert!(
                                    held.is_empty(),
                                    "{preset} ({draw:?}, anytime {anytime}) game {i}: seat {s} \
                                     is shown not to hold numbers of {held:?}"
                                );
                            }
                        }
                        let mv = *game.legal_moves(turn).choose(&mut rng).unwrap();
                        let (open, round) = (game.layout().tips().end_pips(), game.round_number());
                        game.play(turn, mv).unwrap();
                        if mv == Move::Pass && game.round_number() == round && !game.is_over() {
                            let known = game.project(None).voids[turn as usize];
                            assert_eq!(known & open, open, "{preset}: a pass by seat {turn}");
                            passes += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(passes > 1000, "only {passes} passes");
}

/// Issue 25: who laid each tile and when each seat last drew are told right, as the
/// master reads them for evidence: every seat's `played` are the tiles it laid this round,
/// and every play it made from `held_since` on, it made holding every tile it holds now.
#[test]
fn every_seat_is_told_the_tiles_each_laid_and_since_when_each_holds_its_hand() {
    let mut checked_after_draws = 0;
    for (preset, rules, seats) in configurations() {
        for i in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(i * 17 + seats as u64);
            let seed = Seed::from_text(&format!("laid {preset} {i}"));
            let mut game = Game::new(rules, seats, seed, None).unwrap();
            // This round's plays: seat, tiles on the table before, the hand it played from.
            let mut plays: Vec<(u8, usize, TileSet)> = Vec::new();
            let mut laid = [TileSet::EMPTY; 4];
            let mut round = game.round_number();
            while let Some(turn) = game.turn() {
                if game.round_number() != round {
                    (round, plays, laid) = (game.round_number(), Vec::new(), [TileSet::EMPTY; 4]);
                }
                let view = game.project(None);
                assert_eq!(
                    view.played,
                    laid[..seats as usize].to_vec(),
                    "{preset} game {i}"
                );
                for &(s, before, hand) in &plays {
                    let since = usize::from(view.held_since[s as usize]);
                    if before >= since {
                        let now = game.hand(s);
                        assert_eq!(hand.union(now), hand, "{preset} game {i}: seat {s}");
                        checked_after_draws += usize::from(since > 0);
                    }
                }
                let mv = *game.legal_moves(turn).choose(&mut rng).unwrap();
                if let Move::Play { tile, .. } = mv {
                    plays.push((turn, game.layout().len(), game.hand(turn)));
                    laid[turn as usize].insert(tile);
                }
                game.play(turn, mv).unwrap();
            }
        }
    }
    assert!(checked_after_draws > 1000, "only {checked_after_draws}");
}

/// Issue 20, 2: the longest matches the rules allow (`rounds` and `target` at their
/// maxima, together and alone) play to the end on every preset, are stored and read back,
/// replay from their record, and give every round's deal. Random play, one match each:
/// about 0.1 s in all.
#[test]
fn the_longest_matches_allowed_play_to_the_end_and_replay_on_every_preset() {
    for preset in Preset::ALL {
        for (target, rounds) in [
            (Some(MAX_TARGET), Some(MAX_ROUNDS)),
            (Some(MAX_TARGET), None),
            (None, Some(MAX_ROUNDS)),
        ] {
            let rules = Rules {
                target,
                rounds,
                ..preset.rules()
            };
            let started = std::time::Instant::now();
            let mut rng = ChaCha8Rng::seed_from_u64(20);
            let mut game = Game::new(
                rules,
                2,
                Seed::from_text(&format!("longest {preset}")),
                None,
            )
            .unwrap();
            let mut moves = Vec::new();
            while let Some(turn) = game.turn() {
                game.legal_moves_into(turn, &mut moves);
                game.play(turn, *moves.choose(&mut rng).unwrap()).unwrap();
            }
            assert!(game.rounds_done() <= MAX_ROUNDS, "{preset}");
            game.check_invariants().unwrap();
            let stored = Record::new(0, preset, false, None, game.clone()).encode();
            assert_eq!(
                Record::decode(&stored).map(|r| r.game().clone()).ok(),
                Some(game.clone())
            );
            let (replayed, _) = game.replay_history().expect("the record replays");
            assert_eq!(replayed.len(), game.move_count());
            let deals = game.deals();
            assert_eq!(deals.len(), game.round_number() as usize);
            eprintln!(
                "{preset} target {target:?} rounds {rounds:?}: {} rounds, {} moves, {} bytes stored, scores {:?}, ended by {:?}, {:?}",
                game.rounds_done(),
                game.move_count(),
                stored.len(),
                game.scores(),
                game.match_end(),
                started.elapsed()
            );
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

/// A random rule set: any preset with a random opening, next leader, set, hand, drawing
/// rule, seats and match length (combinations the rules refuse are drawn again). Small
/// hands make many short rounds, with dominoes and blocked rounds mixed.
fn random_rules(rng: &mut ChaCha8Rng) -> (Rules, u8) {
    loop {
        let preset = *Preset::ALL.choose(rng).unwrap();
        let seats = rng.random_range(2..=4u8);
        let mut rules = preset.rules();
        rules.max_pip = *[6, 6, 9].choose(rng).unwrap();
        rules.hand_size = rng.random_range(1..=7);
        rules.opening = *Opening::ALL.choose(rng).unwrap();
        rules.next_leader = *NextLeader::ALL.choose(rng).unwrap();
        rules.draw = *DrawRule::ALL.choose(rng).unwrap();
        rules.teams = seats == 4 && rng.random_range(0..3) == 0;
        rules.rounds = Some(rng.random_range(1..=6));
        rules.target = [None, Some(rng.random_range(10..=150))][rng.random_range(0..2)];
        if rules.validate(seats).is_ok() {
            return (rules, seats);
        }
    }
}

/// What the seats saw of one round: the hands dealt, the start tile, and the tiles drawn,
/// in order.
struct SeenRound {
    hands: Option<Vec<TileSet>>,
    start_tile: Option<Tile>,
    drawn: Vec<Tile>,
}

/// Follows what `events` show of the deals into `seen`, and the round results into
/// `results`. A round's hands are read when the next move comes, or from its result if
/// it ended as it began (blocked before anyone moved), when the result shows them as dealt.
fn record(
    game: &Game,
    events: &[Event],
    seen: &mut Vec<SeenRound>,
    results: &mut Vec<RoundResult>,
) {
    let seats = game.seats() as usize;
    for event in events {
        match *event {
            Event::RoundStarted { start_tile, .. } => seen.push(SeenRound {
                hands: None,
                start_tile,
                drawn: Vec::new(),
            }),
            Event::Drew { tile: Some(t), .. } => seen.last_mut().unwrap().drawn.push(t),
            Event::RoundEnded(r) => {
                let round = seen.last_mut().unwrap();
                round.hands.get_or_insert_with(|| r.hands[..seats].to_vec());
                results.push(r);
            }
            _ => {}
        }
    }
    let round = seen.last_mut().unwrap();
    round
        .hands
        .get_or_insert_with(|| (0..game.seats()).map(|s| game.hand(s)).collect());
}

/// Plays one random game of random rules to its end, then checks its export: every
/// round's deal (`deal_of_round`) is the one the seats were dealt (the hands, the start
/// tile turned up, and the tiles drawn, in the boneyard's order), and the rules, seats,
/// seed, first deal and moves rebuild a game with the same final views, round results
/// and deals.
fn export_replays(seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (rules, seats) = random_rules(&mut rng);
    // One game in three makes table actions along the way.
    let table_rate = [0, 0, 15][rng.random_range(0..3)];
    check_export(rules, seats, seed, &mut rng, table_rate);
}

/// [`export_replays`] for given rules, choosing moves with `rng`, and a random table
/// action before about one move in `table_rate` (never when 0).
fn check_export(rules: Rules, seats: u8, seed: u64, rng: &mut ChaCha8Rng, table_rate: u32) {
    let game_seed = Seed::from_text(&format!("export {seed}"));
    let mut start = Vec::new();
    let mut game = Game::start(rules, seats, game_seed, None, &mut start).expect("valid rules");
    let (mut seen, mut results) = (Vec::new(), Vec::new());
    record(&game, &start, &mut seen, &mut results);
    while let Some(turn) = game.turn() {
        if table_rate > 0 && rng.random_range(0..table_rate) == 0 {
            let seat = rng.random_range(0..seats);
            let mv = *TABLE_ACTIONS.choose(rng).unwrap();
            let mut events = Vec::new();
            if game.check(seat, mv).is_ok() {
                events = game.play(seat, mv).unwrap();
            }
            record(&game, &events, &mut seen, &mut results);
            continue;
        }
        let mut options: Vec<(u8, Move)> = (0..seats)
            .flat_map(|s| game.legal_moves(s).into_iter().map(move |m| (s, m)))
            .collect();
        if rng.random_range(0..4) != 0 {
            options.retain(|&(s, _)| s == turn);
        }
        let &(seat, mv) = options.choose(rng).expect("the seat to move has a move");
        let events = game.play(seat, mv).expect("a listed move applies");
        record(&game, &events, &mut seen, &mut results);
    }
    let context = format!("seed {seed}: {rules:?}, {seats} seats");
    assert_eq!(seen.len(), game.round_number() as usize, "{context}");
    let deals = game.deals();
    assert_eq!(deals.len(), seen.len(), "{context}");
    for (n, saw) in (1..).zip(&seen) {
        let deal = game.deal_of_round(n);
        assert_eq!(
            deals[n as usize - 1],
            deal,
            "all the deals at once; {context}"
        );
        let hands: Vec<TileSet> = deal
            .hands
            .iter()
            .map(|h| h.iter().copied().collect())
            .collect();
        assert_eq!(Some(hands), saw.hands, "round {n}'s hands; {context}");
        let mut boneyard = deal.boneyard.clone();
        if rules.opening == Opening::StartTile {
            let at = boneyard.iter().position(|t| !t.is_double()).unwrap();
            assert_eq!(
                Some(boneyard.remove(at)),
                saw.start_tile,
                "round {n}; {context}"
            );
        }
        assert!(
            boneyard.starts_with(&saw.drawn),
            "round {n}: drew {:?} from {boneyard:?}; {context}",
            saw.drawn
        );
    }
    // Rebuilt from the export's data alone.
    let (moves, _) = game.replay_history().expect("the record replays");
    let (rebuilt, events) =
        Game::replay(rules, seats, game_seed, Some(game.deal_of_round(1)), &moves).unwrap_or_else(
            |(i, e)| panic!("move {i} of the export does not replay: {e}; {context}"),
        );
    for viewer in (0..seats).map(Some).chain([None]) {
        assert_eq!(rebuilt.project(viewer), game.project(viewer), "{context}");
    }
    let rebuilt_results: Vec<RoundResult> = events
        .iter()
        .flatten()
        .filter_map(|e| match *e {
            Event::RoundEnded(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(rebuilt_results, results, "{context}");
    for n in 1..=game.round_number() {
        assert_eq!(rebuilt.deal_of_round(n), game.deal_of_round(n), "{context}");
    }
}

#[test]
fn every_opening_and_next_leader_exports_the_deals_dealt_and_replays() {
    for opening in Opening::ALL {
        for next_leader in NextLeader::ALL {
            // Round results mix dominoes and blocked rounds: small hands, no drawing.
            let rules = Rules {
                opening: *opening,
                next_leader: *next_leader,
                hand_size: 2,
                rounds: Some(6),
                target: None,
                ..Preset::Block.rules()
            };
            for seed in 0..30 {
                check_export(rules, 2, seed, &mut ChaCha8Rng::seed_from_u64(seed), 0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_export_of_any_finished_game_replays_to_the_same_final_view(seed in any::<u64>()) {
        export_replays(seed);
    }
}
