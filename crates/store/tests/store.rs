//! The `GameStore` contract, written once and run against every store.
//!
//! Every contract test is a generic function over a [`Backend`]; the `contract_tests!`
//! macro instantiates each one as `memory::<name>`, `redis::<name>` and `cluster::<name>`,
//! so the stores cannot drift apart unnoticed. Redis tests use `REDIS_URL` (default
//! `redis://127.0.0.1:6379`), cluster tests `REDIS_CLUSTER_NODES` (a Redis Cluster whose
//! masters each have a replica: writes wait for one; `scripts/test.sh` provides both), and
//! a fresh key prefix per test, so they run in parallel without seeing each other's keys.
//!
//! The last tests are Redis-only: what happens when Redis is down, and that the store
//! (including its pub/sub fan-out) recovers after the connection is cut. They go through
//! a small TCP proxy that the test can stop and restart (`support/proxy.rs`), so they
//! never disturb the shared Redis or the other tests.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use domino_store::memory::MemoryStore;
use domino_store::redis::{RedisStore, RedisTarget};
use domino_store::{
    Creator, Deadline, EventStream, Evidence, GameNow, GameStore, History, IDEMPOTENCY_WINDOW,
    IdempotencyRecord, Listing, QUEUE_END, Save, SaveOutcome, StoreError, StoredEvent, StoredGame,
    queue_place,
};
use futures_util::StreamExt;

#[path = "store/challenges.rs"]
mod challenges;
use challenges::*;
#[path = "store/leagues.rs"]
mod leagues;
use leagues::*;
#[path = "store/players.rs"]
mod players;
use players::*;
#[path = "store/seeks.rs"]
mod seeks;
use seeks::*;
#[path = "store/tournaments.rs"]
mod tournaments;
use tournaments::*;
#[path = "../../../tests/support/proxy.rs"]
mod proxy;
use proxy::{Proxy, redis_url};

const LONG_TTL: Duration = Duration::from_secs(600);
const OP_TIMEOUT: Duration = Duration::from_secs(2);
/// A shorter timeout where Redis is known to be down: those calls wait it out.
const OP_TIMEOUT_DOWN: Duration = Duration::from_millis(500);
/// How long a test waits for something that should happen promptly.
const PROMPTLY: Duration = Duration::from_secs(5);

trait Backend {
    type Store: GameStore
        + domino_store::players::PlayerStore
        + domino_store::challenges::ChallengeStore
        + domino_store::seeks::SeekStore
        + domino_store::claims::ClaimStore
        + domino_store::tournaments::TournamentStore
        + domino_store::leagues::LeagueStore;
    async fn open(idle_ttl: Duration) -> Self::Store;
}

struct Memory;
impl Backend for Memory {
    type Store = MemoryStore;
    async fn open(idle_ttl: Duration) -> MemoryStore {
        MemoryStore::new(idle_ttl)
    }
}

struct Redis;
impl Backend for Redis {
    type Store = RedisStore;
    async fn open(idle_ttl: Duration) -> RedisStore {
        let url = redis_url();
        let store = RedisStore::connect(&url, &test_prefix(), idle_ttl, OP_TIMEOUT)
            .await
            .expect("connect");
        if let Err(e) = store.ping().await {
            panic!("no Redis at {url} ({e}); run scripts/test.sh, which provides one");
        }
        store
    }
}

struct Cluster;
impl Backend for Cluster {
    type Store = RedisStore;
    async fn open(idle_ttl: Duration) -> RedisStore {
        let nodes = cluster_nodes();
        let target = RedisTarget::Cluster(nodes.clone());
        let store = RedisStore::connect_to(&target, &test_prefix(), idle_ttl, OP_TIMEOUT, 1)
            .await
            .expect("connect");
        assert_eq!(store.mode(), "redis-cluster");
        if let Err(e) = store.ping().await {
            panic!(
                "no healthy Redis Cluster at {nodes:?} ({e}); run scripts/test.sh, which starts one"
            );
        }
        store
    }
}

/// `REDIS_CLUSTER_NODES`, which `scripts/test.sh` sets to a local cluster it started.
fn cluster_nodes() -> Vec<String> {
    let nodes = std::env::var("REDIS_CLUSTER_NODES").unwrap_or_default();
    if nodes.trim().is_empty() {
        panic!("REDIS_CLUSTER_NODES is not set; run scripts/test.sh, which starts a Redis Cluster");
    }
    nodes.split(',').map(|n| n.trim().to_owned()).collect()
}

fn test_prefix() -> String {
    format!("test:{}:", uuid::Uuid::new_v4())
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// A lost race's answer: the game as it is stored now (keeping no events).
fn conflict(version: u64, bytes: &[u8]) -> SaveOutcome<GameNow> {
    SaveOutcome::Conflict {
        current: conflict_now(version, bytes),
    }
}

fn conflict_now(version: u64, bytes: &[u8]) -> GameNow {
    GameNow {
        stored: game(version, bytes),
        made: None,
    }
}

/// A game as stored, keeping no events.
fn game(version: u64, bytes: &[u8]) -> StoredGame {
    StoredGame {
        version,
        bytes: bytes.to_vec(),
        history: History::default(),
    }
}

/// A save from `expected` without the game's history (the store reads it).
fn plain(expected: u64, bytes: &[u8]) -> Save {
    Save {
        expected,
        bytes: bytes.to_vec(),
        history: None,
        idempotency: None,
        seat: 0,
        event: None,
        unlist: false,
        relist: false,
        finished: false,
        deadline: None,
    }
}

fn record(key: &str, fingerprint: &[u8], response: &[u8]) -> IdempotencyRecord {
    IdempotencyRecord {
        key: key.to_owned(),
        fingerprint: fingerprint.to_vec(),
        response: response.to_vec(),
    }
}

/// The ids of a page of the lobby.
async fn listed<S: GameStore>(store: &S, offset: usize, limit: usize) -> Vec<String> {
    let page = store.list_open(offset, limit).await;
    page.map(|page| page.into_iter().map(|(id, _)| id).collect())
        .unwrap_or_else(|e| panic!("list_open: {e}"))
}

async fn next_event(stream: &mut EventStream) -> StoredEvent {
    tokio::time::timeout(PROMPTLY, stream.next())
        .await
        .expect("an event in time")
        .expect("the stream is still open")
}

macro_rules! contract_tests {
    ($($test:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test::<super::Memory>().await;
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test::<super::Redis>().await;
                }
            )*
        }
        mod cluster {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    super::$test::<super::Cluster>().await;
                }
            )*
        }
    };
}

