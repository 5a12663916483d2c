//! The bots' turns at a table: which bot moves next, and playing until a human must.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::{Level, Thinking, master};
use domino_engine::{Event, Game, Move};

/// A safety net on bots moving in one go (a whole match of four bots is about 200 moves).
pub const MAX_MOVES: usize = 5_000;

/// Lets the bots move while one of them may: an out-of-turn muggins call first, then the
/// seat to move. `bots[seat]` is that seat's level, `None` for a human. Returns the moves
/// made and appends what they caused to `events`.
///
/// Deterministic: each bot's RNG comes from the game's seed and the move number, so a
/// prearranged game with bots replays the same.
pub fn play_turns(
    game: &mut Game,
    bots: &[Option<Level>],
    events: &mut Vec<Event>,
) -> Vec<(u8, Move)> {
    play_turns_while(
        game,
        bots,
        events,
        Thinking::work(master::DEFAULT_WORK),
        || true,
    )
}

/// [`play_turns`], asking `keep_going` before each move: the caller's budget (a deadline,
/// a count) stops the bots between two moves, and the next call carries on from there.
/// A master thinks each move under `thinking`.
pub fn play_turns_while(
    game: &mut Game,
    bots: &[Option<Level>],
    events: &mut Vec<Event>,
    thinking: Thinking<'_>,
    mut keep_going: impl FnMut() -> bool,
) -> Vec<(u8, Move)> {
    let mut moves = Vec::new();
    for _ in 0..MAX_MOVES {
        let Some(seat) = next_bot(game, bots) else {
            break;
        };
        if !keep_going() {
            break;
        }
        let level = bots[seat as usize].expect("a bot seat");
        match play_one(game, seat, level, thinking, events) {
            Some(played) => moves.push((seat, played)),
            None => break,
        }
    }
    moves
}

/// The bot seat that moves next, if any: one off turn taking unclaimed points first, then
/// the seat to move if it is a bot.
pub fn next_bot(game: &Game, bots: &[Option<Level>]) -> Option<u8> {
    let turn = game.turn()?;
    let seats = game.seats();
    (0..seats)
        .map(|i| (turn + i) % seats)
        .filter(|&s| bots[s as usize].is_some())
        .find(|&s| s == turn || game.legal_moves(s).contains(&Move::Muggins))
}

/// The move a bot of `level` would make for `seat` now, `None` when it may do nothing.
/// Deterministic: the RNG comes from the game's seed and the move number (a master
/// thinking by the clock excepted).
pub fn choose_for(game: &Game, seat: u8, level: Level, thinking: Thinking<'_>) -> Option<Move> {
    let mut seed = Sha256::new();
    seed.update(game.seed().0);
    seed.update((game.move_count() as u64).to_le_bytes());
    let mut rng = ChaCha8Rng::from_seed(seed.finalize().into());
    super::choose_thinking(level, &game.project(Some(seat)), thinking, &mut rng)
}

/// `seat`'s move as a bot of `level` would make it (for a bot seat, or a human seat out of
/// time), played. `None` when the seat may do nothing now.
pub fn play_one(
    game: &mut Game,
    seat: u8,
    level: Level,
    thinking: Thinking<'_>,
    events: &mut Vec<Event>,
) -> Option<Move> {
    let mv = choose_for(game, seat, level, thinking)?;
    match game.play_into(seat, mv, events) {
        Ok(played) => Some(played),
        Err(e) => {
            // A bot only picks from its legal moves; if it ever did not, stop rather than
            // loop, and say so.
            tracing::error!(seat, error = %e, "a bot chose an illegal move");
            None
        }
    }
}
