//! The byte format of the records that outlive an upgrade (players, ratings, challenges
//! and matches): a format byte, then postcard. Games expire within a day and keep one
//! format; these do not expire, so a server reads every format still in the store.
//!
//! A record type names its current format and a reader for each earlier one
//! ([`Lasting::OLDER`]), each upgrading to the current shape; a record read in an older
//! format is written in the current one at its next save. A reader is dropped only once a
//! migration has rewritten every record of its format (none has been needed yet).

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Error;

/// A reader of one earlier format: the bytes after the format byte, upgraded.
pub(super) type Reader<T> = fn(&[u8]) -> Result<T, postcard::Error>;

/// A record kept for good, in the current format or one of [`Lasting::OLDER`].
pub(super) trait Lasting: Serialize + DeserializeOwned + 'static {
    /// What the record is, for the error that says it is unreadable.
    const WHAT: &'static str;
    /// The format it is written in.
    const FORMAT: u8;
    /// The earlier formats still read, each with its reader.
    const OLDER: &'static [(u8, Reader<Self>)] = &[];

    fn encode(&self) -> Vec<u8> {
        postcard::to_extend(self, vec![Self::FORMAT]).expect("a lasting record serialises")
    }

    fn decode(bytes: &[u8]) -> Result<Self, Error> {
        let unreadable =
            |why: String| Error::Internal(format!("stored {} unreadable: {why}", Self::WHAT));
        let Some((&format, rest)) = bytes.split_first() else {
            return Err(unreadable("empty".into()));
        };
        if format == Self::FORMAT {
            return postcard::from_bytes(rest).map_err(|e| unreadable(e.to_string()));
        }
        match Self::OLDER.iter().find(|(older, _)| *older == format) {
            Some((_, read)) => read(rest).map_err(|e| unreadable(e.to_string())),
            None => Err(unreadable(format!("unknown format {format}"))),
        }
    }
}
