//! The Redis store: what lets any number of server processes share games, on one Redis
//! or on a Redis Cluster.
//!
//! **One code path, two connections.** [`RedisTarget`] says where Redis is: one server
//! (`REDIS_URL`) or a cluster, by some of its nodes (`REDIS_CLUSTER_NODES`). The two modes
//! differ only in the connection: a connection manager to the one server, or the `redis`
//! crate's async cluster connection, which sends each command to the master owning its
//! key's slot, follows `MOVED`/`ASK` and refreshes the slot map after a failover (a
//! pipeline's redirects, the crate leaves to its caller: writes follow them themselves).
//! Every command, script and key below is the same in both modes.
//!
//! **Atomicity.** Every write of a game is one Lua script, because the connection is one
//! multiplexed connection shared by every request: WATCH/MULTI would watch on behalf of
//! whoever else is using it. The save script does the compare-and-set on the version, the
//! idempotency record, the event history and the SPUBLISH in one step, so a crash never
//! leaves a move stored without its record or its event. Scripts are sent with EVALSHA
//! (sent again as EVAL, which also caches them, when a node does not know them: after a
//! restart or a failover), so the move path is one round trip.
//!
//! **Keys.** Every key of one game carries the hash tag `{<id>}`, so a Redis Cluster puts
//! them, and the game's sharded channel, in one slot, and the script may touch them all:
//! - `<prefix>game:{<id>}`: one string: the version (ten decimal digits), the length of
//!   the events area (seven digits), the events area, then the blob. The events area holds
//!   the last [`EVENT_HISTORY`] events (only the last one once the match is over), each
//!   as its length in three bytes, then the version (LEB128) and the payload. One string,
//!   because Redis charges every key about 100 to 250 bytes of overhead (a list's is the
//!   largest), as much as a finished game's whole blob: a game in play takes under 1 KB;
//! - `<prefix>game:{<id>}:idem`: a hash of idempotency records, field = the key, value =
//!   the fingerprint's length (4 bytes big-endian), the fingerprint, then the response
//!   (opaque here; the service keeps a receipt of a few bytes it renders the answer from).
//!   One hash rather than one key per record, so that one PEXPIRE per save keeps every
//!   record alive exactly as long as the game (HSETNX gives first-writer-wins);
//! - `<prefix>game:{<id>}:idem:<seat>`: a list of that seat's keys, oldest first; a key
//!   pushed beyond [`IDEMPOTENCY_WINDOW`] pops the oldest, whose record is deleted. It
//!   is refreshed by that seat's keyed saves only: should it expire while the game lives
//!   (no keyed move of the seat for a whole idle ttl), the seat's older records stay
//!   until the game expires, a new window bounding what follows;
//! - the sharded pub/sub channel `<prefix>events:{<id>}` carries each event as the events
//!   area holds it (version and payload), without its length;
//! - `<prefix>game:{<id>}:lease`: which process plays the game's bots now (its holder id),
//!   with a ttl of a few seconds that the holder renews; taken and given up by one script
//!   each, so a holder never overwrites or deletes another's lease.
//!
//! Every save refreshes the expiry of all of them to the idle ttl, so an abandoned game
//! disappears whole. Ids are UUIDs; an id must not contain `{` or `}`, nor the prefix `{`.
//!
//! **Clock deadlines** are one sorted set `<prefix>{deadlines}` (score = the game's next
//! deadline, epoch ms, or below [`super::QUEUE_END`] a table of bots alone's place in the
//! queue) that every process's sweep reads, and beside it, in the same slot,
//! the hash `<prefix>{deadlines}:v` of the game version each entry was written for. Like
//! the lobby it lives in another slot than the games, so it is written after the save (one
//! more script, for games with a clock only), guarded by version so that of two saves of
//! a game whose index writes cross, the later one's stands. The game is the truth: the
//! sweep loads it before acting, and drops entries whose game has no deadline or is gone.
//!
//! **The lobby** lives in one slot of its own (hash tag `{lobby}`), so that a page is one
//! script and one round trip whatever its depth, on one Redis or a cluster:
//! - `<prefix>{lobby}:open`: a sorted set of the listed games (score = `created_ms`),
//!   read by rank (ZREVRANGE), which Redis finds in O(log n) at any depth;
//! - `<prefix>{lobby}:games`: a hash, id → the game's value as of its last save that kept
//!   it listed (version and blob, as a game's value without events), so that a page needs
//!   none of the games' own keys, which live in other slots;
//! - `<prefix>{lobby}:owner`: a hash, id → its creator's address, and per address
//!   `<prefix>{lobby}:by:<address>`: a sorted set of its listed games (score =
//!   `created_ms`), for the cap on waiting games per address, which therefore holds
//!   across every server process;
//! - per address `<prefix>{lobby}:playing:<address>`: a sorted set of the games it created
//!   and whose match is not over (score = when created), for the cap on games in play;
//!   beside it the hash `<prefix>{lobby}:creator` (id → address), read when a save
//!   finishes a match, and `<prefix>{lobby}:creator-age` (id → when created), by which
//!   creates prune the entries of games that expired unfinished. An entry older than the
//!   idle ttl no longer counts.
//!
//! The lobby is written after the game's own script (another slot): after a create (the
//! cap is checked there; a refused game is deleted again), and after a save that keeps the
//! game listed (guarded by version, so a late write never undoes a newer one) or unlists
//! it. It is an index, not the truth: if a lobby write fails after a successful save the
//! save still counts (a warning is logged); a listed entry older than the idle ttl is
//! neither listed nor counted, and `list_open` prunes a batch of them each time, which
//! covers both expired games and such stragglers. (A game still waiting for players after
//! a whole idle ttl therefore drops off the list; the memory store keeps it listed while
//! it lives.)
//!
//! **Durability across a failover** (`wait_replicas`, `REDIS_WAIT_REPLICAS`). Redis
//! replicates asynchronously: a master that dies right after a write may take it with it
//! when its replica takes over. With `wait_replicas = n > 0`, a create or a save is sent
//! in one pipeline with `WAIT n <ms>` (on the same connection, so it counts the write just
//! made), bounded by what is left of the operation timeout, and is acknowledged only when
//! `n` replicas have it; otherwise it answers [`StoreError::Unreplicated`] (the write may
//! or may not survive: the client retries with its idempotency key, and the version check
//! decides). While a replica is missing, WAIT holds the connection it runs on for up to the
//! timeout, so the store answers 503 rather than acknowledging moves it cannot vouch for;
//! reads (views, spectators, the lobby) then move to a connection of their own and go on
//! answering meanwhile.
//! An answer given without a write of the request's own (a retry's stored receipt, a save
//! whose answer came late) is first vouched for the same way ([`GameStore::vouch`]): one
//! script checks that the game still holds what is acknowledged and writes (the game's
//! expiry), then WAIT. The check runs on the node whose replicas are asked, so a new
//! master that never got the write (the cluster connection retries across a failover)
//! vouches for nothing.
//!
//! **Connections.** One multiplexed connection (one cluster connection, in cluster mode)
//! per thread that uses the store (each actix worker, typically), made on its first call
//! there: a request's Redis calls are written, read and handed back on its own thread.
//! A second one is made and carries that thread's reads while a WAIT has held the first
//! for [`WAIT_HOLDS_READS_AFTER`] (see [`Pair`]); the read that tells whether a save
//! whose answer was lost landed stays on the first (it must not overtake the save).
//! One connection shared by every worker made each call hop to the thread that owned it
//! and back (two cross-thread wake-ups), which cost about a fifth of the server's CPU
//! under load.
//!
//! **Availability.** Every call is bounded by `op_timeout` and answers
//! [`StoreError::Unavailable`] instead of hanging when Redis is slow or gone; the
//! connections reconnect on their own. `connect` does not fail when Redis is down, so the
//! server starts and `/readyz` says what is wrong (in cluster mode, also when the cluster
//! says its state is not `ok`), or, with `wait_replicas`, which masters have fewer
//! replicas online than that. A call cut short by the timeout may still have been
//! applied by Redis: that is what idempotency keys and the version check are for.
//!
//! **Live events** use sharded pub/sub (Redis 7): the script SPUBLISHes on the game's own
//! channel, which a cluster delivers only within the slot's shard, where classic PUBLISH
//! is broadcast to every node. One dedicated RESP3 connection per store (a cluster
//! connection in cluster mode, which sends each SSUBSCRIBE to the slot's master) carries
//! every game's subscription, SSUBSCRIBEd when the first local subscriber of that game
//! comes and SUNSUBSCRIBEd when the last one has gone; its messages are fanned out to
//! local subscribers through one tokio `broadcast` channel per game: ten thousand
//! spectators cost one subscription, not ten thousand. The connection is opened by the
//! first `subscribe` and opened again after any loss. When it is lost (any of its nodes
//! disconnects, a PING fails, or Redis moves a channel's slot away), the local streams
//! concerned end, because events published meanwhile are gone: the client reconnects and
//! catches up with `events_since` (`Last-Event-ID`). A subscriber that lags behind its
//! buffer also sees its stream end, for the same reason.
//!
//! Nothing here logs a blob, an event payload or an idempotency record: they hold hidden
//! tiles and answers meant for one seat.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::{
    ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection,
};
use redis::cluster::{ClusterClient, ClusterClientBuilder, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ErrorKind, IntoConnectionInfo, Pipeline, ProtocolVersion,
    PushInfo, PushKind, RedisError, RedisFuture, Script, ServerErrorKind, Value,
};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

