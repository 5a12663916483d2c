//! The Redis store: what lets any number of server processes share games, on one Redis or
//! on a Redis Cluster, with the same commands, scripts and keys in both modes. Every write
//! of a game is one Lua script on the game's one slot, so a crash never leaves a move
//! stored without its idempotency record or its event.
//!
//! The design (keys, the stored format, the lobby and deadline indexes, durability across
//! a failover, connections, live events) is in `docs/architecture.md`, section "The store:
//! Redis and Redis Cluster". Nothing here logs a blob, an event payload or an idempotency
//! record: they hold hidden tiles and answers meant for one seat.

mod challenges;
mod claims;
mod connection;
mod format;
mod keys;
mod leagues;
mod lobby;
mod players;
mod pubsub;
mod ratings;
mod scripts;
mod seeks;
mod tournaments;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::Value;

use self::connection::corrupt;
use self::connection::{Clients, Conn, Connections};
use self::format::{decode_record, encode_record};
use self::keys::Keys;
use self::pubsub::{Fanout, FanoutState};
use self::scripts::Scripts;
pub use self::scripts::save_script_source;
use super::{
    Creator, EventStream, Evidence, GameKey, GameNow, GameStore, Health, IDEMPOTENCY_WINDOW,
    IdempotencyRecord, LOBBY_CHANNEL, Listing, Save, SaveOutcome, StoreError, Stored, StoredEvent,
    StoredGame, now_ms,
};
use crate::value::{
    History, encode_event, events_of, game_value, header, parse_game, version_text,
};

/// Where the store's Redis is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// One Redis server, by URL (`REDIS_URL`).
    Single(String),
    /// A Redis Cluster, by the URLs of some of its nodes (`REDIS_CLUSTER_NODES`); the
    /// others are found from them.
    Cluster(Vec<String>),
}

