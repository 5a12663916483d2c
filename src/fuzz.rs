//! Fuzzing harnesses: byte strings in, panics out. Not an API.
//!
//! The cargo-fuzz targets under `fuzz/` call these functions, and so does
//! `tests/fuzz_regressions.rs` (on stable, for every saved input and a bounded number of
//! random ones), so a crash the fuzzer found stays fixed. See `fuzz/README.md`.
//!
//! - [`engine`]: the request parsing of a move (`MoveBody` JSON) and the engine applying
//!   moves, legal and not (the table actions among them), to a game of any preset and seat count. Nothing may panic;
//!   after every accepted move the game's invariants hold, its stored form reads back
//!   equal, every viewer's projection and the wire form of every event can be built;
//!   at the end, replaying the history gives the same game.
//! - [`storage`]: the service's stored-game decoder ([`Record::decode`], which checks the
//!   game's invariants, as on every load) never panics on any bytes; a game it accepts can
//!   be projected, stored again and played without panicking.

use crate::api::wire::{EventView, MoveBody};
use crate::engine::rules::{
    BlockedAward, BlockedTie, DoubleValue, DrawRule, LeadDoubleCount, NextLeader, Opening, Scoring,
    Spinner, WhenStuck,
};
use crate::engine::{Deal, End, Event, Game, Move, Preset, RulesPatch, Seed, Tile};
use crate::service::Record;

/// Reads bytes off the front of the input; past its end, zeros.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `Some(one of all)` when the byte's top bit is set, else `None` (keep the preset's).
fn pick<T: Copy>(all: &[T], b: u8) -> Option<T> {
    (b & 0x80 != 0).then(|| all[(b & 0x7f) as usize % all.len()])
}

fn flag(b: u8) -> Option<bool> {
    (b & 0x80 != 0).then_some(b & 1 == 1)
}

/// A rule patch from 18 bytes: each field kept or set, independently.
fn patch(input: &mut Input) -> RulesPatch {
    let b: Vec<u8> = (0..18).map(|_| input.byte()).collect();
    RulesPatch {
        max_pip: pick(&[6, 9, 12, 15], b[0]),
        teams: flag(b[1]),
        opening: pick(Opening::ALL, b[2]),
        next_leader: pick(NextLeader::ALL, b[3]),
        spinner: pick(Spinner::ALL, b[4]),
        draw: pick(DrawRule::ALL, b[5]),
        draw_anytime: flag(b[6]),
        boneyard_reserve: pick(&[0, 2], b[7]),
        when_stuck: pick(WhenStuck::ALL, b[8]),
        scoring: pick(Scoring::ALL, b[9]),
        blocked_award: pick(BlockedAward::ALL, b[10]),
        blocked_tie: pick(BlockedTie::ALL, b[11]),
        muggins: flag(b[12]),
        boneyard_to_winner: flag(b[13]),
        double_value: pick(DoubleValue::ALL, b[14]),
        double_blank_value: pick(&[0, 14], b[15]),
        lead_double_count: pick(LeadDoubleCount::ALL, b[16]),
        // Small targets end matches quickly, so match ends are reached often.
        target: (b[17] & 0x80 != 0).then_some(Some(5 * (1 + (b[17] & 0x0f) as u16))),
        ..RulesPatch::default()
    }
}

/// Any tile of the double-15 set: what a client can name, in the set or not.
fn any_tile(b: u8) -> Tile {
    Tile::new(b & 0x0f, b >> 4)
}

/// A move made of raw bytes: any kind, any tile, any end, any claim, and the table
/// actions (resign, timed out, abandon, forfeit: kinds 3 with bits 0x60 set, so the
/// saved inputs from before them mostly read as they did).
fn raw_move(input: &mut Input) -> Move {
    let kind = input.byte();
    match kind % 4 {
        0 => Move::Play {
            tile: any_tile(input.byte()),
            end: pick(&[End::Left, End::Right, End::Up, End::Down], input.byte()),
            claim: (kind & 0x80 != 0).then(|| u16::from(input.byte())),
        },
        1 => Move::Draw,
        2 => Move::Pass,
        _ if kind & 0x60 == 0x60 => {
            [Move::Resign, Move::TimedOut, Move::Abandon, Move::Forfeit][(kind >> 2) as usize % 4]
        }
        _ => Move::Muggins,
    }
}

/// Everything the service derives from a game after a move: must not panic.
fn use_game(game: &Game, events: &[Event]) {
    let seats = game.seats() as usize;
    let sides = game.scores().len();
    for viewer in std::iter::once(None).chain((0..game.seats()).map(Some)) {
        let view = game.project(viewer);
        assert_eq!(view.hand_counts.len(), seats);
        for e in events {
            let wire = EventView::of(&e.visible_to(viewer), seats, sides);
            serde_json::to_vec(&wire).expect("an event serialises");
        }
    }
}

