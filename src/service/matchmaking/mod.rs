//! The matchmaking aggregate: how players meet. It owns the challenges ([`challenge`], the
//! stored one; [`challenges`], make, answer, expire), a match's challenge included, and the
//! seeks ([`seek`], [`seeks`]: pools paired by the store in one step). Every game it makes
//! goes through the games aggregate's one admission path; a match accepted is handed up
//! through [`MatchMover`] to be moved on.

pub mod challenge;
pub mod challenges;
pub mod seek;
pub mod seeks;
pub mod series;

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

use super::Error;
use super::games::Games;
use super::players::Players;
use super::shared::{Port, Shared};

/// Moves an accepted match on (its games made, its results counted): the matches
/// aggregate's, reached through the dispatcher.
pub trait MatchMover: Send + Sync {
    fn move_on<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), Error>>;
}

pub struct Matchmaking {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    matches: Port<dyn MatchMover>,
}

impl Matchmaking {
    pub(super) fn new(
        ctx: Arc<Shared>,
        players: Arc<Players>,
        games: Arc<Games>,
    ) -> Arc<Matchmaking> {
        Arc::new(Matchmaking {
            ctx,
            players,
            games,
            matches: Port::new(),
        })
    }

    /// Where an accepted match is handed up; set once, by `Services::new`.
    pub(super) fn move_matches_with(&self, matches: Weak<dyn MatchMover>) {
        self.matches.set(matches);
    }

    /// Moves accepted match `id` on, unless the services are gone (stopping).
    async fn move_match_on(&self, id: &str) -> Result<(), Error> {
        match self.matches.get() {
            Some(matches) => matches.move_on(id).await,
            None => Ok(()),
        }
    }
}
