//! The Lua scripts (every write of a game is one script, atomic on its one slot) and how
//! they run: EVALSHA, EVAL when a node does not know one, WAIT in the same pipeline when
//! replicas must have the write, and the cluster's redirects, which the crate leaves to a
//! pipeline's caller. A game's value is built in Rust alone (`crate::value`); the offsets
//! the scripts compare at are written there once, and filled into the sources here when a
//! store is built.

use std::time::Duration;

use redis::{Cmd, ErrorKind, RedisError, Script, ServerErrorKind, Value};

use super::RedisStore;
use super::connection::{Conn, corrupt, unavailable};
use crate::StoreError;
use crate::value::{HEADER, VERSION_DIGITS};

/// How long a write answered `TRYAGAIN` (its slot is moving, its keys split between two
/// masters) waits before it is sent again.
const TRY_AGAIN_AFTER: Duration = Duration::from_millis(20);

/// KEYS: the deadline index, its versions. ARGV: game id, version saved, deadline in ms
/// ('' for none), '1' to move an entry only sooner. Writes only if no later version of
/// the game was indexed.
const DEADLINE_LUA: &str = r"
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if seen > tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  local now = redis.call('ZSCORE', KEYS[1], ARGV[1])
  if ARGV[4] ~= '1' or not now or tonumber(ARGV[3]) < tonumber(now) then
    redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
";

/// KEYS: game, idem. ARGV: value (version 1, no events, blob), ttl ms.
/// Returns 1 when created, 0 when the game exists. A leftover idempotency hash of an
/// earlier game with the same id (possible only if its keys expired at slightly different
/// moments) is cleared.
const CREATE_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// KEYS: game, idem. ARGV: 'record' and an idempotency key, or 'stored', a version (ten
/// digits) and a blob; ttl ms. Returns 1, having set the game's expiry again (a write,
/// which a WAIT after it waits for), when the game holds that record, or stands at that
/// version with that blob; else 0, writing nothing.
const CONFIRM_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
if ARGV[1] == 'record' then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return 0 end
else
  if string.sub(cur, 1, $VERSION_END) ~= ARGV[2] then return 0 end
  if string.sub(cur, $EVENTS_FROM + tonumber(string.sub(cur, $LEN_FROM, $LEN_TO))) ~= ARGV[3] then return 0 end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
";

/// KEYS: game, idem, the seat's window of keys.
/// ARGV: the header the game's value must start with (the expected version and the
/// length of the events it kept then), the new value, ttl ms, channel, event ('' for
/// none; an encoded event is never empty), has idempotency record ('1'/'0'), its key,
/// its value, the window's size.
/// Returns {1} saved; {-1, 0} missing; else, having written nothing, {0, the game's value
/// as it is, the record stored under the key or false}: the header was not the expected
/// one, or a record exists under the key already (the request was made). The caller tries
/// again on the value at once, with no second trip to load it.
///
/// The value is built in Rust (`crate::value`), events and all: the script compares and
/// sets it, and publishes the event.
const SAVE_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return {-1, 0} end
local made = ARGV[6] == '1' and redis.call('HGET', KEYS[2], ARGV[7])
if made or string.sub(cur, 1, $HEADER) ~= ARGV[1] then return {0, cur, made} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[4], ARGV[5]) end
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[2], ARGV[7], ARGV[8])
  if redis.call('RPUSH', KEYS[3], ARGV[7]) > tonumber(ARGV[9]) then
    redis.call('HDEL', KEYS[2], redis.call('LPOP', KEYS[3]))
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {1}
";

