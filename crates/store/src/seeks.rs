//! Persistence of seeks (matchmaking): a player's wish for a game with anyone of the same
//! pool (the same preset, seats, clock and `rated`). Pairing must use a seek once and seat
//! a player once however many processes pair at the same moment, so the store decides it
//! in one step: on Redis every seek key shares one slot (`{seeks}`), and one script takes a
//! game's seeks out of their pool and marks them matched to it only if every seek [`pick`]
//! chose is still waiting.
//!
//! A step that matches seeks also records their game as *starting* until the service says
//! it was created: a process that dies in between leaves the game to a sweep, which
//! creates it from the seeks matched to it.
//!
//! Pools are paired where a seek arrives, and kept in an index of pools due for pairing:
//! a new seek makes its pool due at once, and a pairing that finds nothing to match leaves
//! the pool due again a little later only while it holds enough seeks for a game (a rated
//! gap widens as they wait). So a sweep visits the pools due, not every pool: ten thousand
//! pools of one waiting seek each cost it nothing.

use std::future::Future;
use std::time::Duration;

use super::StoreError;

/// How long the store keeps a seek, whatever became of it.
pub const SEEK_KEPT: Duration = Duration::from_secs(24 * 3600);

/// Where a seek stands.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SeekState {
    Waiting,
    /// Used for this game.
    Matched(String),
    Canceled,
    Expired,
}

/// A seek as the store holds it: what the store decides on, and the service's blob.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekEntry {
    pub id: String,
    pub player: String,
    /// The seeks of one pool may play each other.
    pub pool: String,
    pub created_ms: u64,
    pub expires_ms: u64,
    /// The player's rating when it sought (a rated pool pairs close ratings first).
    pub rating: f64,
    /// When a waiting seek gets a table with built-in levels instead, if ever.
    pub fallback_ms: Option<u64>,
    pub state: SeekState,
    pub bytes: Vec<u8>,
}

/// Picks a game's seeks among `waiting` (`(id, player, rating, created_ms)`, oldest
/// first), as [`SeekStore::pair_seeks`] says: the stores' one account of it (on Redis a
/// script lists the pool and another commits the choice if every seek is still waiting).
pub fn pick(
    waiting: &[(String, String, f64, u64)],
    seats: usize,
    now_ms: u64,
    by_rating: Option<Gap>,
) -> Vec<String> {
    for (a, anchor) in waiting.iter().enumerate() {
        let mut others: Vec<&(String, String, f64, u64)> = waiting
            .iter()
            .enumerate()
            .filter(|&(b, _)| b != a)
            .map(|(_, o)| o)
            .collect();
        if by_rating.is_some() {
            others.sort_by(|x, y| (x.2 - anchor.2).abs().total_cmp(&(y.2 - anchor.2).abs()));
        }
        let mut picked = vec![anchor.0.clone()];
        let mut players = vec![anchor.1.as_str()];
        for other in others {
            if picked.len() == seats {
                break;
            }
            let fits = by_rating.is_none_or(|gap| {
                let older = anchor.3.min(other.3);
                (other.2 - anchor.2).abs() <= gap.at(older, now_ms)
            });
            if fits && !players.contains(&other.1.as_str()) {
                picked.push(other.0.clone());
                players.push(&other.1);
            }
        }
        if picked.len() == seats {
            return picked;
        }
    }
    Vec::new()
}

impl SeekEntry {
    /// When the sweep must look at it while it waits: its fallback or its expiry.
    pub fn due_ms(&self) -> u64 {
        self.fallback_ms
            .map_or(self.expires_ms, |f| f.min(self.expires_ms))
    }
}

/// How far apart two ratings a rated pool pairs: `base` at first, widening by `per_sec`
/// each second the older of the two has waited, and without limit once it has waited
/// `open_after_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gap {
    pub base: f64,
    pub per_sec: f64,
    pub open_after_ms: u64,
}

