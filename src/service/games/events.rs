//! A game's public events: the one stored and published form of "version N happened",
//! the one way of watching a game (subscribe, then load: nothing stored in between is
//! missed) that the event stream and long polling both start from, and the event stream's
//! feed (stored events, then live ones).

use futures_util::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize};

use super::record::{Record, Status};
use super::view::View;
use super::{Bearer, Error, Games, viewer_of};
use crate::domain::{Caller, GameId};
use crate::engine::Move;
use crate::service::codec;
use crate::service::shared::now_ms;
use crate::store::{EventStream, GameStore, StoredEvent};

/// The public fact of one stored version. No tile in any hand can be in it: moves are in
/// their public form (a draw does not name its tile).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PublicEvent {
    pub version: u64,
    pub status: Status,
    pub turn: Option<u8>,
    /// The moves stored with this version (a player's and the bots' after it).
    pub moves: Vec<(u8, Move)>,
}

/// The format byte, then postcard: about 15 bytes for one move, and every game keeps its
/// recent events in the store.
const FORMAT: u8 = 1;

impl PublicEvent {
    pub(super) fn encode(&self) -> Vec<u8> {
        codec::encode(FORMAT, self)
    }

    fn decode(bytes: &[u8]) -> Option<PublicEvent> {
        match codec::open("event", bytes).ok()? {
            (FORMAT, body) => body.last().ok(),
            _ => None,
        }
    }
}

/// A game's events after some version, oldest first: the stored ones, then the live ones
/// as they are saved. When the capped history no longer reaches back, one event for the
/// version current at the start (without its moves) stands for the missed ones. The feed
/// ends after the event that finishes the match.
pub struct Feed {
    /// The game's version when the feed opened.
    pub current: u64,
    pub events: BoxStream<'static, FeedEvent>,
}

/// One event of a feed, and for a seat's feed that seat's view as loaded right after it
/// (at the event's version or a later one: its own `version` says which).
pub struct FeedEvent {
    pub event: PublicEvent,
    pub view: Option<View>,
}

impl Games {
    /// The events of game `id` with a version above `after` (every one to come, with
    /// `None`); to a seat's `caller`, each with that seat's view, so a bot needs no
    /// second request to see its hand.
    pub async fn events(
        &self,
        id: GameId,
        after: Option<u64>,
        caller: &Caller,
    ) -> Result<Feed, Error> {
        let bearer = self.bearer(caller, None).await?;
        let (live, version, record) = self.watch(id).await?;
        let viewer = viewer_of(&record, bearer.as_ref())?;
        self.unsealed(&record, viewer, false).await?;
        // The history holds versions up to the current one: nothing to read when the
        // client has them all.
        let backlog = match after {
            Some(after) if after < version => {
                self.ctx.store.games().events_since(&id, after).await?
            }
            _ => Vec::new(),
        };
        let Feed { current, events } = feed(live, backlog, version, &record, after);
        let events = match viewer {
            None => events,
            Some(seat) => {
                let me = self.me.clone();
                let seen = events
                    .then(move |watched| {
                        let me = me.clone();
                        async move {
                            let me = me.upgrade()?;
                            // This process's copy, when it wrote this version or a later
                            // one: a view with no trip to the store.
                            let cached = me.cache.read(id, watched.event.version, |v, r| {
                                (View::of(id, v, r, Some(seat)), r.game.abandoned(seat))
                            });
                            let (view, abandoned) = match cached {
                                Some(seen) => seen,
                                None => match super::load(&me.ctx.store, id).await {
                                    Ok((version, record)) => (
                                        View::of(id, version, &record, Some(seat)),
                                        record.game.abandoned(seat),
                                    ),
                                    Err(e) => {
                                        // The client resumes with Last-Event-ID.
                                        tracing::warn!(game_id = %id, error = %e, "a seat's event stream ends: its view could not be loaded");
                                        return None;
                                    }
                                },
                            };
                            Some((
                                FeedEvent {
                                    view: Some(view),
                                    ..watched
                                },
                                abandoned,
                            ))
                        }
                    })
                    .boxed();
                // A seat handed to a bot ends its stream after the event that says so.
                stream::unfold((seen, false), |(mut seen, over)| async move {
                    if over {
                        return None;
                    }
                    let (event, last) = seen.next().await??;
                    Some((event, (seen, last)))
                })
                .boxed()
            }
        };
        // A stopping server ends every feed at once, cleanly, so its streams let go; one
        // opened with a player's key ends when the key stops opening it (a new key).
        let events = events.take_until(self.ctx.stopping.clone().cancelled_owned());
        let events = match (&bearer, caller.player_key()) {
            (Some(Bearer::Player(_)), Some(key)) => {
                events.take_until(self.players.revoked(key.clone())).boxed()
            }
            _ => events.boxed(),
        };
        Ok(Feed { current, events })
    }

