//! The challenge routes' use cases, for either kind of invitation under a challenge's id:
//! a plain challenge (the matchmaking aggregate's) or a match waiting for its answer (the
//! matches'). Listed together from the one index of open ones, and each answered by its
//! own aggregate; this holds no rule of its own, only which one an id names.

use std::sync::Arc;

use futures_util::future::join_all;

use crate::address::AddressKey;
use crate::domain::{Caller, ChallengeId};
use crate::store::challenges::{ChallengeStore, Direction};

use super::Error;
use super::matches::{Match, Matches};
use super::matchmaking::Challenges;
use super::matchmaking::challenge::Challenge;
use super::matchmaking::invitation::{Answer, ChallengeStatus};
use super::shared::Shared;

/// An invitation as the challenge routes answer it.
#[derive(Debug, Clone)]
pub enum Offer {
    Challenge(Challenge),
    Match(Match),
}

pub struct Offers {
    ctx: Arc<Shared>,
    challenges: Arc<Challenges>,
    matches: Arc<Matches>,
}

impl Offers {
    pub(super) fn new(
        ctx: Arc<Shared>,
        challenges: Arc<Challenges>,
        matches: Arc<Matches>,
    ) -> Arc<Offers> {
        Arc::new(Offers {
            ctx,
            challenges,
            matches,
        })
    }

    /// A page (from 1) of the key's player's open invitations in `direction`, newest
    /// first.
    pub async fn open(
        &self,
        caller: &Caller,
        direction: Direction,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Offer>, Error> {
        let (now, ids) = self
            .challenges
            .open_ids(caller, direction, page, per_page)
            .await?;
        let loaded = join_all(
            ids.iter()
                .map(|id| self.ctx.store.challenges().load_challenge(id)),
        )
        .await;
        let mut open = Vec::new();
        for stored in loaded {
            let Some(stored) = stored? else { continue };
            let (status, offer) = match Challenge::read(&stored.bytes)? {
                Some(c) => (c.invitation().status_at(now), Offer::Challenge(c)),
                None => match Match::read(&stored.bytes)? {
                    Some(m) => (m.status_at(now), Offer::Match(m)),
                    None => continue,
                },
            };
            // The index is a hint: one closed by a process that died before uncounting
            // it is left out, and drops off the index when it expires.
            if status == ChallengeStatus::Open {
                open.push(offer);
            }
        }
        Ok(open)
    }

    /// An invitation, for one of its players.
    pub async fn get(&self, caller: &Caller, id: ChallengeId) -> Result<Offer, Error> {
        match self.challenges.challenge_of(caller, id).await {
            Err(Error::ChallengeNotFound) => {
                let found = self.matches.invitation_of(caller, id).await;
                Ok(Offer::Match(not_found_as_challenge(found)?))
            }
            other => other.map(Offer::Challenge),
        }
    }

    /// An opponent accepts (see [`Challenges::accept`]); a match's acceptance starts it.
    pub async fn accept(
        &self,
        caller: &Caller,
        id: ChallengeId,
        from: Option<AddressKey>,
    ) -> Result<Offer, Error> {
        let answered = self.challenges.accept(caller, id, from).await;
        self.or_match(caller, id, Answer::Accept, answered).await
    }

    /// An opponent declines: the invitation is closed for everyone.
    pub async fn decline(&self, caller: &Caller, id: ChallengeId) -> Result<Offer, Error> {
        let answered = self.challenges.decline(caller, id).await;
        self.or_match(caller, id, Answer::Decline, answered).await
    }

    /// The challenger takes its invitation back.
    pub async fn cancel(&self, caller: &Caller, id: ChallengeId) -> Result<Offer, Error> {
        let answered = self.challenges.cancel_challenge(caller, id).await;
        self.or_match(caller, id, Answer::Cancel, answered).await
    }

    /// `answered` by the challenges, or when `id` names no challenge, `answer` given to
    /// the match it may name.
    async fn or_match(
        &self,
        caller: &Caller,
        id: ChallengeId,
        answer: Answer,
        answered: Result<Challenge, Error>,
    ) -> Result<Offer, Error> {
        match answered {
            Err(Error::ChallengeNotFound) => {
                let found = self.matches.answer(caller, id, answer).await;
                Ok(Offer::Match(not_found_as_challenge(found)?))
            }
            other => other.map(Offer::Challenge),
        }
    }
}

/// At a challenge route an id that names nothing is no challenge.
fn not_found_as_challenge(found: Result<Match, Error>) -> Result<Match, Error> {
    found.map_err(|e| match e {
        Error::MatchNotFound => Error::ChallengeNotFound,
        e => e,
    })
}
