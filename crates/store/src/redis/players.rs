//! Players on Redis. Each player's keys share the hash tag of its id (`player:{id}`, its
//! games `player:{id}:games`), so one script on one slot changes a player; a name is a key
//! of its own (`name:{folded name}`, holding the id), in the name's slot, claimed like
//! `SET NX`. Both are needed: a key names its player by id (one read authenticates), and a
//! profile is found by name.
//!
//! Creating a player is therefore three writes on two slots, in this order, so that a
//! crash between any two leaves nothing wrong behind:
//! 1. the player's value, with a short expiry (`PENDING`): reachable by nobody yet (its id
//!    is in no name and its key was never shown);
//! 2. the name, claimed for the id; a claim whose player is gone (its creator crashed
//!    between 2 and 3, and the value expired) is taken over, so no name is lost for good;
//! 3. the expiry lifted (waited on by the replicas, as a game's create is), or for a
//!    player that expires unless it plays, set to that lifetime (its name's too, in 2);
//!    its first game lifts both ([`ADD_GAME_LUA`], then the name's).
//!
//! A crash after 1 leaves a value that expires; after 2, a name held by a player that
//! will be gone in `PENDING` and then free again.
//!
//! Values are `version` (ten digits) then the service's blob. Nothing here logs a value.

use std::time::Duration;

use redis::Value;

use super::RedisStore;
use super::connection::{Conn, corrupt};
use super::keys::Keys;
use super::scripts::Lua;
use crate::players::{Created, PLAYER_GAMES_KEPT, PlayerAdmission, PlayerStore, player_channel};
use crate::value::{encode_event, version_text};
use crate::{EventStream, SaveOutcome, StoreError, Stored, StoredEvent};

/// How long a player's value lives before its creation has claimed its name.
const PENDING: Duration = Duration::from_secs(60);

/// KEYS: player. ARGV: value, ttl ms. Returns 1 when stored, 0 when the id exists.
pub(super) const CREATE_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// KEYS: name. ARGV: player id, an orphaned holder to take over ('' for none), the
/// name's lifetime in ms ('' for ever). Returns 1 when the name is the id's now, 0 when
/// another player holds it.
const CLAIM_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] and cur ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('SET', KEYS[1], ARGV[1])
else redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) end
return 1
";

/// KEYS: player. ARGV: its lifetime in ms ('' for ever). Replaces the pending expiry: the
/// player is whole.
const KEEP_LUA: &str = r"
if ARGV[1] == '' then return redis.call('PERSIST', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[1])
";

/// KEYS: player. ARGV: expected version (ten digits), new value.
/// Returns {1, new} saved, {0, current} conflict, {-1, 0} missing.
pub(super) const SAVE_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return {-1, 0} end
local v = string.sub(cur, 1, 10)
if v ~= ARGV[1] then return {0, tonumber(v)} end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return {1, tonumber(string.sub(ARGV[2], 1, 10))}
";

/// KEYS: the player's games, the player. ARGV: created ms, game id, how many to keep.
/// The player has played: its expiry, if any, is lifted. Returns 1 when it was lifted now
/// (then its name's is to be lifted too), else 0.
const ADD_GAME_LUA: &str = r"
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[3]))
return redis.call('PERSIST', KEYS[2])
";

/// KEYS: the player's games. ARGV: first rank, last rank. Returns {count, {ids}}.
const GAMES_LUA: &str = r"
return {redis.call('ZCARD', KEYS[1]), redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2])}
";

/// KEYS: an address's count. ARGV: max, window ms. Returns 0 when counted; at the cap,
/// the ms until the window ends (at least 1).
const ADMIT_LUA: &str = r"
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then
  local left = redis.call('PTTL', KEYS[1])
  if left < 1 then return 1 end
  return left
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
";

/// KEYS: an address's count. Takes one back, never below 0.
const UNADMIT_LUA: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 1
";

pub(super) struct PlayerScripts {
    create: Lua,
    claim: Lua,
    keep: Lua,
    save: Lua,
    add_game: Lua,
    games: Lua,
    admit: Lua,
    unadmit: Lua,
}

impl PlayerScripts {
    pub(super) fn new() -> PlayerScripts {
        let lua = |source: &str| Lua::new(source.to_owned());
        PlayerScripts {
            create: lua(CREATE_LUA),
            claim: lua(CLAIM_LUA),
            keep: lua(KEEP_LUA),
            save: lua(SAVE_LUA),
            add_game: lua(ADD_GAME_LUA),
            games: lua(GAMES_LUA),
            admit: lua(ADMIT_LUA),
            unadmit: lua(UNADMIT_LUA),
        }
    }
}

impl Keys {
    fn player(&self, id: &str) -> String {
        format!("{}player:{{{id}}}", self.prefix)
    }
    fn player_games(&self, id: &str) -> String {
        format!("{}player:{{{id}}}:games", self.prefix)
    }
    fn present(&self, id: &str) -> String {
        format!("{}player:{{{id}}}:present", self.prefix)
    }
    fn name(&self, folded: &str) -> String {
        format!("{}name:{{{folded}}}", self.prefix)
    }
    fn admitted(&self, address: &str) -> String {
        format!("{}players-by:{{{address}}}", self.prefix)
    }
}

