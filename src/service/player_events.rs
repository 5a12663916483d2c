//! A player's stream: news of the games its seats are bound in (started, finished),
//! published on the player's channel in the store, so it reaches the player's stream on
//! whichever process holds it. News is a live notice, kept nowhere: on (re)connecting, a
//! client lists its games (`status=playing`) to catch up.

use futures_util::stream::{self, BoxStream, StreamExt};
use serde::{Deserialize, Serialize};

use super::challenge::Challenge;
use super::ratings::RatingChange;
use super::seeks::Seek;
use super::{Error, GameService, Record};
use crate::engine::{MatchEnd, Outcome, Preset};
use crate::store::Event as StoredEvent;
use crate::store::players::PlayerStore;

/// The published form's format byte (then postcard).
const FORMAT: u8 = 1;

/// How long a player's stream waits before subscribing again after a subscription that
/// ended before giving any news (a store losing its connections): no busy loop.
const RESUBSCRIBE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// News for one player.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum PlayerNews {
    /// A game with a seat bound to the player started (its last seat was taken).
    GameStarted {
        game_id: String,
        seat: u8,
        preset: Preset,
        rated: bool,
        /// Per seat, the name shown there.
        players: Vec<Option<String>>,
    },
    /// A challenge to the player was made.
    Challenge(Box<Challenge>),
    /// An opponent declined a challenge the player made or was also challenged in.
    ChallengeDeclined(Box<Challenge>),
    /// The challenger took back a challenge to the player.
    ChallengeCanceled(Box<Challenge>),
    /// A challenge the player made or received expired unanswered.
    ChallengeExpired(Box<Challenge>),
    /// A seek of the player's expired unmatched.
    SeekExpired(Box<Seek>),
    /// A match the player is in moved on: a game started or ended, or it is over.
    MatchUpdated(Box<Challenge>),
    /// Its match ended.
    GameFinished {
        game_id: String,
        outcome: Outcome,
        reason: MatchEnd,
        /// Per side.
        scores: Vec<i32>,
        /// In a rated game, the player's rating before and after it.
        rating: Option<RatingChange>,
    },
}

/// What a player's stream carries: news, or word that news was lost.
pub enum PlayerItem {
    News(PlayerNews),
    /// The stream fell behind or lost its store's subscription: the client lists its
    /// games again. The stream goes on with the news from now.
    Resync,
}

impl GameService {
    /// After a save of game `id`: tells every player bound to a seat that the game
    /// `started` or `finished`. Best effort, as the lobby's news: the player's games are
    /// the truth, so a failure is logged and the save stands. A rated game's end is told
    /// once its ratings moved, with each player's change ([`Self::settle_ratings`]).
    pub(super) async fn tell_players(
        &self,
        id: &str,
        record: &Record,
        started: bool,
        finished: bool,
    ) {
        let names: Vec<Option<String>> = record.seats.iter().map(|s| s.name.clone()).collect();
        for (seat, player) in record.bound_players() {
            if started {
                let news = PlayerNews::GameStarted {
                    game_id: id.to_owned(),
                    seat,
                    preset: record.preset,
                    rated: record.rated,
                    players: names.clone(),
                };
                self.tell_player(player, &news).await;
            }
            if finished && !record.rated {
                self.tell_finished(id, record, player, None).await;
            }
        }
    }

    /// Publishes `news` on player `player`'s channel; a failure is logged (news is a
    /// notice: what it tells can be read from the store).
    pub(super) async fn tell_player(&self, player: &str, news: &PlayerNews) {
        let payload = postcard::to_extend(news, vec![FORMAT]).expect("news serialises");
        let event = StoredEvent {
            version: super::now_ms(),
            payload,
        };
        if let Err(e) = self.store.publish_player(player, event).await {
            tracing::warn!(player_id = %player, error = %e, "player news not published");
        }
    }

    /// The key's player's news from now on. A stream that falls behind is not ended: it
    /// says [`PlayerItem::Resync`] and goes on.
    pub async fn player_events(
        &self,
        key: Option<&str>,
    ) -> Result<BoxStream<'static, PlayerItem>, Error> {
        let key = key.ok_or(super::players::NO_KEY)?;
        let (_, player) = self.authenticate(key).await?;
        let id = player.id;
        let live = self.store.subscribe_player(&id).await?;
        let store = self.store.clone();
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
        .take_until(self.stopping.clone().cancelled_owned());
        Ok(raw
            .filter_map(|event| async move {
                let Some(event) = event else {
                    return Some(PlayerItem::Resync);
                };
                match event.payload.split_first() {
                    Some((&FORMAT, rest)) => postcard::from_bytes(rest).ok().map(PlayerItem::News),
                    _ => None,
                }
            })
            .boxed())
    }
}
