//! A player's seats: taking one with a player's key, and the games a player sits in. Part
//! of the games aggregate: both read the stored games; the players aggregate only
//! answers whose key it is.

use futures_util::future::join_all;

use crate::domain::{Caller, GameId, NameKey, PlayerKey, Who};
use crate::engine::Preset;
use crate::service::page::{MAX_PER_PAGE, page_offset};
use crate::service::players::{PlayerRecord, RatingMoved};
use crate::store::GameStore;

use super::record::{Record, Status};
use super::view::View;
use super::{Error, GameQueries, Games};

impl Games {
    /// The player a key opens, about to take a seat of game `game_id`. The game goes into
    /// the player's index of games now, before the seat is taken: a crash in between
    /// leaves the index naming a game where the player holds no seat, which the listing
    /// skips; the other order could leave a seat the player's listing never shows (a bot
    /// catching up after a restart would never play it). Not when the player sits there
    /// already or no seat is free: the join decides then (a retry's answer, or a refusal),
    /// and the index gains nothing it should not.
    pub(super) async fn seating(
        &self,
        game_id: GameId,
        key: &PlayerKey,
    ) -> Result<PlayerRecord, Error> {
        let (_, player) = self.players.open(key).await?;
        let (_, record) = self.load(game_id).await?;
        if record.seating().seat_of_player(player.id()).is_none()
            && !record.seating().free_seats().is_empty()
        {
            self.ctx
                .store
                .player_index()
                .add_player_game(
                    player.id(),
                    NameKey::of(player.name()).as_str(),
                    &game_id,
                    record.created_ms,
                )
                .await?;
        }
        Ok(player)
    }
}

/// Whether [`Games::unsealed`] refused: the game is sealed.
fn is_sealed(unsealed: Result<(), Error>) -> Result<bool, Error> {
    match unsealed {
        Ok(()) => Ok(false),
        Err(Error::Sealed(_)) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Refuses a seat to a player holding one in this game already.
pub(super) fn held_by(record: &Record, player: &PlayerRecord) -> Result<(), Error> {
    match record.seating().seat_of_player(player.id()) {
        Some(seat) => Err(Error::SeatTaken(format!(
            "this player holds seat {seat} of this game already"
        ))),
        None => Ok(()),
    }
}

impl GameQueries {
    /// The key's player's games, newest first, each as its seat sees it: a page (from 1)
    /// of those with `status` (any without), `waiting` counted as playing.
    pub async fn my_games(
        &self,
        caller: &Caller,
        status: Option<Status>,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<View>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let (_, player) = self.games.players.authenticate(caller).await?;
        // Its own seats: a sealed game reads as it was played.
        self.games_of(player.id(), status, skip, per_page, true)
            .await
    }

    /// The games of a player by id or name, as [`GameQueries::my_games`] lists them: anyone may
    /// read them (a game is public, its hands are not in the list), as a profile shows. A
    /// sealed game ([`Games::unsealed`]) shows as it was made, in play, telling nothing of
    /// how it went.
    pub async fn player_games(
        &self,
        who: &Who,
        status: Option<Status>,
        page: usize,
        per_page: usize,
    ) -> Result<Vec<View>, Error> {
        let skip = page_offset(page, per_page, "per_page")?;
        let id = self
            .games
            .players
            .id_of(who)
            .await?
            .ok_or(Error::PlayerNotFound)?;
        if self.games.players.player_record(&id).await?.is_none() && !id.is_level() {
            return Err(Error::PlayerNotFound);
        }
        self.games_of(&id, status, skip, per_page, false).await
    }

    /// The rating history of a player by id or name in `preset`
    /// ([`crate::service::Players::rating_history`]), less the points of games sealed
    /// ([`Games::unsealed`]): while a twin is in play, its game's rating moved is not told
    /// (a rating that moved tells how it went).
    pub async fn rating_history(
        &self,
        who: &Who,
        preset: Preset,
    ) -> Result<Vec<RatingMoved>, Error> {
        let points = self.games.players.rating_history(who, preset).await?;
        let sealed = join_all(points.iter().map(|p| self.sealed_to_all(p.game_id))).await;
        let mut told = Vec::with_capacity(points.len());
        for (point, sealed) in points.into_iter().zip(sealed) {
            if !sealed? {
                told.push(point);
            }
        }
        Ok(told)
    }

    /// Whether game `id` is sealed to all but its own seats now; a game gone is not.
    async fn sealed_to_all(&self, id: GameId) -> Result<bool, Error> {
        let Some(stored) = self.games.ctx.store.games().load(&id).await? else {
            return Ok(false);
        };
        let record = Record::decode(&stored.bytes)?;
        is_sealed(self.games.unsealed(&record, None, false).await)
    }

    /// Player `player`'s games with `status`, newest first, from the `skip`th; `own`: as
    /// the player's own seats read them, else as anyone (a sealed game shows as made).
    async fn games_of(
        &self,
        player: &str,
        status: Option<Status>,
        skip: usize,
        per_page: usize,
        own: bool,
    ) -> Result<Vec<View>, Error> {
        let (mut matched, mut out, mut offset) = (0usize, Vec::new(), 0usize);
        // The index is capped (PLAYER_GAMES_KEPT), so this reads a bounded number of
        // games; expired ones and seats never taken are skipped.
        loop {
            let (ids, _) = self
                .games
                .ctx
                .store
                .player_index()
                .player_games(player, offset, MAX_PER_PAGE)
                .await?;
            if ids.is_empty() {
                return Ok(out);
            }
            offset += ids.len();
            for id in ids.iter().filter_map(|id| GameId::stored(id)) {
                let Some(stored) = self.games.ctx.store.games().load(&id).await? else {
                    continue;
                };
                let record = Record::decode(&stored.bytes)?;
                let Some(seat) = record.seating().seat_of_player(player) else {
                    continue;
                };
                let mut view = View::of(id, stored.version, &record, Some(seat));
                if !own && is_sealed(self.games.unsealed(&record, None, false).await)? {
                    view = view.shown_as_made();
                }
                let wanted = match (status, view.status) {
                    (None, _) => true,
                    (Some(Status::Finished), s) => s == Status::Finished,
                    (Some(_), s) => s != Status::Finished,
                };
                if !wanted {
                    continue;
                }
                matched += 1;
                if matched > skip {
                    out.push(view);
                    if out.len() == per_page {
                        return Ok(out);
                    }
                }
            }
        }
    }
}
