//! Leagues on Redis. A league is a key of its own (`league:{id}`, a versioned value like a
//! tournament's, with no expiry: a league never ends); the list and the due index are
//! sorted sets of one slot (`{leagues}:list` by creation time, `{leagues}:due` by due
//! time); a creator's leagues and a player's entries are sorted sets by claim time in the
//! player's slot (`player:{id}:league-claims`, `player:{id}:league-entries`); news goes
//! out on the league's channel as a game's does. The scripts are the tournaments'.

use super::RedisStore;
use super::connection::corrupt;
use super::keys::Keys;
use super::players::{parse_versioned, versioned_value};
use crate::leagues::{LeagueStore, league_channel};
use crate::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent};

impl Keys {
    fn league(&self, id: &str) -> String {
        format!("{}league:{{{id}}}", self.prefix)
    }
    fn leagues_listed(&self) -> String {
        format!("{}{{leagues}}:list", self.prefix)
    }
    fn leagues_due(&self) -> String {
        format!("{}{{leagues}}:due", self.prefix)
    }
    fn creator_leagues(&self, creator: &str) -> String {
        format!("{}player:{{{creator}}}:league-claims", self.prefix)
    }
    fn league_entries(&self, player: &str) -> String {
        format!("{}player:{{{player}}}:league-entries", self.prefix)
    }
}

impl LeagueStore for RedisStore {
    async fn create_league(
        &self,
        id: &str,
        created_ms: u64,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let value = versioned_value(1, &bytes);
        let created = self
            .script_int(
                &mut conn,
                "create league",
                &self.tournament_scripts.create,
                &self.keys.league(id),
                &[value.as_slice()],
                true,
            )
            .await?;
        if created != 1 {
            return Err(StoreError::Exists);
        }
        self.bounded(
            "list league",
            redis::cmd("ZADD")
                .arg(self.keys.leagues_listed())
                .arg(created_ms)
                .arg(id)
                .query_async::<i64>(&mut conn),
        )
        .await
        .map(drop)
    }

    async fn load_league(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let mut conn = self.conns.get()?;
        let value: Option<Vec<u8>> = self
            .bounded(
                "load league",
                redis::cmd("GET")
                    .arg(self.keys.league(id))
                    .query_async(&mut conn),
            )
            .await?;
        value
            .map(|value| parse_versioned(&value).ok_or_else(|| corrupt("league value")))
            .transpose()
    }

    async fn save_league(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let key = self.keys.league(id);
        let save = &self.tournament_scripts.save;
        self.save_versioned("save league", save, &key, expected, &bytes)
            .await
    }

    async fn leagues(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.get()?;
        self.bounded(
            "leagues",
            redis::cmd("ZREVRANGE")
                .arg(self.keys.leagues_listed())
                .arg(offset)
                .arg(offset + limit - 1)
                .query_async(&mut conn),
        )
        .await
    }

    async fn index_league_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let due = due_ms.map(|due| due.to_string()).unwrap_or_default();
        self.script_int(
            &mut conn,
            "league due",
            &self.tournament_scripts.due,
            &self.keys.leagues_due(),
            &[id.as_bytes(), due.as_bytes()],
            false,
        )
        .await
        .map(drop)
    }

    async fn leagues_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(&self.keys.leagues_due(), now_ms, limit, "leagues due")
            .await
    }

    async fn claim_creator_league(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        let key = self.keys.creator_leagues(creator);
        self.claim_in("claim creator league", &key, id, at_ms, max)
            .await
    }

    async fn release_creator_league(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        let key = self.keys.creator_leagues(creator);
        self.release_in("release creator league", &key, id).await
    }

    async fn claim_league_entry(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        let key = self.keys.league_entries(player);
        self.claim_in("claim league entry", &key, id, at_ms, max)
            .await
    }

    async fn release_league_entry(&self, player: &str, id: &str) -> Result<(), StoreError> {
        let key = self.keys.league_entries(player);
        self.release_in("release league entry", &key, id).await
    }

    async fn league_entries(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let key = self.keys.league_entries(player);
        let held = self.claims_in("league entries", &key).await?;
        Ok(held.into_iter().map(|(id, _)| id).collect())
    }

    async fn publish_league(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        self.publish_news("league news", &league_channel(id), event)
            .await
    }

    async fn subscribe_league(&self, id: &str) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(&league_channel(id)).await
    }
}