contract_tests!(
    create_then_load,
    create_twice_is_exists,
    save_with_the_current_version_bumps_it,
    stale_save_conflicts_and_changes_nothing,
    save_on_a_missing_game_is_missing,
    idempotency_record_only_with_a_save_and_first_writer_wins,
    events_since_is_ordered_and_capped,
    a_save_from_the_history_it_was_handed_keeps_the_same_events,
    a_finished_game_keeps_only_its_last_event,
    subscribe_receives_events_saved_afterwards,
    list_open_is_newest_first_and_unlist_removes,
    games_in_play_are_listed_latest_started_first_until_their_match_is_over,
    finished_games_are_listed_latest_first_the_newest_hundred_kept,
    idle_games_expire_whole,
    concurrent_saves_exactly_one_wins,
    deadlines_are_indexed_with_the_save_and_listed_once_due,
    each_seat_keeps_only_its_last_idempotency_keys,
    a_lease_is_exclusive_renewed_by_its_holder_and_expires,
    games_in_play_count_per_creator_until_their_match_is_over,
    finished_games_count_against_their_creator_until_they_expire,
    a_tournament_over_is_dropped_with_its_entries_once_its_time_runs_out,
    the_queue_of_tables_is_read_apart_from_the_clocks,
    a_name_is_held_by_one_player_and_a_refused_player_is_not_stored,
    racing_creations_of_one_name_make_one_player,
    a_player_is_saved_by_compare_and_set,
    a_players_games_are_listed_newest_first_a_page_at_a_time,
    creations_are_admitted_per_address_up_to_the_cap,
    an_unplayed_player_expires_with_its_name_and_one_seated_lasts,
    a_key_is_claimed_once_kept_with_its_new_record_and_free_again_once_released,
    a_challenge_is_created_once_and_saved_by_compare_and_set,
    a_tournament_is_created_once_and_saved_by_compare_and_set,
    tournaments_are_listed_by_status_newest_first,
    tournaments_due_are_listed_once_due_until_dropped,
    a_players_tournaments_are_listed_newest_first_the_newest_kept,
    a_creators_claims_stop_at_the_cap_until_one_is_released,
    concurrent_claims_pass_the_cap_exactly,
    a_players_joins_stop_at_the_cap_apart_from_what_it_made,
    concurrent_joins_pass_the_cap_exactly,
    a_tournaments_news_reaches_its_subscribers,
    a_league_is_created_once_listed_and_saved_by_compare_and_set,
    leagues_due_are_listed_once_due_until_dropped,
    league_claims_stop_at_their_cap_until_one_is_released,
    a_leagues_news_reaches_its_subscribers,
    a_player_is_present_while_its_mark_lasts,
    a_players_challenges_are_indexed_in_and_out_newest_first,
    due_challenges_come_earliest_first_until_their_entry_is_dropped,
    open_challenges_are_capped_per_party_in_one_step_and_listed_by_page,
    a_closed_challenge_is_kept_only_as_long_as_told,
    a_players_matches_are_a_set_of_their_own_until_taken_out,
    a_pairing_takes_seeks_of_distinct_players_oldest_first_once,
    a_refused_match_cancels_its_refused_seek_and_puts_the_others_back,
    a_player_has_its_cap_of_waiting_seeks_and_a_canceled_one_is_not_paired,
    a_due_seek_expires_or_falls_back_once,
    a_rated_pool_pairs_close_ratings_first_within_a_gap_that_widens,
);

/// One holder at a time: another is refused until the holder gives the lease up or it
/// expires; the holder renews it.
async fn a_lease_is_exclusive_renewed_by_its_holder_and_expires<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (id, other) = (new_id(), new_id());
    // Long beside the calls before it expires, however loaded the machine.
    let short = Duration::from_secs(1);
    assert!(store.lease(&id, "one", short).await.unwrap());
    assert!(
        !store.lease(&id, "two", LONG_TTL).await.unwrap(),
        "held by one"
    );
    assert!(store.lease(&id, "one", short).await.unwrap(), "renewed");
    assert!(
        store.lease(&other, "two", LONG_TTL).await.unwrap(),
        "per game"
    );
    let renewed = Instant::now();
    while renewed.elapsed() <= short {
        // Not a wait for a result: the lease's time passing is the condition tested.
        tokio::time::sleep(short / 3).await;
    }
    assert!(
        store.lease(&id, "two", LONG_TTL).await.unwrap(),
        "expired: two takes it"
    );
    assert!(!store.lease(&id, "one", short).await.unwrap(), "now two's");
    store.release(&id, "one").await.unwrap();
    assert!(
        !store.lease(&id, "one", short).await.unwrap(),
        "only its holder gives it up"
    );
    store.release(&id, "two").await.unwrap();
    assert!(
        store.lease(&id, "one", short).await.unwrap(),
        "given up: free"
    );
}

/// A creator's games count, listed or not, until a save finishes their match; another
/// creator has a count of its own.
async fn games_in_play_count_per_creator_until_their_match_is_over<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let address = new_id();
    let by = |max| {
        Some(Creator {
            address: address.clone(),
            max,
            kept: usize::MAX,
        })
    };
    let (a, b, c) = (new_id(), new_id(), new_id());
    store
        .create_by(&a, b"a".to_vec(), None, by(2))
        .await
        .unwrap();
    let listing = Some(Listing::at(now_ms()));
    store
        .create_by(&b, b"b".to_vec(), listing, by(2))
        .await
        .unwrap();
    assert!(matches!(
        store.create_by(&c, b"c".to_vec(), None, by(2)).await,
        Err(StoreError::TooManyGames { max: 2 })
    ));
    assert_eq!(store.load(&c).await.unwrap(), None, "nothing created");
    assert!(!listed(&store, 0, 100).await.contains(&c));
    let elsewhere = Creator {
        address: new_id(),
        max: 2,
        kept: usize::MAX,
    };
    store
        .create_by(&new_id(), b"x".to_vec(), None, Some(elsewhere))
        .await
        .unwrap();
    // A save that does not finish the match frees nothing; one that does, frees a place.
    store.save(&a, plain(1, b"a2")).await.unwrap();
    assert!(matches!(
        store.create_by(&c, b"c".to_vec(), None, by(2)).await,
        Err(StoreError::TooManyGames { .. })
    ));
    let over = Save {
        finished: true,
        ..plain(2, b"a3")
    };
    assert_eq!(
        store.save(&a, over).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
    store
        .create_by(&c, b"c".to_vec(), None, by(2))
        .await
        .unwrap();
}

