//! Who sent a request: nobody, a seat (by its token) or a player (by its key), told
//! apart once where the request comes in, by the bearer's form. Neither secret is checked
//! here: the service opens a key against its player and a token against its seat.

use std::fmt;

/// What every player key starts with (`dpk_<player id>_<secret>`): the form that tells a
/// key from a seat's token, and lets scanners find a leaked key.
pub const KEY_PREFIX: &str = "dpk_";

/// A request's bearer, by what it is meant as.
#[derive(Clone, PartialEq, Eq)]
pub enum Caller {
    /// No bearer: a spectator, or a request a key is missing from.
    Nobody,
    /// A seat's token (anything not of a key's form).
    Seat(Token),
    /// A player's key.
    Player(PlayerKey),
}

impl Caller {
    /// The caller a bearer token (if any) names.
    pub fn of(bearer: Option<&str>) -> Caller {
        match bearer {
            None => Caller::Nobody,
            Some(key) if key.starts_with(KEY_PREFIX) => Caller::Player(PlayerKey(key.to_owned())),
            Some(token) => Caller::Seat(Token(token.to_owned())),
        }
    }

    /// The bearer as it was sent, either kind.
    pub fn bearer(&self) -> Option<&str> {
        match self {
            Caller::Nobody => None,
            Caller::Seat(token) => Some(token.as_str()),
            Caller::Player(key) => Some(key.as_str()),
        }
    }

    /// The player's key, when the caller sent one.
    pub fn player_key(&self) -> Option<&PlayerKey> {
        match self {
            Caller::Player(key) => Some(key),
            _ => None,
        }
    }
}

// A secret: never printed.
impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Caller::Nobody => "Caller::Nobody",
            Caller::Seat(_) => "Caller::Seat(..)",
            Caller::Player(_) => "Caller::Player(..)",
        })
    }
}

/// A player's key as sent: of a key's form, not yet opened.
#[derive(Clone, PartialEq, Eq)]
pub struct PlayerKey(String);

impl PlayerKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A seat's token as sent, not yet matched to a seat.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_is_a_key_by_its_prefix_and_else_a_seat_token() {
        assert_eq!(Caller::of(None), Caller::Nobody);
        let key = format!("{KEY_PREFIX}abc_def");
        assert_eq!(
            Caller::of(Some(&key)).player_key().map(PlayerKey::as_str),
            Some(key.as_str())
        );
        assert!(matches!(Caller::of(Some("0123abcd")), Caller::Seat(_)));
        assert_eq!(Caller::of(Some("0123abcd")).bearer(), Some("0123abcd"));
    }
}
