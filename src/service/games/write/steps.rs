//! The steps of one attempt at a write, each a function whose answer the write's loop
//! matches on: take the game, look the key up, decide the change, let the bots think,
//! prepare the save, save, answer what the save did.

use std::convert::Infallible;
use std::time::Instant;

use crate::domain::GameId;
use crate::engine::{Event, Move};
use crate::metrics::{BotLabels, BotPlace};
use crate::service::Fate;
use crate::service::shared::now_ms;
use crate::service::thinking::Priority;
use crate::store::{
    Deadline, Evidence, GameNow, GameStore, History, Save, SaveOutcome, StoreError, StoredGame,
};

use super::super::bot_work::BotWork;
use super::super::events::PublicEvent;
use super::super::idempotency::{Earlier, Receipt, RequestKey, StoredReceipt, earlier};
use super::super::record::{Record, Status};
use super::super::{Bearer, Error, Games, load_kept, viewer_of};
use super::{Change, Decision, Written, due_for_settling};

/// What one step of an attempt at a write decided.
// As large as the `Written` the write answers by value anyway: boxing it would cost every
// move an allocation.
#[allow(clippy::large_enum_variant)]
pub(super) enum Step<V, T, Idle> {
    /// Go on to the next step with this.
    Go(V),
    /// Try again from the top: on a load (the copy may be stale, or the key is to be
    /// looked up first), or on the game a lost race's save answered.
    Again,
    /// Answer this: what was saved, a request's first answer, or that nothing was due.
    Answer(Written<T, Idle>),
}

/// One write of game `id`, and what carries over from one attempt to the next.
pub(super) struct Writing<'a> {
    games: &'a Games,
    id: GameId,
    key: Option<(&'a RequestKey, Option<&'a Bearer>)>,
    /// The bots' budget runs from here: a lost race does not start it again.
    started: Instant,
    /// The game as a lost race's save answered it: the next attempt starts from it.
    /// (Kept as stored, not decoded: a record is large, and the write's future, which
    /// holds it across its awaits, is copied whole as actix boxes it.)
    answered: Option<StoredGame>,
    /// The cached copy is for the first attempt only.
    cached: bool,
    /// With a key, the save itself finds a request made before (and answers its
    /// record); only a refusal, which no save follows, looks the key up first.
    key_first: bool,
}

/// The game an attempt starts from. Boxed from step to step, as is [`Decided`]: a
/// record is large, and each step's answer moved it whole (callgrind: the split into steps
/// cost 2% more instructions a move, nearly all of it memcpy, before they were boxed).
pub(super) struct Taken {
    version: u64,
    record: Record,
    /// As the store holds it (loaded, or answered by a save), rather than this process's
    /// copy, which may be stale.
    stored: bool,
    /// The events the store keeps with `version`, which the save hands back.
    history: Option<History>,
    /// The time the attempt decides at.
    now: u64,
}

/// What a save did, and the events the store keeps with the game it saved.
pub(super) struct Saving {
    outcome: SaveOutcome<GameNow>,
    kept: Option<History>,
}

/// An attempt's change, made on its game.
pub(super) struct Decided<T> {
    /// The game, changed.
    taken: Box<Taken>,
    change: Change<T>,
    /// The key's name in the store (a keyed request's: its seat's own).
    name: Option<String>,
    moves_before: u32,
    due_before: Option<u64>,
    /// The mover's turn ended (a draw that leaves its seat to move does not).
    turn_over: bool,
    /// What the bots' moves caused, and how many they made where.
    thought: Vec<Event>,
    bot_moves: Option<(BotPlace, u64)>,
}

impl<T> Decided<T> {
    /// The version the change is made on.
    pub(super) fn version(&self) -> u64 {
        self.taken.version
    }

    /// The change ends a rated game.
    pub(super) fn rated_end(&self) -> bool {
        self.taken.record.rated_end()
    }
}

