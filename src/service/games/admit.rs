//! The one admission path: every game made (created in the lobby, a challenge accepted,
//! seeks paired, a match's next deal) is built by [`Games::record_from`] and stored by
//! [`Games::admit`], so the checks and caps on a new game are in one place.

use rand::Rng;

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{GameId, MatchId, NameKey, PlayerId, Seat, TournamentId};
use crate::engine::{Deal, Game, Preset, RulesPatch, Seed};

use crate::store::{Creator, GameStore, History, Listing, MADE_WITHIN, StoreError};

use super::clock::{ClockSettings, OnTimeout};
use super::record::{Record, Status};
use super::saved::Saved;
use super::{Error, Games};
use crate::service::shared::now_ms;

/// A new game, as the lobby asks for it (and the other ways of making one build it).
#[derive(Debug, Clone)]
pub struct NewGame {
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub seats: u8,
    pub bots: Vec<(u8, Level)>,
    pub seed: Option<Seed>,
    pub deal: Option<Deal>,
    pub clock: Option<ClockSettings>,
}

/// What a game made by another aggregate belongs to: its end moves that on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// A duplicate match's deal.
    Match(MatchId),
    /// A tournament's pairing.
    Tournament(TournamentId),
}

/// A game to make. What another aggregate needs the game to carry goes in here, typed,
/// and the games aggregate alone writes it into the record.
pub struct Admission<'a> {
    pub id: GameId,
    /// Built by [`Games::record_from`].
    pub record: Record,
    /// Its result is to move its players' ratings.
    pub rated: bool,
    /// The match or tournament it is a game of, if any.
    pub parent: Option<Parent>,
    /// The other games of its deal (a duplicate deal's): while one is in play this one is
    /// sealed ([`Games::unsealed`]).
    pub twins: Vec<GameId>,
    /// Seats bound to players, as (seat, player id, name): each with a token nobody is
    /// shown (the player's key opens it).
    pub players: Vec<(u8, &'a str, &'a str)>,
    /// The address it counts against (its waiting and games caps), if any.
    pub from: Option<AddressKey>,
}

impl Games {
    /// A new game's record as `new` asks for it, checked: its seats free but the bots'.
    pub(crate) fn new_record(&self, new: &NewGame) -> Result<Record, Error> {
        self.record_from(new, None)
    }

    /// [`Self::new_record`], dealt from `server_seed` when given: the server's own secret
    /// seed (a match's deal), which no player knows, so the game is not prearranged.
    pub(crate) fn record_from(
        &self,
        new: &NewGame,
        server_seed: Option<Seed>,
    ) -> Result<Record, Error> {
        let rules = new.preset.rules().with(&new.overrides);
        rules.validate(new.seats)?;
        if let Some(clock) = &new.clock {
            clock.validate().map_err(Error::InvalidRules)?;
            if clock.on_timeout == OnTimeout::Forfeit && rules.sides(new.seats) != 2 {
                return Err(Error::InvalidRules(
                    "clock.on_timeout: forfeit needs two sides (2 seats, or 4 in teams); \
                     use bot with three or four independent seats"
                        .into(),
                ));
            }
        }
        let prearranged = new.seed.is_some() || new.deal.is_some();
        if prearranged && !self.ctx.allow_prearranged {
            let field = if new.seed.is_some() { "seed" } else { "deal" };
            return Err(Error::InvalidRules(format!(
                "{field}: this server does not accept prearranged games \
                 (ALLOW_PREARRANGED=false); create the game without seed and deal"
            )));
        }
        let seed = server_seed
            .or(new.seed)
            .unwrap_or_else(|| Seed(self.ctx.dealer.secret()));
        let game = Game::new(rules, new.seats, seed, new.deal.clone())?;
        let mut record = Record::new(now_ms(), new.preset, prearranged, new.clock, game);
        for &(seat, level) in &new.bots {
            record.seating_mut().seat_bot(seat, level, new.seats)?;
        }
        Ok(record)
    }

