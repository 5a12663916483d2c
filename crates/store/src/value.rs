//! A game's stored value, the one byte format of a stored game: the version, the events it
//! keeps, then the blob. Written and read in Rust alone, by both stores: the memory store
//! keeps these bytes, and Redis's save script only compares the header the save expects
//! and sets the value built here (see `docs/architecture.md`). The offsets the scripts are
//! built with come from the constants here too.

use crate::{Save, StoredEvent, StoredGame};

/// Digits of the version at the start of a game's value: ten, far beyond any game's
/// versions, so the value compares as text in the scripts and reads plainly in
/// `redis-cli`.
pub(crate) const VERSION_DIGITS: usize = 10;
/// Digits of the length of the events that follow the version.
pub(crate) const EVENTS_LEN_DIGITS: usize = 7;
/// The version and the events' length: what a save compares before it writes.
pub(crate) const HEADER: usize = VERSION_DIGITS + EVENTS_LEN_DIGITS;

/// The events a game keeps, as its value holds them, oldest first: each is its length in
/// three bytes, then the event as [`encode_event`] writes it. Opaque to the caller, who
/// hands back the history it loaded with the version it saves from ([`Save::history`]),
/// so that the store builds the next value without reading the game first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History(Vec<u8>);

impl History {
    /// The events, oldest first; `None` when the bytes are not a history.
    pub fn events(&self) -> Option<Vec<StoredEvent>> {
        split_events(&self.0)?
            .into_iter()
            .map(decode_event)
            .collect()
    }

    /// The history after a save at `version`: `event` appended and the oldest dropped
    /// beyond `kept`; unchanged without an event.
    pub(crate) fn after(&self, version: u64, event: Option<&[u8]>, kept: usize) -> History {
        let mut bytes = Vec::new();
        self.write_after(version, event, kept, &mut bytes);
        History(bytes)
    }

    /// Writes [`after`](Self::after)'s bytes at the end of `out`.
    fn write_after(&self, version: u64, event: Option<&[u8]>, kept: usize, out: &mut Vec<u8>) {
        let Some(payload) = event else {
            out.extend_from_slice(&self.0);
            return;
        };
        // The new event is one of the `kept`: the older ones keep `kept - 1` places (all
        // are dropped from a history that does not read).
        let from = split_events(&self.0).map_or(self.0.len(), |events| {
            let dropped = events.len().saturating_sub(kept.saturating_sub(1));
            events[..dropped].iter().map(|e| 3 + e.len()).sum()
        });
        out.extend_from_slice(&self.0[from..]);
        let at = out.len();
        out.extend_from_slice(&[0; 3]);
        encode_event_into(version, payload, out);
        let len = u32::try_from(out.len() - at - 3).expect("an event is far under 16 MB");
        out[at..at + 3].copy_from_slice(&len.to_be_bytes()[1..]);
    }
}

impl Save {
    /// The events the game keeps after this save, from the ones it kept before
    /// ([`Save::history`]; `None` when not given): what a caller keeps with its copy.
    pub fn history_after(&self) -> Option<History> {
        let before = self.history.as_ref()?;
        Some(before.after(self.expected + 1, self.event.as_deref(), self.events_kept()))
    }

    /// The game's value after this save, from the events it kept before (the caller's
    /// [`Save::history`], or the store's own when not given): the one account of a saved
    /// game both stores write. Built in one buffer: a move's save builds one.
    pub(crate) fn value_from(&self, before: &History) -> Vec<u8> {
        let version = self.expected + 1;
        let room = HEADER + before.0.len() + 16 + self.event.as_ref().map_or(0, Vec::len);
        let mut value = Vec::with_capacity(room + self.bytes.len());
        value.extend_from_slice(&[b'0'; HEADER]);
        let event = self.event.as_deref();
        before.write_after(version, event, self.events_kept(), &mut value);
        let head = header_of(version, value.len() - HEADER);
        value[..HEADER].copy_from_slice(head.as_bytes());
        value.extend_from_slice(&self.bytes);
        value
    }
}

