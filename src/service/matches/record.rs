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
use crate::engine::{Preset, RulesPatch};
use crate::service::codec;
use crate::service::error::Error;
use crate::service::games::admit::NewGame;
use crate::service::games::clock::ClockSettings;
use crate::service::matchmaking::challenge::{
    ChallengeStatus, Counted, Invitation, MATCH_FORMATS, Opponent, Party, patch_as_json,
};
use crate::service::shared::now_ms;

/// The match record's format byte, then postcard ([`Match`]). A match lives for ever, so
/// the readers of the formats before stay until a migration has rewritten every record.
const FORMAT: u8 = MATCH_FORMATS;
/// A match stored as a challenge with a series: formats 5 (address after the series), 4
/// (no address) and 3 (a series without seed text, stand-in or save time).
const CHALLENGE_V5: u8 = 5;
const CHALLENGE_V4: u8 = 4;
const CHALLENGE_V3: u8 = 3;

/// A match, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    pub id: MatchId,
    /// Where its invitation stands: open until its opponent accepts (a level at once);
    /// once accepted its series says how it runs.
    pub(crate) status: ChallengeStatus,
    /// The player who made it (and owns it, when a level plays its side).
    pub challenger: Party,
    /// Its opponent; at 4 seats, then the partner level of each side.
    pub opponents: Vec<Opponent>,
    pub preset: Preset,
    #[serde(with = "patch_as_json")]
    pub overrides: RulesPatch,
    pub seats: u8,
    pub clock: Option<ClockSettings>,
    pub rated: bool,
    pub created_ms: u64,
    /// When its invitation expires unanswered.
    pub expires_ms: u64,
    /// The player who declined it.
    pub declined_by: Option<String>,
    /// The address whose games in play (`MAX_GAMES_PER_IP`) its games count against: its
    /// maker's.
    pub(crate) address: Option<AddressKey>,
    pub series: Series,
}

/// The head of a match stored as a challenge (formats 3 to 5): the challenge's fields in
/// their order, then its series.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct ChallengeHead {
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
    /// A challenge's game: never a match's (read past, always none).
    _game_id: Option<String>,
    declined_by: Option<String>,
}

impl ChallengeHead {
    fn into_match(self, series: Series, address: Option<AddressKey>) -> Match {
        Match {
            id: self.id,
            status: self.status,
            challenger: self.challenger,
            opponents: self.opponents,
            preset: self.preset,
            overrides: self.overrides,
            seats: self.seats,
            clock: self.clock,
            rated: self.rated,
            created_ms: self.created_ms,
            expires_ms: self.expires_ms,
            declined_by: self.declined_by,
            address,
            series,
        }
    }
}

