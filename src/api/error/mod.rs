//! The one error type of the HTTP layer, and its wire form: RFC 9457 problem details.
//!
//! Every refused request answers `application/problem+json` with
//! `{type, title, status, detail, code}` (plus `current_version` or `legal_moves` where the
//! contract says so). `code` is the machine-readable part clients branch on; it is one of
//! the codes of the contract's error table (README, the OpenAPI document), plus three the table leaves implicit: `method_not_allowed`
//! (405), `request_timeout` (408: the body did not arrive within `BODY_TIMEOUT_MS`; the
//! connection is closed after it) and `internal_error` (500).
//!
//! `type` is `https://domino.example/problems/<code>`: one URI per code, as RFC 9457 asks
//! when a problem has its own semantics and extension members (so not `about:blank`).
//! The URIs are identifiers; clients must not expect to dereference them (RFC 9457
//! §3.1.1), and they never change once published.
//!
//! An answer never carries internal details: store errors and internal errors keep their
//! cause in the `Display` form, which only reaches the logs (the request middleware logs
//! every 5xx with it), while the body says something generic.
//!
//! Also here: the extractor error handlers (JSON body, query string, path) and a
//! middleware that turns the few bare errors actix produces by itself (405 from a
//! resource, 413 from a raw payload, 404 from a static file service) into problems, so
//! that "every error is problem+json" holds by construction rather than by care.

use std::borrow::Cow;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{
    InternalError, JsonPayloadError, PathError, PayloadError, QueryPayloadError,
};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::wire::MoveBody;

/// The media type of every error answer.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Prefix of every problem's `type` URI; the code follows.
pub const PROBLEM_TYPE_BASE: &str = "https://domino.example/problems/";

/// Seconds a client should wait before retrying when the store is unavailable: long
/// enough for a Redis failover's reconnect, short enough that a player barely notices.
pub const STORE_RETRY_AFTER_SECS: u32 = 1;

/// Seconds before creating again when an address has its cap of waiting games: a game
/// fills when players join it, which takes a while.
pub const WAITING_RETRY_AFTER_SECS: u32 = 30;
/// Seconds before creating a player again when an address has created its cap in the
/// hour: a while, not the whole hour (the window may be nearly over).
pub const PLAYERS_RETRY_AFTER_SECS: u32 = 60;
/// Seconds before creating again when the memory store is full: games leave it as they
/// expire.
pub const FULL_RETRY_AFTER_SECS: u32 = 60;

/// Why a request was refused. Handlers and the service return this; actix turns it into
/// the problem+json answer.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    /// A valid key acting on what is not its own.
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("name taken: {0}")]
    NameTaken(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("not your turn: {0}")]
    NotYourTurn(String),
    #[error("version conflict: the game is at version {current_version}")]
    VersionConflict { current_version: u64 },
    #[error("game not started: {0}")]
    GameNotStarted(String),
    #[error("game finished: {0}")]
    GameFinished(String),
    #[error("seat taken: {0}")]
    SeatTaken(String),
    #[error("seat abandoned: {0}")]
    SeatAbandoned(String),
    #[error("game full: {0}")]
    GameFull(String),
    #[error("precondition failed: {0}")]
    PreconditionFailed(String),
    /// `limit` is `None` when the refusal came from somewhere that does not know it.
    #[error("payload too large (limit {limit:?} bytes)")]
    PayloadTooLarge { limit: Option<usize> },
    #[error("illegal move: {detail}")]
    IllegalMove {
        detail: String,
        legal_moves: Vec<MoveBody>,
    },
    #[error("invalid rules: {0}")]
    InvalidRules(String),
    #[error("idempotency key reused: {0}")]
    IdempotencyKeyReused(String),
    #[error("rate limited (retry after {retry_after_secs} s)")]
    RateLimited { retry_after_secs: u32 },
    /// A stream cap ([`crate::api::streams`]) refused an event stream or long poll:
    /// `rate_limited`, with a detail naming the cap.
    #[error("too many streams: {detail}")]
    TooManyStreams {
        detail: String,
        retry_after_secs: u32,
    },
    /// The body did not arrive within `BODY_TIMEOUT_MS` (`limit_ms`).
    #[error("request timeout: the body took over {limit_ms} ms")]
    RequestTimeout { limit_ms: u64 },
    /// The cause is for the logs only.
    #[error("store unavailable: {0}")]
    StoreUnavailable(String),
    /// `/readyz` only: the store does not answer, or says it cannot serve (a cluster whose
    /// state is `fail`). The cause is the detail: readiness is for operators.
    #[error("store not ready: {0}")]
    StoreNotReady(String),
    /// A change the store did not answer for: `outcome` says whether it was made
    /// (`not_applied`, `unknown`). The cause is for the logs only.
    #[error("store unavailable ({outcome}): {cause}")]
    StoreUnsettled {
        cause: String,
        outcome: &'static str,
    },
    /// A cap on what one server or address may hold (a 429 `rate_limited` or a 503
    /// `store_unavailable`), with what was capped in `detail`.
    #[error("{detail}")]
    Capped {
        code: ProblemCode,
        detail: String,
        retry_after_secs: u32,
    },
    /// The cause is for the logs only.
    #[error("internal error: {0}")]
    Internal(String),
}

