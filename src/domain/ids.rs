//! Ids. Every id the server makes is a UUID: a game's, a challenge's, a seek's and a
//! match's in its hyphenated form, a player's in its simple form (a built-in level's is
//! its name).
//!
//! The UUID ids hold their 36 ASCII bytes inline: they are `Copy` (a handler passes
//! one down by value, a task keeps one without a clone), and reading one as the `str`
//! the store keys by costs no allocation. A player's id wraps a `String`: it is a UUID
//! or a level's name, of two lengths.

use std::fmt;

use crate::bots::Level;

use super::{Kind, Refusal};

const HYPHENATED: usize = uuid::fmt::Hyphenated::LENGTH;

fn hyphenated(id: uuid::Uuid) -> [u8; HYPHENATED] {
    let mut text = [0u8; HYPHENATED];
    id.hyphenated().encode_lower(&mut text);
    text
}

/// `text` if it is a UUID as this server writes one (lowercase, hyphenated): any other
/// spelling names nothing the server made.
fn canonical(text: &str) -> Option<[u8; HYPHENATED]> {
    let id = uuid::Uuid::try_parse(text).ok()?;
    let bytes = hyphenated(id);
    (bytes == text.as_bytes()).then_some(bytes)
}

/// An id the server made, of any kind: what a create's idempotency claim keeps of the
/// thing it makes (its text), whichever kind it is.
pub trait Id: fmt::Display + Sync {}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name([u8; HYPHENATED]);

        impl Id for $name {}

        impl $name {
            /// A new one, random (UUID v4).
            pub fn random() -> $name {
                $name::from(uuid::Uuid::new_v4())
            }

            /// The id `text` holds, if it is one as this server writes it (an id read back
            /// from the store's indexes and records).
            pub fn stored(text: &str) -> Option<$name> {
                canonical(text).map($name)
            }

            /// As the store keys it: the hyphenated lowercase UUID.
            pub fn as_str(&self) -> &str {
                std::str::from_utf8(&self.0).expect("a UUID's text is ASCII")
            }
        }

        impl From<uuid::Uuid> for $name {
            fn from(id: uuid::Uuid) -> $name {
                $name(hyphenated(id))
            }
        }

        // Read as the `str` the store and the logs take.
        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                self.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        // A record holds it as the text it was stored as (a `String` before, so records
        // written then read the same); one not of the form this server writes is refused
        // as the record's damage, here, once.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, to: S) -> Result<S::Ok, S::Error> {
                to.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(from: D) -> Result<$name, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(from)?;
                $name::stored(&text).ok_or_else(|| {
                    serde::de::Error::custom(format_args!(
                        "{} is not an id this server made",
                        stringify!($name)
                    ))
                })
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }
    };
}

macro_rules! named_by_path {
    ($name:ident, $kind:expr) => {
        impl std::str::FromStr for $name {
            type Err = Refusal;

            /// Only the form this server writes: any other text names nothing.
            fn from_str(text: &str) -> Result<$name, Refusal> {
                canonical(text).map($name).ok_or(Refusal::NoSuch($kind))
            }
        }
    };
}

uuid_id!(
    /// A game. A path names it by any spelling of its UUID (`uuid::Uuid`'s parse: the
    /// path's extractor refuses anything else as naming no resource), which this holds
    /// hyphenated, as it was made.
    GameId
);
uuid_id!(
    /// A challenge.
    ChallengeId
);
uuid_id!(
    /// A seek.
    SeekId
);
uuid_id!(
    /// A duplicate match (stored as a challenge: the two share their ids' space).
    MatchId
);
named_by_path!(ChallengeId, Kind::Challenge);
named_by_path!(SeekId, Kind::Seek);
uuid_id!(
    /// A tournament.
    TournamentId
);
uuid_id!(
    /// A league.
    LeagueId
);
named_by_path!(MatchId, Kind::Match);
named_by_path!(TournamentId, Kind::Tournament);
named_by_path!(LeagueId, Kind::League);

impl MatchId {
    /// The same id, as the challenge a match is stored as.
    pub fn as_challenge(self) -> ChallengeId {
        ChallengeId(self.0)
    }
}

impl ChallengeId {
    /// The same id, as the match it may name (the two share their ids' space).
    pub fn as_match(self) -> MatchId {
        MatchId(self.0)
    }
}

/// A player: a UUID in its simple form (32 lowercase hex digits), or a built-in level's
/// name (a level is a player of its own, never stored but for its ratings). A record
/// holds it as its text (`serde(transparent)`), as it did a `String`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct PlayerId(String);

impl PlayerId {
    /// A new one, random (UUID v4).
    pub fn random() -> PlayerId {
        PlayerId(uuid::Uuid::new_v4().simple().to_string())
    }

    /// The player a built-in level is.
    pub fn of_level(level: Level) -> PlayerId {
        PlayerId(level.as_str().to_owned())
    }

    /// An id read back from the store, which holds only ids this server made.
    pub fn stored(id: String) -> PlayerId {
        PlayerId(id)
    }

    /// A player's id in any spelling of its UUID, as a client may name one.
    pub fn spelled(text: &str) -> Option<PlayerId> {
        let id = uuid::Uuid::try_parse(text).ok()?;
        Some(PlayerId(id.simple().to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is a built-in level.
    pub fn is_level(&self) -> bool {
        self.0.parse::<Level>().is_ok()
    }
}

impl Id for PlayerId {}

impl std::ops::Deref for PlayerId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for PlayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_named_only_as_the_server_writes_it() {
        let id = ChallengeId::random();
        assert_eq!(id.as_str().parse::<ChallengeId>(), Ok(id));
        let upper = id.as_str().to_uppercase();
        assert_eq!(
            upper.parse::<ChallengeId>(),
            Err(Refusal::NoSuch(Kind::Challenge))
        );
        let simple = id.as_str().replace('-', "");
        assert!(simple.parse::<SeekId>().is_err());
        assert!("not-an-id".parse::<MatchId>().is_err());
    }

    #[test]
    fn a_game_id_made_from_any_spelling_reads_hyphenated() {
        let uuid = uuid::Uuid::new_v4();
        let id = GameId::from(uuid);
        assert_eq!(id.as_str(), uuid.hyphenated().to_string());
        assert_eq!(GameId::stored(id.as_str()), Some(id));
        assert_eq!(GameId::stored(&uuid.simple().to_string()), None);
    }

    #[test]
    fn a_player_id_is_its_uuid_simple_or_a_level() {
        let uuid = uuid::Uuid::new_v4();
        let id = PlayerId::spelled(&uuid.hyphenated().to_string()).unwrap();
        assert_eq!(id.as_str(), uuid.simple().to_string());
        assert!(!id.is_level());
        assert!(PlayerId::of_level(Level::Expert).is_level());
        assert_eq!(PlayerId::spelled("alice"), None);
    }
}
