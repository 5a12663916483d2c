//! The Redis store: what lets any number of server processes share games.
//!
//! **Atomicity.** Every write of a game is one Lua script, because the connection is one
//! multiplexed connection shared by every request: WATCH/MULTI would watch on behalf of
//! whoever else is using it. The save script does the compare-and-set on the version, the
//! idempotency record, the event history and the PUBLISH in one step, so a crash never
//! leaves a move stored without its record or its event. Scripts are sent with EVALSHA
//! (re-sent once with SCRIPT LOAD when Redis has forgotten them, e.g. after a restart),
//! so the move path is one round trip.
//!
//! **Keys.** Every key of one game carries the hash tag `{<id>}`, so a Redis Cluster puts
//! them in one slot and the script may touch them all:
//! - `<prefix>game:{<id>}`: one string: the version (ten decimal digits), the length of
//!   the events area (seven digits), the events area, then the blob. The events area holds
//!   the last [`EVENT_HISTORY`] events (only the last one once the match is over), each
//!   as its length in three bytes, then the version (LEB128) and the payload. One string,
//!   because Redis charges every key about 100 to 250 bytes of overhead (a list's is the
//!   largest), as much as a finished game's whole blob: a game in play takes under 1 KB.
//!   Earlier versions stored a hash (`v`, `d`) and a list `<prefix>game:{<id>}:events`
//!   (8-byte versions); both are still read, and the first save rewrites the game whole;
//! - `<prefix>game:{<id>}:idem`: a hash of idempotency records, field = the key, value =
//!   the fingerprint's length (4 bytes big-endian), the fingerprint, then the response
//!   (opaque here; the service keeps a receipt of a few bytes it renders the answer from).
//!   One hash rather than one key per record, so that one PEXPIRE per save keeps every
//!   record alive exactly as long as the game (HSETNX gives first-writer-wins);
//! - the pub/sub channel `<prefix>events:{<id>}` carries each event as the events area
//!   holds it (version and payload), without its length.
//!
//! Every save refreshes the expiry of all of them to the idle ttl, so an abandoned game
//! disappears whole. Ids are UUIDs; an id must not contain `{` or `}`, nor the prefix `{`.
//!
//! **The lobby** is one sorted set `<prefix>open` (score = `created_ms`). It lives in
//! another slot, so it is updated outside the scripts: ZADD after a create, ZREM after a
//! save that unlists. It is an index, not the truth: if the ZREM fails after a successful
//! save the save still counts (a warning is logged), and `list_open` prunes entries older
//! than the idle ttl, which covers both expired games and such stragglers. (A game still
//! waiting for players after a whole idle ttl therefore drops off the list; the memory
//! store keeps it listed while it lives.)
//!
//! **Connections.** One multiplexed connection per thread that uses the store (each
//! actix worker, typically), made on its first call there: a request's Redis calls are
//! written, read and handed back on its own thread. One connection shared by every worker
//! made each call hop to the thread that owned it and back (two cross-thread wake-ups),
//! which cost about a fifth of the server's CPU under load.
//!
//! **Availability.** Every call is bounded by `op_timeout` and answers
//! [`StoreError::Unavailable`] instead of hanging when Redis is slow or gone; the
//! connection manager reconnects on its own. `connect` does not fail when Redis is down,
//! so the server starts and `/readyz` says what is wrong. A call cut short by the timeout
//! may still have been applied by Redis: that is what idempotency keys and the version
//! check are for.
//!
//! **Live events.** One dedicated pub/sub connection per store, PSUBSCRIBEd to
//! `<prefix>events:*`, fans messages out to local subscribers through one tokio
//! `broadcast` channel per game: ten thousand spectators cost one Redis connection, not
//! ten thousand. The connection is opened by the first `subscribe` and reopened after any
//! loss. When it is lost, every local stream ends, because events published meanwhile
//! are gone: the client reconnects and catches up with `events_since` (`Last-Event-ID`).
//! A subscriber that lags behind its buffer also sees its stream end, for the same reason.
//!
//! Nothing here logs a blob, an event payload or an idempotency record: they hold hidden
//! tiles and answers meant for one seat.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ErrorKind, RedisError, Script};
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use super::memory::{EVENT_HISTORY, receiver_stream};
use super::{
    Event, EventStream, GameId, GameStore, IdempotencyRecord, Save, SaveOutcome, StoreError, Stored,
};