use super::{
    Creator, EVENT_HISTORY, Event, EventStream, Evidence, GameId, GameStore, Health,
    IDEMPOTENCY_WINDOW, IdempotencyRecord, LOBBY_CHANNEL, Listing, Save, SaveOutcome, StoreError,
    Stored, receiver_stream,
};

/// How long a write answered `TRYAGAIN` (its slot is moving, its keys split between two
/// masters) waits before it is sent again.
const TRY_AGAIN_AFTER: Duration = Duration::from_millis(20);

/// How many live events a local subscriber may fall behind before its stream ends.
const SUBSCRIBER_BUFFER: usize = 64;

/// How often the pub/sub connection is checked with a PING (a silently dead connection,
/// e.g. a vanished host, would otherwise leave subscribers waiting forever) and games
/// nobody here listens to any more are unsubscribed.
const PUBSUB_HEALTH_EVERY: Duration = Duration::from_secs(5);

/// Where the store's Redis is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// One Redis server, by URL (`REDIS_URL`).
    Single(String),
    /// A Redis Cluster, by the URLs of some of its nodes (`REDIS_CLUSTER_NODES`); the
    /// others are found from them.
    Cluster(Vec<String>),
}

/// KEYS: the deadline index, its versions. ARGV: game id, version saved, deadline in ms
/// ('' for none). Writes only if no later version of the game was indexed.
const DEADLINE_LUA: &str = r"
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if seen > tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
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
const VOUCH_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
if ARGV[1] == 'record' then
  if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return 0 end
else
  if string.sub(cur, 1, 10) ~= ARGV[2] then return 0 end
  if string.sub(cur, 18 + tonumber(string.sub(cur, 11, 17))) ~= ARGV[3] then return 0 end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
";

/// KEYS: game, idem, the seat's window of keys.
/// ARGV: expected version (ten digits), new version (ten digits), blob, ttl ms, event cap,
/// channel, event ('' for none; an encoded event is never empty), has idempotency record
/// ('1'/'0'), its key, its value, the window's size.
/// Returns {1, new} saved, {0, current} conflict, {-1, 0} missing.
///
/// The events are kept inside the game's value (see the module doc): the new one is
/// appended with its length in three bytes, and the oldest dropped beyond the cap.
const SAVE_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return {-1, 0} end
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
  redis.call('SPUBLISH', ARGV[6], e)
