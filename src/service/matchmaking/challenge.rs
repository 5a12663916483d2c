//! A challenge as it is stored and as its players see it: who challenged whom, to which
//! game, and where it stands, and how an answer to it is judged (shared with a match's
//! invitation, answered at the same routes). The use cases that change it are in
//! [`super::challenges`].

use serde::{Deserialize, Serialize};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{ChallengeId, GameId, Who};
use crate::engine::{Preset, RulesPatch};
use crate::service::Error;
use crate::service::codec::{self, Encoder};
use crate::service::games::admit::NewGame;
use crate::service::games::clock::ClockSettings;
use crate::service::shared::now_ms;

/// The challenge record's format byte, then postcard: the challenge, then the address its
/// games count against (appended apart, so the formats before read with the same struct).
/// The readers of the formats before stay until a migration has rewritten every record.
const FORMAT: u8 = 6;
/// Formats 5, 4 and 3 held a match's series after `declined_by` (its tag 0 in a plain
/// challenge), then (5 only) the address: a record with a series is a match's, read by
/// [`crate::service::matches`].
const FORMAT_V5: u8 = 5;
const FORMAT_V4: u8 = 4;
const FORMAT_V3: u8 = 3;
/// A match is stored under a challenge's key (its id is one, and it is answered at the
/// challenge routes): format bytes from here on are its records', never a challenge's.
pub(crate) const MATCH_FORMATS: u8 = 128;

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
    /// This status at `now` of an invitation that expires at `expires_ms`: an open one
    /// past its expiry is expired, whether or not a sweep has said so yet.
    pub fn at(self, expires_ms: u64, now: u64) -> ChallengeStatus {
        match self {
            ChallengeStatus::Open if now >= expires_ms => ChallengeStatus::Expired,
            status => status,
        }
    }

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

/// What an answer to a challenge (or to a match's invitation) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Accept,
    Decline,
    Cancel,
}

/// What an answer reads and changes of an invitation: a challenge's, or a match's (whose
/// invitation is answered at the same routes, so by the same rules and words).
pub(crate) struct Invitation<'a> {
    pub(crate) challenger: &'a Party,
    pub(crate) opponents: &'a mut [Opponent],
    pub(crate) status: &'a mut ChallengeStatus,
    pub(crate) expires_ms: u64,
    pub(crate) declined_by: &'a mut Option<String>,
}

impl Invitation<'_> {
    /// Applies `answer` by player `me` at `now`: whether it changed anything (the same
    /// answer again changes nothing, so a retry is harmless), or why it is refused.
    pub(crate) fn answer(self, answer: Answer, me: &str, now: u64) -> Result<bool, Error> {
        let mine = self
            .opponents
            .iter()
            .position(|o| o.player().is_some_and(|p| p.id == me));
        let challenger = self.challenger.id == me;
        match (answer, mine, challenger) {
            (Answer::Cancel, _, false) => {
                return Err(Error::Forbidden(
                    "only the challenger may cancel a challenge".into(),
                ));
            }
            (Answer::Accept | Answer::Decline, None, _) => {
                return Err(Error::Forbidden(if challenger {
                    "the challenger answers no challenge of its own; cancel it instead".into()
                } else {
                    "this challenge is not to this player".into()
                }));
            }
            _ => {}
        }
        let status = self.status.at(self.expires_ms, now);
        let repeated = match (answer, status) {
            (Answer::Accept, ChallengeStatus::Open | ChallengeStatus::Accepted) => {
                mine.is_some_and(|i| self.opponents[i].accepted())
            }
            (Answer::Decline, ChallengeStatus::Declined) => self.declined_by.as_deref() == Some(me),
            (Answer::Cancel, ChallengeStatus::Canceled) => true,
            _ => false,
        };
        if repeated {
            return Ok(false);
        }
        if status != ChallengeStatus::Open {
            return Err(Error::ChallengeClosed(format!(
                "this challenge is {} already",
                status.as_str()
            )));
        }
        match answer {
            Answer::Accept => {
                if let Some(Opponent::Player { accepted, .. }) =
                    mine.map(|i| &mut self.opponents[i])
                {
                    *accepted = true;
                }
                if self.opponents.iter().all(Opponent::accepted) {
                    *self.status = ChallengeStatus::Accepted;
                }
            }
            Answer::Decline => {
                *self.status = ChallengeStatus::Declined;
                *self.declined_by = Some(me.to_owned());
            }
            Answer::Cancel => *self.status = ChallengeStatus::Canceled,
        }
        Ok(true)
    }
}

/// An open invitation as its caps count it: a challenge's, or a match's.
pub(crate) struct Counted<'a> {
    pub(crate) id: &'a str,
    pub(crate) challenger: &'a Party,
    pub(crate) opponents: &'a [Opponent],
    pub(crate) expires_ms: u64,
}

impl Counted<'_> {
    pub(super) fn opponent_ids(&self) -> Vec<String> {
        self.opponents
            .iter()
            .filter_map(|o| o.player().map(|p| p.id.clone()))
            .collect()
    }
}

