//! A seek, as it is stored and as its player sees it: matchmaking's stored type (the
//! store keeps the pool's fields; the rest is this blob).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::engine::Preset;
use crate::service::Error;
use crate::service::codec::{self, Encoder};
use crate::service::games::clock::{ClockSettings, OnTimeout};
use crate::service::shared::now_ms;
use crate::store::seeks::{SeekEntry, SeekState};

use super::invitation::Party;

/// The seek's blob's format byte, then postcard: the blob, then the address its game is to
/// count against (appended apart, so format 1, without it, reads with the same struct).
const FORMAT: u8 = 2;
/// The format before: no address.
const FORMAT_V1: u8 = 1;

/// What a seek asks for: the seeks of one pool may play each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wish {
    pub preset: Preset,
    pub seats: u8,
    pub clock: Option<ClockSettings>,
    pub rated: bool,
}

impl Wish {
    /// Its pool: equal wishes share one.
    pub(super) fn pool(&self) -> Pool {
        let clock = match &self.clock {
            None => "none".to_owned(),
            Some(c) => format!(
                "{}+{}/{}/{}/{}",
                c.bank_secs,
                c.increment_secs,
                match c.on_timeout {
                    OnTimeout::Bot => "bot",
                    OnTimeout::Forfeit => "forfeit",
                },
                c.timeout_bot.as_str(),
                c.abandon_after
            ),
        };
        Pool {
            name: format!(
                "{}:{}:{}:{}",
                self.preset.name(),
                self.seats,
                clock,
                if self.rated { "rated" } else { "casual" }
            ),
            seats: self.seats,
            rated: self.rated,
        }
    }
}

/// A pool: the seeks of one wish, which may play each other. The store holds it by its
/// name, every field of the wish; what the pairing needs of it (its seats, rated or not)
/// is read back from that name here, where the name is made, and nowhere else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pool {
    name: String,
    seats: u8,
    rated: bool,
}

impl Pool {
    /// The pool the store names `name`; `None` for a name no wish makes.
    pub(super) fn parse(name: &str) -> Option<Pool> {
        let parts: Vec<&str> = name.split(':').collect();
        let [_preset, seats, _clock, rated] = parts[..] else {
            return None;
        };
        let rated = match rated {
            "rated" => true,
            "casual" => false,
            _ => return None,
        };
        Some(Pool {
            name: name.to_owned(),
            seats: seats.parse().ok()?,
            rated,
        })
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }

    pub(super) fn into_name(self) -> String {
        self.name
    }

    /// The seats of its games.
    pub(super) fn seats(&self) -> u8 {
        self.seats
    }

    /// Whether its games are rated.
    pub(super) fn rated(&self) -> bool {
        self.rated
    }
}

/// A seek, as its player sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seek {
    id: String,
    player: Party,
    wish: Wish,
    /// After how long, and with which level, the missing seats are filled.
    fallback: Option<(Duration, Level)>,
    created_ms: u64,
    expires_ms: u64,
    state: SeekState,
    /// The address that made it: a game it completes counts against it.
    address: Option<AddressKey>,
}

/// What the service keeps in the store's blob: the rest is the store's own fields.
#[derive(Serialize, Deserialize)]
struct Blob {
    name: String,
    wish: Wish,
    fallback: Option<(u64, Level)>,
}

impl Seek {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Who seeks.
    pub fn player(&self) -> &Party {
        &self.player
    }

    /// What it asks for.
    pub fn wish(&self) -> &Wish {
        &self.wish
    }

    /// After how long, and with which level, the missing seats are filled.
    pub fn fallback(&self) -> Option<(Duration, Level)> {
        self.fallback
    }

    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn expires_ms(&self) -> u64 {
        self.expires_ms
    }

    /// Its state as stored ([`Seek::state_now`]: as of now).
    pub fn state(&self) -> &SeekState {
        &self.state
    }

    /// The address that made it: a game it completes counts against it.
    pub(crate) fn address(&self) -> Option<AddressKey> {
        self.address
    }

    /// The blob stored with a new seek.
    pub(super) fn blob(
        name: &str,
        wish: &Wish,
        fallback: Option<(Duration, Level)>,
        address: Option<AddressKey>,
    ) -> Vec<u8> {
        let blob = Blob {
            name: name.to_owned(),
            wish: wish.clone(),
            fallback: fallback.map(|(after, level)| (after.as_secs(), level)),
        };
        Encoder::new(FORMAT, &blob).then(&address).finish()
    }

    pub(super) fn of(entry: SeekEntry) -> Result<Seek, Error> {
        let (blob, address): (Blob, _) = match codec::open("seek", &entry.bytes)? {
            (FORMAT, mut body) => (body.next()?, body.last()?),
            (FORMAT_V1, body) => (body.last()?, None),
            (other, body) => return Err(body.unknown(other)),
        };
        Ok(Seek {
            id: entry.id,
            player: Party {
                id: entry.player,
                name: blob.name,
            },
            wish: blob.wish,
            fallback: blob
                .fallback
                .map(|(secs, level)| (Duration::from_secs(secs), level)),
            created_ms: entry.created_ms,
            expires_ms: entry.expires_ms,
            state: entry.state,
            address,
        })
    }

    /// Its state now: a waiting seek past its expiry is expired, whether or not a sweep
    /// has said so yet.
    pub fn state_now(&self) -> SeekState {
        match &self.state {
            SeekState::Waiting if now_ms() >= self.expires_ms => SeekState::Expired,
            state => state.clone(),
        }
    }
}

/// A new seek, as its player asks for it.
#[derive(Debug, Clone)]
pub struct NewSeek {
    pub wish: Wish,
    pub fallback: Option<(Duration, Level)>,
    /// The address asking: a game the seek completes counts against it.
    pub from: Option<AddressKey>,
}