/// KEYS: open, lobby, owners, the owner's games, creators, creators' ages, the creator's
/// games, games in play. ARGV: id, created_ms, lobby value ('' for a game not listed: it
/// is in play from the start), owner ('' for none), the owner's cap, cutoff (ms: older
/// entries are stale), ttl ms, creator ('' for none), the creator's cap, how many stale
/// creators' entries to prune; then the creator's cap of kept games, now (ms), and until
/// when the game counts kept (ms). KEYS[9]: the creator's kept games (id by when each
/// stops counting).
/// Returns 1 when counted (and listed, or put in play), 0 when the owner has its cap of
/// fresh listed entries already, 2 when the creator has its cap of fresh games in play,
/// {3, when its first kept game stops counting} when it has its cap of kept games.
const LOBBY_PUT_LUA: &str = r"
if ARGV[8] ~= '' then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', '(' .. ARGV[6], 'LIMIT', 0, ARGV[10])
  for _, old in ipairs(stale) do
    redis.call('HDEL', KEYS[5], old)
    redis.call('ZREM', KEYS[6], old)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. ARGV[6])
  if redis.call('ZCARD', KEYS[7]) >= tonumber(ARGV[9]) then return 2 end
  redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', ARGV[12])
  if redis.call('ZCARD', KEYS[9]) >= tonumber(ARGV[11]) then
    return {3, redis.call('ZRANGE', KEYS[9], 0, 0, 'WITHSCORES')[2]}
  end
end
if ARGV[3] ~= '' then
  if ARGV[4] ~= '' then
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[6])
    if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[5]) then return 0 end
    redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
    redis.call('PEXPIRE', KEYS[4], ARGV[7])
    redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
  end
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
else
  redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', '(' .. ARGV[6])
  redis.call('ZADD', KEYS[8], ARGV[2], ARGV[1])
end
if ARGV[8] ~= '' then
  redis.call('ZADD', KEYS[7], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[7], ARGV[7])
  redis.call('HSET', KEYS[5], ARGV[1], ARGV[8])
  redis.call('ZADD', KEYS[6], ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[9], ARGV[13], ARGV[1])
  redis.call('PEXPIRE', KEYS[9], ARGV[7])
end
return 1
";

/// KEYS: creators, creators' ages, games in play, the latest finished. ARGV: id, the prefix
/// of a creator's games (in the lobby's slot), the prefix of a creator's kept games, until
/// when the game is kept (ms), ttl ms, now (ms), how many finished to keep. Takes a
/// finished game out of the games in play, into the latest finished; it stays among its
/// creator's kept games until it expires.
const LOBBY_FREE_LUA: &str = r"
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[6], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -1 - tonumber(ARGV[7]))
local who = redis.call('HGET', KEYS[1], ARGV[1])
if who then
  redis.call('ZREM', ARGV[2] .. who, ARGV[1])
  if redis.call('ZADD', ARGV[3] .. who, 'XX', 'CH', ARGV[4], ARGV[1]) == 1 then
    redis.call('PEXPIRE', ARGV[3] .. who, ARGV[5])
  end
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
";

/// KEYS: a game's lease. ARGV: holder, ttl ms. Returns 1 when the holder holds it now
/// (taken or renewed), 0 when another does.
const LEASE_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// KEYS: a game's lease. ARGV: holder. Deletes the lease if the holder holds it.
const RELEASE_LUA: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
";

/// KEYS: lobby. ARGV: id, version (ten digits), lobby value. Replaces a listed game's
/// entry with a later version's; an unlisted game (no entry) stays unlisted.
const LOBBY_UPDATE_LUA: &str = r"
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur or string.sub(cur, 1, $VERSION_END) >= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
";