impl Match {
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
        let head: ChallengeHead = body.next()?;
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
        Ok(Some(head.into_match(series, address)))
    }

    /// Its invitation's status at `now`.
    pub fn status_at(&self, now: u64) -> ChallengeStatus {
        self.status.at(self.expires_ms, now)
    }

    /// Its invitation's status now.
    pub fn status_now(&self) -> ChallengeStatus {
        self.status_at(now_ms())
    }

    /// Whether it is running: accepted, its series neither over nor canceled.
    pub(crate) fn running(&self) -> bool {
        self.status_now() == ChallengeStatus::Accepted
            && self.series.status(true) == MatchStatus::Running
    }

    /// What an answer reads and changes of its invitation.
    pub(crate) fn invitation(&mut self) -> Invitation<'_> {
        Invitation {
            challenger: &self.challenger,
            opponents: &mut self.opponents,
            status: &mut self.status,
            expires_ms: self.expires_ms,
            declined_by: &mut self.declined_by,
        }
    }

    /// Its invitation as the caps on open ones count it.
    pub(crate) fn counted(&self) -> Counted<'_> {
        Counted {
            id: &self.id,
            challenger: &self.challenger,
            opponents: &self.opponents,
            expires_ms: self.expires_ms,
        }
    }

    /// The opponents that are players, by id.
    pub(crate) fn opponent_ids(&self) -> Vec<String> {
        self.opponents
            .iter()
            .filter_map(|o| o.player().map(|p| p.id.clone()))
            .collect()
    }

    /// Every player in it, challenger first.
    pub(crate) fn player_ids(&self) -> Vec<String> {
        std::iter::once(self.challenger.id.clone())
            .chain(self.opponent_ids())
            .collect()
    }

    /// Whether `player` is one of its players.
    pub(crate) fn has_player(&self, player: &str) -> bool {
        self.player_ids().iter().any(|p| p == player)
    }

    /// The game it asks for, its levels at the seats after the challenger's in order (each
    /// of its games seats them again by the side it swaps to).
    pub(crate) fn new_game(&self) -> NewGame {
        NewGame {
            preset: self.preset,
            overrides: self.overrides,
            seats: self.seats,
            bots: self
                .opponents
                .iter()
                .enumerate()
                .filter_map(|(i, o)| match o {
                    Opponent::Level(level) => Some((i as u8 + 1, *level)),
                    Opponent::Player { .. } => None,
                })
                .collect(),
            seed: None,
            deal: None,
            clock: self.clock,
        }
    }

    /// `self` as a match was stored before it had a record of its own: a challenge of
    /// format 5 with a series (written by the tests of its reader).
    #[cfg(test)]
    pub(crate) fn stored_as_challenge(&self) -> Vec<u8> {
        let head = ChallengeHead {
            id: self.id,
            status: self.status,
            challenger: self.challenger.clone(),
            opponents: self.opponents.clone(),
            preset: self.preset,
            overrides: self.overrides,
            seats: self.seats,
            clock: self.clock,
            rated: self.rated,
            created_ms: self.created_ms,
            expires_ms: self.expires_ms,
            _game_id: None,
            declined_by: self.declined_by.clone(),
        };
        codec::Encoder::new(CHALLENGE_V5, &head)
            .then(&Some(&self.series))
            .then(&self.address)
            .finish()
    }

    /// Whether its points are penalties (the margin is the other way round).
    pub fn penalty_scoring(&self) -> bool {
        self.preset.rules().with(&self.overrides).scoring == Scoring::Penalty
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::Level;
    use crate::domain::GameId;
    use crate::service::matches::series::SeriesGame;

    fn game() -> SeriesGame {
        SeriesGame {
            index: 0,
            game_id: GameId::stored("00000000-0000-4000-8000-000000000001").unwrap(),
            seat: 1,
            result: Some((61, 40, 10)),
            named_ms: 1_500,
        }
    }

    fn head() -> ChallengeHead {
        ChallengeHead {
            id: MatchId::stored("00000000-0000-4000-8000-000000000002").unwrap(),
            status: ChallengeStatus::Accepted,
            challenger: Party {
                id: "a".into(),
                name: "ann".into(),
            },
            opponents: vec![Opponent::Level(Level::Greedy)],
            preset: Preset::Draw,
            overrides: RulesPatch {
                rounds: Some(Some(3)),
                ..RulesPatch::default()
            },
            seats: 2,
            clock: None,
            rated: false,
            created_ms: 1_000,
            expires_ms: 2_000,
            _game_id: None,
            declined_by: None,
        }
    }

    fn a_match() -> Match {
        let mut series = Series::new(10, true, 2, Some("seed"), [0; 32]);
        series.stand_in = Some(Level::Random);
        series.games.push(game());
        head().into_match(series, Some(AddressKey::V4(0xC000_0201)))
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
        let v4 = postcard::to_extend(&head(), vec![4]).unwrap();
        let v4 = postcard::to_extend(&Some(&m.series), v4).unwrap();
        let v5 = m.stored_as_challenge();
        assert_eq!(v5[0], 5);
        assert_eq!(Match::read(&v5).unwrap(), Some(m.clone()));
        let unaddressed = Match { address: None, ..m };
        assert_eq!(Match::read(&v4).unwrap(), Some(unaddressed));
        // A plain challenge (no series) is no match.
        let mut plain = postcard::to_extend(&head(), vec![5]).unwrap();
        plain.push(0);
        plain = postcard::to_extend(&None::<AddressKey>, plain).unwrap();
        assert_eq!(Match::read(&plain).unwrap(), None);
    }

    #[test]
    fn a_match_stored_as_a_challenge_in_format_3_reads_as_an_unseeded_match_every_player_plays() {
        // Format 3, written with a copy of the structs as they were (commit b644a14).
        let v3 = postcard::to_extend(&head(), vec![3]).unwrap();
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
        assert_eq!(read.status, ChallengeStatus::Accepted);
        assert_eq!(read.challenger, head().challenger);
        assert_eq!(read.overrides, head().overrides);
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