    /// Subscribes to game `id`'s live events, then loads it: nothing stored in between is
    /// missed, and anything seen twice is skipped by version. For [`Games::events`]
    /// and long polls, which read the loaded game before they wait.
    pub(super) async fn watch(&self, id: GameId) -> Result<(EventStream, u64, Record), Error> {
        let live = self.ctx.store.games().subscribe(&id).await?;
        let (version, record) = self.load(id).await?;
        Ok((live, version, record))
    }
}

/// The feed of a game watched at `version` (see [`Games::watch`]): its stored events
/// after `after`, then the live ones.
fn feed(
    live: EventStream,
    backlog: Vec<StoredEvent>,
    version: u64,
    record: &Record,
    after: Option<u64>,
) -> Feed {
    let current = PublicEvent {
        version,
        status: record.status(),
        turn: record.game.turn(),
        moves: Vec::new(),
    };
    let finished = current.status == Status::Finished;
    let stored = backlog
        .into_iter()
        .filter_map(|e| PublicEvent::decode(&e.payload));
    let live = live.filter_map(|e| async move { PublicEvent::decode(&e.payload) });
    // The stand-in for the current version is only sent when the history did not reach
    // it; a finished game has nothing live to wait for.
    let tail: BoxStream<'static, PublicEvent> = if finished {
        stream::once(async move { current }).boxed()
    } else {
        stream::once(async move { current }).chain(live).boxed()
    };
    let inner = stream::iter(stored).chain(tail);
    let events = stream::unfold(
        (inner, after.unwrap_or(0), false),
        |(mut inner, last, done)| async move {
            if done {
                return None;
            }
            while let Some(event) = inner.next().await {
                if event.version > last {
                    let done = event.status == Status::Finished;
                    let last = event.version;
                    let watched = FeedEvent { event, view: None };
                    return Some((watched, (inner, last, done)));
                }
            }
            None
        },
    )
    .boxed();
    Feed {
        current: version,
        events,
    }
}

/// What happened in the lobby.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum LobbyNews {
    /// A game was listed: it waits for players.
    Opened,
    /// Its last seat was taken: it left the list and started.
    Filled,
    /// Its match ended.
    Finished,
}

/// What a lobby stream carries: news, or word that news was lost.
pub enum LobbyItem {
    News(Box<LobbyEvent>),
    /// The stream fell behind (more news came than it could hold) or lost its store's
    /// subscription, and news was lost: the client lists the open games again. The
    /// stream goes on with the news from now.
    Resync,
}

/// How long a lobby stream waits before it subscribes again after a subscription that
/// ended before giving any news (a store losing its connections), so a broken store
/// costs one attempt a second, not a busy loop.
const RESUBSCRIBE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// One piece of lobby news; an opened game comes with its spectator view (for the list's
/// summary), loaded when the news arrived.
pub struct LobbyEvent {
    pub news: LobbyNews,
    pub game_id: String,
    pub view: Option<View>,
}

/// The published form: the format byte, then postcard.
#[derive(Serialize, Deserialize)]
struct StoredNews {
    news: LobbyNews,
    game_id: String,
}

impl Games {
    /// Tells every lobby watcher, on every process. Best effort: the news is a hint, the
    /// list is the truth, so a failure is logged and the change it follows stands.
    pub(crate) async fn announce(&self, news: LobbyNews, id: GameId) {
        let stored = StoredNews {
            news,
            game_id: id.to_string(),
        };
        let payload = codec::encode(FORMAT, &stored);
        let event = StoredEvent {
            version: now_ms(),
            payload,
        };
        if let Err(e) = self.ctx.store.games().publish_lobby(event).await {
            tracing::warn!(game_id = %id, error = %e, ?news, "lobby news not published");
        }
    }

