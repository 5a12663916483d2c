//! Challenges on Redis. A challenge is a key of its own (`challenge:{id}`, a versioned
//! value like a player's, kept [`CHALLENGE_KEPT`] after its creation or last save); each player's challenges are a sorted
//! set in the player's slot (`player:{id}:challenges:in` and `:out`, by creation time);
//! the due ones a sorted set of one slot (`{challenges}:due`, by due time), and in that
//! slot too each player's challenges counted open, out and in (`{challenges}:open:out:<id>`,
//! by expiry), so that one script checks every party's cap and counts the challenge.
//!
//! Creating one is several writes on several slots, the challenge first (waited on by the
//! replicas) and the indexes after: an index entry left without its challenge, or missing
//! after a crash, costs a listing a load, never a wrong answer (the service trusts only
//! the challenge, and treats an open one past its expiry as expired).

use std::time::Duration;

use super::RedisStore;
use super::connection::corrupt;
use super::keys::Keys;
use super::players::{CREATE_LUA, SAVE_LUA, millis, parse_versioned, versioned_value};
use super::scripts::Lua;
use crate::challenges::{CHALLENGE_KEPT, CapReached, ChallengeStore, Direction, OpenCaps, Parties};
use crate::{MADE_WITHIN, SaveOutcome, StoreError, Stored, now_ms};

/// Entries a player's index keeps at most, newest first.
const INDEX_KEPT: usize = 1000;

/// KEYS: a player's index. ARGV: created ms, challenge id, how many to keep, ttl ms.
const INDEX_LUA: &str = r"
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
";

/// KEYS: a player's index. ARGV: oldest created ms kept, how many to answer.
/// Drops the older entries; returns the ids newest first.
const LIST_LUA: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
";

/// KEYS: a player's matches. ARGV: match id, ttl ms.
const MATCH_LUA: &str = r"
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// KEYS: the due index. ARGV: challenge id, due ms ('' drops the entry).
const DUE_LUA: &str = r"
if ARGV[2] == '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
";

/// KEYS: the challenger's open set (out), then each opponent's (in). ARGV: challenge id,
/// expires ms, now ms, the out cap, the in cap. Answers 0 when counted, else the
/// (1-based) place in KEYS of a full set, counting nothing.
const OPEN_LUA: &str = r"
local now = tonumber(ARGV[3])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local cap = tonumber(i == 1 and ARGV[4] or ARGV[5])
  if not redis.call('ZSCORE', key, ARGV[1]) and redis.call('ZCARD', key) >= cap then
    return i
  end
end
local ttl = math.max(tonumber(ARGV[2]) - now, 1000)
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[1])
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
return 0
";

/// KEYS: the open sets of a challenge's parties. ARGV: challenge id.
const CLOSE_LUA: &str = r"
for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[1]) end
return 1
";

/// KEYS: a player's open set. ARGV: now ms, offset, how many. Ids newest first.
const OPEN_LIST_LUA: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local from = tonumber(ARGV[2])
return redis.call('ZREVRANGE', KEYS[1], from, from + tonumber(ARGV[3]) - 1)
";

pub(super) struct ChallengeScripts {
    create: Lua,
    save: Lua,
    index: Lua,
    list: Lua,
    due: Lua,
    open: Lua,
    close: Lua,
    open_list: Lua,
    matched: Lua,
}

impl ChallengeScripts {
    pub(super) fn new() -> ChallengeScripts {
        let lua = |source: &str| Lua::new(source.to_owned());
        // A player's save keeps its key's ttl; a challenge's renews it, so a match saved
        // while it runs is kept however long it runs.
        let save = SAVE_LUA.replace("'KEEPTTL'", &format!("'PX', {}", millis(CHALLENGE_KEPT)));
        assert_ne!(save, SAVE_LUA, "the save script sets its ttl as KEEPTTL");
        ChallengeScripts {
            create: lua(CREATE_LUA),
            save: lua(&save),
            index: lua(INDEX_LUA),
            list: lua(LIST_LUA),
            due: lua(DUE_LUA),
            open: lua(OPEN_LUA),
            close: lua(CLOSE_LUA),
            open_list: lua(OPEN_LIST_LUA),
            matched: lua(MATCH_LUA),
        }
    }
}

