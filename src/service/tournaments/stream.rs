//! A tournament's stream: word of what changed, published on its channel in the store so
//! it reaches the stream on whichever process holds it. The word says only what kind of
//! change it was; the stream reads the tournament as it is now, so a word lost or late
//! never shows a wrong table.

use futures_util::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize};

use super::Tournaments;
use super::record::Tournament;
use crate::domain::TournamentId;
use crate::service::Error;
use crate::service::codec;
use crate::service::shared::now_ms;
use crate::store::StoredEvent;
use crate::store::tournaments::TournamentStore;

/// The published form's format byte (then postcard).
const FORMAT: u8 = 1;

/// How long a stream waits before subscribing again after a subscription that ended
/// before giving any word (a store losing its connections): no busy loop.
const RESUBSCRIBE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// What changed in a tournament.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Told {
    /// A round was paired and its games named.
    RoundStarted,
    /// Every game of the pairing at this index of `pairings` is over.
    PairingFinished { pairing: usize },
    /// The standings changed (a game ended), or the stream (re)starts.
    Standings,
    /// It finished or was canceled.
    Finished,
}

/// One item of a tournament's stream: what changed, and the tournament as it is now.
pub struct Update {
    pub told: Told,
    pub tournament: Tournament,
}

impl Tournaments {
    /// Publishes `told` on `t`'s channel; a failure is logged (the tournament is read
    /// from the store, which the stream's next word or a client's GET shows).
    pub(super) async fn publish(&self, t: &Tournament, told: Told) {
        let payload = codec::encode(FORMAT, &told);
        let event = StoredEvent {
            version: now_ms(),
            payload,
        };
        if let Err(e) = self
            .ctx
            .store
            .tournaments()
            .publish_tournament(&t.id, event)
            .await
        {
            tracing::warn!(tournament_id = %t.id, error = %e, "tournament news not published");
        }
    }

    /// Tournament `id`'s stream: its standings now, then each change as it happens, until
    /// it is over (or the server stops). A subscription lost is made again, and the
    /// standings sent again.
    pub async fn events(
        self: &std::sync::Arc<Self>,
        id: TournamentId,
    ) -> Result<BoxStream<'static, Update>, Error> {
        let (_, first) = self.records.load(id).await?;
        let live = self
            .ctx
            .store
            .tournaments()
            .subscribe_tournament(&id)
            .await?;
        let this = self.clone();
        let first = Update {
            told: if first.status.over() {
                Told::Finished
            } else {
                Told::Standings
            },
            tournament: first,
        };
        let over = first.tournament.status.over();
        let words = stream::unfold(
            (live, true, this, id),
            |(mut live, gave, this, id)| async move {
                let told = loop {
                    if let Some(event) = live.next().await {
                        if let Ok((FORMAT, body)) = codec::open("tournament news", &event.payload)
                            && let Ok(told) = body.last::<Told>()
                        {
                            break Some(told);
                        }
                        continue;
                    }
                    break None;
                };
                let (told, live, gave) = match told {
                    Some(told) => (told, live, true),
                    None => {
                        if !gave {
                            tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
                        }
                        match this.ctx.store.tournaments().subscribe_tournament(&id).await {
                            Ok(live) => (Told::Standings, live, false),
                            Err(e) => {
                                tracing::warn!(error = %e, "a tournament's stream ends: it could not subscribe again");
                                return None;
                            }
                        }
                    }
                };
                let tournament = match this.records.load(id).await {
                    Ok((_, t)) => t,
                    Err(_) => return None,
                };
                // Subscribed again after it ended: its word of the end may be lost.
                let told = match (gave, tournament.status.over()) {
                    (false, true) => Told::Finished,
                    _ => told,
                };
                Some((Update { told, tournament }, (live, gave, this, id)))
            },
        );
        let stopping = self.ctx.stopping.clone().cancelled_owned();
        let rest = match over {
            true => stream::empty().boxed(),
            // The item that says it is over is the last, and the stream ends with it: no
            // word follows the end, so waiting for one would hold the stream open.
            false => stream::unfold((words.boxed(), false), |(mut words, done)| async move {
                if done {
                    return None;
                }
                let update = words.next().await?;
                let done = update.told == Told::Finished;
                Some((update, (words, done)))
            })
            .boxed(),
        };
        Ok(stream::once(async { first })
            .chain(rest)
            .take_until(stopping)
            .boxed())
    }
}
