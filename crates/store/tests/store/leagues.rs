//! The leagues' part of the store contract: a league created once and saved by
//! compare-and-set, listed newest first, the due index, each creator's and entrant's
//! claims and its live channel.

use domino_store::leagues::LeagueStore;
use domino_store::{SaveOutcome, StoreError, Stored, StoredEvent};
use futures_util::StreamExt;

use super::{Backend, LONG_TTL, PROMPTLY, new_id};

pub(crate) async fn a_league_is_created_once_listed_and_saved_by_compare_and_set<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    // Far in the future, so no other test's league lists before it.
    store
        .create_league(&id, u64::MAX / 4, b"new".to_vec())
        .await
        .unwrap();
    assert!(matches!(
        store.create_league(&id, 1, b"again".to_vec()).await,
        Err(StoreError::Exists)
    ));
    assert_eq!(
        store.load_league(&id).await.unwrap(),
        Some(Stored {
            version: 1,
            bytes: b"new".to_vec()
        })
    );
    let saved = store.save_league(&id, 1, b"paired".to_vec()).await;
    assert_eq!(saved.unwrap(), SaveOutcome::Saved { version: 2 });
    let late = store.save_league(&id, 1, b"late".to_vec()).await;
    assert_eq!(late.unwrap(), SaveOutcome::Conflict { current: 2 });
    let now = store.load_league(&id).await.unwrap().unwrap();
    assert_eq!((now.version, now.bytes), (2, b"paired".to_vec()));
    let missing = store.save_league(&new_id(), 1, b"x".to_vec()).await;
    assert_eq!(missing.unwrap(), SaveOutcome::Missing);
    assert_eq!(store.load_league(&new_id()).await.unwrap(), None);
    let newest = store.leagues(0, 1).await.unwrap();
    assert_eq!(newest, [id], "the newest first");
    assert!(store.leagues(0, 0).await.unwrap().is_empty());
}

pub(crate) async fn leagues_due_are_listed_once_due_until_dropped<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (a, b) = (new_id(), new_id());
    // Far in the past, so no other test's due entries come first.
    store.index_league_due(&a, Some(2)).await.unwrap();
    store.index_league_due(&b, Some(1)).await.unwrap();
    let due = store.leagues_due(2, 1000).await.unwrap();
    let at = |id: &String| due.iter().position(|d| d == id).unwrap();
    assert!(at(&b) < at(&a), "earliest first: {due:?}");
    assert!(!store.leagues_due(0, 1000).await.unwrap().contains(&a));
    store.index_league_due(&a, None).await.unwrap();
    store
        .index_league_due(&b, Some(u64::MAX / 2))
        .await
        .unwrap();
    let due = store.leagues_due(2, 1000).await.unwrap();
    assert!(!due.contains(&a) && !due.contains(&b), "{due:?}");
}

pub(crate) async fn league_claims_stop_at_their_cap_until_one_is_released<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let player = new_id();
    let (a, b, c) = (new_id(), new_id(), new_id());
    for (id, at) in [(&a, 1), (&b, 2)] {
        assert!(
            store
                .claim_creator_league(&player, id, at, Some(2))
                .await
                .unwrap()
        );
    }
    assert!(
        store
            .claim_creator_league(&player, &b, 2, Some(2))
            .await
            .unwrap(),
        "held again"
    );
    assert!(
        !store
            .claim_creator_league(&player, &c, 3, Some(2))
            .await
            .unwrap()
    );
    store.release_creator_league(&player, &a).await.unwrap();
    assert!(
        store
            .claim_creator_league(&player, &c, 3, Some(2))
            .await
            .unwrap()
    );
    // Entries are counted apart from what the player made.
    for id in [&a, &b] {
        assert!(
            store
                .claim_league_entry(&player, id, 1, Some(2))
                .await
                .unwrap()
        );
    }
    assert!(
        !store
            .claim_league_entry(&player, &c, 1, Some(2))
            .await
            .unwrap()
    );
    let mut entered = store.league_entries(&player).await.unwrap();
    entered.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(entered, expected);
    store.release_league_entry(&player, &a).await.unwrap();
    assert_eq!(store.league_entries(&player).await.unwrap(), [b]);
}

pub(crate) async fn a_leagues_news_reaches_its_subscribers<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let id = new_id();
    let mut stream = store.subscribe_league(&id).await.unwrap();
    let mut other = store.subscribe_league(&new_id()).await.unwrap();
    let event = StoredEvent {
        version: 3,
        payload: b"{\"matches\":1}".to_vec(),
    };
    store.publish_league(&id, event.clone()).await.unwrap();
    let got = tokio::time::timeout(PROMPTLY, stream.next())
        .await
        .expect("the news arrives")
        .expect("the stream is open");
    assert_eq!(got, event);
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(200), other.next()).await;
    assert!(nothing.is_err(), "another league's channel hears nothing");
}