end
redis.call('SET', KEYS[1], ARGV[2] .. string.format('%07d', #events) .. events .. ARGV[3], 'PX', ARGV[4])
if ARGV[8] == '1' and redis.call('HSETNX', KEYS[2], ARGV[9], ARGV[10]) == 1 then
  if redis.call('RPUSH', KEYS[3], ARGV[9]) > tonumber(ARGV[11]) then
    redis.call('HDEL', KEYS[2], redis.call('LPOP', KEYS[3]))
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {1, tonumber(ARGV[2])}
";

/// KEYS: open, lobby, owners, the owner's games, creators, creators' ages, the creator's
/// games. ARGV: id, created_ms, lobby value ('' for a game not listed), owner ('' for
/// none), the owner's cap, cutoff (ms: older entries are stale), ttl ms, creator ('' for
/// none), the creator's cap, how many stale creators' entries to prune.
/// Returns 1 when counted (and listed), 0 when the owner has its cap of fresh listed
/// entries already, 2 when the creator has its cap of fresh games in play.
const LOBBY_PUT_LUA: &str = r"
if ARGV[8] ~= '' then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', '(' .. ARGV[6], 'LIMIT', 0, ARGV[10])
  for _, old in ipairs(stale) do
    redis.call('HDEL', KEYS[5], old)
    redis.call('ZREM', KEYS[6], old)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. ARGV[6])
  if redis.call('ZCARD', KEYS[7]) >= tonumber(ARGV[9]) then return 2 end
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
end
if ARGV[8] ~= '' then
  redis.call('ZADD', KEYS[7], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[7], ARGV[7])
  redis.call('HSET', KEYS[5], ARGV[1], ARGV[8])
  redis.call('ZADD', KEYS[6], ARGV[2], ARGV[1])
end
return 1
";

/// KEYS: creators, creators' ages. ARGV: id, the prefix of a creator's games (in the
/// lobby's slot). Takes a finished game out of its creator's games in play.
const LOBBY_FREE_LUA: &str = r"
local who = redis.call('HGET', KEYS[1], ARGV[1])
if who then
  redis.call('ZREM', ARGV[2] .. who, ARGV[1])
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
if not cur or string.sub(cur, 1, 10) >= ARGV[2] then return 0 end
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

/// KEYS: open, lobby, owners. ARGV: id, owner key prefix.
const LOBBY_DROP_LUA: &str = r"
-- (LOBBY_DROP precedes this)
drop(ARGV[1])
return 1
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

/// Stale lobby entries a page prunes at most (each a few commands inside the script).
const LOBBY_PRUNE_BATCH: usize = 100;

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

/// The shared game store on Redis (one server or a cluster).
pub struct RedisStore {
    conns: Connections,
    keys: Keys,
    idle_ttl_ms: u64,
    op_timeout: Duration,
    /// Replicas that must hold a write before it is acknowledged (0: none).
    wait_replicas: u32,
    create_script: Script,
    save_script: Script,
    deadline_script: Script,
    vouch_script: Script,
    lease_script: Script,
    release_script: Script,
    /// Boxed: large, and read once per lobby call.
    lobby: Box<LobbyScripts>,
    fanout: Arc<Fanout>,
}

/// The lobby's scripts, with their sources (sent when a node does not know them).
struct LobbyScripts {
    put: Script,
    free: Script,
    update: Script,
    drop: (Script, String),
    list: (Script, String),
}

impl LobbyScripts {
    fn new() -> LobbyScripts {
        let drop = format!("{LOBBY_DROP}{LOBBY_DROP_LUA}");
        let list = format!("{LOBBY_DROP}{LOBBY_LIST_LUA}");
        LobbyScripts {
            put: Script::new(LOBBY_PUT_LUA),
            free: Script::new(LOBBY_FREE_LUA),
            update: Script::new(LOBBY_UPDATE_LUA),
            drop: (Script::new(&drop), drop),
            list: (Script::new(&list), list),
        }
    }
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
    fn idem(&self, id: &str) -> String {
        format!("{}game:{{{id}}}:idem", self.prefix)
    }
    /// One seat's idempotency keys, oldest first (a list capped at the window).
    fn idem_window(&self, id: &str, seat: u8) -> String {
        format!("{}game:{{{id}}}:idem:{seat}", self.prefix)
    }
    /// Which process plays the game's bots now (a holder id, expiring).
    fn lease(&self, id: &str) -> String {
        format!("{}game:{{{id}}}:lease", self.prefix)
    }
    /// The index of clock deadlines: a sorted set of game ids, score = deadline (epoch
    /// ms), read by every process's sweep; and beside it (same slot) the version each
    /// entry was written for.
    fn deadlines(&self) -> String {
        format!("{}{{deadlines}}", self.prefix)
    }

    fn deadline_versions(&self) -> String {
        format!("{}{{deadlines}}:v", self.prefix)
    }

    fn open(&self) -> String {
        format!("{}{{lobby}}:open", self.prefix)
    }
    fn lobby(&self) -> String {
        format!("{}{{lobby}}:games", self.prefix)
    }
    fn owners(&self) -> String {
        format!("{}{{lobby}}:owner", self.prefix)
    }
    /// The prefix of an owner's sorted set of listed games (the address follows).
    fn by_owner(&self) -> String {
        format!("{}{{lobby}}:by:", self.prefix)
    }
    /// Games in play by their creator: id → address, and id → when it was created.
    fn creators(&self) -> String {
        format!("{}{{lobby}}:creator", self.prefix)
    }
    fn creator_ages(&self) -> String {
        format!("{}{{lobby}}:creator-age", self.prefix)
    }
    /// The prefix of a creator's sorted set of games in play (the address follows).
    fn by_creator(&self) -> String {
        format!("{}{{lobby}}:playing:", self.prefix)
    }
    fn channel(&self, id: &str) -> String {
        format!("{}events:{{{id}}}", self.prefix)
    }
    /// The game id of a channel name, if it is one of ours.
    fn id_of_channel<'a>(&self, channel: &'a str) -> Option<&'a str> {
        channel
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix("events:{")?
            .strip_suffix('}')
    }
}

/// What the store makes its connections from: the only place the two modes differ.
#[derive(Clone)]
enum Clients {
    Single {
        client: Client,
        /// The same server, spoken to in RESP3 (push messages), for pub/sub.
        pubsub: Client,
        /// Boxed: large, and read only to make a connection.
        config: Box<ConnectionManagerConfig>,
    },
    Cluster {
        client: ClusterClient,
        nodes: Vec<String>,
    },
}

