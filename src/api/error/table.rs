//! The error table: every problem code with its status and title, written once, and which
//! service error answers with which code.
//!
//! Adding an error: its variant in [`service::Error`], its row in `problem_codes!` when
//! its code is new, and its arm in `From<service::Error>` below (the compiler asks for
//! the arm). The error table of `docs/api.md` (held to this one by `tests/api/docs.rs`) and
//! the OpenAPI document list the same codes.

use std::borrow::Cow;

use actix_web::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::wire::MoveBody;
use crate::service;

use super::{
    ApiError, CHALLENGES_RETRY_AFTER_SECS, PROBLEM_TYPE_BASE, STORE_RETRY_AFTER_SECS,
    WAITING_RETRY_AFTER_SECS,
};

/// One row a code: `Variant = STATUS, "wire_code", "title"`. The title is RFC 9457's: the
/// same for every occurrence of the code.
macro_rules! problem_codes {
    ($($name:ident = $status:ident, $wire:literal, $title:literal;)+) => {
        /// The machine-readable code of a problem.
        // `rename_all` rather than each row's wire code, which the schema derive cannot
        // read through the macro; a test checks that the two agree.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ProblemCode {
            $($name,)+
        }

        impl ProblemCode {
            /// Every code, in the table's order.
            pub const ALL: &[ProblemCode] = &[$(ProblemCode::$name),+];

            fn row(self) -> (StatusCode, &'static str, &'static str) {
                match self {
                    $(ProblemCode::$name => (StatusCode::$status, $wire, $title),)+
                }
            }
        }
    };
}

problem_codes! {
    BadRequest = BAD_REQUEST, "bad_request", "The request is malformed";
    Unauthorized = UNAUTHORIZED, "unauthorized", "A valid seat token or player key is required";
    Forbidden = FORBIDDEN, "forbidden", "The request is not allowed";
    NotFound = NOT_FOUND, "not_found", "No such resource";
    MethodNotAllowed = METHOD_NOT_ALLOWED, "method_not_allowed", "Method not allowed on this resource";
    RequestTimeout = REQUEST_TIMEOUT, "request_timeout", "The request body arrived too slowly";
    NotYourTurn = CONFLICT, "not_your_turn", "It is not your turn";
    VersionConflict = CONFLICT, "version_conflict", "The game has moved on";
    GameNotStarted = CONFLICT, "game_not_started", "The game has not started";
    GameFinished = CONFLICT, "game_finished", "The game is finished";
    SeatTaken = CONFLICT, "seat_taken", "The seat is taken";
    SeatAbandoned = CONFLICT, "seat_abandoned", "The seat was abandoned to a bot";
    GameFull = CONFLICT, "game_full", "Every seat is taken";
    NameTaken = CONFLICT, "name_taken", "The name is taken";
    ChallengeClosed = CONFLICT, "challenge_closed", "The challenge is closed";
    IdempotencyKeyInUse = CONFLICT, "idempotency_key_in_use", "A request with this idempotency key is under way";
    GameSealed = CONFLICT, "game_sealed", "The game's deal is still in play";
    TooManySeeks = CONFLICT, "too_many_seeks", "The player has its maximum of waiting seeks";
    TournamentClosed = CONFLICT, "tournament_closed", "The tournament's registration is over";
    AlreadyEntered = CONFLICT, "already_entered", "The player has entered the tournament already";
    TournamentFull = CONFLICT, "tournament_full", "The tournament has its maximum of players";
    LeagueFull = CONFLICT, "league_full", "The league has its maximum of entrants";
    PreconditionFailed = PRECONDITION_FAILED, "precondition_failed", "A precondition failed";
    PayloadTooLarge = PAYLOAD_TOO_LARGE, "payload_too_large", "The request body is too large";
    IllegalMove = UNPROCESSABLE_ENTITY, "illegal_move", "The move is not legal";
    InvalidRules = UNPROCESSABLE_ENTITY, "invalid_rules", "The rules are not valid";
    InvalidWebhook = UNPROCESSABLE_ENTITY, "invalid_webhook", "The webhook is not one the server calls";
    IdempotencyKeyReused = UNPROCESSABLE_ENTITY, "idempotency_key_reused", "The idempotency key was used for another request";
    RateLimited = TOO_MANY_REQUESTS, "rate_limited", "Too many requests";
    TooManyGames = TOO_MANY_REQUESTS, "too_many_games", "This address holds too many games";
    TooManyTournaments = TOO_MANY_REQUESTS, "too_many_tournaments", "The player is in its maximum of tournaments";
    TooManyLeagues = TOO_MANY_REQUESTS, "too_many_leagues", "The player made or entered its maximum of leagues";
    StoreUnavailable = SERVICE_UNAVAILABLE, "store_unavailable", "The game store is unavailable";
    InternalError = INTERNAL_SERVER_ERROR, "internal_error", "Internal error";
}

