//! The master's per-world search ([`super::config::Method::AlphaBeta`], and the exact
//! endgame of both methods): alpha-beta in each sampled world, its side maximising and
//! every other side minimising, to a fixed depth and then a playout, or, once few tiles
//! are left and none can be drawn, to the end of the round with every move.

use super::config::Config;
use super::playout::{Room, evaluate, ranked_moves, to_round_end};
use super::think::Meter;
use domino_engine::{Game, Move};

/// Moves one world's exact endgame search may take (a few milliseconds) before the
/// decision gives up exact search: a position with many candidates and tiles can hold far
/// more lines than its tile count suggests.
const EXACT_CAP: u64 = 30_000;

/// One decision's search state: whose it is, its budget and its buffers.
pub(super) struct Searcher<'a> {
    seat: u8,
    side: u8,
    /// The scores when the decision began: values are gains from them.
    before: &'a [i32],
    /// Rounds done when the decision began: the search ends with the round.
    start: u16,
    config: &'a Config,
    pub(super) meter: Meter<'a>,
    /// Whether a world may be searched to the end of the round (until one is too big).
    exact_allowed: bool,
    /// Moves applied when the world in hand began.
    world_start: u64,
    /// The world in hand's exact search passed [`EXACT_CAP`] moves: it is given up.
    too_big: bool,
    room: Room,
    /// Games and move lists for the plies, reused (a game copied over with `clone_from`
    /// keeps its allocations): the exact endgame tries every move of every line. Boxed, so
    /// that taking one from the pool and giving it back moves a pointer, not a game.
    #[expect(
        clippy::vec_box,
        reason = "the games move in and out: 8 bytes a move instead of 608 (6% of a decision)"
    )]
    games: Vec<Box<Game>>,
    lists: Vec<Vec<Move>>,
}

impl<'a> Searcher<'a> {
    /// The search of `seat`'s decision from `before` (the scores) in round `start`.
    pub(super) fn new(
        seat: u8,
        side: u8,
        (before, start): (&'a [i32], u16),
        config: &'a Config,
        meter: Meter<'a>,
    ) -> Self {
        Searcher {
            seat,
            side,
            before,
            start,
            config,
            meter,
            exact_allowed: true,
            world_start: 0,
            too_big: false,
            room: Room::default(),
            games: Vec::new(),
            lists: Vec::new(),
        }
    }

    /// Every candidate's value in `world`, into `values`: exact to the end of the round
    /// when `endgame` (until one world proves too big for it). False when the clock
    /// stopped the search during the world, whose values are then not to be used.
    pub(super) fn world_values(
        &mut self,
        world: &Game,
        candidates: &[Move],
        endgame: bool,
        values: &mut [f64],
    ) -> bool {
        let mut exact = endgame && self.exact_allowed;
        self.world_start = self.meter.moves;
        for (c, &mv) in candidates.iter().enumerate() {
            values[c] = self.root_value(world, mv, exact);
        }
        if self.too_big {
            // This decision's endgames are too large to search whole: the rest of its
            // worlds, this one again included, are searched to the usual depth.
            self.too_big = false;
            self.exact_allowed = false;
            exact = false;
            for (c, &mv) in candidates.iter().enumerate() {
                values[c] = self.root_value(world, mv, exact);
            }
        }
        !self.meter.stop
    }
}

impl Searcher<'_> {
    /// `mv`'s value in `world`: the search's value of the game after it.
    fn root_value(&mut self, world: &Game, mv: Move, exact: bool) -> f64 {
        let mut g = self.copy(world);
        self.room.events.clear();
        let value = if g.play_into(self.seat, mv, &mut self.room.events).is_err() {
            f64::NEG_INFINITY
        } else {
            self.meter.count(1);
            let depth = if exact { u8::MAX } else { self.config.depth };
            self.value(&g, depth, exact, f64::NEG_INFINITY, f64::INFINITY)
        };
        self.games.push(g);
        value
    }

    /// A copy of `g` in a game from the pool (give it back to `games`).
    fn copy(&mut self, g: &Game) -> Box<Game> {
        match self.games.pop() {
            Some(mut copy) => {
                (*copy).clone_from(g);
                copy
            }
            None => Box::new(g.clone()),
        }
    }

    /// Alpha-beta: the value of `g` for the searching side, `depth` plies of choice left.
    fn value(&mut self, g: &Game, depth: u8, exact: bool, mut alpha: f64, mut beta: f64) -> f64 {
        if exact && self.meter.moves - self.world_start > EXACT_CAP {
            self.too_big = true;
        }
        if self.meter.stop || self.too_big {
            return 0.0;
        }
        if g.rounds_done() != self.start || g.turn().is_none() {
            return evaluate(g, self.before, self.seat, self.config.match_bonus);
        }
        if depth == 0 {
            let mut end = self.copy(g);
            let played = to_round_end(&mut end, self.config.playout, &mut self.room);
            self.meter.count(u64::from(played));
            let value = evaluate(&end, self.before, self.seat, self.config.match_bonus);
            self.games.push(end);
            return value;
        }
        let (who, moves) = self.moves_at(g, exact);
        let maximise = g.rules().side_of(who) == self.side;
        // A forced move (a draw, a pass, the only tile) is not a choice: it costs no depth.
        let next = if moves.len() > 1 { depth - 1 } else { depth };
        let mut best = if maximise {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        for &mv in &moves {
            let mut child = self.copy(g);
            self.room.events.clear();
            child.play_legal(who, mv, &mut self.room.events);
            self.meter.count(1);
            let v = self.value(&child, next, exact, alpha, beta);
            self.games.push(child);
            if maximise {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        self.lists.push(moves);
        best
    }

    /// Who moves in `g` and the moves searched ([`ranked_moves`]); below the exact
    /// endgame, the `beam` best.
    /// The list comes from `lists`: give it back.
    fn moves_at(&mut self, g: &Game, exact: bool) -> (u8, Vec<Move>) {
        let mut moves = self.lists.pop().unwrap_or_default();
        let who = ranked_moves(g, &mut self.room, &mut moves);
        if !exact {
            moves.truncate(usize::from(self.config.beam.max(1)));
        }
        (who, moves)
    }
}
