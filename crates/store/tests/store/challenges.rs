//! The challenges' part of the store contract: a challenge created once and saved by
//! compare-and-set, each player's index in and out (older entries dropped as it is read),
//! and the index of due challenges.

use domino_store::challenges::{CapReached, ChallengeStore, Direction, OpenCaps, Parties};
use domino_store::{SaveOutcome, StoreError, Stored};

use super::{Backend, LONG_TTL, new_id};

pub(crate) async fn a_challenge_is_created_once_and_saved_by_compare_and_set<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (id, ann) = (new_id(), new_id());
    let parties = || Parties {
        challenger: &ann,
        opponents: &[],
    };
    store
        .create_challenge(&id, b"open".to_vec(), 10, parties(), None)
        .await
        .unwrap();
    assert!(matches!(
        store
            .create_challenge(&id, b"again".to_vec(), 10, parties(), None)
            .await,
        Err(StoreError::Exists)
    ));
    assert_eq!(
        store.load_challenge(&id).await.unwrap(),
        Some(Stored {
            version: 1,
            bytes: b"open".to_vec()
        })
    );
    assert_eq!(
        store
            .save_challenge(&id, 1, b"accepted".to_vec())
            .await
            .unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    assert_eq!(
        store
            .save_challenge(&id, 1, b"late".to_vec())
            .await
            .unwrap(),
        SaveOutcome::Conflict { current: 2 }
    );
    assert_eq!(
        store.load_challenge(&id).await.unwrap().unwrap().bytes,
        b"accepted"
    );
    assert_eq!(
        store
            .save_challenge(&new_id(), 1, b"x".to_vec())
            .await
            .unwrap(),
        SaveOutcome::Missing
    );
    assert_eq!(store.load_challenge(&new_id()).await.unwrap(), None);
}

pub(crate) async fn a_players_challenges_are_indexed_in_and_out_newest_first<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob, cat) = (new_id(), new_id(), new_id());
    let opponents = [bob.clone(), cat.clone()];
    for (id, at) in [("c-old", 10), ("c-new", 30), ("c-mid", 20)] {
        let parties = Parties {
            challenger: &ann,
            opponents: &opponents,
        };
        store
            .create_challenge(&format!("{id}-{ann}"), vec![1], at, parties, None)
            .await
            .unwrap();
    }
    let names = |ids: Vec<String>| -> Vec<String> {
        ids.into_iter()
            .map(|id| id.split('-').take(2).collect::<Vec<_>>().join("-"))
            .collect()
    };
    assert_eq!(
        names(
            store
                .player_challenges(&ann, Direction::Out, 0, 10)
                .await
                .unwrap()
        ),
        ["c-new", "c-mid", "c-old"]
    );
    assert_eq!(
        names(
            store
                .player_challenges(&cat, Direction::In, 0, 2)
                .await
                .unwrap()
        ),
        ["c-new", "c-mid"]
    );
    assert!(
        store
            .player_challenges(&ann, Direction::In, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Entries made before `since` are dropped as the index is read.
    assert_eq!(
        names(
            store
                .player_challenges(&bob, Direction::In, 20, 10)
                .await
                .unwrap()
        ),
        ["c-new", "c-mid"]
    );
    assert_eq!(
        names(
            store
                .player_challenges(&bob, Direction::In, 0, 10)
                .await
                .unwrap()
        ),
        ["c-new", "c-mid"]
    );
}

pub(crate) async fn due_challenges_come_earliest_first_until_their_entry_is_dropped<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let ann = new_id();
    let (early, late, never) = (new_id(), new_id(), new_id());
    for (id, due) in [(&late, Some(2_000)), (&early, Some(1_000)), (&never, None)] {
        let parties = Parties {
            challenger: &ann,
            opponents: &[],
        };
        store
            .create_challenge(id, vec![1], 1, parties, due)
            .await
            .unwrap();
    }
    assert_eq!(
        store.challenges_due(999, 10).await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        store.challenges_due(5_000, 10).await.unwrap(),
        vec![early.clone(), late.clone()]
    );
    assert_eq!(
        store.challenges_due(5_000, 1).await.unwrap(),
        vec![early.clone()]
    );
    // Moved later, then dropped.
    store
        .index_challenge_due(&early, Some(3_000))
        .await
        .unwrap();
    assert_eq!(
        store.challenges_due(2_500, 10).await.unwrap(),
        vec![late.clone()]
    );
    store.index_challenge_due(&late, None).await.unwrap();
    store.index_challenge_due(&never, None).await.unwrap();
    assert_eq!(store.challenges_due(5_000, 10).await.unwrap(), vec![early]);
}

