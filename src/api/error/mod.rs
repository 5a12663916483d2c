//! The one error type of the HTTP layer, and its wire form: RFC 9457 problem details.
//!
//! Every refused request answers `application/problem+json` with
//! `{type, title, status, detail, code}` (plus `current_version` or `legal_moves` where the
//! contract says so). `code` is the machine-readable part clients branch on; each code,
//! with its status and title, is one row of [`table`], which also says which service error
//! answers with which code. The contract's error table (`docs/api.md`, held to [`table`]
//! by `tests/api/docs.rs`) lists every code, `method_not_allowed` (405), `request_timeout`
//! (408: the body did not arrive within `BODY_TIMEOUT_MS`; the connection is closed after
//! it) and `internal_error` (500) among them.
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

use actix_cors::CorsError;
use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{InternalError, JsonPayloadError, PathError, PayloadError};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::wire::MoveBody;
use crate::service::Fate;

/// The media type of every error answer.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The challenge of every 401: the seat token is a bearer token (RFC 6750).
pub const BEARER_CHALLENGE: &str = "Bearer";

/// Prefix of every problem's `type` URI; the code follows.
pub const PROBLEM_TYPE_BASE: &str = "https://domino.example/problems/";

/// Seconds a client should wait before retrying when the store is unavailable: long
/// enough for a Redis failover's reconnect, short enough that a player barely notices.
pub const STORE_RETRY_AFTER_SECS: u32 = 1;

/// Seconds before creating again when an address has its cap of waiting games: a game
/// fills when players join it, which takes a while.
pub const WAITING_RETRY_AFTER_SECS: u32 = 30;
/// `Retry-After` when a player has its maximum of open challenges: answers come in
/// minutes.
pub const CHALLENGES_RETRY_AFTER_SECS: u32 = 30;

