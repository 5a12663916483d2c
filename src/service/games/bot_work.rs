//! The bots' share of a write: what they think after a change, on the bots' pool (off the
//! async workers) within its budget, their moves stored with the change.

use crate::bots;
use crate::engine::{Event, Move};
use crate::metrics::BotPlace;

use super::Error;
use super::record::{Record, Status};

/// Work for the bots' pool: moves made on the record (appended to the events they cause),
/// while the budget's `keep_going` says so, a master thinking each move as the pool says.
pub(super) type Think = Box<
    dyn FnOnce(
            &mut Record,
            &mut Vec<Event>,
            &mut dyn FnMut() -> bool,
            bots::Thinking<'_>,
        ) -> Result<Vec<(u8, Move)>, Error>
        + Send,
>;

pub(super) struct BotWork {
    pub(super) place: BotPlace,
    pub(super) think: Think,
}

impl BotWork {
    /// The bots whose turn follows, as far as the budget goes; `None` when no bot is to
    /// move (most moves between humans: no trip to the pool).
    pub(super) fn bots(record: &Record, place: BotPlace) -> Option<BotWork> {
        record.bots_to_move().then(|| BotWork {
            place,
            think: Box::new(|record, events, keep_going, thinking| {
                Ok(bots_play(record, events, keep_going, thinking))
            }),
        })
    }
}

/// The bots' moves that follow, once every seat is taken, while `keep_going` says so.
pub(super) fn bots_play(
    record: &mut Record,
    events: &mut Vec<Event>,
    keep_going: &mut dyn FnMut() -> bool,
    thinking: bots::Thinking<'_>,
) -> Vec<(u8, Move)> {
    if record.status() == Status::Waiting {
        return Vec::new();
    }
    let bots = record.bots();
    bots::turns::play_turns_while(&mut record.game, &bots, events, thinking, keep_going)
}
