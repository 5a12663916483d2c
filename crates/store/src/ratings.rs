//! Persistence of ratings' bookkeeping: each rated game's rating record (who was rated,
//! from which ratings, and whether every player's rating has moved), and a leaderboard
//! per preset. The players' ratings themselves live in the players' records.
//!
//! A game's rating record is claimed once (the first claim is kept, later ones get it
//! back), so every process settling the same game works from the same snapshot, and
//! changed by compare-and-set. It is kept [`RATINGS_KEPT`].

use std::future::Future;
use std::time::Duration;

use super::{SaveOutcome, StoreError, Stored};

/// How long the store keeps a game's rating record.
pub const RATINGS_KEPT: Duration = Duration::from_secs(7 * 24 * 3600);

/// The contract both stores keep for ratings.
pub trait RatingStore: Send + Sync + 'static {
    /// Stores `bytes` as game `game`'s rating record at version 1 unless it has one;
    /// returns the record it has now (the one given, or the first claim's).
    fn claim_ratings(
        &self,
        game: &str,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<Stored, StoreError>> + Send;

    /// Compare-and-set of a game's rating record on its version.
    fn save_ratings(
        &self,
        game: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<SaveOutcome, StoreError>> + Send;

    /// Sets player `player`'s place on `preset`'s leaderboard.
    fn rank(
        &self,
        preset: &str,
        player: &str,
        score: f64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// `preset`'s leaderboard, highest score first (ties: id descending), from `offset`,
    /// at most `limit`.
    fn leaderboard(
        &self,
        preset: &str,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<(String, f64)>, StoreError>> + Send;
}
