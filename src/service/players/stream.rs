//! A player's stream: the news the other aggregates tell a player (its games started and
//! finished, its challenges, seeks and matches; [`crate::service::news`]), published on
//! the player's channel in the store, so it reaches the player's stream on whichever
//! process holds it. This aggregate carries the news without reading it (it is generic
//! over it), so it imports none of the aggregates that tell it. News is a live notice,
//! kept nowhere: on (re)connecting, a client lists its games (`status=playing`) to catch
//! up.

use futures_util::stream::{self, BoxStream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Error, NO_KEY, Players};
use crate::service::shared::now_ms;
use crate::store::StoredEvent;
use crate::store::players::PlayerStore;

/// The published form's format byte (then postcard).
const FORMAT: u8 = 1;

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
    /// Publishes `news` on player `player`'s channel; a failure is logged (news is a
    /// notice: what it tells can be read from the store).
    pub(crate) async fn tell<N: Serialize>(&self, player: &str, news: &N) {
        let payload = postcard::to_extend(news, vec![FORMAT]).expect("news serialises");
        let event = StoredEvent {
            version: now_ms(),
            payload,
        };
        if let Err(e) = self.ctx.store.publish_player(player, event).await {
            tracing::warn!(player_id = %player, error = %e, "player news not published");
        }
    }

    /// The key's player's news from now on. A stream that falls behind is not ended: it
    /// says [`NewsItem::Resync`] and goes on.
    pub async fn events<N: DeserializeOwned + 'static>(
        &self,
        key: Option<&str>,
    ) -> Result<BoxStream<'static, NewsItem<N>>, Error> {
        let key = key.ok_or(NO_KEY)?;
        let (_, player) = self.authenticate(key).await?;
        let id = player.id;
        let live = self.ctx.store.subscribe_player(&id).await?;
        let store = self.ctx.store.clone();
        let raw = stream::unfold(
            (live, true, store, id),
            |(mut live, gave, store, id)| async move {
                if let Some(event) = live.next().await {
                    return Some((Some(event), (live, true, store, id)));
                }
                if !gave {
                    tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
                }
                match store.subscribe_player(&id).await {
                    Ok(news) => Some((None, (news, false, store, id))),
                    Err(e) => {
                        tracing::warn!(error = %e, "a player's stream ends: it could not subscribe again");
                        None
                    }
                }
            },
        )
        .take_until(self.ctx.stopping.clone().cancelled_owned());
        Ok(raw
            .filter_map(|event| async move {
                let Some(event) = event else {
                    return Some(NewsItem::Resync);
                };
                match event.payload.split_first() {
                    Some((&FORMAT, rest)) => postcard::from_bytes(rest).ok().map(NewsItem::News),
                    _ => None,
                }
            })
            .boxed())
    }
}
