//! Tournaments: making one, joining and withdrawing, starting it, reading one or a list,
//! and its event stream; its creator's cancel and removal of an entrant.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::feeds::TournamentFeeds;
use crate::api::games::{KEEP_ALIVE, create_key, sse_answer};
use crate::api::headers::get_and_head;
use crate::api::numbers::Json;
use crate::api::paging::{DEFAULT_PER_PAGE, PageQuery, paging};
use crate::api::ratelimit::RateLimits;
use crate::api::streams::StreamSlots;
use crate::api::wire::{
    self, CreateTournament, JoinTournament, TournamentEvent, TournamentList, TournamentSummary,
    TournamentView,
};
use crate::bots::Level;
use crate::domain::Caller;
use crate::service::tournaments::record::{Format, Tournament, TournamentStatus};
use crate::service::tournaments::{Joiner, NewTournament};
use crate::service::{Create, Error, Tournaments};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/v1/tournaments")
            .route(web::post().to(create_tournament))
            .route(web::get().to(list_tournaments))
            .route(web::head().to(list_tournaments)),
    )
    .service(
        web::resource("/v1/tournaments/{id}")
            .route(web::get().to(get_tournament))
            .route(web::head().to(get_tournament))
            .route(web::delete().to(cancel_tournament)),
    )
    .service(get_and_head(
        "/v1/players/{who}/tournaments",
        player_tournaments,
    ))
    .service(web::resource("/v1/tournaments/{id}/players").route(web::post().to(join_tournament)))
    .service(
        web::resource("/v1/tournaments/{id}/players/me")
            .route(web::delete().to(withdraw_from_tournament)),
    )
    .service(
        web::resource("/v1/tournaments/{id}/players/{player}")
            .route(web::delete().to(remove_tournament_player)),
    )
    .service(web::resource("/v1/tournaments/{id}/start").route(web::post().to(start_tournament)))
    .service(
        web::resource("/v1/tournaments/{id}/events")
            .route(web::get().to(tournament_events))
            .route(web::head().to(tournament_events)),
    );
}