    /// Makes game `admission.id`: its players' seats bound (each game indexed in its
    /// player's games before it exists, as a join does), stored (refused if the id is
    /// taken: `Ok(None)`, made by an earlier try), listed in the lobby while it waits for
    /// players, its reactions dispatched, and its bots set to play if they are to move.
    pub(crate) async fn admit(&self, admission: Admission<'_>) -> Result<Option<Record>, Error> {
        let Admission {
            id,
            mut record,
            rated,
            parent,
            twins,
            players,
            from,
        } = admission;
        record.rated = rated;
        match parent {
            Some(Parent::Match(id)) => record.series = Some(id),
            Some(Parent::Tournament(id)) => record.tournament = Some(id),
            None => {}
        }
        record.twins = twins;
        for (seat, player, name) in players {
            record
                .seating_mut()
                .seat_bound(Seat::new(seat), name, &unseen_token(), player);
            if self
                .players
                .hook_of(&PlayerId::stored(player.to_owned()))
                .await?
                .is_some()
            {
                record.called_mut().hook(seat);
            }
            self.ctx
                .store
                .player_index()
                .add_player_game(player, NameKey::of(name).as_str(), &id, record.created_ms)
                .await?;
        }
        // Made full: the clock of the seat to move starts now, as the last join would
        // start it, so a player who never comes loses on time.
        if record.status() == Status::Playing {
            let (now, next) = (now_ms(), record.human_to_move());
            if let Some(clock) = &mut record.clock {
                clock.settle(None, true, next, now, now);
            }
        }
        let listing = (record.status() == Status::Waiting).then(|| Listing {
            created_ms: record.created_ms,
            owner: from
                .zip(self.ctx.caps.waiting)
                .map(|(from, max)| (from.to_string(), max)),
        });
        let caps = self.ctx.caps;
        let creator = from
            .filter(|_| caps.games.is_some() || caps.kept.is_some())
            .map(|from| Creator {
                address: from.to_string(),
                max: caps.games.unwrap_or(usize::MAX),
                kept: caps.kept.unwrap_or(usize::MAX),
            });
        // Due before it exists (for no version yet, so an entry of a game already made
        // under this id stands): a process that stops between the create and the due
        // entry below leaves its bots or its clock to the other processes' sweeps.
        if record.due(now_ms()).is_some() {
            let ahead = now_ms() + MADE_WITHIN.as_millis() as u64;
            self.ctx
                .store
                .games()
                .index_deadline(&id, 0, Some(ahead))
                .await?;
        }
        match self
            .ctx
            .store
            .games()
            .create_by(&id, record.encode(), listing, creator)
            .await
        {
            Ok(()) => {}
            Err(StoreError::Exists) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        self.ctx.metrics.games_created.inc();
        // Before its bots start: their first write starts from the copy it keeps.
        let started = record.status() != Status::Waiting;
        self.dispatch(&Saved {
            id,
            version: 1,
            record: &record,
            made: true,
            started,
            // A game is made keeping no events.
            history: Some(&History::default()),
        })
        .await;
        if let Some(due) = record.due(now_ms()) {
            // Bots to move (a table of bots alone, or bots leading a full table): queued
            // at once, so whichever process has room plays them even if this one stops;
            // and this one starts at once if it has room. Else a clock's deadline.
            if let Err(e) = self
                .ctx
                .store
                .games()
                .index_deadline(&id, 1, Some(due))
                .await
            {
                tracing::warn!(game_id = %id, error = %e, "created, but could not index its bots' turn or its clock");
            }
            if record.bots_to_move() || record.called_to_move().is_some() {
                self.drive(id, record.bots_alone());
            }
        }
        Ok(Some(record))
    }
}

/// A token for a seat bound to a player: the player's key opens it, so this token is
/// never shown to anyone.
fn unseen_token() -> String {
    let mut token = [0u8; 32];
    rand::rng().fill_bytes(&mut token);
    hex::encode(token)
}
