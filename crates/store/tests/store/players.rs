//! The players' part of the store contract: names held once, a compare-and-set on the
//! player, the index of a player's games, the count of creations per address.

use std::time::Duration;

use domino_store::players::{Created, PlayerAdmission, PlayerStore};
use domino_store::{SaveOutcome, Stored};

use super::{Backend, LONG_TTL, PROMPTLY, new_id};

pub(crate) async fn a_name_is_held_by_one_player_and_a_refused_player_is_not_stored<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, other) = (new_id(), new_id());
    let name = format!("ann-{ann}");
    assert_eq!(
        store
            .create_player(&ann, &name, b"ann".to_vec(), None)
            .await
            .unwrap(),
        Created::Created
    );
    assert_eq!(
        store
            .create_player(&other, &name, b"x".to_vec(), None)
            .await
            .unwrap(),
        Created::NameTaken
    );
    assert_eq!(store.player_named(&name).await.unwrap(), Some(ann.clone()));
    assert_eq!(
        store.load_player(&ann).await.unwrap(),
        Some(Stored {
            version: 1,
            bytes: b"ann".to_vec()
        })
    );
    assert_eq!(store.load_player(&other).await.unwrap(), None);
    assert_eq!(store.player_named("nobody-at-all").await.unwrap(), None);
}