/// A connection of either mode; commands, pipelines and scripts run on it alike.
#[derive(Clone)]
enum Conn {
    Manager(ConnectionManager),
    Plain(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Manager(c) => c.req_packed_command(cmd),
            Conn::Plain(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Manager(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Plain(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Manager(c) => c.get_db(),
            Conn::Plain(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

impl Conn {
    /// Runs `pipe`, on the master at `node` (`host:port`, from a redirect) when given:
    /// the cluster connection routes a pipeline by its first key otherwise.
    async fn pipeline_to(
        &mut self,
        pipe: &Pipeline,
        node: Option<&str>,
    ) -> Result<Vec<Value>, RedisError> {
        let (Conn::Cluster(conn), Some(node)) = (&mut *self, node) else {
            return pipe.query_async(self).await;
        };
        let (host, port) = node
            .rsplit_once(':')
            .and_then(|(host, port)| Some((host.to_owned(), port.parse().ok()?)))
            .ok_or_else(|| {
                RedisError::from((ErrorKind::Parse, "a redirect to an unknown address"))
            })?;
        let route = SingleNodeRoutingInfo::ByAddress { host, port };
        // As `query_async` does for a pipeline with no reply ignored: the first error
        // answered, else every reply.
        conn.route_pipeline(pipe.clone(), 0, pipe.len(), route)
            .await?
            .into_iter()
            .map(Value::extract_error)
            .collect()
    }
}

/// The cluster client's settings: every call is bounded by `op_timeout` anyway, so retries
/// (after a MOVED, or while a failover completes) are quick and few; the crate's defaults
/// wait over a second before the first one. No overall timeout of the crate's: the
/// store's own bounds each call, and a second timer per request costs CPU for nothing.
fn cluster_builder(nodes: &[String], op_timeout: Duration) -> ClusterClientBuilder {
    ClusterClientBuilder::new(nodes.to_vec())
        .connection_timeout(op_timeout)
        .response_timeout(op_timeout)
        .overall_response_timeout(None)
        .retries(5)
        .min_retry_wait(10)
        .max_retry_wait(250)
}

impl Clients {
    fn new(target: &RedisTarget, op_timeout: Duration) -> Result<Clients, StoreError> {
        let invalid = |e: RedisError| StoreError::Unavailable(format!("invalid Redis URL: {e}"));
        match target {
            RedisTarget::Single(url) => {
                let info = url.as_str().into_connection_info().map_err(invalid)?;
                let resp3 = info
                    .redis_settings()
                    .clone()
                    .set_protocol(ProtocolVersion::RESP3);
                let pubsub =
                    Client::open(info.clone().set_redis_settings(resp3)).map_err(invalid)?;
                let client = Client::open(info).map_err(invalid)?;
                // Few, short reconnection retries: every call is bounded by op_timeout
                // anyway, and a long backoff inside the manager would only delay noticing
                // that Redis is back.
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(op_timeout))
                    .set_response_timeout(Some(op_timeout))
                    .set_number_of_retries(1)
                    .set_min_delay(Duration::from_millis(50))
                    .set_max_delay(Duration::from_millis(500));
                Ok(Clients::Single {
                    client,
                    pubsub,
                    config: Box::new(config),
                })
            }
            RedisTarget::Cluster(nodes) => {
                if nodes.is_empty() {
                    return Err(StoreError::Unavailable(
                        "invalid Redis URL: no cluster node given".into(),
                    ));
                }
                let client = cluster_builder(nodes, op_timeout)
                    .build()
                    .map_err(invalid)?;
                Ok(Clients::Cluster {
                    client,
                    nodes: nodes.clone(),
                })
            }
        }
    }

    /// A data connection, made lazily: it connects on first use. Must be called on a tokio
    /// runtime, which the connection's tasks then live on.
    fn connection(&self, op_timeout: Duration) -> Result<Conn, StoreError> {
        match self {
            Clients::Single { client, config, .. } => {
                ConnectionManager::new_lazy_with_config(client.clone(), (**config).clone())
                    .map(Conn::Manager)
                    .map_err(unavailable)
            }
            Clients::Cluster { client, .. } => Ok(Conn::Cluster(
                client.get_pending_async_connection_with_config(
                    ClusterConfig::new()
                        .set_connection_timeout(op_timeout)
                        .set_response_timeout(op_timeout),
                ),
            )),
        }
    }

    /// A new RESP3 connection for pub/sub whose push messages (and its disconnection) go
    /// to `pushes`. It does not reconnect by itself: the fan-out replaces it whole.
    async fn pubsub(
        &self,
        pushes: mpsc::UnboundedSender<PushInfo>,
        op_timeout: Duration,
    ) -> Result<Conn, RedisError> {
        match self {
            Clients::Single { pubsub, .. } => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(op_timeout))
                    .set_response_timeout(Some(op_timeout))
                    .set_push_sender(pushes);
                pubsub
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map(Conn::Plain)
            }
            Clients::Cluster { nodes, .. } => cluster_builder(nodes, op_timeout)
                .use_protocol(ProtocolVersion::RESP3)
                .push_sender(pushes)
                .build()?
                .get_async_connection()
                .await
                .map(Conn::Cluster),
        }
    }

    fn is_cluster(&self) -> bool {
        matches!(self, Clients::Cluster { .. })
    }
}

/// The store's connections, one pair per thread (see the module doc).
struct Connections {
    /// Boxed: large, and read only to make a connection.
    clients: Box<Clients>,
    op_timeout: Duration,
    /// Tells this store's connections apart from other stores' in a thread's list.
    id: u64,
    /// Alive as long as the store: a thread drops the connections of dropped stores.
    alive: Arc<()>,
}

/// One thread's connections of one store: `shared` carries everything, unless WAITs have
/// held it for [`WAIT_HOLDS_READS_AFTER`] without a break: then reads go on `reads` (made
/// the first time) until it is free again. Replicas that answer at once seldom hold it
/// that long (only back-to-back WAITs under full load do), and the thread has one
/// connection; a missing replica makes every WAIT hold it for most of the timeout, and the
/// thread's reads (views, spectators, the lobby) must not queue behind.
struct Pair {
    shared: Conn,
    reads: Option<Conn>,
    waits: Arc<Waits>,
}

/// How long a WAIT may hold a thread's shared connection before the thread's reads move
/// to a connection of their own: a replica answers WAIT within a millisecond or two.
const WAIT_HOLDS_READS_AFTER: Duration = Duration::from_millis(20);

/// The WAITs running on a thread's shared connection, and since when there have been any.
struct Waits {
    made: Instant,
    running: AtomicUsize,
    /// Microseconds after `made` when `running` last left 0.
    since_us: AtomicU64,
}

impl Waits {
    fn new() -> Waits {
        Waits {
            made: Instant::now(),
            running: AtomicUsize::new(0),
            since_us: AtomicU64::new(0),
        }
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.made.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Counts a WAIT in until the guard is dropped.
    fn enter(self: &Arc<Self>) -> WaitGuard {
        if self.running.fetch_add(1, Ordering::Relaxed) == 0 {
            self.since_us.store(self.now_us(), Ordering::Relaxed);
        }
        WaitGuard(self.clone())
    }

    /// Whether WAITs have held the connection, without a break, for longer than reads
    /// should wait.
    fn holding(&self) -> bool {
        self.running.load(Ordering::Relaxed) > 0
            && self
                .now_us()
                .saturating_sub(self.since_us.load(Ordering::Relaxed))
                > WAIT_HOLDS_READS_AFTER.as_micros() as u64
    }
}

/// A running WAIT (dropped when its write ends, timed out or cancelled).
struct WaitGuard(Arc<Waits>);

impl Drop for WaitGuard {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::Relaxed);
    }
}

thread_local! {
    /// This thread's connections: (store id, the store's liveness, connections).
    static CONNECTIONS: RefCell<Vec<(u64, Weak<()>, Pair)>> = const { RefCell::new(Vec::new()) };
}

impl Connections {
    fn new(clients: Clients, op_timeout: Duration) -> Connections {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Connections {
            clients: Box::new(clients),
            op_timeout,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
        }
    }

    /// This thread's connection for a read (or a write that does not wait for replicas):
    /// the shared one, unless a WAIT holds it.
    fn get(&self) -> Result<Conn, StoreError> {
        self.with_pair(|pair| {
            if !pair.waits.holding() {
                return Ok(pair.shared.clone());
            }
            match &pair.reads {
                Some(reads) => Ok(reads.clone()),
                None => {
                    let reads = self.clients.connection(self.op_timeout)?;
                    pair.reads = Some(reads.clone());
                    Ok(reads)
                }
            }
        })
    }

    /// This thread's shared connection: for writes that wait for replicas, and for reads
    /// that must follow them.
    fn writer(&self) -> Result<Conn, StoreError> {
        self.with_pair(|pair| Ok(pair.shared.clone()))
    }

    /// Counts a WAIT on this thread's shared connection in, until the guard is dropped.
    fn waiting(&self) -> Result<WaitGuard, StoreError> {
        self.with_pair(|pair| Ok(pair.waits.enter()))
    }

    /// Runs `f` on this thread's pair, made (lazily: it connects on first use) if there is
    /// none. Must be called on a tokio runtime, which the connections' tasks then live on.
    fn with_pair<T>(
        &self,
        f: impl FnOnce(&mut Pair) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        CONNECTIONS.with_borrow_mut(|conns| {
            if let Some((_, _, pair)) = conns.iter_mut().find(|(id, _, _)| *id == self.id) {
                return f(pair);
            }
            conns.retain(|(_, alive, _)| alive.strong_count() > 0);
            let pair = Pair {
                shared: self.clients.connection(self.op_timeout)?,
                reads: None,
                waits: Arc::new(Waits::new()),
            };
            conns.push((self.id, Arc::downgrade(&self.alive), pair));
            f(&mut conns.last_mut().expect("pushed above").2)
        })
    }
}

impl RedisStore {
    /// [`RedisStore::connect_to`] one Redis server, acknowledging writes without waiting
    /// for replicas.
    pub async fn connect(
        url: &str,
        key_prefix: &str,
        idle_ttl: Duration,
        op_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let target = RedisTarget::Single(url.to_owned());
        Self::connect_to(&target, key_prefix, idle_ttl, op_timeout, 0).await
    }

    /// Builds the store without waiting for Redis beyond one bounded PING: if Redis is
    /// down, the store is still returned (a warning is logged) and each call answers
    /// [`StoreError::Unavailable`] until Redis is back. Only a malformed URL fails here.
    /// `wait_replicas`: how many replicas must hold a write before it is acknowledged
    /// (see the module doc).
    ///
    /// Call it on the runtime that outlives the store (the server's main one): the
    /// connection's background tasks and the pub/sub reader are spawned there.
    pub async fn connect_to(
        target: &RedisTarget,
        key_prefix: &str,
        idle_ttl: Duration,
        op_timeout: Duration,
        wait_replicas: u32,
    ) -> Result<Self, StoreError> {
        let clients = Clients::new(target, op_timeout)?;
        let conns = Connections::new(clients.clone(), op_timeout);
        // A bad configuration shows here rather than at the first request.
        conns.get()?;
        let keys = Keys {
            prefix: key_prefix.to_owned(),
        };
        let store = RedisStore {
            conns,
            fanout: Arc::new(Fanout {
                clients,
                keys: keys.clone(),
                op_timeout,
                runtime: tokio::runtime::Handle::current(),
                state: Mutex::new(FanoutState::default()),
                opening: tokio::sync::Mutex::new(()),
            }),
            keys,
            idle_ttl_ms: u64::try_from(idle_ttl.as_millis())
                .unwrap_or(u64::MAX)
                .max(1),
            op_timeout,
            wait_replicas,
            create_script: Script::new(CREATE_LUA),
            save_script: Script::new(SAVE_LUA),
            deadline_script: Script::new(DEADLINE_LUA),
            vouch_script: Script::new(VOUCH_LUA),
            lease_script: Script::new(LEASE_LUA),
            release_script: Script::new(RELEASE_LUA),
            lobby: Box::new(LobbyScripts::new()),
        };
        if let Err(e) = store.ping().await {
            tracing::warn!(error = %e, "Redis does not answer yet; store calls will fail until it does");
        }
        Ok(store)
    }

    /// `redis` (one server) or `redis-cluster`, for logs and `/readyz`.
    pub fn mode(&self) -> &'static str {
        if self.conns.clients.is_cluster() {
            "redis-cluster"
        } else {
            "redis"
        }
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

    /// Runs a write script: EVALSHA (EVAL when the node does not know the script), and,
    /// when replicas must vouch for writes, WAIT in the same pipeline, so that it runs on
    /// the same connection right after the script. `args` writes the key count, the keys
    /// and the arguments. Returns the script's reply and how many replicas have the write
    /// (`None` when not asked).
    ///
    /// The cluster connection follows `MOVED` and `ASK` for a command, not inside a
    /// pipeline's replies: here a script answered `ASK` (its slot is being moved, and its
    /// keys are on the new master) is sent again there after `ASKING`, one answered
    /// `MOVED` is sent to the new owner, and one answered `TRYAGAIN` (its keys are split
    /// between the two masters for a moment) is sent again shortly, within the deadline.
    async fn write(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        what: &str,
        (script, source): (&Script, &str),
        args: impl Fn(&mut Cmd),
        replicated: bool,
    ) -> Result<(Value, Option<i64>), StoreError> {
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

    /// Sets (or drops) game `id`'s entry in the index of deadlines, for `version`. The
    /// index lives in another slot than the game, so this follows the save rather than
    /// joining its script; the version guard keeps a late, older write from undoing a
    /// newer one.
    async fn write_deadline(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        id: &str,
        version: u64,
        at: Option<u64>,
    ) -> Result<(), StoreError> {
        let (index, versions) = (self.keys.deadlines(), self.keys.deadline_versions());
        let at = at.map(|ms| ms.to_string()).unwrap_or_default();
        self.write(
            conn,
            deadline,
            "deadline",
            (&self.deadline_script, DEADLINE_LUA),
            |cmd| {
                cmd.arg(2)
                    .arg(&index)
                    .arg(&versions)
                    .arg(id)
                    .arg(version)
                    .arg(&at);
            },
            false,
        )
        .await
        .map(drop)
    }

    /// Game `id`'s stored value (version, events, blob), read on `conn`.
    async fn get_game(
        &self,
        mut conn: Conn,
        what: &str,
        id: &GameId,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.bounded(
            what,
            redis::cmd("GET")
                .arg(self.keys.game(id))
                .query_async(&mut conn),
        )
        .await
    }

    /// Game `id`, read on `conn`.
    async fn load_on(&self, conn: Conn, id: &GameId) -> Result<Option<Stored>, StoreError> {
        self.get_game(conn, "load", id)
            .await?
            .map(|value| parse_game_value(&value).ok_or_else(|| corrupt("game value")))
            .transpose()
    }

    /// After a write: fails unless enough replicas have it.
    fn vouched(&self, what: &str, acked: Option<i64>) -> Result<(), StoreError> {
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
/// the payload.
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
    async fn create_by(
        &self,
        id: &GameId,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let deadline = self.deadline();
        let value = game_value(1, &bytes);
        let (game, idem) = (self.keys.game(id), self.keys.idem(id));
        let (reply, acked) = self
            .write(
                &mut conn,
                deadline,
                "create",
                (&self.create_script, CREATE_LUA),
                |cmd| {
                    cmd.arg(2)
                        .arg(&game)
                        .arg(&idem)
                        .arg(&value)
                        .arg(self.idle_ttl_ms);
                },
                true,
            )
            .await?;
        let created = match reply {
            Value::Int(1) => true,
            Value::Int(0) => false,
            _ => return Err(corrupt("create reply")),
        };
        if !created {
            return Err(StoreError::Exists);
        }
        self.vouched("create", acked)?;
        if listing.is_none() && creator.is_none() {
            return Ok(());
        }
        let created_ms = listing.as_ref().map_or_else(now_ms, |l| l.created_ms);
        let listed = listing
            .as_ref()
            .map(|_| value.as_slice())
            .unwrap_or_default();
        let (owner, max) = listing.and_then(|l| l.owner).unwrap_or_default();
        let (by, most) = creator.map(|c| (c.address, c.max)).unwrap_or_default();
        let (reply, _) = self
            .write(
                &mut conn,
                deadline,
                "create",
                (&self.lobby.put, LOBBY_PUT_LUA),
                |cmd| {
                    cmd.arg(7)
                        .arg(self.keys.open())
                        .arg(self.keys.lobby())
                        .arg(self.keys.owners())
                        .arg(format!("{}{owner}", self.keys.by_owner()))
                        .arg(self.keys.creators())
                        .arg(self.keys.creator_ages())
                        .arg(format!("{}{by}", self.keys.by_creator()))
                        .arg(id)
                        .arg(created_ms)
                        .arg(listed)
                        .arg(&owner)
                        .arg(max)
                        .arg(now_ms().saturating_sub(self.idle_ttl_ms))
                        .arg(self.idle_ttl_ms)
                        .arg(&by)
                        .arg(most)
                        .arg(LOBBY_PRUNE_BATCH);
                },
                false,
            )
            .await?;
        match reply {
            Value::Int(1) => Ok(()),
            Value::Int(refused @ (0 | 2)) => {
                // Refused: the game must not stay behind, unlisted, for its whole ttl.
                let deleted = self
                    .bounded_until(
                        deadline,
                        "create",
                        redis::cmd("DEL")
                            .arg(&game)
                            .arg(&idem)
                            .exec_async(&mut conn),
                    )
                    .await;
                if let Err(e) = deleted {
                    tracing::warn!(game_id = %id, error = %e, "could not delete a game refused by the lobby's cap");
                }
                Err(if refused == 2 {
                    StoreError::TooManyGames { max: most }
                } else {
                    StoreError::TooManyWaiting { max }
                })
            }
            _ => Err(corrupt("lobby reply")),
        }
    }

    async fn load(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        self.load_on(self.conns.get()?, id).await
    }

    /// On the thread's shared connection, which its writes always take (never the one
    /// reads move to): Redis runs one connection's commands in order.
    async fn load_after_writes(&self, id: &GameId) -> Result<Option<Stored>, StoreError> {
        self.load_on(self.conns.writer()?, id).await
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
        let mut conn = self.conns.writer()?;
        let (game, idem, window, channel) = (
            self.keys.game(id),
            self.keys.idem(id),
            self.keys.idem_window(id, save.seat),
            self.keys.channel(id),
        );
        let (reply, acked) = self
            .write(
                &mut conn,
                deadline,
                "save",
                (&self.save_script, SAVE_LUA),
                |cmd| {
                    cmd.arg(3)
                        .arg(&game)
                        .arg(&idem)
                        .arg(&window)
                        .arg(version_text(save.expected))
                        .arg(version_text(version))
                        .arg(&save.bytes)
                        .arg(self.idle_ttl_ms)
                        .arg(if save.finished { 1 } else { EVENT_HISTORY })
                        .arg(&channel)
                        .arg(&event)
                        .arg(has_record)
                        .arg(record_key)
                        .arg(&record)
                        .arg(IDEMPOTENCY_WINDOW);
                },
                true,
            )
            .await?;
        let reply: Vec<i64> = redis::from_redis_value(reply).map_err(|_| corrupt("save reply"))?;
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
        // Only a deadline that comes sooner is indexed: one that moves later (most moves)
        // leaves the earlier entry, which the sweep corrects when it comes due.
        if let (SaveOutcome::Saved { version }, Some(at)) =
            (&outcome, save.deadline.and_then(|d| d.sooner()))
        {
            let written = self
                .write_deadline(&mut conn, deadline, id, *version, Some(at))
                .await;
            if let Err(e) = written {
                tracing::warn!(game_id = %id, error = %e, "saved, but could not index the game's clock deadline");
            }
        }
        if matches!(outcome, SaveOutcome::Saved { .. }) {
            self.vouched("save", acked)?;
        }
        if let SaveOutcome::Saved { version } = outcome
            && (save.unlist || save.relist)
        {
            let lobby = if save.unlist {
                self.write(
                    &mut conn,
                    deadline,
                    "unlist",
                    (&self.lobby.drop.0, &self.lobby.drop.1),
                    |cmd| {
                        cmd.arg(3)
                            .arg(self.keys.open())
                            .arg(self.keys.lobby())
                            .arg(self.keys.owners())
                            .arg(id)
                            .arg(self.keys.by_owner());
                    },
                    false,
                )
                .await
            } else {
                let value = game_value(version, &save.bytes);
                self.write(
                    &mut conn,
                    deadline,
                    "relist",
                    (&self.lobby.update, LOBBY_UPDATE_LUA),
                    |cmd| {
                        cmd.arg(1)
                            .arg(self.keys.lobby())
                            .arg(id)
                            .arg(version_text(version))
                            .arg(&value);
                    },
                    false,
                )
                .await
            };
            if let Err(e) = lobby {
                // The save is the truth; the lobby entry is pruned after the idle ttl.
                tracing::warn!(game_id = %id, error = %e, "saved, but could not update the game's lobby entry");
            }
        }
        if save.finished && matches!(outcome, SaveOutcome::Saved { .. }) {
            let freed = self
                .write(
                    &mut conn,
                    deadline,
                    "free",
                    (&self.lobby.free, LOBBY_FREE_LUA),
                    |cmd| {
                        cmd.arg(2)
                            .arg(self.keys.creators())
                            .arg(self.keys.creator_ages())
                            .arg(id)
                            .arg(self.keys.by_creator());
                    },
                    false,
                )
                .await;
            if let Err(e) = freed {
                // Counted until it goes stale, one idle ttl after it was created.
                tracing::warn!(game_id = %id, error = %e, "finished, but could not take the game off its creator's count");
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

    async fn list_open(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, Stored)>, StoreError> {
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
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "list_open",
                (&self.lobby.list.0, &self.lobby.list.1),
                |cmd| {
                    cmd.arg(3)
                        .arg(self.keys.open())
                        .arg(self.keys.lobby())
                        .arg(self.keys.owners())
                        .arg("")
                        .arg(self.keys.by_owner())
                        .arg(cutoff)
                        .arg(offset)
                        .arg(last)
                        .arg(LOBBY_PRUNE_BATCH);
                },
                false,
            )
            .await?;
        let flat: Vec<Vec<u8>> =
            redis::from_redis_value(reply).map_err(|_| corrupt("lobby reply"))?;
        flat.chunks_exact(2)
            .map(|pair| {
                let id = String::from_utf8(pair[0].clone()).map_err(|_| corrupt("lobby id"))?;
                let stored = parse_game_value(&pair[1]).ok_or_else(|| corrupt("lobby entry"))?;
                Ok((id, stored))
            })
            .collect()
    }

    async fn events_since(&self, id: &GameId, after: u64) -> Result<Vec<Event>, StoreError> {
        let value = self.get_game(self.conns.get()?, "events_since", id).await?;
        let events = match value {
            Some(value) => parse_game_events(&value).ok_or_else(|| corrupt("events"))?,
            None => Vec::new(),
        };
        Ok(events.into_iter().filter(|e| e.version > after).collect())
    }

    async fn subscribe(&self, id: &GameId) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(id).await
    }

    async fn due_between(
        &self,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "due",
            redis::cmd("ZRANGE")
                .arg(self.keys.deadlines())
                .arg(from)
                .arg(to)
                .arg("BYSCORE")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .query_async(&mut conn),
        )
        .await
    }

    async fn index_deadline(
        &self,
        id: &GameId,
        version: u64,
        at: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.write_deadline(&mut conn, self.deadline(), id, version, at)
            .await
    }

    async fn lease(&self, id: &GameId, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut conn = self.conns.get()?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "lease",
                (&self.lease_script, LEASE_LUA),
                |cmd| {
                    cmd.arg(1).arg(self.keys.lease(id)).arg(holder).arg(ttl_ms);
                },
                false,
            )
            .await?;
        match reply {
            Value::Int(held) => Ok(held == 1),
            _ => Err(corrupt("lease reply")),
        }
    }

    async fn release(&self, id: &GameId, holder: &str) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.write(
            &mut conn,
            self.deadline(),
            "release",
            (&self.release_script, RELEASE_LUA),
            |cmd| {
                cmd.arg(1).arg(self.keys.lease(id)).arg(holder);
            },
            false,
        )
        .await
        .map(drop)
    }

    async fn publish_lobby(&self, event: Event) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "lobby news",
            redis::cmd("SPUBLISH")
                .arg(self.keys.channel(LOBBY_CHANNEL))
                .arg(encode_event(event.version, &event.payload))
                .exec_async(&mut conn),
        )
        .await
    }

