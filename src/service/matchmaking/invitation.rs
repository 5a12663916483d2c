//! An invitation: who invites whom, to which game, and where the answers stand. A
//! challenge and a match each hold one ([`super::challenge::Challenge`],
//! [`crate::service::matches::Match`]): they are answered at the same routes, by the same
//! rules and words, and counted by the same caps. Its fields are read through methods
//! and changed only by the answers and steps below, which the invitation's owner (the
//! challenges, or the matches) calls.

use serde::{Deserialize, Serialize};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::GameId;
use crate::engine::{Preset, RulesPatch};
use crate::service::Error;
use crate::service::games::admit::NewGame;
use crate::service::games::clock::ClockSettings;
use crate::service::shared::now_ms;

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

/// What a new invitation asks for, besides its players.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terms {
    pub(crate) preset: Preset,
    pub(crate) overrides: RulesPatch,
    pub(crate) seats: u8,
    pub(crate) clock: Option<ClockSettings>,
    pub(crate) rated: bool,
}

/// An invitation, as a challenge's or a match's record holds it (postcard: its fields in
/// this order, which a match's record of format 128 held inline after its id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invitation {
    /// Where it stands as last saved ([`Invitation::status_at`]: as of a moment).
    status: ChallengeStatus,
    /// Seat 0: the player who made it (and owns a match whose side a level plays).
    challenger: Party,
    /// Seats 1 and on, in order.
    opponents: Vec<Opponent>,
    preset: Preset,
    #[serde(with = "patch_as_json")]
    overrides: RulesPatch,
    seats: u8,
    clock: Option<ClockSettings>,
    rated: bool,
    created_ms: u64,
    /// When it expires unanswered.
    expires_ms: u64,
    /// The player who declined it.
    declined_by: Option<String>,
    /// The address whose games in play (`MAX_GAMES_PER_IP`) its games count against: a
    /// challenge's accepter's, from the answer that completed it (its maker's when levels
    /// accepted at once); a match's maker's.
    address: Option<AddressKey>,
}

/// An open invitation as its caps count it: a challenge's, or a match's.
pub(crate) struct Counted<'a> {
    pub(crate) id: &'a str,
    pub(crate) invitation: &'a Invitation,
}

impl Counted<'_> {
    pub(super) fn challenger(&self) -> &Party {
        &self.invitation.challenger
    }

    pub(super) fn opponent_ids(&self) -> Vec<String> {
        self.invitation.opponent_ids()
    }

    pub(super) fn expires_ms(&self) -> u64 {
        self.invitation.expires_ms
    }
}

impl Invitation {
    /// A new one from `challenger`, open from `created_ms` until `expires_ms`, its
    /// opponents yet to be added.
    pub(crate) fn new(challenger: Party, terms: Terms, created_ms: u64, expires_ms: u64) -> Self {
        Invitation {
            status: ChallengeStatus::Open,
            challenger,
            opponents: Vec::new(),
            preset: terms.preset,
            overrides: terms.overrides,
            seats: terms.seats,
            clock: terms.clock,
            rated: terms.rated,
            created_ms,
            expires_ms,
            declined_by: None,
            address: None,
        }
    }

    /// Its status at `now`: an open one past its expiry is expired, whether or not a
    /// sweep has said so yet.
    pub fn status_at(&self, now: u64) -> ChallengeStatus {
        self.status.at(self.expires_ms, now)
    }

    /// Its status now.
    pub fn status_now(&self) -> ChallengeStatus {
        self.status_at(now_ms())
    }

    /// Its status as last saved (an open one may have expired since).
    pub(crate) fn saved_status(&self) -> ChallengeStatus {
        self.status
    }

    pub fn challenger(&self) -> &Party {
        &self.challenger
    }

    pub fn opponents(&self) -> &[Opponent] {
        &self.opponents
    }

    pub fn preset(&self) -> Preset {
        self.preset
    }

    pub fn overrides(&self) -> &RulesPatch {
        &self.overrides
    }

    pub fn seats(&self) -> u8 {
        self.seats
    }

    pub fn clock(&self) -> Option<&ClockSettings> {
        self.clock.as_ref()
    }

    pub fn rated(&self) -> bool {
        self.rated
    }

    pub fn created_ms(&self) -> u64 {
        self.created_ms
    }

    pub fn expires_ms(&self) -> u64 {
        self.expires_ms
    }

    pub fn declined_by(&self) -> Option<&str> {
        self.declined_by.as_deref()
    }

    pub(crate) fn address(&self) -> Option<AddressKey> {
        self.address
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
        self.challenger.id == player
            || self
                .opponents
                .iter()
                .any(|o| o.player().is_some_and(|p| p.id == player))
    }

    pub(crate) fn all_accepted(&self) -> bool {
        self.opponents.iter().all(Opponent::accepted)
    }

    /// It as the caps on open invitations count it, under id `id`.
    pub(crate) fn counted<'a>(&'a self, id: &'a str) -> Counted<'a> {
        Counted {
            id,
            invitation: self,
        }
    }

    /// The game it asks for, its levels at the seats after the challenger's in order, its
    /// seats as yet unbound.
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

    /// Seats `opponent` next.
    pub(crate) fn add_opponent(&mut self, opponent: Opponent) {
        self.opponents.push(opponent);
    }

    /// Marks it accepted at once, unanswered: its opponents are levels, or a league's
    /// entrants (who entered to be paired).
    pub(crate) fn accept_at_once(&mut self) {
        self.status = ChallengeStatus::Accepted;
    }

    /// Counts its games against `address`.
    pub(crate) fn set_address(&mut self, address: Option<AddressKey>) {
        self.address = address;
    }

