//! The one write path: every change to a game (a join, a move, a timeout, the bots'
//! background turns) is loaded, altered, and stored here with a compare-and-set on its
//! version, with its public event and idempotency receipt. Kept apart so that the rules
//! of a write (retries, receipts, the bots' budget, what an unanswered save became) are
//! read in one place.

mod steps;

use crate::domain::GameId;
use crate::engine::{Event, Move};
use crate::service::shared::Stores;
use crate::store::{GameStore, History};

use crate::service::shared::now_ms;

use super::bot_work::BotWork;
use super::idempotency::{RequestKey, StoredReceipt};
use super::record::Record;
use super::{Bearer, Error, Games};
use steps::{Step, Writing};

/// Attempts at a compare-and-set before giving up (each loses only to a concurrent move
/// of the same game, so a handful is plenty).
const MAX_ATTEMPTS: usize = 16;
/// How long after a rated game's last save a sweep settles its ratings, if the process
/// that saved it did not (it stopped right after the save).
const SETTLE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// What one attempt of [`Games::write`] decided to store.
pub(super) struct Change<T> {
    pub(super) value: T,
    /// The seat that made the change's first move (`None` for a seat taken, a timeout):
    /// its bank stops.
    pub(super) mover: Option<u8>,
    /// The moves made, in order (a player's, then the bots'), for the public event.
    pub(super) moves: Vec<(u8, Move)>,
    /// The seat that asked, for an idempotency receipt.
    pub(super) seat: Option<u8>,
    /// The game leaves the lobby with this change.
    pub(super) unlist: bool,
    /// The game stays in the lobby, which shows this change.
    pub(super) relist: bool,
    /// Bots' thinking that follows the change, run on the bots' pool (off the async
    /// workers) within its budget; its moves are stored with the change.
    pub(super) think: Option<BotWork>,
}

impl<T> Change<T> {
    /// A change of the record alone: no move, no seat asking, the lobby as it is.
    pub(super) fn quiet(value: T) -> Change<T> {
        Change {
            value,
            mover: None,
            moves: Vec::new(),
            seat: None,
            unlist: false,
            relist: false,
            think: None,
        }
    }
}

/// What one attempt's `change` decided: store a change, or leave the game as it is.
pub(super) enum Decision<T, Idle> {
    Store(Change<T>),
    /// Only the background may find nothing to do (a deadline not reached after all); a
    /// request always stores or is refused, so its `Idle` is [`std::convert::Infallible`] and its
    /// [`Written`] has no `Unchanged`.
    Leave(Idle),
}

/// What [`Games::write`] did.
pub(super) enum Written<T, Idle> {
    /// Nothing to store, for `why`: the game as loaded.
    Unchanged {
        why: Idle,
        version: u64,
        record: Record,
    },
    /// Stored as `version`; `thought`: what the bots' moves caused; `started`: its last
    /// seat was taken; `history`: the events the store keeps with it, when known.
    Saved {
        version: u64,
        record: Record,
        value: T,
        thought: Vec<Event>,
        started: bool,
        history: Option<History>,
    },
    /// The same request was stored before: its receipt, and the game as loaded since.
    Repeated {
        stored: StoredReceipt,
        version: u64,
        record: Record,
    },
}

impl Games {
    /// The one write path: take the game (this process's copy from its last write, else
    /// load it), let `change` alter it, store it with a compare-and-set on its version
    /// (with the public event, and the receipt under `key`), and on a lost race start
    /// again from the state the save answered. With `key` (and the token a move came with;
    /// a join has none), a request already stored under it is not made again.
    ///
    /// A copy may be stale, so nothing but a save is decided on it: a refusal, or nothing
    /// to do, is looked at again on the stored game before it is answered.
    ///
    /// It answers what it saved, and reacts to nothing: [`Games::update`] dispatches.
    pub(super) async fn write<T, Idle>(
        &self,
        id: GameId,
        key: Option<(&RequestKey, Option<&Bearer>)>,
        mut change: impl FnMut(u64, u64, &mut Record) -> Result<Decision<T, Idle>, Error>,
    ) -> Result<Written<T, Idle>, Error> {
        let mut writing = Writing::new(self, id, key);
        for _ in 0..MAX_ATTEMPTS {
            let taken = writing.take().await?;
            let (taken, name) = match writing.look_up_key(taken).await? {
                Step::Go(go) => go,
                Step::Again => continue,
                Step::Answer(written) => return Ok(written),
            };
            let decided = match writing.decide(taken, name, &mut change)? {
                Step::Go(decided) => decided,
                Step::Again => continue,
                Step::Answer(written) => return Ok(written),
            };
            let mut decided = match writing.think(decided).await? {
                Step::Go(decided) => decided,
                Step::Again => continue,
                Step::Answer(written) => return Ok(written),
            };
            let (save, event) = writing.prepare(&mut decided);
            let (version, rated_end) = (decided.version(), decided.rated_end());
            let outcome = writing.save(version, rated_end, save).await?;
            match writing.answer(decided, event, outcome).await? {
                Step::Go(never) => match never {},
                Step::Again => continue,
                Step::Answer(written) => return Ok(written),
            }
        }
        Err(Error::Internal(
            "too many concurrent changes to this game; try again".into(),
        ))
    }
}

