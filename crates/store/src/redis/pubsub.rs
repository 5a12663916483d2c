//! Live events: one sharded pub/sub connection per store carries every game's
//! subscription, fanned out to local subscribers through one `broadcast` channel per game,
//! so ten thousand spectators cost one subscription.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use redis::{PushInfo, PushKind, Value};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

use super::RedisStore;
use super::connection::unavailable;
use super::connection::{Clients, Conn};
use super::keys::Keys;
use crate::value::decode_event;
use crate::{EventStream, StoreError, StoredEvent, receiver_stream};

/// How many live events a local subscriber may fall behind before its stream ends.
pub(super) const SUBSCRIBER_BUFFER: usize = 64;

/// How often the pub/sub connection is checked with a PING (a silently dead connection,
/// e.g. a vanished host, would otherwise leave subscribers waiting forever) and games
/// nobody here listens to any more are unsubscribed.
pub(super) const PUBSUB_HEALTH_EVERY: Duration = Duration::from_secs(5);

/// The local side of the one pub/sub connection: who listens to which game.
pub(super) struct Fanout {
    pub(super) clients: Clients,
    pub(super) keys: Keys,
    pub(super) op_timeout: Duration,
    /// The runtime the store was built on: the connection and its reader live there, not
    /// on whichever (possibly short-lived) runtime the first subscriber happens to run on.
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) state: Mutex<FanoutState>,
    /// Held while a pub/sub connection is being opened, so that only one is.
    pub(super) opening: tokio::sync::Mutex<()>,
}

#[derive(Default)]
pub(super) struct FanoutState {
    /// The pub/sub connection, while it is believed alive.
    live: Option<Live>,
    /// Counts connections, so that news of a lost one never ends a newer one's streams.
    generation: u64,
    channels: HashMap<String, Channel>,
}

pub(super) struct Live {
    conn: Conn,
    generation: u64,
    reader: JoinHandle<()>,
}

/// One game's local subscribers, and whether its SSUBSCRIBE has been confirmed.
pub(super) struct Channel {
    tx: broadcast::Sender<StoredEvent>,
    /// Becomes true once Redis confirmed the subscription; dropped (closed) if it failed.
    confirmed: watch::Receiver<bool>,
    generation: u64,
}

impl Fanout {
    pub(super) fn lock(&self) -> MutexGuard<'_, FanoutState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The live pub/sub connection, opened if there is none.
    pub(super) async fn connection(self: &Arc<Self>) -> Result<(Conn, u64), StoreError> {
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
    pub(super) async fn subscribe(self: &Arc<Self>, id: &str) -> Result<EventStream, StoreError> {
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
    pub(super) fn forget(&self, id: &str, generation: u64) {
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
    pub(super) fn lost(&self, generation: u64, reason: &str) {
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

    pub(super) fn dispatch(&self, generation: u64, push: PushInfo) -> Result<(), &'static str> {
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
pub(super) async fn read(
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

impl Drop for RedisStore {
    fn drop(&mut self) {
        let mut state = self.fanout.lock();
        if let Some(live) = state.live.take() {
            live.reader.abort();
        }
    }
}
