//! A tournament's followers on this process share one feed: one subscription to its news,
//! one load of the tournament per word, and each event rendered once, then handed to every
//! follower as the same bytes. A follower joining (or one that fell behind) gets the whole
//! tournament once; after that, each event says only what changed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use futures_util::stream::{BoxStream, StreamExt};
use tokio::sync::broadcast;

use crate::api::games::named_frame;
use crate::api::wire::{TournamentEvent, TournamentPlayer};
use crate::domain::TournamentId;
use crate::metrics::Metrics;
use crate::service::tournaments::record::Tournament;
use crate::service::tournaments::stream::Update;
use crate::service::{Error, Tournaments};

/// Events a follower may fall behind by before it is sent the whole tournament again.
const BEHIND: usize = 64;
/// How often a feed with nobody following looks whether it may end.
const IDLE_CHECK: Duration = Duration::from_secs(15);

/// The feeds of this process, one per tournament followed.
pub struct TournamentFeeds {
    tournaments: Arc<Tournaments>,
    metrics: Arc<Metrics>,
    feeds: Mutex<HashMap<TournamentId, Arc<Feed>>>,
}

/// One tournament's feed.
struct Feed {
    state: Mutex<Latest>,
}

/// The tournament as the feed last read it, its whole-state event once rendered, and the
/// channel its events go out on.
struct Latest {
    tournament: Arc<Tournament>,
    whole: Option<web::Bytes>,
    /// `None` once its stream ended (the tournament is over, or the server stops): the
    /// followers read what was sent, then end.
    events: Option<broadcast::Sender<web::Bytes>>,
}

impl Latest {
    /// The whole tournament as one event, rendered once for every follower that needs it.
    fn whole(&mut self) -> web::Bytes {
        self.whole
            .get_or_insert_with(|| {
                let wire = TournamentEvent::whole(&self.tournament);
                named_frame(wire.kind, &wire)
            })
            .clone()
    }
}

impl TournamentFeeds {
    pub fn new(tournaments: Arc<Tournaments>, metrics: Arc<Metrics>) -> TournamentFeeds {
        TournamentFeeds {
            tournaments,
            metrics,
            feeds: Mutex::new(HashMap::new()),
        }
    }