    async fn subscribe_lobby(&self) -> Result<EventStream, StoreError> {
        self.fanout.subscribe(LOBBY_CHANNEL).await
    }

    /// The vouch script (the evidence checked, the game's expiry set again: a write of the
    /// game's slot), then WAIT on the same connection: Redis replicates one ordered stream
    /// per master, so the replicas that confirm this write hold every earlier write of the
    /// game too, and the node that checked the evidence is the one they replicate.
    async fn vouch(&self, id: &GameId, evidence: Evidence<'_>) -> Result<(), StoreError> {
        if self.wait_replicas == 0 {
            return Ok(());
        }
        let mut conn = self.conns.writer()?;
        let (game, idem) = (self.keys.game(id), self.keys.idem(id));
        let (kind, what, bytes) = match evidence {
            Evidence::Record(key) => ("record", key.to_owned(), &[][..]),
            Evidence::Stored { version, bytes } => ("stored", version_text(version), bytes),
        };
        let (reply, acked) = self
            .write(
                &mut conn,
                self.deadline(),
                "vouch",
                (&self.vouch_script, VOUCH_LUA),
                |cmd| {
                    cmd.arg(2)
                        .arg(&game)
                        .arg(&idem)
                        .arg(kind)
                        .arg(&what)
                        .arg(bytes)
                        .arg(self.idle_ttl_ms);
                },
                true,
            )
            .await?;
        match reply {
            Value::Int(1) => self.vouched("game", acked),
            Value::Int(0) => Err(StoreError::Unreplicated(
                "the game no longer holds what was to be vouched for".into(),
            )),
            _ => Err(corrupt("vouch reply")),
        }
    }