/// The shared game store on Redis (one server or a cluster).
pub struct RedisStore {
    conns: Connections,
    keys: Keys,
    idle_ttl_ms: u64,
    op_timeout: Duration,
    /// Replicas that must hold a write before it is acknowledged (0: none).
    wait_replicas: u32,
    /// Boxed: large, and read once per call.
    scripts: Box<Scripts>,
    player_scripts: Box<players::PlayerScripts>,
    challenge_scripts: Box<challenges::ChallengeScripts>,
    tournament_scripts: Box<tournaments::TournamentScripts>,
    seek_scripts: Box<seeks::SeekScripts>,
    rating_scripts: Box<ratings::RatingScripts>,
    fanout: Arc<Fanout>,
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
    /// (see `docs/architecture.md`).
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
            scripts: Box::new(Scripts::new()),
            player_scripts: Box::new(players::PlayerScripts::new()),
            challenge_scripts: Box::new(challenges::ChallengeScripts::new()),
            tournament_scripts: Box::new(tournaments::TournamentScripts::new()),
            seek_scripts: Box::new(seeks::SeekScripts::new()),
            rating_scripts: Box::new(ratings::RatingScripts::new()),
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
        only_sooner: bool,
    ) -> Result<(), StoreError> {
        let (index, versions) = (self.keys.deadlines(), self.keys.deadline_versions());
        let at = at.map(|ms| ms.to_string()).unwrap_or_default();
        self.write(
            conn,
            deadline,
            "deadline",
            &self.scripts.deadline,
            |cmd| {
                cmd.arg(2)
                    .arg(&index)
                    .arg(&versions)
                    .arg(id)
                    .arg(version)
                    .arg(&at)
                    .arg(if only_sooner { "1" } else { "" });
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
        id: &GameKey,
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
    async fn load_on(&self, conn: Conn, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        self.get_game(conn, "load", id)
            .await?
            .map(|value| parse_game(&value).ok_or_else(|| corrupt("game value")))
            .transpose()
    }
}

impl GameStore for RedisStore {
    async fn create_by(
        &self,
        id: &GameKey,
        bytes: Vec<u8>,
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.writer()?;
        let deadline = self.deadline();
        let value = game_value(1, &History::default(), &bytes);
        let (game, idem) = (self.keys.game(id), self.keys.idem(id));
        let (reply, acked) = self
            .write(
                &mut conn,
                deadline,
                "create",
                &self.scripts.create,
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
        self.confirmed("create", acked)?;
        // Listed, or else in play from the start: the lobby's slot hears of it either way.
        self.put_in_lobby(
            &mut conn,
            deadline,
            id,
            (&game, &idem),
            &value,
            listing,
            creator,
        )
        .await
    }

    async fn load(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        self.load_on(self.conns.get()?, id).await
    }

    /// On the thread's shared connection, which its writes always take (never the one
    /// reads move to): Redis runs one connection's commands in order.
    async fn load_after_writes(&self, id: &GameKey) -> Result<Option<StoredGame>, StoreError> {
        self.load_on(self.conns.writer()?, id).await
    }

    async fn save(&self, id: &GameKey, save: Save) -> Result<SaveOutcome<GameNow>, StoreError> {
        let version = save.expected + 1;
        let deadline = self.deadline();
        let mut conn = self.conns.writer()?;
        // A deadline that comes sooner (bots to move, a clock) is indexed before the save
        // (the index is in another slot: not one script): should this process stop right
        // after the save, the other processes' sweeps still find the game. Only sooner:
        // should the save lose its race, the winner's deadline may be later, and an early
        // entry costs a sweep one look that corrects it, where a late one leaves the game
        // waiting.
        if let Some(at) = save.deadline.and_then(|d| d.sooner()) {
            self.write_deadline(&mut conn, deadline, id, version, Some(at), true)
                .await?;
        }
        // Without the history the caller loaded, the game's own, read first: the save
        // still compares the version, so a game that moved on meanwhile is refused.
        // (Boxed, the rare read: a move's future, which actix copies whole, keeps its size.)
        let (expected, value) = match &save.history {
            Some(history) => (header(save.expected, history), save.value_from(history)),
            None => match Box::pin(self.get_game(self.conns.writer()?, "save", id)).await? {
                Some(value) => {
                    let read = parse_game(&value).ok_or_else(|| corrupt("game value"))?;
                    let history = &read.history;
                    (header(save.expected, history), save.value_from(history))
                }
                None => return Ok(SaveOutcome::Missing),
            },
        };
        let event = save
            .event
            .as_deref()
            .map(|payload| encode_event(version, payload))
            .unwrap_or_default();
        let (has_record, record_key, record) = match &save.idempotency {
            Some(record) => ("1", record.key.as_str(), encode_record(record)),
            None => ("0", "", Vec::new()),
        };
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
                &self.scripts.save,
                |cmd| {
                    cmd.arg(3)
                        .arg(&game)
                        .arg(&idem)
                        .arg(&window)
                        .arg(&expected)
                        .arg(&value)
                        .arg(self.idle_ttl_ms)
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
        let Value::Array(reply) = reply else {
            return Err(corrupt("save reply"));
        };
        let outcome = match reply.as_slice() {
            [Value::Int(1)] => SaveOutcome::Saved { version },
            [Value::Int(0), Value::BulkString(current), made] => SaveOutcome::Conflict {
                current: GameNow {
                    stored: parse_game(current).ok_or_else(|| corrupt("game value"))?,
                    made: match (made, &save.idempotency) {
                        (Value::Nil | Value::Boolean(false), _) => None,
                        (Value::BulkString(raw), Some(record)) => Some(
                            decode_record(&record.key, raw)
                                .ok_or_else(|| corrupt("idempotency record"))?,
                        ),
                        _ => return Err(corrupt("save reply")),
                    },
                },
            },
            [Value::Int(-1), _] => SaveOutcome::Missing,
            _ => return Err(corrupt("save reply")),
        };
        // A deadline that moves later (most moves) leaves the earlier entry, which the
        // sweep corrects when it comes due.
        if matches!(outcome, SaveOutcome::Saved { .. }) {
            self.confirmed("save", acked)?;
        }
        if let SaveOutcome::Saved { version } = outcome
            && (save.unlist || save.relist)
        {
            self.unlist_or_relist(&mut conn, deadline, id, &save, version)
                .await;
        }
        if save.finished && matches!(outcome, SaveOutcome::Saved { .. }) {
            self.note_finished(&mut conn, deadline, id).await;
        }
        Ok(outcome)
    }

    async fn idempotency(
        &self,
        id: &GameKey,
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
        self.lobby_page(offset, limit).await
    }

    async fn list_playing(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        self.playing_page(offset, limit).await
    }

    async fn list_finished(&self, offset: usize, limit: usize) -> Result<Vec<String>, StoreError> {
        // The set holds FINISHED_KEPT at most: an offset past it lists nothing.
        if limit == 0 || offset >= crate::FINISHED_KEPT {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.get()?;
        self.bounded(
            "list_finished",
            redis::cmd("ZREVRANGE")
                .arg(self.keys.finished())
                .arg(offset)
                .arg(offset.saturating_add(limit).min(crate::FINISHED_KEPT) - 1)
                .query_async(&mut conn),
        )
        .await
    }

    async fn events_since(&self, id: &GameKey, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let value = self.get_game(self.conns.get()?, "events_since", id).await?;
        let events = match value {
            Some(value) => events_of(&value).ok_or_else(|| corrupt("events"))?,
            None => Vec::new(),
        };
        Ok(events.into_iter().filter(|e| e.version > after).collect())
    }

    async fn subscribe(&self, id: &GameKey) -> Result<EventStream, StoreError> {
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
        id: &GameKey,
        version: u64,
        at: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.write_deadline(&mut conn, self.deadline(), id, version, at, false)
            .await
    }

    async fn lease(&self, id: &GameKey, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        let mut conn = self.conns.get()?;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "lease",
                &self.scripts.lease,
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

    async fn release(&self, id: &GameKey, holder: &str) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.write(
            &mut conn,
            self.deadline(),
            "release",
            &self.scripts.release,
            |cmd| {
                cmd.arg(1).arg(self.keys.lease(id)).arg(holder);
            },
            false,
        )
        .await
        .map(drop)
    }

    async fn publish_lobby(&self, event: StoredEvent) -> Result<(), StoreError> {
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

    /// The confirm script (the evidence checked, the game's expiry set again: a write of the
    /// game's slot), then WAIT on the same connection: Redis replicates one ordered stream
    /// per master, so the replicas that confirm this write hold every earlier write of the
    /// game too, and the node that checked the evidence is the one they replicate.
    async fn confirm(&self, id: &GameKey, evidence: Evidence<'_>) -> Result<(), StoreError> {
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
                "confirm",
                &self.scripts.confirm,
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
            Value::Int(1) => self.confirmed("game", acked),
            Value::Int(0) => Err(StoreError::Unreplicated(
                "the game no longer holds what was to be confirmed".into(),
            )),
            _ => Err(corrupt("confirm reply")),
        }
    }

    /// PING, and in cluster mode the cluster's own view of its health (`cluster_state:ok`
    /// means every slot is served). When writes must reach replicas, also which masters
    /// have fewer of them online than that (each of their writes would answer 503).
    async fn ping(&self) -> Result<Health, StoreError> {
        self.health().await
    }
}
