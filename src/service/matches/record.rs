//! A match as it is stored and as anyone sees it: who challenged whom (a player, or a
//! level), to which games, where its invitation stands, the address its games count
//! against, and its series ([`super::series`]). It is kept under a challenge's key (its id
//! is a challenge's, and its invitation is answered at the challenge routes), with format
//! bytes of its own from [`MATCH_FORMATS`] on; a match stored before it had a record of
//! its own is a challenge record with a series, read here into a [`Match`].

use serde::{Deserialize, Serialize};

use super::series::{MatchStatus, Series, SeriesV3};
use crate::address::AddressKey;
use crate::domain::MatchId;
use crate::engine::rules::Scoring;
use crate::service::codec;
use crate::service::error::Error;
use crate::service::matchmaking::challenge::MATCH_FORMATS;
use crate::service::matchmaking::invitation::{ChallengeStatus, Counted, HeadV6, Invitation};

/// The match record's format byte, then postcard ([`Match`]). A match lives for ever, so
/// the readers of the formats before stay until a migration has rewritten every record.
/// Its invitation's fields are stored in its place, as they were before [`Invitation`]
/// held them (postcard writes a struct as its fields in order, nothing around them): a
/// record of this format written before reads the same (tested below).
const FORMAT: u8 = MATCH_FORMATS;
/// A match stored as a challenge with a series: formats 5 (address after the series), 4
/// (no address) and 3 (a series without seed text, stand-in or save time).
const CHALLENGE_V5: u8 = 5;
const CHALLENGE_V4: u8 = 4;
const CHALLENGE_V3: u8 = 3;

/// A match, as stored. Only the matches change it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    id: MatchId,
    /// Who challenged whom (a player, or a level), to which games, and where the answer
    /// stands: open until its opponent accepts (a level at once); once accepted its
    /// series says how it runs. Its address is its maker's.
    invitation: Invitation,
    series: Series,
}

impl Match {
    /// A new one: `invitation` under `id`, to be played as `series`.
    pub(super) fn new(id: MatchId, invitation: Invitation, series: Series) -> Match {
        Match {
            id,
            invitation,
            series,
        }
    }

    pub fn id(&self) -> MatchId {
        self.id
    }

    /// Who challenged whom, to which games, and where its invitation stands.
    pub fn invitation(&self) -> &Invitation {
        &self.invitation
    }

    pub(super) fn invitation_mut(&mut self) -> &mut Invitation {
        &mut self.invitation
    }

    /// Its games and their results.
    pub fn series(&self) -> &Series {
        &self.series
    }

    pub(super) fn series_mut(&mut self) -> &mut Series {
        &mut self.series
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        codec::encode(FORMAT, self)
    }

    /// The match `bytes` hold, or `None` when they are a plain challenge's (stored under
    /// the same key, in a challenge's format without a series).
    pub(crate) fn read(bytes: &[u8]) -> Result<Option<Match>, Error> {
        let (format, mut body) = codec::open("match", bytes)?;
        match format {
            FORMAT => return body.last().map(Some),
            CHALLENGE_V5 | CHALLENGE_V4 | CHALLENGE_V3 => {}
            other if other < MATCH_FORMATS => return Ok(None),
            other => return Err(body.unknown(other)),
        }
        let head: HeadV6<MatchId> = body.next()?;
        let series = match format {
            CHALLENGE_V3 => body.next::<Option<SeriesV3>>()?.map(Series::from),
            _ => body.next::<Option<Series>>()?,
        };
        let Some(series) = series else {
            return Ok(None);
        };
        let address = match format {
            CHALLENGE_V5 => body.last()?,
            _ => None,
        };
        let (id, invitation, _game) = head.invitation(address);
        Ok(Some(Match::new(id, invitation, series)))
    }

    /// Its invitation's status at `now`.
    pub fn status_at(&self, now: u64) -> ChallengeStatus {
        self.invitation.status_at(now)
    }

    /// Its invitation's status now.
    pub fn status_now(&self) -> ChallengeStatus {
        self.invitation.status_now()
    }

    /// Whether it is running: accepted, its series neither over nor canceled.
    pub(crate) fn running(&self) -> bool {
        self.status_now() == ChallengeStatus::Accepted
            && self.series.status(true) == MatchStatus::Running
    }

