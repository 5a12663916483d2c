//! The values a request names (ids, seats, names, who sent it), each parsed once where a
//! request comes in (`api::wire::ids`, `api::client`) and trusted below: the service
//! takes these types, never an unchecked string. What makes each one valid (a name's letters, an id's form) lives on
//! its type, and nowhere else. Knows no HTTP and no store; a refusal is a [`Refusal`],
//! which the service's error turns into its answer.

mod caller;
mod ids;
mod names;
mod seat;

pub use caller::{Caller, KEY_PREFIX, PlayerKey, Token};
pub use ids::{ChallengeId, GameId, Id, LeagueId, MatchId, PlayerId, SeekId, TournamentId};
pub use names::{
    EntrantId, MAX_SEAT_NAME_CHARS, NameKey, Named, PLAYER_NAME_CHARS, PlayerName, SeatName, Who,
    visible_text,
};
pub use seat::Seat;

/// Why a request's value is not one of these types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not of the type's form; the message names the field.
    Malformed(String),
    /// A player's name that is reserved (`me`, a built-in level's).
    Reserved(String),
    /// Text that cannot be the id of anything of this kind: it names nothing.
    NoSuch(Kind),
}

/// What an id names, for [`Refusal::NoSuch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Challenge,
    Seek,
    Match,
    Tournament,
    League,
    /// An entrant of a tournament.
    Entrant,
}
