//! The matchmaking aggregate: how players meet. It owns the challenges ([`challenge`], the
//! stored one, and how an answer to an invitation is judged; [`challenges`], make, answer,
//! expire; `open`, the caps on open invitations and their lists) and the seeks ([`seek`],
//! [`seeks`]: pools paired by the store in one step). A match is no challenge: it is the
//! matches aggregate's, stored under a challenge's key and answered by the same rules,
//! which it borrows from here. Every game it makes goes through the games aggregate's one
//! admission path. What follows its changes (the players hear of a challenge made or
//! closed, a seek expired; a match's entry in the due index is handed on) goes up through
//! [`MatchmakingReactions`] to the dispatcher.

pub mod challenge;
pub mod challenges;
mod open;
pub mod seek;
pub mod seeks;

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;

use super::Error;
use super::games::Games;
use super::players::Players;
use super::shared::{Port, Shared};
use crate::domain::MatchId;
use challenge::Challenge;
use seek::Seek;

/// What the players are to hear of a change here.
pub enum Notice<'a> {
    /// A challenge was made (to its opponents).
    Challenged(&'a Challenge),
    /// A challenge closed unaccepted: declined, canceled or expired.
    Closed(&'a Challenge),
    /// A seek expired unmatched.
    SeekExpired(&'a Seek),
}

/// The reactions to matchmaking's changes, run by the dispatcher.
pub trait MatchmakingReactions: Send + Sync {
    /// Tends match `id`, due in the index it shares with the challenges: expired if its
    /// invitation is, moved on (its games made, its results counted) once accepted.
    fn tend_match(&self, id: MatchId) -> BoxFuture<'_, Result<(), Error>>;

    /// Tells `players` of `notice`, on their streams.
    fn tell<'a>(&'a self, players: &'a [String], notice: Notice<'a>) -> BoxFuture<'a, ()>;
}

pub struct Matchmaking {
    ctx: Arc<Shared>,
    players: Arc<Players>,
    games: Arc<Games>,
    reactions: Port<dyn MatchmakingReactions>,
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
            reactions: Port::new(),
        })
    }

    /// Where what follows a change is handed up; set once, by `Services::new`.
    pub(super) fn react_with(&self, reactions: Weak<dyn MatchmakingReactions>) {
        self.reactions.set(reactions);
    }

    /// Tends match `id`, unless the services are gone (stopping).
    async fn tend_match(&self, id: MatchId) -> Result<(), Error> {
        match self.reactions.get() {
            Some(reactions) => reactions.tend_match(id).await,
            None => Ok(()),
        }
    }

    /// Tells `players` of `notice` (best effort, as all news).
    async fn tell(&self, players: &[String], notice: Notice<'_>) {
        if let Some(reactions) = self.reactions.get() {
            reactions.tell(players, notice).await;
        }
    }
}