    /// Its invitation as the caps on open ones count it.
    pub(crate) fn counted(&self) -> Counted<'_> {
        self.invitation.counted(&self.id)
    }

    /// The address its games count against: its maker's.
    pub(crate) fn address(&self) -> Option<AddressKey> {
        self.invitation.address()
    }

    /// `self` as a match was stored before it had a record of its own: a challenge of
    /// format 5 with a series (written by the tests of its reader).
    #[cfg(test)]
    pub(crate) fn stored_as_challenge(&self) -> Vec<u8> {
        let head = HeadV6::of(self.id, &self.invitation, None);
        codec::Encoder::new(CHALLENGE_V5, &head)
            .then(&Some(&self.series))
            .then(&self.invitation.address())
            .finish()
    }

    /// Whether its points are penalties (the margin is the other way round).
    pub fn penalty_scoring(&self) -> bool {
        let i = &self.invitation;
        i.preset().rules().with(i.overrides()).scoring == Scoring::Penalty
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::Level;
    use crate::domain::GameId;
    use crate::engine::{Preset, RulesPatch};
    use crate::service::games::clock::ClockSettings;
    use crate::service::matches::series::SeriesGame;
    use crate::service::matchmaking::invitation::{Opponent, Party, Terms, patch_as_json};

    fn game() -> SeriesGame {
        SeriesGame {
            index: 0,
            game_id: GameId::stored("00000000-0000-4000-8000-000000000001").unwrap(),
            seat: 1,
            result: Some((61, 40, 10)),
            named_ms: 1_500,
        }
    }

    fn id() -> MatchId {
        MatchId::stored("00000000-0000-4000-8000-000000000002").unwrap()
    }

    /// Its invitation, accepted at once (a level), counted against `address`.
    fn invitation(address: Option<AddressKey>) -> Invitation {
        let terms = Terms {
            preset: Preset::Draw,
            overrides: RulesPatch {
                rounds: Some(Some(3)),
                ..RulesPatch::default()
            },
            seats: 2,
            clock: None,
            rated: false,
        };
        let ann = Party {
            id: "a".into(),
            name: "ann".into(),
        };
        let mut i = Invitation::new(ann, terms, 1_000, 2_000);
        i.add_opponent(Opponent::Level(Level::Greedy));
        i.accept_at_once();
        i.set_address(address);
        i
    }

    fn a_match() -> Match {
        let mut series = Series::new(10, true, 2, Some("seed"), [0; 32]);
        series.stand_in = Some(Level::Random);
        series.games.push(game());
        Match::new(id(), invitation(Some(AddressKey::V4(0xC000_0201))), series)
    }

    /// A match as format 128 was written before its invitation was a struct of its own:
    /// every field inline (a copy of the struct as it was, commit 45671cc).
    #[derive(Serialize)]
    struct MatchFlat {
        id: MatchId,
        status: ChallengeStatus,
        challenger: Party,
        opponents: Vec<Opponent>,
        preset: Preset,
        #[serde(with = "patch_as_json")]
        overrides: RulesPatch,
        seats: u8,
        clock: Option<ClockSettings>,
        rated: bool,
        created_ms: u64,
        expires_ms: u64,
        declined_by: Option<String>,
        address: Option<AddressKey>,
        series: Series,
    }

    #[test]
    fn a_match_stored_in_format_128_before_the_invitation_was_its_own_reads_the_same_and_is_saved_alike()
     {
        let m = a_match();
        let i = m.invitation();
        let flat = MatchFlat {
            id: m.id,
            status: i.saved_status(),
            challenger: i.challenger().clone(),
            opponents: i.opponents().to_vec(),
            preset: i.preset(),
            overrides: *i.overrides(),
            seats: i.seats(),
            clock: i.clock().copied(),
            rated: i.rated(),
            created_ms: i.created_ms(),
            expires_ms: i.expires_ms(),
            declined_by: i.declined_by().map(str::to_owned),
            address: i.address(),
            series: m.series.clone(),
        };
        let old = codec::encode(FORMAT, &flat);
        assert_eq!(Match::read(&old).unwrap(), Some(m.clone()));
        assert_eq!(m.encode(), old, "the same bytes: no new format");
    }

    #[test]
    fn a_match_reads_back_as_it_was_stored_and_is_no_challenge() {
        let m = a_match();
        assert_eq!(m.encode()[0], FORMAT);
        assert_eq!(Match::read(&m.encode()).unwrap(), Some(m.clone()));
        let read = crate::service::Challenge::read(&m.encode()).unwrap();
        assert_eq!(read, None, "one key, two records: the byte tells which");
    }

    #[test]
    fn a_match_in_an_unknown_format_is_refused() {
        let mut bytes = a_match().encode();
        bytes[0] = FORMAT + 1;
        assert!(Match::read(&bytes).is_err());
        assert!(Match::read(&[]).is_err());
    }

    #[test]
    fn a_match_stored_as_a_challenge_in_format_5_or_4_reads_as_the_same_match() {
        let m = a_match();
        let head = HeadV6::of(id(), &invitation(None), None);
        let v4 = postcard::to_extend(&head, vec![4]).unwrap();
        let v4 = postcard::to_extend(&Some(&m.series), v4).unwrap();
        let v5 = m.stored_as_challenge();
        assert_eq!(v5[0], 5);
        assert_eq!(Match::read(&v5).unwrap(), Some(m.clone()));
        let unaddressed = Match::new(id(), invitation(None), m.series.clone());
        assert_eq!(Match::read(&v4).unwrap(), Some(unaddressed));
        // A plain challenge (no series) is no match.
        let mut plain = postcard::to_extend(&head, vec![5]).unwrap();
        plain.push(0);
        plain = postcard::to_extend(&None::<AddressKey>, plain).unwrap();
        assert_eq!(Match::read(&plain).unwrap(), None);
    }

    #[test]
    fn a_match_stored_as_a_challenge_in_format_3_reads_as_an_unseeded_match_every_player_plays() {
        // Format 3, written with a copy of the structs as they were (commit b644a14).
        let head = HeadV6::of(id(), &invitation(None), None);
        let v3 = postcard::to_extend(&head, vec![3]).unwrap();
        let series = SeriesV3 {
            deals: 10,
            duplicate: true,
            parallel: 2,
            seed: [7; 32],
            games: vec![game()],
            canceled: false,
        };
        let v3 = postcard::to_extend(&Some(series), v3).unwrap();
        let read = Match::read(&v3).unwrap().expect("a match");
        assert_eq!(read.invitation(), &invitation(None));
        let series = &read.series;
        assert_eq!(
            (series.deals, series.duplicate, series.parallel),
            (10, true, 2)
        );
        assert_eq!(series.games, [game()]);
        assert!(!series.seeded && series.stand_in.is_none() && !series.canceled);
        // Its next save is in the current format, and reads back the same.
        assert_eq!(read.encode()[0], FORMAT);
        assert_eq!(Match::read(&read.encode()).unwrap(), Some(read));
    }
}
