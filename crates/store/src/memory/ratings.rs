//! The memory store's ratings bookkeeping: maps behind a lock of their own. Rating records
//! are few (one a rated game) and kept for the life of the process.

use std::collections::{BTreeSet, HashMap};

use super::MemoryStore;
use crate::ratings::RatingStore;
use crate::{SaveOutcome, StoreError, Stored};

/// A place on a leaderboard: highest score first, ties by id descending, as Redis's
/// ZREVRANGE orders them (scores are finite: `total_cmp` orders them as numbers).
#[derive(Debug, Clone, PartialEq)]
struct Place(f64, String);

impl Eq for Place {}

impl Ord for Place {
    fn cmp(&self, other: &Place) -> std::cmp::Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

impl PartialOrd for Place {
    fn partial_cmp(&self, other: &Place) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Default)]
pub(super) struct RatingTables {
    records: HashMap<String, Stored>,
    /// Per preset, its places in order, and each player's score.
    boards: HashMap<String, (BTreeSet<Place>, HashMap<String, f64>)>,
}

impl MemoryStore {
    fn ratings(&self) -> std::sync::MutexGuard<'_, RatingTables> {
        self.ratings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl RatingStore for MemoryStore {
    async fn claim_ratings(&self, game: &str, bytes: Vec<u8>) -> Result<Stored, StoreError> {
        Ok(self
            .ratings()
            .records
            .entry(game.to_owned())
            .or_insert(Stored { version: 1, bytes })
            .clone())
    }

    async fn save_ratings(
        &self,
        game: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        Ok(super::save_versioned(
            &mut self.ratings().records,
            game,
            expected,
            bytes,
        ))
    }

    async fn rank(&self, preset: &str, player: &str, score: f64) -> Result<(), StoreError> {
        let mut ratings = self.ratings();
        let (places, scores) = ratings.boards.entry(preset.to_owned()).or_default();
        if let Some(old) = scores.insert(player.to_owned(), score) {
            places.remove(&Place(old, player.to_owned()));
        }
        places.insert(Place(score, player.to_owned()));
        Ok(())
    }

    async fn leaderboard(
        &self,
        preset: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        let ratings = self.ratings();
        Ok(ratings
            .boards
            .get(preset)
            .map_or_else(Vec::new, |(places, _)| {
                places
                    .iter()
                    .skip(offset)
                    .take(limit)
                    .map(|Place(score, id)| (id.clone(), *score))
                    .collect()
            }))
    }
}