impl Keys {
    fn challenge(&self, id: &str) -> String {
        format!("{}challenge:{{{id}}}", self.prefix)
    }
    fn player_challenges(&self, player: &str, direction: Direction) -> String {
        format!(
            "{}player:{{{player}}}:challenges:{}",
            self.prefix,
            direction.as_str()
        )
    }
    fn open_challenges(&self, player: &str, direction: Direction) -> String {
        format!(
            "{}{{challenges}}:open:{}:{player}",
            self.prefix,
            direction.as_str()
        )
    }
    fn player_matches(&self, player: &str) -> String {
        format!("{}player:{{{player}}}:matches", self.prefix)
    }
    fn challenges_due(&self) -> String {
        format!("{}{{challenges}}:due", self.prefix)
    }
}

impl ChallengeStore for RedisStore {
    async fn create_challenge(
        &self,
        id: &str,
        bytes: Vec<u8>,
        created_ms: u64,
        parties: Parties<'_>,
        due_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        // Due before it exists: a process that stops right after the create leaves it
        // due all the same (the index lives in another slot, so it cannot join the
        // create's script).
        let ahead = now_ms() + millis(MADE_WITHIN);
        let early = due_ms.map(|due| due.max(ahead));
        if early.is_some() {
            self.index_challenge_due(id, early).await?;
        }
        let mut conn = self.conns.writer()?;
        let value = versioned_value(1, &bytes);
        let kept = millis(CHALLENGE_KEPT).to_string();
        let scripts = &self.challenge_scripts;
        let created = self
            .script_int(
                &mut conn,
                "create challenge",
                &scripts.create,
                &self.keys.challenge(id),
                &[value.as_slice(), kept.as_bytes()],
                true,
            )
            .await?;
        if created != 1 {
            return Err(StoreError::Exists);
        }
        let (created, keep) = (created_ms.to_string(), INDEX_KEPT.to_string());
        let indexes = std::iter::once((parties.challenger, Direction::Out)).chain(
            parties
                .opponents
                .iter()
                .map(|player| (player.as_str(), Direction::In)),
        );
        for (player, direction) in indexes {
            self.script_int(
                &mut conn,
                "index challenge",
                &scripts.index,
                &self.keys.player_challenges(player, direction),
                &[
                    created.as_bytes(),
                    id.as_bytes(),
                    keep.as_bytes(),
                    kept.as_bytes(),
                ],
                false,
            )
            .await?;
        }
        if due_ms != early {
            self.index_challenge_due(id, due_ms).await?;
        }
        Ok(())
    }

    async fn load_challenge(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let mut conn = self.conns.get()?;
        let value: Option<Vec<u8>> = self
            .bounded(
                "load challenge",
                redis::cmd("GET")
                    .arg(self.keys.challenge(id))
                    .query_async(&mut conn),
            )
            .await?;
        value
            .map(|value| parse_versioned(&value).ok_or_else(|| corrupt("challenge value")))
            .transpose()
    }

    async fn save_challenge(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let key = self.keys.challenge(id);
        let save = &self.challenge_scripts.save;
        self.save_versioned("save challenge", save, &key, expected, &bytes)
            .await
    }

