//! The cap on tournaments one player is in at once (`MAX_TOURNAMENTS_JOINED`): each join
//! is claimed in the store in one step before the tournament records it, so two joins at
//! once (on two processes) cannot both take the last place; a place is released when the
//! player withdraws or is removed, and when the tournament ends or is canceled.

use crate::domain::{PlayerId, TournamentId};
use crate::store::tournaments::TournamentStore;

use super::CLAIM_MADE_WITHIN_MS;
use super::kept::TournamentRecords;
use super::record::Tournament;
use crate::service::Error;
use crate::service::shared::now_ms;

impl TournamentRecords {
    /// Claims a place among the tournaments `player` joined for tournament `id`, or
    /// refuses the join at the cap. Places left by what is over are released first.
    pub(super) async fn claim_join(
        &self,
        player: &PlayerId,
        id: TournamentId,
    ) -> Result<(), Error> {
        let max = self.ctx.caps.tournaments_joined;
        let now = now_ms();
        if max.is_some() {
            self.release_joins_over(player, now).await?;
        }
        let store = &self.ctx.store;
        if !store
            .tournaments()
            .claim_joined_tournament(player, &id, now, max)
            .await?
        {
            let max = max.unwrap_or_default();
            return Err(Error::TooManyTournamentsJoined { max });
        }
        Ok(())
    }

    /// After a join refused: its place is released unless the player is in the
    /// tournament still (it had joined before).
    pub(super) async fn unclaim_join(
        &self,
        player: &PlayerId,
        id: TournamentId,
    ) -> Result<(), Error> {
        let entered = match self.load(id).await {
            Ok((_, t)) => !t.status.over() && t.entrant_of(player).is_some(),
            Err(Error::TournamentNotFound) => false,
            Err(e) => return Err(e),
        };
        if !entered {
            let store = &self.ctx.store;
            store
                .tournaments()
                .release_joined_tournament(player, &id)
                .await?;
        }
        Ok(())
    }

    /// Releases every player's place in `t` (it is over).
    pub(super) async fn release_joins(&self, t: &Tournament) -> Result<(), Error> {
        for player in t.entrants.iter().filter_map(|e| e.player_id()) {
            let store = &self.ctx.store;
            store
                .tournaments()
                .release_joined_tournament(player, &t.id)
                .await?;
        }
        Ok(())
    }

    /// Releases `player`'s places in tournaments that are over or gone, and in those it is
    /// not in (a join refused, or a process that died between the claim and the join; a
    /// claim younger than a minute may be a join under way).
    async fn release_joins_over(&self, player: &PlayerId, now: u64) -> Result<(), Error> {
        for (id, claimed_ms) in self
            .ctx
            .store
            .tournaments()
            .joined_tournaments(player)
            .await?
        {
            let settled = claimed_ms + CLAIM_MADE_WITHIN_MS < now;
            let over = match self.load_listed(&id).await {
                Ok((_, t)) => t.status.over() || (settled && t.entrant_of(player).is_none()),
                Err(Error::TournamentNotFound) => settled,
                Err(e) => return Err(e),
            };
            if over {
                self.ctx
                    .store
                    .tournaments()
                    .release_joined_tournament(player, &id)
                    .await?;
            }
        }
        Ok(())
    }
}
