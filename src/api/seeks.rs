//! Seeks (matchmaking): making one, reading it, canceling it.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::games::create_key;
use crate::api::numbers::Json;
use crate::api::paging::PageQuery;
use crate::api::ratelimit::RateLimits;
use crate::api::wire::{self, CreateSeek, SeekList, SeekView};
use crate::domain::Caller;
use crate::service::{Create, NewSeek, Seeks, Wish};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/v1/seeks")
            .route(web::post().to(create_seek))
            .route(web::get().to(list_seeks))
            .route(web::head().to(list_seeks)),
    )
    .service(
        web::resource("/v1/seeks/{id}")
            .route(web::get().to(get_seek))
            .route(web::head().to(get_seek))
            .route(web::delete().to(cancel_seek)),
    );
}

fn answer(seek: &crate::service::Seek) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(SeekView::of(seek))
}

/// Seeks a game with anyone who wants the same one (the same preset, seats, clock and
/// `rated`): as soon as enough such seeks of distinct players wait, through any server
/// process, they are matched into one game, seats drawn at random, and every player's
/// stream gets `game_started`. With `fallback`, the missing seats are filled with that
/// built-in level after `after_secs`. A seek waits 5 minutes at most (then
/// `seek_expired`); a player has at most 5 waiting. A player already waiting in the same
/// pool is answered that seek (200), and nothing new is made.
#[utoipa::path(
    post,
    path = "/v1/seeks",
    tag = "challenges",
    operation_id = "create_seek",
    security(("bearer" = [])),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the same seek again (as it is now), made once; the same key with another body is refused (422). 1 to 128 visible ASCII characters, kept a day, per player.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$"),
    ),
    request_body = CreateSeek,
    responses(
        (status = 201, description = "Made: the seek, `waiting`, or `matched` with its `game_id` when it completed a game; `Location` names it.", body = SeekView,
            headers(("Location" = String, description = "/v1/seeks/{id}"))),
        (status = 200, description = "The player already waits in this pool: that seek, as it is; nothing new was made.", body = SeekView,
            headers(("Location" = String, description = "/v1/seeks/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_seek(
    req: HttpRequest,
    seeks: web::Data<Seeks>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreateSeek>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let preset = crate::api::preset_named(&body.preset)?;
    let mut new = NewSeek {
        wish: Wish {
            preset,
            seats: body.seats.unwrap_or(2),
            clock: crate::api::clock_asked(body.clock.as_ref())?,
            rated: body.rated,
        },
        fallback: body
            .fallback
            .map(|f| (Duration::from_secs(f.after_secs), f.level)),
        from: None,
    };
    // The same request retried from another address is the same request.
    let key = create_key(req.headers(), Create::Seek, &new)?;
    new.from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let (seek, made) = seeks.seek(&caller, new, key.as_ref()).await?;
    let mut answer = if made {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(answer
        .insert_header((header::LOCATION, format!("/v1/seeks/{}", seek.id())))
        .json(SeekView::of(&seek)))
}

/// The key's player's waiting seeks, newest first (a player has at most 5): a seek's id
/// lost is found here, to read or cancel it.
#[utoipa::path(
    get,
    path = "/v1/seeks",
    tag = "challenges",
    operation_id = "list_seeks",
    security(("bearer" = [])),
    params(PageQuery),
    responses(
        (status = 200, description = "A page of the player's waiting seeks.", body = SeekList),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_seeks(
    seeks: web::Data<Seeks>,
    query: web::Query<PageQuery>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = query.get();
    let seeks = seeks.my_seeks(&caller, page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(SeekList {
            seeks: seeks.iter().map(SeekView::of).collect(),
            page,
            per_page,
        }))
}

/// A seek, for its player.
#[utoipa::path(
    get,
    path = "/v1/seeks/{id}",
    tag = "challenges",
    operation_id = "get_seek",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The seek.", body = SeekView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_seek(
    seeks: web::Data<Seeks>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::seek_id(&id)?;
    let seek = seeks.my_seek(&caller, id).await?;
    Ok(answer(&seek))
}

/// Cancels a waiting seek (its player's key); a seek matched, canceled or expired already
/// is answered as it is.
#[utoipa::path(
    delete,
    path = "/v1/seeks/{id}",
    tag = "challenges",
    operation_id = "cancel_seek",
    security(("bearer" = [])),
    params(("id" = String, Path, format = Uuid)),
    responses(
        (status = 200, description = "The seek, `canceled` (or as it was, when it no longer waited).", body = SeekView),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn cancel_seek(
    seeks: web::Data<Seeks>,
    id: web::Path<String>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = wire::seek_id(&id)?;
    let seek = seeks.cancel_seek(&caller, id).await?;
    Ok(answer(&seek))
}
