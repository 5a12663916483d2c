//! The built-in players against the engine: legal moves only, every preset and seat
//! count; the expert's choice depends on the seat's projection only; greedy's points.

use domino_server::bots::{self, Level, Thinking, expert, master};
use domino_server::engine::rules::Opening;
use domino_server::engine::{Game, Move, Preset, Projection, Rules, Seed, Tile, TileSet};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// The rule sets to play: every preset with every seat count it allows (penalty with four
/// seats deals six tiles), and the team games with four seats.
fn tables() -> Vec<(String, Rules, u8)> {
    let mut out = Vec::new();
    for preset in Preset::ALL {
        for seats in 2..=4u8 {
            let mut rules = preset.rules();
            if preset == Preset::Penalty && seats == 4 {
                rules.hand_size = 6;
            }
            if rules.validate(seats).is_ok() {
                out.push((format!("{} x{seats}", preset.name()), rules, seats));
            }
            if seats == 4 && matches!(preset, Preset::AllFives | Preset::Muggins) {
                out.push((
                    format!("{} teams", preset.name()),
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

/// A budget small enough for debug builds; the search is the same.
const QUICK: expert::ExpertConfig = expert::ExpertConfig {
    rollouts: 24,
    match_bonus: 50.0,
};

/// The master's quick budget: moves applied in its search (a few dozen worlds).
const QUICK_MASTER: u64 = 3_000;

/// The move of `level` for `view`; the expert and the master with quick budgets unless
/// `full`.
fn decide(level: Level, view: &Projection, rng: &mut ChaCha8Rng, full: bool) -> Option<Move> {
    match (level, full) {
        (Level::Master, false) if !view.legal_moves.is_empty() => {
            bots::choose_thinking(level, view, Thinking::work(QUICK_MASTER), rng)
        }
        (Level::Expert, false) if !view.legal_moves.is_empty() => {
            if view.legal_moves.iter().any(|m| m.mv == Move::Muggins) {
                return bots::choose(level, view, rng);
            }
            Some(expert::choose_with(view, &QUICK, rng))
        }
        _ => bots::choose(level, view, rng),
    }
}

/// Plays a whole match with `levels[seat]`, checking every move is one the view listed and
/// the game accepts. Seats out of turn that may take points are asked first. Returns the
/// number of moves.
fn play_match(rules: Rules, seats: u8, seed: &str, levels: &[Level], full: bool) -> usize {
    let mut game = Game::new(rules, seats, Seed::from_text(seed), None).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seats as u64);
    let mut moves = 0;
    while let Some(turn) = game.turn() {
        let order = (1..=seats).map(|k| (turn + k) % seats); // the seat to move last
        let mut moved = false;
        for seat in order {
            let view = game.project(Some(seat));
            if seat != turn && view.legal_moves.is_empty() {
                continue;
            }
            let mv = decide(levels[seat as usize], &view, &mut rng, full)
                .expect("a seat with legal moves moves");
            assert!(
                view.legal_moves.iter().any(|m| m.mv == mv),
                "{:?} chose {mv:?}, not among {:?}",
                levels[seat as usize],
                view.legal_moves
            );
            if seat != turn {
                assert_eq!(mv, Move::Muggins, "out of turn, only points can be taken");
            }
            game.play(seat, mv)
                .unwrap_or_else(|e| panic!("{mv:?} refused: {e}"));
            moves += 1;
            moved = true;
            break;
        }
        assert!(moved);
        assert!(moves < 20_000, "a match that never ends");
    }
    moves
}

#[test]
fn every_level_makes_only_legal_moves_in_every_preset_and_seat_count() {
    let levels = Level::ALL;
    for (name, rules, seats) in tables() {
        for game in 0..6 {
            // Rotate the levels over the seats, and play some all-random and all-greedy.
            let lineup: Vec<Level> = (0..seats as usize)
                .map(|s| match game {
                    4 => Level::Random,
                    5 => Level::Greedy,
                    g => levels[(s + g) % levels.len()],
                })
                .collect();
            let moves = play_match(rules, seats, &format!("{name} {game}"), &lineup, false);
            assert!(moves > 0, "{name}");
        }
    }
}

#[test]
fn the_expert_at_full_budget_plays_a_whole_match_legally() {
    for preset in [Preset::AllFives, Preset::Penalty] {
        let rules = Rules {
            target: Some(30),
            ..preset.rules()
        };
        let rules = if preset == Preset::Penalty {
            Rules {
                rounds: Some(1),
                ..rules
            }
        } else {
            rules
        };
        play_match(rules, 2, "full", &[Level::Expert, Level::Greedy], true);
    }
}

/// Plays `n` greedy moves (taking points first), then returns the game.
fn advance(mut game: Game, n: usize) -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for _ in 0..n {
        let Some(turn) = game.turn() else { break };
        let mv = bots::choose(Level::Greedy, &game.project(Some(turn)), &mut rng).unwrap();
        game.play(turn, mv).unwrap();
    }
    game
}

/// Compares `decide`'s moves (three RNG seeds) on a view and on the same view of another
/// arrangement of its hidden tiles, in positions of every table; returns how many.
fn compare_on_shuffled_hidden_tiles(who: &str, decide: impl Fn(&Projection, u64) -> Move) -> usize {
    let mut compared = 0;
    for (name, rules, seats) in tables() {
        for depth in [0, 3, 7] {
            let game = advance(
                Game::new(rules, seats, Seed::from_text(&name), None).unwrap(),
                depth,
            );
            let Some(seat) = game.turn() else { continue };
            let view = game.project(Some(seat));
            // Another arrangement of the same hidden tiles: the other hands and the boneyard
            // shuffled together and dealt out again in the same counts.
            let mut hidden: Vec<Tile> = view.unseen().iter().collect();
            let mut shuffler = ChaCha8Rng::seed_from_u64(depth as u64 + 99);
            let mut other = None;
            for _ in 0..20 {
                hidden.shuffle(&mut shuffler);
                let mut hands = [TileSet::EMPTY; 4];
                let mut at = 0;
                for s in 0..seats {
                    if s == seat {
                        hands[s as usize] = game.hand(s);
                    } else {
                        let n = view.hand_counts[s as usize] as usize;
                        hands[s as usize] = hidden[at..at + n].iter().copied().collect();
                        at += n;
                    }
                }
                let Ok(g2) = Game::determinise(&view, hands, hidden[at..].to_vec()) else {
                    continue;
                };
                // A forced lead needs its tile in the leader's hand: keep only placements
                // that give the seat the very same view.
                if g2.project(Some(seat)) == view && (0..seats).any(|s| g2.hand(s) != game.hand(s))
                {
                    other = Some(g2);
                    break;
                }
            }
            let Some(g2) = other else { continue };
            let real = game.project(Some(seat));
            let shuffled = g2.project(Some(seat));
            for seed in 0..3u64 {
                let a = decide(&real, seed);
                let b = decide(&shuffled, seed);
                assert_eq!(
                    a, b,
                    "{name}, depth {depth}: the {who}'s move depends on hidden tiles"
                );
                compared += 1;
            }
        }
    }
    compared
}

#[test]
fn the_experts_choice_is_unchanged_when_the_hidden_tiles_are_shuffled() {
    let compared = compare_on_shuffled_hidden_tiles("expert", |view, seed| {
        expert::choose_with(view, &QUICK, &mut ChaCha8Rng::seed_from_u64(seed))
    });
    assert!(compared > 40, "only {compared} positions compared");
}

/// The master in fixed-work mode: the same view and seed, whatever the hidden tiles
/// really are, give the same move (it searches worlds of its own sampling only).
#[test]
fn the_masters_choice_is_unchanged_when_the_hidden_tiles_are_shuffled() {
    let compared = compare_on_shuffled_hidden_tiles("master", |view, seed| {
        master::search(
            view,
            &master::Config::default(),
            Thinking::work(QUICK_MASTER),
            &mut ChaCha8Rng::seed_from_u64(seed),
        )
        .0
    });
    assert!(compared > 40, "only {compared} positions compared");
}

#[test]
fn greedy_scores_the_most_it_can_in_every_fives_position() {
    // Under muggins a listed move's points are what it credits, so an unclaimed scoring
    // play lists 0 and greedy must take the claim.
    for (seats, rules) in (2..=4).flat_map(|s| {
        [Preset::AllFives, Preset::Muggins]
            .into_iter()
            .map(move |p| (s, p.rules()))
    }) {
        for game_no in 0..10 {
            let mut game = Game::new(
                rules,
                seats,
                Seed::from_text(&format!("fives {game_no}")),
                None,
            )
            .unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(game_no);
            while let Some(turn) = game.turn() {
                let view = game.project(Some(turn));
                let mv = bots::choose(Level::Greedy, &view, &mut rng).unwrap();
                let best = view.legal_moves.iter().map(|m| m.points).max().unwrap();
                let got = view.legal_moves.iter().find(|m| m.mv == mv).unwrap().points;
                assert_eq!(
                    got, best,
                    "greedy left points on the table: {mv:?} of {:?}",
                    view.legal_moves
                );
                game.play(turn, mv).unwrap();
            }
        }
    }
}

#[test]
fn every_level_takes_an_opponents_unclaimed_points_even_out_of_turn() {
    // Muggins, three seats: seat 0 leads 5-5 (10 points) without claiming them.
    let rules = Rules {
        opening: Opening::SeatZero,
        ..Preset::Muggins.rules()
    };
    let deal = {
        let hands: Vec<Vec<Tile>> = [
            "5-5 0-1 0-2 0-3 0-4 0-6 1-2",
            "1-1 1-3 1-4 1-5 1-6 2-2 2-3",
            "2-4 2-5 2-6 3-3 3-4 3-5 3-6",
        ]
        .iter()
        .map(|h| h.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
        let boneyard = Tile::all(6)
            .filter(|t| !hands.iter().flatten().any(|h| h == t))
            .collect();
        domino_server::engine::Deal { hands, boneyard }
    };
    let mut game = Game::new(rules, 3, Seed::from_text("muggins"), Some(deal)).unwrap();
    game.play(0, Move::lead(Tile::new(5, 5))).unwrap();
    assert_eq!(game.turn(), Some(1));
    for level in Level::ALL {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let out_of_turn = game.project(Some(2));
        assert_eq!(
            bots::choose(level, &out_of_turn, &mut rng),
            Some(Move::Muggins),
            "{level:?} out of turn"
        );
        let in_turn = game.project(Some(1));
        assert_eq!(
            bots::choose(level, &in_turn, &mut rng),
            Some(Move::Muggins),
            "{level:?} in turn"
        );
        // The player who made the points cannot take them and has nothing to do.
        assert_eq!(bots::choose(level, &game.project(Some(0)), &mut rng), None);
    }
}

#[test]
fn levels_parse_and_serialise_as_the_api_words() {
    for level in Level::ALL {
        let json = serde_json::to_string(&level).unwrap();
        assert_eq!(json, format!("\"{}\"", level.as_str()));
        assert_eq!(serde_json::from_str::<Level>(&json).unwrap(), level);
        assert_eq!(level.as_str().parse::<Level>().unwrap(), level);
    }
}

/// Block positions (two seats) where the seat to move may only pass, only make one play,
/// or choose among several moves.
fn positions_by_choice() -> [Option<Projection>; 3] {
    // Positions by what the seat to move may do: only pass, only one play, several moves.
    let mut found: [Option<Projection>; 3] = [None, None, None];
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for n in 0..200 {
        let mut game = Game::new(
            Preset::Block.rules(),
            2,
            Seed::from_text(&format!("work {n}")),
            None,
        )
        .unwrap();
        while let Some(turn) = game.turn() {
            let view = game.project(Some(turn));
            let slot = match view.legal_moves.as_slice() {
                [only] if only.mv == Move::Pass => Some(0),
                [only] if matches!(only.mv, Move::Play { .. }) => Some(1),
                [_, _, ..] => Some(2),
                _ => None,
            };
            if let Some(slot) = slot {
                found[slot].get_or_insert(view.clone());
            }
            let mv = bots::choose(Level::Greedy, &view, &mut rng).unwrap();
            game.play(turn, mv).unwrap();
        }
        if found.iter().all(Option::is_some) {
            break;
        }
    }
    found
}

/// The expert's work (deals sampled, rollouts played) is the same for a pass, a single
/// play and a choice of several: its thinking time must not tell the table that only one
/// tile fits. It used to sample a deal per rollout with one candidate, and one per six
/// rollouts with six.
#[test]
fn the_expert_does_the_same_work_for_a_pass_one_play_or_several_moves() {
    let config = expert::ExpertConfig {
        rollouts: 40,
        match_bonus: 50.0,
    };
    let found = positions_by_choice();
    let work: Vec<expert::ExpertWork> = found
        .iter()
        .map(|view| {
            let view = view.as_ref().expect("a position of each kind");
            expert::search(view, &config, &mut ChaCha8Rng::seed_from_u64(9)).1
        })
        .collect();
    assert!(work[0].rollouts >= config.rollouts, "{work:?}");
    assert!(work[0].deals > 0, "{work:?}");
    assert_eq!(work[0], work[1], "a pass and a single play: {work:?}");
    assert_eq!(
        work[1], work[2],
        "a single play and several moves: {work:?}"
    );
}

/// The master's fixed work (moves applied, sampling a world counted as a few) is the same
/// for a pass, a single play and several moves, up to the last world's: it searches more
/// worlds when there is less to compare, so its time does not tell how many tiles fit.
#[test]
fn the_master_does_the_same_work_for_a_pass_one_play_or_several_moves() {
    let found = positions_by_choice();
    let budget = 20_000;
    for (kind, view) in ["a pass", "one play", "several moves"].iter().zip(&found) {
        let view = view.as_ref().expect("a position of each kind");
        let (_, work) = master::search(
            view,
            &master::Config::default(),
            Thinking::work(budget),
            &mut ChaCha8Rng::seed_from_u64(9),
        );
        // One world of a block position in double-6 applies a few hundred moves at most.
        assert!(
            (budget..budget + 2_000).contains(&work.moves),
            "{kind}: {work:?}"
        );
        assert!(work.worlds > 0, "{kind}: {work:?}");
    }
}