    async fn player_challenges(
        &self,
        player: &str,
        direction: Direction,
        since_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.writer()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "player challenges",
                &self.challenge_scripts.list,
                |cmd| {
                    cmd.arg(1)
                        .arg(self.keys.player_challenges(player, direction))
                        .arg(since_ms)
                        .arg(limit.min(INDEX_KEPT));
                },
                false,
            )
            .await?;
        redis::from_redis_value(reply).map_err(|_| corrupt("player challenges reply"))
    }

    async fn keep_challenge(&self, id: &str, kept: Duration) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        self.bounded(
            "keep challenge",
            redis::cmd("PEXPIRE")
                .arg(self.keys.challenge(id))
                .arg(millis(kept))
                .query_async::<i64>(&mut conn),
        )
        .await
        .map(drop)
    }

    async fn open_challenge(
        &self,
        id: &str,
        parties: Parties<'_>,
        expires_ms: u64,
        now_ms: u64,
        caps: OpenCaps,
    ) -> Result<Result<(), CapReached>, StoreError> {
        let keys = self.open_keys(&parties);
        let mut conn = self.conns.writer()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "open challenge",
                &self.challenge_scripts.open,
                |cmd| {
                    cmd.arg(keys.len())
                        .arg(&keys)
                        .arg(id)
                        .arg(expires_ms)
                        .arg(now_ms)
                        .arg(caps.out)
                        .arg(caps.into);
                },
                false,
            )
            .await?;
        let full: i64 = redis::from_redis_value(reply).map_err(|_| corrupt("open reply"))?;
        Ok(match full {
            0 => Ok(()),
            1 => Err(CapReached::Challenger),
            n => Err(CapReached::Opponent(n as usize - 2)),
        })
    }

    async fn close_challenge(&self, id: &str, parties: Parties<'_>) -> Result<(), StoreError> {
        let keys = self.open_keys(&parties);
        let mut conn = self.conns.writer()?;
        self.write(
            &mut conn,
            self.deadline(),
            "close challenge",
            &self.challenge_scripts.close,
            |cmd| {
                cmd.arg(keys.len()).arg(&keys).arg(id);
            },
            false,
        )
        .await
        .map(drop)
    }

    async fn open_challenges(
        &self,
        player: &str,
        direction: Direction,
        now_ms: u64,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.writer()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "open challenges",
                &self.challenge_scripts.open_list,
                |cmd| {
                    cmd.arg(1)
                        .arg(self.keys.open_challenges(player, direction))
                        .arg(now_ms)
                        .arg(offset)
                        .arg(limit);
                },
                false,
            )
            .await?;
        redis::from_redis_value(reply).map_err(|_| corrupt("open challenges reply"))
    }

    async fn index_challenge_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let due = due_ms.map(|due| due.to_string()).unwrap_or_default();
        self.script_int(
            &mut conn,
            "challenge due",
            &self.challenge_scripts.due,
            &self.keys.challenges_due(),
            &[id.as_bytes(), due.as_bytes()],
            false,
        )
        .await
        .map(drop)
    }

    async fn challenges_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(&self.keys.challenges_due(), now_ms, limit, "challenges due")
            .await
    }

    async fn index_match(&self, player: &str, id: &str, running: bool) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let key = self.keys.player_matches(player);
        if running {
            let kept = millis(CHALLENGE_KEPT).to_string();
            let scripts = &self.challenge_scripts;
            self.script_int(
                &mut conn,
                "index match",
                &scripts.matched,
                &key,
                &[id.as_bytes(), kept.as_bytes()],
                false,
            )
            .await
            .map(drop)
        } else {
            self.bounded(
                "unindex match",
                redis::cmd("SREM")
                    .arg(key)
                    .arg(id)
                    .query_async::<i64>(&mut conn),
            )
            .await
            .map(drop)
        }
    }

    async fn player_matches(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "player matches",
            redis::cmd("SMEMBERS")
                .arg(self.keys.player_matches(player))
                .query_async(&mut conn),
        )
        .await
    }
}

impl RedisStore {
    /// The open sets a challenge between `parties` is counted in: the challenger's first.
    fn open_keys(&self, parties: &Parties<'_>) -> Vec<String> {
        std::iter::once(
            self.keys
                .open_challenges(parties.challenger, Direction::Out),
        )
        .chain(
            parties
                .opponents
                .iter()
                .map(|p| self.keys.open_challenges(p, Direction::In)),
        )
        .collect()
    }
}
