//! Names: a player's (unique, a handle), a seat's (shown at a table), and a player as a
//! client names one (by id, by name, or a built-in level). Each rule of what a name may
//! hold lives here once.

use std::fmt;

use crate::bots::Level;

use super::{PlayerId, Refusal};

/// A player's name: this many characters at least, and at most.
pub const PLAYER_NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=24;
/// A seat's name: 1 to this many characters.
pub const MAX_SEAT_NAME_CHARS: usize = 32;
/// Names no player may take: `me` is the key's own player in the paths; the built-in
/// levels are players of their own ([`Level::named_like`], so a new level is reserved
/// with it).
const RESERVED: [&str; 1] = ["me"];

/// A name as the store holds it unique: ignoring case (players' names are ASCII). Any
/// text has one, so a lookup by a name no player could take finds nobody.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct NameKey(String);

impl NameKey {
    pub fn of(name: &str) -> NameKey {
        NameKey(name.to_ascii_lowercase())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for NameKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// A player's name: [`PLAYER_NAME_CHARS`] of `A-Z a-z 0-9 _ -`, unique ignoring case
/// ([`NameKey`]), and none that is reserved. Wraps its `String` (up to 24 bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct PlayerName(String);

impl PlayerName {
    /// `text` as a new player's name (the body's `name`).
    pub fn parse(text: &str) -> Result<PlayerName, Refusal> {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        if !PLAYER_NAME_CHARS.contains(&text.len()) || !text.bytes().all(allowed) {
            return Err(Refusal::Malformed(format!(
                "name: {} to {} characters of A-Z a-z 0-9 _ -",
                PLAYER_NAME_CHARS.start(),
                PLAYER_NAME_CHARS.end()
            )));
        }
        let key = NameKey::of(text);
        if RESERVED.contains(&key.as_str()) || Level::named_like(key.as_str()).is_some() {
            return Err(Refusal::Reserved(format!("the name {text:?} is reserved")));
        }
        Ok(PlayerName(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key it is unique by.
    pub fn key(&self) -> NameKey {
        NameKey::of(&self.0)
    }
}

impl fmt::Debug for PlayerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Refuses `text` (the request's `field`) unless it is 1 to `max` characters, none of them
/// a control, format or separator character (Unicode Cc, Cf, Zl, Zp): text people see as
/// it is written (a seat's name, a tournament's).
pub fn visible_text(field: &str, text: &str, max: usize) -> Result<(), Refusal> {
    use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
    let hidden = |c: char| {
        matches!(
            c.general_category(),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
    };
    if text.is_empty() || text.chars().count() > max || text.chars().any(hidden) {
        return Err(Refusal::Malformed(format!(
            "{field}: 1 to {max} characters, no control, format or separator characters"
        )));
    }
    Ok(())
}

/// A seat's name as people see it on every view and the watch page, trimmed: 1 to
/// [`MAX_SEAT_NAME_CHARS`] characters, none of them a control, format or separator
/// character (Unicode Cc, Cf, Zl, Zp: a right-to-left override would reverse the lines
/// it is shown in, a zero-width space hide in a name), and not a built-in level's
/// (`expert bot`). Wraps its `String`.
#[derive(Clone, PartialEq, Eq)]
pub struct SeatName(String);

impl SeatName {
    /// `text` as a seat's name (a join's `name`), its surrounding spaces dropped.
    pub fn parse(text: &str) -> Result<SeatName, Refusal> {
        let name = text.trim();
        visible_text("name", name, MAX_SEAT_NAME_CHARS)?;
        if let Some(level) = Level::named_like(name) {
            return Err(Refusal::Malformed(format!(
                "name: {name:?} is taken for the built-in level {:?}; choose another",
                level.as_str()
            )));
        }
        Ok(SeatName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SeatName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// A player as a client names one (a path's `{who}`, a challenge's opponent): a built-in
/// level by its name, a player by its id (any spelling of its UUID) or by its name
/// (ignoring case). Every text names someone or nobody, so parsing never refuses; the
/// text is kept for the messages that quote it.
#[derive(Clone, PartialEq, Eq)]
pub struct Who {
    text: String,
    named: Named,
}

/// What a [`Who`] names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    Level(Level),
    Id(PlayerId),
    Name(NameKey),
}

impl Who {
    pub fn parse(text: &str) -> Who {
        let named = if let Ok(level) = text.parse::<Level>() {
            Named::Level(level)
        } else if let Some(id) = PlayerId::spelled(text) {
            Named::Id(id)
        } else {
            Named::Name(NameKey::of(text))
        };
        Who {
            text: text.to_owned(),
            named,
        }
    }

    /// A built-in level, named as a client would.
    pub fn of_level(level: Level) -> Who {
        Who {
            text: level.as_str().to_owned(),
            named: Named::Level(level),
        }
    }

    pub fn named(&self) -> &Named {
        &self.named
    }

    /// As the client wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The level it names, if it is one.
    pub fn level(&self) -> Option<Level> {
        match self.named {
            Named::Level(level) => Some(level),
            _ => None,
        }
    }
}

// The text alone, as the `String` it replaced printed: a create's fingerprint is its
// parsed body's `Debug` (`api::games::create_key`), and a retry of a day-old key must match.
impl fmt::Debug for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_name_refuses_other_letters_and_reserved_names() {
        assert_eq!(PlayerName::parse("alice_2").unwrap().as_str(), "alice_2");
        assert!(
            matches!(PlayerName::parse("a"), Err(Refusal::Malformed(m)) if m.starts_with("name: "))
        );
        assert!(matches!(
            PlayerName::parse("al ice"),
            Err(Refusal::Malformed(_))
        ));
        assert!(matches!(PlayerName::parse("ME"), Err(Refusal::Reserved(_))));
        assert!(matches!(
            PlayerName::parse("Expert-Bot"),
            Err(Refusal::Reserved(_))
        ));
        assert_eq!(
            PlayerName::parse("Alice").unwrap().key(),
            NameKey::of("alice")
        );
    }

    #[test]
    fn a_seat_name_is_trimmed_and_refuses_hidden_characters_and_levels() {
        assert_eq!(SeatName::parse("  bob ").unwrap().as_str(), "bob");
        assert!(SeatName::parse("   ").is_err());
        assert!(SeatName::parse("a\u{202e}b").is_err());
        assert!(SeatName::parse(&"x".repeat(MAX_SEAT_NAME_CHARS + 1)).is_err());
        assert!(
            matches!(SeatName::parse("greedy bot"), Err(Refusal::Malformed(m)) if m.contains("built-in level"))
        );
    }

    #[test]
    fn who_names_a_level_an_id_or_a_name() {
        assert_eq!(Who::parse("expert").level(), Some(Level::Expert));
        let uuid = uuid::Uuid::new_v4();
        assert_eq!(
            Who::parse(&uuid.to_string()).named(),
            &Named::Id(PlayerId::spelled(&uuid.simple().to_string()).unwrap())
        );
        assert_eq!(Who::parse("Bob").named(), &Named::Name(NameKey::of("bob")));
        assert_eq!(Who::parse("Bob").text(), "Bob");
    }
}
