//! Where the tournaments are kept: their records, the lists by status, and each player's
//! places (the tournaments it made and joined, counted against its caps, and those it
//! entered, for its profile), each an index of the store's trusted only as far as the
//! record agrees.

use std::sync::Arc;

use crate::domain::TournamentId;
use crate::store::tournaments::TournamentStore;

use super::CLAIM_MADE_WITHIN_MS;
use super::record::{Tournament, TournamentStatus};
use crate::service::Error;
use crate::service::shared::Shared;

/// The tournaments' records and indexes in the store.
pub(super) struct TournamentRecords {
    pub(super) ctx: Arc<Shared>,
}

impl TournamentRecords {
    pub(super) fn new(ctx: Arc<Shared>) -> TournamentRecords {
        TournamentRecords { ctx }
    }

    /// Tournament `text` names, as a store's index (or a create's claim) holds it: only
    /// ids this server made are held, so any other names none.
    pub(super) async fn load_listed(&self, text: &str) -> Result<(u64, Tournament), Error> {
        let id = TournamentId::stored(text).ok_or(Error::TournamentNotFound)?;
        self.load(id).await
    }

    pub(super) async fn load(&self, id: TournamentId) -> Result<(u64, Tournament), Error> {
        match self.ctx.store.tournaments().load_tournament(&id).await? {
            Some(stored) => Ok((stored.version, Tournament::decode(&stored.bytes)?)),
            None => Err(Error::TournamentNotFound),
        }
    }

    /// Lists `t` under its status (and under no other).
    pub(super) async fn listed(&self, t: &Tournament) -> Result<(), Error> {
        let statuses = TournamentStatus::ALL.map(TournamentStatus::as_str);
        self.ctx
            .store
            .tournaments()
            .list_tournament(&t.id, t.terms.created_ms, t.status.as_str(), &statuses)
            .await?;
        Ok(())
    }

    /// Releases `player`'s claims on tournaments that are over, and on those never made
    /// (a create that failed after its claim; one in the making is given a minute).
    pub(super) async fn release_over(&self, player: &str, now: u64) -> Result<(), Error> {
        for (id, claimed_ms) in self
            .ctx
            .store
            .tournaments()
            .creator_tournaments(player)
            .await?
        {
            let over = match self.load_listed(&id).await {
                Ok((_, t)) => t.status.over(),
                Err(Error::TournamentNotFound) => claimed_ms + CLAIM_MADE_WITHIN_MS < now,
                Err(e) => return Err(e),
            };
            if over {
                self.ctx
                    .store
                    .tournaments()
                    .release_creator_tournament(player, &id)
                    .await?;
            }
        }
        Ok(())
    }
}
