//! What the lobby's followers, and a game's spectators, share on this process. The lobby
//! has one feed: one subscription, one load of each opened game and one rendering of each
//! piece of news, handed to every follower as the same bytes (it used to be a load and a
//! rendering per follower). A spectator's event of a version is rendered once for all the
//! game's spectators here; a seat's carries its own view, rendered for it alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::api::wire::LobbyEventView;
use crate::domain::GameId;
use crate::metrics::Metrics;
use crate::service::{Error, Games, LobbyItem, PublicEvent};

use super::named_frame;

/// News a lobby follower may fall behind by before it is told to list again.
const LOBBY_BEHIND: usize = 64;
/// How often the lobby's feed, with no news, looks whether anyone still follows it.
const IDLE_CHECK: Duration = Duration::from_secs(15);
/// Spectator frames kept; past it they are forgotten at once (a frame is only worth
/// keeping while the spectators of its version read it, a few milliseconds).
const FRAMES_KEPT: usize = 4096;

pub struct Fanout {
    games: Arc<Games>,
    metrics: Arc<Metrics>,
    /// The lobby's feed while anyone follows it. Taken by a new follower and by the feed
    /// when it looks whether to end, so nobody joins a feed that is ending.
    lobby: tokio::sync::Mutex<Option<broadcast::Sender<web::Bytes>>>,
    /// Spectator frames by game, version and number of moves (the event standing for
    /// versions a stream missed has none).
    frames: Mutex<HashMap<(GameId, u64, usize), web::Bytes>>,
}

impl Fanout {
    pub fn new(games: Arc<Games>, metrics: Arc<Metrics>) -> Fanout {
        Fanout {
            games,
            metrics,
            lobby: tokio::sync::Mutex::new(None),
            frames: Mutex::new(HashMap::new()),
        }
    }

    /// The lobby's news for one more follower, from now on (subscribed when this
    /// returns, so a list made afterwards misses nothing).
    pub async fn lobby(self: &Arc<Self>) -> Result<BoxStream<'static, web::Bytes>, Error> {
        let mut lobby = self.lobby.lock().await;
        let receiver = match lobby.as_ref() {
            Some(feed) => feed.subscribe(),
            None => {
                let news = self.games.lobby().await?;
                let (feed, receiver) = broadcast::channel(LOBBY_BEHIND);
                *lobby = Some(feed.clone());
                tokio::spawn(self.clone().run_lobby(news, feed));
                receiver
            }
        };
        Ok(stream::unfold(receiver, |mut receiver| async move {
            match receiver.recv().await {
                Ok(frame) => Some((frame, receiver)),
                Err(RecvError::Lagged(_)) => Some((resync(), receiver)),
                Err(RecvError::Closed) => None,
            }
        })
        .boxed())
    }

    /// Renders the lobby's news once for its followers, until nobody follows or the
    /// news ends (the server stops).
    async fn run_lobby(
        self: Arc<Self>,
        mut news: BoxStream<'static, LobbyItem>,
        feed: broadcast::Sender<web::Bytes>,
    ) {
        loop {
            let item = match tokio::time::timeout(IDLE_CHECK, news.next()).await {
                Ok(Some(item)) => Some(item),
                Ok(None) => break,
                Err(_) => None,
            };
            if let Some(frame) = item.as_ref().and_then(lobby_frame) {
                self.metrics.stream_events_rendered("lobby").inc();
                // Nobody listening is no error: the check below ends the feed.
                let _ = feed.send(frame);
            }
            let mut lobby = self.lobby.lock().await;
            if feed.receiver_count() == 0 {
                *lobby = None;
                return;
            }
        }
        let mut lobby = self.lobby.lock().await;
        if lobby.as_ref().is_some_and(|f| f.same_channel(&feed)) {
            *lobby = None;
        }
    }

    /// A spectator's frame of `event` of game `id`, rendered by `render` once for all
    /// the game's spectators on this process.
    pub fn spectator_frame(
        &self,
        id: GameId,
        event: &PublicEvent,
        render: impl FnOnce() -> web::Bytes,
    ) -> web::Bytes {
        let key = (id, event.version, event.moves.len());
        // Rendered under the lock (a few microseconds): spectators reading the same event
        // at once would each render it otherwise.
        let mut frames = self.frames.lock().expect("frames lock");
        if let Some(frame) = frames.get(&key) {
            return frame.clone();
        }
        let frame = render();
        self.metrics.stream_events_rendered("spectator").inc();
        if frames.len() >= FRAMES_KEPT {
            frames.clear();
        }
        frames.insert(key, frame.clone());
        frame
    }
}

/// A piece of lobby news as its stream sends it; `None` for news a client is not told.
fn lobby_frame(item: &LobbyItem) -> Option<web::Bytes> {
    let wire = match item {
        LobbyItem::News(event) => LobbyEventView::of(event)?,
        LobbyItem::Resync => LobbyEventView::Resync {},
    };
    Some(named_frame(wire.name(), &wire))
}

/// Word to a follower that fell behind: news was lost, list again.
fn resync() -> web::Bytes {
    lobby_frame(&LobbyItem::Resync).expect("resync is told")
}