/// A creator's kept games count, finished or not, until they expire: finishing one frees
/// its place among the games in play, not among those kept; the refusal says when the
/// first expires; another creator has a count of its own.
async fn finished_games_count_against_their_creator_until_they_expire<B: Backend>() {
    let ttl = Duration::from_millis(1500);
    let store = B::open(ttl).await;
    let address = new_id();
    let by = || {
        Some(Creator {
            address: address.clone(),
            max: 10,
            kept: 2,
        })
    };
    let (a, b, c) = (new_id(), new_id(), new_id());
    for id in [&a, &b] {
        store
            .create_by(id, b"v1".to_vec(), None, by())
            .await
            .unwrap();
        let over = Save {
            finished: true,
            ..plain(1, b"over")
        };
        assert_eq!(
            store.save(id, over).await.unwrap(),
            SaveOutcome::Saved { version: 2 }
        );
    }
    match store.create_by(&c, b"c".to_vec(), None, by()).await {
        Err(StoreError::TooManyKept { max: 2, frees_in }) => {
            assert!(frees_in <= ttl, "{frees_in:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.load(&c).await.unwrap(), None, "nothing created");
    let elsewhere = Creator {
        address: new_id(),
        max: 10,
        kept: 2,
    };
    store
        .create_by(&new_id(), b"x".to_vec(), None, Some(elsewhere))
        .await
        .unwrap();
    // Once they expire, there is room again.
    let deadline = Instant::now() + PROMPTLY + ttl;
    loop {
        match store.create_by(&c, b"c".to_vec(), None, by()).await {
            Ok(()) => break,
            Err(StoreError::TooManyKept { .. }) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(store.load(&a).await.unwrap(), None, "expired");
}

/// Tables of bots alone wait in the index below [`QUEUE_END`], where a read of the clocks
/// does not reach them, and a read of the queue finds the table that has moved less first.
async fn the_queue_of_tables_is_read_apart_from_the_clocks<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (fewer, more, clock) = (new_id(), new_id(), new_id());
    let now = now_ms();
    for id in [&fewer, &more, &clock] {
        store.create(id, b"v1".to_vec(), None).await.unwrap();
    }
    store
        .index_deadline(&more, 1, Some(queue_place(40)))
        .await
        .unwrap();
    store
        .index_deadline(&fewer, 1, Some(queue_place(3)))
        .await
        .unwrap();
    store
        .index_deadline(&clock, 1, Some(now - 1))
        .await
        .unwrap();
    let clocks = store.due_between(QUEUE_END, now, 100).await.unwrap();
    assert!(clocks.contains(&clock) && !clocks.contains(&fewer) && !clocks.contains(&more));
    let queue = store.due_between(0, QUEUE_END - 1, 100).await.unwrap();
    let ours: Vec<_> = queue
        .into_iter()
        .filter(|id| *id == fewer || *id == more)
        .collect();
    assert_eq!(
        ours,
        [fewer.clone(), more.clone()],
        "the table that moved less first"
    );
    assert!(
        !store
            .due_between(0, QUEUE_END - 1, 100)
            .await
            .unwrap()
            .contains(&clock)
    );
}

/// A long game keeps [`IDEMPOTENCY_WINDOW`] keys per seat, not every key it ever saw: the
/// oldest key of a seat is forgotten when it saves one more, and one seat's keys never
/// push out another's.
async fn each_seat_keeps_only_its_last_idempotency_keys<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    let keyed = |expected: u64, seat: u8, key: &str| Save {
        idempotency: Some(record(key, b"fp", key.as_bytes())),
        seat,
        ..plain(expected, b"v")
    };
    let mut version = 1;
    let mut save = async |seat: u8, key: String| {
        let saved = store.save(&id, keyed(version, seat, &key)).await.unwrap();
        version += 1;
        assert_eq!(saved, SaveOutcome::Saved { version });
    };
    save(1, "other seat".into()).await;
    for n in 0..IDEMPOTENCY_WINDOW + 5 {
        save(0, format!("k{n}")).await;
    }
    for n in 0..5 {
        assert_eq!(
            store.idempotency(&id, &format!("k{n}")).await.unwrap(),
            None,
            "k{n}"
        );
    }
    for n in 5..IDEMPOTENCY_WINDOW + 5 {
        let key = format!("k{n}");
        let kept = store.idempotency(&id, &key).await.unwrap();
        assert_eq!(kept, Some(record(&key, b"fp", key.as_bytes())));
    }
    assert!(
        store
            .idempotency(&id, "other seat")
            .await
            .unwrap()
            .is_some()
    );
}

async fn deadlines_are_indexed_with_the_save_and_listed_once_due<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (a, b) = (new_id(), new_id());
    for id in [&a, &b] {
        store.create(id, b"v1".to_vec(), None).await.unwrap();
    }
    assert!(store.due(u64::MAX, 10).await.unwrap().is_empty());
    let at = |expected, before, after| Save {
        deadline: Some(Deadline { before, after }),
        ..plain(expected, b"blob")
    };
    store.save(&a, at(1, None, Some(2_000))).await.unwrap();
    store.save(&b, at(1, None, Some(1_000))).await.unwrap();
    assert!(store.due(999, 10).await.unwrap().is_empty());
    assert_eq!(store.due(1_000, 10).await.unwrap(), vec![b.clone()]);
    assert_eq!(
        store.due(5_000, 10).await.unwrap(),
        vec![b.clone(), a.clone()]
    );
    assert_eq!(store.due(5_000, 1).await.unwrap(), vec![b.clone()]);
    // A save that loses its race stores nothing; its sooner deadline, indexed before the
    // save (Redis), may leave the entry early, never late, until the sweep says the truth.
    let stale = store.save(&a, at(1, Some(2_000), Some(10))).await.unwrap();
    assert!(matches!(stale, SaveOutcome::Conflict { .. }));
    assert!(store.due(1_500, 10).await.unwrap().contains(&b));
    store.index_deadline(&a, 2, Some(2_000)).await.unwrap();
    assert_eq!(store.due(1_500, 10).await.unwrap(), vec![b.clone()]);
    // A sooner deadline is indexed at once.
    store.save(&a, at(2, Some(2_000), Some(500))).await.unwrap();
    assert_eq!(store.due(600, 10).await.unwrap(), vec![a.clone()]);
    // A later one may leave the entry early (never late), until the sweep says the truth.
    store
        .save(&b, at(2, Some(1_000), Some(3_000)))
        .await
        .unwrap();
    assert!(store.due(3_000, 10).await.unwrap().contains(&b));
    store.index_deadline(&b, 2, Some(3_000)).await.unwrap();
    assert!(!store.due(2_999, 10).await.unwrap().contains(&b));
    // A word about an older version of the game is ignored.
    store.index_deadline(&b, 1, Some(10)).await.unwrap();
    assert!(!store.due(2_999, 10).await.unwrap().contains(&b));
    // No deadline any more: the entry goes (the memory store at once, Redis once told).
    store.save(&a, at(3, Some(500), None)).await.unwrap();
    store.index_deadline(&a, 3, None).await.unwrap();
    assert_eq!(store.due(u64::MAX, 10).await.unwrap(), vec![b.clone()]);
}

async fn create_then_load<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    assert_eq!(store.load(&id).await.unwrap(), None);
    store.create(&id, b"first".to_vec(), None).await.unwrap();
    assert_eq!(store.load(&id).await.unwrap(), Some(game(1, b"first")));
    // Binary blobs survive untouched (postcard bytes are arbitrary).
    let other = new_id();
    let blob: Vec<u8> = (0..=255).collect();
    store.create(&other, blob.clone(), None).await.unwrap();
    assert_eq!(store.load(&other).await.unwrap().unwrap().bytes, blob);
}

async fn create_twice_is_exists<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store
        .create(&id, b"first".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    let again = store
        .create(&id, b"second".to_vec(), Some(Listing::at(now_ms())))
        .await;
    assert!(matches!(again, Err(StoreError::Exists)), "{again:?}");
    let loaded = store.load(&id).await.unwrap().unwrap();
    assert_eq!(loaded.bytes, b"first");
    assert_eq!(listed(&store, 0, 10).await, vec![id]);
}

async fn save_with_the_current_version_bumps_it<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    assert_eq!(
        store.save(&id, plain(1, b"v2")).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    assert_eq!(store.load(&id).await.unwrap(), Some(game(2, b"v2")));
    assert_eq!(
        store.save(&id, plain(2, b"v3")).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
    assert_eq!(store.load(&id).await.unwrap().unwrap().bytes, b"v3");
}

async fn stale_save_conflicts_and_changes_nothing<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store
        .create(&id, b"v1".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    let first = Save {
        event: Some(b"e2".to_vec()),
        ..plain(1, b"v2")
    };
    assert_eq!(
        store.save(&id, first).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    let stale = Save {
        expected: 1,
        history: None,
        bytes: b"stale".to_vec(),
        idempotency: Some(record("k", b"fp", b"answer")),
        seat: 0,
        event: Some(b"stale event".to_vec()),
        unlist: true,
        relist: false,
        finished: false,
        deadline: Some(Deadline {
            before: None,
            after: Some(1),
        }),
    };
    let now = store.load(&id).await.unwrap().unwrap();
    assert_eq!((now.version, &now.bytes[..]), (2, &b"v2"[..]));
    let answered = SaveOutcome::Conflict {
        current: GameNow {
            stored: now.clone(),
            made: None,
        },
    };
    assert_eq!(store.save(&id, stale).await.unwrap(), answered);
    // A version from the future is stale too.
    assert_eq!(
        store.save(&id, plain(7, b"future")).await.unwrap(),
        answered
    );
    assert_eq!(store.load(&id).await.unwrap(), Some(now));
    assert_eq!(store.idempotency(&id, "k").await.unwrap(), None);
    assert_eq!(
        store.events_since(&id, 0).await.unwrap(),
        vec![StoredEvent {
            version: 2,
            payload: b"e2".to_vec()
        }]
    );
    assert_eq!(listed(&store, 0, 10).await, vec![id]);
}

async fn save_on_a_missing_game_is_missing<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    let save = Save {
        idempotency: Some(record("k", b"fp", b"answer")),
        event: Some(b"e".to_vec()),
        ..plain(1, b"bytes")
    };
    assert_eq!(store.save(&id, save).await.unwrap(), SaveOutcome::Missing);
    assert_eq!(store.load(&id).await.unwrap(), None);
    assert_eq!(store.idempotency(&id, "k").await.unwrap(), None);
    assert_eq!(store.events_since(&id, 0).await.unwrap(), vec![]);
}

async fn idempotency_record_only_with_a_save_and_first_writer_wins<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    let other = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    store.create(&other, b"v1".to_vec(), None).await.unwrap();
    assert_eq!(store.idempotency(&id, "k").await.unwrap(), None);

    let first = record("k", b"fp-1", b"first answer");
    let save = Save {
        idempotency: Some(first.clone()),
        ..plain(1, b"v2")
    };
    assert_eq!(
        store.save(&id, save).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    assert_eq!(
        store.idempotency(&id, "k").await.unwrap(),
        Some(first.clone())
    );
    // Records belong to one game.
    assert_eq!(store.idempotency(&other, "k").await.unwrap(), None);

    // A later save under the same key, at the current version, writes nothing and
    // answers the first record with the game as it is: a request is made once.
    let second = Save {
        idempotency: Some(record("k", b"fp-2", b"second answer")),
        ..plain(2, b"v3")
    };
    let made = GameNow {
        made: Some(first.clone()),
        ..conflict_now(2, b"v2")
    };
    assert_eq!(
        store.save(&id, second.clone()).await.unwrap(),
        SaveOutcome::Conflict {
            current: made.clone()
        }
    );
    // At a stale version too.
    assert_eq!(
        store
            .save(
                &id,
                Save {
                    expected: 1,
                    ..second
                }
            )
            .await
            .unwrap(),
        SaveOutcome::Conflict { current: made }
    );
    assert_eq!(store.idempotency(&id, "k").await.unwrap(), Some(first));
    assert_eq!(store.load(&id).await.unwrap().unwrap().version, 2);

    // A refused save stores no record.
    let refused = Save {
        idempotency: Some(record("k2", b"fp", b"never")),
        ..plain(1, b"stale")
    };
    assert_eq!(store.save(&id, refused).await.unwrap(), conflict(2, b"v2"));
    assert_eq!(store.idempotency(&id, "k2").await.unwrap(), None);

    // Empty fingerprint and response are still records.
    let empty = record("", b"", b"");
    let save = Save {
        idempotency: Some(empty.clone()),
        ..plain(2, b"v3")
    };
    assert_eq!(
        store.save(&id, save).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
    assert_eq!(store.idempotency(&id, "").await.unwrap(), Some(empty));
}

async fn events_since_is_ordered_and_capped<B: Backend>() {
    const CAP: usize = domino_store::EVENT_HISTORY;
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    let mut expected = Vec::new();
    // Versions 2..=301; every tenth save carries no event (not every version has one).
    for version in 2..=301u64 {
        let event = (version % 10 != 0).then(|| format!("event {version}").into_bytes());
        if let Some(payload) = &event {
            expected.push(StoredEvent {
                version,
                payload: payload.clone(),
            });
        }
        let save = Save {
            event,
            ..plain(version - 1, b"blob")
        };
        assert_eq!(
            store.save(&id, save).await.unwrap(),
            SaveOutcome::Saved { version }
        );
    }
    let kept = expected.split_off(expected.len() - CAP);
    let all = store.events_since(&id, 0).await.unwrap();
    assert_eq!(all.len(), CAP);
    assert_eq!(all, kept);
    assert_eq!(
        store.events_since(&id, 297).await.unwrap(),
        kept[kept.len() - 3..].to_vec()
    );
    assert_eq!(store.events_since(&id, 301).await.unwrap(), vec![]);
    // An empty payload is still an event.
    let save = Save {
        event: Some(Vec::new()),
        ..plain(301, b"blob")
    };
    store.save(&id, save).await.unwrap();
    assert_eq!(
        store.events_since(&id, 301).await.unwrap(),
        vec![StoredEvent {
            version: 302,
            payload: vec![]
        }]
    );
}

/// A caller that hands each save the history it loaded (or the one its last save left,
/// `Save::history_after`) saves in one step, and the game keeps exactly the events a save
/// without it keeps; a history that is not the game's is refused like a stale version.
async fn a_save_from_the_history_it_was_handed_keeps_the_same_events<B: Backend>() {
    const CAP: usize = domino_store::EVENT_HISTORY;
    let store = B::open(LONG_TTL).await;
    let (handed, read) = (new_id(), new_id());
    for id in [&handed, &read] {
        store.create(id, b"v1".to_vec(), None).await.unwrap();
    }
    let mut history = store.load(&handed).await.unwrap().unwrap().history;
    assert_eq!(
        history,
        History::default(),
        "a game is made keeping no events"
    );
    for version in 2..=40u64 {
        let event = (version % 7 != 0).then(|| format!("event {version}").into_bytes());
        let save = Save {
            event: event.clone(),
            ..plain(version - 1, format!("blob {version}").as_bytes())
        };
        let from_history = Save {
            history: Some(history.clone()),
            ..save.clone()
        };
        history = from_history.history_after().expect("handed a history");
        for (id, save) in [(&handed, from_history), (&read, save)] {
            assert_eq!(
                store.save(id, save).await.unwrap(),
                SaveOutcome::Saved { version }
            );
        }
        let (a, b) = (
            store.load(&handed).await.unwrap().unwrap(),
            store.load(&read).await.unwrap().unwrap(),
        );
        assert_eq!(a, b, "version {version}");
        assert_eq!(a.history, history, "version {version}");
    }
    let events = store.events_since(&handed, 0).await.unwrap();
    assert_eq!(events.len(), CAP);
    assert_eq!(events, store.events_since(&read, 0).await.unwrap());
    assert_eq!(history.events().unwrap(), events);

    // Another history (here one of another length) is not the game's: nothing is
    // written, and the answer is the game as it is, history and all.
    let now = store.load(&handed).await.unwrap().unwrap();
    let wrong = Save {
        history: Some(History::default()),
        event: Some(b"wrong".to_vec()),
        ..plain(40, b"wrong")
    };
    assert_eq!(
        store.save(&handed, wrong).await.unwrap(),
        SaveOutcome::Conflict {
            current: GameNow {
                stored: now.clone(),
                made: None
            }
        }
    );
    assert_eq!(store.load(&handed).await.unwrap(), Some(now));

    let last = Save {
        history: Some(history),
        event: Some(b"over".to_vec()),
        finished: true,
        ..plain(40, b"over")
    };
    let history = last.history_after().unwrap();
    store.save(&handed, last).await.unwrap();
    let over = vec![StoredEvent {
        version: 41,
        payload: b"over".to_vec(),
    }];
    assert_eq!(history.events().unwrap(), over);
    assert_eq!(store.load(&handed).await.unwrap().unwrap().history, history);
    assert_eq!(store.events_since(&handed, 0).await.unwrap(), over);
}

async fn a_finished_game_keeps_only_its_last_event<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    for version in 2..=10u64 {
        let save = Save {
            event: Some(vec![version as u8]),
            finished: version == 10,
            ..plain(version - 1, b"blob")
        };
        store.save(&id, save).await.unwrap();
    }
    assert_eq!(
        store.events_since(&id, 0).await.unwrap(),
        vec![StoredEvent {
            version: 10,
            payload: vec![10]
        }]
    );
    assert_eq!(store.load(&id).await.unwrap().unwrap().version, 10);
}

async fn subscribe_receives_events_saved_afterwards<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    let quiet = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    store.create(&quiet, b"v1".to_vec(), None).await.unwrap();
    let mut first = store.subscribe(&id).await.unwrap();
    let mut second = store.subscribe(&id).await.unwrap();
    let mut elsewhere = store.subscribe(&quiet).await.unwrap();

    let save = Save {
        event: Some(b"e2".to_vec()),
        ..plain(1, b"v2")
    };
    store.save(&id, save).await.unwrap();
    store.save(&id, plain(2, b"v3")).await.unwrap(); // no event: nothing published
    let save = Save {
        event: Some(b"e4".to_vec()),
        ..plain(3, b"v4")
    };
    store.save(&id, save).await.unwrap();
    // A refused save publishes nothing either.
    let stale = Save {
        event: Some(b"stale".to_vec()),
        ..plain(1, b"x")
    };
    store.save(&id, stale).await.unwrap();

    for stream in [&mut first, &mut second] {
        assert_eq!(
            next_event(stream).await,
            StoredEvent {
                version: 2,
                payload: b"e2".to_vec()
            }
        );
        assert_eq!(
            next_event(stream).await,
            StoredEvent {
                version: 4,
                payload: b"e4".to_vec()
            }
        );
    }
    let save = Save {
        event: Some(b"e5".to_vec()),
        ..plain(4, b"v5")
    };
    store.save(&id, save).await.unwrap();
    assert_eq!(next_event(&mut first).await.version, 5);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), elsewhere.next())
            .await
            .is_err(),
        "another game's subscriber got an event"
    );
    // A dropped subscriber does not disturb the others.
    drop(second);
    let save = Save {
        event: Some(b"e6".to_vec()),
        ..plain(5, b"v6")
    };
    store.save(&id, save).await.unwrap();
    assert_eq!(next_event(&mut first).await.version, 6);
}

