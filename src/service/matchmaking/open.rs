//! Open invitations (challenges, and matches waiting for an answer): the caps on how many
//! a player has made and has been sent, each checked and counted in one step in the store
//! (so two processes never both take the last place), what the store keeps of one once it
//! closes, the paged lists, and a challenge open again when the game its acceptance asked
//! for was refused.

use crate::domain::Caller;
use crate::service::page::page_offset;
use crate::service::shared::now_ms;
use crate::store::SaveOutcome;
use crate::store::challenges::{
    CLOSED_CHALLENGE_KEPT, CapReached, ChallengeStore, Direction, OpenCaps, Parties,
};

use super::challenge::Challenge;
use super::challenges::{ATTEMPTS, MAX_OPEN_CHALLENGES};
use super::invitation::{ChallengeStatus, Counted, Opponent};
use super::{Challenges, Error};

impl Challenges {
    /// A page (from 1) of the ids of the key's player's open invitations in `direction`
    /// (challenges, and matches waiting for an answer), newest first, and when it was
    /// read: the index is a hint, so the caller keeps those it finds open then.
    pub(in crate::service) async fn open_ids(
        &self,
        caller: &Caller,
        direction: Direction,
        page: usize,
        per_page: usize,
    ) -> Result<(u64, Vec<String>), Error> {
        let offset = page_offset(page, per_page, "per_page")?;
        let (_, me) = self.players.authenticate(caller).await?;
        let now = now_ms();
        let ids = self
            .ctx
            .store
            .challenges()
            .open_challenges(me.id(), direction, now, offset, per_page)
            .await?;
        Ok((now, ids))
    }

    /// Counts `open` against its challenger's and its opponents' caps, in one step in
    /// the store, whichever process makes it; refused when one is full.
    pub(in crate::service) async fn count_open(&self, open: Counted<'_>) -> Result<(), Error> {
        let caps = OpenCaps {
            out: MAX_OPEN_CHALLENGES,
            into: self.ctx.caps.challenges_to_player.unwrap_or(usize::MAX),
        };
        let opponents = open.opponent_ids();
        let parties = Parties {
            challenger: &open.challenger().id,
            opponents: &opponents,
        };
        match self
            .ctx
            .store
            .challenges()
            .open_challenge(open.id, parties, open.expires_ms(), now_ms(), caps)
            .await?
        {
            Ok(()) => Ok(()),
            Err(CapReached::Challenger) => Err(Error::TooManyChallenges {
                max: MAX_OPEN_CHALLENGES,
            }),
            Err(CapReached::Opponent(i)) => Err(Error::TooManyChallengesTo {
                name: open
                    .invitation
                    .opponents()
                    .iter()
                    .filter_map(Opponent::player)
                    .nth(i)
                    .map_or_else(String::new, |p| p.name.clone()),
                max: caps.into,
            }),
        }
    }

    /// What the store keeps of invitation `open`, now `status`, once closed: no longer
    /// counted open, and if it came to nothing (declined, canceled, expired) its record
    /// kept only briefly.
    pub(in crate::service) async fn closed_in_store(
        &self,
        open: Counted<'_>,
        status: ChallengeStatus,
    ) {
        if status == ChallengeStatus::Open {
            return;
        }
        let id = open.id;
        self.uncount_open(open).await;
        if status != ChallengeStatus::Accepted {
            let kept = self
                .ctx
                .store
                .challenges()
                .keep_challenge(id, CLOSED_CHALLENGE_KEPT)
                .await;
            if let Err(e) = kept {
                tracing::warn!(challenge_id = %id, error = %e, "a closed challenge is kept as long as an answered one");
            }
        }
    }

    /// Counts `challenge`, reopened (its acceptance undone), as open again: it held its
    /// place until accepted, so no cap refuses it. Best effort, as uncounting is.
    pub(super) async fn recount_open(&self, challenge: &Challenge) {
        let invitation = challenge.invitation();
        let opponents = invitation.opponent_ids();
        let parties = Parties {
            challenger: &invitation.challenger().id,
            opponents: &opponents,
        };
        let uncapped = OpenCaps {
            out: usize::MAX,
            into: usize::MAX,
        };
        let (id, expires) = (&challenge.id(), invitation.expires_ms());
        let store = &self.ctx.store;
        if let Err(e) = store
            .challenges()
            .open_challenge(id, parties, expires, now_ms(), uncapped)
            .await
        {
            tracing::warn!(challenge_id = %id, error = %e, "a reopened challenge is not counted open");
        }
    }

    /// Stops counting `open` as open. Best effort: an entry left behind counts until the
    /// invitation's expiry, no longer.
    pub(in crate::service) async fn uncount_open(&self, open: Counted<'_>) {
        let opponents = open.opponent_ids();
        let parties = Parties {
            challenger: &open.challenger().id,
            opponents: &opponents,
        };
        if let Err(e) = self
            .ctx
            .store
            .challenges()
            .close_challenge(open.id, parties)
            .await
        {
            tracing::warn!(challenge_id = %open.id, error = %e, "a closed challenge still counts as open until it expires");
        }
    }
}

impl Challenges {
    /// Undoes the acceptance by `by` that made `accepted` accepted, its game refused: the
    /// challenge is open again (until its expiry, as before), as though `by` had not
    /// answered, unless something else changed it meanwhile.
    pub(super) async fn reopen(&self, accepted: &Challenge, by: &str) {
        for _ in 0..ATTEMPTS {
            let Ok((version, mut challenge)) = self.load_challenge(accepted.id()).await else {
                break;
            };
            if challenge.invitation().saved_status() != ChallengeStatus::Accepted
                || challenge.game_id() != accepted.game_id()
            {
                return;
            }
            challenge.invitation_mut().reopen(by);
            challenge.set_game(None);
            match self
                .ctx
                .store
                .challenges()
                .save_challenge(&challenge.id(), version, challenge.encode())
                .await
            {
                Ok(SaveOutcome::Saved { .. }) => {
                    tracing::info!(challenge_id = %challenge.id(), player_id = by, "an acceptance undone: its game was refused");
                    self.recount_open(&challenge).await;
                    let expires_ms = challenge.invitation().expires_ms();
                    self.set_challenge_due(challenge.id(), Some(expires_ms))
                        .await;
                    return;
                }
                Ok(SaveOutcome::Conflict { .. }) => continue,
                Ok(SaveOutcome::Missing) | Err(_) => break,
            }
        }
        // Left accepted: the sweep finds no game and tries once more, then reopens it.
        tracing::warn!(challenge_id = %accepted.id(), "a refused acceptance could not be undone yet");
    }
}
