//! The service's one error type, in domain words, and what became of a change the store
//! did not answer for. The API's error table maps each variant to its problem; nothing here
//! knows HTTP.

use std::time::Duration;

use crate::domain::{Kind, Refusal};
use crate::engine::{LegalMove, RulesError};
use crate::store::StoreError;

/// What went wrong, in domain words; the API maps each to its problem code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no such game")]
    NotFound,
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    NotYourTurn(String),
    #[error("the game is at version {current}")]
    VersionConflict { current: u64 },
    #[error("the game has not started: seats are still free")]
    NotStarted,
    #[error("the match is over")]
    Finished,
    #[error("{0}")]
    SeatTaken(String),
    #[error("this seat was abandoned to a bot: it may still read the game, not move")]
    SeatAbandoned,
    #[error("every seat is taken")]
    GameFull,
    #[error("{message}")]
    IllegalMove {
        message: String,
        legal: Vec<LegalMove>,
    },
    #[error("{0}")]
    InvalidRules(String),
    #[error("this Idempotency-Key was used with another request")]
    IdempotencyKeyReused,
    /// A create's key whose first request is still making what it asked for.
    #[error("the first request with this Idempotency-Key is still being made")]
    KeyInFlight,
    #[error("{0}")]
    BadRequest(String),
    #[error("no such player")]
    PlayerNotFound,
    #[error("{0}")]
    OpponentNotFound(String),
    #[error("no such challenge (or it is no longer kept)")]
    ChallengeNotFound,
    #[error("{0}")]
    ChallengeClosed(String),
    #[error("this player has {max} open challenges already")]
    TooManyChallenges { max: usize },
    #[error("{name} has {max} open challenges to it already")]
    TooManyChallengesTo { name: String, max: usize },
    #[error("no such seek (or it is no longer kept)")]
    SeekNotFound,
    #[error("no such match (or it is no longer kept)")]
    MatchNotFound,
    #[error("this player has {max} waiting seeks already")]
    TooManySeeks { max: usize },
    #[error("this player has {max} running matches already")]
    TooManyMatches { max: usize },
    #[error("no such tournament")]
    TournamentNotFound,
    /// Its registration is over (started, finished or canceled).
    #[error("{0}")]
    TournamentClosed(String),
    #[error("{0}")]
    AlreadyEntered(String),
    #[error("the tournament has its {max} players")]
    TournamentFull { max: usize },
    #[error("this player has {max} tournaments registering or running already")]
    TooManyTournaments { max: usize },
    #[error("this player has joined {max} tournaments registering or running already")]
    TooManyTournamentsJoined { max: usize },
    /// The address created `max` tournaments in the last hour already; the window frees
    /// in `frees_in`.
    #[error("this address created {max} tournaments in the last hour already")]
    TooManyTournamentsMade {
        max: usize,
        frees_in: std::time::Duration,
    },
    #[error("no such entrant in this tournament")]
    EntrantNotFound,
    #[error("no such league")]
    LeagueNotFound,
    #[error("the league has its {max} entrants")]
    LeagueFull { max: usize },
    #[error("this player has made {max} leagues already")]
    TooManyLeagues { max: usize },
    #[error("this player has entered {max} leagues already")]
    TooManyLeaguesEntered { max: usize },
    /// A webhook the server will not call: a URL it refuses, or a failed ping.
    #[error("{0}")]
    InvalidWebhook(String),
    #[error("this player has no webhook")]
    WebhookNotFound,
    /// A valid key acting on what is not its player's.
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NameTaken(String),
    /// The address created `max` players in the last hour already; the window frees in
    /// `frees_in`.
    #[error("this address created {max} players in the last hour already")]
    TooManyPlayers {
        max: usize,
        frees_in: std::time::Duration,
    },
    #[error("the game is not finished: the export reveals every hand")]
    NotFinished,
    /// A game of a duplicate deal whose twin is still in play: withheld from all but its
    /// own seats, its export from everyone.
    #[error("{0}")]
    Sealed(String),
    /// The store did not answer in time; the cause is for the logs only.
    #[error("{0}")]
    StoreUnavailable(String),
    /// The store does not answer a ping, or says it cannot serve (`/readyz`).
    #[error("the game store is not ready: {0}")]
    StoreNotReady(String),
    /// The creator has `max` games waiting for players already; nothing was created.
    #[error("this creator has {max} games waiting for players already")]
    TooManyWaiting { max: usize },
    /// The creator has `max` games in play already; nothing was created.
    #[error("this creator has {max} games in play already")]
    TooManyGames { max: usize },
    /// The creator has `max` games kept already, finished ones included; nothing was
    /// created. The first of them expires in `frees_in`.
    #[error("this creator has {max} games kept already")]
    TooManyKept { max: usize, frees_in: Duration },
    /// The store holds as many games as it may (`max`); nothing was created.
    #[error("the store holds its maximum of {max} games")]
    StoreFull { max: usize, frees_in: Duration },
    #[error("the store holds its maximum of {max} bytes of games")]
    StoreFullBytes { max: usize, frees_in: Duration },
    /// A save got no answer from the store, and looking afterwards told `fate`.
    #[error("{cause} (the change was {})", fate.as_str())]
    Unsettled { cause: String, fate: Fate },
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// Whether a game was refused outright (an address's cap, a full store), nothing made:
    /// what asked for it must not wait for it nor try again by itself.
    pub(crate) fn refuses_a_game(&self) -> bool {
        matches!(
            self,
            Error::TooManyGames { .. }
                | Error::TooManyWaiting { .. }
                | Error::TooManyKept { .. }
                | Error::StoreFull { .. }
                | Error::StoreFullBytes { .. }
        )
    }
}

