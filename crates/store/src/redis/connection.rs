//! The store's connections, cluster or single: what they are made from (the only place the
//! two modes differ), one pair per thread that uses the store, and the health check that
//! asks the server (or the cluster) how it is.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use redis::aio::{
    ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection,
};
use redis::cluster::{ClusterClient, ClusterClientBuilder, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{MultipleNodeRoutingInfo, RoutingInfo, SingleNodeRoutingInfo};
use redis::{
    AsyncConnectionConfig, Client, Cmd, ErrorKind, IntoConnectionInfo, Pipeline, ProtocolVersion,
    PushInfo, RedisError, RedisFuture, Value,
};
use tokio::sync::mpsc;

use super::{RedisStore, RedisTarget};
use crate::{Health, StoreError};

/// What the store makes its connections from: the only place the two modes differ.
#[derive(Clone)]
pub(super) enum Clients {
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
pub(super) enum Conn {
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
    pub(super) async fn pipeline_to(
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
pub(super) fn cluster_builder(nodes: &[String], op_timeout: Duration) -> ClusterClientBuilder {
    ClusterClientBuilder::new(nodes.to_vec())
        .connection_timeout(op_timeout)
        .response_timeout(op_timeout)
        .overall_response_timeout(None)
        .retries(5)
        .min_retry_wait(10)
        .max_retry_wait(250)
}

impl Clients {
    pub(super) fn new(target: &RedisTarget, op_timeout: Duration) -> Result<Clients, StoreError> {
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
    pub(super) fn connection(&self, op_timeout: Duration) -> Result<Conn, StoreError> {
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
    pub(super) async fn pubsub(
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

    pub(super) fn is_cluster(&self) -> bool {
        matches!(self, Clients::Cluster { .. })
    }
}

/// The store's connections, one pair per thread (see `docs/architecture.md`).
pub(super) struct Connections {
    /// Boxed: large, and read only to make a connection.
    pub(super) clients: Box<Clients>,
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
pub(super) struct Pair {
    shared: Conn,
    reads: Option<Conn>,
    waits: Arc<Waits>,
}

/// How long a WAIT may hold a thread's shared connection before the thread's reads move
/// to a connection of their own: a replica answers WAIT within a millisecond or two.
pub(super) const WAIT_HOLDS_READS_AFTER: Duration = Duration::from_millis(20);

/// The WAITs running on a thread's shared connection, and since when there have been any.
pub(super) struct Waits {
    made: Instant,
    running: AtomicUsize,
    /// Microseconds after `made` when `running` last left 0.
    since_us: AtomicU64,
}

impl Waits {
    pub(super) fn new() -> Waits {
        Waits {
            made: Instant::now(),
            running: AtomicUsize::new(0),
            since_us: AtomicU64::new(0),
        }
    }

    pub(super) fn now_us(&self) -> u64 {
        u64::try_from(self.made.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Counts a WAIT in until the guard is dropped.
    pub(super) fn enter(self: &Arc<Self>) -> WaitGuard {
        if self.running.fetch_add(1, Ordering::Relaxed) == 0 {
            self.since_us.store(self.now_us(), Ordering::Relaxed);
        }
        WaitGuard(self.clone())
    }

    /// Whether WAITs have held the connection, without a break, for longer than reads
    /// should wait.
    pub(super) fn holding(&self) -> bool {
        self.running.load(Ordering::Relaxed) > 0
            && self
                .now_us()
                .saturating_sub(self.since_us.load(Ordering::Relaxed))
                > WAIT_HOLDS_READS_AFTER.as_micros() as u64
    }
}

/// A running WAIT (dropped when its write ends, timed out or cancelled).
pub(super) struct WaitGuard(Arc<Waits>);

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
    pub(super) fn new(clients: Clients, op_timeout: Duration) -> Connections {
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
    pub(super) fn get(&self) -> Result<Conn, StoreError> {
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
    pub(super) fn writer(&self) -> Result<Conn, StoreError> {
        self.with_pair(|pair| Ok(pair.shared.clone()))
    }

    /// Counts a WAIT on this thread's shared connection in, until the guard is dropped.
    pub(super) fn waiting(&self) -> Result<WaitGuard, StoreError> {
        self.with_pair(|pair| Ok(pair.waits.enter()))
    }

    /// Runs `f` on this thread's pair, made (lazily: it connects on first use) if there is
    /// none. Must be called on a tokio runtime, which the connections' tasks then live on.
    pub(super) fn with_pair<T>(
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

/// Replicas a master's `INFO replication` lists as online (`slaveN:...,state=online,...`).
pub(super) fn online_replicas(info: &str) -> usize {
    info.lines()
        .filter(|line| line.starts_with("slave") && line.contains("state=online"))
        .count()
}

impl RedisStore {
    /// PING, and in cluster mode the cluster's own view of its health (`cluster_state:ok`
    /// means every slot is served). When writes must reach replicas, also which masters
    /// have fewer of them online than that (each of their writes would answer 503).
    pub(super) async fn health(&self) -> Result<Health, StoreError> {
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

/// Maps a Redis error to `Unavailable`. Replies that did not parse are described by kind
/// only: the error text could quote the reply, which may hold a blob.
pub(super) fn unavailable(e: RedisError) -> StoreError {
    match e.kind() {
        ErrorKind::Parse | ErrorKind::UnexpectedReturnType => {
            StoreError::Unavailable(format!("unexpected reply from Redis ({:?})", e.kind()))
        }
        _ => StoreError::Unavailable(e.to_string()),
    }
}

pub(super) fn corrupt(what: &str) -> StoreError {
    StoreError::Unavailable(format!("corrupt {what} in Redis"))
}