/// The version as a value starts with it: zero-padded to [`VERSION_DIGITS`] (padded by
/// hand: `format!`'s padding costs several times more).
pub(crate) fn version_text(version: u64) -> String {
    let digits = version.to_string();
    let mut text = "0".repeat(VERSION_DIGITS.saturating_sub(digits.len()));
    text.push_str(&digits);
    text
}

/// The header a value at `version` keeping `history` starts with.
pub(crate) fn header(version: u64, history: &History) -> String {
    header_of(version, history.0.len())
}

/// The header of a value at `version` whose events take `events_len` bytes.
fn header_of(version: u64, events_len: usize) -> String {
    let len = events_len.to_string();
    let mut text = version_text(version);
    text.push_str(&"0".repeat(EVENTS_LEN_DIGITS.saturating_sub(len.len())));
    text.push_str(&len);
    text
}

/// A game's value: its version, the events it keeps, its blob. Public, like
/// [`read_game_value`], for tools that talk to Redis directly (the load benchmark).
pub fn game_value(version: u64, history: &History, blob: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER + history.0.len() + blob.len());
    value.extend_from_slice(header(version, history).as_bytes());
    value.extend_from_slice(&history.0);
    value.extend_from_slice(blob);
    value
}

/// A game's stored value taken apart.
pub struct GameValue<'a> {
    pub version: u64,
    /// The events kept, oldest first, each as [`encode_event`] wrote it (without the
    /// three bytes of its length).
    pub events: Vec<&'a [u8]>,
    pub blob: &'a [u8],
}

/// Reads a game's value; `None` when it is not one.
pub fn read_game_value(value: &[u8]) -> Option<GameValue<'_>> {
    let (version, history, blob) = split_value(value)?;
    Some(GameValue {
        version,
        events: split_events(history)?,
        blob,
    })
}

/// The version, the history's bytes and the blob of a value.
fn split_value(value: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    let number = |digits: &[u8]| std::str::from_utf8(digits).ok()?.parse::<u64>().ok();
    let version = number(value.get(..VERSION_DIGITS)?)?;
    let events_len = usize::try_from(number(value.get(VERSION_DIGITS..HEADER)?)?).ok()?;
    let blob_at = HEADER.checked_add(events_len)?;
    Some((version, value.get(HEADER..blob_at)?, &value[blob_at..]))
}

/// A game's value as the store hands it out; `None` when it is not one.
pub(crate) fn parse_game(value: &[u8]) -> Option<StoredGame> {
    let (version, history, blob) = split_value(value)?;
    split_events(history)?;
    Some(StoredGame {
        version,
        bytes: blob.to_vec(),
        history: History(history.to_vec()),
    })
}

/// Whether `value` starts with the header a save from `version` keeping `history`
/// expects (the version alone without a history): what a save compares, on both stores.
pub(crate) fn stands_at(value: &[u8], version: u64, history: Option<&History>) -> bool {
    match history {
        Some(history) => value.starts_with(header(version, history).as_bytes()),
        None => version_of(value) == Some(version),
    }
}

/// The events a value keeps.
pub(crate) fn history_of(value: &[u8]) -> Option<History> {
    let (_, history, _) = split_value(value)?;
    Some(History(history.to_vec()))
}

/// The version of a value, read without taking the rest apart.
pub(crate) fn version_of(value: &[u8]) -> Option<u64> {
    std::str::from_utf8(value.get(..VERSION_DIGITS)?)
        .ok()?
        .parse()
        .ok()
}

/// The events kept in a game's value, oldest first.
pub(crate) fn events_of(value: &[u8]) -> Option<Vec<StoredEvent>> {
    let (_, history, _) = split_value(value)?;
    split_events(history)?
        .into_iter()
        .map(decode_event)
        .collect()
}

/// A history's events, each without its length.
fn split_events(mut area: &[u8]) -> Option<Vec<&[u8]>> {
    let mut events = Vec::new();
    while !area.is_empty() {
        let (len, rest) = area.split_first_chunk::<3>()?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        events.push(rest.get(..len)?);
        area = &rest[len..];
    }
    Some(events)
}

