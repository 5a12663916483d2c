//! Seeks on Redis. Every seek key is in one slot (`{seeks}`), so one script commits a
//! pairing: it takes the seeks [`pick`] chose from the pool out of it and marks them
//! matched, only if each is still waiting, and no other process can take them too. Each seek is a hash (`{seeks}:seek:<id>`: player, pool,
//! created, expires, fallback, due, state, game, the service's blob), kept [`SEEK_KEPT`]; a
//! pool is a sorted set of its waiting seeks by creation (`{seeks}:pool:<pool>`), the
//! pools with waiting seeks a set (`{seeks}:pools`), a player's waiting seeks a set
//! (`{seeks}:player:<id>`), the waiting seeks by due time a sorted set (`{seeks}:due`),
//! the pools due for pairing a sorted set (`{seeks}:pools-due`, by when), and the games
//! matched but not yet said created a sorted set (`{seeks}:starting`) with, per game, the
//! list of its seeks (`{seeks}:game:<id>`).
//!
//! One slot holds every seek: matchmaking is a few writes a game, far below one Redis
//! node's ceiling, and a pool split over slots could not be paired in one step.

use std::collections::HashMap;

use super::RedisStore;
use super::connection::corrupt;
use super::keys::Keys;
use super::players::millis;
use super::scripts::Lua;
use crate::StoreError;
use crate::seeks::{Added, Gap, SEEK_KEPT, SeekEntry, SeekState, SeekStore, Settled, pick};

/// How many times a pairing reads its pool again after another process took a seek it
/// chose.
const PAIR_TRIES: usize = 8;

/// KEYS: seek, pool, pools, player's set, due, pools due. ARGV: id, player, pool, created, expires,
/// fallback ('' none), blob, max open, keep ms, due, now, seek key prefix, rating.
/// Returns 1 stored, 0 at the player's cap, -1 when the id exists, or the id of the
/// player's waiting seek in the same pool.
const ADD_LUA: &str = r"
local open = 0
for _, sid in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  local f = redis.call('HMGET', ARGV[12] .. sid, 'state', 'expires', 'pool')
  if f[1] == 'waiting' then
    if tonumber(f[2]) > tonumber(ARGV[11]) then
      if f[3] == ARGV[3] then return sid end
      open = open + 1
    end
  else
    redis.call('SREM', KEYS[4], sid)
  end
end
if open >= tonumber(ARGV[8]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('HSET', KEYS[1], 'player', ARGV[2], 'pool', ARGV[3], 'created', ARGV[4],
  'expires', ARGV[5], 'fallback', ARGV[6], 'state', 'waiting', 'game', '', 'blob', ARGV[7],
  'rating', ARGV[13], 'due', ARGV[10])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[10], ARGV[1])
redis.call('ZADD', KEYS[6], ARGV[11], ARGV[3])
return 1
";

/// Takes waiting seek `sid` (hash at `key`) out of its pool and indexes; sets `state`.
/// ARGV-independent helper text shared by the scripts below: `close(key, sid, state, game)`
/// with the key prefixes in `P` (seek, pool, player) and the due set's key in `DUE`.
const CLOSE_FN: &str = r"
local function close(key, sid, state, game)
  local f = redis.call('HMGET', key, 'pool', 'player')
  redis.call('HSET', key, 'state', state, 'game', game)
  local pool = P_POOL .. f[1]
  redis.call('ZREM', pool, sid)
  if redis.call('ZCARD', pool) == 0 then redis.call('SREM', POOLS, f[1]) end
  redis.call('SREM', P_PLAYER .. f[2], sid)
  redis.call('ZREM', DUE, sid)
end
";