fn settle(game: &mut Game, seat: u8, mv: Move) -> bool {
    match game.play(seat, mv) {
        Ok(events) => {
            if let Err(e) = game.check_invariants() {
                panic!("{mv:?} by seat {seat} broke the invariants: {e}");
            }
            use_game(game, &events);
            let stored = Record::new(0, Preset::Classic, false, None, game.clone()).encode();
            assert_eq!(
                Record::decode(&stored)
                    .map(|r| r.game().clone())
                    .ok()
                    .as_ref(),
                Some(&*game),
                "the stored form reads back different"
            );
            true
        }
        Err(_) => false,
    }
}

/// See the module documentation. Input layout: preset and seats (1 byte), rule patch
/// (18), seed (4), deal choice (1, plus up to 136 for a deal), then operations until the
/// input ends: a byte below 0xc0 plays that entry of the legal moves; 0xc0..0xf0 a move
/// of raw bytes by any seat; from 0xf0, a `MoveBody` JSON of the next byte's length
/// (mod 64).
pub fn engine(data: &[u8]) {
    // The whole input as a request body: parsing and converting never panic.
    if let Ok(body) = serde_json::from_slice::<MoveBody>(data) {
        let _ = body.to_request();
    }

    let mut input = Input(data);
    let head = input.byte();
    let preset = Preset::ALL[head as usize % Preset::ALL.len()];
    let seats = 2 + (head / 8) % 3;
    let patch = patch(&mut input);
    let rules = [preset.rules().with(&patch), preset.rules()]
        .into_iter()
        .find(|r| r.validate(seats).is_ok());
    let Some(rules) = rules else { return };
    let seed = Seed::from_text(&format!("{:?}", input.take(4)));
    let deal_choice = input.byte();
    let deal = match deal_choice % 4 {
        // A deal of raw tiles: anything, to be refused unless it is a permutation.
        0 => {
            let tiles: Vec<Tile> = input
                .take(deal_choice as usize / 4)
                .iter()
                .map(|&b| any_tile(b))
                .collect();
            let n = rules.hand_size as usize;
            let hands = tiles.chunks(n.max(1)).map(<[Tile]>::to_vec).collect();
            Some(Deal {
                hands,
                boneyard: Vec::new(),
            })
        }
        // A permutation of the set chosen by the input: always valid.
        1 => {
            let mut stock: Vec<Tile> = Tile::all(rules.max_pip).collect();
            for i in (1..stock.len()).rev() {
                let j = input.byte() as usize % (i + 1);
                stock.swap(i, j);
            }
            let n = rules.hand_size as usize;
            let hands = (0..seats as usize)
                .map(|s| stock[s * n..(s + 1) * n].to_vec())
                .collect();
            Some(Deal {
                hands,
                boneyard: stock[seats as usize * n..].to_vec(),
            })
        }
        _ => None,
    };
    let mut game = match Game::new(rules, seats, seed, deal) {
        Ok(game) => game,
        Err(_) if deal_choice % 4 == 0 => return,
        Err(e) => panic!("a valid game was refused: {e}"),
    };
    game.check_invariants().expect("a new game holds");
    use_game(&game, &[]);

    let mut legal = Vec::new();
    while !input.is_empty() {
        let Some(turn) = game.turn() else { break };
        let op = input.byte();
        match op {
            0x00..0xc0 => {
                game.legal_moves_into(turn, &mut legal);
                if legal.is_empty() {
                    continue;
                }
                let mv = legal[op as usize % legal.len()];
                assert!(settle(&mut game, turn, mv), "legal {mv:?} was refused");
            }
            0xc0..0xf0 => {
                let seat = input.byte() % 5; // seat 4 never exists
                let mv = raw_move(&mut input);
                settle(&mut game, seat, mv);
            }
            _ => {
                let len = input.byte() as usize % 64;
                let body = input.take(len);
                if let Ok(body) = serde_json::from_slice::<MoveBody>(body) {
                    settle(&mut game, op % 4, body.to_request().mv);
                }
            }
        }
    }

    let (moves, _) = game
        .replay_history()
        .expect("the compact history replays into the game");
    let (replayed, _) = Game::replay(
        *game.rules(),
        game.seats(),
        game.seed(),
        game.first_deal().cloned(),
        &moves,
    )
    .expect("the moves read back replay");
    assert_eq!(replayed, game, "the replay differs from the game");
}

/// See the module documentation.
pub fn storage(data: &[u8]) {
    let Ok(record) = Record::decode(data) else {
        return;
    };
    let game = record.game();
    use_game(game, &[]);
    assert_eq!(
        Record::decode(&record.encode())
            .map(|r| r.game().clone())
            .ok()
            .as_ref(),
        Some(game)
    );
    if let Some(turn) = game.turn() {
        for mv in game.legal_moves(turn) {
            let mut next = game.clone();
            let _ = next.play(turn, mv);
        }
    }
    // The log, the export and idempotent retries read the history back by replay: a
    // damaged one must be refused, never panic.
    let _ = game.replay_history();
    let _ = game.after_moves(game.move_count() / 2);
}