/// How many live events a local subscriber may fall behind before its stream ends.
const SUBSCRIBER_BUFFER: usize = 64;

/// How often the pub/sub connection is checked with a PING: a silently dead connection
/// (no RST, e.g. a vanished host) would otherwise leave subscribers waiting forever.
const PUBSUB_HEALTH_EVERY: Duration = Duration::from_secs(5);

/// Reconnection backoff of the pub/sub connection.
const PUBSUB_RETRY_MIN: Duration = Duration::from_millis(100);
const PUBSUB_RETRY_MAX: Duration = Duration::from_secs(2);

/// KEYS: game, events (of an earlier version), idem. ARGV: value (version 1, no events,
/// blob), ttl ms.
/// Returns 1 when created, 0 when the game exists. Leftovers of an earlier game with the
/// same id (possible only if its keys expired at slightly different moments) are cleared.
const CREATE_LUA: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// KEYS: game, events (the list of an earlier version), idem, deadlines.
/// ARGV: expected version (ten digits), new version (ten digits), blob, ttl ms, event cap,
/// channel, event ('' for none; an encoded event is never empty), has idempotency record
/// ('1'/'0'), its key, its value, the game id, the deadline in ms ('' for none).
/// Returns {1, new} saved, {0, current} conflict, {-1, 0} missing.
///
/// The events are kept inside the game's value (see the module doc): the new one is
/// appended with its length in three bytes, and the oldest dropped beyond the cap.
const SAVE_LUA: &str = r"
local cur
local old = redis.call('TYPE', KEYS[1]).ok == 'hash'
if old then
  local v = redis.call('HGET', KEYS[1], 'v')
  if not v then return {-1, 0} end
  cur = string.format('%010d', tonumber(v)) .. '0000000'
else
  cur = redis.call('GET', KEYS[1])
  if not cur then return {-1, 0} end
end
local v = string.sub(cur, 1, 10)
if v ~= ARGV[1] then return {0, tonumber(v)} end
local events = string.sub(cur, 18, 17 + tonumber(string.sub(cur, 11, 17)))
local e = ARGV[7]
if e ~= '' then
  local n = #e
  events = events .. string.char(math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256) .. e
  local starts = {}
  local i = 1
  while i <= #events do
    starts[#starts + 1] = i
    i = i + 3 + string.byte(events, i) * 65536 + string.byte(events, i + 1) * 256 + string.byte(events, i + 2)
  end
  local cap = tonumber(ARGV[5])
  if #starts > cap then events = string.sub(events, starts[#starts - cap + 1]) end
  redis.call('PUBLISH', ARGV[6], e)
end
if old then redis.call('DEL', KEYS[2]) end
redis.call('SET', KEYS[1], ARGV[2] .. string.format('%07d', #events) .. events .. ARGV[3], 'PX', ARGV[4])
if ARGV[8] == '1' then redis.call('HSETNX', KEYS[3], ARGV[9], ARGV[10]) end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
if ARGV[12] == '' then
  redis.call('ZREM', KEYS[4], ARGV[11])
else
  redis.call('ZADD', KEYS[4], ARGV[12], ARGV[11])
end
return {1, tonumber(ARGV[2])}
";

/// Digits of the version at the start of a game's value: ten, far beyond any game's
/// versions, so the value compares as text in the save script and reads plainly in
/// `redis-cli`.
const VERSION_DIGITS: usize = 10;
/// Digits of the length of the events that follow the version.
const EVENTS_LEN_DIGITS: usize = 7;
const HEADER: usize = VERSION_DIGITS + EVENTS_LEN_DIGITS;

fn version_text(version: u64) -> String {
    format!("{version:0width$}", width = VERSION_DIGITS)
}

/// A new game's stored value: version, no events, blob. Public, like [`read_game_value`],
/// for tools that talk to Redis directly (the load benchmark).
pub fn game_value(version: u64, blob: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER + blob.len());
    value.extend_from_slice(version_text(version).as_bytes());
    value.extend_from_slice(&[b'0'; EVENTS_LEN_DIGITS]);
    value.extend_from_slice(blob);
    value
}

/// A game's stored value taken apart (see the module doc).
pub struct GameValue<'a> {
    pub version: u64,
    /// The events kept, oldest first, each as [`encode_event`] wrote it (without the
    /// three bytes of its length).
    pub events: Vec<&'a [u8]>,
    pub blob: &'a [u8],
}

/// Reads a game's value; `None` when it is not one.
pub fn read_game_value(value: &[u8]) -> Option<GameValue<'_>> {
    let number = |digits: &[u8]| std::str::from_utf8(digits).ok()?.parse::<u64>().ok();
    let version = number(value.get(..VERSION_DIGITS)?)?;
    let events_len = usize::try_from(number(value.get(VERSION_DIGITS..HEADER)?)?).ok()?;
    let blob_at = HEADER.checked_add(events_len)?;
    let mut area = value.get(HEADER..blob_at)?;
    let mut events = Vec::new();
    while !area.is_empty() {
        let (len, rest) = area.split_first_chunk::<3>()?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        events.push(rest.get(..len)?);
        area = &rest[len..];
    }
    Some(GameValue {
        version,
        events,
        blob: &value[blob_at..],
    })
}