impl ProblemCode {
    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        self.row().1
    }

    /// A short summary that does not change between occurrences (RFC 9457 `title`).
    pub fn title(self) -> &'static str {
        self.row().2
    }

    pub fn status(self) -> StatusCode {
        self.row().0
    }

    /// The problem's `type` URI.
    pub fn type_uri(self) -> String {
        format!("{PROBLEM_TYPE_BASE}{}", self.as_str())
    }
}

/// A request's value the domain refused: answered as the service's error for it.
impl From<crate::domain::Refusal> for ApiError {
    fn from(refusal: crate::domain::Refusal) -> ApiError {
        service::Error::from(refusal).into()
    }
}

impl From<service::Error> for ApiError {
    fn from(e: service::Error) -> ApiError {
        use ProblemCode as C;
        use service::Error as E;
        // The service's own words, where they are the client's detail.
        let said: Cow<'static, str> = e.to_string().into();
        match e {
            E::NotFound => ApiError::new(C::NotFound, "no such game (or it expired)"),
            E::Unauthorized(why) => ApiError::new(C::Unauthorized, why),
            E::NotYourTurn(why) => ApiError::new(C::NotYourTurn, why),
            E::VersionConflict { current } => ApiError::version_conflict(current),
            E::NotStarted => ApiError::new(C::GameNotStarted, said),
            E::Finished => ApiError::new(C::GameFinished, said),
            E::SeatTaken(why) => ApiError::new(C::SeatTaken, why),
            E::SeatAbandoned => ApiError::new(C::SeatAbandoned, said),
            E::GameFull => ApiError::new(C::GameFull, said),
            E::IllegalMove { message, legal } => {
                ApiError::illegal_move(message, MoveBody::listed(&legal))
            }
            E::InvalidRules(why) => ApiError::new(C::InvalidRules, why),
            E::IdempotencyKeyReused => ApiError::new(C::IdempotencyKeyReused, said),
            E::KeyInFlight => ApiError::new(
                C::IdempotencyKeyInUse,
                "the first request with this Idempotency-Key is still being made; retry in \
                 a second with the same key",
            )
            .retry_after(STORE_RETRY_AFTER_SECS),
            E::BadRequest(why) => ApiError::new(C::BadRequest, why),
            E::PlayerNotFound
            | E::ChallengeNotFound
            | E::SeekNotFound
            | E::MatchNotFound
            | E::TournamentNotFound
            | E::EntrantNotFound
            | E::LeagueNotFound
            | E::WebhookNotFound => ApiError::new(C::NotFound, said),
            E::LeagueFull { max } => ApiError::new(
                C::LeagueFull,
                format!("the league has its {max} entrants (MAX_LEAGUE_ENTRANTS)"),
            ),
            // Not a rate: a league never ends, so waiting frees nothing; no Retry-After.
            E::TooManyLeagues { max } => ApiError::new(
                C::TooManyLeagues,
                format!(
                    "this player has made {max} leagues (MAX_LEAGUES_PER_PLAYER); a league \
                     never ends, so waiting frees nothing"
                ),
            ),
            E::TooManyLeaguesEntered { max } => ApiError::new(
                C::TooManyLeagues,
                format!(
                    "this player has entered {max} leagues (MAX_LEAGUES_ENTERED); it may \
                     enter another once it leaves one"
                ),
            ),
            E::InvalidWebhook(why) => ApiError::new(C::InvalidWebhook, why),
            E::TournamentClosed(why) => ApiError::new(C::TournamentClosed, why),
            E::AlreadyEntered(why) => ApiError::new(C::AlreadyEntered, why),
            E::TournamentFull { max } => ApiError::new(
                C::TournamentFull,
                format!("the tournament has its {max} players (max_players)"),
            ),
            // Not a rate: a place frees only when a tournament ends, so no Retry-After.
            E::TooManyTournaments { max } => ApiError::new(
                C::TooManyTournaments,
                format!(
                    "this player has made {max} tournaments that are registering or running \
                     (MAX_TOURNAMENTS_PER_PLAYER); one more can be made only when one of them \
                     finishes or is canceled, so waiting alone frees nothing"
                ),
            ),
            E::TooManyTournamentsJoined { max } => ApiError::new(
                C::TooManyTournaments,
                format!(
                    "this player has joined {max} tournaments that are registering or \
                     running (MAX_TOURNAMENTS_JOINED); it may join another only when one of \
                     them finishes or is canceled, or it withdraws from one, so waiting alone \
                     frees nothing"
                ),
            ),
            // Not a rate: waiting frees nothing, so no Retry-After.
            E::TooManySeeks { max } => ApiError::new(
                C::TooManySeeks,
                format!(
                    "this player has {max} waiting seeks already; one more can be made when \
                     one of them is matched, canceled or expired (`GET /v1/seeks` lists them)"
                ),
            ),
            E::TooManyMatches { max } => ApiError::new(
                C::RateLimited,
                format!(
                    "this player has {max} running matches already; one more can be made \
                     when one of them ends or is canceled"
                ),
            )
            .retry_after(CHALLENGES_RETRY_AFTER_SECS),
            E::OpponentNotFound(why) => ApiError::new(C::NotFound, why),
            E::ChallengeClosed(why) => ApiError::new(C::ChallengeClosed, why),
            E::TooManyChallenges { max } => ApiError::new(
                C::RateLimited,
                format!(
                    "this player has {max} open challenges already; one more can be made \
                     when one of them is answered, canceled or expired"
                ),
            )
            .retry_after(CHALLENGES_RETRY_AFTER_SECS),
            E::TooManyChallengesTo { name, max } => ApiError::new(
                C::RateLimited,
                format!(
                    "{name} has {max} open challenges to it already \
                     (MAX_CHALLENGES_TO_PLAYER); one more can be made when one of them is \
                     answered, canceled or expired"
                ),
            )
            .retry_after(CHALLENGES_RETRY_AFTER_SECS),
            E::Forbidden(why) => ApiError::new(C::Forbidden, why),
            E::NameTaken(why) => ApiError::new(C::NameTaken, why),
            E::TooManyPlayers { max, frees_in } => ApiError::new(
                C::RateLimited,
                format!(
                    "this address created {max} players in the last hour already \
                     (MAX_PLAYERS_PER_IP); one more can be created when the oldest of them \
                     is an hour old"
                ),
            )
            .retry_after_duration(frees_in),
            E::TooManyTournamentsMade { max, frees_in } => ApiError::new(
                C::RateLimited,
                format!(
                    "this address created {max} tournaments in the last hour already \
                     (MAX_TOURNAMENTS_PER_IP); one more can be created when the oldest of them \
                     is an hour old"
                ),
            )
            .retry_after_duration(frees_in),
            E::Sealed(why) => ApiError::new(C::GameSealed, why),
            E::NotFinished => ApiError::new(
                C::PreconditionFailed,
                "the export is available once the match is finished",
            ),
            E::TooManyWaiting { max } => ApiError::new(
                C::TooManyGames,
                format!(
                    "this address has {max} games waiting for players already \
                     (MAX_WAITING_PER_IP); one more can be created when one of them fills \
                     or expires"
                ),
            )
            .retry_after(WAITING_RETRY_AFTER_SECS),
            E::TooManyGames { max } => ApiError::new(
                C::TooManyGames,
                format!(
                    "this address has {max} games in play already, tables of bots alone \
                     included (MAX_GAMES_PER_IP); one more can be created when one of them \
                     finishes or expires"
                ),
            )
            .retry_after(WAITING_RETRY_AFTER_SECS),
            E::TooManyKept { max, frees_in } => ApiError::new(
                C::TooManyGames,
                format!(
                    "this address has made {max} games that are still kept, finished ones \
                     included (MAX_KEPT_GAMES_PER_IP); a finished game is kept \
                     GAME_IDLE_TTL_SECS after its last move, and the first of these expires \
                     in {} s",
                    whole_secs(frees_in)
                ),
            )
            .retry_after_duration(frees_in),
            // Finished games hold their room until they expire: room comes back then.
            E::StoreFull { max, frees_in } => ApiError::new(
                C::StoreUnavailable,
                format!(
                    "this server holds its maximum of {max} games (MEMORY_MAX_GAMES), kept \
                     until they expire, finished or not; the first of them expires in {} s",
                    whole_secs(frees_in)
                ),
            )
            .retry_after_duration(frees_in),
            E::StoreFullBytes { max, frees_in } => ApiError::new(
                C::StoreUnavailable,
                format!(
                    "this server holds its maximum of {max} bytes of games and tournaments \
                     (MEMORY_MAX_BYTES), kept until they expire, finished or not; the first \
                     game expires in {} s",
                    whole_secs(frees_in)
                ),
            )
            .retry_after_duration(frees_in),
            E::StoreUnavailable(cause) => ApiError::store_unavailable(cause),
            E::StoreNotReady(cause) => ApiError::store_not_ready(cause),
            E::Unsettled { cause, fate } => ApiError::unsettled(cause, fate),
            E::Internal(why) => ApiError::internal(why),
        }
    }
}

/// Whole seconds, rounded up, as `Retry-After` counts them.
fn whole_secs(d: std::time::Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}
