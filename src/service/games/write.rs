//! The one write path: every change to a game (a join, a move, a timeout, the bots'
//! background turns) is loaded, altered, and stored here with a compare-and-set on its
//! version, with its public event and idempotency receipt. Kept apart so that the rules
//! of a write (retries, receipts, the bots' budget, what an unanswered save became) are
//! read in one place.

use crate::bots;
use crate::domain::GameId;
use crate::engine::{Event, Move};
use crate::metrics::{BotLabels, BotPlace};
use crate::store::{
    Deadline, Evidence, GameNow, GameStore, History, Save, SaveOutcome, StoreError, StoredGame,
};

use crate::service::shared::now_ms;
use crate::service::thinking::Priority;

use super::events::PublicEvent;
use super::idempotency::{Earlier, Receipt, RequestKey, StoredReceipt};
use super::record::{Record, Status};
use super::{Bearer, Error, Games, load_kept, viewer_of};
use crate::service::Fate;

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
        // The bots' budget runs from here: a lost race does not start it again.
        let started = std::time::Instant::now();
        // The game as a lost race's save answered it: the next attempt starts from it.
        // (Kept as stored, not decoded: a record is large, and this future, which holds
        // it across the awaits below, is copied whole as actix boxes it.)
        let mut answered: Option<StoredGame> = None;
        // The cached copy is for the first attempt only.
        let mut cached = true;
        // With a key, the save itself finds a request made before (and answers its
        // record); only a refusal, which no save follows, looks the key up first.
        let mut key_first = false;
        for _ in 0..MAX_ATTEMPTS {
            // `stored`: the game as the store holds it (loaded, or answered by a save),
            // rather than this process's copy, which may be stale. `history`: the events
            // the store keeps with `version`, which the save hands back.
            let (version, mut record, stored, history) = match answered.take() {
                Some(now) => (
                    now.version,
                    Record::decode(&now.bytes)?,
                    true,
                    Some(now.history),
                ),
                None => match std::mem::take(&mut cached)
                    .then(|| self.cache.take(id))
                    .flatten()
                {
                    Some((version, record, history)) => {
                        self.ctx.metrics.game_cache.hit.inc();
                        (version, record, false, history)
                    }
                    None => {
                        self.ctx.metrics.game_cache.miss.inc();
                        let (version, record, history) = load_kept(&self.ctx.store, id).await?;
                        (version, record, true, Some(history))
                    }
                },
            };
            // A refusal decided on a copy is looked at again on the stored game (the copy
            // may be behind it); one of a keyed request, after looking its key up (it
            // may be a retry of a request made: its first answer stands).
            macro_rules! unless_stale {
                ($decided:expr) => {
                    match $decided {
                        Ok(value) => value,
                        Err(e) if stored && (key.is_none() || key_first) => return Err(e),
                        Err(_) => {
                            if !stored {
                                self.ctx.metrics.game_cache.stale.inc();
                            }
                            key_first |= key.is_some();
                            continue;
                        }
                    }
                };
            }
            let now = now_ms();
            let mut stored_name = None;
            if let Some((key, token)) = key {
                // The token before the key: a stranger is refused as one (401), and learns
                // nothing of the keys a seat has used. A move's key is its seat's own.
                let seat = match viewer_of(&record, token) {
                    Ok(seat) => seat,
                    Err(e) if stored => return Err(e),
                    Err(_) => {
                        self.ctx.metrics.game_cache.stale.inc();
                        continue;
                    }
                };
                let name = stored_name.insert(key.stored_name(seat));
                if key_first {
                    match self.earlier(id, version, key, name).await? {
                        Earlier::Made(stored) => {
                            let repeated = self.repeated(id, name, stored, version, record);
                            return Box::pin(repeated).await;
                        }
                        Earlier::AfterLoad => continue,
                        Earlier::None => {}
                    }
                }
            }
            let moves_before = record.game.move_count() as u32;
            let due_before = record.due(now);
            let Change {
                value,
                mover,
                mut moves,
                seat,
                unlist,
                relist,
                think,
            } = match unless_stale!(change(version, now, &mut record)) {
                Decision::Store(change) => change,
                Decision::Leave(_) if !stored => {
                    self.ctx.metrics.game_cache.stale.inc();
                    continue;
                }
                Decision::Leave(why) => {
                    return Ok(Written::Unchanged {
                        why,
                        version,
                        record,
                    });
                }
            };
            // A draw that leaves its seat to move does not end the seat's turn.
            let turn_over = !matches!(moves.first(), Some(&(seat, Move::Draw))
                if Some(seat) == mover && record.game.turn() == Some(seat));
            // Off the async workers, on this attempt's own copy: a lost race thinks again
            // on the fresh state.
            let (mut record, thought, bot_moves) = match think {
                None => (record, Vec::new(), None),
                Some(BotWork { place, think }) => {
                    let priority = if place == BotPlace::Background && record.bots_alone() {
                        Priority::BotsOnly {
                            moves: record.game.move_count() as u64,
                        }
                    } else {
                        Priority::Human
                    };
                    let (record, played, thought) = self
                        .ctx
                        .pool
                        .run(place, priority, started, move |keep_going, thinking| {
                            let mut record = record;
                            let mut events = Vec::new();
                            let played = think(&mut record, &mut events, keep_going, thinking);
                            (record, played, events)
                        })
                        .await?;
                    let played = unless_stale!(played);
                    let counted = (place, played.len() as u64);
                    moves.extend(played);
                    (record, thought, Some(counted))
                }
            };
            let next = record.human_to_move();
            if let Some(clock) = &mut record.clock {
                // The next bank starts as the change is stored, after the bots' replies.
                clock.settle(mover, turn_over, next, now, now_ms().max(now));
            }
            let status = record.status();
            let event = PublicEvent {
                version: version + 1,
                status,
                turn: record.game.turn(),
                moves,
            };
            let name = stored_name.clone();
            let receipt = key
                .zip(seat)
                .zip(stored_name.take())
                .map(|(((key, _), seat), name)| {
                    Receipt {
                        seat,
                        version: version + 1,
                        from: moves_before,
                        to: record.game.move_count() as u32,
                    }
                    .stored_under(key, name)
                });
            let save = Save {
                expected: version,
                bytes: record.encode(),
                history,
                idempotency: receipt,
                seat: seat.unwrap_or(0),
                event: Some(event.encode()),
                unlist,
                relist,
                finished: status == Status::Finished,
                deadline: match (due_before, record.due(now)) {
                    (None, None) => None,
                    (before, after) => Some(Deadline { before, after }),
                },
            };
            let (bytes, event_bytes) = (save.bytes.clone(), save.event.clone());
            let kept = save.history_after();
            if record.rated_end() {
                // Due a little later, before the save: should this process stop after it,
                // a sweep settles the ratings (the dispatcher drops the entry once done).
                Box::pin(self.due_for_settling(id, version + 1)).await;
            }
            // Boxed: the store's save future is large, and actix copies a move's future
            // whole as it boxes it (a copy past 8 KB also counts a byte an instruction
            // under callgrind, which the benches read).
            let saved = match Box::pin(self.ctx.store.save(&id, save)).await {
                Ok(saved) => saved,
                // Made, but not confirmed by replicas: a retry with the same key answers
                // once they are.
                Err(cause @ StoreError::Unreplicated(_)) => {
                    return Err(Error::Unsettled {
                        cause: cause.to_string(),
                        fate: Fate::Unknown,
                    });
                }
                // Redis may have applied it and only its answer was late: look before
                // answering, so that a client never retries blind into a second move.
                Err(cause) => match self.fate_of(id, version, &bytes, event_bytes).await {
                    Fate::Applied => SaveOutcome::Saved {
                        version: version + 1,
                    },
                    fate => {
                        return Err(Error::Unsettled {
                            cause: cause.to_string(),
                            fate,
                        });
                    }
                },
            };
            match saved {
                SaveOutcome::Saved { version } => {
                    self.ctx
                        .metrics
                        .moves_applied
                        .inc_by(event.moves.len() as u64);
                    if let Some((place, n)) = bot_moves {
                        self.ctx
                            .metrics
                            .bot_moves
                            .get_or_create(&BotLabels { r#where: place })
                            .inc_by(n);
                    }
                    for (s, mv) in &event.moves {
                        tracing::info!(game_id = %id, seat = s, mv = ?mv, version, "move applied");
                    }
                    if status == Status::Finished {
                        tracing::info!(game_id = %id, scores = ?record.game.scores(), "match ended");
                    }
                    return Ok(Written::Saved {
                        version,
                        record,
                        value,
                        thought,
                        started: unlist,
                        history: kept,
                    });
                }
                // Nothing written: the save answered the game as it is. If this request
                // was made before (a copy of it won, or a retry), the first answer stands,
                // pinned version or not; else the next attempt starts from the answer, and
                // a pinned version is refused there as stale. (A copy of ours that was
                // behind lost to no concurrent write: it counts as stale, not a conflict.)
                SaveOutcome::Conflict {
                    current: GameNow { stored: now, made },
                } => {
                    // The request was made before: its first answer stands.
                    if let (Some(made), Some((key, _)), Some(name)) = (made, key, &name) {
                        let stored = key.receipt_in(&made)?;
                        let record = Record::decode(&now.bytes)?;
                        let repeated = self.repeated(id, name, stored, now.version, record);
                        return Box::pin(repeated).await;
                    }
                    if stored {
                        self.ctx.metrics.store_conflicts.inc();
                    } else {
                        self.ctx.metrics.game_cache.stale.inc();
                    }
                    answered = Some(now);
                }
                SaveOutcome::Missing => {
                    self.cache.forget(id);
                    return Err(Error::NotFound);
                }
            }
        }
        Err(Error::Internal(
            "too many concurrent changes to this game; try again".into(),
        ))
    }

    /// The answer to a request made before under key `name`: its receipt, and the game as
    /// it is now (at `version`, at or after the receipt's).
    async fn repeated<T, Idle>(
        &self,
        id: GameId,
        name: &str,
        stored: StoredReceipt,
        version: u64,
        record: Record,
    ) -> Result<Written<T, Idle>, Error> {
        // The first attempt may have been refused for want of replicas: its receipt is an
        // acknowledgement only once they hold it.
        self.ctx
            .store
            .confirm(&id, Evidence::Record(name))
            .await
            .map_err(|cause| Error::Unsettled {
                cause: cause.to_string(),
                fate: Fate::Unknown,
            })?;
        Ok(Written::Repeated {
            stored,
            version,
            record,
        })
    }

    /// Indexes game `id` (to be at `version`) as due [`SETTLE_WITHIN`] from now.
    pub(crate) async fn due_for_settling(&self, id: GameId, version: u64) {
        let due = now_ms() + SETTLE_WITHIN.as_millis() as u64;
        if let Err(e) = self.ctx.store.index_deadline(&id, version, Some(due)).await {
            tracing::warn!(game_id = %id, error = %e, "could not index a rated game's settling");
        }
    }

    /// Whether a save of game `id` from `expected` that got no answer was applied: the game
    /// at `expected + 1` holds exactly these bytes (its record carries fresh clocks, tokens
    /// and moves: no other write makes the same), or, when it has moved on since, the event
    /// of `expected + 1` is this one. Each look is bounded by the store's own timeout.
    async fn fate_of(
        &self,
        id: GameId,
        expected: u64,
        bytes: &[u8],
        event: Option<Vec<u8>>,
    ) -> Fate {
        let stored = match self.ctx.store.load_after_writes(&id).await {
            Ok(Some(stored)) => stored,
            Ok(None) | Err(_) => return Fate::Unknown,
        };
        let fate = match stored.version {
            v if v == expected => Fate::NotApplied,
            v if v == expected + 1 && stored.bytes == bytes => Fate::Applied,
            v if v == expected + 1 => Fate::NotApplied,
            v if v < expected => Fate::Unknown,
            _ => match self.ctx.store.events_since(&id, expected).await {
                Ok(events) => match events.iter().find(|e| e.version == expected + 1) {
                    Some(e) if Some(&e.payload) == event.as_ref() => Fate::Applied,
                    Some(_) => Fate::NotApplied,
                    None => Fate::Unknown,
                },
                Err(_) => Fate::Unknown,
            },
        };
        // Applied on the master is not yet acknowledged: the replicas must hold it too.
        let evidence = Evidence::Stored {
            version: stored.version,
            bytes: &stored.bytes,
        };
        match fate {
            Fate::Applied if self.ctx.store.confirm(&id, evidence).await.is_err() => Fate::Unknown,
            fate => fate,
        }
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