/// The machine-readable code of a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProblemCode {
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    NotYourTurn,
    VersionConflict,
    GameNotStarted,
    GameFinished,
    SeatTaken,
    SeatAbandoned,
    GameFull,
    NameTaken,
    PreconditionFailed,
    PayloadTooLarge,
    IllegalMove,
    InvalidRules,
    IdempotencyKeyReused,
    RateLimited,
    StoreUnavailable,
    InternalError,
}

impl ProblemCode {
    /// The code as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        use ProblemCode::*;
        match self {
            BadRequest => "bad_request",
            Unauthorized => "unauthorized",
            Forbidden => "forbidden",
            NotFound => "not_found",
            MethodNotAllowed => "method_not_allowed",
            RequestTimeout => "request_timeout",
            NotYourTurn => "not_your_turn",
            VersionConflict => "version_conflict",
            GameNotStarted => "game_not_started",
            GameFinished => "game_finished",
            SeatTaken => "seat_taken",
            SeatAbandoned => "seat_abandoned",
            GameFull => "game_full",
            NameTaken => "name_taken",
            PreconditionFailed => "precondition_failed",
            PayloadTooLarge => "payload_too_large",
            IllegalMove => "illegal_move",
            InvalidRules => "invalid_rules",
            IdempotencyKeyReused => "idempotency_key_reused",
            RateLimited => "rate_limited",
            StoreUnavailable => "store_unavailable",
            InternalError => "internal_error",
        }
    }

    /// A short summary that does not change between occurrences (RFC 9457 `title`).
    pub fn title(self) -> &'static str {
        use ProblemCode::*;
        match self {
            BadRequest => "The request is malformed",
            Unauthorized => "A valid seat token is required",
            Forbidden => "Not yours to act on",
            NotFound => "No such resource",
            MethodNotAllowed => "Method not allowed on this resource",
            RequestTimeout => "The request body arrived too slowly",
            NotYourTurn => "It is not your turn",
            VersionConflict => "The game has moved on",
            GameNotStarted => "The game has not started",
            GameFinished => "The game is finished",
            SeatTaken => "The seat is taken",
            SeatAbandoned => "The seat was abandoned to a bot",
            GameFull => "Every seat is taken",
            NameTaken => "The name is taken",
            PreconditionFailed => "A precondition failed",
            PayloadTooLarge => "The request body is too large",
            IllegalMove => "The move is not legal",
            InvalidRules => "The rules are not valid",
            IdempotencyKeyReused => "The idempotency key was used for another request",
            RateLimited => "Too many requests",
            StoreUnavailable => "The game store is unavailable",
            InternalError => "Internal error",
        }
    }

    pub fn status(self) -> StatusCode {
        use ProblemCode::*;
        match self {
            BadRequest => StatusCode::BAD_REQUEST,
            Unauthorized => StatusCode::UNAUTHORIZED,
            Forbidden => StatusCode::FORBIDDEN,
            NotFound => StatusCode::NOT_FOUND,
            MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            NotYourTurn | VersionConflict | GameNotStarted | GameFinished | SeatTaken
            | SeatAbandoned | GameFull | NameTaken => StatusCode::CONFLICT,
            PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            IllegalMove | InvalidRules | IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            RateLimited => StatusCode::TOO_MANY_REQUESTS,
            StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The problem's `type` URI.
    pub fn type_uri(self) -> String {
        format!("{PROBLEM_TYPE_BASE}{}", self.as_str())
    }
}

/// An RFC 9457 problem: the body of every error answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(
    description = "RFC 9457 problem details: the body of every error answer \
    (`Content-Type: application/problem+json`). Branch on `code`, not on `title` or `detail`."
)]
pub struct Problem {
    /// A URI identifying the kind of problem: `https://domino.example/problems/<code>`.
    #[serde(rename = "type")]
    #[schema(format = "uri", example = "https://domino.example/problems/not_found")]
    pub type_uri: String,
    /// A short summary that is the same for every occurrence of this code.
    pub title: String,
    /// The HTTP status code of the answer.
    #[schema(minimum = 400, maximum = 599)]
    pub status: u16,
    /// What went wrong with this request, for humans.
    pub detail: String,
    pub code: ProblemCode,
    /// With `version_conflict`: the game's version now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<u64>,
    /// With `illegal_move`: every move the seat may make now, in request body form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_moves: Option<Vec<MoveBody>>,
    /// With `store_unavailable` after a change the store did not answer for: whether it
    /// was made. `not_applied`: retrying makes it once. `unknown`: retry only with the same
    /// `Idempotency-Key` or with `expected_version`, which make it at most once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "unknown")]
    pub outcome: Option<String>,
}

