//! Matches stored before a match had a record of its own (a challenge of format 5 with a
//! series) read, list, answer and play on after the upgrade.

use std::time::Duration;

use crate::bots::Level;
use crate::domain::{Caller, MatchId, PlayerName};
use crate::engine::{Preset, RulesPatch};
use crate::service::matchmaking::invitation::{
    ChallengeStatus, Invitation, Opponent, Party, Terms,
};
use crate::service::shared::now_ms;
use crate::service::{Keyed, Offer, Services};
use crate::store::challenges::{ChallengeStore, Direction, OpenCaps, Parties};

use super::Match;
use super::series::{MatchStatus, Series};

async fn player(services: &Services, name: &str) -> Keyed {
    services
        .players
        .create_player(&PlayerName::parse(name).unwrap(), false, None, None)
        .await
        .unwrap()
}

/// A two-deal duplicate match of one-round block games by `ann`, as `status`.
fn old_match(ann: &Keyed, opponent: Opponent, status: ChallengeStatus) -> Match {
    let challenger = Party {
        id: ann.profile.id.clone(),
        name: ann.profile.name.clone(),
    };
    let terms = Terms {
        preset: Preset::Block,
        overrides: RulesPatch {
            rounds: Some(Some(1)),
            target: Some(None),
            ..RulesPatch::default()
        },
        seats: 2,
        clock: None,
        rated: false,
    };
    let mut invitation = Invitation::new(challenger, terms, now_ms(), now_ms() + 600_000);
    invitation.add_opponent(opponent);
    if status == ChallengeStatus::Accepted {
        invitation.accept_at_once();
    }
    assert_eq!(invitation.saved_status(), status);
    let series = Series::new(2, true, 2, Some("stored before"), [0; 32]);
    Match::new(MatchId::random(), invitation, series)
}

/// Writes `m` through the store as the server before the upgrade did: a challenge record
/// with a series, indexed under its players and due now.
async fn store_the_old_way(services: &Services, m: &Match) {
    let invitation = m.invitation();
    let opponents = invitation.opponent_ids();
    let parties = Parties {
        challenger: &invitation.challenger().id,
        opponents: &opponents,
    };
    let store = &services.ctx.store;
    store
        .challenges()
        .create_challenge(
            &m.id(),
            m.stored_as_challenge(),
            invitation.created_ms(),
            parties.clone(),
            Some(now_ms()),
        )
        .await
        .unwrap();
    if invitation.saved_status() == ChallengeStatus::Open {
        let uncapped = OpenCaps {
            out: usize::MAX,
            into: usize::MAX,
        };
        store
            .challenges()
            .open_challenge(
                &m.id(),
                parties,
                invitation.expires_ms(),
                now_ms(),
                uncapped,
            )
            .await
            .unwrap()
            .unwrap();
    }
}

#[tokio::test]
async fn a_match_stored_as_a_challenge_with_a_series_is_read_listed_and_played_to_its_end() {
    let services = Services::on_memory(Duration::from_millis(5));
    let ann = player(&services, "ann").await;
    let mut old = old_match(
        &ann,
        Opponent::Level(Level::Greedy),
        ChallengeStatus::Accepted,
    );
    old.series_mut().stand_in = Some(Level::Random);
    store_the_old_way(&services, &old).await;
    let id = old.id();
    let read = services.matches.get_match(id).await.unwrap();
    assert_eq!(read, old);
    let listed = services
        .matches
        .my_matches(&Caller::of(Some(&ann.key)), 1, 10)
        .await
        .unwrap();
    assert_eq!(listed, [old.clone()]);
    // The sweep finds it due, as it found it before, and plays it out.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let done = loop {
        services.sweep().await.unwrap();
        let now = services.matches.get_match(id).await.unwrap();
        if now.series().status(true) == MatchStatus::Finished {
            break now;
        }
        assert!(tokio::time::Instant::now() < deadline, "{now:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(done.series().games.len(), 4);
    assert_eq!(done.series().margin(false).deals_done, 2);
    // Saved by its drive: in the match's own format from then on.
    let stored = services
        .ctx
        .store
        .challenges()
        .load_challenge(&id)
        .await
        .unwrap();
    assert!(stored.unwrap().bytes[0] >= 128);
}

#[tokio::test]
async fn an_open_match_stored_as_a_challenge_is_listed_and_accepted_at_the_challenge_routes() {
    let services = Services::on_memory(Duration::from_millis(5));
    let ann = player(&services, "ann").await;
    let bob = player(&services, "bob").await;
    let bob_party = Party {
        id: bob.profile.id.clone(),
        name: bob.profile.name.clone(),
    };
    let old = old_match(
        &ann,
        Opponent::Player {
            party: bob_party,
            accepted: false,
        },
        ChallengeStatus::Open,
    );
    store_the_old_way(&services, &old).await;
    let open = services
        .offers
        .open(&Caller::of(Some(&bob.key)), Direction::In, 1, 10)
        .await
        .unwrap();
    assert!(
        matches!(&open[..], [Offer::Match(m)] if *m == old),
        "{open:?}"
    );
    let answered = services
        .offers
        .accept(&Caller::of(Some(&bob.key)), old.id().parse().unwrap(), None)
        .await
        .unwrap();
    let Offer::Match(accepted) = answered else {
        panic!("a match answered as a challenge: {answered:?}");
    };
    assert_eq!(
        accepted.invitation().saved_status(),
        ChallengeStatus::Accepted
    );
    let running = services.matches.get_match(old.id()).await.unwrap();
    assert_eq!(running.series().status(true), MatchStatus::Running);
    assert_eq!(
        running.series().games.len(),
        2,
        "a duplicate deal's two games"
    );
}