pub(crate) async fn open_challenges_are_capped_per_party_in_one_step_and_listed_by_page<
    B: Backend,
>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob, cat) = (new_id(), new_id(), new_id());
    let caps = OpenCaps { out: 3, into: 2 };
    let (bobs, cats) = (vec![bob.clone()], vec![cat.clone()]);
    let open = |id: &str, opponents: &[String], expires: u64| {
        let (id, opponents, ann) = (id.to_owned(), opponents.to_vec(), ann.clone());
        let store = &store;
        async move {
            let parties = Parties {
                challenger: &ann,
                opponents: &opponents,
            };
            store
                .open_challenge(&id, parties, expires, 100, caps)
                .await
                .unwrap()
        }
    };
    let ids: Vec<String> = (0..4).map(|_| new_id()).collect();
    assert_eq!(open(&ids[0], &bobs, 1_000).await, Ok(()));
    assert_eq!(open(&ids[1], &bobs, 2_000).await, Ok(()));
    // Bob has two sent to him: his cap.
    assert_eq!(
        open(&ids[2], &bobs, 3_000).await,
        Err(CapReached::Opponent(0))
    );
    assert_eq!(open(&ids[2], &cats, 3_000).await, Ok(()));
    // Ann has made three: hers.
    assert_eq!(
        open(&ids[3], &cats, 4_000).await,
        Err(CapReached::Challenger)
    );
    let listed = store
        .open_challenges(&ann, Direction::Out, 100, 0, 10)
        .await
        .unwrap();
    assert_eq!(listed, [ids[2].clone(), ids[1].clone(), ids[0].clone()]);
    let second = store
        .open_challenges(&ann, Direction::Out, 100, 1, 1)
        .await
        .unwrap();
    assert_eq!(second, [ids[1].clone()]);
    // Closed, or past its expiry, a challenge no longer counts.
    let parties = Parties {
        challenger: &ann,
        opponents: &bobs,
    };
    store.close_challenge(&ids[1], parties).await.unwrap();
    assert_eq!(
        store
            .open_challenges(&bob, Direction::In, 1_000, 0, 10)
            .await
            .unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        store
            .open_challenges(&cat, Direction::In, 1_000, 0, 10)
            .await
            .unwrap(),
        [ids[2].clone()]
    );
}

pub(crate) async fn a_closed_challenge_is_kept_only_as_long_as_told<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (id, ann) = (new_id(), new_id());
    let parties = Parties {
        challenger: &ann,
        opponents: &[],
    };
    store
        .create_challenge(&id, b"canceled".to_vec(), 10, parties, None)
        .await
        .unwrap();
    store
        .keep_challenge(&id, std::time::Duration::from_millis(50))
        .await
        .unwrap();
    // Gone once its 50 ms are over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        store.challenges_due(0, 1).await.unwrap();
        if store.load_challenge(&id).await.unwrap().is_none() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "kept after its time");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(crate) async fn a_players_matches_are_a_set_of_their_own_until_taken_out<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob) = (new_id(), new_id());
    let (first, second) = (new_id(), new_id());
    assert!(store.player_matches(&ann).await.unwrap().is_empty());
    store.index_match(&ann, &first, true).await.unwrap();
    store.index_match(&ann, &second, true).await.unwrap();
    // Added twice, held once.
    store.index_match(&ann, &first, true).await.unwrap();
    let mut held = store.player_matches(&ann).await.unwrap();
    held.sort();
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    assert_eq!(held, both);
    assert!(store.player_matches(&bob).await.unwrap().is_empty());
    store.index_match(&ann, &first, false).await.unwrap();
    // Taking out what is not there is harmless.
    store.index_match(&bob, &first, false).await.unwrap();
    assert_eq!(store.player_matches(&ann).await.unwrap(), vec![second]);
}
