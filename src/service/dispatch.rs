//! The one place what follows a save is run from. A game's write answers what it saved
//! ([`Saved`]) and hands it up through its port; each reaction here is owned by its
//! aggregate and called down into, in this order: the lobby's news, the players' news,
//! the ratings, the match or tournament, this process's copy of the game. None of them is called from
//! the write path, and no aggregate below calls up into another. Matchmaking hands up its
//! changes the same way ([`MatchmakingReactions`]): a match's due entry is handed to the
//! matches, and the players hear of challenges and seeks; so do the matches
//! ([`MatchReactions`]): the players hear of a match offered, closed or moved on; the
//! tournaments ([`TournamentReactions`]: a round started, a tournament over) and the
//! ratings ([`RatingReactions`]: a rated game's end, with the rating's change) too. Every
//! piece of player news is told from here.
//!
//! What must happen exactly once goes through the store: a rated game's end is indexed as
//! due before its save (by the games' write path), so a crash between the save and
//! [`SaveReactions::overdue`] loses nothing; a match is polled through its due entry (in the
//! challenges' index) as well as poked here.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::Error;
use super::games::Games;
use super::games::events::LobbyNews;
use super::games::record::Record;
use super::games::record::Status;
use super::games::saved::{SaveReactions, Saved};
use super::matches::{MatchNotice, MatchReactions, Matches};
use super::matchmaking::{MatchmakingReactions, Notice};
use super::news::PlayerNews;
use super::players::Players;
use super::ratings::{RatingChange, RatingReactions, Ratings};
use super::tournaments::{TournamentNotice, TournamentReactions, Tournaments};
use crate::domain::{GameId, MatchId, Seat};

pub(super) struct Dispatcher {
    pub(super) games: Arc<Games>,
    pub(super) players: Arc<Players>,
    pub(super) ratings: Arc<Ratings>,
    pub(super) matches: Arc<Matches>,
    pub(super) tournaments: Arc<Tournaments>,
}

impl Dispatcher {
    /// Everything that follows `saved`.
    async fn after(&self, saved: &Saved<'_>) {
        let (id, record) = (saved.id, saved.record);
        let finished = saved.finished();
        // The lobby: a game opened, filled, finished. Best effort: the list is the truth.
        if saved.made && record.status() == Status::Waiting {
            self.games.announce(LobbyNews::Opened, id).await;
        }
        if saved.started && !saved.made {
            self.games.announce(LobbyNews::Filled, id).await;
        }
        if finished {
            self.games.announce(LobbyNews::Finished, id).await;
        }
        // The players bound to its seats. A rated game's end is told with each rating's
        // change, once it moved (by the ratings).
        for (seat, player) in record.seating().bound_players() {
            if saved.started {
                let news = PlayerNews::started(id, record, Seat::new(seat));
                self.players.tell(player, &news).await;
            }
            if finished
                && !record.rated_end()
                && let Some(news) = PlayerNews::finished(id, record, None)
            {
                self.players.tell(player, &news).await;
            }
        }
        // Boxed: rare and deep, they would otherwise swell every move's future.
        if saved.rated_end() && !self.ratings.skips_settling() {
            if let Err(e) = Box::pin(self.settle(saved)).await {
                tracing::warn!(game_id = %id, error = %e, "ratings not settled; a sweep settles them");
            }
        }
        if finished && let Some(series) = saved.series() {
            Box::pin(self.matches.poke(series)).await;
        }
        if finished && let Some(tournament) = saved.tournament() {
            Box::pin(self.tournaments.poke(tournament)).await;
        }
        self.games.keep(saved);
    }

    /// A rated game's ratings moved once, then its due entry dropped.
    async fn settle(&self, saved: &Saved<'_>) -> Result<(), Error> {
        self.ratings.settle(saved.id, saved.record).await?;
        self.games.settled(saved.id, saved.version).await
    }
}

impl SaveReactions for Dispatcher {
    fn after_save<'a>(&'a self, saved: &'a Saved<'a>) -> BoxFuture<'a, ()> {
        Box::pin(self.after(saved))
    }

    fn overdue<'a>(&'a self, saved: &'a Saved<'a>) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(async move {
            match saved.rated_end() {
                true => self.settle(saved).await,
                false => Ok(()),
            }
        })
    }

    fn webhook_paused<'a>(&'a self, player: &'a str, reason: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let news = PlayerNews::WebhookPaused {
                reason: reason.to_owned(),
            };
            self.players.tell(player, &news).await;
        })
    }
}

impl MatchmakingReactions for Dispatcher {
    fn tend_match(&self, id: MatchId) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(self.matches.tend(id))
    }

    fn tell<'a>(&'a self, players: &'a [String], notice: Notice<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(news) = PlayerNews::of_notice(notice) {
                for player in players {
                    self.players.tell(player, &news).await;
                }
            }
        })
    }
}

impl MatchReactions for Dispatcher {
    fn tell<'a>(&'a self, players: &'a [String], notice: MatchNotice<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let news = PlayerNews::of_match_notice(notice);
            for player in players {
                self.players.tell(player, &news).await;
            }
        })
    }
}

impl TournamentReactions for Dispatcher {
    fn tell<'a>(&'a self, player: &'a str, notice: TournamentNotice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let news = PlayerNews::of_tournament_notice(notice);
            self.players.tell(player, &news).await;
        })
    }
}

impl RatingReactions for Dispatcher {
    fn rated<'a>(
        &'a self,
        id: GameId,
        record: &'a Record,
        player: &'a str,
        change: RatingChange,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(news) = PlayerNews::finished(id, record, Some(change)) {
                self.players.tell(player, &news).await;
            }
        })
    }
}
