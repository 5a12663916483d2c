//! The seeks' part of the store contract: a pairing takes seeks of distinct players from
//! one pool, oldest first, once; a player's cap; cancel; a due seek expires or falls back;
//! games matched stay starting until said created.

use domino_store::seeks::{Added, Gap, SeekEntry, SeekState, SeekStore, Settled};

use super::{Backend, LONG_TTL, new_id};

fn entry(player: &str, pool: &str, created_ms: u64) -> SeekEntry {
    SeekEntry {
        id: new_id(),
        player: player.to_owned(),
        pool: pool.to_owned(),
        created_ms,
        expires_ms: 10_000,
        rating: 1500.0,
        fallback_ms: None,
        state: SeekState::Waiting,
        bytes: vec![1, 2, 3],
    }
}

pub(crate) async fn a_pairing_takes_seeks_of_distinct_players_oldest_first_once<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob, cat) = (new_id(), new_id(), new_id());
    let pool = format!("block:2:{}", new_id());
    let a1 = entry(&ann, &pool, 1);
    let a2 = entry(&ann, &pool, 2);
    let b1 = entry(&bob, &pool, 3);
    let c1 = entry(&cat, &pool, 4);
    for seek in [&a1, &b1, &c1] {
        assert_eq!(store.add_seek(seek, 5, 0).await.unwrap(), Added::Added);
    }
    // A new seek makes its pool due for pairing at once.
    assert!(store.pools_due(0, 1000).await.unwrap().contains(&pool));
    // Ann waits in this pool already: her second seek there is her first.
    assert_eq!(
        store.add_seek(&a2, 5, 0).await.unwrap(),
        Added::Waiting(a1.id.clone())
    );
    let game = new_id();
    let picked = store
        .pair_seeks(&pool, 2, &game, 100, 500, 100 + 1_000, None)
        .await
        .unwrap();
    // Ann's first and Bob's: never Ann twice.
    assert_eq!(picked, vec![a1.id.clone(), b1.id.clone()]);
    let loaded = store.load_seek(&a1.id).await.unwrap().unwrap();
    assert_eq!(loaded.state, SeekState::Matched(game.clone()));
    assert_eq!(loaded.bytes, vec![1, 2, 3]);
    assert_eq!(store.seeks_of_game(&game).await.unwrap(), picked);
    // Matched, Ann no longer waits there: her second seek is stored.
    assert_eq!(store.add_seek(&a2, 5, 0).await.unwrap(), Added::Added);
    // Ann's second and Cat's are left; three are wanted: nothing is taken.
    assert!(
        store
            .pair_seeks(&pool, 3, &new_id(), 100, 500, 100 + 1_000, None)
            .await
            .unwrap()
            .is_empty()
    );
    // Too few for a game: no longer due, until a seek arrives.
    assert!(
        !store
            .pools_due(u64::MAX, 1000)
            .await
            .unwrap()
            .contains(&pool)
    );
    let again = store
        .pair_seeks(&pool, 2, &new_id(), 100, 500, 100 + 1_000, None)
        .await
        .unwrap();
    assert_eq!(again, vec![a2.id.clone(), c1.id.clone()]);
    assert!(
        store
            .pair_seeks(&pool, 2, &new_id(), 100, 500, 100 + 1_000, None)
            .await
            .unwrap()
            .is_empty()
    );
    // Starting until said created.
    assert!(store.starting_due(499, 10).await.unwrap().is_empty());
    assert!(store.starting_due(500, 10).await.unwrap().contains(&game));
    store.started(&game).await.unwrap();
    assert!(!store.starting_due(500, 10).await.unwrap().contains(&game));
    assert!(store.seeks_of_game(&game).await.unwrap().is_empty());
}

pub(crate) async fn a_player_has_its_cap_of_waiting_seeks_and_a_canceled_one_is_not_paired<
    B: Backend,
