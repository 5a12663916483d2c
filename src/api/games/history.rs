//! A game's history: the move log a page at a time, and the export of a finished match.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::error::{ApiError, problems};
use crate::api::headers::VARY_BY_TOKEN;
use crate::api::numbers;
use crate::api::wire::*;
use crate::service::{self, GameQueries};

use super::*;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// The index of the last move already read: the page holds the moves after it. 0 (the
    /// default) starts from the first move, with the first deal's events in `start`; a
    /// page's `next` is the `after` of the page that follows. At most the number of moves
    /// made.
    #[param(value_type = Option<u64>, minimum = 0)]
    after: Option<String>,
    /// Moves a page holds at most: 1 to 1000, default 1000.
    #[param(value_type = Option<u64>, minimum = 1, maximum = 1000)]
    limit: Option<String>,
}

impl LogQuery {
    /// `(after, limit)`; a refusal names the parameter and its range, as every query's.
    fn parse(&self, req: &HttpRequest) -> Result<(u64, u64), ApiError> {
        let number = |text: &Option<String>, name: &str, default: u64| match text {
            None => Ok(default),
            Some(text) => text.parse::<u64>().map_err(|_| {
                ApiError::bad_request(numbers::query_refusal(req).unwrap_or_else(|| {
                    format!(
                        "{name}: a whole number, not {:?}",
                        text.chars().take(24).collect::<String>()
                    )
                }))
            }),
        };
        Ok((
            number(&self.after, "after", 0)?,
            number(&self.limit, "limit", service::MAX_LOG_PAGE as u64)?,
        ))
    }
}

/// The move history as the caller may see it (another seat's draws show no tile), a page
/// at a time.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/log",
    tag = "play",
    operation_id = "game_log",
    params(("id" = uuid::Uuid, Path, description = "The game"), LogQuery),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "The moves after `after` (at most `limit`) and what each caused; `next` asks for the following page.", body = GameLog),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn game_log(
    queries: web::Data<GameQueries>,
    path: web::Path<uuid::Uuid>,
    query: web::Query<LogQuery>,
    caller: Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let (after, limit) = query.parse(&req)?;
    let log = queries
        .log(game_id(path.into_inner()), &caller, after, limit)
        .await?;
    let mut res = view_response(&log.view, GameLog::of(&log));
    res.headers_mut().insert(VARY_BY_TOKEN.0, VARY_BY_TOKEN.1);
    Ok(res)
}

/// Once the match is finished: rules, seed, every deal and every move.
#[utoipa::path(
    get,
    path = "/v1/games/{id}/export",
    tag = "play",
    operation_id = "export_game",
    params(("id" = uuid::Uuid, Path, description = "The game")),
    responses(
        (status = 200, description = "Enough to replay the game exactly: one JSON document, sent as it is made (chunked); an answer cut short is an export the server could not finish.", body = GameExport),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 412, response = problems::PreconditionFailed),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn export_game(
    queries: web::Data<GameQueries>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(path.into_inner());
    let export = queries.export(id).await?;
    let mut answer = HttpResponse::Ok();
    answer
        .insert_header((header::ETAG, etag(&export.view)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .content_type("application/json");
    // actix reads a HEAD answer's body to its end before dropping it: make none.
    if request.method() == actix_web::http::Method::HEAD {
        return Ok(answer.streaming(futures_util::stream::empty::<
            Result<web::Bytes, actix_web::Error>,
        >()));
    }
    // Made chunk by chunk as the client reads: a long match's export is never whole here.
    let chunks =
        futures_util::stream::unfold(ExportWriter::of(export), move |mut writer| async move {
            let chunk = match writer.chunk()? {
                Ok(bytes) => Ok(web::Bytes::from(bytes)),
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "an export was cut short");
                    Err(actix_web::error::ErrorInternalServerError(e.to_string()))
                }
            };
            Some((chunk, writer))
        });
    Ok(answer.streaming(chunks))
}
