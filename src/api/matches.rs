//! Matches, the duplicate arena: making one, reading it, canceling it.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::games::create_key;
use crate::api::headers::get_and_head;
use crate::api::numbers::Json;
use crate::api::paging::PageQuery;
use crate::api::ratelimit::RateLimits;
use crate::api::wire::{self, CreateMatch, MatchList, MatchView};
use crate::bots::Level;
use crate::domain::Caller;
use crate::service::matches::NewMatch;
use crate::service::{Create, Matches};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/v1/matches")
            .route(web::post().to(create_match))
            .route(web::get().to(list_matches))
            .route(web::head().to(list_matches)),
    )
    .service(get_and_head("/v1/players/{who}/matches", player_matches))
    .service(
        web::resource("/v1/matches/{id}")
            .route(web::get().to(get_match))
            .route(web::head().to(get_match))
            .route(web::delete().to(cancel_match)),
    );
}

/// Plays a series of games against a built-in level (at once) or a player (once it
/// accepts, as a challenge: `POST /v1/challenges/{id}/accept` with this match's id), on
/// deals the server makes from a secret seed; with `duplicate` each deal twice, the same
/// hands, the sides swapped, so the luck of the deal cancels out of the margin. At most
/// `parallel` games at once; each is an ordinary game with both seats bound, announced by
/// `game_started` on the players' streams, and played with the players' keys.
#[utoipa::path(
    post,
    path = "/v1/matches",
    tag = "matches",
    operation_id = "create_match",
    security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the same match again (as it is now), made once; the same key with another body is refused (422). 1 to 128 visible ASCII characters, kept a day, per player.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
    ),
    request_body = CreateMatch,
    responses(
        (status = 201, description = "Made: the match (`waiting` for a player to accept, `running` against a level); `Location` names it.", body = MatchView,
            headers(("Location" = String, description = "/v1/matches/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_match(
    req: HttpRequest,
    matches: web::Data<Matches>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreateMatch>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let body = body.into_inner();
    let preset = crate::api::preset_named(&body.preset)?;
    let new = NewMatch {
        opponent: body.opponent_named(),
        preset,
        overrides: body.rules.unwrap_or_default(),
        seats: body.seats.unwrap_or(2),
        deals: body.deals.unwrap_or(10),
        duplicate: body.duplicate.unwrap_or(true),
        clock: crate::api::clock_asked(body.clock.as_ref())?,
        parallel: body.parallel.unwrap_or(1),
        rated: body.rated,
        seed: body.seed,
        play_as: level_named("play_as", body.play_as.as_deref())?,
        partner: level_named("partner", body.partner.as_deref())?,
    };
    let key = create_key(req.headers(), Create::Match, &new)?;
    let made = matches
        .create_match(&caller, new, from, key.as_ref())
        .await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/matches/{}", made.id())))
        .json(MatchView::of(&made)))
}

/// The key's player's matches, made or received, newest first: those of the last day,
/// and any still running.
#[utoipa::path(
    get,
    path = "/v1/matches",
    tag = "matches",
    operation_id = "list_matches",
    security(("bearer" = [])),
    params(PageQuery),
    responses(
        (status = 200, description = "A page of the player's matches.", body = MatchList),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_matches(
    matches: web::Data<Matches>,
    query: web::Query<PageQuery>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = query.get();
    let found = matches.my_matches(&caller, page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(MatchList {
            matches: found.iter().map(MatchView::of).collect(),
            page,
            per_page,
        }))
}

/// A player's matches, made or received, newest first, as `GET /v1/matches` lists the
/// key's: what its profile page lists. Anyone may read a match.
#[utoipa::path(
    get,
    path = "/v1/players/{who}/matches",
    tag = "matches",
    operation_id = "player_matches",
    params(("who" = String, Path, description = "A player's id or name (ignoring case), or a built-in level"), PageQuery),
    responses(
        (status = 200, description = "A page of the player's matches.", body = MatchList),
        (status = 400, response = problems::BadRequest),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn player_matches(
    matches: web::Data<Matches>,
    who: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = query.get();
    let found = matches
        .player_matches(&wire::who(&who), page, per_page)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(MatchList {
            matches: found.iter().map(MatchView::of).collect(),
            page,
            per_page,
        }))
}

/// The level a field names, if any.
fn level_named(field: &str, name: Option<&str>) -> Result<Option<Level>, ApiError> {
    name.map(|name| {
        name.parse().map_err(|e| {
            ApiError::from(crate::service::Error::InvalidRules(format!("{field}: {e}")))
        })
    })
    .transpose()
}

/// A match: its games, the challenger's score, and its margin a deal with a 95% interval.
/// Anyone may read one.
#[utoipa::path(
    get,
    path = "/v1/matches/{id}",
    tag = "matches",
    operation_id = "get_match",
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The match.", body = MatchView),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_match(
    matches: web::Data<Matches>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let found = matches.get_match(wire::match_id(&id)?).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(MatchView::of(&found)))
}

/// Cancels a match (either player's key): no game of it starts any more; those in play go
/// on. Before it is accepted, the challenger's cancel takes it back and the opponent's
/// declines it.
#[utoipa::path(
    delete,
    path = "/v1/matches/{id}",
    tag = "matches",
    operation_id = "cancel_match",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The match, `canceled` (or as it was, when it was over).", body = MatchView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn cancel_match(
    matches: web::Data<Matches>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::match_id(&id)?;
    let found = matches.cancel_match(&caller, id).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(MatchView::of(&found)))
}
