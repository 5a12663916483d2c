//! Where a match is kept: under a challenge's key, through the challenge store's
//! primitives. A match's id is a challenge's and its invitation is listed, answered and
//! capped with the challenges (the same routes, the same open and due indexes), and the
//! matches made before it had a record of its own are challenges with a series under
//! those keys: a store of its own would split one key space and need a migration to be
//! found. The record at a key says which it is ([`super::record`]); this is the one place
//! the matches reach the store.

use crate::store::challenges::{ChallengeStore, Direction, Parties};
use crate::store::{SaveOutcome, Stored};

use std::sync::Arc;

use super::Match;
use crate::domain::MatchId;
use crate::service::error::Error;
use crate::service::shared::Shared;

/// Where the matches are kept: their records, and the indexes they share with the
/// challenges.
pub(super) struct MatchRecords {
    ctx: Arc<Shared>,
}

impl MatchRecords {
    pub(super) fn new(ctx: Arc<Shared>) -> MatchRecords {
        MatchRecords { ctx }
    }

    /// Stores new match `m` at version 1, indexed under its players as a challenge is,
    /// and due at `due_ms` (if any).
    pub(super) async fn store_new(&self, m: &Match, due_ms: Option<u64>) -> Result<(), Error> {
        let invitation = m.invitation();
        let opponents = invitation.opponent_ids();
        let parties = Parties {
            challenger: &invitation.challenger().id,
            opponents: &opponents,
        };
        let created_ms = invitation.created_ms();
        self.ctx
            .store
            .challenges()
            .create_challenge(&m.id(), m.encode(), created_ms, parties, due_ms)
            .await?;
        Ok(())
    }

    /// Match `id` with its version; `None` when there is none, or the record there is a
    /// plain challenge's.
    pub(super) async fn find(&self, id: MatchId) -> Result<Option<(u64, Match)>, Error> {
        let Some(Stored { version, bytes }) =
            self.ctx.store.challenges().load_challenge(&id).await?
        else {
            return Ok(None);
        };
        Ok(Match::read(&bytes)?.map(|m| (version, m)))
    }

    /// Match `id` with its version, or [`Error::MatchNotFound`].
    pub(super) async fn load(&self, id: MatchId) -> Result<(u64, Match), Error> {
        self.find(id).await?.ok_or(Error::MatchNotFound)
    }

    /// Compare-and-set of match `id` on `version`.
    pub(super) async fn save(
        &self,
        id: MatchId,
        version: u64,
        m: &Match,
    ) -> Result<SaveOutcome, Error> {
        Ok(self
            .ctx
            .store
            .challenges()
            .save_challenge(&id, version, m.encode())
            .await?)
    }

    /// Sets (or with `None` drops) match `id`'s entry in the due index it shares with the
    /// challenges (whose sweep hands it on here).
    pub(super) async fn index_due(&self, id: MatchId, due_ms: Option<u64>) -> Result<(), Error> {
        Ok(self
            .ctx
            .store
            .challenges()
            .index_challenge_due(&id, due_ms)
            .await?)
    }

    /// Adds match `id` to (or with `false` takes it from) those `player` made that may
    /// still run.
    pub(super) async fn index_running(
        &self,
        player: &str,
        id: MatchId,
        running: bool,
    ) -> Result<(), Error> {
        Ok(self
            .ctx
            .store
            .challenges()
            .index_match(player, &id, running)
            .await?)
    }

    /// The matches `player` made that may still run, as indexed (a hint).
    pub(super) async fn running_ids(&self, player: &str) -> Result<Vec<MatchId>, Error> {
        let ids = self.ctx.store.challenges().player_matches(player).await?;
        // Only ids this server made are indexed.
        Ok(ids.iter().filter_map(|id| MatchId::stored(id)).collect())
    }

    /// The newest `limit` ids of `player`'s challenges and matches in `direction`.
    pub(super) async fn listed(
        &self,
        player: &str,
        direction: Direction,
        limit: usize,
    ) -> Result<Vec<String>, Error> {
        Ok(self
            .ctx
            .store
            .challenges()
            .player_challenges(player, direction, 0, limit)
            .await?)
    }
}
