//! A match's history as answers: the log a page at a time, and the export as parts made
//! while they are sent.
//!
//! Both are read from the game's compact record by replaying it ([`Replay`]), and neither
//! is ever built whole: a match of 65,534 rounds replays into millions of moves (a 242 MB
//! log answer, 96 MB of export), so a log answer holds one page of at most
//! [`MAX_LOG_PAGE`] moves, and the export yields its deals and moves one by one for the
//! handler to write out as the client reads them.
//!
//! A move's **index** is its 1-based position in the match's history (the `n`th move made
//! at the table, whoever made it): a page `after` index `a` holds the moves `a + 1` to
//! `a + limit`, and the page after it starts after its last index. The first page (`after`
//! 0) also carries the first deal's events, which precede every move.

use std::sync::Arc;

use crate::domain::{Caller, GameId};
use crate::engine::{Deal, Event, Game, Move, Replay, Seed};

use super::record::Status;
use super::view::View;
use super::{Error, GameQueries};

/// Moves a log page holds at most (and by default).
pub const MAX_LOG_PAGE: usize = 1000;

/// One move of the history with what it caused, as the caller may see it.
#[derive(Clone, Debug)]
pub struct LoggedMove {
    /// Its place in the match's history, from 1.
    pub index: u64,
    pub seat: u8,
    pub mv: Move,
    pub events: Vec<Event>,
}

/// A page of the move history as the caller may see it (another seat's draws show no
/// tile).
#[derive(Clone, Debug)]
pub struct Log {
    pub view: View,
    /// What the first deal caused (who leads, the start tile): on the first page only
    /// (empty on the others).
    pub start: Vec<Event>,
    pub moves: Vec<LoggedMove>,
    /// The index to ask the next page after; `None` on the last page.
    pub next: Option<u64>,
}

/// A finished game, complete: enough to replay it exactly. Its deals and moves are made
/// as [`Export::parts`] is read, every deal first, then every move.
pub struct Export {
    pub view: View,
    pub seed: Seed,
    pub parts: ExportParts,
}

/// One piece of an export, in the order of the export's fields.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportPart {
    /// The deal of the next round (rounds in order, from the first).
    Deal(Deal),
    /// The next move, with its seat.
    Move(u8, Move),
}

/// The deals and moves of a finished match, replayed as they are read: two passes over
/// its record (the deals, then the moves), each holding only the game being replayed.
/// Yields an error and stops if the record does not replay into the stored game.
pub struct ExportParts {
    source: Arc<Game>,
    stage: Stage,
}

enum Stage {
    /// Replaying for the deals: the last round whose deal was given.
    Deals(Box<Replay<Arc<Game>>>, u16),
    Moves(Box<Replay<Arc<Game>>>),
    Done,
    /// The record does not replay: said once, then done.
    Broken(String),
}

impl ExportParts {
    fn new(game: Game) -> ExportParts {
        let source = Arc::new(game);
        let stage = match Replay::new(source.clone(), &mut Vec::new()) {
            Ok(replay) => Stage::Deals(Box::new(replay), 0),
            Err(e) => Stage::Broken(e),
        };
        ExportParts { source, stage }
    }

    fn step(&mut self) -> Result<Option<ExportPart>, String> {
        let mut events = Vec::new();
        loop {
            match &mut self.stage {
                Stage::Deals(replay, given) => {
                    let round = replay.game().round_number();
                    if *given < round {
                        *given += 1;
                        return Ok(Some(ExportPart::Deal(replay.game().deal_of_round(*given))));
                    }
                    events.clear();
                    if replay.next_move(&mut events).transpose()?.is_none() {
                        if *given != self.source.round_number() {
                            return Err("the moves do not reach the stored round".into());
                        }
                        let replay = Replay::new(self.source.clone(), &mut Vec::new())?;
                        self.stage = Stage::Moves(Box::new(replay));
                    }
                }
                Stage::Moves(replay) => {
                    events.clear();
                    match replay.next_move(&mut events).transpose()? {
                        Some((seat, mv)) => return Ok(Some(ExportPart::Move(seat, mv))),
                        None => {
                            if replay.game() != replay.source() {
                                return Err("the moves do not lead to the stored game".into());
                            }
                            self.stage = Stage::Done;
                        }
                    }
                }
                Stage::Done => return Ok(None),
                Stage::Broken(e) => return Err(std::mem::take(e)),
            }
        }
    }
}

impl Iterator for ExportParts {
    type Item = Result<ExportPart, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.step() {
            Ok(part) => part.map(Ok),
            Err(e) => {
                self.stage = Stage::Done;
                Some(Err(Error::Internal(format!(
                    "the stored history does not replay: {e}"
                ))))
            }
        }
    }
}

