//! The bytes the store keeps: a game's value (version, events area, blob), an event as
//! published and kept, an idempotency record. One place, so that the Rust side and the
//! offsets the Lua scripts are built from (`scripts`) never disagree.

use crate::{IdempotencyRecord, Stored, StoredEvent};

/// Digits of the version at the start of a game's value: ten, far beyond any game's
/// versions, so the value compares as text in the save script and reads plainly in
/// `redis-cli`.
pub(super) const VERSION_DIGITS: usize = 10;
/// Digits of the length of the events that follow the version.
pub(super) const EVENTS_LEN_DIGITS: usize = 7;
pub(super) const HEADER: usize = VERSION_DIGITS + EVENTS_LEN_DIGITS;

/// The version as the stored value starts with it: zero-padded to [`VERSION_DIGITS`]. A
/// move's save sends two (padded by hand: `format!`'s padding costs several times more).
pub(super) fn version_text(version: u64) -> String {
    let digits = version.to_string();
    let mut text = "0".repeat(VERSION_DIGITS.saturating_sub(digits.len()));
    text.push_str(&digits);
    text
}

/// A new game's stored value: version, no events, blob. Public, like [`read_game_value`],
/// for tools that talk to Redis directly (the load benchmark).
pub fn game_value(version: u64, blob: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER + blob.len());
    value.extend_from_slice(version_text(version).as_bytes());
    value.extend_from_slice(&[b'0'; EVENTS_LEN_DIGITS]);
    value.extend_from_slice(blob);
    value
}

/// A game's stored value taken apart (see `docs/architecture.md`).
pub struct GameValue<'a> {
    pub version: u64,
    /// The events kept, oldest first, each as [`encode_event`] wrote it (without the
    /// three bytes of its length).
    pub events: Vec<&'a [u8]>,
    pub blob: &'a [u8],
}

/// Reads a game's value; `None` when it is not one.
pub fn read_game_value(value: &[u8]) -> Option<GameValue<'_>> {
    let number = |digits: &[u8]| std::str::from_utf8(digits).ok()?.parse::<u64>().ok();
    let version = number(value.get(..VERSION_DIGITS)?)?;
    let events_len = usize::try_from(number(value.get(VERSION_DIGITS..HEADER)?)?).ok()?;
    let blob_at = HEADER.checked_add(events_len)?;
    let mut area = value.get(HEADER..blob_at)?;
    let mut events = Vec::new();
    while !area.is_empty() {
        let (len, rest) = area.split_first_chunk::<3>()?;
        let len = usize::from(len[0]) << 16 | usize::from(len[1]) << 8 | usize::from(len[2]);
        events.push(rest.get(..len)?);
        area = &rest[len..];
    }
    Some(GameValue {
        version,
        events,
        blob: &value[blob_at..],
    })
}

pub(super) fn parse_game_value(value: &[u8]) -> Option<Stored> {
    let game = read_game_value(value)?;
    Some(Stored {
        version: game.version,
        bytes: game.blob.to_vec(),
    })
}

/// The events kept in a game's value, oldest first.
pub(super) fn parse_game_events(value: &[u8]) -> Option<Vec<StoredEvent>> {
    read_game_value(value)?
        .events
        .into_iter()
        .map(decode_event)
        .collect()
}

/// The version in LEB128 (seven bits a byte, low first, high bit = more follows), then
/// the payload.
pub(super) fn encode_event(version: u64, payload: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(10 + payload.len());
    let mut v = version;
    while v >= 0x80 {
        raw.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    raw.push(v as u8);
    raw.extend_from_slice(payload);
    raw
}

pub(super) fn decode_event(raw: &[u8]) -> Option<StoredEvent> {
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

pub(super) fn encode_record(record: &IdempotencyRecord) -> Vec<u8> {
    let len = u32::try_from(record.fingerprint.len()).expect("a fingerprint is a short hash");
    let mut raw = Vec::with_capacity(4 + record.fingerprint.len() + record.response.len());
    raw.extend_from_slice(&len.to_be_bytes());
    raw.extend_from_slice(&record.fingerprint);
    raw.extend_from_slice(&record.response);
    raw
}

pub(super) fn decode_record(key: &str, raw: &[u8]) -> Option<IdempotencyRecord> {
    let (len, rest) = raw.split_first_chunk::<4>()?;
    let len = usize::try_from(u32::from_be_bytes(*len)).ok()?;
    if rest.len() < len {
        return None;
    }
    let (fingerprint, response) = rest.split_at(len);
    Some(IdempotencyRecord {
        key: key.to_owned(),
        fingerprint: fingerprint.to_vec(),
        response: response.to_vec(),
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn codecs_round_trip() {
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
        assert_eq!(
            parse_game_value(&game_value(42, b"blob")).unwrap().version,
            42
        );
        assert!(parse_game_value(b"12345").is_none());
        let record = IdempotencyRecord {
            key: "k".into(),
            fingerprint: vec![1, 2, 3],
            response: b"{}".to_vec(),
        };
        assert_eq!(decode_record("k", &encode_record(&record)), Some(record));
        assert!(decode_record("k", &[0, 0, 0, 9, 1]).is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_s_text_is_padded_to_its_digits_and_longer_ones_kept_whole() {
        for version in [0, 7, 42, 9_999_999_999, 10_000_000_000, u64::MAX] {
            assert_eq!(
                version_text(version),
                format!("{version:0width$}", width = VERSION_DIGITS)
            );
        }
        assert_eq!(version_text(42), "0000000042");
    }
}