fn parse_game_value(value: &[u8]) -> Option<Stored> {
    let game = read_game_value(value)?;
    Some(Stored {
        version: game.version,
        bytes: game.blob.to_vec(),
    })
}

/// The events kept in a game's value, oldest first.
fn parse_game_events(value: &[u8]) -> Option<Vec<Event>> {
    read_game_value(value)?
        .events
        .into_iter()
        .map(decode_event)
        .collect()
}

/// The shared game store on Redis.
pub struct RedisStore {
    conns: Connections,
    keys: Keys,
    idle_ttl_ms: u64,
    op_timeout: Duration,
    create_script: Script,
    save_script: Script,
    fanout: Arc<Fanout>,
}

/// Key names, all derived from the prefix (see the module doc).
#[derive(Clone)]
struct Keys {
    prefix: String,
}

impl Keys {
    fn game(&self, id: &str) -> String {
        format!("{}game:{{{id}}}", self.prefix)
    }
    fn events(&self, id: &str) -> String {
        format!("{}game:{{{id}}}:events", self.prefix)
    }
    fn idem(&self, id: &str) -> String {
        format!("{}game:{{{id}}}:idem", self.prefix)
    }
    /// The index of clock deadlines: a sorted set of game ids, score = deadline (epoch
    /// ms). Written by the save script, read by every process's sweep.
    fn deadlines(&self) -> String {
        format!("{}deadlines", self.prefix)
    }

    fn open(&self) -> String {
        format!("{}open", self.prefix)
    }
    fn channel(&self, id: &str) -> String {
        format!("{}events:{{{id}}}", self.prefix)
    }
    /// The PSUBSCRIBE pattern matching every game's channel (glob characters of the
    /// prefix escaped, so a prefix can never widen the subscription).
    fn channel_pattern(&self) -> String {
        let mut pattern = String::with_capacity(self.prefix.len() + 8);
        for c in self.prefix.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push_str("events:*");
        pattern
    }
    /// The game id of a channel name, if it is one of ours.
    fn id_of_channel<'a>(&self, channel: &'a str) -> Option<&'a str> {
        channel
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix("events:{")?
            .strip_suffix('}')
    }
}

/// The store's connections, one per thread (see the module doc).
struct Connections {
    client: Client,
    /// Boxed: large, and read only to make a connection.
    config: Box<ConnectionManagerConfig>,
    /// Tells this store's connections apart from other stores' in a thread's list.
    id: u64,
    /// Alive as long as the store: a thread drops the connections of dropped stores.
    alive: Arc<()>,
}

thread_local! {
    /// This thread's connections: (store id, the store's liveness, connection).
    static CONNECTIONS: RefCell<Vec<(u64, Weak<()>, ConnectionManager)>> =
        const { RefCell::new(Vec::new()) };
}

impl Connections {
    fn new(client: Client, config: ConnectionManagerConfig) -> Connections {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Connections {
            client,
            config: Box::new(config),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
        }
    }

