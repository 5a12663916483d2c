//! The lobby's use cases: create a game, take a seat in it, list the games waiting for
//! players. Each checks the request in domain words, then writes through
//! [`Games::update`] (a join) or the store's create (a new game).

use std::convert::Infallible;

use rand::Rng;

use crate::address::AddressKey;
use crate::domain::{GameId, PlayerKey, Seat, SeatName};
use crate::metrics::BotPlace;
use crate::service::idempotency::{Before, Create, once};
use crate::service::page::page_offset;
use crate::store::{GameStore, StoreError};

use super::admit::{Admission, NewGame};
use super::bot_work::BotWork;
use super::idempotency::RequestKey;
use super::record::{Record, Status};
use super::seating::TokenHash;
use super::seats::held_by;
use super::view::{NewSeat, View};
use super::write::{Change, Decision, Written};
use super::{Error, GameQueries, Games};

impl Games {
    /// Creates a game; a game of bots only is stored with its bots to move, and they play
    /// it in the background. A game left waiting for players counts against `from`'s cap
    /// on them until it fills or expires. With `request` (its `Idempotency-Key`) a retry
    /// answers the same game, as it is now, made once.
    pub async fn create(
        &self,
        new: NewGame,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<View, Error> {
        let record = self.new_record(&new)?;
        let id = GameId::random();
        let make = async {
            let admission = Admission {
                id,
                record,
                rated: false,
                parent: None,
                twins: Vec::new(),
                players: Vec::new(),
                from,
            };
            let record = self
                .admit(admission)
                .await?
                .ok_or(Error::from(StoreError::Exists))?;
            tracing::info!(game_id = %id, preset = new.preset.name(), seats = new.seats, bots = new.bots.len(), prearranged = record.prearranged, "game created");
            Ok(View::of(id, 1, &record, None))
        };
        let store = &self.ctx.store;
        once(store, request, Create::Game, None, &id, None, make, {
            |before: Before| async move {
                let id = GameId::stored(&before.id)
                    .ok_or_else(|| Error::Internal("a game's receipt names no game".into()))?;
                let (version, record) = before.found(self.load(id).await)?;
                Ok(View::of(id, version, &record, None))
            }
        })
        .await
    }

    /// Takes a seat; the last seat taken starts the game (and bots that lead move).
    /// With a key, a retry of the same request (same key and body) gets the same seat and
    /// token again, with the seat's view as it is now. With a player's key, the seat is
    /// bound to that player and shows its name.
    pub async fn join(
        &self,
        id: GameId,
        name: Option<&SeatName>,
        wanted: Option<Seat>,
        key: Option<&RequestKey>,
        player: Option<&PlayerKey>,
    ) -> Result<NewSeat, Error> {
        let player = match player {
            Some(key) => Some(self.seating(id, key).await?),
            None => None,
        };
        let name = match (&player, name) {
            (Some(player), _) => player.name(),
            (None, Some(name)) => name.as_str(),
            (None, None) => {
                return Err(Error::BadRequest(
                    "name: required when no player key is sent".into(),
                ));
            }
        };
        if key.is_some_and(|key| !key.is_join()) {
            return Err(Error::Internal(
                "a join's key must be made for a join".into(),
            ));
        }
        let mut token_bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut token_bytes);
        let token = hex::encode(token_bytes);
        let key = key.map(|key| key.sealing(&token_bytes));
        let updated = self
            .update::<_, Infallible>(id, key.as_ref().map(|key| (key, None)), |_, _, record| {
                if let Some(player) = &player {
                    held_by(record, player)?;
                }
                let free = record.seating().free_seats();
                let seat = match wanted {
                    _ if free.is_empty() => return Err(Error::GameFull),
                    Some(s) if s.at() >= record.seating().occupants().len() => {
                        return Err(Error::BadRequest(format!(
                            "seat: this game has seats 0 to {} (got {s})",
                            record.seating().occupants().len() - 1
                        )));
                    }
                    Some(s) if !free.contains(&s.index()) => {
                        return Err(Error::SeatTaken(format!("seat {s} is taken")));
                    }
                    Some(s) => s,
                    None => Seat::new(free[0]),
                };
                match &player {
                    Some(player) => {
                        record
                            .seating_mut()
                            .seat_bound(seat, name, &token, player.id());
                        if player.calls_hook() {
                            record.called_mut().hook(seat.index());
                        }
                    }
                    None => record.seating_mut().seat_player(seat, name, &token),
                }
                let started = record.status() != Status::Waiting;
                Ok(Decision::Store(Change {
                    value: (seat, started),
                    mover: None,
                    moves: Vec::new(),
                    seat: Some(seat.index()),
                    unlist: started,
                    relist: !started,
                    think: BotWork::bots(record, BotPlace::Request),
                }))
            })
            .await?;
        let (version, record, seat, started) = match updated {
            Written::Saved {
                version,
                record,
                value: (seat, started),
                ..
            } => (version, record, seat, started),
            Written::Repeated {
                stored,
                version,
                record,
            } => {
                let token = stored
                    .sealed
                    .zip(key.as_ref())
                    .and_then(|(sealed, key)| key.unseal(&sealed))
                    .map(hex::encode)
                    .ok_or_else(|| Error::Internal("a join's receipt has no token".into()))?;
                let seat = Seat::new(stored.receipt.seat);
                // The token must open its seat: a damaged receipt answers no seat.
                if record.seating().seat_of(&TokenHash::of(&token)) != Some(seat.index()) {
                    return Err(Error::Internal(
                        "a join's receipt does not open its seat".into(),
                    ));
                }
                return Ok(NewSeat {
                    seat,
                    token,
                    view: View::of(id, version, &record, Some(seat.index())),
                });
            }
        };
        tracing::info!(game_id = %id, seat = seat.index(), started, version, "seat taken");
        if record.bots_to_move() || record.called_to_move().is_some() {
            self.drive(id, false);
        }
        Ok(NewSeat {
            seat,
            token,
            view: View::of(id, version, &record, Some(seat.index())),
        })
    }
}

