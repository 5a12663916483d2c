//! The creator's tools: canceling its tournament, and removing an entrant before the
//! start. Each is one compare-and-set on the record; what follows a cancel (the lists, the
//! caps, the streams) is what follows any end ([`drive`](super::drive)).

use crate::domain::{Caller, EntrantId, TournamentId};
use crate::store::tournaments::TournamentStore;

use super::record::{Entry, Tournament, TournamentStatus};
use super::{Tournaments, registering};
use crate::service::Error;

/// The reason a tournament canceled by its creator shows.
pub const CANCELED_BY_CREATOR: &str = "canceled by its creator";

impl Tournaments {
    /// Cancels tournament `id` (its creator), registering or running: it is over, its
    /// players and followers are told. Games in play go on, but their results no longer
    /// change it.
    pub async fn cancel(&self, caller: &Caller, id: TournamentId) -> Result<Tournament, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let canceled = self
            .change(id, |t| {
                if t.terms.creator.id != me.id().as_str() {
                    return Err(Error::Forbidden(
                        "only the tournament's creator cancels it".into(),
                    ));
                }
                if t.status.over() {
                    return Err(Error::TournamentClosed(format!(
                        "the tournament is {} already",
                        t.status.as_str()
                    )));
                }
                t.status = TournamentStatus::Canceled;
                t.reason = Some(CANCELED_BY_CREATOR.to_owned());
                Ok(())
            })
            .await?;
        self.ctx
            .store
            .tournaments()
            .index_tournament_due(&id, None)
            .await?;
        self.after_end(&canceled).await?;
        tracing::info!(tournament_id = %id, player_id = %me.id(), "tournament canceled by its creator");
        Ok(canceled)
    }

    /// Removes entrant `who` from tournament `id` (its creator, before the start).
    pub async fn remove(
        &self,
        caller: &Caller,
        id: TournamentId,
        who: EntrantId,
    ) -> Result<Tournament, Error> {
        let (_, me) = self.players.authenticate(caller).await?;
        let named = |entry: &Entry| match (entry, &who) {
            (Entry::Player { party, .. }, EntrantId::Player(player)) => party.id == player.as_str(),
            (Entry::Level { level, copy }, EntrantId::Level { level: l, copy: c }) => {
                level == l && copy == c
            }
            _ => false,
        };
        let removed = self
            .change(id, |t| {
                if t.terms.creator.id != me.id().as_str() {
                    return Err(Error::Forbidden(
                        "only the tournament's creator removes an entrant (a player \
                         withdraws itself: DELETE /v1/tournaments/{id}/players/me)"
                            .into(),
                    ));
                }
                registering(t, "removed")?;
                let at = t.entrants.iter().position(|e| named(&e.entry));
                t.entrants.remove(at.ok_or(Error::EntrantNotFound)?);
                Ok(())
            })
            .await?;
        if let EntrantId::Player(player) = &who {
            self.ctx
                .store
                .tournaments()
                .release_joined_tournament(player, &id)
                .await?;
            self.records.index_entered(&removed, player, false).await?;
        }
        Ok(removed)
    }
}