    /// This thread's connection, made (lazily: it connects on first use) if there is none.
    /// Must be called on a tokio runtime, which the connection's tasks then live on.
    fn get(&self) -> Result<ConnectionManager, StoreError> {
        CONNECTIONS.with_borrow_mut(|conns| {
            if let Some((_, _, conn)) = conns.iter().find(|(id, _, _)| *id == self.id) {
                return Ok(conn.clone());
            }
            conns.retain(|(_, alive, _)| alive.strong_count() > 0);
            let conn = ConnectionManager::new_lazy_with_config(
                self.client.clone(),
                (*self.config).clone(),
            )
            .map_err(unavailable)?;
            conns.push((self.id, Arc::downgrade(&self.alive), conn.clone()));
            Ok(conn)
        })
    }
}

impl RedisStore {
    /// Builds the store without waiting for Redis beyond one bounded PING: if Redis is
    /// down, the store is still returned (a warning is logged) and each call answers
    /// [`StoreError::Unavailable`] until Redis is back. Only a malformed URL fails here.
    ///
    /// Call it on the runtime that outlives the store (the server's main one): the
    /// connection's background tasks and the pub/sub listener are spawned there.
    pub async fn connect(
        url: &str,
        key_prefix: &str,
        idle_ttl: Duration,
        op_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let client = Client::open(url)
            .map_err(|e| StoreError::Unavailable(format!("invalid Redis URL: {e}")))?;
        // Few, short reconnection retries: every call is bounded by op_timeout anyway, and
        // a long backoff inside the manager would only delay noticing that Redis is back.
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(op_timeout))
            .set_response_timeout(Some(op_timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let conns = Connections::new(client.clone(), config);
        // A bad configuration shows here rather than at the first request.
        conns.get()?;
        let keys = Keys {
            prefix: key_prefix.to_owned(),
        };
        let store = RedisStore {
            conns,
            fanout: Arc::new(Fanout {
                client,
                keys: keys.clone(),
                op_timeout,
                runtime: tokio::runtime::Handle::current(),
                state: Mutex::new(FanoutState::default()),
                connected: watch::channel(false).0,
            }),
            keys,
            idle_ttl_ms: u64::try_from(idle_ttl.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            op_timeout,
            create_script: Script::new(CREATE_LUA),
            save_script: Script::new(SAVE_LUA),
        };
        if let Err(e) = store.ping().await {
            tracing::warn!(error = %e, "Redis does not answer yet; store calls will fail until it does");
        }
        Ok(store)
    }

    /// Runs one Redis exchange bounded by the operation timeout.
    async fn bounded<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        self.bounded_until(self.deadline(), what, fut).await
    }

    fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.op_timeout
    }

