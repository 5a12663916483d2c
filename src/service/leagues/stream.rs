//! A league's stream: word of each match started and counted, published on its channel in
//! the store so it reaches the stream on whichever process holds it. A word carries the
//! match it tells of; after a match is counted the stream reads the league as it is now
//! (its standings), so a word lost never shows a wrong table for long.

use futures_util::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize};

use super::Leagues;
use super::record::League;
use crate::domain::{LeagueId, MatchId};
use crate::service::Error;
use crate::service::codec;
use crate::service::shared::now_ms;
use crate::store::StoredEvent;
use crate::store::leagues::LeagueStore;

/// The published form's format byte (then postcard).
const FORMAT: u8 = 1;

/// How long a stream waits before subscribing again after a subscription that ended
/// before giving any word (a store losing its connections): no busy loop.
const RESUBSCRIBE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// What happened in a league.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Told {
    /// A match was made between entrants `a` (its challenger) and `b` (their ids).
    Started {
        match_id: MatchId,
        a: String,
        b: String,
        at_ms: u64,
    },
    /// A match was counted: `a`'s score and margin a deal (`None`: void).
    Finished {
        match_id: MatchId,
        a: String,
        b: String,
        result: Option<(f64, f64)>,
        at_ms: u64,
    },
}

/// One item of a league's stream.
pub enum Update {
    /// The league as it is now: first, and after each match counted (its standings).
    League(League),
    /// A match started or was counted.
    Told(Told),
}

impl Leagues {
    /// Publishes `told` on league `id`'s channel; a failure is logged (the league is read
    /// from the store, which the stream's next word or a client's GET shows).
    pub(super) async fn publish(&self, id: LeagueId, told: &Told) {
        let event = StoredEvent {
            version: now_ms(),
            payload: codec::encode(FORMAT, told),
        };
        if let Err(e) = self.ctx.store.leagues().publish_league(&id, event).await {
            tracing::warn!(league_id = %id, error = %e, "league news not published");
        }
    }

    /// League `id`'s stream: the league now, then each match started and counted (each
    /// counted one followed by the league as it then stands), until the server stops. A
    /// subscription lost is made again, and the league sent again.
    pub async fn events(
        self: &std::sync::Arc<Self>,
        id: LeagueId,
    ) -> Result<BoxStream<'static, Update>, Error> {
        let (_, first) = self.load(id).await?;
        let live = self.ctx.store.leagues().subscribe_league(&id).await?;
        let this = self.clone();
        let words = stream::unfold((live, true, this, id), |(mut live, gave, this, id)| async move {
            loop {
                if let Some(event) = live.next().await {
                    if let Ok((FORMAT, body)) = codec::open("league news", &event.payload)
                        && let Ok(told) = body.last::<Told>()
                    {
                        let counted = matches!(told, Told::Finished { .. });
                        let mut items = vec![Update::Told(told)];
                        if counted && let Ok((_, league)) = this.load(id).await {
                            items.push(Update::League(league));
                        }
                        return Some((stream::iter(items), (live, true, this, id)));
                    }
                    continue;
                }
                if !gave {
                    tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
                }
                let live = match this.ctx.store.leagues().subscribe_league(&id).await {
                    Ok(live) => live,
                    Err(e) => {
                        tracing::warn!(error = %e, "a league's stream ends: it could not subscribe again");
                        return None;
                    }
                };
                // Words may have been lost meanwhile: the league as it is now.
                let league = this.load(id).await.ok()?.1;
                return Some((
                    stream::iter(vec![Update::League(league)]),
                    (live, false, this, id),
                ));
            }
        })
        .flatten();
        let stopping = self.ctx.stopping.clone().cancelled_owned();
        Ok(stream::once(async { Update::League(first) })
            .chain(words)
            .take_until(stopping)
            .boxed())
    }
}
