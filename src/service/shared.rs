//! The plumbing every aggregate shares, held once behind an `Arc`: the store, the metrics,
//! the settings, the shutdown token and the bots' thinking pool; and [`Port`], how a layer
//! hands a fact up to the dispatcher. It holds no use case.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::engine::Seed;
use crate::metrics::Metrics;
use crate::store::any::AnyStore;
use crate::store::challenges::ChallengeStore;
use crate::store::claims::ClaimStore;
use crate::store::leagues::LeagueStore;
use crate::store::players::{PlayerAdmission, PlayerStore};
use crate::store::ratings::RatingStore;
use crate::store::seeks::SeekStore;
use crate::store::tournaments::TournamentStore;
use crate::store::{GameStore, StoreError};

use super::thinking::Pool;

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What one client address (or one player, where said) may have at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// Games waiting for players (`MAX_WAITING_PER_IP`; `None`: no cap).
    pub waiting: Option<usize>,
    /// Games created and not finished, tables of bots alone included
    /// (`MAX_GAMES_PER_IP`; `None`: no cap).
    pub games: Option<usize>,
    /// Games made that the store still keeps, finished ones included
    /// (`MAX_KEPT_GAMES_PER_IP`; `None`: no cap).
    pub kept: Option<usize>,
    /// Players created in the last hour (`MAX_PLAYERS_PER_IP`; `None`: no cap).
    pub players: Option<usize>,
    /// Tournaments created in the last hour (`MAX_TOURNAMENTS_PER_IP`; `None`: no cap).
    pub tournaments_per_ip: Option<usize>,
    /// Open challenges one player may have received (`MAX_CHALLENGES_TO_PLAYER`;
    /// `None`: no cap).
    pub challenges_to_player: Option<usize>,
    /// Tournaments one player may have registering or running
    /// (`MAX_TOURNAMENTS_PER_PLAYER`; `None`: no cap).
    pub tournaments_per_player: Option<usize>,
    /// Tournaments one player may have joined that are registering or running
    /// (`MAX_TOURNAMENTS_JOINED`; `None`: no cap).
    pub tournaments_joined: Option<usize>,
    /// Players one tournament may hold (`MAX_TOURNAMENT_PLAYERS`; `None`: no cap).
    pub tournament_players: Option<usize>,
    /// Leagues one player may make (`MAX_LEAGUES_PER_PLAYER`; `None`: no cap).
    pub leagues_per_player: Option<usize>,
    /// Leagues one player may have entered (`MAX_LEAGUES_ENTERED`; `None`: no cap).
    pub leagues_entered: Option<usize>,
    /// Entrants one league may hold, its levels counted (`MAX_LEAGUE_ENTRANTS`; `None`:
    /// no cap).
    pub league_entrants: Option<usize>,
    /// Matches a league makes for one entrant in an hour (`LEAGUE_MATCHES_PER_HOUR`;
    /// `None`: no cap).
    pub league_matches_per_hour: Option<usize>,
}

/// How long what waits for a player is kept waiting, and a player that never played. No
/// default of its own: the settings own every default (`startup::lifetimes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// How long a challenge may stay open (`CHALLENGE_TTL_SECS`).
    pub challenge: Duration,
    /// How long a seek may wait (`SEEK_TTL_SECS`).
    pub seek: Duration,
    /// How long a player never seated in a game is kept (`PLAYER_UNPLAYED_TTL_SECS`;
    /// `None`: for ever).
    pub player_unplayed: Option<Duration>,
    /// How long a finished or canceled tournament is kept (`TOURNAMENT_KEPT_SECS`).
    pub tournament: Duration,
    /// How long a league entrant that stopped answering in a match is not paired
    /// (`LEAGUE_TIMEOUT_REST_SECS`; zero: none).
    pub league_rest: Duration,
}

/// Faults a test injects to play a crash: never part of the settings, and all off in a
/// server built from them ([`crate::startup::Application::build`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// The process that finishes a rated game does not move its ratings, as if it had
    /// died right after the game's last save, and leaves them to a sweep.
    pub skip_settling: bool,
}

