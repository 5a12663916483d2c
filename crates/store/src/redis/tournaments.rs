//! Tournaments on Redis. A tournament is a key of its own (`tournament:{id}`, a versioned
//! value like a player's, with no expiry until it is over: then the time it is kept); the
//! lists by status and the due index are sorted sets of one slot
//! (`{tournaments}:status:<status>` by creation time, `{tournaments}:due` by due time),
//! beside the tournaments over by when they expire (`{tournaments}:ends`), which a read of
//! a list trims from that list, and a listing from every list and the due index; a
//! creator's tournaments that may still run a sorted set by claim time in the player's
//! slot (`player:{id}:tournament-claims`), and those a player joined likewise
//! (`player:{id}:tournament-joins`), and every tournament it entered, by creation time
//! (`player:{id}:tournaments`, the newest kept); news goes out on the tournament's
//! channel as a game's does.

use std::time::Duration;

use super::RedisStore;
use super::connection::corrupt;
use super::keys::Keys;
use super::players::{SAVE_LUA, parse_versioned, versioned_value};
use super::scripts::Lua;
use crate::tournaments::{PLAYER_TOURNAMENTS_KEPT, TournamentStore, tournament_channel};
use crate::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent, now_ms};

/// Expired tournaments one trim takes out of the lists at most.
const TRIM_BATCH: usize = 100;

/// KEYS: the tournament. ARGV: its value. 1 when made, 0 when one was there.
const CREATE_LUA: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 1 end
return 0
";

/// KEYS: a creator's claims, or an entrant's (id by claim time). ARGV: tournament id, claim ms, the most
/// claims ('' for no cap). 1 when claimed (or it was), 0 at the cap.
const CLAIM_LUA: &str = r"
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if ARGV[3] ~= '' and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
";

/// KEYS: the due index. ARGV: tournament id, due ms ('' drops the entry).
const DUE_LUA: &str = r"
if ARGV[2] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
";

/// KEYS: the tournaments over, the due index, then every list by status. ARGV: now ms,
/// batch. Takes the expired out of every list and the index, and out of the ends.
const TRIM_LUA: &str = r"
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, id in ipairs(gone) do
  for i = 1, #KEYS do redis.call('ZREM', KEYS[i], id) end
end
return #gone
";

/// KEYS: a list by status, the tournaments over. ARGV: now ms, batch, first rank, last
/// rank. Takes the expired out of this list, then reads its page, newest first.
const PAGE_LUA: &str = r"
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, id in ipairs(gone) do redis.call('ZREM', KEYS[1], id) end
return redis.call('ZREVRANGE', KEYS[1], ARGV[3], ARGV[4])
";

/// KEYS: a player's tournaments. ARGV: created ms, tournament id, how many to keep.
const ENTERED_LUA: &str = r"
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
return redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[3]))
";

/// KEYS: a player's tournaments. ARGV: first rank, last rank. Returns {count, {ids}}.
const ENTERED_PAGE_LUA: &str = r"
return {redis.call('ZCARD', KEYS[1]), redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2])}
";

/// The scripts of versioned records kept beside the games (tournaments', and the leagues'
/// that share `create`, `save`, `due` and `claim`).
pub(super) struct TournamentScripts {
    pub(super) create: Lua,
    pub(super) save: Lua,
    pub(super) due: Lua,
    pub(super) claim: Lua,
    trim: Lua,
    page: Lua,
    entered: Lua,
    entered_page: Lua,
}

impl TournamentScripts {
    pub(super) fn new() -> TournamentScripts {
        let lua = |source: &str| Lua::new(source.to_owned());
        TournamentScripts {
            create: lua(CREATE_LUA),
            save: lua(SAVE_LUA),
            due: lua(DUE_LUA),
            claim: lua(CLAIM_LUA),
            trim: lua(TRIM_LUA),
            page: lua(PAGE_LUA),
            entered: lua(ENTERED_LUA),
            entered_page: lua(ENTERED_PAGE_LUA),
        }
    }
}

impl Keys {
    fn tournament(&self, id: &str) -> String {
        format!("{}tournament:{{{id}}}", self.prefix)
    }
    fn tournaments_listed(&self, status: &str) -> String {
        format!("{}{{tournaments}}:status:{status}", self.prefix)
    }
    fn tournaments_due(&self) -> String {
        format!("{}{{tournaments}}:due", self.prefix)
    }
    fn tournaments_ending(&self) -> String {
        format!("{}{{tournaments}}:ends", self.prefix)
    }
    fn creator_tournaments(&self, creator: &str) -> String {
        format!("{}player:{{{creator}}}:tournament-claims", self.prefix)
    }
    fn joined_tournaments(&self, player: &str) -> String {
        format!("{}player:{{{player}}}:tournament-joins", self.prefix)
    }
    fn entered_tournaments(&self, player: &str) -> String {
        format!("{}player:{{{player}}}:tournaments", self.prefix)
    }
}

