//! Who sits where in a game: each seat's occupant as everyone sees it, its token's hash
//! and the player it is bound to. Part of the game's record ([`super::record::Record`],
//! stored in its place there: postcard writes a nested struct as its fields in order), and
//! changed only by the games (a join, an admission).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::bots::Level;
use crate::domain::Seat;

use super::Error;

/// One seat as everyone may see it: who sits there. A free seat has neither.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupant {
    pub name: Option<String>,
    pub bot: Option<Level>,
}

/// A game's seats, as its record keeps them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Seating {
    seats: Vec<Occupant>,
    /// Per seat, the first 128 bits of its token's SHA-256 (the token itself is never
    /// stored). Tokens are 256 random bits, so finding another token with these 128 bits
    /// is out of reach, and every stored game is smaller than with the whole hash.
    tokens: Vec<Option<TokenHash>>,
    /// Per seat, the id of the player it is bound to (taken with a player's key): that
    /// player's key opens it as its token does.
    players: Vec<Option<String>>,
}

impl Seating {
    /// `seats` seats, every one free.
    pub(super) fn free(seats: usize) -> Seating {
        let nobody = Occupant {
            name: None,
            bot: None,
        };
        Seating {
            seats: vec![nobody; seats],
            tokens: vec![None; seats],
            players: vec![None; seats],
        }
    }

    /// How many seats it has (each of its lists must hold as many as its game).
    pub(super) fn counts(&self) -> [usize; 3] {
        [self.seats.len(), self.tokens.len(), self.players.len()]
    }

    /// Who sits at each seat.
    pub fn occupants(&self) -> &[Occupant] {
        &self.seats
    }

    pub fn is_taken(&self, seat: Seat) -> bool {
        self.tokens[seat.at()].is_some() || self.seats[seat.at()].bot.is_some()
    }

    /// The seats nobody has taken yet, lowest first.
    pub fn free_seats(&self) -> Vec<u8> {
        (0..self.seats.len() as u8)
            .filter(|&s| !self.is_taken(Seat::new(s)))
            .collect()
    }

    /// Seats built-in `level` at seat `seat` of a new game (a `seats`-seat one).
    pub(super) fn seat_bot(&mut self, seat: u8, level: Level, seats: u8) -> Result<(), Error> {
        let slot = self.seats.get_mut(seat as usize).ok_or_else(|| {
            Error::InvalidRules(format!(
                "bots: there is no seat {seat} in a {seats}-seat game"
            ))
        })?;
        if slot.bot.is_some() {
            return Err(Error::InvalidRules(format!(
                "bots: seat {seat} is given two bots"
            )));
        }
        slot.bot = Some(level);
        slot.name = Some(level.seat_name());
        Ok(())
    }

    /// Seats a player holding `token`.
    pub(super) fn seat_player(&mut self, seat: Seat, name: &str, token: &str) {
        self.seats[seat.at()] = Occupant {
            name: Some(name.to_string()),
            bot: None,
        };
        self.tokens[seat.at()] = Some(TokenHash::of(token));
    }

    /// Seats player `player` (its id) holding `token`: its key opens the seat too.
    pub(super) fn seat_bound(&mut self, seat: Seat, name: &str, token: &str, player: &str) {
        self.seat_player(seat, name, token);
        self.players[seat.at()] = Some(player.to_owned());
    }

    /// Every seat bound to a player, with the player's id.
    pub fn bound_players(&self) -> impl Iterator<Item = (u8, &str)> {
        self.players
            .iter()
            .enumerate()
            .filter_map(|(seat, p)| Some((seat as u8, p.as_deref()?)))
    }

    /// The id of the player seat `seat` is bound to, if any.
    pub fn player_at(&self, seat: Seat) -> Option<&str> {
        self.players.get(seat.at())?.as_deref()
    }

    /// The seat bound to player `player` (its id), if any.
    pub fn seat_of_player(&self, player: &str) -> Option<u8> {
        self.players
            .iter()
            .position(|p| p.as_deref() == Some(player))
            .map(|seat| seat as u8)
    }

    /// The seat whose token hashes to `hash` ([`TokenHash::of`]). Every seat's hash is
    /// compared, in constant time, so the answer's timing says nothing about the token.
    pub fn seat_of(&self, hash: &TokenHash) -> Option<u8> {
        let mut found = None;
        for (i, seat) in self.tokens.iter().enumerate() {
            if let Some(h) = seat
                && bool::from(h.0.ct_eq(&hash.0))
            {
                found = Some(i as u8);
            }
        }
        found
    }
}

/// What a record keeps of a seat's token: the first 128 bits of its SHA-256. Computed once
/// a request (the rate limit counts a token by it too), so a move hashes its token once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TokenHash([u8; 16]);

impl TokenHash {
    pub fn of(token: &str) -> TokenHash {
        let digest = Sha256::digest(token.as_bytes());
        let mut hash = [0; 16];
        hash.copy_from_slice(&digest[..16]);
        TokenHash(hash)
    }
}
