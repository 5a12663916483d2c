//! What a game write saved, and the port it is handed up through: the games aggregate
//! stores a game and says what it stored; what follows (lobby news, player news, ratings,
//! a match moving on, this process's copy) is the dispatcher's ([`crate::service`]'s
//! `dispatch`), each reaction owned by its aggregate.

use futures_util::future::BoxFuture;

use super::record::{Record, Status};
use crate::domain::{GameId, MatchId, TournamentId};
use crate::store::History;

/// One save of a game, as its reactions need it.
pub struct Saved<'a> {
    pub id: GameId,
    pub version: u64,
    pub record: &'a Record,
    /// Made by this save (version 1): listed in the lobby if it waits for players.
    pub made: bool,
    /// Its last seat was taken by this save (or it was made full): it starts.
    pub started: bool,
    /// The events the store keeps with this version, when known: the next save from
    /// this process's copy hands them back, and writes in one step.
    pub history: Option<&'a History>,
}

impl Saved<'_> {
    pub fn finished(&self) -> bool {
        self.record.status() == Status::Finished
    }

    /// A rated game's end: its ratings move, once.
    pub fn rated_end(&self) -> bool {
        self.record.rated_end()
    }

    /// The match it is a game of.
    pub fn series(&self) -> Option<MatchId> {
        self.record.series
    }

    /// The tournament it is a game of.
    pub fn tournament(&self) -> Option<TournamentId> {
        self.record.tournament
    }
}

/// The reactions to a game's saves, run from one place.
pub trait SaveReactions: Send + Sync {
    /// Everything that follows `saved`, in order.
    fn after_save<'a>(&'a self, saved: &'a Saved<'a>) -> BoxFuture<'a, ()>;

    /// A finished game the sweep found still due: the reactions that must happen once,
    /// which the process that saved it may not have run (it died after the save).
    fn overdue<'a>(&'a self, saved: &'a Saved<'a>) -> BoxFuture<'a, Result<(), super::Error>>;

    /// Player `player`'s webhook was paused (its calls failed in a row), for `reason`.
    fn webhook_paused<'a>(&'a self, player: &'a str, reason: &'a str) -> BoxFuture<'a, ()>;
}