async fn list_open_is_newest_first_and_unlist_removes<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let base = now_ms() - 10_000;
    let (a, b, c, d) = (new_id(), new_id(), new_id(), new_id());
    store
        .create(&a, b"a".to_vec(), Some(Listing::at(base)))
        .await
        .unwrap();
    store
        .create(&b, b"b".to_vec(), Some(Listing::at(base + 3000)))
        .await
        .unwrap();
    store.create(&c, b"c".to_vec(), None).await.unwrap();
    store
        .create(&d, b"d".to_vec(), Some(Listing::at(base + 1500)))
        .await
        .unwrap();
    assert_eq!(
        listed(&store, 0, 10).await,
        vec![b.clone(), d.clone(), a.clone()]
    );
    assert_eq!(listed(&store, 1, 1).await, vec![d.clone()]);
    assert_eq!(listed(&store, 1, 5).await, vec![d.clone(), a.clone()]);
    assert_eq!(listed(&store, 0, 0).await, Vec::<String>::new());
    assert_eq!(listed(&store, 3, 10).await, Vec::<String>::new());

    // A save that does not unlist keeps the game listed; one that does removes it.
    store.save(&d, plain(1, b"d2")).await.unwrap();
    assert_eq!(listed(&store, 0, 10).await.len(), 3);
    let unlist = Save {
        unlist: true,
        relist: false,
        finished: false,
        ..plain(2, b"d3")
    };
    assert_eq!(
        store.save(&d, unlist).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
    assert_eq!(listed(&store, 0, 10).await, vec![b.clone(), a.clone()]);
    // A refused save does not unlist.
    let stale = Save {
        unlist: true,
        relist: false,
        finished: false,
        ..plain(5, b"x")
    };
    assert_eq!(store.save(&b, stale).await.unwrap(), conflict(1, b"b"));
    assert_eq!(listed(&store, 0, 10).await, vec![b, a]);
}

