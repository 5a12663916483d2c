//! The compare-and-set the memory store's versioned records share.

use std::collections::HashMap;

use crate::{SaveOutcome, Stored};

/// The compare-and-set of a versioned blob kept in `map` under `id` (a player's, a
/// challenge's, a rated game's record), as the Redis store's `SAVE_LUA` does it.
pub(super) fn save_versioned(
    map: &mut HashMap<String, Stored>,
    id: &str,
    expected: u64,
    bytes: Vec<u8>,
) -> SaveOutcome {
    let Some(stored) = map.get_mut(id) else {
        return SaveOutcome::Missing;
    };
    if stored.version != expected {
        return SaveOutcome::Conflict {
            current: stored.version,
        };
    }
    *stored = Stored {
        version: expected + 1,
        bytes,
    };
    SaveOutcome::Saved {
        version: expected + 1,
    }
}
