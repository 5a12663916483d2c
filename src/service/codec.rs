//! The one shape of every record the service stores: a format byte, then postcard values
//! one after another: the record, then any field appended after it (kept out of the
//! record's struct so that the format before, without the field, reads with that same
//! struct). Each record owns its format numbers and what each one holds; this owns the
//! bytes, and the wording of an unreadable record.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Error;

/// A record being written: its format byte, then each value in turn.
pub(crate) struct Encoder(Vec<u8>);

impl Encoder {
    /// Format byte `format`, then `record`.
    pub(crate) fn new<T: Serialize + ?Sized>(format: u8, record: &T) -> Encoder {
        Encoder(vec![format]).then(record)
    }

    /// `value` appended.
    pub(crate) fn then<T: Serialize + ?Sized>(self, value: &T) -> Encoder {
        // Postcard fails only on what our types never hold (unknown lengths, and
        // `serialize_any`-only values).
        Encoder(postcard::to_extend(value, self.0).expect("a stored record always serialises"))
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// `record` alone, as format `format`.
pub(crate) fn encode<T: Serialize + ?Sized>(format: u8, record: &T) -> Vec<u8> {
    Encoder::new(format, record).finish()
}

/// A stored record being read: what it is (`"player"`, for the errors) and the bytes
/// after those read so far.
pub(crate) struct Decoder<'a> {
    what: &'static str,
    rest: &'a [u8],
}

/// The format byte of stored `what` `bytes`, and a reader of what follows it.
pub(crate) fn open<'a>(what: &'static str, bytes: &'a [u8]) -> Result<(u8, Decoder<'a>), Error> {
    match bytes.split_first() {
        Some((&format, rest)) => Ok((format, Decoder { what, rest })),
        None => Err(unreadable(what, "empty")),
    }
}

impl Decoder<'_> {
    /// The next value, with more to follow.
    pub(crate) fn next<T: DeserializeOwned>(&mut self) -> Result<T, Error> {
        let (value, rest) =
            postcard::take_from_bytes(self.rest).map_err(|e| unreadable(self.what, e))?;
        self.rest = rest;
        Ok(value)
    }

    /// Whether the next value, an `Option`, is `Some`: its tag is read, so what follows
    /// is the value after `Some`, the next value after `None`. For a reader that only
    /// needs to know (a type of the layer above, which it may not name).
    pub(crate) fn is_some(&mut self) -> Result<bool, Error> {
        let (some, rest) = match self.rest.split_first() {
            Some((&0, rest)) => (false, rest),
            Some((&1, rest)) => (true, rest),
            _ => return Err(unreadable(self.what, "no option's tag")),
        };
        self.rest = rest;
        Ok(some)
    }

    /// The last value.
    pub(crate) fn last<T: DeserializeOwned>(self) -> Result<T, Error> {
        postcard::from_bytes(self.rest).map_err(|e| unreadable(self.what, e))
    }

    /// The refusal of a format this build does not know (written by a newer one, or
    /// damaged).
    pub(crate) fn unknown(self, format: u8) -> Error {
        unreadable(self.what, format_args!("unknown format {format}"))
    }
}

fn unreadable(what: &str, why: impl std::fmt::Display) -> Error {
    Error::Internal(format!("stored {what} unreadable: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_and_its_appended_fields_read_back_in_order() {
        let bytes = Encoder::new(7, &("ann", 3u32))
            .then(&vec!["g1".to_owned()])
            .then(&Some(5u8))
            .finish();
        assert_eq!(bytes[0], 7);
        let (format, mut body) = open("test", &bytes).unwrap();
        assert_eq!(format, 7);
        assert_eq!(body.next::<(String, u32)>().unwrap(), ("ann".into(), 3));
        assert_eq!(body.next::<Vec<String>>().unwrap(), ["g1"]);
        assert_eq!(body.last::<Option<u8>>().unwrap(), Some(5));
    }

    #[test]
    fn an_options_tag_is_read_alone() {
        let bytes = Encoder::new(1, &None::<u32>)
            .then(&Some(7u32))
            .then(&2u8)
            .finish();
        let (_, mut body) = open("test", &bytes).unwrap();
        assert!(!body.is_some().unwrap());
        assert!(body.is_some().unwrap());
        assert_eq!(body.next::<u32>().unwrap(), 7);
        assert!(body.is_some().is_err(), "2 is no tag");
    }

    #[test]
    fn an_older_format_without_the_appended_field_reads_with_the_same_struct() {
        let old = encode(6, &("ann", 3u32));
        let (_, body) = open("test", &old).unwrap();
        assert_eq!(body.last::<(String, u32)>().unwrap(), ("ann".into(), 3));
    }

    #[test]
    fn empty_truncated_and_unknown_records_are_refused_naming_what_they_are() {
        let text = |e: Error| e.to_string();
        assert!(text(open("player", &[]).err().unwrap()).contains("stored player unreadable"));
        let bytes = encode(1, &("a long enough name", 300u32));
        let (_, body) = open("seek", &bytes[..4]).unwrap();
        assert!(text(body.last::<(String, u32)>().unwrap_err()).contains("stored seek"));
        let (format, body) = open("game", &[9, 1, 2]).unwrap();
        assert!(text(body.unknown(format)).contains("unknown format 9"));
    }
}