impl ApiError {
    pub fn code(&self) -> ProblemCode {
        use ApiError as E;
        match self {
            E::BadRequest(_) => ProblemCode::BadRequest,
            E::Unauthorized(_) => ProblemCode::Unauthorized,
            E::Forbidden(_) => ProblemCode::Forbidden,
            E::NameTaken(_) => ProblemCode::NameTaken,
            E::NotFound(_) => ProblemCode::NotFound,
            E::MethodNotAllowed => ProblemCode::MethodNotAllowed,
            E::NotYourTurn(_) => ProblemCode::NotYourTurn,
            E::VersionConflict { .. } => ProblemCode::VersionConflict,
            E::GameNotStarted(_) => ProblemCode::GameNotStarted,
            E::GameFinished(_) => ProblemCode::GameFinished,
            E::SeatTaken(_) => ProblemCode::SeatTaken,
            E::SeatAbandoned(_) => ProblemCode::SeatAbandoned,
            E::GameFull(_) => ProblemCode::GameFull,
            E::PreconditionFailed(_) => ProblemCode::PreconditionFailed,
            E::PayloadTooLarge { .. } => ProblemCode::PayloadTooLarge,
            E::IllegalMove { .. } => ProblemCode::IllegalMove,
            E::InvalidRules(_) => ProblemCode::InvalidRules,
            E::IdempotencyKeyReused(_) => ProblemCode::IdempotencyKeyReused,
            E::RateLimited { .. } | E::TooManyStreams { .. } => ProblemCode::RateLimited,
            E::RequestTimeout { .. } => ProblemCode::RequestTimeout,
            E::StoreUnavailable(_) | E::StoreNotReady(_) | E::StoreUnsettled { .. } => {
                ProblemCode::StoreUnavailable
            }
            E::Capped { code, .. } => *code,
            E::Internal(_) => ProblemCode::InternalError,
        }
    }

