//! What a request's path or body names, as the domain's types: the one place a
//! request's text becomes an id, a seat or a name ([`crate::domain`] owns what each may
//! hold). A refusal is the domain's [`Refusal`], answered as the service's error is.

use crate::domain::{
    ChallengeId, EntrantId, GameId, LeagueId, MatchId, PlayerName, Refusal, Seat, SeatName, SeekId,
    TournamentId, Who,
};

use super::{CreateChallenge, CreateMatch, CreatePlayer, JoinGame};

/// A game's path: the router parsed its UUID (any spelling; anything else names no
/// resource, before a handler runs).
pub fn game_id(path: uuid::Uuid) -> GameId {
    GameId::from(path)
}

/// A challenge's path. Text no server could have made names nothing: it is answered as
/// an unknown id is (404), before the key is looked at, as a game's path is.
pub fn challenge_id(path: &str) -> Result<ChallengeId, Refusal> {
    path.parse()
}

/// A seek's path.
pub fn seek_id(path: &str) -> Result<SeekId, Refusal> {
    path.parse()
}

/// A match's path.
pub fn match_id(path: &str) -> Result<MatchId, Refusal> {
    path.parse()
}

/// A league's path.
pub fn league_id(path: &str) -> Result<LeagueId, Refusal> {
    path.parse()
}

/// A tournament's path.
pub fn tournament_id(path: &str) -> Result<TournamentId, Refusal> {
    path.parse()
}

/// A tournament's entrant's path (`{player}`): a player's id or a level's entry's.
pub fn entrant_id(path: &str) -> Result<EntrantId, Refusal> {
    EntrantId::parse(path)
}

/// A player's path (`{who}`): an id, a name or a built-in level.
pub fn who(path: &str) -> Who {
    Who::parse(path)
}

impl JoinGame {
    /// The seat's name, if the body names one.
    pub fn seat_name(&self) -> Result<Option<SeatName>, Refusal> {
        self.name.as_deref().map(SeatName::parse).transpose()
    }

    /// The seat wanted, if any.
    pub fn seat_wanted(&self) -> Option<Seat> {
        self.seat.map(Seat::new)
    }
}

impl CreatePlayer {
    pub fn player_name(&self) -> Result<PlayerName, Refusal> {
        PlayerName::parse(&self.name)
    }
}

impl CreateChallenge {
    /// The opponents, in the body's order.
    pub fn opponents_named(&self) -> Vec<Who> {
        self.opponents.iter().map(|o| Who::parse(o)).collect()
    }
}

impl CreateMatch {
    pub fn opponent_named(&self) -> Who {
        Who::parse(&self.opponent)
    }
}
