//! Leagues: making one, reading one or a list, entering and leaving.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::error::{ApiError, problems};
use crate::api::feeds::LeagueFeeds;
use crate::api::games::{KEEP_ALIVE, create_key, sse_answer};
use crate::api::numbers::Json;
use crate::api::paging::{DEFAULT_PER_PAGE, paging};
use crate::api::streams::StreamSlots;
use crate::api::wire::{self, CreateLeague, LeagueList, LeagueSummary, LeagueView};
use crate::bots::Level;
use crate::domain::Caller;
use crate::service::leagues::NewLeague;
use crate::service::leagues::record::League;
use crate::service::{Create, Error, Leagues};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/v1/leagues")
            .route(web::post().to(create_league))
            .route(web::get().to(list_leagues))
            .route(web::head().to(list_leagues)),
    )
    .service(
        web::resource("/v1/leagues/{id}")
            .route(web::get().to(get_league))
            .route(web::head().to(get_league)),
    )
    .service(web::resource("/v1/leagues/{id}/entrants").route(web::post().to(enter_league)))
    .service(
        web::resource("/v1/leagues/{id}/events")
            .route(web::get().to(league_events))
            .route(web::head().to(league_events)),
    )
    .service(web::resource("/v1/leagues/{id}/entrants/me").route(web::delete().to(leave_league)));
}

/// Makes a league on one preset, its built-in levels entered for good. From then on the
/// server keeps pairing its available entrants in duplicate matches (`deals_per_match`
/// deals, each played twice with the seats swapped), and rates each match once.
#[utoipa::path(
    post,
    path = "/v1/leagues",
    tag = "leagues",
    operation_id = "create_league",
    security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the same league again (as it is now), made once; the same key with another body is refused (422). 1 to 128 visible ASCII characters, kept a day, per player.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
    ),
    request_body = CreateLeague,
    responses(
        (status = 201, description = "Made: the league; `Location` names it.", body = LeagueView,
            headers(("Location" = String, description = "/v1/leagues/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_league(
    req: HttpRequest,
    leagues: web::Data<Leagues>,
    body: Json<CreateLeague>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let levels = body
        .levels
        .unwrap_or_default()
        .iter()
        .map(|name| {
            name.parse::<Level>()
                .map_err(|e| ApiError::from(Error::InvalidRules(format!("levels: {e}"))))
        })
        .collect::<Result<_, _>>()?;
    let new = NewLeague {
        name: body.name,
        preset: crate::api::preset_named(&body.preset)?,
        overrides: body.rules.unwrap_or_default(),
        clock: crate::api::clock_asked(body.clock.as_ref())?,
        deals_per_match: body.deals_per_match,
        max_concurrent: body.max_concurrent,
        levels,
    };
    let key = create_key(req.headers(), Create::League, &new)?;
    let made = leagues.create(&caller, new, key.as_ref()).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/leagues/{}", made.id())))
        .json(LeagueView::of(&made)))
}

/// A league as an answer: as it is now, never from a cache.
fn answer(league: &League) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(LeagueView::of(league))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LeagueQuery {
    /// From 1.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

/// The leagues, newest first.
#[utoipa::path(
    get,
    path = "/v1/leagues",
    tag = "leagues",
    operation_id = "list_leagues",
    params(LeagueQuery),
    responses(
        (status = 200, description = "A page of leagues.", body = LeagueList),
        (status = 400, response = problems::BadRequest),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_leagues(
    leagues: web::Data<Leagues>,
    query: web::Query<LeagueQuery>,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = paging(query.page, query.per_page, DEFAULT_PER_PAGE);
    let found = leagues.list(page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(LeagueList {
            leagues: found.iter().map(LeagueSummary::of).collect(),
            page,
            per_page,
        }))
}

/// A league: its table in rank order, its matches in play, the latest counted. Anyone
/// may read one.
#[utoipa::path(
    get,
    path = "/v1/leagues/{id}",
    tag = "leagues",
    operation_id = "get_league",
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The league.", body = LeagueView),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_league(
    leagues: web::Data<Leagues>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let found = leagues.get(wire::league_id(&id)?).await?;
    Ok(answer(&found))
}

/// Enters the key's player. It is paired whenever it is available: an active webhook
/// (`PUT /v1/players/me/webhook`), or its stream open (`GET /v1/players/me/events`).
#[utoipa::path(
    post,
    path = "/v1/leagues/{id}/entrants",
    tag = "leagues",
    operation_id = "enter_league",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The league with its new entrant.", body = LeagueView),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn enter_league(
    leagues: web::Data<Leagues>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let entered = leagues.enter(&caller, wire::league_id(&id)?).await?;
    Ok(answer(&entered))
}

/// The key's player leaves: it is paired no more; its matches in play finish and count,
/// and its row stays in the table.
#[utoipa::path(
    delete,
    path = "/v1/leagues/{id}/entrants/me",
    tag = "leagues",
    operation_id = "leave_league",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The league without its entrant.", body = LeagueView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn leave_league(
    leagues: web::Data<Leagues>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let left = leagues.leave(&caller, wire::league_id(&id)?).await?;
    Ok(answer(&left))
}

/// Server-Sent Events of a league: first `standings` (the league as it stands, as `GET`
/// answers it), then `match_started` (a LeagueMatchView) and `match_finished` (a
/// LeagueResultView) as they happen, each counted match followed by `standings` again (the
/// entrants' `history` left out: `GET` the league for its charts). Anyone may follow one.
#[utoipa::path(
    get,
    path = "/v1/leagues/{id}/events",
    tag = "leagues",
    operation_id = "league_events",
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "`text/event-stream` of `standings` (a LeagueView), `match_started` (a LeagueMatchView) and `match_finished` (a LeagueResultView) events; a comment every 15 s keeps it alive.",
            content_type = "text/event-stream", body = LeagueView),
        (status = 404, response = problems::NotFound),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn league_events(
    feeds: web::Data<LeagueFeeds>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = wire::league_id(&id)?;
    let events = feeds.into_inner().follow(id).await?;
    let slot = slots.acquire_for(&request)?;
    let hello = web::Bytes::from_static(b": league\n\n");
    let frames = futures_util::stream::unfold((events, slot), |(mut events, slot)| async move {
        match tokio::time::timeout(Duration::from_secs(15), events.next()).await {
            Ok(Some(frame)) => Some((frame, (events, slot))),
            Ok(None) => None,
            Err(_) => Some((KEEP_ALIVE, (events, slot))),
        }
    });
    let stream = futures_util::stream::once(async move { hello })
        .chain(frames)
        .map(Ok::<_, actix_web::Error>);
    Ok(sse_answer(&request, stream))
}