/// Indexes game `id` (to be at `version`) in `store` as due [`SETTLE_WITHIN`] from now.
pub(in crate::service) async fn due_for_settling(store: &Stores, id: GameId, version: u64) {
    let due = now_ms() + SETTLE_WITHIN.as_millis() as u64;
    if let Err(e) = store.games().index_deadline(&id, version, Some(due)).await {
        tracing::warn!(game_id = %id, error = %e, "could not index a rated game's settling");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, mpsc};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::bots::Level;
    use crate::domain::{Caller, GameId, Seat, SeatName};
    use crate::engine::{Preset, RulesPatch, Seed};
    use crate::metrics::BotPlace;
    use crate::service::shared::now_ms;
    use crate::service::thinking::Priority;

    use crate::service::{ClockSettings, MoveRequest, NewGame, OnTimeout, Services};

    /// A service on the memory store whose bots have one thread and a long budget.
    fn service() -> Arc<Services> {
        crate::service::Services::on_memory(Duration::from_secs(10))
    }

    /// The seat's bank as stored now.
    async fn bank(service: &Games, id: GameId, seat: Seat) -> u64 {
        let (_, record) = service.load(id).await.unwrap();
        record.clock.unwrap().bank_at(seat, now_ms())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bots_wait_for_a_thread_is_not_charged_to_the_next_humans_bank() {
        let services = service();
        let service = services.games.clone();
        let clock = ClockSettings {
            bank_secs: 60,
            increment_secs: 0,
            on_timeout: OnTimeout::Bot,
            timeout_bot: Level::Greedy,
            abandon_after: 3,
        };
        let view = service
            .create(
                NewGame {
                    preset: Preset::Classic,
                    overrides: RulesPatch::default(),
                    seats: 2,
                    bots: vec![(1, Level::Greedy)],
                    seed: Some(Seed::from_text("a bot's wait")),
                    deal: None,
                    clock: Some(clock),
                },
                None,
                None,
            )
            .await
            .unwrap();
        let id = GameId::stored(&view.id).unwrap();
        let human = SeatName::parse("human").unwrap();
        let joined = service
            .join(id, Some(&human), Some(Seat::new(0)), None, None)
            .await
            .unwrap();
        let (_, record) = service.load(id).await.unwrap();
        assert_eq!(record.human_to_move(), Some(0), "the human's turn");
        let mv = record.game.project(Some(0)).legal_moves[0].mv;
        let before = bank(&service, id, Seat::new(0)).await;

        // The bots' only thread is busy: the bot's reply waits 2 s for it (long beside what
        // the human's own move takes even on a loaded machine).
        let (release, held) = mpsc::channel::<()>();
        let (busy_tx, busy) = tokio::sync::oneshot::channel();
        let pool_service = service.clone();
        let blocker = tokio::spawn(async move {
            pool_service
                .ctx
                .pool
                .run(
                    BotPlace::Request,
                    Priority::Human,
                    Instant::now(),
                    move |_, _| {
                        busy_tx.send(()).unwrap();
                        held.recv().unwrap();
                    },
                )
                .await
                .unwrap();
        });
        busy.await.unwrap();
        let request = MoveRequest {
            mv,
            expected_version: None,
        };
        let caller = Caller::of(Some(&joined.token));
        let (moved, ()) =
            tokio::join!(service.make_move(id, &caller, None, request, None), async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                release.send(()).unwrap();
            });
        moved.unwrap();
        blocker.await.unwrap();
        let (_, record) = service.load(id).await.unwrap();
        assert_eq!(record.human_to_move(), Some(0), "the bot replied");
        let charged = before - bank(&service, id, Seat::new(0)).await;
        assert!(
            charged < 1500,
            "{charged} ms charged: the 2 s the bot waited for a thread are not the human's"
        );
    }
}
