//! The followers of one tournament or one league on this process share one feed: one
//! subscription to its news, one load per word, and each event rendered once, then handed
//! to every follower as the same bytes. A follower joining (or one that fell behind) gets
//! the whole state once; after that, each event says what happened. What a feed follows
//! and how its events read is its [`Source`]'s: [`TournamentSource`], [`LeagueSource`].

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use futures_util::stream::{BoxStream, StreamExt};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::broadcast;

use crate::api::games::named_frame;
use crate::api::wire::{
    LeagueMatchView, LeagueResultView, LeagueView, TournamentEvent, TournamentPlayer,
};
use crate::domain::{LeagueId, TournamentId};
use crate::metrics::{Metrics, StreamLabels};
use crate::service::leagues::record::League;
use crate::service::leagues::stream::{Told, Update as LeagueUpdate};
use crate::service::tournaments::record::Tournament;
use crate::service::tournaments::stream::Update;
use crate::service::{Error, Leagues, Tournaments};

/// Events a follower may fall behind by before it is sent the whole state again.
const BEHIND: usize = 64;
/// How often a feed with nobody following looks whether it may end.
const IDLE_CHECK: Duration = Duration::from_secs(15);

/// What a feed follows: the service's stream of one thing, and how its events read.
pub trait Source: Send + Sync + 'static {
    type Id: Copy + Eq + Hash + Send + Sync + 'static;
    /// One word of the service's stream; the first is the whole state.
    type Item: Send + 'static;
    /// What a follower joining is told whole.
    type State: Send + Sync + 'static;
    /// What rendering a word keeps of the state before it.
    type Memory: Send + 'static;
    /// The metrics' label.
    const STREAM: &'static str;

    fn items(
        &self,
        id: Self::Id,
    ) -> impl Future<Output = Result<BoxStream<'static, Self::Item>, Error>> + Send;
    /// The stream's first word as the state (`None`: nothing to follow).
    fn state(first: Self::Item) -> Option<Self::State>;
    fn memory(state: &Self::State) -> Self::Memory;
    fn whole(state: &Self::State) -> web::Bytes;
    /// `item` as one event, said against the state before it; and the state after it,
    /// if it changed.
    fn render(
        item: Self::Item,
        before: &Self::State,
        memory: &mut Self::Memory,
    ) -> (web::Bytes, Option<Self::State>);
    /// Whether nothing follows `state`: a follower is told it whole, then ends.
    fn over(state: &Self::State) -> bool;
    /// Whether `frame` is the last event: its followers end after it.
    fn last(frame: &[u8]) -> bool;
    fn missing() -> Error;
}

/// The feeds of this process, one per thing followed.
pub struct Feeds<S: Source> {
    source: S,
    feeding: Gauge,
    rendered: Counter,
    feeds: Mutex<HashMap<S::Id, Arc<Feed<S>>>>,
}

/// The feeds of tournaments.
pub type TournamentFeeds = Feeds<TournamentSource>;
/// The feeds of leagues.
pub type LeagueFeeds = Feeds<LeagueSource>;

/// One thing's feed.
struct Feed<S: Source> {
    state: Mutex<Latest<S>>,
}

/// The state as the feed last read it, its whole-state event once rendered, and the
/// channel its events go out on.
struct Latest<S: Source> {
    state: Arc<S::State>,
    whole: Option<web::Bytes>,
    /// `None` once its stream ended (the thing is over, or the server stops): the
    /// followers read what was sent, then end.
    events: Option<broadcast::Sender<web::Bytes>>,
}

impl<S: Source> Latest<S> {
    /// The whole state as one event, rendered once for every follower that needs it.
    fn whole(&mut self) -> web::Bytes {
        self.whole
            .get_or_insert_with(|| S::whole(&self.state))
            .clone()
    }
}

impl<S: Source> Feeds<S> {
    pub fn new(source: S, metrics: &Metrics) -> Feeds<S> {
        let labels = StreamLabels { stream: S::STREAM };
        Feeds {
            source,
            feeding: metrics.feeds.get_or_create(&labels).clone(),
            rendered: metrics.stream_events_rendered(S::STREAM),
            feeds: Mutex::new(HashMap::new()),
        }
    }