    /// PING, and in cluster mode the cluster's own view of its health (`cluster_state:ok`
    /// means every slot is served). When writes must reach replicas, also which masters
    /// have fewer of them online than that (each of their writes would answer 503).
    async fn ping(&self) -> Result<Health, StoreError> {
        let mut conn = self.conns.get()?;
        let deadline = self.deadline();
        self.bounded_until(deadline, "PING", redis::cmd("PING").exec_async(&mut conn))
            .await?;
        if self.conns.clients.is_cluster() {
            let info: String = self
                .bounded_until(
                    deadline,
                    "CLUSTER INFO",
                    redis::cmd("CLUSTER").arg("INFO").query_async(&mut conn),
                )
                .await?;
            let state = info
                .lines()
                .find_map(|line| line.strip_prefix("cluster_state:"))
                .map(str::trim);
            if state != Some("ok") {
                return Err(StoreError::Unavailable(format!(
                    "the Redis Cluster says its state is {}",
                    state.unwrap_or("unknown")
                )));
            }
        }
        let mut health = Health::default();
        if self.wait_replicas == 0 {
            return Ok(health);
        }
        let mut info = redis::cmd("INFO");
        info.arg("replication");
        let masters: Vec<(String, String)> = match &mut conn {
            Conn::Cluster(c) => {
                let all = RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None));
                let reply = self
                    .bounded_until(deadline, "INFO replication", c.route_command(info, all))
                    .await?;
                redis::from_redis_value(reply).map_err(|_| corrupt("INFO reply"))?
            }
            conn => {
                let reply: String = self
                    .bounded_until(deadline, "INFO replication", info.query_async(conn))
                    .await?;
                vec![("Redis".to_owned(), reply)]
            }
        };
        for (node, info) in masters {
            let online = online_replicas(&info);
            if online < self.wait_replicas as usize {
                health.degraded.push(format!(
                    "{node} has {online} of the {} replicas each write must reach \
                     (REDIS_WAIT_REPLICAS): moves of its games answer 503",
                    self.wait_replicas
                ));
            }
        }
        Ok(health)
    }
}

