//! The matchmaking aggregate: how players meet, two ways, each its own type. The
//! challenges ([`Challenges`]: [`challenge`], the stored one; [`invitation`], what a
//! challenge and a match both hold and how an answer to it is judged; [`challenges`],
//! make, answer, expire; `open`, the caps on open invitations and their lists) and the
//! seeks ([`Seeks`]: [`seek`], [`seeks`], pools paired by the store in one step). A match
//! is no challenge: it is the matches aggregate's, stored under a challenge's key and
//! answered by the same rules, whose invitation it holds from here. Every game it makes goes through the games aggregate's one
//! admission path. What follows its changes (the players hear of a challenge made or
//! closed, a seek expired; a match's entry in the due index is handed on) goes up through
//! [`MatchmakingReactions`] to the dispatcher.

pub mod challenge;
pub mod challenges;
pub mod invitation;
mod open;
pub mod seek;
pub mod seeks;

use futures_util::future::BoxFuture;

use super::Error;
use crate::domain::MatchId;
use challenge::Challenge;
use seek::Seek;

pub use challenges::Challenges;
pub use seeks::Seeks;

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
