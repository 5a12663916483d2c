//! The players' part of the store contract: names held once, a compare-and-set on the
//! player, the index of a player's games, the count of creations per address.

use std::time::Duration;

use domino_server::store::players::{Created, PlayerStore};
use domino_server::store::{SaveOutcome, Stored};

use super::{Backend, LONG_TTL, new_id};

pub(crate) async fn a_name_is_held_by_one_player_and_a_refused_player_is_not_stored<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, other) = (new_id(), new_id());
    let name = format!("ann-{ann}");
    assert_eq!(
        store
            .create_player(&ann, &name, b"ann".to_vec())
            .await
            .unwrap(),
        Created::Created
    );
    assert_eq!(
        store
            .create_player(&other, &name, b"x".to_vec())
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
            let created = store.create_player(&id, &name, vec![1]).await.unwrap();
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
        .create_player(&id, &format!("p-{id}"), b"v1".to_vec())
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
        store.add_player_game(&id, game, at).await.unwrap();
    }
    // Added twice: listed once.
    store.add_player_game(&id, "g-mid", 20).await.unwrap();
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
    assert!(store.admit_player(&alice, 2, hour).await.unwrap());
    assert!(store.admit_player(&alice, 2, hour).await.unwrap());
    assert!(!store.admit_player(&alice, 2, hour).await.unwrap());
    assert!(store.admit_player(&bob, 2, hour).await.unwrap());
    store.unadmit_player(&alice).await.unwrap();
    assert!(store.admit_player(&alice, 2, hour).await.unwrap());
    assert!(!store.admit_player(&alice, 2, hour).await.unwrap());
    // A window that ends lets the address create again.
    let short = Duration::from_millis(200);
    let carol = format!("c-{}", new_id());
    assert!(store.admit_player(&carol, 1, short).await.unwrap());
    assert!(!store.admit_player(&carol, 1, short).await.unwrap());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(store.admit_player(&carol, 1, short).await.unwrap());
}
