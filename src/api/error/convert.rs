//! How the service's and the store's errors become problems: the one place a lower
//! layer's error is named in the HTTP layer.

use crate::api::wire::MoveBody;
use crate::service;
use crate::store::StoreError;

use super::*;

impl From<service::Error> for ApiError {
    fn from(e: service::Error) -> ApiError {
        use service::Error as E;
        match e {
            E::NotFound => ApiError::NotFound("no such game (or it expired)".into()),
            E::Unauthorized(why) => ApiError::Unauthorized(why.into()),
            E::NotYourTurn(why) => ApiError::NotYourTurn(why),
            E::VersionConflict { current } => ApiError::VersionConflict {
                current_version: current,
            },
            E::NotStarted => ApiError::GameNotStarted(e.to_string()),
            E::Finished => ApiError::GameFinished(e.to_string()),
            E::SeatTaken(why) => ApiError::SeatTaken(why),
            E::SeatAbandoned => ApiError::SeatAbandoned(e.to_string()),
            E::GameFull => ApiError::GameFull(e.to_string()),
            E::IllegalMove { message, legal } => ApiError::IllegalMove {
                detail: message,
                legal_moves: MoveBody::listed(&legal),
            },
            E::InvalidRules(why) => ApiError::InvalidRules(why),
            E::IdempotencyKeyReused => ApiError::IdempotencyKeyReused(e.to_string()),
            E::BadRequest(why) => ApiError::BadRequest(why),
            E::PlayerNotFound => ApiError::NotFound(e.to_string()),
            E::Forbidden(why) => ApiError::Forbidden(why),
            E::NameTaken(why) => ApiError::NameTaken(why),
            E::TooManyPlayers { max } => ApiError::Capped {
                code: ProblemCode::RateLimited,
                detail: format!(
                    "this address created {max} players in the last hour already \
                     (MAX_PLAYERS_PER_IP); try again later"
                ),
                retry_after_secs: PLAYERS_RETRY_AFTER_SECS,
            },
            E::NotFinished => ApiError::PreconditionFailed(
                "the export is available once the match is finished".into(),
            ),
            E::Store(store) => store.into(),
            E::Unsettled { cause, fate } => ApiError::StoreUnsettled {
                cause: cause.to_string(),
                outcome: fate.as_str(),
            },
            E::Internal(why) => ApiError::Internal(why),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Unavailable(cause) | StoreError::Unreplicated(cause) => {
                ApiError::StoreUnavailable(cause)
            }
            // Ids are random UUIDs: a clash is a bug, not something the client can fix.
            StoreError::Exists => {
                ApiError::Internal("store: a game with this id exists already".into())
            }
            StoreError::TooManyWaiting { max } => ApiError::Capped {
                code: ProblemCode::RateLimited,
                detail: format!(
                    "this address has {max} games waiting for players already \
                     (MAX_WAITING_PER_IP); one more can be created when one of them fills \
                     or expires"
                ),
                retry_after_secs: WAITING_RETRY_AFTER_SECS,
            },
            StoreError::TooManyGames { max } => ApiError::Capped {
                code: ProblemCode::RateLimited,
                detail: format!(
                    "this address has {max} games in play already, tables of bots alone \
                     included (MAX_GAMES_PER_IP); one more can be created when one of them \
                     finishes or expires"
                ),
                retry_after_secs: WAITING_RETRY_AFTER_SECS,
            },
            StoreError::Full { max } => ApiError::Capped {
                code: ProblemCode::StoreUnavailable,
                detail: format!(
                    "this server holds its maximum of {max} games (MEMORY_MAX_GAMES); \
                     try again once some have finished or expired"
                ),
                retry_after_secs: FULL_RETRY_AFTER_SECS,
            },
        }
    }
}