    /// Like [`Self::bounded`], for calls made of several exchanges sharing one deadline.
    async fn bounded_until<T>(
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
}

/// Maps a Redis error to `Unavailable`. Replies that did not parse are described by kind
/// only: the error text could quote the reply, which may hold a blob.
fn unavailable(e: RedisError) -> StoreError {
    match e.kind() {
        ErrorKind::Parse | ErrorKind::UnexpectedReturnType => {
            StoreError::Unavailable(format!("unexpected reply from Redis ({:?})", e.kind()))
        }
        _ => StoreError::Unavailable(e.to_string()),
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The version in LEB128 (seven bits a byte, low first, high bit = more follows), then
/// the payload: two bytes of version where eight were used before.
fn encode_event(version: u64, payload: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(10 + payload.len());
    let mut v = version;
    while v >= 0x80 {
        raw.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    raw.push(v as u8);
    raw.extend_from_slice(payload);
    raw
}

fn decode_event(raw: &[u8]) -> Option<Event> {
    // Versions start at 1, so a LEB128 version never begins with a zero byte; the eight
    // big-endian bytes of earlier versions always did.
    if raw.first() == Some(&0) {
        let (version, payload) = raw.split_first_chunk::<8>()?;
        return Some(Event {
            version: u64::from_be_bytes(*version),
            payload: payload.to_vec(),
        });
    }
    let mut version = 0u64;
    for (i, &b) in raw.iter().enumerate().take(10) {
        version |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(Event {
                version,
                payload: raw[i + 1..].to_vec(),
            });
        }
    }
    None
}

fn encode_record(record: &IdempotencyRecord) -> Vec<u8> {
    let len = u32::try_from(record.fingerprint.len()).expect("a fingerprint is a short hash");
    let mut raw = Vec::with_capacity(4 + record.fingerprint.len() + record.response.len());
    raw.extend_from_slice(&len.to_be_bytes());
    raw.extend_from_slice(&record.fingerprint);
    raw.extend_from_slice(&record.response);
    raw
}

fn decode_record(key: &str, raw: &[u8]) -> Option<IdempotencyRecord> {
    let (len, rest) = raw.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    if rest.len() < len {
        return None;
    }
    let (fingerprint, response) = rest.split_at(len);
    Some(IdempotencyRecord {
        key: key.to_owned(),
        fingerprint: fingerprint.to_vec(),
        response: response.to_vec(),
    })
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Unavailable(format!("corrupt {what} in Redis"))
}

impl GameStore for RedisStore {
    async fn create(
        &self,
        id: &GameId,
        bytes: Vec<u8>,
        listed: bool,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        let created: bool = self
            .bounded("create", async {
                let created: bool = self
                    .create_script
                    .key(self.keys.game(id))
                    .key(self.keys.events(id))
                    .key(self.keys.idem(id))
                    .arg(game_value(1, &bytes))
                    .arg(self.idle_ttl_ms)
                    .invoke_async(&mut conn)
                    .await?;
                if created && listed {
                    redis::cmd("ZADD")
                        .arg(self.keys.open())
                        .arg(created_ms)
                        .arg(id)
                        .exec_async(&mut conn)
                        .await?;
                }
                Ok(created)
            })
            .await?;
        if created {
            Ok(())
        } else {
            Err(StoreError::Exists)
        }
    }

    async fn load(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        let mut conn = self.conns.get()?;
        let deadline = self.deadline();
        let key = self.keys.game(id);
        // The inner result is inspected, not mapped: WRONGTYPE says the key is an old hash.
        let value: Result<Option<Vec<u8>>, RedisError> = self
            .bounded_until(deadline, "load", async {
                Ok(redis::cmd("GET").arg(&key).query_async(&mut conn).await)
            })
            .await?;
        match value {
            Ok(Some(value)) => parse_game_value(&value)
                .map(Some)
                .ok_or_else(|| corrupt("game value")),
            Ok(None) => Ok(None),
            Err(e) if e.code() == Some("WRONGTYPE") => {
                // A hash stored by an earlier version: `v` (decimal) and `d` (the blob).
                let (version, bytes): (Option<String>, Option<Vec<u8>>) = self
                    .bounded_until(
                        deadline,
                        "load",
                        redis::cmd("HMGET")
                            .arg(&key)
                            .arg("v")
                            .arg("d")
                            .query_async(&mut conn),
                    )
                    .await?;
                match (version, bytes) {
                    (Some(version), Some(bytes)) => Ok(Some(Stored {
                        version: version.parse().map_err(|_| corrupt("game version"))?,
                        bytes,
                    })),
                    _ => Ok(None),
                }
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    async fn save(&self, id: &GameId, save: Save) -> Result<SaveOutcome, StoreError> {
        let version = save.expected + 1;
        let event = save
            .event
            .as_deref()
            .map(|payload| encode_event(version, payload))
            .unwrap_or_default();
        let (has_record, record_key, record) = match &save.idempotency {
            Some(record) => ("1", record.key.as_str(), encode_record(record)),
            None => ("0", "", Vec::new()),
        };
        let deadline = self.deadline();
        let mut conn = self.conns.get()?;
        let reply: Vec<i64> = self
            .bounded_until(
                deadline,
                "save",
                self.save_script
                    .key(self.keys.game(id))
                    .key(self.keys.events(id))
                    .key(self.keys.idem(id))
                    .key(self.keys.deadlines())
                    .arg(version_text(save.expected))
                    .arg(version_text(version))
                    .arg(save.bytes)
                    .arg(self.idle_ttl_ms)
                    .arg(if save.finished { 1 } else { EVENT_HISTORY })
                    .arg(self.keys.channel(id))
                    .arg(event)
                    .arg(has_record)
                    .arg(record_key)
                    .arg(record)
                    .arg(id)
                    .arg(save.deadline.map(|d| d.to_string()).unwrap_or_default())
                    .invoke_async(&mut conn),
            )
            .await?;
        let outcome = match reply.as_slice() {
            [1, saved] => SaveOutcome::Saved {
                version: u64::try_from(*saved).map_err(|_| corrupt("save reply"))?,
            },
            [0, current] => SaveOutcome::Conflict {
                current: u64::try_from(*current).map_err(|_| corrupt("game version"))?,
            },
            [-1, _] => SaveOutcome::Missing,
            _ => return Err(corrupt("save reply")),
        };
        if save.unlist && matches!(outcome, SaveOutcome::Saved { .. }) {
            let unlisted = self
                .bounded_until(
                    deadline,
                    "unlist",
                    redis::cmd("ZREM")
                        .arg(self.keys.open())
                        .arg(id)
                        .exec_async(&mut conn),
                )
                .await;
            if let Err(e) = unlisted {
                // The save is the truth; the lobby entry is pruned after the idle ttl.
                tracing::warn!(game_id = %id, error = %e, "saved, but could not remove the game from the open list");
            }
        }
        Ok(outcome)
    }

    async fn idempotency(
        &self,
        id: &GameId,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>, StoreError> {
        let mut conn = self.conns.get()?;
        let raw: Option<Vec<u8>> = self
            .bounded(
                "idempotency",
                redis::cmd("HGET")
                    .arg(self.keys.idem(id))
                    .arg(key)
                    .query_async(&mut conn),
            )
            .await?;
        raw.map(|raw| decode_record(key, &raw).ok_or_else(|| corrupt("idempotency record")))
            .transpose()
    }

    async fn list_open(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let cutoff = now_ms().saturating_sub(self.idle_ttl_ms);
        // Redis indexes a sorted set with signed 64-bit numbers and refuses larger ones
        // (which would read as an outage): an offset past that is past every game.
        const MAX_INDEX: usize = i64::MAX as usize;
        if offset > MAX_INDEX {
            return Ok(Vec::new());
        }
        let last = offset.saturating_add(limit - 1).min(MAX_INDEX);
        let mut conn = self.conns.get()?;
        let (ids,): (Vec<String>,) = self
            .bounded(
                "list_open",
                redis::pipe()
                    .cmd("ZREMRANGEBYSCORE")
                    .arg(self.keys.open())
                    .arg("-inf")
                    .arg(format!("({cutoff}"))
                    .ignore()
                    .cmd("ZREVRANGE")
                    .arg(self.keys.open())
                    .arg(offset)
                    .arg(last)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(ids)
    }

    async fn events_since(&self, id: &GameId, after: u64) -> Result<Vec<Event>, StoreError> {
        let mut conn = self.conns.get()?;
        let deadline = self.deadline();
        let value: Result<Option<Vec<u8>>, RedisError> = self
            .bounded_until(deadline, "events_since", async {
                Ok(redis::cmd("GET")
                    .arg(self.keys.game(id))
                    .query_async(&mut conn)
                    .await)
            })
            .await?;
        let events = match value {
            Ok(Some(value)) => parse_game_events(&value).ok_or_else(|| corrupt("events"))?,
            Ok(None) => Vec::new(),
            // A game an earlier version stored (a hash) keeps its events in a list.
            Err(e) if e.code() == Some("WRONGTYPE") => {
                let raw: Vec<Vec<u8>> = self
                    .bounded_until(
                        deadline,
                        "events_since",
                        redis::cmd("LRANGE")
                            .arg(self.keys.events(id))
                            .arg(0)
                            .arg(-1)
                            .query_async(&mut conn),
                    )
                    .await?;
                raw.iter()
                    .map(|raw| decode_event(raw).ok_or_else(|| corrupt("event")))
                    .collect::<Result<_, _>>()?
            }
            Err(e) => return Err(unavailable(e)),
        };
        Ok(events.into_iter().filter(|e| e.version > after).collect())
    }

    async fn subscribe(&self, id: &GameId) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(id).await
    }

    async fn due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "due",
            redis::cmd("ZRANGE")
                .arg(self.keys.deadlines())
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

    async fn forget_deadline(&self, id: &GameId) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "forget deadline",
            redis::cmd("ZREM")
                .arg(self.keys.deadlines())
                .arg(id)
                .exec_async(&mut conn),
        )
        .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded("PING", redis::cmd("PING").exec_async(&mut conn))
            .await
    }
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        if let Some(task) = self.fanout.lock().task.take() {
            task.abort();
        }
    }
}

/// The local side of the one pub/sub connection: who listens to which game.
struct Fanout {
    client: Client,
    keys: Keys,
    op_timeout: Duration,
    /// The runtime the store was built on: the listener task lives there, not on whichever
    /// (possibly short-lived) runtime the first subscriber happens to run on.
    runtime: tokio::runtime::Handle,
    state: Mutex<FanoutState>,
    /// Wakes subscribers waiting for the connection; the truth is `state.connected`.
    connected: watch::Sender<bool>,
}

#[derive(Default)]
struct FanoutState {
    /// True while the pattern subscription is confirmed and being read: a channel
    /// registered while this holds will see every event published afterwards.
    connected: bool,
    channels: HashMap<String, broadcast::Sender<Event>>,
    task: Option<JoinHandle<()>>,
}

impl Fanout {
    fn lock(&self) -> MutexGuard<'_, FanoutState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a local subscriber once the pattern subscription is live, so that no
    /// event saved after this returns can be missed; waits at most `op_timeout`.
    async fn subscribe(self: &Arc<Self>, id: &str) -> Result<EventStream, StoreError> {
        let deadline = tokio::time::Instant::now() + self.op_timeout;
        let mut changed = self.connected.subscribe();
        loop {
            {
                let mut state = self.lock();
                if state.task.as_ref().is_none_or(JoinHandle::is_finished) {
                    let fanout = Arc::downgrade(self);
                    state.task = Some(self.runtime.spawn(listen(fanout)));
                }
                if state.connected {
                    let rx = match state.channels.get(id) {
                        Some(tx) => tx.subscribe(),
                        None => {
                            let (tx, rx) = broadcast::channel(SUBSCRIBER_BUFFER);
                            state.channels.insert(id.to_owned(), tx);
                            rx
                        }
                    };
                    return Ok(receiver_stream(rx));
                }
            }
            if tokio::time::timeout_at(deadline, changed.changed())
                .await
                .is_err()
            {
                return Err(StoreError::Unavailable(format!(
                    "the Redis event subscription is not connected (waited {:?})",
                    self.op_timeout
                )));
            }
        }
    }

    fn set_connected(&self, connected: bool) {
        let mut state = self.lock();
        state.connected = connected;
        if !connected {
            // Dropping the senders ends every local stream: events published while we
            // were away are lost, and the clients must resume from the history.
            state.channels.clear();
        }
        drop(state);
        self.connected.send_replace(connected);
    }

    fn dispatch(&self, msg: &redis::Msg) {
        let Some(id) = self.keys.id_of_channel(msg.get_channel_name()) else {
            return;
        };
        let Some(event) = decode_event(msg.get_payload_bytes()) else {
            tracing::warn!(game_id = %id, "ignored a malformed event message");
            return;
        };
        let mut state = self.lock();
        if let Some(tx) = state.channels.get(id)
            && tx.send(event).is_err()
        {
            state.channels.remove(id);
        }
    }

    async fn open(&self) -> Result<redis::aio::PubSub, StoreError> {
        let pattern = self.keys.channel_pattern();
        let opened = tokio::time::timeout(self.op_timeout, async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.psubscribe(pattern).await?;
            Ok::<_, RedisError>(pubsub)
        })
        .await;
        match opened {
            Ok(Ok(pubsub)) => Ok(pubsub),
            Ok(Err(e)) => Err(unavailable(e)),
            Err(_) => Err(StoreError::Unavailable(
                "timed out opening the pub/sub connection".into(),
            )),
        }
    }
}

/// The listener task: keeps the pattern subscription open, reconnecting with backoff, and
/// hands each message to the local subscribers. It holds the fanout only weakly, so it
/// stops once the store is gone.
async fn listen(fanout: Weak<Fanout>) {
    let mut backoff = PUBSUB_RETRY_MIN;
    let mut failures = 0u32;
    loop {
        let Some(strong) = fanout.upgrade() else {
            return;
        };
        match strong.open().await {
            Ok(pubsub) => {
                if failures > 0 {
                    tracing::info!("Redis event subscription restored");
                }
                backoff = PUBSUB_RETRY_MIN;
                failures = 0;
                strong.set_connected(true);
                drop(strong);
                let lost = pump(&fanout, pubsub).await;
                let Some(strong) = fanout.upgrade() else {
                    return;
                };
                strong.set_connected(false);
                tracing::warn!(
                    reason = lost,
                    "lost the Redis event subscription; reconnecting"
                );
            }
            Err(e) => {
                drop(strong);
                // One warning per outage, not one per attempt.
                if failures == 0 {
                    tracing::warn!(error = %e, "cannot open the Redis event subscription; retrying");
                }
                failures += 1;
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(PUBSUB_RETRY_MAX);
    }
}

/// Reads the subscription until it fails; returns why.
async fn pump(fanout: &Weak<Fanout>, pubsub: redis::aio::PubSub) -> &'static str {
    let (mut sink, mut messages) = pubsub.split();
    let mut health = tokio::time::interval(PUBSUB_HEALTH_EVERY);
    health.tick().await;
    loop {
        tokio::select! {
            msg = messages.next() => {
                let Some(msg) = msg else { return "connection closed" };
                let Some(strong) = fanout.upgrade() else { return "store dropped" };
                strong.dispatch(&msg);
            }
            _ = health.tick() => {
                let Some(strong) = fanout.upgrade() else { return "store dropped" };
                strong.lock().channels.retain(|_, tx| tx.receiver_count() > 0);
                let op_timeout = strong.op_timeout;
                drop(strong);
                let ping = tokio::time::timeout(op_timeout, sink.ping::<redis::Value>()).await;
                if !matches!(ping, Ok(Ok(_))) {
                    return "PING failed";
                }
            }
        }
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn codecs_round_trip() {
        let event = decode_event(&encode_event(7, b"abc")).unwrap();
        assert_eq!(
            event,
            Event {
                version: 7,
                payload: b"abc".to_vec()
            }
        );
        assert_eq!(decode_event(&encode_event(9, b"")).unwrap().payload, b"");
        for version in [1, 127, 128, 300, 1 << 35, u64::MAX] {
            assert_eq!(
                decode_event(&encode_event(version, b"x")).unwrap().version,
                version
            );
        }
        assert!(decode_event(b"").is_none());
        assert!(decode_event(&[0x80, 0x80]).is_none(), "a version cut short");
        // Eight big-endian bytes, as earlier versions wrote.
        assert_eq!(
            decode_event(b"\0\0\0\0\0\0\x01\x02ab").unwrap().version,
            258
        );
        assert!(decode_event(b"\0short").is_none());
        assert_eq!(
            parse_game_value(&game_value(42, b"blob")).unwrap().version,
            42
        );
        assert!(parse_game_value(b"12345").is_none());
        let record = IdempotencyRecord {
            key: "k".into(),
            fingerprint: vec![1, 2, 3],
            response: b"{}".to_vec(),
        };
        assert_eq!(decode_record("k", &encode_record(&record)), Some(record));
        assert!(decode_record("k", &[0, 0, 0, 9, 1]).is_none());
    }

    #[test]
    fn keys_share_one_hash_tag_and_the_pattern_is_escaped() {
        let keys = Keys {
            prefix: "t*[x]:".into(),
        };
        for key in [keys.game("g1"), keys.events("g1"), keys.idem("g1")] {
            assert!(key.contains("{g1}"), "{key}");
        }
        assert_eq!(keys.channel_pattern(), r"t\*\[x\]:events:*");
        assert_eq!(keys.id_of_channel(&keys.channel("g1")), Some("g1"));
        assert_eq!(keys.id_of_channel("other:events:{g1}"), None);
    }
}
