//! The lobby: presets, creating a game, the list of open games and taking a seat.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::headers::UNCOMPRESSED;
use crate::api::numbers::Json;
use crate::api::paging::{DEFAULT_PER_PAGE, paging};
use crate::api::ratelimit::RateLimits;
use crate::api::wire::*;
use crate::engine::{Preset, Seed};
use crate::service::{self, GameQueries, Games, NewGame, RequestKey};

use super::*;

/// Every preset of docs/rules.md with its full rule set.
#[utoipa::path(
    get,
    path = "/v1/presets",
    tag = "lobby",
    operation_id = "list_presets",
    responses((status = 200, description = "The six presets.", body = [PresetInfo])),
)]
pub async fn list_presets() -> HttpResponse {
    HttpResponse::Ok().json(Preset::ALL.map(PresetInfo::from))
}

/// Creates a game from a preset plus overrides; seats may be filled with bots.
#[utoipa::path(
    post,
    path = "/v1/games",
    tag = "lobby",
    operation_id = "create_game",
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried create with the same key and body answers the same game, as it is now, made once; the same key with another body, or used for another kind of create, is refused (422). 1 to 128 visible ASCII characters.",
        min_length = 1, max_length = 128, pattern = "^[!-~]+$")),
    request_body = CreateGame,
    responses(
        (status = 201, description = "Created: the spectator view; `Location` names the game.", body = GameView,
            headers(("Location" = String, description = "/v1/games/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_game(
    req: HttpRequest,
    games: web::Data<Games>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreateGame>,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    let body = body.into_inner();
    let preset = crate::api::preset_named(&body.preset)?;
    let deal = body
        .deal
        .as_ref()
        .map(DealBody::parse)
        .transpose()
        .map_err(ApiError::bad_request)?;
    let new = NewGame {
        preset,
        overrides: body.rules.unwrap_or_default(),
        seats: body.seats.unwrap_or(2),
        bots: body.bots.iter().map(|b| (b.seat, b.level)).collect(),
        seed: body
            .seed
            .as_deref()
            .map(Seed::given)
            .transpose()
            .map_err(|e| ApiError::invalid_rules(format!("seed: {e}")))?,
        deal,
        clock: crate::api::clock_asked(body.clock.as_ref())?,
    };
    // The same request is the same game asked for, however the JSON was spaced.
    let key = create_key(req.headers(), service::Create::Game, &new)?;
    let view = games.create(new, from, key.as_ref()).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/games/{}", view.id)))
        .insert_header((header::ETAG, etag(&view)))
        .json(GameView::of(&view)))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GameListQuery {
    /// `waiting` (the default): games with free seats, newest first. `playing`: games in
    /// play, latest started first. `finished`: the latest finished games, latest first.
    #[param(schema_with = list_status)]
    status: Option<String>,
    /// From 1; a page no list could reach (page x per_page past 2^63) is a 400.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

fn list_status() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["waiting", "playing", "finished"]))
        .default(Some("waiting".into()))
        .description(Some(format!(
            "`waiting` (the default): games with free seats, newest first. `playing`: games \
             in play, latest started first (to watch them). `finished`: the latest {} \
             finished games, latest first (to replay them).",
            crate::store::FINISHED_KEPT
        )))
        .build()
}

/// Open games (or games in play, or the latest finished), newest first, paginated.
#[utoipa::path(
    get,
    path = "/v1/games",
    tag = "lobby",
    operation_id = "list_games",
    params(GameListQuery),
    responses(
        (status = 200, description = "A page of open games, of games in play, or of the latest finished games.", body = GameList),
        (status = 400, response = problems::BadRequest),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_games(
    queries: web::Data<GameQueries>,
    query: web::Query<GameListQuery>,
) -> Result<HttpResponse, ApiError> {
    let (page, per_page) = paging(query.page, query.per_page, DEFAULT_PER_PAGE);
    let found = match query.status.as_deref() {
        None | Some("waiting") => queries.list_open(page, per_page).await?,
        Some("playing") => queries.list_playing(page, per_page).await?,
        Some("finished") => queries.list_finished(page, per_page).await?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "status: `waiting`, `playing` or `finished`",
            ));
        }
    };
    let list = GameList {
        games: found.iter().map(GameSummary::of).collect(),
        page,
        per_page,
    };
    Ok(HttpResponse::Ok().json(list))
}

/// Takes a seat. The last seat taken starts the game.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/seats",
    tag = "lobby",
    operation_id = "take_seat",
    params(("id" = uuid::Uuid, Path, description = "The game"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried join with the same key and body gets the same seat and token again (with the seat's view as it is now); the same key with another body is refused (422). The key unlocks the seat's token, so it is a secret as strong as the token: 16 to 128 visible ASCII characters, 6 of them distinct at least, random (a UUID).",
            min_length = 16, max_length = 128, pattern = "^[!-~]+$")),
    request_body = JoinGame,
    security((), ("bearer" = [])),
    responses(
        (status = 201, description = "The seat, its token (shown once, and again to a retry with the same Idempotency-Key and body) and its view. With a player's key the seat is bound to that player: the key opens it as the token does.", body = SeatGranted),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn take_seat(
    games: web::Data<Games>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    body: Json<JoinGame>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(path.into_inner());
    // A seat token means nothing here; a player's key binds the seat to its player.
    let player_key = caller.player_key();
    // The same request is the same name, seat and player, however the JSON was spaced.
    let key = idempotency_key(request.headers(), service::MIN_JOIN_KEY)?.map(|key| {
        let same = serde_json::json!({"name": body.name, "seat": body.seat,
            "player": player_key.and_then(|key| service::players::player_of_key(key.as_str()))});
        RequestKey::for_join(key.to_owned(), id, same.to_string().as_bytes())
    });
    let name = body.seat_name()?;
    let joined = games
        .join(
            id,
            name.as_ref(),
            body.seat_wanted(),
            key.as_ref(),
            player_key,
        )
        .await?;
    Ok(HttpResponse::Created()
        .insert_header((header::ETAG, etag(&joined.view)))
        // The token would share a compressed body with names others chose (BREACH).
        .insert_header(UNCOMPRESSED)
        .json(SeatGranted {
            seat: joined.seat.index(),
            view: GameView::of(&joined.view),
            token: joined.token,
        }))
}
