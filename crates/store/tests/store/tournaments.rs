//! The tournaments' part of the store contract: a tournament created once and saved by
//! compare-and-set, its lists by status, the due index, each creator's running ones and
//! its live channel.

use domino_store::tournaments::{PLAYER_TOURNAMENTS_KEPT, TournamentStore};
use domino_store::{SaveOutcome, StoreError, Stored, StoredEvent};
use futures_util::StreamExt;

use super::{Backend, LONG_TTL, new_id};

pub(crate) async fn a_tournament_is_created_once_and_saved_by_compare_and_set<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store.create_tournament(&id, b"new".to_vec()).await.unwrap();
    assert!(matches!(
        store.create_tournament(&id, b"again".to_vec()).await,
        Err(StoreError::Exists)
    ));
    assert_eq!(
        store.load_tournament(&id).await.unwrap(),
        Some(Stored {
            version: 1,
            bytes: b"new".to_vec()
        })
    );
    let saved = store.save_tournament(&id, 1, b"round 1".to_vec()).await;
    assert_eq!(saved.unwrap(), SaveOutcome::Saved { version: 2 });
    let late = store.save_tournament(&id, 1, b"late".to_vec()).await;
    assert_eq!(late.unwrap(), SaveOutcome::Conflict { current: 2 });
    let now = store.load_tournament(&id).await.unwrap().unwrap();
    assert_eq!((now.version, now.bytes), (2, b"round 1".to_vec()));
    let missing = store.save_tournament(&new_id(), 1, b"x".to_vec()).await;
    assert_eq!(missing.unwrap(), SaveOutcome::Missing);
    assert_eq!(store.load_tournament(&new_id()).await.unwrap(), None);
}

pub(crate) async fn tournaments_are_listed_by_status_newest_first<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    // Statuses of this test's own, so other tests' tournaments do not show.
    let tag = new_id();
    let (open, live) = (format!("open-{tag}"), format!("live-{tag}"));
    let statuses = [open.as_str(), live.as_str()];
    let ids: Vec<String> = (0..4).map(|_| new_id()).collect();
    for (i, id) in ids.iter().enumerate() {
        store
            .list_tournament(id, 100 + i as u64, &open, &statuses)
            .await
            .unwrap();
    }
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(store.tournaments(&open, 0, 10).await.unwrap(), newest_first);
    assert_eq!(
        store.tournaments(&open, 1, 2).await.unwrap(),
        newest_first[1..3]
    );
    // Moving one lists it under its new status alone.
    store
        .list_tournament(&ids[1], 101, &live, &statuses)
        .await
        .unwrap();
    assert_eq!(
        store.tournaments(&live, 0, 10).await.unwrap(),
        [ids[1].clone()]
    );
    let still_open = store.tournaments(&open, 0, 10).await.unwrap();
    assert_eq!(still_open, [&ids[3], &ids[2], &ids[0]].map(String::clone));
    assert!(store.tournaments(&open, 0, 0).await.unwrap().is_empty());
}

pub(crate) async fn tournaments_due_are_listed_once_due_until_dropped<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (a, b) = (new_id(), new_id());
    // Far in the past, so no other test's due entries come first.
    store.index_tournament_due(&a, Some(2)).await.unwrap();
    store.index_tournament_due(&b, Some(1)).await.unwrap();
    let due = store.tournaments_due(2, 1000).await.unwrap();
    let (pa, pb) = (
        due.iter().position(|id| *id == a).unwrap(),
        due.iter().position(|id| *id == b).unwrap(),
    );
    assert!(pb < pa, "earliest first");
    assert!(!store.tournaments_due(1, 1000).await.unwrap().contains(&a));
    store.index_tournament_due(&b, None).await.unwrap();
    store.index_tournament_due(&a, None).await.unwrap();
    let due = store.tournaments_due(u64::MAX / 2, 100_000).await.unwrap();
    assert!(!due.contains(&a) && !due.contains(&b));
}

pub(crate) async fn a_creators_claims_stop_at_the_cap_until_one_is_released<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (creator, a, b, c) = (new_id(), new_id(), new_id(), new_id());
    let claim = |id: String, at: u64| {
        let (store, creator) = (&store, &creator);
        async move {
            store
                .claim_creator_tournament(creator, &id, at, Some(2))
                .await
                .unwrap()
        }
    };
    assert!(claim(a.clone(), 10).await);
    assert!(claim(b.clone(), 20).await);
    assert!(claim(b.clone(), 20).await, "a claim held is held again");
    assert!(!claim(c.clone(), 30).await, "the third is past the cap");
    let mut held = store.creator_tournaments(&creator).await.unwrap();
    held.sort();
    let mut both = vec![(a.clone(), 10), (b.clone(), 20)];
    both.sort();
    assert_eq!(
        held, both,
        "each with its claim time; the refused one not held"
    );
    store
        .release_creator_tournament(&creator, &a)
        .await
        .unwrap();
    assert!(claim(c.clone(), 30).await, "a place released is taken");
    let mut held = store.creator_tournaments(&creator).await.unwrap();
    held.sort();
    let mut now = vec![(b, 20), (c, 30)];
    now.sort();
    assert_eq!(held, now);
    assert!(
        store
            .claim_creator_tournament(&new_id(), &a, 1, None)
            .await
            .unwrap(),
        "no cap"
    );
    assert!(
        store
            .creator_tournaments(&new_id())
            .await
            .unwrap()
            .is_empty()
    );
}