impl GameQueries {
    /// A page of open games, newest first (pages from 1).
    pub async fn list_open(&self, page: usize, per_page: usize) -> Result<Vec<View>, Error> {
        let offset = page_offset(page, per_page, "per_page")?;
        let listed = self
            .games
            .ctx
            .store
            .games()
            .list_open(offset, per_page)
            .await?;
        let mut out = Vec::with_capacity(listed.len());
        for (id, stored) in listed {
            // A game may have filled since its entry was written (the store's lobby is an
            // index): skip it. An unreadable entry is skipped too, not the whole page.
            match (GameId::stored(&id), Record::decode(&stored.bytes)) {
                (Some(game), Ok(record)) if record.status() == Status::Waiting => {
                    out.push(View::of(game, stored.version, &record, None));
                }
                (None, _) => tracing::warn!(game_id = %id, "a lobby entry names no game id"),
                (_, Ok(_)) => {}
                (_, Err(e)) => {
                    tracing::warn!(game_id = %id, error = %e, "a lobby entry does not decode")
                }
            }
        }
        Ok(out)
    }

    /// A page of games in play, latest started first (pages from 1), each as a spectator
    /// sees it now. The store's list is an index: a game that finished or expired since
    /// its entry was written is left out, so a page may hold fewer than `per_page`.
    pub async fn list_playing(&self, page: usize, per_page: usize) -> Result<Vec<View>, Error> {
        let offset = page_offset(page, per_page, "per_page")?;
        let ids = self
            .games
            .ctx
            .store
            .games()
            .list_playing(offset, per_page)
            .await?;
        self.views_in(&ids, Status::Playing).await
    }

    /// A page of the latest finished games, the latest first (pages from 1; the store keeps
    /// the newest [`crate::store::FINISHED_KEPT`]), each as a spectator sees it: one that
    /// expired since is left out.
    pub async fn list_finished(&self, page: usize, per_page: usize) -> Result<Vec<View>, Error> {
        let offset = page_offset(page, per_page, "per_page")?;
        let ids = self
            .games
            .ctx
            .store
            .games()
            .list_finished(offset, per_page)
            .await?;
        self.views_in(&ids, Status::Finished).await
    }

    /// The games of an index that still exist and are `status`, in its order.
    async fn views_in(&self, ids: &[String], status: Status) -> Result<Vec<View>, Error> {
        // Entries that are no id of a game are no game.
        let ids: Vec<GameId> = ids.iter().filter_map(|id| GameId::stored(id)).collect();
        let loaded = futures_util::future::join_all(
            ids.iter().map(|id| self.games.ctx.store.games().load(id)),
        )
        .await;
        let mut out = Vec::with_capacity(ids.len());
        for (&id, loaded) in ids.iter().zip(loaded) {
            let Some(stored) = loaded? else { continue };
            match Record::decode(&stored.bytes) {
                Ok(record) if record.status() == status => {
                    out.push(View::of(id, stored.version, &record, None));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(game_id = %id, error = %e, "a listed game does not decode")
                }
            }
        }
        Ok(out)
    }
}