pub(super) fn versioned_value(version: u64, bytes: &[u8]) -> Vec<u8> {
    let mut value = version_text(version).into_bytes();
    value.extend_from_slice(bytes);
    value
}

pub(super) fn parse_versioned(value: &[u8]) -> Option<Stored> {
    let digits = version_text(0).len();
    let version = std::str::from_utf8(value.get(..digits)?)
        .ok()?
        .parse()
        .ok()?;
    Some(Stored {
        version,
        bytes: value[digits..].to_vec(),
    })
}

pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    /// One script on `key`'s slot, its reply an integer.
    pub(super) async fn script_int(
        &self,
        conn: &mut Conn,
        what: &str,
        lua: &Lua,
        key: &str,
        args: &[&[u8]],
        replicated: bool,
    ) -> Result<i64, StoreError> {
        let (reply, acked) = self
            .write(
                conn,
                self.deadline(),
                what,
                lua,
                |cmd| {
                    cmd.arg(1).arg(key);
                    for arg in args {
                        cmd.arg(*arg);
                    }
                },
                replicated,
            )
            .await?;
        if replicated {
            self.confirmed(what, acked)?;
        }
        match reply {
            Value::Int(n) => Ok(n),
            _ => Err(corrupt(what)),
        }
    }

    /// Compare-and-set of a versioned value (a player's, a challenge's) by [`SAVE_LUA`],
    /// waited on by the replicas.
    pub(super) async fn save_versioned(
        &self,
        what: &str,
        lua: &Lua,
        key: &str,
        expected: u64,
        bytes: &[u8],
    ) -> Result<SaveOutcome, StoreError> {
        let mut conn = self.conns.writer()?;
        let value = versioned_value(expected + 1, bytes);
        let expected_text = version_text(expected);
        let (reply, acked) = self
            .write(
                &mut conn,
                self.deadline(),
                what,
                lua,
                |cmd| {
                    cmd.arg(1).arg(key).arg(&expected_text).arg(&value);
                },
                true,
            )
            .await?;
        let reply: Vec<i64> = redis::from_redis_value(reply).map_err(|_| corrupt(what))?;
        let version = |n: i64| u64::try_from(n).map_err(|_| corrupt(what));
        match reply.as_slice() {
            [1, saved] => {
                self.confirmed(what, acked)?;
                Ok(SaveOutcome::Saved {
                    version: version(*saved)?,
                })
            }
            [0, current] => Ok(SaveOutcome::Conflict {
                current: version(*current)?,
            }),
            [-1, _] => Ok(SaveOutcome::Missing),
            _ => Err(corrupt(what)),
        }
    }

    /// Claims `name` for `id` (for `ttl` ms, '' for ever), taking it over from a holder
    /// whose player is gone.
    async fn claim_name(
        &self,
        conn: &mut Conn,
        name: &str,
        id: &str,
        ttl: &str,
    ) -> Result<bool, StoreError> {
        let key = self.keys.name(name);
        let claim = &self.player_scripts.claim;
        let (id, ttl) = (id.as_bytes(), ttl.as_bytes());
        if self
            .script_int(conn, "claim", claim, &key, &[id, &b""[..], ttl], true)
            .await?
            == 1
        {
            return Ok(true);
        }
        let Some(holder) = self.player_named(name).await? else {
            // Freed in between (its unplayed player expired); try once more.
            return Ok(self
                .script_int(conn, "claim", claim, &key, &[id, &b""[..], ttl], true)
                .await?
                == 1);
        };
        if self.load_player(&holder).await?.is_some() {
            return Ok(false);
        }
        let orphan = holder.as_bytes();
        Ok(self
            .script_int(conn, "claim", claim, &key, &[id, orphan, ttl], true)
            .await?
            == 1)
    }
}

impl PlayerStore for RedisStore {
    async fn mark_present(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.bounded(
            "mark present",
            redis::cmd("SET")
                .arg(self.keys.present(id))
                .arg(1)
                .arg("PX")
                .arg(ttl_ms)
                .query_async::<()>(&mut conn),
        )
        .await
    }

    async fn is_present(&self, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.conns.get()?;
        let present: i64 = self
            .bounded(
                "is present",
                redis::cmd("EXISTS")
                    .arg(self.keys.present(id))
                    .query_async(&mut conn),
            )
            .await?;
        Ok(present == 1)
    }