/// Where the server's own secrets of play come from (the deal of a game made without a
/// seed, a match's or a tournament's secret seed, a seek's seating): the OS's generator,
/// or, in a test's server, a seed the test fixes, so its games deal alike on every run
/// (one seed after another, each a hash of it and a count).
pub(super) struct Dealer {
    fixed: Option<Seed>,
    dealt: AtomicU64,
}

impl Dealer {
    pub(super) fn new(fixed: Option<Seed>) -> Dealer {
        Dealer {
            fixed,
            dealt: AtomicU64::new(0),
        }
    }

    /// 32 bytes nobody outside knows (unless a test fixed them).
    pub(super) fn secret(&self) -> [u8; 32] {
        match self.fixed {
            Some(Seed(base)) => {
                let n = self.dealt.fetch_add(1, Ordering::Relaxed);
                let mut hash = Sha256::new();
                hash.update(base);
                hash.update(n.to_le_bytes());
                hash.finalize().into()
            }
            None => rand::random(),
        }
    }
}

/// The store, never reached whole by an aggregate: each kind of record through its own
/// narrow view (its store trait), and each view of records one aggregate owns opened by
/// that aggregate alone: a player's record by the players, a seek by matchmaking, a
/// league by the leagues, a tournament by the tournaments, a rating by the ratings (Rust
/// cannot open a method to one sibling module, so a test below holds the owners).
#[derive(Clone)]
pub(super) struct Stores(Arc<AnyStore>);

impl Stores {
    pub(super) fn new(store: Arc<AnyStore>) -> Stores {
        Stores(store)
    }

    /// `memory`, `redis` or `redis-cluster`.
    pub(super) fn kind(&self) -> &'static str {
        self.0.kind()
    }

    /// Games, their events, the lobby and the deadlines: the games aggregate's, and its
    /// driver's, which plays them (the readiness probe pings through it).
    pub(super) fn games(&self) -> &impl GameStore {
        &*self.0
    }

    /// Challenges, and the matches kept beside them (a match's record is an invitation
    /// too): matchmaking's and the matches'.
    pub(super) fn challenges(&self) -> &impl ChallengeStore {
        &*self.0
    }

    /// Requests' idempotency claims.
    pub(super) fn claims(&self) -> &impl ClaimStore {
        &*self.0
    }

    pub(super) fn players(&self) -> &impl PlayerStore {
        &*self.0
    }

    /// What others may do with the players' part of the store without touching a
    /// player's record: index a game under its player, and count creations by address.
    pub(super) fn player_index(&self) -> PlayerIndex<'_> {
        PlayerIndex(&self.0)
    }

    pub(super) fn seeks(&self) -> &impl SeekStore {
        &*self.0
    }

    pub(super) fn ratings(&self) -> &impl RatingStore {
        &*self.0
    }

    pub(super) fn tournaments(&self) -> &impl TournamentStore {
        &*self.0
    }

    pub(super) fn leagues(&self) -> &impl LeagueStore {
        &*self.0
    }
}

/// The players' index of each player's games, and the windows of creations per address,
/// for the aggregates that seat players or count creations (see [`Stores::player_index`]).
pub(super) struct PlayerIndex<'a>(&'a AnyStore);

impl PlayerIndex<'_> {
    /// [`PlayerStore::add_player_game`].
    pub(super) async fn add_player_game(
        &self,
        id: &str,
        name: &str,
        game: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        self.0.add_player_game(id, name, game, created_ms).await
    }

    /// [`PlayerStore::player_games`].
    pub(super) async fn player_games(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        self.0.player_games(id, offset, limit).await
    }

    /// [`PlayerStore::admit_player`]: a creation counted in `key`'s window.
    pub(super) async fn admit(
        &self,
        key: &str,
        max: usize,
        window: Duration,
    ) -> Result<PlayerAdmission, StoreError> {
        self.0.admit_player(key, max, window).await
    }
}

