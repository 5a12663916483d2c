//! The games aggregate: tables. It owns the stored game ([`record`]) and every use case on
//! one: create and join ([`lobby`]), move and view ([`play`]), what a game due for its
//! seats to move takes ([`due`]: a clock run out, bots left to move), the lobby's news and
//! a game's events ([`events`]), the history ([`log`]); the one write path ([`write`]) and
//! the one admission path ([`Games::admit`]) every game made goes through. What follows a
//! save is handed up through [`saved::SaveReactions`], and a game whose bots are to move
//! in the background through [`due::Drive`], never called from here. Three types:
//! [`Games`], the use cases that change games; [`GameQueries`], the games as read (lists,
//! a player's games, log, export); [`Calls`], webhook seats called and their answers played.

pub mod admit;
mod bot_work;
mod cache;
mod called;
mod calls;
pub mod clock;
pub mod due;
pub mod events;
pub mod idempotency;
pub mod lobby;
pub mod log;
mod play;
pub mod record;
pub mod saved;
pub mod seating;
mod seats;
pub mod view;
mod write;

use std::sync::{Arc, Weak};

use crate::domain::{Caller, GameId};
use crate::engine::{MatchEnd, Outcome};
use crate::service::shared::Stores;
use crate::store::{GameStore, History};

use super::Error;
use super::players::Players;
use super::shared::{Port, Shared};
use due::Drive;
use idempotency::RequestKey;
use record::{Record, Status};
use saved::{SaveReactions, Saved};
use seating::TokenHash;
use write::{Decision, Written};

pub use calls::{CallWire, Calls};
pub use play::MoveRequest;
/// For the ratings' tests, which play a process stopped right after a rated end.
#[cfg(test)]
pub(in crate::service) use write::due_for_settling;

pub struct Games {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    /// The games this process wrote last, which its writes start from.
    cache: cache::GameCache,
    /// Where what follows a save is dispatched.
    reactions: Port<dyn SaveReactions>,
    /// Where a game whose bots are to move with no request to play them is handed.
    driver: Port<dyn Drive>,
    /// Itself, for the event streams it hands out.
    me: Weak<Games>,
}

/// The games as read, never written: the lobby's lists, a player's games and rating
/// history, a game's log and export. Apart from [`Games`], whose use cases change games.
pub struct GameQueries {
    games: Arc<Games>,
}

impl GameQueries {
    pub(super) fn new(games: Arc<Games>) -> Arc<GameQueries> {
        Arc::new(GameQueries { games })
    }
}

impl Games {
    pub(super) fn new(ctx: Arc<Shared>, players: Arc<Players>, game_cache: usize) -> Arc<Games> {
        Arc::new_cyclic(|me| Games {
            cache: cache::GameCache::new(game_cache),
            ctx,
            players,
            reactions: Port::new(),
            driver: Port::new(),
            me: me.clone(),
        })
    }

    /// Where this aggregate hands up what it saved; set once, by `Services::new`.
    pub(super) fn react_with(&self, reactions: Weak<dyn SaveReactions>) {
        self.reactions.set(reactions);
    }

    /// Where this aggregate hands games whose bots are to move; set once, by
    /// `Services::new`.
    pub(super) fn drive_with(&self, driver: Weak<dyn Drive>) {
        self.driver.set(driver);
    }

    /// Hands `saved` to the dispatcher (none once the services are gone: stopping).
    async fn dispatch(&self, saved: &Saved<'_>) {
        if let Some(reactions) = self.reactions.get() {
            reactions.after_save(saved).await;
        }
    }

    /// The write path ([`Games::write`]), then what followed its save dispatched: the one
    /// way a use case changes a stored game.
    async fn update<T, Idle>(
        &self,
        id: GameId,
        key: Option<(&RequestKey, Option<&Bearer>)>,
        change: impl FnMut(u64, u64, &mut Record) -> Result<Decision<T, Idle>, Error>,
    ) -> Result<Written<T, Idle>, Error> {
        let written = self.write(id, key, change).await?;
        if let Written::Saved {
            version,
            record,
            started,
            history,
            ..
        } = &written
        {
            let saved = Saved {
                id,
                version: *version,
                record,
                made: false,
                started: *started,
                history: history.as_ref(),
            };
            self.dispatch(&saved).await;
        }
        Ok(written)
    }

    /// The reaction of this process's copy to a save: the next write of the game starts
    /// from it, with no load; a finished game is written no more.
    pub(crate) fn keep(&self, saved: &Saved<'_>) {
        if saved.finished() {
            self.cache.forget(saved.id);
        } else {
            let history = saved.history.cloned();
            self.cache
                .put(saved.id, saved.version, saved.record.clone(), history);
        }
    }

    /// Drops finished game `id`'s due entry (at `version`): what had to follow its end
    /// once is done.
    pub(crate) async fn settled(&self, id: GameId, version: u64) -> Result<(), Error> {
        Ok(self
            .ctx
            .store
            .games()
            .index_deadline(&id, version, None)
            .await?)
    }

    /// Whether game `id` is stored (made, and not expired).
    /// By the id another aggregate's record holds.
    pub(crate) async fn exists(&self, id: GameId) -> Result<bool, Error> {
        Ok(self.ctx.store.games().load(&id).await?.is_some())
    }