/// An event as kept and published: the version in LEB128 (seven bits a byte, low first,
/// high bit = more follows), then the payload.
pub(crate) fn encode_event(version: u64, payload: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(10 + payload.len());
    encode_event_into(version, payload, &mut raw);
    raw
}

fn encode_event_into(version: u64, payload: &[u8], out: &mut Vec<u8>) {
    let mut v = version;
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out.extend_from_slice(payload);
}

pub(crate) fn decode_event(raw: &[u8]) -> Option<StoredEvent> {
    let mut version = 0u64;
    for (i, &b) in raw.iter().enumerate().take(10) {
        version |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(StoredEvent {
                version,
                payload: raw[i + 1..].to_vec(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(history: &History) -> Vec<u64> {
        history
            .events()
            .unwrap()
            .iter()
            .map(|e| e.version)
            .collect()
    }

    #[test]
    fn an_event_round_trips_through_its_bytes() {
        let event = decode_event(&encode_event(7, b"abc")).unwrap();
        assert_eq!(
            event,
            StoredEvent {
                version: 7,
                payload: b"abc".to_vec()
            }
        );
        assert_eq!(decode_event(&encode_event(9, b"")).unwrap().payload, b"");
        for version in [1, 127, 128, 300, 1 << 35, u64::MAX] {
            assert_eq!(
                decode_event(&encode_event(version, b"x")).unwrap().version,
                version
            );
        }
        assert!(decode_event(b"").is_none());
        assert!(decode_event(&[0x80, 0x80]).is_none(), "a version cut short");
    }

    #[test]
    fn a_value_reads_back_as_it_was_built() {
        let history = History::default().after(2, Some(b"two"), 16);
        let history = history.after(3, Some(b"three"), 16);
        let value = game_value(3, &history, b"blob");
        let game = parse_game(&value).unwrap();
        assert_eq!((game.version, &game.bytes[..]), (3, &b"blob"[..]));
        assert_eq!(game.history, history);
        assert_eq!(version_of(&value), Some(3));
        assert_eq!(versions(&history), [2, 3]);
        assert_eq!(events_of(&value).unwrap(), history.events().unwrap());
        let read = read_game_value(&value).unwrap();
        assert_eq!(
            read.events,
            [encode_event(2, b"two"), encode_event(3, b"three")]
        );
        assert!(parse_game(b"12345").is_none());
        assert!(parse_game(&game_value(1, &History(vec![0, 0, 9]), b"")).is_none());
    }

    #[test]
    fn a_history_keeps_its_last_events_and_only_the_last_once_finished() {
        let mut history = History::default();
        for version in 2..=20 {
            history = history.after(version, Some(&[version as u8; 40]), 16);
        }
        assert_eq!(versions(&history), (5..=20).collect::<Vec<_>>());
        assert_eq!(history.after(21, None, 1), history, "no event, no change");
        assert_eq!(versions(&history.after(21, Some(b"end"), 1)), [21]);
        assert_eq!(versions(&history.after(21, Some(b"x"), 2)), [20, 21]);
    }

    #[test]
    fn a_save_s_value_is_its_version_the_history_after_it_and_its_blob() {
        let mut history = History::default();
        for version in 2..=30u64 {
            let save = Save {
                expected: version - 1,
                bytes: vec![version as u8; 50],
                history: Some(history.clone()),
                idempotency: None,
                seat: 0,
                event: (version % 5 != 0).then(|| vec![1; version as usize]),
                unlist: false,
                relist: false,
                finished: version == 29,
                deadline: None,
            };
            let after = save.history_after().unwrap();
            assert_eq!(
                save.value_from(&history),
                game_value(version, &after, &save.bytes)
            );
            history = after;
        }
        assert_eq!(versions(&history), [29]);
    }

    #[test]
    fn a_version_s_text_is_padded_to_its_digits_and_longer_ones_kept_whole() {
        for version in [0, 7, 42, 9_999_999_999, 10_000_000_000, u64::MAX] {
            assert_eq!(
                version_text(version),
                format!("{version:0width$}", width = VERSION_DIGITS)
            );
        }
        assert_eq!(version_text(42), "0000000042");
        assert_eq!(header(42, &History(vec![0; 12])), "00000000420000012");
    }
}