/// Replicas a master's `INFO replication` lists as online (`slaveN:...,state=online,...`).
fn online_replicas(info: &str) -> usize {
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("state=online"))
        .count()
}

impl Drop for RedisStore {
    fn drop(&mut self) {
        let mut state = self.fanout.lock();
        if let Some(live) = state.live.take() {
            live.reader.abort();
        }
    }
}

/// The local side of the one pub/sub connection: who listens to which game.
struct Fanout {
    clients: Clients,
    keys: Keys,
    op_timeout: Duration,
    /// The runtime the store was built on: the connection and its reader live there, not
    /// on whichever (possibly short-lived) runtime the first subscriber happens to run on.
    runtime: tokio::runtime::Handle,
    state: Mutex<FanoutState>,
    /// Held while a pub/sub connection is being opened, so that only one is.
    opening: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct FanoutState {
    /// The pub/sub connection, while it is believed alive.
    live: Option<Live>,
    /// Counts connections, so that news of a lost one never ends a newer one's streams.
    generation: u64,
    channels: HashMap<String, Channel>,
}

struct Live {
    conn: Conn,
    generation: u64,
    reader: JoinHandle<()>,
}

/// One game's local subscribers, and whether its SSUBSCRIBE has been confirmed.
struct Channel {
    tx: broadcast::Sender<Event>,
    /// Becomes true once Redis confirmed the subscription; dropped (closed) if it failed.
    confirmed: watch::Receiver<bool>,
    generation: u64,
}

impl Fanout {
    fn lock(&self) -> MutexGuard<'_, FanoutState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The live pub/sub connection, opened if there is none.
    async fn connection(self: &Arc<Self>) -> Result<(Conn, u64), StoreError> {
        if let Some(live) = &self.lock().live {
            return Ok((live.conn.clone(), live.generation));
        }
        let _opening = self.opening.lock().await;
        if let Some(live) = &self.lock().live {
            return Ok((live.conn.clone(), live.generation));
        }
        let (pushes, received) = mpsc::unbounded_channel();
        let clients = self.clients.clone();
        let op_timeout = self.op_timeout;
        // Opened on the store's runtime, where its tasks must live.
        let opened = self
            .runtime
            .spawn(async move { clients.pubsub(pushes, op_timeout).await });
        let conn = match tokio::time::timeout(self.op_timeout, opened).await {
            Ok(Ok(Ok(conn))) => conn,
            Ok(Ok(Err(e))) => return Err(unavailable(e)),
            Ok(Err(_)) | Err(_) => {
                return Err(StoreError::Unavailable(
                    "timed out opening the pub/sub connection".into(),
                ));
            }
        };
        let mut state = self.lock();
        state.generation += 1;
        let generation = state.generation;
        let reader = self.runtime.spawn(read(
            Arc::downgrade(self),
            generation,
            received,
            conn.clone(),
        ));
        state.live = Some(Live {
            conn: conn.clone(),
            generation,
            reader,
        });
        Ok((conn, generation))
    }

