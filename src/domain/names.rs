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
/// with it), and so are their copies in a tournament (`greedy-2`: [`EntrantId`]).
const RESERVED: [&str; 1] = ["me"];
/// Combining marks one character may carry: enough for Vietnamese, Thai or Tibetan
/// stacks, too few to spill over the lines around it.
const MAX_MARKS: usize = 3;

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
        if RESERVED.contains(&key.as_str())
            || Level::named_like(key.as_str()).is_some()
            || EntrantId::level_copy_like(key.as_str())
        {
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

/// Refuses `text` (the request's `field`) unless it is 1 to `max` characters that show:
/// some character other than a space; no control, format or separator character (Unicode
/// Cc, Cf, Zl, Zp) nor any space but the plain one (U+0020); none of the letters that
/// draw nothing (the Hangul fillers, the Braille blank, the Mongolian and Khmer
/// invisibles); and at most [`MAX_MARKS`] combining marks on a character, none without
/// one. Text people see as it is written: a seat's name, a tournament's. (A player's name
/// is plain ASCII, stricter still: [`PlayerName`].)
pub fn visible_text(field: &str, text: &str, max: usize) -> Result<(), Refusal> {
    use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
    let blank_letter = |c: char| {
        matches!(
            c,
            '\u{115F}'
                | '\u{1160}'
                | '\u{3164}'
                | '\u{FFA0}'
                | '\u{2800}'
                | '\u{034F}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
        )
    };
    let (mut marks, mut base, mut shown) = (0, false, false);
    for c in text.chars() {
        let category = c.general_category();
        let hidden = match category {
            G::Control | G::Format | G::LineSeparator | G::ParagraphSeparator => true,
            G::SpaceSeparator => c != ' ',
            _ => blank_letter(c),
        };
        let mark = matches!(category, G::NonspacingMark | G::EnclosingMark);
        marks = if mark { marks + 1 } else { 0 };
        if hidden || (mark && (!base || marks > MAX_MARKS)) {
            return Err(Refusal::Malformed(format!(
                "{field}: 1 to {max} characters that show: no control, format or separator \
                 characters, no space but the plain one, no blank letters (such as the \
                 Hangul filler), at most {MAX_MARKS} combining marks on a character"
            )));
        }
        base = mark || c != ' ';
        shown |= c != ' ';
    }
    if !shown || text.chars().count() > max {
        return Err(Refusal::Malformed(format!(
            "{field}: 1 to {max} characters, not all of them spaces"
        )));
    }
    Ok(())
}

/// An entrant of a tournament, by the id the tournament shows it with: a player by its
/// id (any spelling of its UUID), or a built-in level's entry by the level's name, its
/// later copies numbered from 2 (`greedy`, `greedy-2`, `greedy-3`: a field of bots).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntrantId {
    Player(PlayerId),
    Level { level: Level, copy: u16 },
}

impl EntrantId {
    /// `text` (a path's `{player}`) as an entrant's id: text no entrant could have names
    /// nobody.
    pub fn parse(text: &str) -> Result<EntrantId, Refusal> {
        if let Ok(level) = text.parse::<Level>() {
            return Ok(EntrantId::Level { level, copy: 1 });
        }
        let copy = text.rsplit_once('-').and_then(|(name, copy)| {
            let level = name.parse::<Level>().ok()?;
            let n = copy.parse::<u16>().ok()?;
            (n >= 2 && n.to_string() == copy).then_some(EntrantId::Level { level, copy: n })
        });
        copy.or_else(|| PlayerId::spelled(text).map(EntrantId::Player))
            .ok_or(Refusal::NoSuch(super::Kind::Entrant))
    }

    /// Whether a name (as its [`NameKey`]) reads as a level's copy (`greedy-2`, and any
    /// other number after a level's name and a hyphen): reserved, so that no player is
    /// taken for one.
    fn level_copy_like(key: &str) -> bool {
        key.split_once('-').is_some_and(|(name, n)| {
            name.parse::<Level>().is_ok() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
    }
}

impl fmt::Display for EntrantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntrantId::Player(id) => f.write_str(id),
            EntrantId::Level { level, copy: 1 } => f.write_str(level.as_str()),
            EntrantId::Level { level, copy } => write!(f, "{}-{copy}", level.as_str()),
        }
    }
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
    fn a_level_copys_id_is_reserved_and_names_that_entry() {
        for name in [
            "greedy-2",
            "Random-8",
            "master-64",
            "expert-0",
            "greedy-007",
        ] {
            assert!(
                matches!(PlayerName::parse(name), Err(Refusal::Reserved(_))),
                "{name}"
            );
        }
        for name in ["greedy-fan", "greedy2x", "mastermind-2"] {
            assert!(PlayerName::parse(name).is_ok(), "{name}");
        }
        let copy = EntrantId::parse("greedy-2").unwrap();
        let second = EntrantId::Level {
            level: Level::Greedy,
            copy: 2,
        };
        assert_eq!(copy, second);
        assert_eq!(copy.to_string(), "greedy-2");
        assert_eq!(EntrantId::parse("greedy").unwrap().to_string(), "greedy");
        for nobody in ["greedy-1", "greedy-02", "greedy-", "alice"] {
            assert!(EntrantId::parse(nobody).is_err(), "{nobody}");
        }
        let uuid = uuid::Uuid::new_v4();
        assert_eq!(
            EntrantId::parse(&uuid.hyphenated().to_string()).unwrap(),
            EntrantId::Player(PlayerId::spelled(&uuid.simple().to_string()).unwrap())
        );
    }

    #[test]
    fn visible_text_refuses_blank_letters_odd_spaces_and_stacked_marks() {
        for shown in [
            "Friday fives",
            "Tết 2026",
            "\u{e9}t\u{e9}",
            "e\u{323}\u{302}",
            "🏆 cup",
        ] {
            assert!(visible_text("name", shown, 64).is_ok(), "{shown:?}");
        }
        for blank in [
            "\u{3164}",
            "a\u{115F}b",
            "\u{FFA0}\u{FFA0}",
            "\u{2800}",
            "a\u{00A0}b",
            "a\u{3000}b",
            "   ",
            "",
            "a\u{200B}b",
            "a\u{301}\u{301}\u{301}\u{301}",
            "\u{301}a",
            "a \u{301}",
        ] {
            assert!(visible_text("name", blank, 64).is_err(), "{blank:?}");
        }
        assert!(visible_text("name", &"x".repeat(65), 64).is_err());
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