/// Makes a tournament, open for registration until `starts_at_ms` (or its creator starts
/// it): Swiss or round robin, 2 seats a game, each pairing one deal played twice with the
/// seats swapped unless `duplicate` is false. Its games are ordinary games with both seats
/// bound, announced by `tournament_round` and `game_started` on the players' streams.
#[utoipa::path(
    post,
    path = "/v1/tournaments",
    tag = "tournaments",
    operation_id = "create_tournament",
    security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the same tournament again (as it is now), made once; the same key with another body is refused (422). 1 to 128 visible ASCII characters, kept a day, per player.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
    ),
    request_body = CreateTournament,
    responses(
        (status = 201, description = "Made: the tournament, `registering`; `Location` names it.", body = TournamentView,
            headers(("Location" = String, description = "/v1/tournaments/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_tournament(
    req: HttpRequest,
    tournaments: web::Data<Tournaments>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreateTournament>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let body = body.into_inner();
    let format = match body.format.as_str() {
        "swiss" => Format::Swiss,
        "round_robin" => Format::RoundRobin,
        other => {
            return Err(ApiError::invalid_rules(format!(
                "format: swiss or round_robin (got {other:?})"
            )));
        }
    };
    let levels = body
        .levels
        .unwrap_or_default()
        .iter()
        .map(|name| level_named("levels", name))
        .collect::<Result<_, _>>()?;
    let new = NewTournament {
        name: body.name,
        preset: crate::api::preset_named(&body.preset)?,
        overrides: body.rules.unwrap_or_default(),
        format,
        rounds: body.rounds,
        duplicate: body.duplicate.unwrap_or(true),
        deals_per_pairing: body.deals_per_pairing,
        clock: crate::api::clock_asked(body.clock.as_ref())?,
        starts_at_ms: body.starts_at_ms,
        max_players: body.max_players,
        rated: body.rated,
        levels,
    };
    let key = create_key(req.headers(), Create::Tournament, &new)?;
    let made = tournaments.create(&caller, new, from, key.as_ref()).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/tournaments/{}", made.id())))
        .json(TournamentView::of(&made)))
}

/// A tournament as an answer: as it is now, never from a cache.
fn answer(t: &Tournament) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(TournamentView::of(t))
}

fn level_named(field: &str, name: &str) -> Result<Level, ApiError> {
    name.parse()
        .map_err(|e| ApiError::from(Error::InvalidRules(format!("{field}: {e}"))))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TournamentQuery {
    /// `registering` (the default), `running`, `finished` or `canceled`.
    status: Option<String>,
    /// From 1.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

/// The tournaments of a status, newest first.
#[utoipa::path(
    get,
    path = "/v1/tournaments",
    tag = "tournaments",
    operation_id = "list_tournaments",
    params(TournamentQuery),
    responses(
        (status = 200, description = "A page of tournaments.", body = TournamentList),
        (status = 400, response = problems::BadRequest),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_tournaments(
    tournaments: web::Data<Tournaments>,
    query: web::Query<TournamentQuery>,
) -> Result<HttpResponse, ApiError> {
    let name = query.status.as_deref().unwrap_or("registering");
    let status = TournamentStatus::ALL
        .into_iter()
        .find(|s| s.as_str() == name)
        .ok_or_else(|| {
            ApiError::from(Error::BadRequest(format!(
                "status: registering, running, finished or canceled (got {name:?})"
            )))
        })?;
    let (page, per_page) = paging(query.page, query.per_page, DEFAULT_PER_PAGE);
    let found = tournaments.list(status, page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(TournamentList {
            tournaments: found.iter().map(TournamentSummary::of).collect(),
            page,
            per_page,
        }))
}

/// The tournaments a player (or a built-in level) entered, newest first, whatever their
/// status: what its profile page lists. Each is kept a day after it ends.
#[utoipa::path(
    get,
    path = "/v1/players/{who}/tournaments",
    tag = "tournaments",
    operation_id = "player_tournaments",
    params(("who" = String, Path, description = "A player's id or name (ignoring case), or a built-in level"), PageQuery),
    responses(
        (status = 200, description = "A page of the player's tournaments.", body = TournamentList),
        (status = 400, response = problems::BadRequest),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn player_tournaments(
    tournaments: web::Data<Tournaments>,
    who: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = query.get();
    let found = tournaments
        .player_tournaments(&wire::who(&who), page, per_page)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(TournamentList {
            tournaments: found.iter().map(TournamentSummary::of).collect(),
            page,
            per_page,
        }))
}

/// A tournament: its settings, its players in standings order, every pairing and bye.
/// Anyone may read one.
#[utoipa::path(
    get,
    path = "/v1/tournaments/{id}",
    tag = "tournaments",
    operation_id = "get_tournament",
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The tournament.", body = TournamentView),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_tournament(
    tournaments: web::Data<Tournaments>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let found = tournaments.get(wire::tournament_id(&id)?).await?;
    Ok(answer(&found))
}

/// Enters the key's player, or (`level`, its creator only) a built-in level, while it is
/// registering.
#[utoipa::path(
    post,
    path = "/v1/tournaments/{id}/players",
    tag = "tournaments",
    operation_id = "join_tournament",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    request_body(content = Option<JoinTournament>, description = "Empty (or `{}`) to enter the key's player."),
    responses(
        (status = 200, description = "The tournament with its new player.", body = TournamentView),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn join_tournament(
    tournaments: web::Data<Tournaments>,
    id: web::Path<String>,
    body: Option<web::Json<JoinTournament>>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let joiner = match body.and_then(|b| b.into_inner().level) {
        Some(name) => Joiner::Level(level_named("level", &name)?),
        None => Joiner::Me,
    };
    let joined = tournaments
        .join(&caller, wire::tournament_id(&id)?, joiner)
        .await?;
    Ok(answer(&joined))
}

/// Withdraws the key's player: before the start it is removed; after, it is paired no
/// more, and its games played stand.
#[utoipa::path(
    delete,
    path = "/v1/tournaments/{id}/players/me",
    tag = "tournaments",
    operation_id = "withdraw_from_tournament",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The tournament.", body = TournamentView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn withdraw_from_tournament(
    tournaments: web::Data<Tournaments>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let left = tournaments
        .withdraw(&caller, wire::tournament_id(&id)?)
        .await?;
    Ok(answer(&left))
}

/// Cancels the tournament (its creator only), registering or running: `canceled`, with
/// the reason `canceled by its creator`; its stream and its players' streams say
/// `tournament_finished`. Games in play go on, but no longer count for it.
#[utoipa::path(
    delete,
    path = "/v1/tournaments/{id}",
    tag = "tournaments",
    operation_id = "cancel_tournament",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The tournament, `canceled`.", body = TournamentView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn cancel_tournament(
    tournaments: web::Data<Tournaments>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let canceled = tournaments
        .cancel(&caller, wire::tournament_id(&id)?)
        .await?;
    Ok(answer(&canceled))
}

/// Removes an entrant (its creator only, before the start): a player named by its id, or
/// a built-in level's entry by the id the tournament shows (`greedy`, `greedy-2`).
#[utoipa::path(
    delete,
    path = "/v1/tournaments/{id}/players/{player}",
    tag = "tournaments",
    operation_id = "remove_tournament_player",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, format = Uuid),
        ("player" = String, Path, description = "The entrant's id, as the tournament's `players` show it."),
    ),
    responses(
        (status = 200, description = "The tournament without the entrant.", body = TournamentView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn remove_tournament_player(
    tournaments: web::Data<Tournaments>,
    path: web::Path<(String, String)>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let (id, player) = path.into_inner();
    let id = wire::tournament_id(&id)?;
    let removed = tournaments
        .remove(&caller, id, wire::entrant_id(&player)?)
        .await?;
    Ok(answer(&removed))
}

/// Starts the tournament now (its creator only), with at least 3 players (2 for a round
/// robin): its first round is paired and its games made.
#[utoipa::path(
    post,
    path = "/v1/tournaments/{id}/start",
    tag = "tournaments",
    operation_id = "start_tournament",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The tournament, `running`.", body = TournamentView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn start_tournament(
    tournaments: web::Data<Tournaments>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let started = tournaments
        .start(&caller, wire::tournament_id(&id)?)
        .await?;
    Ok(answer(&started))
}

/// Server-Sent Events of a tournament: first `standings` (the tournament as it stands),
/// then `round_started`, `pairing_finished`, `standings` and, last, `tournament_finished`,
/// each a TournamentEvent in `data` holding the tournament as it is now. Anyone may
/// follow one.
#[utoipa::path(
    get,
    path = "/v1/tournaments/{id}/events",
    tag = "tournaments",
    operation_id = "tournament_events",
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "`text/event-stream` of `standings`, `round_started`, `pairing_finished` and `tournament_finished` events, each a TournamentEvent in `data`; a comment every 15 s keeps it alive. It ends after `tournament_finished`.",
            content_type = "text/event-stream", body = TournamentEvent),
        (status = 404, response = problems::NotFound),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn tournament_events(
    feeds: web::Data<TournamentFeeds>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = wire::tournament_id(&id)?;
    let events = feeds.into_inner().follow(id).await?;
    let slot = slots.acquire_for(&request)?;
    let hello = web::Bytes::from_static(b": tournament\n\n");
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