>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob) = (new_id(), new_id());
    let pool = format!("block:2:{}", new_id());
    let first = entry(&ann, &pool, 1);
    assert_eq!(store.add_seek(&first, 2, 0).await.unwrap(), Added::Added);
    assert_eq!(
        store
            .add_seek(&entry(&ann, "elsewhere", 2), 2, 0)
            .await
            .unwrap(),
        Added::Added
    );
    assert_eq!(
        store
            .add_seek(&entry(&ann, "a third pool", 3), 2, 0)
            .await
            .unwrap(),
        Added::TooMany
    );
    let waiting = store.player_seeks(&ann).await.unwrap();
    assert!(
        waiting.len() == 2 && waiting.contains(&first.id),
        "{waiting:?}"
    );
    assert_eq!(
        store.player_seeks(&bob).await.unwrap(),
        Vec::<String>::new()
    );
    let canceled = store.cancel_seek(&first.id).await.unwrap().unwrap();
    assert_eq!(canceled.state, SeekState::Canceled);
    // Room again; and the canceled one is never paired.
    assert_eq!(
        store.add_seek(&entry(&bob, &pool, 4), 2, 0).await.unwrap(),
        Added::Added
    );
    assert!(
        store
            .pair_seeks(&pool, 2, &new_id(), 100, 500, 100 + 1_000, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.add_seek(&entry(&ann, &pool, 5), 2, 0).await.unwrap(),
        Added::Added
    );
    assert_eq!(
        store
            .pair_seeks(&pool, 2, &new_id(), 100, 500, 100 + 1_000, None)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(store.cancel_seek(&new_id()).await.unwrap(), None);
}

pub(crate) async fn a_due_seek_expires_or_falls_back_once<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let ann = new_id();
    let pool = format!("block:2:{}", new_id());
    let expiring = SeekEntry {
        expires_ms: 1_000,
        ..entry(&ann, &pool, 1)
    };
    let falling = SeekEntry {
        fallback_ms: Some(500),
        ..entry(&new_id(), &pool, 2)
    };
    for seek in [&expiring, &falling] {
        assert_eq!(store.add_seek(seek, 5, 0).await.unwrap(), Added::Added);
    }
    assert!(store.due_seeks(499, 10).await.unwrap().is_empty());
    assert_eq!(
        store.due_seeks(600, 10).await.unwrap(),
        vec![falling.id.clone()]
    );
    let game = new_id();
    assert_eq!(
        store
            .settle_seek(&falling.id, 600, &game, 900)
            .await
            .unwrap(),
        Settled::FellBack
    );
    assert_eq!(
        store
            .settle_seek(&falling.id, 600, &new_id(), 900)
            .await
            .unwrap(),
        Settled::Nothing
    );
    assert_eq!(
        store.seeks_of_game(&game).await.unwrap(),
        vec![falling.id.clone()]
    );
    assert_eq!(
        store
            .settle_seek(&expiring.id, 600, &new_id(), 900)
            .await
            .unwrap(),
        Settled::Nothing
    );
    assert_eq!(
        store.due_seeks(1_000, 10).await.unwrap(),
        vec![expiring.id.clone()]
    );
    assert_eq!(
        store
            .settle_seek(&expiring.id, 1_000, &new_id(), 900)
            .await
            .unwrap(),
        Settled::Expired
    );
    assert_eq!(
        store.load_seek(&expiring.id).await.unwrap().unwrap().state,
        SeekState::Expired
    );
    assert!(store.due_seeks(5_000, 10).await.unwrap().is_empty());
    // An expired seek is neither paired nor counted against the cap.
    assert_eq!(
        store
            .add_seek(&entry(&new_id(), &pool, 3), 5, 2_000)
            .await
            .unwrap(),
        Added::Added
    );
    assert!(
        store
            .pair_seeks(&pool, 2, &new_id(), 2_000, 2_500, 2_000 + 1_000, None)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn a_rated_pool_pairs_close_ratings_first_within_a_gap_that_widens<B: Backend>() {
    let store = B::open(LONG_TTL).await;
    let pool = format!("block:2:{}", new_id());
    let gap = Gap {
        base: 100.0,
        per_sec: 10.0,
        open_after_ms: 30_000,
    };
    let rated = |pool: &str, rating: f64, created_ms: u64| SeekEntry {
        rating,
        expires_ms: 100_000,
        ..entry(&new_id(), pool, created_ms)
    };
    // The oldest is far from everyone; two close ones come after it.
    let far = rated(&pool, 1100.0, 1_000);
    let near = rated(&pool, 1500.0, 2_000);
    let nearer = rated(&pool, 1540.0, 3_000);
    for seek in [&far, &near, &nearer] {
        store.add_seek(seek, 5, 0).await.unwrap();
    }
    // At 4 s the oldest accepts 130 points: nobody; the two close ones pair.
    let picked = store
        .pair_seeks(&pool, 2, &new_id(), 4_000, 9_000, 4_000 + 1_000, Some(gap))
        .await
        .unwrap();
    assert_eq!(picked, vec![near.id.clone(), nearer.id.clone()]);
    // 350 points apart: not after 5 s (150), but after 30 s of waiting any gap is.
    let closer = rated(&pool, 1450.0, 5_000);
    store.add_seek(&closer, 5, 0).await.unwrap();
    for at in [6_000, 20_000] {
        let picked = store
            .pair_seeks(&pool, 2, &new_id(), at, 99_000, at + 1_000, Some(gap))
            .await
            .unwrap();
        assert!(picked.is_empty(), "at {at}: {picked:?}");
        // Enough seeks for a game, apart: due again a little later, as the gap widens.
        let due = store.pools_due(at + 1_000, 1000).await.unwrap();
        assert!(due.contains(&pool), "at {at}");
        assert!(
            !store
                .pools_due(at + 999, 1000)
                .await
                .unwrap()
                .contains(&pool)
        );
    }
    let picked = store
        .pair_seeks(
            &pool,
            2,
            &new_id(),
            31_000,
            99_000,
            31_000 + 1_000,
            Some(gap),
        )
        .await
        .unwrap();
    assert_eq!(picked, vec![far.id.clone(), closer.id.clone()]);
    // Without ratings, the oldest first whatever they are.
    let casual = format!("block:2:{}", new_id());
    let (old, young) = (rated(&casual, 900.0, 1_000), rated(&casual, 2100.0, 2_000));
    store.add_seek(&old, 5, 0).await.unwrap();
    store.add_seek(&young, 5, 0).await.unwrap();
    let picked = store
        .pair_seeks(&casual, 2, &new_id(), 3_000, 9_000, 3_000 + 1_000, None)
        .await
        .unwrap();
    assert_eq!(picked, vec![old.id.clone(), young.id.clone()]);
}

pub(crate) async fn a_refused_match_cancels_its_refused_seek_and_puts_the_others_back<
    B: Backend,
>() {
    let store = B::open(LONG_TTL).await;
    let (ann, bob, cat) = (new_id(), new_id(), new_id());
    let pool = format!("block:2:{}", new_id());
    let (mut a, b) = (entry(&ann, &pool, 1), entry(&bob, &pool, 2));
    // Ann's seek has a fallback: back in the pool, it is due then, as when it was added.
    a.fallback_ms = Some(4_000);
    for seek in [&a, &b] {
        assert_eq!(store.add_seek(seek, 5, 0).await.unwrap(), Added::Added);
    }
    let game = new_id();
    let picked = store
        .pair_seeks(&pool, 2, &game, 100, 500, 1_100, None)
        .await
        .unwrap();
    assert_eq!(picked.len(), 2);
    // Bob's seek was the one the game would have counted against.
    let back = store.unmatch(&game, &b.id, 200).await.unwrap();
    assert_eq!(back, vec![a.id.clone()]);
    let state = |id: String| {
        let store = &store;
        async move { store.load_seek(&id).await.unwrap().unwrap().state }
    };
    assert_eq!(state(a.id.clone()).await, SeekState::Waiting);
    assert_eq!(state(b.id.clone()).await, SeekState::Canceled);
    assert!(store.starting_due(10_000, 10).await.unwrap().is_empty());
    assert!(store.pools_due(200, 1000).await.unwrap().contains(&pool));
    let due = |at: u64| {
        let store = &store;
        async move { store.due_seeks(at, 1000).await.unwrap() }
    };
    assert!(!due(3_999).await.contains(&a.id), "due before its fallback");
    assert!(due(4_000).await.contains(&a.id), "not due at its fallback");
    // Ann waits again: she pairs with the next seek, once.
    let c = entry(&cat, &pool, 3);
    assert_eq!(store.add_seek(&c, 5, 300).await.unwrap(), Added::Added);
    let again = new_id();
    let picked = store
        .pair_seeks(&pool, 2, &again, 400, 900, 1_400, None)
        .await
        .unwrap();
    assert_eq!(picked, vec![a.id.clone(), c.id.clone()]);
    // Undoing a match again, or another game's, changes nothing.
    assert!(store.unmatch(&game, &b.id, 500).await.unwrap().is_empty());
    assert_eq!(state(a.id.clone()).await, SeekState::Matched(again));
}