/// Claims made at once (interleaved on the store as two processes' would be): exactly the
/// cap's worth pass.
pub(crate) async fn concurrent_claims_pass_the_cap_exactly<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let creator = new_id();
    let claims = (0..24).map(|_| {
        let (store, creator) = (&store, &creator);
        async move {
            store
                .claim_creator_tournament(creator, &new_id(), 1, Some(3))
                .await
                .unwrap()
        }
    });
    let passed = futures_util::future::join_all(claims).await;
    assert_eq!(passed.iter().filter(|p| **p).count(), 3);
    assert_eq!(store.creator_tournaments(&creator).await.unwrap().len(), 3);
}

pub(crate) async fn a_tournaments_news_reaches_its_subscribers<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    let mut stream = store.subscribe_tournament(&id).await.unwrap();
    let mut other = store.subscribe_tournament(&new_id()).await.unwrap();
    let event = StoredEvent {
        version: 3,
        payload: b"{\"round\":1}".to_vec(),
    };
    store.publish_tournament(&id, event.clone()).await.unwrap();
    let got = tokio::time::timeout(std::time::Duration::from_secs(5), stream.next())
        .await
        .expect("the news arrives")
        .expect("the stream is open");
    assert_eq!(got, event);
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(200), other.next()).await;
    assert!(
        nothing.is_err(),
        "another tournament's channel hears nothing"
    );
}

/// What a player joined is capped as what a creator made is, and counted apart from it: a
/// join held is held again, the one past the cap is not held, a place released is taken.
pub(crate) async fn a_players_joins_stop_at_the_cap_apart_from_what_it_made<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (player, a, b, c) = (new_id(), new_id(), new_id(), new_id());
    let join = |id: String, at: u64| {
        let (store, player) = (&store, &player);
        async move {
            store
                .claim_joined_tournament(player, &id, at, Some(2))
                .await
                .unwrap()
        }
    };
    // Two tournaments made by the same player count nothing against its joins.
    for made in [new_id(), new_id()] {
        let claimed = store.claim_creator_tournament(&player, &made, 5, Some(2));
        assert!(claimed.await.unwrap());
    }
    assert!(join(a.clone(), 10).await);
    assert!(join(b.clone(), 20).await);
    assert!(join(b.clone(), 20).await, "a join held is held again");
    assert!(!join(c.clone(), 30).await, "the third is past the cap");
    let mut held = store.joined_tournaments(&player).await.unwrap();
    held.sort();
    let mut both = vec![(a.clone(), 10), (b.clone(), 20)];
    both.sort();
    assert_eq!(held, both, "each with its time; the refused one not held");
    assert_eq!(store.creator_tournaments(&player).await.unwrap().len(), 2);
    store.release_joined_tournament(&player, &a).await.unwrap();
    assert!(join(c.clone(), 30).await, "a place released is taken");
    let mut held = store.joined_tournaments(&player).await.unwrap();
    held.sort();
    let mut now = vec![(b, 20), (c, 30)];
    now.sort();
    assert_eq!(held, now);
    assert_eq!(
        store.creator_tournaments(&player).await.unwrap().len(),
        2,
        "releasing a join releases nothing it made"
    );
    let someone = new_id();
    let uncapped = store.claim_joined_tournament(&someone, &a, 1, None);
    assert!(uncapped.await.unwrap(), "no cap");
    assert!(
        store
            .joined_tournaments(&new_id())
            .await
            .unwrap()
            .is_empty()
    );
}

/// Joins made at once (interleaved on the store as two processes' would be): exactly the
/// cap's worth pass.
pub(crate) async fn concurrent_joins_pass_the_cap_exactly<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let player = new_id();
    let joins = (0..24).map(|_| {
        let (store, player) = (&store, &player);
        async move {
            store
                .claim_joined_tournament(player, &new_id(), 1, Some(3))
                .await
                .unwrap()
        }
    });
    let passed = futures_util::future::join_all(joins).await;
    assert_eq!(passed.iter().filter(|p| **p).count(), 3);
    assert_eq!(store.joined_tournaments(&player).await.unwrap().len(), 3);
}

