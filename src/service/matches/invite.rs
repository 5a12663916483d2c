//! A match's invitation: answered at the challenge routes (accepted, declined, canceled)
//! by the rules a challenge's is (matchmaking's `Invitation`), expired by the sweep, and once
//! accepted, driven. What it shares with a challenge is matchmaking's; what follows its
//! answer is the match's.

use crate::domain::{Caller, ChallengeId, MatchId};
use crate::store::SaveOutcome;

use super::{ATTEMPTS, Match, MatchNotice, Matches};
use crate::service::error::Error;
use crate::service::matchmaking::invitation::{Answer, ChallengeStatus};
use crate::service::players::PlayerRecord;
use crate::service::shared::now_ms;

impl Matches {
    /// Match `id`'s invitation, for one of its players (as a challenge is read).
    pub(crate) async fn invitation_of(
        &self,
        caller: &Caller,
        id: ChallengeId,
    ) -> Result<Match, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let (_, found) = self.records.load(id.as_match()).await?;
        if !found.invitation().has_player(me.id()) {
            return Err(Error::Forbidden(
                "this challenge is between other players".into(),
            ));
        }
        Ok(found)
    }

    /// The key's player answers match `id`'s invitation (at the challenge routes).
    pub(crate) async fn answer(
        &self,
        caller: &Caller,
        id: ChallengeId,
        answer: Answer,
    ) -> Result<Match, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        self.answer_as(&me, id.as_match(), answer).await
    }

    /// Player `me` answers match `id`'s invitation; its acceptance starts the match.
    pub(super) async fn answer_as(
        &self,
        me: &PlayerRecord,
        id: MatchId,
        answer: Answer,
    ) -> Result<Match, Error> {
        for _ in 0..ATTEMPTS {
            let (version, mut found) = self.records.load(id).await?;
            if !found.invitation_mut().answer(answer, me.id(), now_ms())? {
                return Ok(found);
            }
            match self.records.save(id, version, &found).await? {
                SaveOutcome::Saved { .. } => {}
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(Error::MatchNotFound),
            }
            let status = found.invitation().saved_status();
            tracing::info!(match_id = %id, player_id = %me.id(), ?answer, status = status.as_str(), "match answered");
            self.closed(&found, me.id()).await;
            if status != ChallengeStatus::Open {
                self.ctx.metrics.challenge(status.as_str());
            }
            return Ok(found);
        }
        Err(Error::Internal(
            "a match kept changing under an answer".into(),
        ))
    }

    /// After a change of match `m`'s invitation made by player `by`: accepted, it starts
    /// (a sweep starts it should that fail); closed otherwise, its other players are told.
    async fn closed(&self, m: &Match, by: &str) {
        let (id, status) = (m.id(), m.invitation().saved_status());
        self.challenges.closed_in_store(m.counted(), status).await;
        let due = match status {
            ChallengeStatus::Open => return,
            ChallengeStatus::Accepted => Some(now_ms()),
            ChallengeStatus::Declined | ChallengeStatus::Canceled | ChallengeStatus::Expired => {
                None
            }
        };
        if let Err(e) = self.records.index_due(id, due).await {
            tracing::warn!(match_id = %id, error = %e, "could not index a match's next step");
        }
        if status == ChallengeStatus::Accepted {
            if let Err(e) = self.drive_series(id).await {
                tracing::warn!(match_id = %id, error = %e, "a match did not start; a sweep starts it");
            }
            return;
        }
        let others: Vec<String> = m
            .invitation()
            .player_ids()
            .into_iter()
            .filter(|player| player != by)
            .collect();
        self.tell(&others, MatchNotice::Closed(m)).await;
    }

    /// Tends match `id`, due: its invitation expired once past its expiry (its players
    /// told, once: the winner of the compare-and-set), driven once accepted.
    pub(crate) async fn tend(&self, id: MatchId) -> Result<(), Error> {
        let now = now_ms();
        let Some((version, mut found)) = self.records.find(id).await? else {
            return self.records.index_due(id, None).await;
        };
        if found.invitation_mut().expire(now) {
            // Answered meanwhile (a conflict): the next sweep sees what it became.
            if let SaveOutcome::Saved { .. } = self.records.save(id, version, &found).await? {
                tracing::info!(match_id = %id, "match expired unanswered");
                self.ctx.metrics.challenge("expired");
                self.closed(&found, "").await;
            }
            return Ok(());
        }
        let invitation = found.invitation();
        match invitation.saved_status() {
            ChallengeStatus::Open => {
                self.records
                    .index_due(id, Some(invitation.expires_ms()))
                    .await
            }
            ChallengeStatus::Accepted => self.drive_series(id).await.map(|_done| ()),
            _ => self.records.index_due(id, None).await,
        }
    }
}
