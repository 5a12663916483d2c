//! The tournaments each player (or built-in level) entered, for its profile: an index of
//! the store's per player, written after the record as the lists are, and trusted only as
//! far as the record agrees. One found gone (expired a day after its end) or without the
//! player (it withdrew before the start) leaves the index when read.

use futures_util::future::join_all;

use crate::domain::{PlayerId, Who};
use crate::store::tournaments::TournamentStore;

use super::Tournaments;
use super::kept::TournamentRecords;
use super::record::{Entry, Tournament};
use crate::service::Error;
use crate::service::page::page_offset;

impl TournamentRecords {
    /// Names `t` among `player`'s tournaments (with `false`, no more).
    pub(super) async fn index_entered(
        &self,
        t: &Tournament,
        player: &str,
        entered: bool,
    ) -> Result<(), Error> {
        let store = &self.ctx.store;
        store
            .tournaments()
            .index_player_tournament(player, &t.id, t.terms.created_ms, entered)
            .await?;
        Ok(())
    }

    /// Names `t` among the tournaments of each level it holds (once each).
    pub(super) async fn index_levels(&self, t: &Tournament) -> Result<(), Error> {
        let mut levels: Vec<PlayerId> = t
            .entrants
            .iter()
            .filter_map(|e| match e.entry {
                Entry::Level { level, .. } => Some(PlayerId::of_level(level)),
                Entry::Player { .. } => None,
            })
            .collect();
        levels.sort();
        levels.dedup();
        for level in levels {
            self.index_entered(t, &level, true).await?;
        }
        Ok(())
    }
}

impl Tournaments {
    /// The tournaments a player (by id, name or level) entered, newest first: page `page`
    /// (from 1). Anyone may read a tournament, so anyone may list these.
    pub async fn player_tournaments(
        &self,
        who: &Who,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<Tournament>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let id = self.players.known(who).await?;
        let store = &self.ctx.store;
        let (ids, _) = store
            .tournaments()
            .player_tournaments(&id, skip, per_page)
            .await?;
        let loaded = join_all(ids.iter().map(|t| self.records.load_listed(t))).await;
        let mut found = Vec::new();
        for (listed, loaded) in ids.iter().zip(loaded) {
            match loaded {
                Ok((_, t)) if holds(&t, &id) => found.push(t),
                Ok(_) | Err(Error::TournamentNotFound) => {
                    store
                        .tournaments()
                        .index_player_tournament(&id, listed, 0, false)
                        .await?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(found)
    }
}

/// Whether `player` (a player's id, or a level's) is among `t`'s entrants.
fn holds(t: &Tournament, player: &PlayerId) -> bool {
    t.entrants.iter().any(|e| match &e.entry {
        Entry::Player { party, .. } => party.id == player.as_str(),
        Entry::Level { level, .. } => PlayerId::of_level(*level) == *player,
    })
}
