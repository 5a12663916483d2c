//! Challenges: making one, answering it, taking it back, and a player's open ones. A
//! match waiting for its answer is answered and listed here as a challenge.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::games::create_key;
use crate::api::numbers::Json;
use crate::api::ratelimit::RateLimits;
use crate::api::wire::{self, ChallengeList, ChallengeView, CreateChallenge};
use crate::domain::Caller;
use crate::service::{Challenges, Create, MAX_PER_PAGE, NewChallenge, Offer, Offers};
use crate::store::challenges::Direction;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/v1/challenges")
            .route(web::post().to(create_challenge))
            .route(web::get().to(list_challenges))
            .route(web::head().to(list_challenges)),
    )
    .service(
        web::resource("/v1/challenges/{id}")
            .route(web::get().to(get_challenge))
            .route(web::head().to(get_challenge))
            .route(web::delete().to(cancel_challenge)),
    )
    .service(web::resource("/v1/challenges/{id}/accept").route(web::post().to(accept_challenge)))
    .service(web::resource("/v1/challenges/{id}/decline").route(web::post().to(decline_challenge)));
}

/// An invitation at these routes: a challenge, or a match's (answered as a challenge).
fn answer(offer: &Offer) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(ChallengeView::of_offer(offer))
}

/// Challenges players or built-in levels to a game: the challenger (the key's player)
/// takes seat 0, the opponents the next seats in order. Each opponent that is a player
/// gets a `challenge` event on its stream; built-in levels accept at once, so a challenge
/// of levels only is answered `accepted`, its game created and started.
#[utoipa::path(
    post,
    path = "/v1/challenges",
    tag = "challenges",
    operation_id = "create_challenge",
    security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the same challenge again (as it is now), made once; the same key with another body is refused (422). 1 to 128 visible ASCII characters, kept a day, per player.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
    ),
    request_body = CreateChallenge,
    responses(
        (status = 201, description = "Made: the challenge (`open`, or `accepted` with its `game_id` when every opponent is a built-in level); `Location` names it.", body = ChallengeView,
            headers(("Location" = String, description = "/v1/challenges/{id}"))),
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
pub async fn create_challenge(
    req: HttpRequest,
    challenges: web::Data<Challenges>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreateChallenge>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let body = body.into_inner();
    let preset = crate::api::preset_named(&body.preset)?;
    let new = NewChallenge {
        opponents: body.opponents_named(),
        preset,
        overrides: body.rules.unwrap_or_default(),
        seats: body.seats.unwrap_or(2),
        clock: crate::api::clock_asked(body.clock.as_ref())?,
        rated: body.rated,
    };
    let key = create_key(req.headers(), Create::Challenge, &new)?;
    let challenge = challenges
        .challenge(&caller, new, from, key.as_ref())
        .await?;
    Ok(HttpResponse::Created()
        .insert_header((
            header::LOCATION,
            format!("/v1/challenges/{}", challenge.id()),
        ))
        .json(ChallengeView::of(&challenge)))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChallengeListQuery {
    /// `in` (the default): challenges to the key's player; `out`: those it made.
    #[param(schema_with = in_or_out)]
    direction: Option<String>,
    /// From 1.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 100.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

fn in_or_out() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["in", "out"]))
        .build()
}

/// The key's player's open challenges, newest first, a page at a time: those it received
/// (`in`) or made (`out`). On (re)connecting to its stream, a client lists them to catch up.
#[utoipa::path(
    get,
    path = "/v1/challenges",
    tag = "challenges",
    operation_id = "list_challenges",
    security(("bearer" = [])),
    params(ChallengeListQuery),
    responses(
        (status = 200, description = "A page of the open challenges.", body = ChallengeList),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_challenges(
    offers: web::Data<Offers>,
    query: web::Query<ChallengeListQuery>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let direction = match query.direction.as_deref() {
        None | Some("in") => Direction::In,
        Some("out") => Direction::Out,
        Some(_) => return Err(ApiError::bad_request("direction: `in` or `out`")),
    };
    let (page, per_page) = (
        query.page.unwrap_or(1),
        query.per_page.unwrap_or(MAX_PER_PAGE),
    );
    let found = offers.open(&caller, direction, page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(ChallengeList {
            challenges: found.iter().map(ChallengeView::of_offer).collect(),
            page,
            per_page,
        }))
}

/// A challenge, for one of its players.
#[utoipa::path(
    get,
    path = "/v1/challenges/{id}",
    tag = "challenges",
    operation_id = "get_challenge",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The challenge.", body = ChallengeView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_challenge(
    offers: web::Data<Offers>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::challenge_id(&id)?;
    let challenge = offers.get(&caller, id).await?;
    Ok(answer(&challenge))
}

/// Accepts a challenge (an opponent's key). When every opponent has, the game is created
/// with every seat bound and starts: `game_id` names it, and every player's stream gets
/// `game_started`. Accepting again answers the challenge as it is.
#[utoipa::path(
    post,
    path = "/v1/challenges/{id}/accept",
    tag = "challenges",
    operation_id = "accept_challenge",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The challenge, `accepted` with its `game_id` once every opponent has (the game exists). A game refused by the caller's address cap (429 `too_many_games`) or a full store (503) leaves the challenge open.", body = ChallengeView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn accept_challenge(
    req: HttpRequest,
    offers: web::Data<Offers>,
    limits: Option<web::Data<RateLimits>>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let id = wire::challenge_id(&id)?;
    let challenge = offers.accept(&caller, id, from).await?;
    Ok(answer(&challenge))
}

/// Declines a challenge (an opponent's key): it closes for everyone, and the other
/// players' streams get `challenge_declined`.
#[utoipa::path(
    post,
    path = "/v1/challenges/{id}/decline",
    tag = "challenges",
    operation_id = "decline_challenge",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The challenge, `declined`.", body = ChallengeView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn decline_challenge(
    offers: web::Data<Offers>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::challenge_id(&id)?;
    let challenge = offers.decline(&caller, id).await?;
    Ok(answer(&challenge))
}

/// Cancels a challenge (the challenger's key): the opponents' streams get
/// `challenge_canceled`.
#[utoipa::path(
    delete,
    path = "/v1/challenges/{id}",
    tag = "challenges",
    operation_id = "cancel_challenge",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The challenge, `canceled`.", body = ChallengeView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn cancel_challenge(
    offers: web::Data<Offers>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::challenge_id(&id)?;
    let challenge = offers.cancel(&caller, id).await?;
    Ok(answer(&challenge))
}