    async fn create_player(
        &self,
        id: &str,
        name: &str,
        bytes: Vec<u8>,
        unplayed: Option<Duration>,
    ) -> Result<Created, StoreError> {
        let mut conn = self.conns.writer()?;
        let player = self.keys.player(id);
        let ttl = unplayed.map_or_else(String::new, |ttl| millis(ttl).to_string());
        let value = versioned_value(1, &bytes);
        let pending = millis(PENDING).to_string();
        let scripts = &self.player_scripts;
        let created = self
            .script_int(
                &mut conn,
                "create player",
                &scripts.create,
                &player,
                &[value.as_slice(), pending.as_bytes()],
                false,
            )
            .await?;
        if created != 1 {
            return Err(StoreError::Exists);
        }
        if !self.claim_name(&mut conn, name, id, &ttl).await? {
            // Would expire anyway; deleted so a refused request leaves nothing.
            let deleted = self
                .bounded(
                    "create player",
                    redis::cmd("DEL").arg(&player).exec_async(&mut conn),
                )
                .await;
            if let Err(e) = deleted {
                tracing::warn!(error = %e, "could not delete a player refused for its name");
            }
            return Ok(Created::NameTaken);
        }
        self.script_int(
            &mut conn,
            "create player",
            &scripts.keep,
            &player,
            &[ttl.as_bytes()],
            true,
        )
        .await?;
        Ok(Created::Created)
    }

    async fn load_player(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        let mut conn = self.conns.get()?;
        let value: Option<Vec<u8>> = self
            .bounded(
                "load player",
                redis::cmd("GET")
                    .arg(self.keys.player(id))
                    .query_async(&mut conn),
            )
            .await?;
        value
            .map(|value| parse_versioned(&value).ok_or_else(|| corrupt("player value")))
            .transpose()
    }

    async fn player_named(&self, name: &str) -> Result<Option<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "player by name",
            redis::cmd("GET")
                .arg(self.keys.name(name))
                .query_async(&mut conn),
        )
        .await
    }

    async fn save_player(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let key = self.keys.player(id);
        self.save_versioned(
            "save player",
            &self.player_scripts.save,
            &key,
            expected,
            &bytes,
        )
        .await
    }

    async fn add_player_game(
        &self,
        id: &str,
        name: &str,
        game: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let created = created_ms.to_string();
        let keep = PLAYER_GAMES_KEPT.to_string();
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "add player game",
                &self.player_scripts.add_game,
                |cmd| {
                    cmd.arg(2)
                        .arg(self.keys.player_games(id))
                        .arg(self.keys.player(id))
                        .arg(&created)
                        .arg(game)
                        .arg(&keep);
                },
                false,
            )
            .await?;
        if reply != Value::Int(1) {
            return Ok(());
        }
        // Its first game: its name lasts for ever too (in the name's own slot).
        self.bounded(
            "keep player name",
            redis::cmd("PERSIST")
                .arg(self.keys.name(name))
                .exec_async(&mut conn),
        )
        .await
    }

    async fn player_games(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        // Ranks past the index are empty pages; Redis counts ranks in signed 64 bits.
        let first = offset.min(PLAYER_GAMES_KEPT);
        let last = first
            .saturating_add(limit)
            .min(PLAYER_GAMES_KEPT + 1)
            .saturating_sub(1);
        let mut conn = self.conns.get()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "player games",
                &self.player_scripts.games,
                |cmd| {
                    cmd.arg(1)
                        .arg(self.keys.player_games(id))
                        .arg(first)
                        .arg(last);
                },
                false,
            )
            .await?;
        let (count, ids): (u64, Vec<String>) =
            redis::from_redis_value(reply).map_err(|_| corrupt("player games reply"))?;
        let ids = if limit == 0 || offset > PLAYER_GAMES_KEPT {
            Vec::new()
        } else {
            ids
        };
        Ok((ids, count))
    }

    async fn admit_player(
        &self,
        address: &str,
        max: usize,
        window: Duration,
    ) -> Result<PlayerAdmission, StoreError> {
        let mut conn = self.conns.get()?;
        let (max, window) = (max.to_string(), millis(window).to_string());
        let left_ms = self
            .script_int(
                &mut conn,
                "admit player",
                &self.player_scripts.admit,
                &self.keys.admitted(address),
                &[max.as_bytes(), window.as_bytes()],
                false,
            )
            .await?;
        Ok(match u64::try_from(left_ms) {
            Ok(0) => PlayerAdmission::Admitted,
            Ok(ms) => PlayerAdmission::Refused {
                frees_in: Duration::from_millis(ms),
            },
            Err(_) => return Err(corrupt("admit player reply")),
        })
    }

    async fn publish_player(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        self.publish_news("player news", &player_channel(id), event)
            .await
    }

    async fn subscribe_player(&self, id: &str) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(&player_channel(id)).await
    }

    async fn unadmit_player(&self, address: &str) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.script_int(
            &mut conn,
            "unadmit player",
            &self.player_scripts.unadmit,
            &self.keys.admitted(address),
            &[],
            false,
        )
        .await
        .map(drop)
    }
}

impl RedisStore {
    /// News on a channel of its own (a player's, a tournament's), sharded on a cluster
    /// (`SPUBLISH`) like a game's events: it reaches only the shard of the channel, where
    /// its subscribers listen.
    pub(super) async fn publish_news(
        &self,
        what: &str,
        channel: &str,
        event: StoredEvent,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            what,
            redis::cmd("SPUBLISH")
                .arg(self.keys.channel(channel))
                .arg(encode_event(event.version, &event.payload))
                .exec_async(&mut conn),
        )
        .await
    }
}