    /// The text a client sees. Never includes the cause of a 5xx.
    fn detail(&self) -> Cow<'_, str> {
        use ApiError as E;
        match self {
            E::BadRequest(d)
            | E::Unauthorized(d)
            | E::Forbidden(d)
            | E::NameTaken(d)
            | E::NotFound(d)
            | E::NotYourTurn(d)
            | E::GameNotStarted(d)
            | E::GameFinished(d)
            | E::SeatTaken(d)
            | E::SeatAbandoned(d)
            | E::GameFull(d)
            | E::PreconditionFailed(d)
            | E::InvalidRules(d)
            | E::IdempotencyKeyReused(d)
            | E::TooManyStreams { detail: d, .. }
            | E::IllegalMove { detail: d, .. }
            | E::Capped { detail: d, .. } => Cow::Borrowed(d),
            E::MethodNotAllowed => {
                "this resource does not answer that method; see the Allow header".into()
            }
            E::VersionConflict { current_version } => {
                format!("the game is at version {current_version}; fetch it and decide again")
                    .into()
            }
            E::PayloadTooLarge { limit: Some(limit) } => {
                format!("the body is larger than the {limit} bytes this server accepts").into()
            }
            E::PayloadTooLarge { limit: None } => {
                "the body is larger than this server accepts".into()
            }
            E::RateLimited { retry_after_secs } => {
                format!("too many requests; retry in {retry_after_secs} s").into()
            }
            E::RequestTimeout { limit_ms } => {
                format!("the body did not arrive within {limit_ms} ms; the connection is closed")
                    .into()
            }
            E::StoreUnavailable(_) => {
                format!("the game store did not answer; retry in {STORE_RETRY_AFTER_SECS} s").into()
            }
            E::StoreNotReady(cause) => format!("the game store is not ready: {cause}").into(),
            E::StoreUnsettled { outcome, .. } if *outcome == "not_applied" => format!(
                "the game store did not answer in time and the change was not made; \
                 retry in {STORE_RETRY_AFTER_SECS} s"
            )
            .into(),
            E::StoreUnsettled { .. } => format!(
                "the game store could not confirm the change in time: it may or may not have \
                 been made; retry in {STORE_RETRY_AFTER_SECS} s with the same Idempotency-Key, or \
                 with expected_version, so that it is made at most once"
            )
            .into(),
            E::Internal(_) => {
                "something went wrong on our side; the request changed nothing".into()
            }
        }
    }

    /// The body of the answer.
    pub fn problem(&self) -> Problem {
        let code = self.code();
        Problem {
            type_uri: code.type_uri(),
            title: code.title().to_owned(),
            status: code.status().as_u16(),
            detail: self.detail().into_owned(),
            code,
            current_version: match self {
                ApiError::VersionConflict { current_version } => Some(*current_version),
                _ => None,
            },
            legal_moves: match self {
                ApiError::IllegalMove { legal_moves, .. } => Some(legal_moves.clone()),
                _ => None,
            },
            outcome: match self {
                ApiError::StoreUnsettled { outcome, .. } => Some((*outcome).to_owned()),
                _ => None,
            },
        }
    }

    fn retry_after_secs(&self) -> Option<u32> {
        match self {
            ApiError::RateLimited { retry_after_secs }
            | ApiError::TooManyStreams {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            ApiError::StoreUnavailable(_)
            | ApiError::StoreNotReady(_)
            | ApiError::StoreUnsettled { .. } => Some(STORE_RETRY_AFTER_SECS),
            ApiError::Capped {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The generic problem for a bare status produced outside our handlers.
    pub fn from_status(status: StatusCode) -> ApiError {
        match status {
            StatusCode::UNAUTHORIZED => {
                ApiError::Unauthorized("a valid seat token is required".into())
            }
            StatusCode::NOT_FOUND => ApiError::NotFound("no such resource".into()),
            StatusCode::METHOD_NOT_ALLOWED => ApiError::MethodNotAllowed,
            // From `Compress`: no problem code of its own, and a client that refuses
            // every coding this server has sent a request it cannot be answered.
            StatusCode::NOT_ACCEPTABLE => ApiError::BadRequest(
                "Accept-Encoding rules out every coding this server has (identity, gzip, deflate, br, zstd)".into(),
            ),
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge { limit: None },
            s if s.is_server_error() => ApiError::Internal(format!("bare {s} answer")),
            _ => ApiError::BadRequest("the request is malformed".into()),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code().status()
    }

    fn error_response(&self) -> HttpResponse<BoxBody> {
        let mut answer = HttpResponse::build(self.status_code());
        answer.insert_header((header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON)));
        if let Some(secs) = self.retry_after_secs() {
            answer.insert_header((header::RETRY_AFTER, secs));
        }
        // Serialising a struct of strings and numbers cannot fail; the fallback keeps
        // the answer well-formed anyway rather than panicking in an error path.
        let body = serde_json::to_vec(&self.problem()).unwrap_or_else(|_| {
            br#"{"type":"about:blank","title":"Internal error","status":500,"detail":"","code":"internal_error"}"#
                .to_vec()
        });
        answer.body(body)
    }
}

/// Refusals of a JSON body: malformed, unknown field, wrong type, not JSON, too large.
pub fn json_error(err: JsonPayloadError, _req: &HttpRequest) -> actix_web::Error {
    let api = match err {
        JsonPayloadError::OverflowKnownLength { limit, .. }
        | JsonPayloadError::Overflow { limit } => ApiError::PayloadTooLarge { limit: Some(limit) },
        JsonPayloadError::Payload(PayloadError::Overflow) => {
            ApiError::PayloadTooLarge { limit: None }
        }
        JsonPayloadError::ContentType => ApiError::BadRequest(
            "the body must be JSON, sent with Content-Type: application/json".into(),
        ),
        // serde's message names the field, the expected type and the position, and
        // holds nothing the client did not send.
        JsonPayloadError::Deserialize(e) => {
            ApiError::BadRequest(format!("the body is not acceptable: {e}"))
        }
        JsonPayloadError::Serialize(e) => ApiError::Internal(format!("serialising JSON: {e}")),
        other => ApiError::BadRequest(format!("the body could not be read: {other}")),
    };
    api.into()
}

/// Refusals of a query string.
pub fn query_error(err: QueryPayloadError, _req: &HttpRequest) -> actix_web::Error {
    let detail = match err {
        QueryPayloadError::Deserialize(e) => format!("bad query string: {e}"),
        other => format!("bad query string: {other}"),
    };
    ApiError::BadRequest(detail).into()
}

/// A path that matched a route's shape but not its types (say, an id that is not a UUID)
/// names nothing that exists: 404, like any unknown path.
pub fn path_error(_err: PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::NotFound("no such resource".into()).into()
}

/// The default service: a path no route matches.
pub async fn unknown_route() -> ApiError {
    ApiError::NotFound("no such resource".into())
}

impl actix_web::Responder for ApiError {
    type Body = BoxBody;

    fn respond_to(self, _req: &HttpRequest) -> HttpResponse<BoxBody> {
        HttpResponse::from_error(self)
    }
}

/// Middleware: an error answer that is not a problem yet (made by actix itself, or by a
/// library's service) becomes one. Only its body changes: every header that is not about
/// the body (`Allow`, `Vary`, CORS, rate limits) is kept.
pub async fn problem_fallback(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static, BoxBody>>, actix_web::Error> {
    // Inner services turn their errors into answers, so `Err` is rare (an inner
    // middleware's failure). It carries no request to build a `ServiceResponse` from
    // (holding a clone of the request would break routing), so its answer travels
    // inside the error instead.
    let res = match next.call(req).await {
        Ok(res) => res,
        Err(err) => {
            let answer = err.error_response();
            if is_problem(&answer) {
                return Err(err);
            }
            let answer = problem_like(answer.status(), answer.headers());
            return Err(InternalError::from_response(err, answer).into());
        }
    };
    if is_problem(res.response()) {
        return Ok(res.map_into_left_body());
    }
    let answer = problem_like(res.status(), res.headers());
    let (req, _) = res.into_parts();
    Ok(ServiceResponse::new(req, answer).map_into_right_body())
}

/// True for answers that need no rewriting: successes, redirects, and problems.
fn is_problem<B>(res: &HttpResponse<B>) -> bool {
    let status = res.status();
    !(status.is_client_error() || status.is_server_error())
        || res
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|ct| ct.as_bytes().starts_with(PROBLEM_JSON.as_bytes()))
}

fn problem_like(status: StatusCode, headers: &header::HeaderMap) -> HttpResponse {
    let mut answer = ApiError::from_status(status).error_response();
    let about_the_body = [
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::CONTENT_ENCODING,
    ];
    for (name, value) in headers {
        if !about_the_body.contains(name) {
            answer.headers_mut().append(name.clone(), value.clone());
        }
    }
    answer
}

// ---- OpenAPI: the schema and the reusable problem responses ----

mod convert;
mod docs;
#[cfg(test)]
mod tests;

pub use docs::problems;
