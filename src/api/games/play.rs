//! Playing a game: its view (polled, or long-polled with `wait`) and making a move.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::client;
use crate::api::error::{ApiError, ProblemCode, problems};
use crate::api::headers::VARY_BY_TOKEN;
use crate::api::numbers;
use crate::api::streams::StreamSlots;
use crate::api::wire::*;
use crate::service::{self, Games, RequestKey};

use super::*;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ViewQuery {
    /// Long poll: answer as soon as the version is greater than this.
    after: Option<u64>,
    /// Long poll: seconds to wait at most (up to 30).
    wait: Option<u64>,
}

/// The game as the caller may see it.
#[utoipa::path(
    get,
    path = "/v1/games/{id}",
    tag = "play",
    operation_id = "get_game",
    params(("id" = uuid::Uuid, Path, description = "The game"), ViewQuery,
        ("If-None-Match" = Option<String>, Header, nullable = false, description = "An ETag from an earlier answer: 304 if unchanged.")),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "Your seat's view with a token, else the spectator's.", body = GameView,
            headers(("ETag" = String, description = "The version (and seat) of this view."))),
        (status = 304, description = "Unchanged since the ETag given."),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_game(
    games: web::Data<Games>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    query: web::Query<ViewQuery>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(path.into_inner());
    let view = match (query.after, query.wait) {
        (Some(after), wait) => {
            // Held while the poll waits; given back when it answers or is dropped.
            let _slot = slots.acquire_for(&request)?;
            games
                .view_after(
                    id,
                    &caller,
                    after,
                    Duration::from_secs(wait.unwrap_or(30).min(30)),
                )
                .await?
        }
        (None, Some(_)) => {
            return Err(ApiError::bad_request("wait goes with after=<version>"));
        }
        (None, None) => games.view(id, &caller).await?,
    };
    let tag = etag(&view);
    if let Some(inm) = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        && inm.split(',').any(|t| t.trim() == tag || t.trim() == "*")
    {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, tag))
            .insert_header(VARY_BY_TOKEN)
            .finish());
    }
    let mut res = view_response(&view, GameView::of(&view));
    res.headers_mut().insert(VARY_BY_TOKEN.0, VARY_BY_TOKEN.1);
    Ok(res)
}

/// Makes a move. Built-in bots whose turn follows move before the answer.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/moves",
    tag = "play",
    operation_id = "make_move",
    params(("id" = uuid::Uuid, Path, description = "The game"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the first answer again; 1 to 128 visible ASCII characters.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "The `ETag` of the view the move was decided on: the move is made only if the game is still at that version, else 412 `precondition_failed` with `current_version`. The same as `expected_version` in the body (send one of them; both must then agree)." )),
    security(("bearer" = [])),
    request_body = MoveBody,
    responses(
        (status = 200, description = "Your new view and what the move caused.", body = MoveResult),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 412, response = problems::PreconditionFailed),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn make_move(
    games: web::Data<Games>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(path.into_inner());
    let token = caller.bearer().ok_or_else(|| {
        ApiError::unauthorized("a move needs the seat's token: `Authorization: Bearer <token>`")
    })?;
    let parsed: MoveBody = serde_json::from_slice(&body).map_err(|e| {
        let detail = numbers::body_refusal(&request, &body);
        ApiError::bad_request(detail.unwrap_or_else(|| format!("the body is not acceptable: {e}")))
    })?;
    let hash = client::token_hash(&request, token);
    let request_headers = request.headers();
    let key = idempotency_key(request_headers, 1)?
        .map(|key| RequestKey::new(key.to_owned(), token, &body));
    let mut request = parsed.to_request();
    let pinned = pin_to_if_match(&mut request, request_headers)?;
    let moved = games
        .make_move(id, &caller, Some(hash), request, key.as_ref())
        .await
        .map_err(|e| refusal(e, pinned))?;
    Ok(HttpResponse::Ok().json(MoveResult::of(&moved)))
}

/// Pins the move to the version `If-Match` names, which must agree with the body's
/// `expected_version` if both are sent. Answers the version pinned so.
fn pin_to_if_match(
    request: &mut service::MoveRequest,
    headers: &header::HeaderMap,
) -> Result<Option<u64>, ApiError> {
    let pinned = if_match(headers)?;
    if let Some(version) = pinned {
        match request.expected_version {
            Some(expected) if expected != version => {
                return Err(ApiError::bad_request(format!(
                    "If-Match names version {version} and expected_version {expected}: send one"
                )));
            }
            _ => request.expected_version = Some(version),
        }
    }
    Ok(pinned)
}

/// A refused move's problem: a version pinned by `If-Match` that is stale is HTTP's own
/// failed precondition, the same refusal as a stale `expected_version` in other words.
fn refusal(e: service::Error, pinned_by_if_match: Option<u64>) -> ApiError {
    match (e, pinned_by_if_match) {
        (service::Error::VersionConflict { current }, Some(named)) => ApiError::new(
            ProblemCode::PreconditionFailed,
            format!(
                "the game is at version {current}, not the {named} If-Match names; \
                 fetch it and decide again"
            ),
        )
        .with_current_version(current),
        (e, _) => e.into(),
    }
}