/// A challenge, as stored and as its players see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    pub id: ChallengeId,
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
    pub game_id: Option<GameId>,
    /// The player who declined it.
    pub declined_by: Option<String>,
    /// The address whose games in play (`MAX_GAMES_PER_IP`) its game counts against: its
    /// accepter's, from the answer that completed it (its maker's when levels accepted at
    /// once). Stored after the rest ([`FORMAT`]).
    #[serde(skip)]
    pub(crate) address: Option<AddressKey>,
}

impl Challenge {
    /// Its status at `now`: an open challenge past its expiry is expired, whether or not
    /// a sweep has said so yet.
    pub fn status_at(&self, now: u64) -> ChallengeStatus {
        self.status.at(self.expires_ms, now)
    }

    /// Its status now.
    pub fn status_now(&self) -> ChallengeStatus {
        self.status_at(now_ms())
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        Encoder::new(FORMAT, self).then(&self.address).finish()
    }

    /// The challenge `bytes` hold, or `None` when they are a match's record (see
    /// [`MATCH_FORMATS`]).
    pub(crate) fn read(bytes: &[u8]) -> Result<Option<Challenge>, Error> {
        let (format, mut body) = codec::open("challenge", bytes)?;
        if format >= MATCH_FORMATS {
            return Ok(None);
        }
        let mut challenge: Challenge = match format {
            FORMAT | FORMAT_V5 | FORMAT_V4 | FORMAT_V3 => body.next()?,
            other => return Err(body.unknown(other)),
        };
        if format != FORMAT {
            // Before format 6 a series followed, an `Option`: `Some` is a match stored
            // the old way, `None` a plain challenge.
            if body.is_some()? {
                return Ok(None);
            }
            if format != FORMAT_V5 {
                return Ok(Some(challenge));
            }
        }
        challenge.address = body.last()?;
        Ok(Some(challenge))
    }

    /// It as the caps on open invitations count it.
    pub(crate) fn counted(&self) -> Counted<'_> {
        Counted {
            id: &self.id,
            challenger: &self.challenger,
            opponents: &self.opponents,
            expires_ms: self.expires_ms,
        }
    }

    /// What an answer reads and changes of it.
    pub(crate) fn invitation(&mut self) -> Invitation<'_> {
        Invitation {
            challenger: &self.challenger,
            opponents: &mut self.opponents,
            status: &mut self.status,
            expires_ms: self.expires_ms,
            declined_by: &mut self.declined_by,
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
    pub opponents: Vec<Who>,
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
            id: ChallengeId::random(),
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
            address: Some(AddressKey::V4(0xC000_0201)),
        }
    }

    #[test]
    fn a_challenge_stored_in_formats_3_to_5_reads_back_and_is_saved_in_the_current_one() {
        let c = challenge();
        // Formats 3 to 5 were today's struct, then the series' tag (0: none), then in 5
        // the address.
        let mut v5 = postcard::to_extend(&c, vec![5]).unwrap();
        v5.push(0);
        let v5 = postcard::to_extend(&c.address, v5).unwrap();
        assert_eq!(Challenge::read(&v5).unwrap(), Some(c.clone()));
        let unaddressed = Challenge {
            address: None,
            ..challenge()
        };
        for format in [4, 3] {
            let mut bytes = postcard::to_extend(&unaddressed, vec![format]).unwrap();
            bytes.push(0);
            assert_eq!(Challenge::read(&bytes).unwrap(), Some(unaddressed.clone()));
        }
        assert_eq!(c.encode()[0], FORMAT);
        assert_eq!(Challenge::read(&c.encode()).unwrap(), Some(c));
    }

    #[test]
    fn a_record_with_a_series_or_in_a_match_format_is_read_as_no_challenge() {
        let c = challenge();
        // A series' tag 1: a match stored the old way (what follows is the match's).
        let mut old_match = postcard::to_extend(&c, vec![5]).unwrap();
        old_match.extend([1, 9, 9]);
        assert_eq!(Challenge::read(&old_match).unwrap(), None);
        assert_eq!(Challenge::read(&[MATCH_FORMATS, 1, 2]).unwrap(), None);
    }

    #[test]
    fn an_answer_again_changes_nothing_and_one_to_a_closed_invitation_is_refused() {
        let mut c = challenge();
        c.opponents.pop();
        assert!(c.invitation().answer(Answer::Accept, "b", 1_500).unwrap());
        assert_eq!(c.status, ChallengeStatus::Accepted);
        assert!(!c.invitation().answer(Answer::Accept, "b", 1_600).unwrap());
        assert!(matches!(
            c.invitation().answer(Answer::Decline, "b", 1_600),
            Err(Error::ChallengeClosed(_))
        ));
        assert!(matches!(
            c.invitation().answer(Answer::Cancel, "b", 1_600),
            Err(Error::Forbidden(_))
        ));
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
        assert_eq!(Challenge::read(&c.encode()).unwrap(), Some(c.clone()));
        let mut bytes = c.encode();
        bytes[0] = FORMAT + 1;
        assert!(Challenge::read(&bytes).is_err());
    }

    #[test]
    fn its_game_seats_levels_after_the_challenger_in_the_order_named() {
        let c = challenge();
        assert_eq!(c.new_game().bots, vec![(2, Level::Greedy)]);
        assert!(!c.all_accepted());
        assert_eq!(c.player_ids(), vec!["a".to_owned(), "b".to_owned()]);
    }
}