    /// Live lobby news: games opened, filled and finished from now on (list the open games
    /// after this returns, and nothing is missed in between). A stream that falls behind is
    /// not ended: it says [`LobbyItem::Resync`] (list again) and goes on.
    pub async fn lobby(&self) -> Result<BoxStream<'static, LobbyItem>, Error> {
        let live = self.ctx.store.games().subscribe_lobby().await?;
        let store = self.ctx.store.clone();
        // The store ends a subscription that lags (or loses its connection): subscribe
        // again, and tell the client what it missed is lost.
        let raw = stream::unfold(
            (live, true, store.clone()),
            |(mut live, gave, store)| async move {
                if let Some(event) = live.next().await {
                    return Some((Some(event), (live, true, store)));
                }
                if !gave {
                    tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
                }
                match store.games().subscribe_lobby().await {
                    Ok(news) => Some((None, (news, false, store))),
                    Err(e) => {
                        tracing::warn!(error = %e, "a lobby stream ends: it could not subscribe again");
                        None
                    }
                }
            },
        )
        .take_until(self.ctx.stopping.clone().cancelled_owned());
        Ok(raw
            .filter_map(move |event| {
                let store = store.clone();
                async move {
                    let Some(event) = event else {
                        return Some(LobbyItem::Resync);
                    };
                    let stored: StoredNews = match codec::open("lobby news", &event.payload) {
                        Ok((FORMAT, body)) => body.last().ok()?,
                        _ => return None,
                    };
                    let view = match stored.news {
                        // Gone or filled since: the news that follows says so.
                        LobbyNews::Opened => {
                            let game = GameId::stored(&stored.game_id)?;
                            let (version, record) = super::load(&store, game).await.ok()?;
                            Some(View::of(game, version, &record, None))
                        }
                        LobbyNews::Filled | LobbyNews::Finished => None,
                    };
                    Some(LobbyItem::News(Box::new(LobbyEvent {
                        news: stored.news,
                        game_id: stored.game_id,
                        view,
                    })))
                }
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {

    use std::time::Duration;

    use super::*;
    use crate::engine::{End, Tile};

    /// A lobby stream that fell behind by more news than the store holds for it is told
    /// to list again, and goes on with the news that follows (it used to end).
    #[tokio::test]
    async fn a_lobby_stream_that_falls_behind_is_told_to_resync_and_goes_on() {
        let services = crate::service::Services::on_memory(Duration::from_millis(50));
        let service = &services.games;
        let mut lobby = service.lobby().await.unwrap();
        // Not read while far more news comes than a subscriber's buffer holds.
        for _ in 0..500 {
            service
                .announce(LobbyNews::Finished, GameId::random())
                .await;
        }
        let within = Duration::from_secs(5);
        let item = tokio::time::timeout(within, lobby.next())
            .await
            .expect("an item comes");
        assert!(matches!(item, Some(LobbyItem::Resync)), "a resync first");
        let later = GameId::random();
        service.announce(LobbyNews::Finished, later).await;
        match tokio::time::timeout(within, lobby.next())
            .await
            .expect("an item comes")
        {
            Some(LobbyItem::News(event)) => {
                assert_eq!(
                    (event.news, event.game_id.as_str()),
                    (LobbyNews::Finished, later.as_str())
                );
            }
            Some(LobbyItem::Resync) => panic!("one resync for one gap"),
            None => panic!("the stream ended"),
        }
    }

    #[test]
    fn public_events_are_compact_and_only_their_format_reads() {
        let event = PublicEvent {
            version: 141,
            status: Status::Playing,
            turn: Some(1),
            moves: vec![(
                0,
                Move::Play {
                    tile: "5-3".parse::<Tile>().unwrap(),
                    end: Some(End::Left),
                    claim: None,
                },
            )],
        };
        let bytes = event.encode();
        assert!(bytes.len() <= 16, "{} bytes", bytes.len());
        assert_eq!(PublicEvent::decode(&bytes), Some(event.clone()));
        assert_eq!(
            PublicEvent::decode(&serde_json::to_vec(&event).unwrap()),
            None
        );
        assert_eq!(PublicEvent::decode(b""), None);
        assert_eq!(PublicEvent::decode(&[9, 1, 2]), None);
    }
}