    /// `id`'s events for one more follower: the whole state first, then each word.
    pub async fn follow(
        self: &Arc<Self>,
        id: S::Id,
    ) -> Result<BoxStream<'static, web::Bytes>, Error> {
        if let Some(following) = self.join(id) {
            return Ok(following);
        }
        let mut items = self.source.items(id).await?;
        let Some(first) = items.next().await.and_then(S::state) else {
            return Err(S::missing());
        };
        let feed = Arc::new(Feed {
            state: Mutex::new(Latest {
                state: Arc::new(first),
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
        self.feeding.inc();
        tokio::spawn(async move {
            this.run(id, feed, items).await;
            this.feeding.dec();
        });
        Ok(follower)
    }

    /// A follower of the feed already running for `id`, if any.
    fn join(&self, id: S::Id) -> Option<BoxStream<'static, web::Bytes>> {
        let feeds = self.feeds.lock().expect("feeds lock");
        let feed = feeds.get(&id).filter(|f| !f.ended())?;
        Some(following(feed.clone()))
    }

    /// Reads the stream's words into the feed until it ends or nobody follows it.
    async fn run(&self, id: S::Id, feed: Arc<Feed<S>>, mut items: BoxStream<'static, S::Item>) {
        let mut before = feed.state.lock().expect("feed lock").state.clone();
        let mut memory = S::memory(&before);
        loop {
            let item = match tokio::time::timeout(IDLE_CHECK, items.next()).await {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(_) if self.unfollowed(id, &feed) => return,
                Err(_) => continue,
            };
            let (frame, after) = S::render(item, &before, &mut memory);
            self.rendered.inc();
            {
                let mut state = feed.state.lock().expect("feed lock");
                if let Some(after) = after {
                    before = Arc::new(after);
                    state.state = before.clone();
                    state.whole = None;
                }
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
    fn unfollowed(&self, id: S::Id, feed: &Arc<Feed<S>>) -> bool {
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

impl<S: Source> Feed<S> {
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

/// One follower of `feed`: the whole state, then the feed's events; the whole state again
/// if it falls behind.
fn following<S: Source>(feed: Arc<Feed<S>>) -> BoxStream<'static, web::Bytes> {
    // Taken under the lock the feed sends under: no event is both in the whole state and
    // after it, nor in neither.
    let (whole, receiver) = {
        let mut state = feed.state.lock().expect("feed lock");
        let receiver = state.events.as_ref().map(broadcast::Sender::subscribe);
        let over = S::over(&state.state);
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
                    let done = S::last(&frame);
                    Some((frame, (receiver, feed, done)))
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let (whole, over) = {
                        let mut state = feed.state.lock().expect("feed lock");
                        (state.whole(), S::over(&state.state))
                    };
                    Some((whole, (receiver, feed, over)))
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        },
    );
    first.chain(rest).boxed()
}

/// A tournament's feed: the whole tournament, then what changed with each word, ending
/// after `tournament_finished`.
pub struct TournamentSource(pub Arc<Tournaments>);

impl Source for TournamentSource {
    type Id = TournamentId;
    type Item = Update;
    type State = Tournament;
    /// The standings rows by player id, to tell which changed.
    type Memory = HashMap<String, TournamentPlayer>;
    const STREAM: &'static str = "tournament";

    async fn items(&self, id: TournamentId) -> Result<BoxStream<'static, Update>, Error> {
        self.0.clone().events(id).await
    }

    fn state(first: Update) -> Option<Tournament> {
        Some(first.tournament)
    }

    fn memory(t: &Tournament) -> Self::Memory {
        TournamentPlayer::rows(t)
            .into_iter()
            .map(|row| (row.id.clone(), row))
            .collect()
    }

    fn whole(t: &Tournament) -> web::Bytes {
        let wire = TournamentEvent::whole(t);
        named_frame(wire.kind, &wire)
    }

    fn render(
        update: Update,
        before: &Tournament,
        rows: &mut Self::Memory,
    ) -> (web::Bytes, Option<Tournament>) {
        let now = Self::memory(&update.tournament);
        let wire = TournamentEvent::change(&update, before, rows, &now);
        *rows = now;
        (named_frame(wire.kind, &wire), Some(update.tournament))
    }

    fn over(t: &Tournament) -> bool {
        t.status().over()
    }

    fn last(frame: &[u8]) -> bool {
        frame.starts_with(b"event: tournament_finished\n")
    }

    fn missing() -> Error {
        Error::TournamentNotFound
    }
}

/// A league's feed: `standings` (the whole league, its entrants' charts included), then
/// `match_started` and `match_finished` as they happen, each count followed by `standings`
/// again (without the charts: `GET` the league for them). A league never ends.
pub struct LeagueSource(pub Arc<Leagues>);

impl Source for LeagueSource {
    type Id = LeagueId;
    type Item = LeagueUpdate;
    type State = League;
    type Memory = ();
    const STREAM: &'static str = "league";

    async fn items(&self, id: LeagueId) -> Result<BoxStream<'static, LeagueUpdate>, Error> {
        self.0.clone().events(id).await
    }

    fn state(first: LeagueUpdate) -> Option<League> {
        match first {
            LeagueUpdate::League(league) => Some(league),
            LeagueUpdate::Told(_) => None,
        }
    }

    fn memory(_: &League) {}

    fn whole(league: &League) -> web::Bytes {
        named_frame("standings", &LeagueView::of(league))
    }

    fn render(update: LeagueUpdate, _: &League, _: &mut ()) -> (web::Bytes, Option<League>) {
        match update {
            LeagueUpdate::League(league) => {
                let mut view = LeagueView::of(&league);
                for entrant in &mut view.entrants {
                    entrant.history.clear();
                }
                (named_frame("standings", &view), Some(league))
            }
            LeagueUpdate::Told(Told::Started {
                match_id,
                a,
                b,
                at_ms,
            }) => {
                let view = LeagueMatchView {
                    match_id: match_id.to_string(),
                    a,
                    b,
                    started_ms: at_ms,
                };
                (named_frame("match_started", &view), None)
            }
            LeagueUpdate::Told(Told::Finished {
                match_id,
                a,
                b,
                result,
                at_ms,
            }) => {
                let view = LeagueResultView::of(match_id, a, b, result, at_ms);
                (named_frame("match_finished", &view), None)
            }
        }
    }

    fn over(_: &League) -> bool {
        false
    }

    fn last(_: &[u8]) -> bool {
        false
    }

    fn missing() -> Error {
        Error::LeagueNotFound
    }
}