/// KEYS: pool, pools, pools due. ARGV: now, seek key prefix, pool name, seats, retry ms.
/// The pool's waiting, unexpired seeks, oldest first, as flat `id, player, rating,
/// created` quadruples; seeks no longer waiting are taken out of the pool on the way (and
/// an empty pool out of the pools). It chooses nothing: [`pick`] does, in Rust, for both
/// stores. The pool stays due, at the retry time, only while it holds enough seeks for a
/// game: a pairing ends with a read that finds nothing to match, so the last read sets it.
const CANDIDATES_LUA: &str = r"
local now, P_SEEK = tonumber(ARGV[1]), ARGV[2]
local out = {}
for _, sid in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local f = redis.call('HMGET', P_SEEK .. sid, 'state', 'player', 'expires', 'rating', 'created')
  if f[1] ~= 'waiting' then
    redis.call('ZREM', KEYS[1], sid)
  elseif tonumber(f[3]) > now then
    out[#out + 1] = sid
    out[#out + 1] = f[2]
    out[#out + 1] = f[4]
    out[#out + 1] = f[5]
  end
end
local left = redis.call('ZCARD', KEYS[1])
if left == 0 then redis.call('SREM', KEYS[2], ARGV[3]) end
if left >= tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
else
  redis.call('ZREM', KEYS[3], ARGV[3])
end
return out
";

/// KEYS: starting, the game's list. ARGV: game, now, recover ms, keep ms, then the
/// prefixes (seek, pool, player), the pools set and the due set, then the seeks [`pick`]
/// chose. Matches them to the game only if every one is still waiting and unexpired:
/// returns 1, or 0 and changes nothing (another process took one meanwhile).
const COMMIT_LUA: &str = r"
local P_SEEK, P_POOL, P_PLAYER, POOLS, DUE = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
$CLOSE
local now = tonumber(ARGV[2])
local picked = {}
for i = 10, #ARGV do
  local f = redis.call('HMGET', P_SEEK .. ARGV[i], 'state', 'expires')
  if f[1] ~= 'waiting' or tonumber(f[2]) <= now then return 0 end
  picked[#picked + 1] = ARGV[i]
end
for _, sid in ipairs(picked) do
  close(P_SEEK .. sid, sid, 'matched', ARGV[1])
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('RPUSH', KEYS[2], unpack(picked))
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

/// KEYS: seek, starting, the game's list. ARGV: id, now, game, recover ms, keep ms, then
/// the prefixes (seek, pool, player), the pools set and the due set.
/// Returns 0 nothing, 1 expired, 2 fell back.
const SETTLE_LUA: &str = r"
local P_SEEK, P_POOL, P_PLAYER, POOLS, DUE = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
$CLOSE
local f = redis.call('HMGET', KEYS[1], 'state', 'expires', 'fallback')
if f[1] ~= 'waiting' then
  redis.call('ZREM', DUE, ARGV[1])
  return 0
end
local now = tonumber(ARGV[2])
if tonumber(f[2]) <= now then
  close(KEYS[1], ARGV[1], 'expired', '')
  return 1
end
if f[3] ~= '' and tonumber(f[3]) <= now then
  close(KEYS[1], ARGV[1], 'matched', ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
  return 2
end
return 0
";

/// KEYS: seek. ARGV: id, then the prefixes (seek, pool, player), the pools set and the
/// due set. Cancels a waiting seek.
const CANCEL_LUA: &str = r"
local P_SEEK, P_POOL, P_PLAYER, POOLS, DUE = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
$CLOSE
if redis.call('HGET', KEYS[1], 'state') == 'waiting' then
  close(KEYS[1], ARGV[1], 'canceled', '')
end
return 1
";

/// KEYS: starting, the game's list. ARGV: game.
const STARTED_LUA: &str = r"
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
";

/// KEYS: starting, the game's list. ARGV: game, refused seek, now, the [`Keys::seek_tail`]
/// and the pools due. Undoes a match ([`SeekStore::unmatch`]); returns the seeks back, due
/// again at the time [`SeekEntry::due_ms`] gave when they were added (a seek stored before
/// its hash kept `due` comes back due at its expiry).
const UNMATCH_LUA: &str = r"
local P_SEEK, P_POOL, P_PLAYER, POOLS, DUE, POOLS_DUE = ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local now, back = tonumber(ARGV[3]), {}
for _, sid in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local key = P_SEEK .. sid
  local f = redis.call('HMGET', key, 'state', 'game', 'expires', 'pool', 'player', 'created', 'due')
  if f[1] == 'matched' and f[2] == ARGV[1] then
    if sid == ARGV[2] then
      redis.call('HSET', key, 'state', 'canceled', 'game', '')
    elseif tonumber(f[3]) <= now then
      redis.call('HSET', key, 'state', 'expired', 'game', '')
    else
      redis.call('HSET', key, 'state', 'waiting', 'game', '')
      redis.call('ZADD', P_POOL .. f[4], f[6], sid)
      redis.call('SADD', POOLS, f[4])
      redis.call('SADD', P_PLAYER .. f[5], sid)
      redis.call('ZADD', DUE, tonumber(f[7]) or tonumber(f[3]), sid)
      redis.call('ZADD', POOLS_DUE, now, f[4])
      back[#back + 1] = sid
    end
  end
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return back
";

pub(super) struct SeekScripts {
    add: Lua,
    candidates: Lua,
    commit: Lua,
    settle: Lua,
    cancel: Lua,
    started: Lua,
    unmatch: Lua,
}

impl SeekScripts {
    pub(super) fn new() -> SeekScripts {
        let lua = |source: &str| Lua::new(source.replace("$CLOSE", CLOSE_FN));
        SeekScripts {
            add: lua(ADD_LUA),
            candidates: lua(CANDIDATES_LUA),
            commit: lua(COMMIT_LUA),
            settle: lua(SETTLE_LUA),
            cancel: lua(CANCEL_LUA),
            started: lua(STARTED_LUA),
            unmatch: lua(UNMATCH_LUA),
        }
    }
}

impl Keys {
    fn seek_prefix(&self) -> String {
        format!("{}{{seeks}}:seek:", self.prefix)
    }
    fn pool_prefix(&self) -> String {
        format!("{}{{seeks}}:pool:", self.prefix)
    }
    fn seeker_prefix(&self) -> String {
        format!("{}{{seeks}}:player:", self.prefix)
    }
    fn pools(&self) -> String {
        format!("{}{{seeks}}:pools", self.prefix)
    }
    fn pools_due(&self) -> String {
        format!("{}{{seeks}}:pools-due", self.prefix)
    }
    fn seeks_due(&self) -> String {
        format!("{}{{seeks}}:due", self.prefix)
    }
    fn starting(&self) -> String {
        format!("{}{{seeks}}:starting", self.prefix)
    }
    fn game_seeks(&self, game: &str) -> String {
        format!("{}{{seeks}}:game:{game}", self.prefix)
    }
    /// The prefixes and sets every closing script needs, in its ARGV order.
    fn seek_tail(&self) -> [String; 5] {
        [
            self.seek_prefix(),
            self.pool_prefix(),
            self.seeker_prefix(),
            self.pools(),
            self.seeks_due(),
        ]
    }
}

fn text(n: u64) -> String {
    n.to_string()
}

impl RedisStore {
    /// One seek script; its reply as Redis gave it.
    async fn seek_script(
        &self,
        what: &str,
        lua: &Lua,
        keys: &[String],
        args: &[Vec<u8>],
    ) -> Result<redis::Value, StoreError> {
        let mut conn = self.conns.writer()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                what,
                lua,
                |cmd| {
                    cmd.arg(keys.len());
                    for key in keys {
                        cmd.arg(key);
                    }
                    for arg in args {
                        cmd.arg(arg.as_slice());
                    }
                },
                false,
            )
            .await?;
        Ok(reply)
    }
}

fn parse_entry(id: &str, fields: HashMap<String, Vec<u8>>) -> Result<SeekEntry, StoreError> {
    let field = |name: &str| fields.get(name).ok_or_else(|| corrupt("seek"));
    let number = |name: &str| -> Result<u64, StoreError> {
        std::str::from_utf8(field(name)?)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| corrupt("seek"))
    };
    let string = |name: &str| -> Result<String, StoreError> {
        String::from_utf8(field(name)?.clone()).map_err(|_| corrupt("seek"))
    };
    let fallback = string("fallback")?;
    let state = match string("state")?.as_str() {
        "waiting" => SeekState::Waiting,
        "matched" => SeekState::Matched(string("game")?),
        "canceled" => SeekState::Canceled,
        "expired" => SeekState::Expired,
        _ => return Err(corrupt("seek state")),
    };
    Ok(SeekEntry {
        id: id.to_owned(),
        player: string("player")?,
        pool: string("pool")?,
        created_ms: number("created")?,
        expires_ms: number("expires")?,
        rating: string("rating")?
            .parse()
            .map_err(|_| corrupt("seek rating"))?,
        fallback_ms: if fallback.is_empty() {
            None
        } else {
            Some(fallback.parse().map_err(|_| corrupt("seek fallback"))?)
        },
        state,
        bytes: field("blob")?.clone(),
    })
}

impl SeekStore for RedisStore {
    async fn add_seek(
        &self,
        entry: &SeekEntry,
        max_open: usize,
        now_ms: u64,
    ) -> Result<Added, StoreError> {
        let keys = [
            format!("{}{}", self.keys.seek_prefix(), entry.id),
            format!("{}{}", self.keys.pool_prefix(), entry.pool),
            self.keys.pools(),
            format!("{}{}", self.keys.seeker_prefix(), entry.player),
            self.keys.seeks_due(),
            self.keys.pools_due(),
        ];
        let args: Vec<Vec<u8>> = vec![
            entry.id.clone().into_bytes(),
            entry.player.clone().into_bytes(),
            entry.pool.clone().into_bytes(),
            text(entry.created_ms).into_bytes(),
            text(entry.expires_ms).into_bytes(),
            entry.fallback_ms.map(text).unwrap_or_default().into_bytes(),
            entry.bytes.clone(),
            max_open.to_string().into_bytes(),
            text(millis(SEEK_KEPT)).into_bytes(),
            text(entry.due_ms()).into_bytes(),
            text(now_ms).into_bytes(),
            self.keys.seek_prefix().into_bytes(),
            entry.rating.to_string().into_bytes(),
        ];
        let reply = self
            .seek_script("add seek", &self.seek_scripts.add, &keys, &args)
            .await?;
        match reply {
            redis::Value::Int(1) => Ok(Added::Added),
            redis::Value::Int(0) => Ok(Added::TooMany),
            redis::Value::Int(-1) => Err(StoreError::Exists),
            redis::Value::BulkString(id) => String::from_utf8(id)
                .map(Added::Waiting)
                .map_err(|_| corrupt("add seek reply")),
            _ => Err(corrupt("add seek reply")),
        }
    }

    async fn player_seeks(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "player seeks",
            redis::cmd("SMEMBERS")
                .arg(format!("{}{player}", self.keys.seeker_prefix()))
                .query_async(&mut conn),
        )
        .await
    }

    async fn load_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        let mut conn = self.conns.get()?;
        let fields: HashMap<String, Vec<u8>> = self
            .bounded(
                "load seek",
                redis::cmd("HGETALL")
                    .arg(format!("{}{id}", self.keys.seek_prefix()))
                    .query_async(&mut conn),
            )
            .await?;
        if fields.is_empty() {
            return Ok(None);
        }
        parse_entry(id, fields).map(Some)
    }

    async fn cancel_seek(&self, id: &str) -> Result<Option<SeekEntry>, StoreError> {
        let keys = [format!("{}{id}", self.keys.seek_prefix())];
        let mut args = vec![id.as_bytes().to_vec()];
        args.extend(self.keys.seek_tail().map(String::into_bytes));
        self.seek_script("cancel seek", &self.seek_scripts.cancel, &keys, &args)
            .await?;
        self.load_seek(id).await
    }

    async fn pair_seeks(
        &self,
        pool: &str,
        seats: usize,
        game: &str,
        now_ms: u64,
        recover_ms: u64,
        retry_ms: u64,
        by_rating: Option<Gap>,
    ) -> Result<Vec<String>, StoreError> {
        let pool_keys = [
            format!("{}{pool}", self.keys.pool_prefix()),
            self.keys.pools(),
            self.keys.pools_due(),
        ];
        let pool_args = [
            text(now_ms).into_bytes(),
            self.keys.seek_prefix().into_bytes(),
            pool.as_bytes().to_vec(),
            seats.to_string().into_bytes(),
            text(retry_ms).into_bytes(),
        ];
        let commit_keys = [self.keys.starting(), self.keys.game_seeks(game)];
        // Another process may take a chosen seek between the read and the commit: then
        // the pool is read again. Each lost race means another game was paired.
        for _ in 0..PAIR_TRIES {
            let reply = self
                .seek_script(
                    "seek pool",
                    &self.seek_scripts.candidates,
                    &pool_keys,
                    &pool_args,
                )
                .await?;
            let flat: Vec<String> =
                redis::from_redis_value(reply).map_err(|_| corrupt("seek pool reply"))?;
            let waiting = flat
                .chunks_exact(4)
                .map(|c| {
                    let rating = c[2].parse().map_err(|_| corrupt("seek rating"))?;
                    let created = c[3].parse().map_err(|_| corrupt("seek created"))?;
                    Ok((c[0].clone(), c[1].clone(), rating, created))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let picked = pick(&waiting, seats, now_ms, by_rating);
            if picked.is_empty() {
                return Ok(picked);
            }
            let mut args: Vec<Vec<u8>> = vec![
                game.as_bytes().to_vec(),
                text(now_ms).into_bytes(),
                text(recover_ms).into_bytes(),
                text(millis(SEEK_KEPT)).into_bytes(),
            ];
            args.extend(self.keys.seek_tail().map(String::into_bytes));
            args.extend(picked.iter().map(|id| id.clone().into_bytes()));
            let reply = self
                .seek_script("pair seeks", &self.seek_scripts.commit, &commit_keys, &args)
                .await?;
            match reply {
                redis::Value::Int(1) => return Ok(picked),
                redis::Value::Int(0) => continue,
                _ => return Err(corrupt("pair seeks reply")),
            }
        }
        // Outrun every time: the sweep pairs this pool again on its next pass.
        Ok(Vec::new())
    }

    async fn pools_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(&self.keys.pools_due(), now_ms, limit, "pools due")
            .await
    }

    async fn due_seeks(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(&self.keys.seeks_due(), now_ms, limit, "due seeks")
            .await
    }

    async fn settle_seek(
        &self,
        id: &str,
        now_ms: u64,
        game: &str,
        recover_ms: u64,
    ) -> Result<Settled, StoreError> {
        let keys = [
            format!("{}{id}", self.keys.seek_prefix()),
            self.keys.starting(),
            self.keys.game_seeks(game),
        ];
        let mut args: Vec<Vec<u8>> = vec![
            id.as_bytes().to_vec(),
            text(now_ms).into_bytes(),
            game.as_bytes().to_vec(),
            text(recover_ms).into_bytes(),
            text(millis(SEEK_KEPT)).into_bytes(),
        ];
        args.extend(self.keys.seek_tail().map(String::into_bytes));
        match self
            .seek_script("settle seek", &self.seek_scripts.settle, &keys, &args)
            .await?
        {
            redis::Value::Int(0) => Ok(Settled::Nothing),
            redis::Value::Int(1) => Ok(Settled::Expired),
            redis::Value::Int(2) => Ok(Settled::FellBack),
            _ => Err(corrupt("settle seek reply")),
        }
    }

    async fn starting_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        self.due_in(&self.keys.starting(), now_ms, limit, "starting games")
            .await
    }

    async fn seeks_of_game(&self, game: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "seeks of a game",
            redis::cmd("LRANGE")
                .arg(self.keys.game_seeks(game))
                .arg(0)
                .arg(-1)
                .query_async(&mut conn),
        )
        .await
    }

    async fn started(&self, game: &str) -> Result<(), StoreError> {
        let keys = [self.keys.starting(), self.keys.game_seeks(game)];
        let args = [game.as_bytes().to_vec()];
        self.seek_script("game started", &self.seek_scripts.started, &keys, &args)
            .await
            .map(drop)
    }

    async fn unmatch(
        &self,
        game: &str,
        refused: &str,
        now_ms: u64,
    ) -> Result<Vec<String>, StoreError> {
        let keys = [self.keys.starting(), self.keys.game_seeks(game)];
        let mut args: Vec<Vec<u8>> = vec![
            game.as_bytes().to_vec(),
            refused.as_bytes().to_vec(),
            text(now_ms).into_bytes(),
        ];
        args.extend(self.keys.seek_tail().map(String::into_bytes));
        args.push(self.keys.pools_due().into_bytes());
        let reply = self
            .seek_script("unmatch seeks", &self.seek_scripts.unmatch, &keys, &args)
            .await?;
        redis::from_redis_value(reply).map_err(|_| corrupt("unmatch reply"))
    }
}

impl RedisStore {
    /// Members of sorted set `key` scored `now_ms` or less, lowest first, at most `limit`.
    pub(super) async fn due_in(
        &self,
        key: &str,
        now_ms: u64,
        limit: usize,
        what: &str,
    ) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            what,
            redis::cmd("ZRANGE")
                .arg(key)
                .arg("-inf")
                .arg(now_ms)
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .query_async(&mut conn),
        )
        .await
    }
}