/// Takes game ARGV[1] out of the lobby (KEYS: open, lobby, owners; ARGV[2]: the prefix of
/// an owner's key, in the lobby's slot).
const LOBBY_DROP: &str = r"
local function drop(id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  local owner = redis.call('HGET', KEYS[3], id)
  if owner then
    redis.call('ZREM', ARGV[2] .. owner, id)
    redis.call('HDEL', KEYS[3], id)
  end
end
";

/// KEYS: open, lobby, owners, games in play. ARGV: id, owner key prefix, now (ms), cutoff
/// (ms: older games in play are stale). A game leaves the lobby when its match starts.
const LOBBY_DROP_LUA: &str = r"
-- (LOBBY_DROP precedes this)
drop(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
return 1
";

/// KEYS: games in play. ARGV: cutoff (ms: games started before it are stale), first rank,
/// last rank. Returns the fresh ids from rank `first` to `last`, latest started first.
const PLAYING_LIST_LUA: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return redis.call('ZREVRANGE', KEYS[1], ARGV[2], ARGV[3])
";

/// KEYS: open, lobby, owners. ARGV: (unused), owner key prefix, cutoff (ms), first rank,
/// last rank, how many stale entries to prune. Returns id, value, id, value...: the
/// fresh entries from rank `first` to `last`, newest first.
const LOBBY_LIST_LUA: &str = r"
-- (LOBBY_DROP precedes this)
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3], 'LIMIT', 0, ARGV[6])
for _, id in ipairs(stale) do drop(id) end
local fresh = redis.call('ZCOUNT', KEYS[1], ARGV[3], '+inf')
local last = math.min(tonumber(ARGV[5]), fresh - 1)
if tonumber(ARGV[4]) > last then return {} end
local ids = redis.call('ZREVRANGE', KEYS[1], ARGV[4], last)
local values = redis.call('HMGET', KEYS[2], unpack(ids))
local out = {}
for i, id in ipairs(ids) do
  if values[i] then
    out[#out + 1] = id
    out[#out + 1] = values[i]
  end
end
return out
";

/// One script: its hash (EVALSHA) and its source (EVAL, when a node does not know it).
pub(super) struct Lua {
    script: Script,
    source: String,
}

impl Lua {
    pub(super) fn new(source: String) -> Lua {
        Lua {
            script: Script::new(&source),
            source,
        }
    }
}

/// The store's scripts, built from the sources above once per store.
pub(super) struct Scripts {
    pub(super) create: Lua,
    pub(super) save: Lua,
    pub(super) deadline: Lua,
    pub(super) confirm: Lua,
    pub(super) lease: Lua,
    pub(super) release: Lua,
    pub(super) lobby_put: Lua,
    pub(super) lobby_free: Lua,
    pub(super) lobby_update: Lua,
    pub(super) lobby_drop: Lua,
    pub(super) lobby_list: Lua,
    pub(super) playing_list: Lua,
}

impl Scripts {
    pub(super) fn new() -> Scripts {
        let lua = |source: &str| Lua::new(built(source));
        Scripts {
            create: lua(CREATE_LUA),
            save: lua(SAVE_LUA),
            deadline: lua(DEADLINE_LUA),
            confirm: lua(CONFIRM_LUA),
            lease: lua(LEASE_LUA),
            release: lua(RELEASE_LUA),
            lobby_put: lua(LOBBY_PUT_LUA),
            lobby_free: lua(LOBBY_FREE_LUA),
            lobby_update: lua(LOBBY_UPDATE_LUA),
            lobby_drop: lua(&format!("{LOBBY_DROP}{LOBBY_DROP_LUA}")),
            lobby_list: lua(&format!("{LOBBY_DROP}{LOBBY_LIST_LUA}")),
            playing_list: lua(PLAYING_LIST_LUA),
        }
    }
}

/// A script's source with the offsets of a game's value filled in from `value`'s
/// constants (Lua counts from 1, both ends included): `$VERSION_END`, the last byte of the
/// version; `$HEADER`, of the header (the version and the events' length);
/// `$LEN_FROM`..`$LEN_TO`, the events' length; `$EVENTS_FROM`, the first byte of the events.
fn built(source: &str) -> String {
    let filled = source
        .replace("$VERSION_END", &VERSION_DIGITS.to_string())
        .replace("$HEADER", &HEADER.to_string())
        .replace("$LEN_FROM", &(VERSION_DIGITS + 1).to_string())
        .replace("$LEN_TO", &HEADER.to_string())
        .replace("$EVENTS_FROM", &(HEADER + 1).to_string());
    assert!(!filled.contains('$'), "a placeholder left unfilled");
    filled
}

/// The save script as a store runs it, for tools that talk to Redis directly (the load
/// benchmark).
pub fn save_script_source() -> String {
    built(SAVE_LUA)
}

impl RedisStore {
    /// Runs one Redis exchange bounded by the operation timeout.
    pub(super) async fn bounded<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        self.bounded_until(self.deadline(), what, fut).await
    }

    pub(super) fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.op_timeout
    }

    /// Like [`Self::bounded`], for calls made of several exchanges sharing one deadline.
    pub(super) async fn bounded_until<T>(
        &self,
        deadline: tokio::time::Instant,
        what: &str,
        fut: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout_at(deadline, fut).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(unavailable(e)),
            Err(_) => Err(StoreError::Unavailable(format!(
                "Redis did not answer {what} within {:?}",
                self.op_timeout
            ))),
        }
    }

    /// Runs a write script: EVALSHA (EVAL when the node does not know the script), and,
    /// when replicas must confirm writes, WAIT in the same pipeline, so that it runs on
    /// the same connection right after the script. `args` writes the key count, the keys
    /// and the arguments. Returns the script's reply and how many replicas have the write
    /// (`None` when not asked).
    ///
    /// The cluster connection follows `MOVED` and `ASK` for a command, not inside a
    /// pipeline's replies: here a script answered `ASK` (its slot is being moved, and its
    /// keys are on the new master) is sent again there after `ASKING`, one answered
    /// `MOVED` is sent to the new owner, and one answered `TRYAGAIN` (its keys are split
    /// between the two masters for a moment) is sent again shortly, within the deadline.
    pub(super) async fn write(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        what: &str,
        lua: &Lua,
        args: impl Fn(&mut Cmd),
        replicated: bool,
    ) -> Result<(Value, Option<i64>), StoreError> {
        let (script, source) = (&lua.script, lua.source.as_str());
        let pipeline = |eval: bool, asking: bool| {
            let mut cmd = if eval {
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(source);
                cmd
            } else {
                let mut cmd = redis::cmd("EVALSHA");
                cmd.arg(script.get_hash());
                cmd
            };
            args(&mut cmd);
            let mut pipe = redis::pipe();
            if asking {
                pipe.cmd("ASKING");
            }
            pipe.add_command(cmd);
            if replicated && self.wait_replicas > 0 {
                // Three quarters of what is left, so that WAIT answers (and says how many
                // replicas it saw) before this call times out; never 0, which means forever.
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let wait_ms = (left.as_millis() * 3 / 4).max(1);
                pipe.cmd("WAIT").arg(self.wait_replicas).arg(wait_ms as u64);
            }
            pipe
        };
        let _waiting = if replicated && self.wait_replicas > 0 {
            Some(self.conns.waiting()?)
        } else {
            None
        };
        let (mut eval, mut to) = (false, None::<(String, bool)>);
        let mut redirects = 0;
        let (replies, asked) = loop {
            let asking = to.as_ref().is_some_and(|(_, ask)| *ask);
            let pipe = pipeline(eval, asking);
            let node = to.as_ref().map(|(node, _)| node.as_str());
            let replies = self
                .bounded_until(deadline, what, async {
                    Ok(conn.pipeline_to(&pipe, node).await)
                })
                .await?;
            let Err(e) = replies else {
                break (replies.map_err(unavailable)?, asking);
            };
            match e.kind() {
                ErrorKind::Server(ServerErrorKind::NoScript) if !eval => eval = true,
                ErrorKind::Server(kind @ (ServerErrorKind::Ask | ServerErrorKind::Moved))
                    if redirects < 3 =>
                {
                    let (node, _) = e.redirect_node().ok_or_else(|| unavailable(e.clone()))?;
                    to = Some((node.to_owned(), kind == ServerErrorKind::Ask));
                    redirects += 1;
                }
                ErrorKind::Server(ServerErrorKind::TryAgain)
                    if tokio::time::Instant::now() + TRY_AGAIN_AFTER < deadline =>
                {
                    tokio::time::sleep(TRY_AGAIN_AFTER).await;
                }
                _ => return Err(unavailable(e)),
            }
        };
        // ASKING's OK first, when it was sent.
        let mut replies = replies.into_iter().skip(usize::from(asked));
        let reply = replies.next().ok_or_else(|| corrupt("script reply"))?;
        let acked = match replies.next() {
            Some(Value::Int(n)) => Some(n),
            Some(_) => return Err(corrupt("WAIT reply")),
            None => None,
        };
        Ok((reply, acked))
    }

    /// After a write: fails unless enough replicas have it.
    pub(super) fn confirmed(&self, what: &str, acked: Option<i64>) -> Result<(), StoreError> {
        let wanted = i64::from(self.wait_replicas);
        match acked {
            Some(n) if n < wanted => Err(StoreError::Unreplicated(format!(
                "the {what} reached {n} of the {wanted} replicas it must reach within {:?}",
                self.op_timeout
            ))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod unit {
    use redis::aio::MultiplexedConnection;

    use super::Scripts;
    use crate::value::{History, game_value, header, parse_game, version_text};

    async fn redis() -> MultiplexedConnection {
        let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
        redis::Client::open(url)
            .expect("a Redis URL")
            .get_multiplexed_async_connection()
            .await
            .expect("this test needs Redis at REDIS_URL (default 127.0.0.1:6379)")
    }

    /// The scripts, as built, read a game's value at the offsets `value` uses: the save
    /// script sets the values Rust built while the header is the one Rust expects, and
    /// answers the value as it is otherwise; the confirm and lobby scripts read the
    /// version and the blob of a value Rust built.
    #[tokio::test]
    async fn the_scripts_read_a_game_value_as_rust_builds_it() {
        let mut conn = redis().await;
        let scripts = Scripts::new();
        let game = format!("test:scripts:game:{{{}}}", uuid::Uuid::new_v4());
        let (idem, window, lobby) = (
            format!("{game}:idem"),
            format!("{game}:idem:0"),
            format!("{game}:lobby"),
        );
        let created: i64 = scripts
            .create
            .script
            .key(&game)
            .key(&idem)
            .arg(game_value(1, &History::default(), b"first"))
            .arg(60_000)
            .invoke_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(created, 1);
        let save = |expected: u64, before: &History, blob: &[u8], payload: &[u8]| {
            let after = before.after(expected + 1, Some(payload), 16);
            let mut invocation = scripts.save.script.key(&game);
            invocation
                .key(&idem)
                .key(&window)
                .arg(header(expected, before))
                .arg(game_value(expected + 1, &after, blob))
                .arg(60_000)
                .arg(format!("{game}:events"))
                .arg(payload)
                .arg("0")
                .arg("")
                .arg("")
                .arg(32);
            (invocation, after)
        };
        let mut history = History::default();
        for (expected, blob, payload) in [(1, &b"second"[..], &b"two"[..]), (2, b"third", b"3")] {
            let (invocation, after) = save(expected, &history, blob, payload);
            let reply: Vec<i64> = invocation.invoke_async(&mut conn).await.unwrap();
            assert_eq!(reply, [1]);
            history = after;
        }
        let value: Vec<u8> = redis::cmd("GET")
            .arg(&game)
            .query_async(&mut conn)
            .await
            .unwrap();
        assert_eq!(
            value,
            game_value(3, &history, b"third"),
            "set as Rust built it"
        );
        for (expected, before, why) in [
            (
                1,
                History::default(),
                "the script reads the version Rust wrote",
            ),
            (
                3,
                History::default(),
                "the script reads the events' length Rust wrote",
            ),
        ] {
            let (invocation, _) = save(expected, &before, b"late", b"x");
            let (lost, current, made): (i64, Vec<u8>, Option<Vec<u8>>) =
                invocation.invoke_async(&mut conn).await.unwrap();
            assert_eq!((lost, made), (0, None), "{why}");
            let current = parse_game(&current).expect("a conflict answers the game's value");
            assert_eq!((current.version, &current.bytes[..]), (3, &b"third"[..]));
            assert_eq!(current.history, history);
        }

        for (blob, confirmed) in [(&b"third"[..], 1), (b"second", 0)] {
            let reply: i64 = scripts
                .confirm
                .script
                .key(&game)
                .key(&idem)
                .arg("stored")
                .arg(version_text(3))
                .arg(blob)
                .arg(60_000)
                .invoke_async(&mut conn)
                .await
                .unwrap();
            assert_eq!(
                reply, confirmed,
                "the confirm script finds the blob Rust wrote"
            );
        }

        redis::cmd("HSET")
            .arg(&lobby)
            .arg("g")
            .arg(game_value(3, &History::default(), b"third"))
            .exec_async(&mut conn)
            .await
            .unwrap();
        for (version, updated) in [(3, 0), (4, 1)] {
            let reply: i64 = scripts
                .lobby_update
                .script
                .key(&lobby)
                .arg("g")
                .arg(version_text(version))
                .arg(game_value(version, &History::default(), b"new"))
                .invoke_async(&mut conn)
                .await
                .unwrap();
            assert_eq!(
                reply, updated,
                "the lobby script reads the version Rust wrote"
            );
        }
        redis::cmd("DEL")
            .arg(&game)
            .arg(&idem)
            .arg(&window)
            .arg(&lobby)
            .exec_async(&mut conn)
            .await
            .unwrap();
    }
}