impl RedisStore {
    /// Counts `id` in the claims at `key` (a sorted set by claim time) unless `max` are
    /// there, in one script.
    pub(super) async fn claim_in(
        &self,
        what: &'static str,
        key: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conns.writer()?;
        let (at, max) = (at_ms.to_string(), max.map(|m| m.to_string()));
        let max = max.unwrap_or_default();
        let args = [id.as_bytes(), at.as_bytes(), max.as_bytes()];
        let claimed = self
            .script_int(
                &mut conn,
                what,
                &self.tournament_scripts.claim,
                key,
                &args,
                true,
            )
            .await?;
        Ok(claimed == 1)
    }

    pub(super) async fn release_in(
        &self,
        what: &'static str,
        key: &str,
        id: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let mut zrem = redis::cmd("ZREM");
        zrem.arg(key).arg(id);
        self.bounded(what, zrem.query_async::<i64>(&mut conn))
            .await
            .map(drop)
    }

    pub(super) async fn claims_in(
        &self,
        what: &'static str,
        key: &str,
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let mut conn = self.conns.get()?;
        let mut all = redis::cmd("ZRANGE");
        all.arg(key).arg(0).arg(-1).arg("WITHSCORES");
        self.bounded(what, all.query_async(&mut conn)).await
    }
}

impl TournamentStore for RedisStore {
    async fn create_tournament(&self, id: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let value = versioned_value(1, &bytes);
        let created = self
            .script_int(
                &mut conn,
                "create tournament",
                &self.tournament_scripts.create,
                &self.keys.tournament(id),
                &[value.as_slice()],
                true,
            )
            .await?;
        match created {
            1 => Ok(()),
            _ => Err(StoreError::Exists),
        }
    }

    async fn load_tournament(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let mut conn = self.conns.get()?;
        let value: Option<Vec<u8>> = self
            .bounded(
                "load tournament",
                redis::cmd("GET")
                    .arg(self.keys.tournament(id))
                    .query_async(&mut conn),
            )
            .await?;
        value
            .map(|value| parse_versioned(&value).ok_or_else(|| corrupt("tournament value")))
            .transpose()
    }

    async fn save_tournament(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let key = self.keys.tournament(id);
        let save = &self.tournament_scripts.save;
        self.save_versioned("save tournament", save, &key, expected, &bytes)
            .await
    }

    async fn keep_tournament_for(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let kept = self
            .bounded(
                "keep tournament",
                redis::cmd("PEXPIRE")
                    .arg(self.keys.tournament(id))
                    .arg(ttl_ms)
                    .query_async::<i64>(&mut conn),
            )
            .await?;
        if kept == 1 {
            self.bounded(
                "keep tournament",
                redis::cmd("ZADD")
                    .arg(self.keys.tournaments_ending())
                    .arg(now_ms().saturating_add(ttl_ms))
                    .arg(id)
                    .query_async::<i64>(&mut conn),
            )
            .await?;
        }
        Ok(())
    }

    async fn list_tournament(
        &self,
        id: &str,
        created_ms: u64,
        status: &str,
        statuses: &[&str],
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        // What expired leaves every list and the due index.
        let mut keys = vec![self.keys.tournaments_ending(), self.keys.tournaments_due()];
        keys.extend(statuses.iter().map(|s| self.keys.tournaments_listed(s)));
        let (now, batch) = (now_ms(), TRIM_BATCH);
        let trim = &self.tournament_scripts.trim;
        self.write(
            &mut conn,
            self.deadline(),
            "trim tournaments",
            trim,
            |cmd| {
                cmd.arg(keys.len()).arg(&keys[..]).arg(now).arg(batch);
            },
            false,
        )
        .await?;
        self.bounded(
            "list tournament",
            redis::cmd("ZADD")
                .arg(self.keys.tournaments_listed(status))
                .arg(created_ms)
                .arg(id)
                .query_async::<i64>(&mut conn),
        )
        .await?;
        for other in statuses.iter().filter(|s| **s != status) {
            self.bounded(
                "unlist tournament",
                redis::cmd("ZREM")
                    .arg(self.keys.tournaments_listed(other))
                    .arg(id)
                    .query_async::<i64>(&mut conn),
            )
            .await?;
        }
        Ok(())
    }