    /// Marks it expired if it was saved open and is past its expiry at `now`: whether it
    /// changed.
    pub(crate) fn expire(&mut self, now: u64) -> bool {
        let expired =
            self.status == ChallengeStatus::Open && self.status_at(now) == ChallengeStatus::Expired;
        if expired {
            self.status = ChallengeStatus::Expired;
        }
        expired
    }

    /// Undoes the acceptance by `by` that made it accepted: open again (until its expiry,
    /// as before), its address forgotten.
    pub(crate) fn reopen(&mut self, by: &str) {
        self.status = ChallengeStatus::Open;
        self.address = None;
        for opponent in &mut self.opponents {
            if let Opponent::Player { party, accepted } = opponent
                && party.id == by
            {
                *accepted = false;
            }
        }
    }

    /// Applies `answer` by player `me` at `now`: whether it changed anything (the same
    /// answer again changes nothing, so a retry is harmless), or why it is refused.
    pub(crate) fn answer(&mut self, answer: Answer, me: &str, now: u64) -> Result<bool, Error> {
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
        let status = self.status_at(now);
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
                if self.all_accepted() {
                    self.status = ChallengeStatus::Accepted;
                }
            }
            Answer::Decline => {
                self.status = ChallengeStatus::Declined;
                self.declined_by = Some(me.to_owned());
            }
            Answer::Cancel => self.status = ChallengeStatus::Canceled,
        }
        Ok(true)
    }
}

/// The head of a challenge record of formats 3 to 6 (and of a match stored as one): the
/// id, the invitation's fields with the challenge's game between the expiry and who
/// declined, and no address (stored after, in some of those formats).
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
pub(crate) struct HeadV6<Id> {
    pub(crate) id: Id,
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
    pub(crate) game_id: Option<GameId>,
    declined_by: Option<String>,
}

impl<Id> HeadV6<Id> {
    /// Its invitation, counted against `address`.
    pub(crate) fn invitation(
        self,
        address: Option<AddressKey>,
    ) -> (Id, Invitation, Option<GameId>) {
        let invitation = Invitation {
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
        };
        (self.id, invitation, self.game_id)
    }

    /// `invitation` under `id` as formats 3 to 6 held it (written by the tests of the
    /// readers).
    #[cfg(test)]
    pub(crate) fn of(id: Id, invitation: &Invitation, game_id: Option<GameId>) -> HeadV6<Id> {
        let i = invitation.clone();
        HeadV6 {
            id,
            status: i.status,
            challenger: i.challenger,
            opponents: i.opponents,
            preset: i.preset,
            overrides: i.overrides,
            seats: i.seats,
            clock: i.clock,
            rated: i.rated,
            created_ms: i.created_ms,
            expires_ms: i.expires_ms,
            game_id,
            declined_by: i.declined_by,
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An open invitation from `a` (ann) to `b` (bob) and a level, at 3 seats.
    pub(crate) fn invitation() -> Invitation {
        let terms = Terms {
            preset: Preset::Draw,
            overrides: RulesPatch {
                target: Some(None),
                rounds: Some(Some(3)),
                ..RulesPatch::default()
            },
            seats: 3,
            clock: None,
            rated: false,
        };
        let ann = Party {
            id: "a".into(),
            name: "ann".into(),
        };
        let mut i = Invitation::new(ann, terms, 1_000, 2_000);
        i.add_opponent(Opponent::Player {
            party: Party {
                id: "b".into(),
                name: "bob".into(),
            },
            accepted: false,
        });
        i.add_opponent(Opponent::Level(Level::Greedy));
        i.set_address(Some(AddressKey::V4(0xC000_0201)));
        i
    }

    #[test]
    fn an_answer_again_changes_nothing_and_one_to_a_closed_invitation_is_refused() {
        let mut i = invitation();
        i.opponents.pop();
        assert!(i.answer(Answer::Accept, "b", 1_500).unwrap());
        assert_eq!(i.status, ChallengeStatus::Accepted);
        assert!(!i.answer(Answer::Accept, "b", 1_600).unwrap());
        assert!(matches!(
            i.answer(Answer::Decline, "b", 1_600),
            Err(Error::ChallengeClosed(_))
        ));
        assert!(matches!(
            i.answer(Answer::Cancel, "b", 1_600),
            Err(Error::Forbidden(_))
        ));
    }

    #[test]
    fn an_open_invitation_is_expired_from_its_expiry_on_and_a_closed_one_stays_as_it_is() {
        let mut i = invitation();
        assert_eq!(i.status_at(1_999), ChallengeStatus::Open);
        assert_eq!(i.status_at(2_000), ChallengeStatus::Expired);
        assert!(!i.expire(1_999) && i.expire(2_000));
        assert_eq!(i.saved_status(), ChallengeStatus::Expired);
        i.status = ChallengeStatus::Declined;
        assert_eq!(i.status_at(5_000), ChallengeStatus::Declined);
        assert!(!i.expire(5_000));
    }

    #[test]
    fn its_game_seats_levels_after_the_challenger_in_the_order_named() {
        let i = invitation();
        assert_eq!(i.new_game().bots, vec![(2, Level::Greedy)]);
        assert!(!i.all_accepted());
        assert_eq!(i.player_ids(), vec!["a".to_owned(), "b".to_owned()]);
        assert!(i.has_player("b") && !i.has_player("c"));
    }

    #[test]
    fn an_acceptance_undone_leaves_it_open_without_an_address() {
        let mut i = invitation();
        i.opponents.pop();
        assert!(i.answer(Answer::Accept, "b", 1_500).unwrap());
        i.reopen("b");
        assert_eq!(i.status_at(1_500), ChallengeStatus::Open);
        assert!(!i.all_accepted() && i.address().is_none());
    }
}