/// What became of a change the store did not answer for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It was stored, and acknowledged as the store must (the caller answers as for any
    /// success).
    Applied,
    /// It was not: the game was read after the save on the same connection (Redis answers
    /// a connection in order) at the version the save expected, or past it by another
    /// change. Retrying makes it once.
    NotApplied,
    /// The store did not say: retry only with the same `Idempotency-Key` or with
    /// `expected_version`, so that it is made at most once.
    Unknown,
}

impl Fate {
    /// The problem's `outcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            Fate::Applied => "applied",
            Fate::NotApplied => "not_applied",
            Fate::Unknown => "unknown",
        }
    }
}

/// The store's errors in the service's words: the API never sees a `StoreError`.
impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        match e {
            StoreError::Unavailable(_) | StoreError::Unreplicated(_) => {
                Error::StoreUnavailable(e.to_string())
            }
            // Ids are random UUIDs: a clash is a bug, not something the client can fix.
            StoreError::Exists => Error::Internal(format!("store: {e}")),
            StoreError::TooManyWaiting { max } => Error::TooManyWaiting { max },
            StoreError::TooManyGames { max } => Error::TooManyGames { max },
            StoreError::TooManyKept { max, frees_in } => Error::TooManyKept { max, frees_in },
            StoreError::Full { max, frees_in } => Error::StoreFull { max, frees_in },
            StoreError::FullBytes { max, frees_in } => Error::StoreFullBytes { max, frees_in },
        }
    }
}

impl From<RulesError> for Error {
    fn from(e: RulesError) -> Error {
        Error::InvalidRules(e.to_string())
    }
}

/// A request's value the domain refused, as the answer it has always had: a malformed
/// value is a bad request naming its field, a reserved name is taken, and an id no
/// server could have made names nothing.
impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Error {
        match refusal {
            Refusal::Malformed(why) => Error::BadRequest(why),
            Refusal::Reserved(why) => Error::NameTaken(why),
            Refusal::NoSuch(Kind::Challenge) => Error::ChallengeNotFound,
            Refusal::NoSuch(Kind::Seek) => Error::SeekNotFound,
            Refusal::NoSuch(Kind::Match) => Error::MatchNotFound,
            Refusal::NoSuch(Kind::Tournament) => Error::TournamentNotFound,
            Refusal::NoSuch(Kind::League) => Error::LeagueNotFound,
            Refusal::NoSuch(Kind::Entrant) => Error::EntrantNotFound,
        }
    }
}