impl<'a> Writing<'a> {
    pub(super) fn new(
        games: &'a Games,
        id: GameId,
        key: Option<(&'a RequestKey, Option<&'a Bearer>)>,
    ) -> Writing<'a> {
        Writing {
            games,
            id,
            key,
            started: Instant::now(),
            answered: None,
            cached: true,
            key_first: false,
        }
    }

    /// The game to start from: the one a lost race's save answered, else this process's
    /// copy (first attempt only), else the stored one.
    pub(super) async fn take(&mut self) -> Result<Box<Taken>, Error> {
        let metrics = &self.games.ctx.metrics.game_cache;
        let (version, record, stored, history) = match self.answered.take() {
            Some(now) => (
                now.version,
                Record::decode(&now.bytes)?,
                true,
                Some(now.history),
            ),
            None => match std::mem::take(&mut self.cached)
                .then(|| self.games.cache.take(self.id))
                .flatten()
            {
                Some((version, record, history)) => {
                    metrics.hit.inc();
                    (version, record, false, history)
                }
                None => {
                    metrics.miss.inc();
                    let (version, record, history) =
                        load_kept(&self.games.ctx.store, self.id).await?;
                    (version, record, true, Some(history))
                }
            },
        };
        Ok(Box::new(Taken {
            version,
            record,
            stored,
            history,
            now: now_ms(),
        }))
    }

    /// A keyed request's seat and key name: the token first (a stranger is refused as
    /// one, 401, and learns nothing of the keys a seat has used; a move's key is its
    /// seat's own), then, once a refusal asked for it, the request made before under it.
    pub(super) async fn look_up_key<T, Idle>(
        &mut self,
        taken: Box<Taken>,
    ) -> Result<Step<(Box<Taken>, Option<String>), T, Idle>, Error> {
        let Some((key, token)) = self.key else {
            return Ok(Step::Go((taken, None)));
        };
        let seat = match viewer_of(&taken.record, token) {
            Ok(seat) => seat,
            Err(e) if taken.stored => return Err(e),
            Err(_) => {
                self.games.ctx.metrics.game_cache.stale.inc();
                return Ok(Step::Again);
            }
        };
        let name = key.stored_name(seat);
        if self.key_first {
            match earlier(&self.games.ctx.store, self.id, taken.version, key, &name).await? {
                Earlier::Made(stored) => {
                    let repeated = self.repeated(&name, stored, taken.version, taken.record);
                    return Ok(Step::Answer(Box::pin(repeated).await?));
                }
                Earlier::AfterLoad => return Ok(Step::Again),
                Earlier::None => {}
            }
        }
        Ok(Step::Go((taken, Some(name))))
    }

    /// `change` made on the taken game: a change to store, or nothing to do.
    pub(super) fn decide<T, Idle>(
        &mut self,
        mut taken: Box<Taken>,
        name: Option<String>,
        change: &mut impl FnMut(u64, u64, &mut Record) -> Result<Decision<T, Idle>, Error>,
    ) -> Result<Step<Box<Decided<T>>, T, Idle>, Error> {
        let moves_before = taken.record.game.move_count() as u32;
        let due_before = taken.record.due(taken.now);
        let change = match change(taken.version, taken.now, &mut taken.record) {
            Ok(Decision::Store(change)) => change,
            Ok(Decision::Leave(_)) if !taken.stored => {
                self.games.ctx.metrics.game_cache.stale.inc();
                return Ok(Step::Again);
            }
            Ok(Decision::Leave(why)) => {
                return Ok(Step::Answer(Written::Unchanged {
                    why,
                    version: taken.version,
                    record: taken.record,
                }));
            }
            Err(e) => return self.refused(e, taken.stored),
        };
        let turn_over = !matches!(change.moves.first(), Some(&(seat, Move::Draw))
            if Some(seat) == change.mover && taken.record.game.turn() == Some(seat));
        Ok(Step::Go(Box::new(Decided {
            taken,
            change,
            name,
            moves_before,
            due_before,
            turn_over,
            thought: Vec::new(),
            bot_moves: None,
        })))
    }

    /// A refusal, final when decided on the stored game (a keyed request's only once its
    /// key was looked up: it may be a retry of a request made, whose first answer stands);
    /// one decided on a copy, which may be behind, is looked at again on a load.
    fn refused<V, T, Idle>(&mut self, e: Error, stored: bool) -> Result<Step<V, T, Idle>, Error> {
        let keyed = self.key.is_some();
        if stored && (!keyed || self.key_first) {
            return Err(e);
        }
        if !stored {
            self.games.ctx.metrics.game_cache.stale.inc();
        }
        self.key_first |= keyed;
        Ok(Step::Again)
    }

    /// The bots whose turn follows the change, off the async workers, on this attempt's
    /// own copy: a lost race thinks again on the fresh state.
    pub(super) async fn think<T, Idle>(
        &mut self,
        mut decided: Box<Decided<T>>,
    ) -> Result<Step<Box<Decided<T>>, T, Idle>, Error> {
        let Some(BotWork { place, think }) = decided.change.think.take() else {
            return Ok(Step::Go(decided));
        };
        let record = decided.taken.record;
        let priority = if place == BotPlace::Background && record.bots_alone() {
            Priority::BotsOnly {
                moves: record.game.move_count() as u64,
            }
        } else {
            Priority::Human
        };
        let (record, played, thought) = self
            .games
            .ctx
            .pool
            .run(
                place,
                priority,
                self.started,
                move |keep_going, thinking| {
                    let mut record = record;
                    let mut events = Vec::new();
                    let played = think(&mut record, &mut events, keep_going, thinking);
                    (record, played, events)
                },
            )
            .await?;
        decided.taken.record = record;
        let played = match played {
            Ok(played) => played,
            Err(e) => return self.refused(e, decided.taken.stored),
        };
        decided.bot_moves = Some((place, played.len() as u64));
        decided.change.moves.extend(played);
        decided.thought = thought;
        Ok(Step::Go(decided))
    }

    /// The save of the change: the clocks settled (the next bank starts as the change is
    /// stored, after the bots' replies), the public event, the receipt under the key.
    pub(super) fn prepare<T>(&self, decided: &mut Decided<T>) -> (Save, PublicEvent) {
        let Decided { taken, change, .. } = decided;
        let record = &mut taken.record;
        let (version, now) = (taken.version, taken.now);
        let next = record.human_to_move();
        if let Some(clock) = &mut record.clock {
            clock.settle(
                change.mover,
                decided.turn_over,
                next,
                now,
                now_ms().max(now),
            );
        }
        let status = record.status();
        let event = PublicEvent {
            version: version + 1,
            status,
            turn: record.game.turn(),
            moves: std::mem::take(&mut change.moves),
        };
        let receipt =
            self.key
                .zip(change.seat)
                .zip(decided.name.clone())
                .map(|(((key, _), seat), name)| {
                    Receipt {
                        seat,
                        version: version + 1,
                        from: decided.moves_before,
                        to: record.game.move_count() as u32,
                    }
                    .stored_under(key, name)
                });
        let save = Save {
            expected: version,
            bytes: record.encode(),
            history: taken.history.take(),
            idempotency: receipt,
            seat: change.seat.unwrap_or(0),
            event: Some(event.encode()),
            unlist: change.unlist,
            relist: change.relist,
            finished: status == Status::Finished,
            deadline: match (decided.due_before, record.due(now)) {
                (None, None) => None,
                (before, after) => Some(Deadline { before, after }),
            },
        };
        (save, event)
    }

    /// Stores `save` of the game at `version`, a rated end indexed due first; an
    /// unanswered save is looked at before it is answered. (Plain values, not the
    /// attempt's `Decided`: a reference to it, which is not `Sync`, would make the
    /// write's future not `Send`.)
    pub(super) async fn save(
        &self,
        version: u64,
        rated_end: bool,
        save: Save,
    ) -> Result<Saving, Error> {
        let id = self.id;
        let (bytes, event_bytes) = (save.bytes.clone(), save.event.clone());
        let kept = save.history_after();
        if rated_end {
            // Due a little later, before the save: should this process stop after it,
            // a sweep settles the ratings (the dispatcher drops the entry once done).
            Box::pin(due_for_settling(&self.games.ctx.store, id, version + 1)).await;
        }
        // Boxed: the store's save future is large, and actix copies a move's future
        // whole as it boxes it (a copy past 8 KB also counts a byte an instruction
        // under callgrind, which the benches read).
        let outcome = match Box::pin(self.games.ctx.store.games().save(&id, save)).await {
            Ok(outcome) => outcome,
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
            Err(cause) => match self.fate_of(version, &bytes, event_bytes).await {
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
        Ok(Saving { outcome, kept })
    }

    /// What the save did, answered: saved; a request made before (a copy of it won, or a
    /// retry), whose first answer stands, pinned version or not; else a lost race, tried
    /// again from the game the save answered (where a pinned version is refused as
    /// stale). A copy of ours that was behind lost to no concurrent write: it counts as
    /// stale, not a conflict.
    pub(super) async fn answer<T, Idle>(
        &mut self,
        decided: Box<Decided<T>>,
        event: PublicEvent,
        saving: Saving,
    ) -> Result<Step<Infallible, T, Idle>, Error> {
        let id = self.id;
        let metrics = &self.games.ctx.metrics;
        match saving.outcome {
            SaveOutcome::Saved { version } => {
                metrics.moves_applied.inc_by(event.moves.len() as u64);
                if let Some((place, n)) = decided.bot_moves {
                    metrics
                        .bot_moves
                        .get_or_create(&BotLabels { r#where: place })
                        .inc_by(n);
                }
                for (s, mv) in &event.moves {
                    tracing::info!(game_id = %id, seat = s, mv = ?mv, version, "move applied");
                }
                let record = decided.taken.record;
                if event.status == Status::Finished {
                    tracing::info!(game_id = %id, scores = ?record.game.scores(), "match ended");
                }
                Ok(Step::Answer(Written::Saved {
                    version,
                    record,
                    value: decided.change.value,
                    thought: decided.thought,
                    started: decided.change.unlist,
                    history: saving.kept,
                }))
            }
            SaveOutcome::Conflict {
                current: GameNow { stored: now, made },
            } => {
                if let (Some(made), Some((key, _)), Some(name)) = (made, self.key, &decided.name) {
                    let stored = key.receipt_in(&made)?;
                    let record = Record::decode(&now.bytes)?;
                    let repeated = self.repeated(name, stored, now.version, record);
                    return Ok(Step::Answer(Box::pin(repeated).await?));
                }
                if decided.taken.stored {
                    metrics.store_conflicts.inc();
                } else {
                    metrics.game_cache.stale.inc();
                }
                self.answered = Some(now);
                Ok(Step::Again)
            }
            SaveOutcome::Missing => {
                self.games.cache.forget(id);
                Err(Error::NotFound)
            }
        }
    }

    /// The answer to a request made before under key `name`: its receipt, and the game as
    /// it is now (at `version`, at or after the receipt's).
    async fn repeated<T, Idle>(
        &self,
        name: &str,
        stored: StoredReceipt,
        version: u64,
        record: Record,
    ) -> Result<Written<T, Idle>, Error> {
        // The first attempt may have been refused for want of replicas: its receipt is an
        // acknowledgement only once they hold it.
        self.games
            .ctx
            .store
            .games()
            .confirm(&self.id, Evidence::Record(name))
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

    /// Whether a save of the game from `expected` that got no answer was applied: the game
    /// at `expected + 1` holds exactly these bytes (its record carries fresh clocks, tokens
    /// and moves: no other write makes the same), or, when it has moved on since, the event
    /// of `expected + 1` is this one. Each look is bounded by the store's own timeout.
    async fn fate_of(&self, expected: u64, bytes: &[u8], event: Option<Vec<u8>>) -> Fate {
        let (id, store) = (self.id, &self.games.ctx.store);
        let stored = match store.games().load_after_writes(&id).await {
            Ok(Some(stored)) => stored,
            Ok(None) | Err(_) => return Fate::Unknown,
        };
        let fate = match stored.version {
            v if v == expected => Fate::NotApplied,
            v if v == expected + 1 && stored.bytes == bytes => Fate::Applied,
            v if v == expected + 1 => Fate::NotApplied,
            v if v < expected => Fate::Unknown,
            _ => match store.games().events_since(&id, expected).await {
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
            Fate::Applied if store.games().confirm(&id, evidence).await.is_err() => Fate::Unknown,
            fate => fate,
        }
    }
}