    async fn tournaments(
        &self,
        status: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.writer()?;
        let keys = [
            self.keys.tournaments_listed(status),
            self.keys.tournaments_ending(),
        ];
        let (now, batch) = (now_ms(), TRIM_BATCH);
        let page = &self.tournament_scripts.page;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "tournaments",
                page,
                |cmd| {
                    cmd.arg(2)
                        .arg(&keys[..])
                        .arg(now)
                        .arg(batch)
                        .arg(offset)
                        .arg(offset + limit - 1);
                },
                false,
            )
            .await?;
        redis::from_redis_value(reply).map_err(|_| corrupt("list of tournaments"))
    }

    async fn index_tournament_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let due = due_ms.map(|due| due.to_string()).unwrap_or_default();
        self.script_int(
            &mut conn,
            "tournament due",
            &self.tournament_scripts.due,
            &self.keys.tournaments_due(),
            &[id.as_bytes(), due.as_bytes()],
            false,
        )
        .await
        .map(drop)
    }

    async fn tournaments_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(
            &self.keys.tournaments_due(),
            now_ms,
            limit,
            "tournaments due",
        )
        .await
    }

    async fn claim_creator_tournament(
        &self,
        creator: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        let key = self.keys.creator_tournaments(creator);
        self.claim_in("claim creator tournament", &key, id, at_ms, max)
            .await
    }

    async fn release_creator_tournament(&self, creator: &str, id: &str) -> Result<(), StoreError> {
        let key = self.keys.creator_tournaments(creator);
        self.release_in("release creator tournament", &key, id)
            .await
    }

    async fn creator_tournaments(&self, creator: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let key = self.keys.creator_tournaments(creator);
        self.claims_in("creator tournaments", &key).await
    }

    async fn claim_joined_tournament(
        &self,
        player: &str,
        id: &str,
        at_ms: u64,
        max: Option<usize>,
    ) -> Result<bool, StoreError> {
        let key = self.keys.joined_tournaments(player);
        self.claim_in("claim joined tournament", &key, id, at_ms, max)
            .await
    }

    async fn release_joined_tournament(&self, player: &str, id: &str) -> Result<(), StoreError> {
        let key = self.keys.joined_tournaments(player);
        self.release_in("release joined tournament", &key, id).await
    }

    async fn joined_tournaments(&self, player: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let key = self.keys.joined_tournaments(player);
        self.claims_in("joined tournaments", &key).await
    }

    async fn index_player_tournament(
        &self,
        player: &str,
        id: &str,
        created_ms: u64,
        entered: bool,
    ) -> Result<(), StoreError> {
        let key = self.keys.entered_tournaments(player);
        if !entered {
            return self.release_in("unindex player tournament", &key, id).await;
        }
        let mut conn = self.conns.writer()?;
        let (created, keep) = (created_ms.to_string(), PLAYER_TOURNAMENTS_KEPT.to_string());
        let args = [created.as_bytes(), id.as_bytes(), keep.as_bytes()];
        let scripts = &self.tournament_scripts;
        self.script_int(
            &mut conn,
            "index player tournament",
            &scripts.entered,
            &key,
            &args,
            false,
        )
        .await
        .map(drop)
    }

    async fn player_tournaments(
        &self,
        player: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        // Ranks past the index are empty pages; Redis counts ranks in signed 64 bits.
        let first = offset.min(PLAYER_TOURNAMENTS_KEPT);
        let last = first
            .saturating_add(limit)
            .min(PLAYER_TOURNAMENTS_KEPT + 1)
            .saturating_sub(1);
        let key = self.keys.entered_tournaments(player);
        let mut conn = self.conns.get()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "player tournaments",
                &self.tournament_scripts.entered_page,
                |cmd| {
                    cmd.arg(1).arg(&key).arg(first).arg(last);
                },
                false,
            )
            .await?;
        let (count, ids): (u64, Vec<String>) =
            redis::from_redis_value(reply).map_err(|_| corrupt("player tournaments reply"))?;
        let ids = match limit == 0 || offset > PLAYER_TOURNAMENTS_KEPT {
            true => Vec::new(),
            false => ids,
        };
        Ok((ids, count))
    }

    async fn publish_tournament(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        self.publish_news("tournament news", &tournament_channel(id), event)
            .await
    }

    async fn subscribe_tournament(&self, id: &str) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(&tournament_channel(id)).await
    }
}
