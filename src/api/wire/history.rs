//! A game's history: the move log, page by page, and the export, written a chunk at a time
//! so a long match is never whole in memory.

use serde::Serialize;
use utoipa::ToSchema;

use crate::engine::{Move, Rules};
use crate::service;

use super::*;

impl GameLog {
    pub fn of(log: &service::Log) -> GameLog {
        GameLog {
            game_id: log.view.id.clone(),
            version: log.view.version,
            start: EventView::all(&log.start, &log.view),
            moves: log
                .moves
                .iter()
                .map(|entry| LogEntry {
                    index: entry.index,
                    seat: entry.seat,
                    mv: MadeMove::of(entry.mv),
                    events: EventView::all(&entry.events, &log.view),
                })
                .collect(),
            next: log.next,
        }
    }
}

/// The fields of an export before its deals and moves (see [`ExportWriter`]).
#[derive(Serialize)]
struct ExportHead<'a> {
    game_id: &'a str,
    preset: &'static str,
    rules: Rules,
    seats: u8,
    names: Vec<Option<String>>,
    player_ids: Vec<Option<String>>,
    seed: String,
    result: Option<MatchResult>,
}

/// Bytes of JSON an export chunk holds, about.
const EXPORT_CHUNK: usize = 32 * 1024;

/// A [`GameExport`] written as it is sent: its fields, then its deals and moves as the
/// service makes them, a chunk of about 32 KB at a time, so a long match's export is never
/// whole in memory.
pub struct ExportWriter {
    head: Option<Vec<u8>>,
    parts: service::games::log::ExportParts,
    in_moves: bool,
    first: bool,
    done: bool,
}

impl ExportWriter {
    pub fn of(export: service::Export) -> ExportWriter {
        let s = &export.view;
        let head = ExportHead {
            game_id: &s.id,
            preset: s.preset.name(),
            rules: s.rules,
            seats: s.seats.len() as u8,
            names: s.seats.iter().map(|seat| seat.name.clone()).collect(),
            player_ids: s.players.clone(),
            seed: export.seed.to_hex(),
            result: s
                .projection
                .as_ref()
                .and_then(|p| MatchResult::of_projection(p, &s.scores)),
        };
        let mut head = serde_json::to_vec(&head).expect("an export serialises");
        head.pop(); // its closing brace: the deals and moves follow
        head.extend_from_slice(br#","deals":["#);
        ExportWriter {
            head: Some(head),
            parts: export.parts,
            in_moves: false,
            first: true,
            done: false,
        }
    }

    /// The next chunk; `None` after the last. An error ends the export unfinished (the
    /// stored history does not replay): the client sees the answer cut short.
    pub fn chunk(&mut self) -> Option<Result<Vec<u8>, service::Error>> {
        if self.done {
            return None;
        }
        let mut buf = self
            .head
            .take()
            .unwrap_or_else(|| Vec::with_capacity(EXPORT_CHUNK + 1024));
        while buf.len() < EXPORT_CHUNK {
            let part = match self.parts.next() {
                Some(Ok(part)) => part,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    if !self.in_moves {
                        buf.extend_from_slice(br#"],"moves":["#);
                    }
                    buf.extend_from_slice(b"]}");
                    self.done = true;
                    break;
                }
            };
            if matches!(part, service::ExportPart::Move(..)) && !self.in_moves {
                buf.extend_from_slice(br#"],"moves":["#);
                (self.in_moves, self.first) = (true, true);
            }
            if !std::mem::take(&mut self.first) {
                buf.push(b',');
            }
            let written = match part {
                service::ExportPart::Deal(deal) => {
                    serde_json::to_writer(&mut buf, &DealBody::from_deal(&deal))
                }
                service::ExportPart::Move(seat, mv) => {
                    serde_json::to_writer(&mut buf, &ExportedMove::of((seat, mv)))
                }
            };
            written.expect("an export serialises");
        }
        Some(Ok(buf))
    }
}

impl ExportedMove {
    pub fn of((seat, mv): (u8, Move)) -> ExportedMove {
        ExportedMove {
            seat,
            mv: MadeMove::of(mv),
        }
    }
}

/// One entry of the move log.
#[derive(Serialize, ToSchema)]
pub struct LogEntry {
    /// The move's place in the match's history: the `n`th move made at the table, from 1.
    /// A page's `next` is the last index it holds.
    pub index: u64,
    pub seat: u8,
    #[serde(rename = "move")]
    pub mv: MadeMove,
    /// What it caused, as the caller may see it (another seat's draws are "drew a tile").
    pub events: Vec<EventView>,
}

/// A page of the move log: the moves after the page's `after` index, oldest first.
#[derive(Serialize, ToSchema)]
pub struct GameLog {
    #[schema(format = Uuid)]
    pub game_id: String,
    /// The game's version when the page was read.
    pub version: u64,
    /// The first round's deal events (who leads, the start tile), which precede every
    /// move: on the first page (`after` 0) only, empty on the others.
    pub start: Vec<EventView>,
    /// At most `limit` moves.
    pub moves: Vec<LogEntry>,
    /// The `after` to ask for the next page (the last index of this one); null on the
    /// last page. A game in play has more moves later: ask after the last index again.
    pub next: Option<u64>,
}

/// A finished game, complete: enough to replay it exactly. Sent as it is made (chunked):
/// a long match's export is never whole in the server's memory, and an answer cut short
/// means the server could not finish it.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // the export's schema: its JSON is written by `ExportWriter`
pub struct GameExport {
    #[schema(format = Uuid)]
    pub game_id: String,
    #[schema(schema_with = preset_schema)]
    pub preset: &'static str,
    #[schema(value_type = RulesDoc)]
    pub rules: Rules,
    pub seats: u8,
    pub names: Vec<Option<String>>,
    /// Per seat, the player it was bound to (taken with a player's key), by id; `null`
    /// for a seat taken anonymously, whatever its name, or played by a bot.
    pub player_ids: Vec<Option<String>>,
    /// The seed of every shuffle, hex (32 bytes); a text seed is hashed with SHA-256.
    /// Created again with `"seed": "hex:" + seed` and these rules and seats, a game deals
    /// the same rounds.
    pub seed: String,
    /// Every round's deal, in order.
    pub deals: Vec<DealBody>,
    pub moves: Vec<ExportedMove>,
    pub result: Option<MatchResult>,
}

#[derive(Serialize, ToSchema)]
pub struct ExportedMove {
    pub seat: u8,
    #[serde(rename = "move")]
    pub mv: MadeMove,
}