/// A player's tournaments: newest first a page at a time with their count, each once,
/// one taken out by id alone, and only the newest [`PLAYER_TOURNAMENTS_KEPT`] kept.
pub(crate) async fn a_players_tournaments_are_listed_newest_first_the_newest_kept<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob) = (new_id(), new_id());
    let ids: Vec<String> = (0..3).map(|_| new_id()).collect();
    for (i, id) in ids.iter().enumerate() {
        store
            .index_player_tournament(&ann, id, 100 + i as u64, true)
            .await
            .unwrap();
    }
    // Entered again (a retried join): still once.
    store
        .index_player_tournament(&ann, &ids[0], 100, true)
        .await
        .unwrap();
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    let page = |player: String, offset: usize, limit: usize| {
        let store = &store;
        async move {
            store
                .player_tournaments(&player, offset, limit)
                .await
                .unwrap()
        }
    };
    assert_eq!(page(ann.clone(), 0, 10).await, (newest_first.clone(), 3));
    assert_eq!(page(ann.clone(), 1, 1).await, (vec![ids[1].clone()], 3));
    assert_eq!(page(ann.clone(), 5, 10).await, (vec![], 3));
    assert_eq!(page(ann.clone(), 0, 0).await, (vec![], 3));
    assert_eq!(page(ann.clone(), usize::MAX, 10).await, (vec![], 3));
    assert_eq!(page(bob.clone(), 0, 10).await, (vec![], 0));
    store
        .index_player_tournament(&ann, &ids[1], 0, false)
        .await
        .unwrap();
    let left = vec![ids[2].clone(), ids[0].clone()];
    assert_eq!(page(ann.clone(), 0, 10).await, (left, 2));
    let many: Vec<String> = (0..PLAYER_TOURNAMENTS_KEPT + 2).map(|_| new_id()).collect();
    for (i, id) in many.iter().enumerate() {
        store
            .index_player_tournament(&bob, id, 1_000 + i as u64, true)
            .await
            .unwrap();
    }
    let (newest, count) = page(bob.clone(), 0, 1).await;
    assert_eq!(
        (newest, count),
        (
            vec![many[many.len() - 1].clone()],
            PLAYER_TOURNAMENTS_KEPT as u64
        )
    );
    let (oldest, _) = page(bob.clone(), PLAYER_TOURNAMENTS_KEPT - 1, 10).await;
    assert_eq!(oldest, vec![many[2].clone()]);
}

/// A tournament over is kept as long as told, then dropped: it loads no more, its list
/// stops naming it, and the due index too once a tournament is listed. One not told to
/// end is kept.
pub(crate) async fn a_tournament_over_is_dropped_with_its_entries_once_its_time_runs_out<
    B: Backend,
>() {
    use std::time::{Duration, Instant};
    let store = B::open(LONG_TTL).await;
    let tag = new_id();
    let (done, open) = (format!("done-{tag}"), format!("open-{tag}"));
    let statuses = [done.as_str(), open.as_str()];
    let (over, running) = (new_id(), new_id());
    for (i, id) in [&over, &running].into_iter().enumerate() {
        store.create_tournament(id, b"t".to_vec()).await.unwrap();
        store
            .list_tournament(id, 10 + i as u64, &done, &statuses)
            .await
            .unwrap();
        store.index_tournament_due(id, Some(5)).await.unwrap();
    }
    let kept = Duration::from_millis(400);
    store.keep_tournament_for(&over, kept).await.unwrap();
    // Told of one never made: nothing to keep.
    store.keep_tournament_for(&new_id(), kept).await.unwrap();
    assert!(store.load_tournament(&over).await.unwrap().is_some());
    let deadline = Instant::now() + Duration::from_secs(5);
    while store.load_tournament(&over).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "still kept");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        store.tournaments(&done, 0, 10).await.unwrap(),
        vec![running.clone()]
    );
    store
        .list_tournament(&new_id(), 1, &open, &statuses)
        .await
        .unwrap();
    assert_eq!(
        store.tournaments_due(10, 10).await.unwrap(),
        vec![running.clone()]
    );
    assert!(store.load_tournament(&running).await.unwrap().is_some());
}

/// Tournaments count in the memory store's `MEMORY_MAX_BYTES` with the games: one that
/// would pass it is refused, and a game has no room left by them either.
#[tokio::test]
async fn tournaments_count_in_the_memory_stores_bytes() {
    use domino_store::GameStore;
    use domino_store::memory::MemoryStore;
    let store = MemoryStore::new(LONG_TTL).with_max_bytes(1000);
    store
        .create_tournament(&new_id(), vec![0; 600])
        .await
        .unwrap();
    assert!(matches!(
        store.create_tournament(&new_id(), vec![0; 600]).await,
        Err(StoreError::FullBytes { max: 1000, .. })
    ));
    assert!(matches!(
        store.create(&new_id(), vec![0; 500], None).await,
        Err(StoreError::FullBytes { max: 1000, .. })
    ));
    store.create(&new_id(), vec![0; 100], None).await.unwrap();
}