/// The shared context each aggregate holds.
pub(super) struct Shared {
    pub(super) store: Stores,
    pub(super) metrics: Arc<Metrics>,
    pub(super) long_poll_max: Duration,
    /// `ALLOW_PREARRANGED`: whether a game may be created with a seed or a deal.
    pub(super) allow_prearranged: bool,
    /// Cancelled when the server begins to stop: long polls answer, event feeds end and
    /// the background work stops at once. [`crate::startup`] owns it and cancels it on
    /// SIGTERM/SIGINT.
    pub(super) stopping: CancellationToken,
    pub(super) caps: Caps,
    pub(super) lifetimes: Lifetimes,
    pub(super) faults: Faults,
    pub(super) dealer: Dealer,
    pub(super) pool: Pool,
    pub(super) webhooks: Webhooks,
}

/// How webhooks are called (startup fills it from the `WEBHOOK_*` settings).
#[derive(Debug, Clone, Copy)]
pub struct WebhookOptions {
    /// The client's limits: private addresses, calls in flight per owner and in all.
    pub limits: crate::hooks::HookLimits,
    /// A call's budget (`WEBHOOK_TIMEOUT_MS`), never past the seat's clock.
    pub timeout: Duration,
    /// Failures in a row that pause a webhook (`WEBHOOK_MAX_FAILURES`).
    pub max_failures: u32,
}

/// Calling bots' webhooks: the guarded client and the budget a call has.
pub(super) struct Webhooks {
    pub(super) client: crate::hooks::Hooks,
    /// A call's budget (`WEBHOOK_TIMEOUT_MS`), never past the seat's clock.
    pub(super) timeout: Duration,
    /// Failures in a row that pause a webhook (`WEBHOOK_MAX_FAILURES`).
    pub(super) max_failures: u32,
}

/// A handle to something above the aggregate that holds it, set once when the services
/// are built and held weakly (the services own it): how a layer below hands a fact up to
/// be dispatched without naming the code that reacts to it.
pub(super) struct Port<T: ?Sized>(OnceLock<Weak<T>>);

impl<T: ?Sized> Port<T> {
    pub(super) fn new() -> Port<T> {
        Port(OnceLock::new())
    }

    pub(super) fn set(&self, to: Weak<T>) {
        // Set once, by `Services::new`; a second set would be a wiring bug.
        assert!(self.0.set(to).is_ok(), "a port is set once");
    }

    /// What it points to, unless the services are gone (the server stopped).
    pub(super) fn get(&self) -> Option<Arc<T>> {
        self.0.get().and_then(Weak::upgrade)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// Every `.rs` file under `dir`, as (path from the package root, its text).
    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let root = Path::new(env!("CARGO_MANIFEST_DIR"));
                let name = path.strip_prefix(root).unwrap().to_string_lossy();
                out.push((name.replace('\\', "/"), text));
            }
        }
    }

    /// Rust cannot open a method to one sibling module alone, so the owners of the store's
    /// views are held here: each kind of record is reached only from the aggregate that
    /// owns it, and no aggregate names the whole store.
    #[test]
    fn each_view_of_the_store_is_opened_only_by_the_aggregate_that_owns_its_records() {
        let owners = [
            ("players", "src/service/players/"),
            ("seeks", "src/service/matchmaking/"),
            ("ratings", "src/service/ratings.rs"),
            ("tournaments", "src/service/tournaments/"),
            ("leagues", "src/service/leagues/"),
            ("claims", "src/service/idempotency.rs"),
        ];
        let mut files = Vec::new();
        sources(
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        assert!(files.len() > 100, "{} files", files.len());
        let mut strays = Vec::new();
        for (name, text) in &files {
            // Calls are split over lines as rustfmt likes: compare without white space.
            let flat: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            for (view, owner) in owners {
                if flat.contains(&format!("store.{view}()")) && !name.starts_with(owner) {
                    strays.push(format!("{name} opens the {view} view"));
                }
            }
            let whole = ["src/service/shared.rs", "src/service/mod.rs"];
            if name.starts_with("src/service/")
                && !whole.contains(&name.as_str())
                && flat.contains("AnyStore")
            {
                strays.push(format!("{name} names the whole store"));
            }
        }
        assert!(strays.is_empty(), "{strays:#?}");
    }
}