pub(crate) async fn racing_creations_of_one_name_make_one_player<B: Backend>() {
    let store = std::sync::Arc::new(B::open(LONG_TTL).await);
    let name = format!("race-{}", new_id());
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (store, name) = (store.clone(), name.clone());
        tasks.push(tokio::spawn(async move {
            let id = new_id();
            let created = store
                .create_player(&id, &name, vec![1], None)
                .await
                .unwrap();
            (id, created)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (id, created) = task.await.unwrap();
        if created == Created::Created {
            winners.push(id);
        } else {
            assert_eq!(store.load_player(&id).await.unwrap(), None);
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(
        store.player_named(&name).await.unwrap().as_ref(),
        winners.first()
    );
}

pub(crate) async fn a_player_is_saved_by_compare_and_set<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    store
        .create_player(&id, &format!("p-{id}"), b"v1".to_vec(), None)
        .await
        .unwrap();
    assert_eq!(
        store.save_player(&id, 1, b"v2".to_vec()).await.unwrap(),
        SaveOutcome::Saved { version: 2 }
    );
    assert_eq!(
        store.save_player(&id, 1, b"stale".to_vec()).await.unwrap(),
        SaveOutcome::Conflict { current: 2 }
    );
    assert_eq!(
        store.load_player(&id).await.unwrap(),
        Some(Stored {
            version: 2,
            bytes: b"v2".to_vec()
        })
    );
    assert_eq!(
        store.save_player(&new_id(), 1, vec![]).await.unwrap(),
        SaveOutcome::Missing
    );
}

pub(crate) async fn a_players_games_are_listed_newest_first_a_page_at_a_time<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    for (game, at) in [("g-old", 10), ("g-new", 30), ("g-mid", 20)] {
        store.add_player_game(&id, "name", game, at).await.unwrap();
    }
    // Added twice: listed once.
    store
        .add_player_game(&id, "name", "g-mid", 20)
        .await
        .unwrap();
    assert_eq!(
        store.player_games(&id, 0, 2).await.unwrap(),
        (vec!["g-new".to_owned(), "g-mid".to_owned()], 3)
    );
    assert_eq!(
        store.player_games(&id, 2, 2).await.unwrap(),
        (vec!["g-old".to_owned()], 3)
    );
    assert_eq!(store.player_games(&id, 0, 0).await.unwrap(), (vec![], 3));
    assert_eq!(store.player_games(&id, 9, 5).await.unwrap(), (vec![], 3));
    assert_eq!(
        store.player_games(&new_id(), 0, 5).await.unwrap(),
        (vec![], 0)
    );
}

pub(crate) async fn creations_are_admitted_per_address_up_to_the_cap<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (alice, bob) = (format!("a-{}", new_id()), format!("b-{}", new_id()));
    let hour = Duration::from_secs(3600);
    let admitted = |a: PlayerAdmission| a == PlayerAdmission::Admitted;
    assert!(admitted(store.admit_player(&alice, 2, hour).await.unwrap()));
    assert!(admitted(store.admit_player(&alice, 2, hour).await.unwrap()));
    assert!(!admitted(
        store.admit_player(&alice, 2, hour).await.unwrap()
    ));
    assert!(admitted(store.admit_player(&bob, 2, hour).await.unwrap()));
    store.unadmit_player(&alice).await.unwrap();
    assert!(admitted(store.admit_player(&alice, 2, hour).await.unwrap()));
    // Refused, it says when the window frees: an hour after the first creation counted.
    let PlayerAdmission::Refused { frees_in } = store.admit_player(&alice, 2, hour).await.unwrap()
    else {
        panic!("a third creation in the hour is refused");
    };
    assert!(
        frees_in <= hour && frees_in > hour - Duration::from_secs(60),
        "{frees_in:?}"
    );
    // A window that ends lets the address create again (a refusal counts nothing, so it
    // is asked until the window ends). Long beside the two calls that must fall in it.
    let short = Duration::from_secs(1);
    let carol = format!("c-{}", new_id());
    assert!(admitted(
        store.admit_player(&carol, 1, short).await.unwrap()
    ));
    assert!(!admitted(
        store.admit_player(&carol, 1, short).await.unwrap()
    ));
    let deadline = std::time::Instant::now() + 10 * short;
    while !admitted(store.admit_player(&carol, 1, short).await.unwrap()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the window never ended"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) async fn an_unplayed_player_expires_with_its_name_and_one_seated_lasts<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    // Long beside the calls that must come before it ends, however loaded the machine.
    let ttl = Some(Duration::from_secs(1));
    let (idle, player) = (new_id(), new_id());
    let (idle_name, player_name) = (format!("i-{idle}"), format!("p-{player}"));
    for (id, name) in [(&idle, &idle_name), (&player, &player_name)] {
        let created = store.create_player(id, name, vec![1], ttl).await.unwrap();
        assert_eq!(created, Created::Created);
    }
    store
        .add_player_game(&player, &player_name, "g-1", 1)
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while store.load_player(&idle).await.unwrap().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle player never expired"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(store.player_named(&idle_name).await.unwrap(), None);
    assert!(store.load_player(&player).await.unwrap().is_some());
    assert_eq!(
        store.player_named(&player_name).await.unwrap().as_deref(),
        Some(player.as_str())
    );
    // The name is free again.
    let again = new_id();
    let created = store.create_player(&again, &idle_name, vec![1], ttl).await;
    assert_eq!(created.unwrap(), Created::Created);
}

/// The claims on the keys of creates (`ClaimStore`), beside the players they mostly make.
pub(crate) async fn a_key_is_claimed_once_kept_with_its_new_record_and_free_again_once_released<
    B: Backend,
>() {
    use domino_store::IdempotencyRecord;
    use domino_store::claims::ClaimStore;
    let store = B::open(LONG_TTL).await;
    let record = |response: &[u8]| IdempotencyRecord {
        key: format!("k-{}", new_id()),
        fingerprint: vec![1, 2, 3],
        response: response.to_vec(),
    };
    let first = record(b"first");
    assert_eq!(store.claim_key(&first).await.unwrap(), None);
    // A second claim of the key finds the first, unchanged.
    let second = IdempotencyRecord {
        response: b"second".to_vec(),
        ..first.clone()
    };
    assert_eq!(store.claim_key(&second).await.unwrap(), Some(first.clone()));
    // Kept, it holds its new record.
    let made = IdempotencyRecord {
        response: b"made".to_vec(),
        ..first.clone()
    };
    store.keep_key(&made, LONG_TTL).await.unwrap();
    assert_eq!(store.claim_key(&second).await.unwrap(), Some(made));
    // Released, it is free again; other keys were never touched.
    store.release_key(&first.key).await.unwrap();
    assert_eq!(store.claim_key(&second).await.unwrap(), None);
    let other = record(b"other");
    assert_eq!(store.claim_key(&other).await.unwrap(), None);
}

/// A player marked present is present until its mark's time runs out, then not.
pub(crate) async fn a_player_is_present_while_its_mark_lasts<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (id, other) = (new_id(), new_id());
    assert!(!store.is_present(&id).await.unwrap());
    store
        .mark_present(&id, Duration::from_millis(300))
        .await
        .unwrap();
    assert!(store.is_present(&id).await.unwrap());
    assert!(!store.is_present(&other).await.unwrap());
    let deadline = std::time::Instant::now() + PROMPTLY;
    while store.is_present(&id).await.unwrap() {
        assert!(std::time::Instant::now() < deadline, "still present");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