/// Moves `after + 1` to `after + limit` of `game` as `viewer` may see them, and the first
/// deal's events when the page is the first.
fn page(
    game: &Game,
    viewer: Option<u8>,
    after: usize,
    limit: usize,
) -> Result<(Vec<Event>, Vec<LoggedMove>), String> {
    let mut start = Vec::new();
    let mut replay = Replay::new(game, &mut start)?;
    replay.skip(after)?;
    let mut entries = Vec::with_capacity(limit.min(game.move_count() - after));
    let mut events = Vec::new();
    while entries.len() < limit {
        events.clear();
        let Some(played) = replay.next_move(&mut events) else {
            break;
        };
        let (seat, mv) = played?;
        entries.push(LoggedMove {
            index: replay.done() as u64,
            seat,
            mv,
            events: events.drain(..).map(|e| e.visible_to(viewer)).collect(),
        });
    }
    let start = if after == 0 {
        start.into_iter().map(|e| e.visible_to(viewer)).collect()
    } else {
        Vec::new()
    };
    Ok((start, entries))
}

impl GameQueries {
    /// A page of the move history as `caller`'s seat (or a spectator) may see it: the
    /// moves after index `after` (0: from the start), at most `limit` (1 to
    /// [`MAX_LOG_PAGE`]).
    pub async fn log(
        &self,
        id: GameId,
        caller: &Caller,
        after: u64,
        limit: u64,
    ) -> Result<Log, Error> {
        if !(1..=MAX_LOG_PAGE as u64).contains(&limit) {
            return Err(Error::BadRequest(format!(
                "limit: 1 to {MAX_LOG_PAGE} moves a page"
            )));
        }
        let (version, record, viewer) = self.games.load_as(id, caller).await?;
        let total = record.game.move_count();
        let after = usize::try_from(after)
            .ok()
            .filter(|&a| a <= total)
            .ok_or_else(|| {
                Error::BadRequest(format!(
                    "after: the log holds moves 1 to {total}; ask after 0 to {total}"
                ))
            })?;
        let view = View::of(id, version, &record, viewer);
        let game = record.game;
        // Replaying a long match takes a while: off the async workers.
        let (start, moves) =
            tokio::task::spawn_blocking(move || page(&game, viewer, after, limit as usize))
                .await
                .map_err(|e| Error::Internal(format!("the log could not be read: {e}")))?
                .map_err(|e| Error::Internal(format!("the stored history does not replay: {e}")))?;
        let last = after + moves.len();
        Ok(Log {
            view,
            start,
            moves,
            next: (last < total).then_some(last as u64),
        })
    }

    /// The finished game's whole record (rules, seed, deals and moves), its deals and
    /// moves made as they are read.
    pub async fn export(&self, id: GameId) -> Result<Export, Error> {
        let (version, record) = self.games.load(id).await?;
        if record.status() != Status::Finished {
            return Err(Error::NotFinished);
        }
        self.games.unsealed(&record, None, true).await?;
        Ok(Export {
            view: View::of(id, version, &record, None),
            seed: record.game.seed(),
            parts: ExportParts::new(record.game),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Preset, Rules};

    fn played(rules: Rules, seats: u8, seed: &str) -> Game {
        let mut game = Game::new(rules, seats, crate::engine::Seed::from_text(seed), None).unwrap();
        let mut n = 0usize;
        while let Some(turn) = game.turn() {
            let legal = game.project(Some(turn)).legal_moves;
            game.play(turn, legal[n * 7 % legal.len()].mv).unwrap();
            n += 1;
        }
        game
    }

    /// The parts are what the whole replay gives: every round's deal, then every move.
    #[test]
    fn an_export_made_part_by_part_is_the_whole_replay() {
        for preset in Preset::ALL {
            let game = played(preset.rules(), 3, preset.name());
            let (moves, _) = game.replay_history().unwrap();
            let deals: Vec<_> = (1..=game.round_number())
                .map(|n| game.deal_of_round(n))
                .collect();
            assert!(deals.len() > 1, "{preset:?}: several rounds");
            let parts: Vec<_> = ExportParts::new(game).map(Result::unwrap).collect();
            let expected: Vec<_> = deals
                .into_iter()
                .map(ExportPart::Deal)
                .chain(moves.into_iter().map(|(s, m)| ExportPart::Move(s, m)))
                .collect();
            assert_eq!(parts, expected, "{preset:?}");
        }
    }

    #[test]
    fn pages_chain_to_the_whole_history() {
        let game = played(Preset::Draw.rules(), 2, "pages");
        let (moves, events) = game.replay_history().unwrap();
        let mut after = 0;
        let mut view = Vec::new();
        loop {
            let (start, entries) = page(&game, Some(0), after, 7).unwrap();
            assert_eq!(start.is_empty(), after != 0);
            assert!(entries.len() <= 7);
            if entries.is_empty() {
                break;
            }
            after = entries.last().unwrap().index as usize;
            view.extend(entries);
        }
        assert_eq!(view.len(), moves.len());
        for (i, entry) in view.iter().enumerate() {
            assert_eq!(entry.index, i as u64 + 1);
            assert_eq!((entry.seat, entry.mv), moves[i]);
            let shown: Vec<_> = events[i + 1]
                .iter()
                .map(|e| e.visible_to(Some(0)))
                .collect();
            assert_eq!(entry.events, shown);
        }
    }
}
