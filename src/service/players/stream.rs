//! A player's stream: the news the other aggregates tell a player (its games started and
//! finished, its challenges, seeks and matches; [`crate::service::news`]), published on
//! the player's channel in the store, so it reaches the player's stream on whichever
//! process holds it. This aggregate carries the news without reading it (it is generic
//! over it), so it imports none of the aggregates that tell it. News is a live notice,
//! kept nowhere: on (re)connecting, a client lists its games (`status=playing`) to catch
//! up.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Error, PlayerRecord, Players};
use crate::domain::{Caller, PlayerId, PlayerKey};
use crate::service::codec;
use crate::service::shared::Stores;
use crate::service::shared::now_ms;
use crate::store::StoredEvent;
use crate::store::players::PlayerStore;

/// How long a mark of a player's presence lasts, and how often its open stream marks it.
const PRESENT_FOR: std::time::Duration = std::time::Duration::from_secs(30);
const MARK_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The published form's format byte (then postcard).
const FORMAT: u8 = 1;
/// The published word that the player's key changed (nothing follows): the streams opened
/// with another key end ([`Players::revoked`]). Not news: no stream delivers it.
const KEY_CHANGED: u8 = 2;

/// How long a player's stream waits before subscribing again after a subscription that
/// ended before giving any news (a store losing its connections): no busy loop.
const RESUBSCRIBE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// What a player's stream carries: news (what the aggregates tell players, which this one
/// carries without reading: [`crate::service::news`]), or word that news was lost.
pub enum NewsItem<N> {
    News(N),
    /// The stream fell behind or lost its store's subscription: the client lists its
    /// games again. The stream goes on with the news from now.
    Resync,
}

impl Players {
    /// Whether player `id` has a stream open now, on any process (marked within
    /// `PRESENT_FOR`).
    pub(in crate::service) async fn is_present(&self, id: &PlayerId) -> Result<bool, Error> {
        Ok(self.ctx.store.players().is_present(id.as_str()).await?)
    }

    /// Publishes `news` on player `player`'s channel; a failure is logged (news is a
    /// notice: what it tells can be read from the store).
    pub(crate) async fn tell<N: Serialize>(&self, player: &str, news: &N) {
        let payload = codec::encode(FORMAT, news);
        let event = StoredEvent {
            version: now_ms(),
            payload,
        };
        if let Err(e) = self.ctx.store.players().publish_player(player, event).await {
            tracing::warn!(player_id = %player, error = %e, "player news not published");
        }
    }

    /// Tells every process that player `player`'s key changed: the streams opened with the
    /// old one end. Should the word be lost, a stream that lost its subscription looks at
    /// the key again when it subscribes again.
    pub(crate) async fn tell_key_changed(&self, player: &str) {
        let event = StoredEvent {
            version: now_ms(),
            payload: vec![KEY_CHANGED],
        };
        if let Err(e) = self.ctx.store.players().publish_player(player, event).await {
            tracing::warn!(player_id = %player, error = %e, "word of a new key not published");
        }
    }

    /// Resolves once `key` no longer opens its player (a new key was made, or the player is
    /// gone): what every stream opened with a key ends on, on whichever process holds it.
    /// It listens on the player's channel for word of a new key, and looks at the key
    /// after each (re)subscription, so a change made before it listened is seen too. A
    /// store that cannot say (unreachable) ends nothing.
    pub(crate) fn revoked(&self, key: PlayerKey) -> BoxFuture<'static, ()> {
        let store = self.ctx.store.clone();
        async move {
            let key = key.as_str();
            let Some(id) = super::id_of_key(key).map(str::to_owned) else {
                return;
            };
            let opens = async |store: &Stores| match store.players().load_player(&id).await {
                Ok(Some(stored)) => PlayerRecord::decode(&stored.bytes)
                    .map_or(true, |record| record.opens_with(key)),
                Ok(None) => false,
                Err(_) => true,
            };
            loop {
                if let Ok(mut live) = store.players().subscribe_player(&id).await {
                    if !opens(&store).await {
                        return;
                    }
                    while let Some(event) = live.next().await {
                        if event.payload.first() == Some(&KEY_CHANGED) && !opens(&store).await {
                            return;
                        }
                    }
                }
                tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
            }
        }
        .boxed()
    }

    /// The key's player's news from now on. A stream that falls behind is not ended: it
    /// says [`NewsItem::Resync`] and goes on; one whose key is replaced ends.
    pub async fn events<N: DeserializeOwned + 'static>(
        &self,
        caller: &Caller,
    ) -> Result<BoxStream<'static, NewsItem<N>>, Error> {
        let (_, player) = self.authenticate(caller).await?;
        // Opened, so a player's key: the one whose replacement ends the stream.
        let key = caller.player_key().cloned().ok_or(super::NO_KEY)?;
        let id = player.id;
        let live = self.ctx.store.players().subscribe_player(&id).await?;
        let store = self.ctx.store.clone();
        let mark = tokio::time::Instant::now();
        let raw = stream::unfold(
            (live, true, store, id, mark),
            |(mut live, gave, store, id, mut mark)| async move {
                // While it is open, the player is present (a league pairs it): marked
                // now and every MARK_EVERY, each mark lasting PRESENT_FOR.
                loop {
                    tokio::select! {
                        event = live.next() => match event {
                            Some(event) => return Some((Some(event), (live, true, store, id, mark))),
                            None => break,
                        },
                        () = tokio::time::sleep_until(mark) => {
                            if let Err(e) = store.players().mark_present(&id, PRESENT_FOR).await {
                                tracing::debug!(player_id = %id, error = %e, "a player's presence not marked");
                            }
                            mark = tokio::time::Instant::now() + MARK_EVERY;
                        }
                    }
                }
                if !gave {
                    tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
                }
                match store.players().subscribe_player(&id).await {
                    Ok(news) => Some((None, (news, false, store, id, mark))),
                    Err(e) => {
                        tracing::warn!(error = %e, "a player's stream ends: it could not subscribe again");
                        None
                    }
                }
            },
        )
        .take_until(self.ctx.stopping.clone().cancelled_owned())
        .take_until(self.revoked(key));
        Ok(raw
            .filter_map(|event| async move {
                let Some(event) = event else {
                    return Some(NewsItem::Resync);
                };
                match codec::open("player news", &event.payload) {
                    Ok((FORMAT, body)) => body.last().ok().map(NewsItem::News),
                    _ => None,
                }
            })
            .boxed())
    }
}
