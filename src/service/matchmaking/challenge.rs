//! A challenge as it is stored and as its players see it: its invitation (who challenged
//! whom, to which game, where it stands: [`super::invitation`], shared with a match's),
//! and the game it became. The use cases that change it are in [`super::challenges`].

use serde::{Deserialize, Serialize};

use super::invitation::{HeadV6, Invitation};
use crate::domain::{ChallengeId, GameId, Who};
use crate::engine::{Preset, RulesPatch};
use crate::service::Error;
use crate::service::codec;
use crate::service::games::clock::ClockSettings;

/// The challenge record's format byte, then postcard ([`Challenge`]: its id, its
/// invitation, its game). The readers of the formats before stay until a migration has
/// rewritten every record.
const FORMAT: u8 = 7;
/// Formats 6 to 3: [`HeadV6`] (the invitation's fields with the game among them), then in
/// 6 the address; in 5, 4 and 3 a match's series (its tag 0 in a plain challenge: a
/// record with a series is a match's, read by [`crate::service::matches`]), then (5 only)
/// the address.
const FORMAT_V6: u8 = 6;
const FORMAT_V5: u8 = 5;
const FORMAT_V4: u8 = 4;
const FORMAT_V3: u8 = 3;
/// A match is stored under a challenge's key (its id is one, and it is answered at the
/// challenge routes): format bytes from here on are its records', never a challenge's.
pub(crate) const MATCH_FORMATS: u8 = 128;

/// A challenge, as stored and as its players see it. Only the challenges change it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    id: ChallengeId,
    invitation: Invitation,
    /// The game it became, once accepted.
    game_id: Option<GameId>,
}

impl Challenge {
    /// A new one: `invitation` under `id`, no game yet.
    pub(super) fn new(id: ChallengeId, invitation: Invitation) -> Challenge {
        Challenge {
            id,
            invitation,
            game_id: None,
        }
    }

    pub fn id(&self) -> ChallengeId {
        self.id
    }

    /// Who challenged whom, to which game, and where it stands.
    pub fn invitation(&self) -> &Invitation {
        &self.invitation
    }

    pub(super) fn invitation_mut(&mut self) -> &mut Invitation {
        &mut self.invitation
    }

    /// The game it became, once accepted.
    pub fn game_id(&self) -> Option<GameId> {
        self.game_id
    }

    /// Names the game it becomes (`None`: none, its acceptance undone).
    pub(super) fn set_game(&mut self, game_id: Option<GameId>) {
        self.game_id = game_id;
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        codec::encode(FORMAT, self)
    }

    /// The challenge `bytes` hold, or `None` when they are a match's record (see
    /// [`MATCH_FORMATS`]).
    pub(crate) fn read(bytes: &[u8]) -> Result<Option<Challenge>, Error> {
        let (format, mut body) = codec::open("challenge", bytes)?;
        if format >= MATCH_FORMATS {
            return Ok(None);
        }
        let head: HeadV6<ChallengeId> = match format {
            FORMAT => return body.last().map(Some),
            FORMAT_V6 | FORMAT_V5 | FORMAT_V4 | FORMAT_V3 => body.next()?,
            other => return Err(body.unknown(other)),
        };
        // Before format 6 a series followed, an `Option`: `Some` is a match stored the
        // old way, `None` a plain challenge.
        if format != FORMAT_V6 && body.is_some()? {
            return Ok(None);
        }
        let address = match format {
            FORMAT_V6 | FORMAT_V5 => body.last()?,
            _ => None,
        };
        let (id, invitation, game_id) = head.invitation(address);
        Ok(Some(Challenge {
            id,
            invitation,
            game_id,
        }))
    }

    /// It as the caps on open invitations count it.
    pub(crate) fn counted(&self) -> super::invitation::Counted<'_> {
        self.invitation.counted(&self.id)
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
    use crate::service::matchmaking::invitation::tests::invitation;

    fn challenge() -> Challenge {
        Challenge::new(ChallengeId::random(), invitation())
    }

    #[test]
    fn a_challenge_stored_in_formats_3_to_6_reads_back_and_is_saved_in_the_current_one() {
        let c = Challenge {
            game_id: Some(GameId::random()),
            ..challenge()
        };
        let head = HeadV6::of(c.id, &c.invitation, c.game_id);
        let address = c.invitation.address();
        // Format 6: the head, then the address.
        let v6 = postcard::to_extend(&head, vec![6]).unwrap();
        let v6 = postcard::to_extend(&address, v6).unwrap();
        assert_eq!(Challenge::read(&v6).unwrap(), Some(c.clone()));
        // Formats 3 to 5: the head, then the series' tag (0: none), then in 5 the address.
        let mut v5 = postcard::to_extend(&head, vec![5]).unwrap();
        v5.push(0);
        let v5 = postcard::to_extend(&address, v5).unwrap();
        assert_eq!(Challenge::read(&v5).unwrap(), Some(c.clone()));
        let mut unaddressed = c.clone();
        unaddressed.invitation.set_address(None);
        for format in [4, 3] {
            let mut bytes = postcard::to_extend(&head, vec![format]).unwrap();
            bytes.push(0);
            assert_eq!(Challenge::read(&bytes).unwrap(), Some(unaddressed.clone()));
        }
        assert_eq!(c.encode()[0], FORMAT);
        assert_eq!(Challenge::read(&c.encode()).unwrap(), Some(c));
    }

    #[test]
    fn a_record_with_a_series_or_in_a_match_format_is_read_as_no_challenge() {
        let c = challenge();
        let head = HeadV6::of(c.id, &c.invitation, None);
        // A series' tag 1: a match stored the old way (what follows is the match's).
        let mut old_match = postcard::to_extend(&head, vec![5]).unwrap();
        old_match.extend([1, 9, 9]);
        assert_eq!(Challenge::read(&old_match).unwrap(), None);
        assert_eq!(Challenge::read(&[MATCH_FORMATS, 1, 2]).unwrap(), None);
    }

    #[test]
    fn a_challenge_reads_back_as_it_was_stored_and_another_format_is_refused() {
        let c = challenge();
        assert_eq!(Challenge::read(&c.encode()).unwrap(), Some(c.clone()));
        let mut bytes = c.encode();
        bytes[0] = FORMAT + 1;
        assert!(Challenge::read(&bytes).is_err());
    }
}
