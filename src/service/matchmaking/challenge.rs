//! A challenge as it is stored and as its players see it: who challenged whom, to which
//! game, and where it stands. The use cases that change it are in [`super::challenges`].

use serde::{Deserialize, Serialize};

use super::series::{Series, SeriesV3};
use crate::address::AddressKey;
use crate::bots::Level;
use crate::engine::{Preset, RulesPatch};
use crate::service::Error;
use crate::service::games::admit::NewGame;
use crate::service::games::clock::ClockSettings;
use crate::service::shared::now_ms;

/// The challenge record's format byte, then postcard: the challenge, then the address its
/// games count against (appended apart, so format 4 reads with the same struct). A match
/// lives for ever, so the readers of the formats before stay until a migration has
/// rewritten every record.
const FORMAT: u8 = 5;
/// The format before: the same without the address ([`Challenge::address`] unset).
const FORMAT_V4: u8 = 4;
/// The format before that: a match's series without seed text, stand-in or save time
/// ([`ChallengeV3`]).
const FORMAT_V3: u8 = 3;

/// A player in a challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    pub id: String,
    pub name: String,
}

/// One opponent of a challenge: a player, who answers, or a built-in level, which accepts
/// at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Opponent {
    Player { party: Party, accepted: bool },
    Level(Level),
}

impl Opponent {
    pub(crate) fn player(&self) -> Option<&Party> {
        match self {
            Opponent::Player { party, .. } => Some(party),
            Opponent::Level(_) => None,
        }
    }

    pub fn accepted(&self) -> bool {
        match self {
            Opponent::Player { accepted, .. } => *accepted,
            Opponent::Level(_) => true,
        }
    }
}

/// Where a challenge stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChallengeStatus {
    Open,
    /// Every opponent accepted: its game exists (or is being created).
    Accepted,
    Declined,
    Canceled,
    Expired,
}

impl ChallengeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ChallengeStatus::Open => "open",
            ChallengeStatus::Accepted => "accepted",
            ChallengeStatus::Declined => "declined",
            ChallengeStatus::Canceled => "canceled",
            ChallengeStatus::Expired => "expired",
        }
    }
}

/// A challenge, as stored and as its players see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    pub id: String,
    pub(crate) status: ChallengeStatus,
    /// Seat 0.
    pub challenger: Party,
    /// Seats 1 and on, in order.
    pub opponents: Vec<Opponent>,
    pub preset: Preset,
    #[serde(with = "patch_as_json")]
    pub overrides: RulesPatch,
    pub seats: u8,
    pub clock: Option<ClockSettings>,
    pub rated: bool,
    pub created_ms: u64,
    pub expires_ms: u64,
    /// The game it became, once accepted.
    pub game_id: Option<String>,
    /// The player who declined it.
    pub declined_by: Option<String>,
    /// A match's games, when it is a match (duplicate arena) rather than one game.
    pub series: Option<Series>,
    /// The address whose games in play (`MAX_GAMES_PER_IP`) its games count against: a
    /// match's challenger's, from its making; a challenge's accepter's, from the answer
    /// that completed it. Stored after the rest ([`FORMAT`]).
    #[serde(skip)]
    pub(crate) address: Option<AddressKey>,
}

/// A challenge as format 3 stored it: the same but for its series ([`SeriesV3`]).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct ChallengeV3 {
    id: String,
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
    game_id: Option<String>,
    declined_by: Option<String>,
    series: Option<SeriesV3>,
}

impl From<ChallengeV3> for Challenge {
    fn from(v3: ChallengeV3) -> Challenge {
        Challenge {
            id: v3.id,
            status: v3.status,
            challenger: v3.challenger,
            opponents: v3.opponents,
            preset: v3.preset,
            overrides: v3.overrides,
            seats: v3.seats,
            clock: v3.clock,
            rated: v3.rated,
            created_ms: v3.created_ms,
            expires_ms: v3.expires_ms,
            game_id: v3.game_id,
            declined_by: v3.declined_by,
            series: v3.series.map(Series::from),
            address: None,
        }
    }
}

impl Challenge {
    /// Its status at `now`: an open challenge past its expiry is expired, whether or not
    /// a sweep has said so yet.
    pub fn status_at(&self, now: u64) -> ChallengeStatus {
        match self.status {
            ChallengeStatus::Open if now >= self.expires_ms => ChallengeStatus::Expired,
            status => status,
        }
    }