    /// Registers a local subscriber once Redis has confirmed the game's subscription, so
    /// that no event saved after this returns can be missed; waits at most `op_timeout`.
    async fn subscribe(self: &Arc<Self>, id: &str) -> Result<EventStream, StoreError> {
        let deadline = tokio::time::Instant::now() + self.op_timeout;
        let (conn, generation) = self.connection().await?;
        let (rx, mut confirmed, confirm) = {
            let mut state = self.lock();
            match state.channels.get(id) {
                Some(channel) if channel.generation == generation => {
                    (channel.tx.subscribe(), channel.confirmed.clone(), None)
                }
                _ => {
                    let (tx, rx) = broadcast::channel(SUBSCRIBER_BUFFER);
                    let (confirm, confirmed) = watch::channel(false);
                    state.channels.insert(
                        id.to_owned(),
                        Channel {
                            tx,
                            confirmed: confirmed.clone(),
                            generation,
                        },
                    );
                    (rx, confirmed, Some(confirm))
                }
            }
        };
        if let Some(confirm) = confirm {
            // Registered before SSUBSCRIBE is sent, so that no message is dropped between
            // the subscription and the registration.
            let mut conn = conn;
            let subscribed = tokio::time::timeout_at(
                deadline,
                redis::cmd("SSUBSCRIBE")
                    .arg(self.keys.channel(id))
                    .exec_async(&mut conn),
            )
            .await;
            match subscribed {
                Ok(Ok(())) => {
                    confirm.send_replace(true);
                }
                failed => {
                    self.forget(id, generation);
                    self.lost(generation, "SSUBSCRIBE failed");
                    return Err(match failed {
                        Ok(Err(e)) => unavailable(e),
                        _ => StoreError::Unavailable(format!(
                            "Redis did not confirm the event subscription within {:?}",
                            self.op_timeout
                        )),
                    });
                }
            }
        } else if tokio::time::timeout_at(deadline, confirmed.wait_for(|ok| *ok))
            .await
            .map_or(true, |r| r.is_err())
        {
            return Err(StoreError::Unavailable(
                "the Redis event subscription was not confirmed".into(),
            ));
        }
        Ok(receiver_stream(rx))
    }

    /// Drops a game's local channel (ending its streams) if it is still of `generation`.
    fn forget(&self, id: &str, generation: u64) {
        let mut state = self.lock();
        if state
            .channels
            .get(id)
            .is_some_and(|c| c.generation == generation)
        {
            state.channels.remove(id);
        }
    }

    /// The connection of `generation` is lost: every stream it fed ends (events published
    /// meanwhile are gone, so clients must resume from the history), and the next
    /// subscriber opens a new one.
    fn lost(&self, generation: u64, reason: &str) {
        let mut state = self.lock();
        if state
            .live
            .as_ref()
            .is_some_and(|l| l.generation == generation)
        {
            if let Some(live) = state.live.take() {
                live.reader.abort();
            }
            tracing::warn!(
                reason,
                "lost the Redis event subscription; it reopens on the next subscriber"
            );
        }
        state.channels.retain(|_, c| c.generation != generation);
    }

    fn dispatch(&self, generation: u64, push: PushInfo) -> Result<(), &'static str> {
        let channel_of = |data: &[Value]| match data.first() {
            Some(Value::BulkString(name)) => String::from_utf8(name.clone()).ok(),
            _ => None,
        };
        match push.kind {
            PushKind::SMessage => {
                let (Some(channel), Some(Value::BulkString(payload))) =
                    (channel_of(&push.data), push.data.get(1))
                else {
                    return Ok(());
                };
                let Some(id) = self.keys.id_of_channel(&channel) else {
                    return Ok(());
                };
                let Some(event) = decode_event(payload) else {
                    tracing::warn!(game_id = %id, "ignored a malformed event message");
                    return Ok(());
                };
                let mut state = self.lock();
                if let Some(c) = state.channels.get(id)
                    && c.generation == generation
                    && c.tx.send(event).is_err()
                    && *c.confirmed.borrow()
                {
                    state.channels.remove(id);
                }
                Ok(())
            }
            // Redis moved the channel's slot away (resharding): its subscribers must
            // resubscribe, and catch up from the history.
            PushKind::SUnsubscribe => {
                if let Some(channel) = channel_of(&push.data)
                    && let Some(id) = self.keys.id_of_channel(&channel)
                {
                    let mut state = self.lock();
                    if state
                        .channels
                        .get(id)
                        .is_some_and(|c| c.generation == generation && *c.confirmed.borrow())
                    {
                        state.channels.remove(id);
                    }
                }
                Ok(())
            }
            PushKind::Disconnection => Err("a node's connection closed"),
            _ => Ok(()),
        }
    }
}

/// The reader of one pub/sub connection: hands each message to the local subscribers,
/// checks the connection with a PING and unsubscribes from games nobody here listens to
/// any more. It holds the fan-out only weakly, so it stops once the store is gone.
async fn read(
    fanout: Weak<Fanout>,
    generation: u64,
    mut pushes: mpsc::UnboundedReceiver<PushInfo>,
    mut conn: Conn,
) {
    let mut health = tokio::time::interval(PUBSUB_HEALTH_EVERY);
    health.tick().await;
    let reason = loop {
        tokio::select! {
            push = pushes.recv() => {
                let Some(push) = push else { break "connection closed" };
                let Some(strong) = fanout.upgrade() else { return };
                if let Err(reason) = strong.dispatch(generation, push) {
                    break reason;
                }
            }
            _ = health.tick() => {
                let Some(strong) = fanout.upgrade() else { return };
                let idle: Vec<String> = {
                    let mut state = strong.lock();
                    let mut idle = Vec::new();
                    state.channels.retain(|id, c| {
                        let keep = c.generation != generation
                            || c.tx.receiver_count() > 0
                            || !*c.confirmed.borrow();
                        if !keep {
                            idle.push(strong.keys.channel(id));
                        }
                        keep
                    });
                    idle
                };
                let op_timeout = strong.op_timeout;
                drop(strong);
                // In a cluster, one SUNSUBSCRIBE per channel: each goes to its slot's node.
                for channel in idle {
                    let unsubscribed = tokio::time::timeout(
                        op_timeout,
                        redis::cmd("SUNSUBSCRIBE").arg(channel).exec_async(&mut conn),
                    )
                    .await;
                    if !matches!(unsubscribed, Ok(Ok(()))) {
                        break;
                    }
                }
                let ping = tokio::time::timeout(
                    op_timeout,
                    redis::cmd("PING").query_async::<Value>(&mut conn),
                )
                .await;
                if !matches!(ping, Ok(Ok(_))) {
                    break "PING failed";
                }
            }
        }
    };
    if let Some(strong) = fanout.upgrade() {
        strong.lost(generation, reason);
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
    fn keys_share_one_hash_tag() {
        let keys = Keys {
            prefix: "t*[x]:".into(),
        };
        for key in [keys.game("g1"), keys.idem("g1"), keys.channel("g1")] {
            assert!(key.contains("{g1}"), "{key}");
        }
        assert_eq!(keys.id_of_channel(&keys.channel("g1")), Some("g1"));
        assert_eq!(keys.id_of_channel("other:events:{g1}"), None);
    }
}