    /// How game `id` stands, for the aggregate that made it (a match counts its ends).
    /// By the id another aggregate's record holds (a match's game, a twin).
    pub(crate) async fn progress(&self, id: GameId) -> Result<Progress, Error> {
        let Some(stored) = self.ctx.store.games().load(&id).await? else {
            return Ok(Progress::Gone);
        };
        let record = Record::decode(&stored.bytes)?;
        Ok(
            match (
                record.status(),
                record.game.outcome(),
                record.game.match_end(),
            ) {
                (Status::Finished, Some(outcome), Some(end)) => Progress::Ended {
                    outcome,
                    end,
                    scores: record.game.scores().to_vec(),
                    abandoned: (0..record.game.seats())
                        .filter(|&s| record.game.abandoned(s))
                        .fold(0, |bits, s| bits | 1 << s),
                },
                _ => Progress::InPlay,
            },
        )
    }

    pub(crate) async fn load(&self, id: GameId) -> Result<(u64, Record), Error> {
        load(&self.ctx.store, id).await
    }

    /// Refuses what `viewer` may not read of `record` while it is sealed: a game of a
    /// duplicate deal whose twin (the same hands, the seats swapped) is still in play, or
    /// not made yet. Its own seats read it as they played it; nobody else reads it, and
    /// nobody its export (the seed fixes every hand and the stock), until every game of
    /// the deal has finished.
    pub(crate) async fn unsealed(
        &self,
        record: &Record,
        viewer: Option<u8>,
        export: bool,
    ) -> Result<(), Error> {
        if record.twins.is_empty() || (viewer.is_some() && !export) {
            return Ok(());
        }
        for &twin in &record.twins {
            // Not made yet (refused, waiting for room) is not finished either.
            if !matches!(self.progress(twin).await?, Progress::Ended { .. }) {
                let exported = if export {
                    ", and exported by nobody"
                } else {
                    ""
                };
                return Err(Error::Sealed(format!(
                    "game {twin} plays the same deal and is not finished: until it is, this \
                     game is read only by its own seats{exported}"
                )));
            }
        }
        Ok(())
    }

    /// Loads a game and the seat of `caller` (`None` for a spectator, without a bearer).
    async fn load_as(
        &self,
        id: GameId,
        caller: &Caller,
    ) -> Result<(u64, Record, Option<u8>), Error> {
        let bearer = self.bearer(caller, None).await?;
        let (version, record) = self.load(id).await?;
        let viewer = viewer_of(&record, bearer.as_ref())?;
        self.unsealed(&record, viewer, false).await?;
        Ok((version, record, viewer))
    }

    /// Who `caller` is at a table: a seat's token by its hash (`hash`, when the HTTP
    /// layer computed it already: a token is hashed once a request), or a player whose
    /// key is checked against its player (401 when it opens none).
    async fn bearer(
        &self,
        caller: &Caller,
        hash: Option<TokenHash>,
    ) -> Result<Option<Bearer>, Error> {
        match caller {
            Caller::Player(key) => {
                let (_, player) = self.players.open(key).await?;
                Ok(Some(Bearer::Player(player.id().to_string())))
            }
            Caller::Seat(token) => Ok(Some(Bearer::Token(
                hash.unwrap_or_else(|| TokenHash::of(token.as_str())),
            ))),
            Caller::Nobody => Ok(None),
        }
    }
}

/// How a game stands ([`Games::progress`]).
pub enum Progress {
    /// Not stored: never made, or expired.
    Gone,
    /// Waiting for players, or in play.
    InPlay,
    /// Over: how, why, the points per side, and the seats abandoned to a bot on the way
    /// (bit `s`: seat `s`, after running out of time too often in a row).
    Ended {
        outcome: Outcome,
        end: MatchEnd,
        scores: Vec<i32>,
        abandoned: u8,
    },
}

/// Who sent a request: a seat's token (by its hash), or a player whose key was checked.
#[derive(Debug, Clone)]
enum Bearer {
    Token(TokenHash),
    /// The player's id.
    Player(String),
}

/// Game `id`'s version and record, checked.
async fn load(store: &Stores, id: GameId) -> Result<(u64, Record), Error> {
    let (version, record, _) = load_kept(store, id).await?;
    Ok((version, record))
}

/// [`load`], and the events the store keeps with that version.
async fn load_kept(store: &Stores, id: GameId) -> Result<(u64, Record, History), Error> {
    let stored = store.games().load(&id).await?.ok_or(Error::NotFound)?;
    Ok((
        stored.version,
        Record::decode(&stored.bytes)?,
        stored.history,
    ))
}

/// The seat of `bearer` (`None` for a spectator, without a token).
fn viewer_of(record: &Record, bearer: Option<&Bearer>) -> Result<Option<u8>, Error> {
    bearer.map(|b| seat_of(record, b)).transpose()
}

/// The seat `bearer` holds: a token's own, or the one bound to the key's player.
fn seat_of(record: &Record, bearer: &Bearer) -> Result<u8, Error> {
    match bearer {
        Bearer::Token(hash) => record.seating().seat_of(hash).ok_or(UNKNOWN_TOKEN),
        Bearer::Player(player) => record.seating().seat_of_player(player).ok_or_else(|| {
            Error::Forbidden("no seat of this game is bound to the key's player".into())
        }),
    }
}

const UNKNOWN_TOKEN: Error = Error::Unauthorized("the token is not a seat of this game");
