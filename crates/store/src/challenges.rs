//! Persistence of challenges: a player's invitation to a game, answered by its opponents.
//! Like a player, a challenge is one opaque blob with a version (the service owns its
//! format and decides with a compare-and-set); the store adds the indexes it cannot read
//! from the blob: each player's challenges, in and out, and the challenges due (to expire,
//! or to be finished after a crash between their acceptance and their game's creation).
//!
//! The indexes are hints, written after the challenge itself: the service loads what they
//! name and trusts only the blob, so an index entry left by a crash costs a load, never a
//! wrong answer. A challenge is kept [`CHALLENGE_KEPT`] after its creation or its last save, then
//! dropped.
//!
//! The service keeps its duplicate matches here too, under the same keys and indexes (a
//! match's id is a challenge's, and its invitation is listed and answered with them): the
//! blob's first byte tells the service which it is; the store needs not know.

use std::future::Future;
use std::time::Duration;

use super::{SaveOutcome, StoreError, Stored};

/// How long the store keeps a challenge, whatever became of it (an open one expires much
/// sooner: the service decides that, and answers for it this long).
pub const CHALLENGE_KEPT: Duration = Duration::from_secs(24 * 3600);

/// How long the store keeps a challenge declined, canceled or expired: long enough for
/// its players to read what became of it, short enough that making and canceling
/// challenges in a loop keeps little.
pub const CLOSED_CHALLENGE_KEPT: Duration = Duration::from_secs(3600);

/// Which of a player's challenges: those it received, or those it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    In,
    Out,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::In => "in",
            Direction::Out => "out",
        }
    }
}

/// Who a new challenge concerns, for the indexes.
#[derive(Debug, Clone)]
pub struct Parties<'a> {
    pub challenger: &'a str,
    /// The opponents that are players (built-in levels have no index).
    pub opponents: &'a [String],
}

/// Caps on the challenges open at once, checked and counted in one step by
/// [`ChallengeStore::open_challenge`], so two processes cannot both pass the last place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenCaps {
    /// Open challenges a player may have made.
    pub out: usize,
    /// Open challenges a player may have received.
    pub into: usize,
}

/// Whose cap refused an open challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapReached {
    Challenger,
    /// The opponent at this index of [`Parties::opponents`].
    Opponent(usize),
}

/// The contract both stores keep for challenges.
pub trait ChallengeStore: Send + Sync + 'static {
    /// Stores a new challenge under `id` at version 1, indexed under each party by
    /// `created_ms` and as due at `due_ms` (if any).
    fn create_challenge(
        &self,
        id: &str,
        bytes: Vec<u8>,
        created_ms: u64,
        parties: Parties<'_>,
        due_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A challenge by id; `None` when there is none (or it is no longer kept).
    fn load_challenge(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Stored>, StoreError>> + Send;

    /// Compare-and-set of a challenge's blob on its version.
    fn save_challenge(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<SaveOutcome, StoreError>> + Send;

    /// Player `player`'s challenges in `direction` created at `since_ms` or later, newest
    /// first, at most `limit`. Older entries are dropped from the index as it is read.
    fn player_challenges(
        &self,
        player: &str,
        direction: Direction,
        since_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Keeps challenge `id` only `kept` from now on (a closed one, briefly), unless a
    /// later save keeps it longer.
    fn keep_challenge(
        &self,
        id: &str,
        kept: Duration,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Counts challenge `id` as open until `expires_ms` for its challenger (out) and its
    /// opponents (in), unless one of them already has its cap of challenges open at
    /// `now_ms`: then whose cap is full, and nothing is counted. One atomic step.
    fn open_challenge(
        &self,
        id: &str,
        parties: Parties<'_>,
        expires_ms: u64,
        now_ms: u64,
        caps: OpenCaps,
    ) -> impl Future<Output = Result<Result<(), CapReached>, StoreError>> + Send;

    /// Stops counting challenge `id` as open (answered, canceled or expired).
    fn close_challenge(
        &self,
        id: &str,
        parties: Parties<'_>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Player `player`'s challenges counted open in `direction` at `now_ms`, newest
    /// first: `limit` of them from `offset`.
    fn open_challenges(
        &self,
        player: &str,
        direction: Direction,
        now_ms: u64,
        offset: usize,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Sets (or with `None` drops) challenge `id`'s entry in the index of due challenges.
    fn index_challenge_due(
        &self,
        id: &str,
        due_ms: Option<u64>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Challenges due at `now_ms` or before, earliest first, at most `limit`.
    fn challenges_due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Adds match `id` to the matches `player` made that may still run (with `false`,
    /// takes it out): a set apart from the player's challenges, so counting its running
    /// matches reads those alone however many challenges it made. A hint like the other
    /// indexes (kept [`CHALLENGE_KEPT`] after its last addition): the service drops the
    /// entries of matches it finds over.
    fn index_match(
        &self,
        player: &str,
        id: &str,
        running: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The matches [`index_match`](Self::index_match) holds for `player`, in no order.
    fn player_matches(
        &self,
        player: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;
}