impl Gap {
    /// The widest gap a seek created at `created_ms` accepts at `now_ms`.
    pub fn at(&self, created_ms: u64, now_ms: u64) -> f64 {
        let waited = now_ms.saturating_sub(created_ms);
        if waited >= self.open_after_ms {
            f64::INFINITY
        } else {
            self.base + self.per_sec * waited as f64 / 1000.0
        }
    }
}

/// What became of [`SeekStore::add_seek`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    Added,
    /// The player has its maximum of waiting seeks; nothing was stored.
    TooMany,
    /// The player already waits in this pool, with this seek; nothing was stored.
    Waiting(String),
}

/// What [`SeekStore::settle_seek`] did with a due seek.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Nothing: gone, no longer waiting, or not due yet (its entry is set again).
    Nothing,
    /// Its time ran out.
    Expired,
    /// Its fallback came: it is matched, alone, to the game given.
    FellBack,
}

/// The contract both stores keep for seeks.
pub trait SeekStore: Send + Sync + 'static {
    /// Stores a new waiting seek (its pool's newest) unless its player already waits in
    /// its pool, or has `max_open` waiting ones (those expired at `now_ms` not counted),
    /// and makes its pool due for pairing at `now_ms`.
    fn add_seek(
        &self,
        entry: &SeekEntry,
        max_open: usize,
        now_ms: u64,
    ) -> impl Future<Output = Result<Added, StoreError>> + Send;

    /// The ids of player `player`'s waiting seeks, in no order.
    fn player_seeks(
        &self,
        player: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    fn load_seek(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<SeekEntry>, StoreError>> + Send;

    /// A waiting seek canceled; any other left as it is. Returns it after.
    fn cancel_seek(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<SeekEntry>, StoreError>> + Send;

    /// Takes `seats` waiting, unexpired seeks of distinct players from `pool` and matches
    /// them to `game` (starting until [`started`](Self::started), and due then for a
    /// check at `recover_ms`). The oldest seek that can be matched anchors the game; the
    /// others are the oldest after it, or with `by_rating` the closest ratings to its
    /// within the [`Gap`] of the older of each two. Returns their ids, anchor first; none
    /// when the pool holds too few that fit. The pool is then due for pairing again at
    /// `retry_ms` if it holds `seats` seeks or more, else no longer due (until a seek
    /// arrives).
    #[allow(clippy::too_many_arguments)]
    fn pair_seeks(
        &self,
        pool: &str,
        seats: usize,
        game: &str,
        now_ms: u64,
        recover_ms: u64,
        retry_ms: u64,
        by_rating: Option<Gap>,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Pools due for pairing at `now_ms`, earliest first, at most `limit`.
    fn pools_due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// Waiting seeks due (fallback or expiry) at `now_ms`, earliest first, at most `limit`.
    fn due_seeks(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// A due seek: expired if its time ran out, else matched alone to `game` if its
    /// fallback came (starting, as [`pair_seeks`](Self::pair_seeks) leaves a game).
    fn settle_seek(
        &self,
        id: &str,
        now_ms: u64,
        game: &str,
        recover_ms: u64,
    ) -> impl Future<Output = Result<Settled, StoreError>> + Send;

    /// Games matched at most `limit`, due for a check at `now_ms`.
    fn starting_due(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// The seeks matched to `game`.
    fn seeks_of_game(
        &self,
        game: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;

    /// `game` was created: no check is due for it any more.
    fn started(&self, game: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Undoes the match of `game`, whose game was refused (an address's cap, a full store):
    /// seek `refused` (the one its game was to count against) is canceled, every other
    /// seek matched to it waits again in its pool, which is due for pairing at `now_ms`
    /// (unless it expired meanwhile), and `game` is starting no more. Returns the seeks
    /// waiting again.
    fn unmatch(
        &self,
        game: &str,
        refused: &str,
        now_ms: u64,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;
}