/// Why a request was refused: a code of the [error table](table), what the client is
/// told, and what only the logs see. Handlers return this (the service's errors become it
/// through `From`); actix turns it into the problem+json answer.
#[derive(Debug)]
pub struct ApiError {
    code: ProblemCode,
    /// The text a client sees. Never holds the cause of a 5xx.
    detail: Cow<'static, str>,
    /// For the logs only (the `Display` form): a store's or a bug's own words.
    cause: Option<String>,
    retry_after_secs: Option<u32>,
    /// With `version_conflict`.
    current_version: Option<u64>,
    /// With `illegal_move`.
    legal_moves: Option<Vec<MoveBody>>,
    /// With `store_unavailable` after a change the store did not answer for.
    outcome: Option<Fate>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.detail)?;
        match &self.cause {
            Some(cause) => write!(f, " ({cause})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for ApiError {}

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
    /// With `version_conflict`, and `precondition_failed` from a stale `If-Match`: the
    /// game's version now.
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
    /// A problem of `code` that tells the client `detail`.
    pub fn new(code: ProblemCode, detail: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError {
            code,
            detail: detail.into(),
            cause: None,
            retry_after_secs: None,
            current_version: None,
            legal_moves: None,
            outcome: None,
        }
    }

    /// `Retry-After` for a limit that frees in `frees_in`: its whole seconds rounded up, at
    /// least 1 (a client waiting that long finds it freed).
    pub fn retry_after_duration(self, frees_in: std::time::Duration) -> ApiError {
        let secs = frees_in.as_secs() + u64::from(frees_in.subsec_nanos() > 0);
        self.retry_after(u32::try_from(secs.max(1)).unwrap_or(u32::MAX))
    }

    /// The same problem, with `Retry-After: secs`.
    pub fn retry_after(mut self, secs: u32) -> ApiError {
        self.retry_after_secs = Some(secs);
        self
    }

    pub fn bad_request(detail: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError::new(ProblemCode::BadRequest, detail)
    }

    pub fn unauthorized(detail: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError::new(ProblemCode::Unauthorized, detail)
    }

    pub fn not_found(detail: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError::new(ProblemCode::NotFound, detail)
    }

    pub fn invalid_rules(detail: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError::new(ProblemCode::InvalidRules, detail)
    }

    pub fn method_not_allowed() -> ApiError {
        ApiError::new(
            ProblemCode::MethodNotAllowed,
            "this resource does not answer that method; see the Allow header",
        )
    }

    pub fn version_conflict(current_version: u64) -> ApiError {
        ApiError::new(
            ProblemCode::VersionConflict,
            format!("the game is at version {current_version}; fetch it and decide again"),
        )
        .with_current_version(current_version)
    }

    /// The same problem, with the game's version now (a refusal of a stale version).
    pub fn with_current_version(mut self, current_version: u64) -> ApiError {
        self.current_version = Some(current_version);
        self
    }

    /// `limit` is `None` when the refusal came from somewhere that does not know it.
    pub fn payload_too_large(limit: Option<usize>) -> ApiError {
        let detail = match limit {
            Some(limit) => {
                format!("the body is larger than the {limit} bytes this server accepts").into()
            }
            None => Cow::Borrowed("the body is larger than this server accepts"),
        };
        ApiError::new(ProblemCode::PayloadTooLarge, detail)
    }

    pub fn illegal_move(detail: impl Into<Cow<'static, str>>, legal: Vec<MoveBody>) -> ApiError {
        ApiError {
            legal_moves: Some(legal),
            ..ApiError::new(ProblemCode::IllegalMove, detail)
        }
    }

    /// The request rate limit ([`crate::api::ratelimit`]); `limit` names the one reached
    /// and its figures.
    pub fn rate_limited(limit: &str, retry_after_secs: u32) -> ApiError {
        ApiError::new(
            ProblemCode::RateLimited,
            format!("too many requests: over the {limit}; retry in {retry_after_secs} s"),
        )
        .retry_after(retry_after_secs)
    }

    /// The body did not arrive within `BODY_TIMEOUT_MS` (`limit_ms`).
    pub fn request_timeout(limit_ms: u64) -> ApiError {
        ApiError::new(
            ProblemCode::RequestTimeout,
            format!("the body did not arrive within {limit_ms} ms; the connection is closed"),
        )
    }

    /// The store did not answer; `cause` is for the logs only.
    pub fn store_unavailable(cause: impl Into<String>) -> ApiError {
        ApiError {
            cause: Some(cause.into()),
            ..ApiError::new(
                ProblemCode::StoreUnavailable,
                format!("the game store did not answer; retry in {STORE_RETRY_AFTER_SECS} s"),
            )
            .retry_after(STORE_RETRY_AFTER_SECS)
        }
    }

    /// `/readyz` only: the cause is the detail, since readiness is for operators.
    pub fn store_not_ready(cause: impl std::fmt::Display) -> ApiError {
        ApiError::new(
            ProblemCode::StoreUnavailable,
            format!("the game store is not ready: {cause}"),
        )
        .retry_after(STORE_RETRY_AFTER_SECS)
    }

    /// A change the store did not answer for: `fate` says whether it was made. The cause
    /// is for the logs only.
    pub fn unsettled(cause: impl Into<String>, fate: Fate) -> ApiError {
        let detail = match fate {
            Fate::NotApplied => format!(
                "the game store did not answer in time and the change was not made; \
                 retry in {STORE_RETRY_AFTER_SECS} s"
            ),
            Fate::Applied | Fate::Unknown => format!(
                "the game store could not confirm the change in time: it may or may not have \
                 been made; retry in {STORE_RETRY_AFTER_SECS} s with the same Idempotency-Key, or \
                 with expected_version, so that it is made at most once"
            ),
        };
        ApiError {
            cause: Some(cause.into()),
            outcome: Some(fate),
            ..ApiError::new(ProblemCode::StoreUnavailable, detail)
                .retry_after(STORE_RETRY_AFTER_SECS)
        }
    }

    /// A bug on the server's side; `cause` is for the logs only.
    pub fn internal(cause: impl Into<String>) -> ApiError {
        ApiError {
            cause: Some(cause.into()),
            ..ApiError::new(
                ProblemCode::InternalError,
                "something went wrong on our side; the request changed nothing",
            )
        }
    }

    pub fn code(&self) -> ProblemCode {
        self.code
    }

    /// The body of the answer.
    pub fn problem(&self) -> Problem {
        let code = self.code;
        Problem {
            type_uri: code.type_uri(),
            title: code.title().to_owned(),
            status: code.status().as_u16(),
            detail: self.detail.clone().into_owned(),
            code,
            current_version: self.current_version,
            legal_moves: self.legal_moves.clone(),
            outcome: self.outcome.map(|fate| fate.as_str().to_owned()),
        }
    }

    /// The generic problem for a bare status produced outside our handlers.
    pub fn from_status(status: StatusCode) -> ApiError {
        match status {
            StatusCode::UNAUTHORIZED => ApiError::unauthorized("a valid seat token is required"),
            StatusCode::NOT_FOUND => ApiError::not_found("no such resource"),
            StatusCode::METHOD_NOT_ALLOWED => ApiError::method_not_allowed(),
            // From `Compress`: no problem code of its own, and a client that refuses
            // every coding this server has sent a request it cannot be answered.
            StatusCode::NOT_ACCEPTABLE => ApiError::bad_request(
                "Accept-Encoding rules out every coding this server has (identity, gzip, deflate, br, zstd)",
            ),
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::payload_too_large(None),
            s if s.is_server_error() => ApiError::internal(format!("bare {s} answer")),
            _ => ApiError::bad_request("the request is malformed"),
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
        if let Some(secs) = self.retry_after_secs {
            answer.insert_header((header::RETRY_AFTER, secs));
        }
        // RFC 9110 §11.6.1 asks a 401 to name the scheme that would do (RFC 6750's).
        if self.code == ProblemCode::Unauthorized {
            answer.insert_header((header::WWW_AUTHENTICATE, BEARER_CHALLENGE));
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
        | JsonPayloadError::Overflow { limit } => ApiError::payload_too_large(Some(limit)),
        JsonPayloadError::Payload(PayloadError::Overflow) => ApiError::payload_too_large(None),
        JsonPayloadError::ContentType => {
            ApiError::bad_request("the body must be JSON, sent with Content-Type: application/json")
        }
        // serde's message names the field, the expected type and the position, and
        // holds nothing the client did not send.
        JsonPayloadError::Deserialize(e) => {
            ApiError::bad_request(format!("the body is not acceptable: {e}"))
        }
        JsonPayloadError::Serialize(e) => ApiError::internal(format!("serialising JSON: {e}")),
        other => ApiError::bad_request(format!("the body could not be read: {other}")),
    };
    api.into()
}

/// A path that matched a route's shape but not its types (say, an id that is not a UUID)
/// names nothing that exists: 404, like any unknown path.
pub fn path_error(_err: PathError, _req: &HttpRequest) -> actix_web::Error {
    ApiError::not_found("no such resource").into()
}

/// The default service: a path no route matches.
pub async fn unknown_route() -> ApiError {
    ApiError::not_found("no such resource")
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
            if needs_no_rewrite(&answer) {
                return Err(err);
            }
            let answer = problem_like(ApiError::from_status(answer.status()), answer.headers());
            return Err(InternalError::from_response(err, answer).into());
        }
    };
    if needs_no_rewrite(res.response()) {
        return Ok(res.map_into_left_body());
    }
    let problem = refused_origin(&res).unwrap_or_else(|| ApiError::from_status(res.status()));
    let answer = problem_like(problem, res.headers());
    let (req, _) = res.into_parts();
    Ok(ServiceResponse::new(req, answer).map_into_right_body())
}

/// True for answers that need no rewriting: successes, redirects, and problems.
fn needs_no_rewrite<B>(res: &HttpResponse<B>) -> bool {
    let status = res.status();
    !(status.is_client_error() || status.is_server_error())
        || res
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|ct| ct.as_bytes().starts_with(PROBLEM_JSON.as_bytes()))
}

/// A preflight from an origin `CORS_ORIGINS` does not list, which actix-cors refuses as a
/// bare 400: the request is well-formed, the origin is not allowed, and the page's author
/// needs to know which origin the server saw.
fn refused_origin<B>(res: &ServiceResponse<B>) -> Option<ApiError> {
    match res.response().error()?.as_error::<CorsError>()? {
        CorsError::OriginNotAllowed => {
            let origin = res
                .request()
                .headers()
                .get(header::ORIGIN)
                .map(|o| {
                    String::from_utf8_lossy(o.as_bytes())
                        .chars()
                        .take(200)
                        .collect()
                })
                .unwrap_or_else(|| "(none)".to_owned());
            Some(ApiError::new(
                ProblemCode::Forbidden,
                format!(
                    "the origin {origin} may not call this server from a browser page: \
                     CORS_ORIGINS does not list it"
                ),
            ))
        }
        _ => None,
    }
}

/// `problem`'s answer, with every header of `headers` that is not about the body.
fn problem_like(problem: ApiError, headers: &header::HeaderMap) -> HttpResponse {
    let mut answer = problem.error_response();
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

mod docs;
mod table;
#[cfg(test)]
mod tests;

pub use docs::problems;
pub use table::ProblemCode;