/// A game is in play from its creation when it is not listed, or from the save that takes
/// it out of the lobby; a save that finishes its match takes it out again.
async fn games_in_play_are_listed_latest_started_first_until_their_match_is_over<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let playing = |offset, limit| {
        let store = &store;
        async move {
            store
                .list_playing(offset, limit)
                .await
                .unwrap_or_else(|e| panic!("list_playing: {e}"))
        }
    };
    // Each start a few milliseconds after the last, so the order is by time, not by id.
    let later = || tokio::time::sleep(Duration::from_millis(5));
    let (bots, open, other) = (new_id(), new_id(), new_id());
    store.create(&bots, b"bots".to_vec(), None).await.unwrap();
    store
        .create(&open, b"open".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    store
        .create(&other, b"other".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    assert_eq!(
        playing(0, 10).await,
        vec![bots.clone()],
        "a listed game waits"
    );

    later().await;
    let start = |expected| Save {
        unlist: true,
        ..plain(expected, b"started")
    };
    assert_eq!(
        store.save(&open, start(1)).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    // A refused save starts nothing.
    assert_eq!(
        store.save(&other, start(7)).await.unwrap(),
        conflict(1, b"other")
    );
    assert_eq!(playing(0, 10).await, vec![open.clone(), bots.clone()]);
    assert_eq!(playing(1, 1).await, vec![bots.clone()]);
    assert_eq!(playing(2, 5).await, Vec::<String>::new());
    assert_eq!(playing(0, 0).await, Vec::<String>::new());

    // A move keeps it in play; the save that finishes the match takes it out.
    store.save(&bots, plain(1, b"moved")).await.unwrap();
    assert_eq!(playing(0, 10).await.len(), 2);
    let finish = Save {
        finished: true,
        ..plain(2, b"over")
    };
    store.save(&bots, finish).await.unwrap();
    assert_eq!(playing(0, 10).await, vec![open]);
}

/// The save that finishes a match lists the game among the latest finished; a refused
/// one does not; only the newest [`FINISHED_KEPT`] stay.
async fn finished_games_are_listed_latest_first_the_newest_hundred_kept<B: Backend>() {
    const KEPT: usize = domino_store::FINISHED_KEPT;
    let store = B::open(LONG_TTL).await;
    let finished = |offset, limit| {
        let store = &store;
        async move {
            store
                .list_finished(offset, limit)
                .await
                .unwrap_or_else(|e| panic!("list_finished: {e}"))
        }
    };
    let finish = |expected| Save {
        finished: true,
        ..plain(expected, b"over")
    };
    let (first, playing, refused) = (new_id(), new_id(), new_id());
    for id in [&first, &playing, &refused] {
        store.create(id, b"new".to_vec(), None).await.unwrap();
    }
    store.save(&first, finish(1)).await.unwrap();
    store.save(&playing, plain(1, b"moved")).await.unwrap();
    assert_eq!(
        store.save(&refused, finish(4)).await.unwrap(),
        conflict(1, b"new")
    );
    assert_eq!(finished(0, 10).await, vec![first.clone()]);
    // Each a few milliseconds after the last, so the order is by time, not by id.
    let mut ids = vec![first];
    for _ in 0..KEPT {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let id = new_id();
        store.create(&id, b"new".to_vec(), None).await.unwrap();
        store.save(&id, finish(1)).await.unwrap();
        ids.push(id);
    }
    ids.reverse();
    ids.truncate(KEPT);
    assert_eq!(
        finished(0, KEPT + 10).await,
        ids,
        "the newest, the first one gone"
    );
    assert_eq!(finished(1, 2).await, ids[1..3].to_vec());
    assert_eq!(finished(KEPT - 1, 5).await, vec![ids[KEPT - 1].clone()]);
    assert_eq!(finished(KEPT, 5).await, Vec::<String>::new());
    assert_eq!(finished(0, 0).await, Vec::<String>::new());
}

async fn idle_games_expire_whole<B: Backend>() {
    // Long beside the calls made before each expiry, however loaded the machine.
    let ttl = Duration::from_secs(3);
    let store = B::open(ttl).await;
    let (idle, busy) = (new_id(), new_id());
    let start = Instant::now();
    store
        .create(&idle, b"idle".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    store.create(&busy, b"busy".to_vec(), None).await.unwrap();
    let save = Save {
        idempotency: Some(record("k", b"fp", b"answer")),
        event: Some(b"e2".to_vec()),
        ..plain(1, b"idle2")
    };
    store.save(&idle, save).await.unwrap();

    // Not a wait for a result: halfway through the TTL, to refresh one game and not the
    // other. A save refreshes the idle expiry.
    tokio::time::sleep_until((start + ttl / 2).into()).await;
    assert_eq!(
        store.save(&busy, plain(1, b"busy2")).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    let deadline = start + 4 * ttl;
    while store.load(&idle).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the idle game never expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(store.idempotency(&idle, "k").await.unwrap(), None);
    assert_eq!(store.events_since(&idle, 0).await.unwrap(), vec![]);
    assert_eq!(listed(&store, 0, 10).await, Vec::<String>::new());
    assert_eq!(
        store.save(&idle, plain(2, b"late")).await.unwrap(),
        SaveOutcome::Missing
    );
    assert_eq!(store.load(&busy).await.unwrap().unwrap().version, 2);
    // An expired id may be created afresh, with nothing left over from before.
    store.create(&idle, b"again".to_vec(), None).await.unwrap();
    assert_eq!(store.load(&idle).await.unwrap().unwrap().version, 1);
    assert_eq!(store.idempotency(&idle, "k").await.unwrap(), None);

    while store.load(&busy).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the busy game never expired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn concurrent_saves_exactly_one_wins<B: Backend>() {
    const WRITERS: usize = 32;
    let store = Arc::new(B::open(LONG_TTL).await);
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|n| {
            let (store, barrier, id) = (store.clone(), barrier.clone(), id.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                let save = Save {
                    expected: 1,
                    // Half of them with the history loaded, half without.
                    history: (n % 2 == 0).then(History::default),
                    bytes: format!("writer {n}").into_bytes(),
                    idempotency: Some(record("same-key", b"fp", format!("{n}").as_bytes())),
                    seat: 0,
                    event: Some(format!("event {n}").into_bytes()),
                    unlist: false,
                    relist: false,
                    finished: false,
                    deadline: None,
                };
                (n, store.save(&id, save).await.unwrap())
            })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            (n, SaveOutcome::Saved { version: 2 }) => winners.push(n),
            (_, SaveOutcome::Conflict { current }) if current.stored.version == 2 => {}
            (n, other) => panic!("writer {n}: {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");
    let winner = winners[0];
    let now = store.load(&id).await.unwrap().unwrap();
    assert_eq!(
        (now.version, now.bytes),
        (2, format!("writer {winner}").into_bytes())
    );
    assert_eq!(
        store
            .idempotency(&id, "same-key")
            .await
            .unwrap()
            .unwrap()
            .response,
        format!("{winner}").into_bytes()
    );
    assert_eq!(
        store.events_since(&id, 0).await.unwrap(),
        vec![StoredEvent {
            version: 2,
            payload: format!("event {winner}").into_bytes()
        }]
    );
}

// ---------------------------------------------------------------------------------------
// Redis only: outages.

/// Asserts that `result` is `Unavailable` and came back within the operation timeout
/// (plus scheduling slack).
fn assert_unavailable<T: std::fmt::Debug>(
    what: &str,
    started: Instant,
    op_timeout: Duration,
    result: Result<T, StoreError>,
) {
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "{what}: {result:?}"
    );
    let took = started.elapsed();
    assert!(
        took < op_timeout + Duration::from_secs(1),
        "{what} took {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_answers_unavailable_promptly() {
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}");
    let started = Instant::now();
    let store = RedisStore::connect(&url, &test_prefix(), LONG_TTL, OP_TIMEOUT_DOWN)
        .await
        .expect("connect succeeds even when Redis is down");
    assert!(started.elapsed() < OP_TIMEOUT_DOWN + Duration::from_secs(1));
    let id = new_id();
    let t = Instant::now();
    assert_unavailable("ping", t, OP_TIMEOUT_DOWN, store.ping().await);
    let t = Instant::now();
    assert_unavailable("load", t, OP_TIMEOUT_DOWN, store.load(&id).await);
    let t = Instant::now();
    assert_unavailable(
        "create",
        t,
        OP_TIMEOUT_DOWN,
        store.create(&id, vec![1], Some(Listing::at(0))).await,
    );
    let t = Instant::now();
    assert_unavailable(
        "save",
        t,
        OP_TIMEOUT_DOWN,
        store.save(&id, plain(1, b"x")).await,
    );
    let t = Instant::now();
    assert_unavailable(
        "list_open",
        t,
        OP_TIMEOUT_DOWN,
        store.list_open(0, 10).await,
    );
    let t = Instant::now();
    assert_unavailable(
        "subscribe",
        t,
        OP_TIMEOUT_DOWN,
        store.subscribe(&id).await.map(|_| ()),
    );
}

/// Asserts that `result` is `Unreplicated`, saying how many replicas it reached, within
/// the operation timeout (plus scheduling slack).
fn assert_unreplicated<T: std::fmt::Debug>(
    what: &str,
    started: Instant,
    op_timeout: Duration,
    reached: &str,
    result: Result<T, StoreError>,
) {
    let Err(StoreError::Unreplicated(message)) = &result else {
        panic!("{what}: {result:?}");
    };
    assert!(message.contains(reached), "{what}: {message}");
    let took = started.elapsed();
    assert!(
        took < op_timeout + Duration::from_secs(1),
        "{what} took {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_a_write_no_replica_confirms_is_not_acknowledged() {
    // The shared test Redis has no replica: a store that must wait for one refuses to
    // acknowledge, within its timeout, what it cannot confirm, and says so when pinged.
    let prefix = test_prefix();
    let plain_store = RedisStore::connect(&redis_url(), &prefix, LONG_TTL, OP_TIMEOUT)
        .await
        .unwrap();
    let target = RedisTarget::Single(redis_url());
    let waiting = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT_DOWN, 1)
        .await
        .unwrap();
    let id = new_id();
    let t = Instant::now();
    let created = waiting.create(&id, b"v1".to_vec(), None).await;
    assert_unreplicated("create", t, OP_TIMEOUT_DOWN, "0 of the 1 replicas", created);
    let other = new_id();
    plain_store
        .create(&other, b"v1".to_vec(), None)
        .await
        .unwrap();
    let t = Instant::now();
    let saved = waiting.save(&other, plain(1, b"v2")).await;
    assert_unreplicated("save", t, OP_TIMEOUT_DOWN, "0 of the 1 replicas", saved);
    // Made on the master all the same; and no later look confirms it either.
    assert_eq!(waiting.load(&other).await.unwrap().unwrap().version, 2);
    let t = Instant::now();
    assert_unreplicated(
        "confirm",
        t,
        OP_TIMEOUT_DOWN,
        "0 of the 1 replicas",
        waiting.confirm(&other, stored(2, b"v2")).await,
    );
    // What it does not find, it does not even ask the replicas about.
    assert_unreplicated(
        "confirm another state",
        Instant::now(),
        OP_TIMEOUT_DOWN,
        "no longer holds",
        waiting.confirm(&other, stored(2, b"v1")).await,
    );
    plain_store.confirm(&other, stored(2, b"v2")).await.unwrap();
    // Refused saves do not wait.
    assert_eq!(
        waiting.save(&other, plain(1, b"x")).await.unwrap(),
        conflict(2, b"v2")
    );
    let health = waiting.ping().await.unwrap();
    assert_eq!(health.degraded.len(), 1, "{health:?}");
    assert!(
        health.degraded[0].contains("has 0 of the 1 replicas"),
        "{health:?}"
    );
    assert!(plain_store.ping().await.unwrap().degraded.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_masters_short_of_replicas_are_named_and_confirm_nothing() {
    // The test cluster has one replica per master (and one spare): asking for three
    // leaves every master short, and the ping names each of them.
    let prefix = test_prefix();
    let target = RedisTarget::Cluster(cluster_nodes());
    let one = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT, 1)
        .await
        .unwrap();
    let three = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT, 3)
        .await
        .unwrap();
    assert_eq!(one.ping().await.unwrap().degraded, Vec::<String>::new());
    let health = three.ping().await.unwrap();
    assert_eq!(health.degraded.len(), 3, "{health:?}");
    for problem in &health.degraded {
        assert!(problem.contains("of the 3 replicas"), "{problem}");
    }
    let id = new_id();
    one.create(&id, b"v1".to_vec(), None).await.unwrap();
    one.confirm(&id, stored(1, b"v1")).await.unwrap();
    let t = Instant::now();
    assert_unreplicated(
        "confirm",
        t,
        OP_TIMEOUT,
        "of the 3 replicas",
        three.confirm(&id, stored(1, b"v1")).await,
    );
    let t = Instant::now();
    let saved = three.save(&id, plain(1, b"v2")).await;
    assert_unreplicated("save", t, OP_TIMEOUT, "of the 3 replicas", saved);
    assert_eq!(
        one.save(&id, plain(2, b"v3")).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_confirms_only_what_the_game_still_holds() {
    let target = RedisTarget::Cluster(cluster_nodes());
    let store = RedisStore::connect_to(&target, &test_prefix(), LONG_TTL, OP_TIMEOUT, 1)
        .await
        .unwrap();
    let id = new_id();
    store.create(&id, b"v1".to_vec(), None).await.unwrap();
    let mut keyed = plain(1, b"v2");
    keyed.idempotency = Some(record("k", b"fp", b"receipt"));
    assert_eq!(
        store.save(&id, keyed).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    store.confirm(&id, stored(2, b"v2")).await.unwrap();
    store.confirm(&id, Evidence::Record("k")).await.unwrap();
    for (what, evidence) in [
        ("an older version", stored(1, b"v1")),
        ("another blob", stored(2, b"v1")),
        ("a later version", stored(3, b"v2")),
        ("a record never stored", Evidence::Record("other")),
    ] {
        let result = store.confirm(&id, evidence).await;
        assert!(
            matches!(&result, Err(StoreError::Unreplicated(m)) if m.contains("no longer holds")),
            "{what}: {result:?}"
        );
    }
    let gone = new_id();
    let result = store.confirm(&gone, stored(1, b"v1")).await;
    assert!(
        matches!(result, Err(StoreError::Unreplicated(_))),
        "a game that does not exist: {result:?}"
    );
}

/// While `store`'s save of a game waits for replicas that are missing, reads of it (and
/// of other games) still answer, on the same thread: once a WAIT has held the thread's
/// connection for a moment, reads move to another.
async fn reads_answer_while_a_save_waits_for_replicas(
    store: &RedisStore,
    plain_store: &RedisStore,
) {
    let id = new_id();
    plain_store.create(&id, b"v1".to_vec(), None).await.unwrap();
    // A save without WAIT first, so that the game's node knows the script: the other
    // store's first attempt then does not wait for replicas only to learn it must send
    // the script's source.
    assert_eq!(
        plain_store.save(&id, plain(1, b"v2")).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    let save = store.save(&id, plain(2, b"v3"));
    tokio::pin!(save);
    // The save's WAIT runs for three quarters of the 2 s timeout: it is still waiting.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut save)
            .await
            .is_err(),
        "the save answered without its replicas"
    );
    let started = Instant::now();
    let loaded = tokio::select! {
        loaded = store.load(&id) => loaded.unwrap().unwrap(),
        saved = &mut save => panic!("the read waited behind the save's WAIT: {saved:?}"),
    };
    assert_eq!(loaded.version, 3);
    eprintln!("read in {:?} while the save waited", started.elapsed());
    let listed = tokio::select! {
        listed = store.list_open(0, 10) => listed,
        saved = &mut save => panic!("the lobby waited behind the save's WAIT: {saved:?}"),
    };
    listed.unwrap();
    let t = Instant::now();
    assert_unreplicated("save", t, OP_TIMEOUT, "replicas", save.await);
    // Made on the master all the same.
    assert_eq!(
        store.load_after_writes(&id).await.unwrap().unwrap().version,
        3
    );
}

#[tokio::test]
async fn redis_reads_answer_while_a_save_waits_for_a_missing_replica() {
    // The shared test Redis has no replica. One thread: both calls use its connections.
    let prefix = test_prefix();
    let target = RedisTarget::Single(redis_url());
    let waiting = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT, 1)
        .await
        .unwrap();
    let plain_store = RedisStore::connect(&redis_url(), &prefix, LONG_TTL, OP_TIMEOUT)
        .await
        .unwrap();
    reads_answer_while_a_save_waits_for_replicas(&waiting, &plain_store).await;
}

#[tokio::test]
async fn cluster_reads_answer_while_a_save_waits_for_missing_replicas() {
    // The test cluster has one replica per master (and one spare): three are missing.
    let prefix = test_prefix();
    let target = RedisTarget::Cluster(cluster_nodes());
    let waiting = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT, 3)
        .await
        .unwrap();
    let plain_store = RedisStore::connect_to(&target, &prefix, LONG_TTL, OP_TIMEOUT, 0)
        .await
        .unwrap();
    reads_answer_while_a_save_waits_for_replicas(&waiting, &plain_store).await;
}

/// The evidence of a game read at `version` with `bytes`.
fn stored(version: u64, bytes: &[u8]) -> Evidence<'_> {
    Evidence::Stored { version, bytes }
}

#[tokio::test]
async fn redis_malformed_url_fails_clearly() {
    let result = RedisStore::connect("not a url", "p:", LONG_TTL, OP_TIMEOUT).await;
    assert!(
        matches!(&result, Err(StoreError::Unavailable(m)) if m.contains("URL")),
        "{:?}",
        result.err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_recovers_from_outages_including_subscriptions() {
    let (proxy, url) = Proxy::to_redis();
    // Down at start: the store is built anyway and says Unavailable.
    proxy.stop();
    let store = RedisStore::connect(&url, &test_prefix(), LONG_TTL, OP_TIMEOUT)
        .await
        .unwrap();
    assert!(matches!(
        store.ping().await,
        Err(StoreError::Unavailable(_))
    ));
    proxy.start();
    eventually("ping after Redis came up", || async {
        store.ping().await.map(drop)
    })
    .await;

    let id = new_id();
    store
        .create(&id, b"v1".to_vec(), Some(Listing::at(now_ms())))
        .await
        .unwrap();
    let mut events = store.subscribe(&id).await.unwrap();
    let save = Save {
        event: Some(b"e2".to_vec()),
        ..plain(1, b"v2")
    };
    store.save(&id, save).await.unwrap();
    assert_eq!(next_event(&mut events).await.version, 2);

    // The connection is cut: live streams end (events published meanwhile are lost, so
    // the client must resume from the history), and calls answer Unavailable.
    proxy.stop();
    let ended = tokio::time::timeout(PROMPTLY, events.next()).await;
    assert!(
        matches!(ended, Ok(None)),
        "the stream should end: {ended:?}"
    );
    assert!(matches!(
        store.load(&id).await,
        Err(StoreError::Unavailable(_))
    ));

    // Back again: every call works without rebuilding the store, including pub/sub.
    proxy.start();
    eventually("load after Redis came back", || async {
        store.load(&id).await.map(|_| ())
    })
    .await;
    let mut events =
        eventually_value("subscribe after Redis came back", || store.subscribe(&id)).await;
    let save = Save {
        event: Some(b"e3".to_vec()),
        ..plain(2, b"v3")
    };
    assert_eq!(
        store.save(&id, save).await.unwrap(),
        SaveOutcome::Saved { version: 3 }
    );
    assert_eq!(next_event(&mut events).await.version, 3);
    assert_eq!(listed(&store, 0, 10).await, vec![id]);
}

async fn eventually<F, Fut>(what: &str, f: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    eventually_value(what, f).await
}

async fn eventually_value<T, F, Fut>(what: &str, f: F) -> T
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match f().await {
            Ok(value) => return value,
            Err(e) if Instant::now() > deadline => panic!("{what}: still failing: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn test_prefixes_are_unique() {
    let prefixes: HashSet<_> = (0..100).map(|_| test_prefix()).collect();
    assert_eq!(prefixes.len(), 100);
}

/// A memory store full of finished games says so, and when the first of them expires;
/// finished games count against their creator on it as on Redis.
#[tokio::test]
async fn a_full_memory_store_says_when_its_first_game_expires() {
    let ttl = Duration::from_secs(60);
    let store = MemoryStore::new(ttl).with_max_games(2);
    for _ in 0..2 {
        let id = new_id();
        store.create(&id, b"v1".to_vec(), None).await.unwrap();
        let over = Save {
            finished: true,
            ..plain(1, b"over")
        };
        store.save(&id, over).await.unwrap();
    }
    match store.create(&new_id(), b"v1".to_vec(), None).await {
        Err(StoreError::Full { max: 2, frees_in }) => {
            assert!(
                frees_in > Duration::from_secs(50) && frees_in <= ttl,
                "{frees_in:?}"
            )
        }
        other => panic!("{other:?}"),
    }
}