    /// Tournament `id`'s events for one more follower: the whole tournament first, then
    /// each change, ending after `tournament_finished`.
    pub async fn follow(
        self: &Arc<Self>,
        id: TournamentId,
    ) -> Result<BoxStream<'static, web::Bytes>, Error> {
        if let Some(following) = self.join(id) {
            return Ok(following);
        }
        let mut updates = self.tournaments.clone().events(id).await?;
        let Some(first) = updates.next().await else {
            return Err(Error::TournamentNotFound);
        };
        let feed = Arc::new(Feed {
            state: Mutex::new(Latest {
                tournament: Arc::new(first.tournament),
                whole: None,
                events: Some(broadcast::channel(BEHIND).0),
            }),
        });
        {
            let mut feeds = self.feeds.lock().expect("feeds lock");
            // Another follower may have made one meanwhile: follow that one.
            if let Some(other) = feeds.get(&id).filter(|f| !f.ended()) {
                return Ok(following(other.clone()));
            }
            feeds.insert(id, feed.clone());
        }
        let this = self.clone();
        let follower = following(feed.clone());
        self.metrics.tournament_feeds.inc();
        tokio::spawn(async move {
            this.run(id, feed, updates).await;
            this.metrics.tournament_feeds.dec();
        });
        Ok(follower)
    }

    /// A follower of the feed already running for `id`, if any.
    fn join(&self, id: TournamentId) -> Option<BoxStream<'static, web::Bytes>> {
        let feeds = self.feeds.lock().expect("feeds lock");
        let feed = feeds.get(&id).filter(|f| !f.ended())?;
        Some(following(feed.clone()))
    }

    /// Reads the tournament's updates into the feed until its stream ends or nobody
    /// follows it.
    async fn run(
        &self,
        id: TournamentId,
        feed: Arc<Feed>,
        mut updates: BoxStream<'static, Update>,
    ) {
        let mut before = feed.state.lock().expect("feed lock").tournament.clone();
        let mut rows = rows_of(&before);
        loop {
            let update = match tokio::time::timeout(IDLE_CHECK, updates.next()).await {
                Ok(Some(update)) => update,
                Ok(None) => break,
                Err(_) if self.unfollowed(id, &feed) => return,
                Err(_) => continue,
            };
            let now = rows_of(&update.tournament);
            let wire = TournamentEvent::change(&update, &before, &rows, &now);
            rows = now;
            let frame = named_frame(wire.kind, &wire);
            self.metrics.tournament_events_rendered.inc();
            before = Arc::new(update.tournament);
            {
                let mut state = feed.state.lock().expect("feed lock");
                state.tournament = before.clone();
                state.whole = None;
                if let Some(events) = &state.events {
                    // Nobody listening is no error: the next follower starts from the state.
                    let _ = events.send(frame);
                }
            }
            if self.unfollowed(id, &feed) {
                return;
            }
        }
        feed.end();
        let mut feeds = self.feeds.lock().expect("feeds lock");
        if feeds.get(&id).is_some_and(|f| Arc::ptr_eq(f, &feed)) {
            feeds.remove(&id);
        }
    }

    /// Drops `feed` when nobody follows it (checked under the lock a new follower takes,
    /// so none joins a feed that is ending).
    fn unfollowed(&self, id: TournamentId, feed: &Arc<Feed>) -> bool {
        let mut feeds = self.feeds.lock().expect("feeds lock");
        if feed.followers() > 0 {
            return false;
        }
        feed.end();
        if feeds.get(&id).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            feeds.remove(&id);
        }
        true
    }
}

impl Feed {
    fn ended(&self) -> bool {
        self.state.lock().expect("feed lock").events.is_none()
    }

    fn followers(&self) -> usize {
        let state = self.state.lock().expect("feed lock");
        state.events.as_ref().map_or(0, |e| e.receiver_count())
    }

    /// No event follows: each follower ends once it has read what was sent.
    fn end(&self) {
        self.state.lock().expect("feed lock").events = None;
    }
}

/// One follower of `feed`: the whole tournament, then the feed's events; the whole
/// tournament again if it falls behind.
fn following(feed: Arc<Feed>) -> BoxStream<'static, web::Bytes> {
    // Taken under the lock the feed sends under: no event is both in the whole state and
    // after it, nor in neither.
    let (whole, receiver) = {
        let mut state = feed.state.lock().expect("feed lock");
        let receiver = state.events.as_ref().map(broadcast::Sender::subscribe);
        let over = state.tournament.status.over();
        (state.whole(), receiver.filter(|_| !over))
    };
    let first = futures_util::stream::once(async move { whole });
    let Some(receiver) = receiver else {
        return first.boxed();
    };
    let rest = futures_util::stream::unfold(
        (receiver, feed, false),
        |(mut receiver, feed, done)| async move {
            if done {
                return None;
            }
            match receiver.recv().await {
                Ok(frame) => {
                    let done = frame.starts_with(b"event: tournament_finished\n");
                    Some((frame, (receiver, feed, done)))
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let (whole, over) = {
                        let mut state = feed.state.lock().expect("feed lock");
                        (state.whole(), state.tournament.status.over())
                    };
                    Some((whole, (receiver, feed, over)))
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        },
    );
    first.chain(rest).boxed()
}

/// The standings rows by player id, to tell which changed.
fn rows_of(t: &Tournament) -> HashMap<String, TournamentPlayer> {
    TournamentPlayer::rows(t)
        .into_iter()
        .map(|row| (row.id.clone(), row))
        .collect()
}