    /// Its status now.
    pub fn status_now(&self) -> ChallengeStatus {
        self.status_at(now_ms())
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let bytes = postcard::to_extend(self, vec![FORMAT]).expect("a challenge always serialises");
        postcard::to_extend(&self.address, bytes).expect("an address always serialises")
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Challenge, Error> {
        let unreadable =
            |e: postcard::Error| Error::Internal(format!("stored challenge unreadable: {e}"));
        match bytes.split_first() {
            Some((&FORMAT, rest)) => {
                let (mut challenge, rest) =
                    postcard::take_from_bytes::<Challenge>(rest).map_err(unreadable)?;
                challenge.address = postcard::from_bytes(rest).map_err(unreadable)?;
                Ok(challenge)
            }
            Some((&FORMAT_V4, rest)) => postcard::from_bytes(rest).map_err(unreadable),
            Some((&FORMAT_V3, rest)) => postcard::from_bytes::<ChallengeV3>(rest)
                .map(Challenge::from)
                .map_err(unreadable),
            _ => Err(Error::Internal(
                "stored challenge unreadable: unknown format".into(),
            )),
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

    pub(crate) fn all_accepted(&self) -> bool {
        self.opponents.iter().all(Opponent::accepted)
    }

    /// The game it asks for, its seats as yet unbound.
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
}

/// Rules overrides as their JSON text: `RulesPatch` leaves absent fields out, which a
/// format without field names (postcard) cannot read back.
pub(crate) mod patch_as_json {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::engine::RulesPatch;

    pub fn serialize<S: Serializer>(patch: &RulesPatch, s: S) -> Result<S::Ok, S::Error> {
        serde_json::to_string(patch)
            .map_err(S::Error::custom)?
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RulesPatch, D::Error> {
        serde_json::from_str(&String::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// A new challenge, as its challenger asks for it.
#[derive(Debug, Clone)]
pub struct NewChallenge {
    /// Player names or ids, or built-in levels: one per seat after the challenger's.
    pub opponents: Vec<String>,
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub seats: u8,
    pub clock: Option<ClockSettings>,
    pub rated: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge() -> Challenge {
        Challenge {
            id: "c".into(),
            status: ChallengeStatus::Open,
            challenger: Party {
                id: "a".into(),
                name: "ann".into(),
            },
            opponents: vec![
                Opponent::Player {
                    party: Party {
                        id: "b".into(),
                        name: "bob".into(),
                    },
                    accepted: false,
                },
                Opponent::Level(Level::Greedy),
            ],
            preset: Preset::Draw,
            overrides: RulesPatch {
                target: Some(None),
                rounds: Some(Some(3)),
                ..RulesPatch::default()
            },
            seats: 3,
            clock: None,
            rated: false,
            created_ms: 1_000,
            expires_ms: 2_000,
            game_id: None,
            declined_by: None,
            series: None,
            address: Some(AddressKey::V4(0xC000_0201)),
        }
    }

    #[test]
    fn a_challenge_stored_in_format_4_reads_back_without_an_address() {
        let c = Challenge {
            address: None,
            ..challenge()
        };
        // Format 4 was today's struct without the address after it.
        let bytes = postcard::to_extend(&c, vec![4]).unwrap();
        assert_eq!(Challenge::decode(&bytes).unwrap(), c);
        let now = challenge();
        assert_eq!(now.encode()[0], FORMAT);
        assert_eq!(Challenge::decode(&now.encode()).unwrap(), now);
    }

    #[test]
    fn a_match_stored_in_format_3_reads_as_an_unseeded_match_every_player_plays() {
        use crate::service::matchmaking::series::{SeriesGame, SeriesV3};
        // Format 3, written with a copy of the structs as they were (commit b644a14).
        let c = challenge();
        let game = SeriesGame {
            index: 0,
            game_id: "g0".into(),
            seat: 1,
            result: Some((61, 40, 10)),
            named_ms: 1_500,
        };
        let v3 = ChallengeV3 {
            id: c.id.clone(),
            status: ChallengeStatus::Accepted,
            challenger: c.challenger.clone(),
            opponents: c.opponents.clone(),
            preset: c.preset,
            overrides: c.overrides,
            seats: c.seats,
            clock: c.clock,
            rated: c.rated,
            created_ms: c.created_ms,
            expires_ms: c.expires_ms,
            game_id: None,
            declined_by: None,
            series: Some(SeriesV3 {
                deals: 10,
                duplicate: true,
                parallel: 2,
                seed: [7; 32],
                games: vec![game.clone()],
                canceled: false,
            }),
        };
        let bytes = postcard::to_extend(&v3, vec![3]).unwrap();
        let read = Challenge::decode(&bytes).unwrap();
        assert_eq!(read.status, ChallengeStatus::Accepted);
        assert_eq!(
            (read.challenger.clone(), read.opponents.clone()),
            (c.challenger, c.opponents)
        );
        assert_eq!(read.overrides, c.overrides);
        let series = read.series.clone().expect("a match");
        assert_eq!(
            (series.deals, series.duplicate, series.parallel),
            (10, true, 2)
        );
        assert_eq!(series.games, [game]);
        assert!(!series.seeded && series.stand_in.is_none() && !series.canceled);
        // Its next save is in the current format, and reads back the same.
        assert_eq!(read.encode()[0], FORMAT);
        assert_eq!(Challenge::decode(&read.encode()).unwrap(), read);
    }

    #[test]
    fn an_open_challenge_is_expired_from_its_expiry_on_and_a_closed_one_stays_as_it_is() {
        let mut c = challenge();
        assert_eq!(c.status_at(1_999), ChallengeStatus::Open);
        assert_eq!(c.status_at(2_000), ChallengeStatus::Expired);
        c.status = ChallengeStatus::Declined;
        assert_eq!(c.status_at(5_000), ChallengeStatus::Declined);
    }

    #[test]
    fn a_challenge_reads_back_as_it_was_stored_and_another_format_is_refused() {
        let c = challenge();
        assert_eq!(Challenge::decode(&c.encode()).unwrap(), c);
        let mut bytes = c.encode();
        bytes[0] = FORMAT + 1;
        assert!(Challenge::decode(&bytes).is_err());
    }

    #[test]
    fn its_game_seats_levels_after_the_challenger_in_the_order_named() {
        let c = challenge();
        assert_eq!(c.new_game().bots, vec![(2, Level::Greedy)]);
        assert!(!c.all_accepted());
        assert_eq!(c.player_ids(), vec!["a".to_owned(), "b".to_owned()]);
    }
}
