//! Players: creating one, profiles, the key's own player and a new key.

use actix_web::http::header;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::api::client::creator_of;
use crate::api::error::{ApiError, problems};
use crate::api::games::{KEEP_ALIVE, idempotency_key, named_frame, sse_answer};
use crate::api::headers::{UNCOMPRESSED, get_and_head};
use crate::api::numbers::Json;
use crate::api::paging::{DEFAULT_PER_PAGE, paging};
use crate::api::ratelimit::RateLimits;
use crate::api::streams::StreamSlots;
use crate::api::wire::{
    self, CreatePlayer, Leaderboard, LeaderboardEntry, PlayerEventView, PlayerGame, PlayerGameList,
    PlayerKey, PlayerProfile, RatingHistoryPoint, whole,
};
use crate::domain::Caller;
use crate::service::{
    self, Create, GameQueries, Leagues, PlayerNews, Players, Ratings, RequestKey, Status,
};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // `me` before `{who}`, which would take it for a name (and `me` is reserved).
    cfg.service(web::resource("/v1/players").route(web::post().to(create_player)))
        .service(get_and_head("/v1/players/me", my_profile))
        .service(web::resource("/v1/players/me/key").route(web::post().to(rotate_key)))
        .service(get_and_head("/v1/players/me/games", my_games))
        .service(get_and_head("/v1/players/me/events", my_events))
        .service(get_and_head("/v1/players/{who}", get_player))
        .service(get_and_head("/v1/players/{who}/games", player_games))
        .service(get_and_head(
            "/v1/players/{who}/ratings/{preset}/history",
            rating_history,
        ))
        .service(get_and_head("/v1/leaderboard/{preset}", leaderboard));
}

/// A player answer: it carries a key, so it is never compressed along with text others
/// chose (BREACH), and never cached.
fn with_key(mut answer: actix_web::HttpResponseBuilder, keyed: PlayerKey) -> HttpResponse {
    answer
        .insert_header(UNCOMPRESSED)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(keyed)
}

/// Creates a player: its profile and its key, shown once.
#[utoipa::path(
    post,
    path = "/v1/players",
    tag = "players",
    operation_id = "create_player",
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried creation with the same key and body gets the same player and key again (its profile as it is now), made once; the same key with another body is refused (422). The key unlocks the player's key, so it is a secret as strong as that: 16 to 128 visible ASCII characters, 6 of them distinct at least, random (a UUID). Kept a day; once the player's key was replaced, a retry is refused (403).",
        min_length = 16, max_length = 128, pattern = "^[!-~]+$")),
    request_body = CreatePlayer,
    responses(
        (status = 201, description = "Created: the profile and the key (shown once, and again to a retry with the same Idempotency-Key and body); `Location` names the player.", body = PlayerKey,
            headers(("Location" = String, description = "/v1/players/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 403, response = problems::Forbidden),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_player(
    req: HttpRequest,
    players: web::Data<Players>,
    limits: Option<web::Data<RateLimits>>,
    body: Json<CreatePlayer>,
) -> Result<HttpResponse, ApiError> {
    let from = creator_of(&req, limits.as_ref().map_or(0, |l| l.proxy_hops()));
    // The same request is the same name and kind, however the JSON was spaced.
    let key = idempotency_key(req.headers(), service::MIN_JOIN_KEY)?.map(|key| {
        let same = serde_json::json!({"name": body.name, "bot": body.bot});
        RequestKey::for_create(key.to_owned(), Create::Player, same.to_string().as_bytes())
    });
    let name = body.player_name()?;
    let keyed = players
        .create_player(&name, body.bot, from, key.as_ref())
        .await?;
    let mut answer = HttpResponse::Created();
    answer.insert_header((
        header::LOCATION,
        format!("/v1/players/{}", keyed.profile.id),
    ));
    Ok(with_key(answer, PlayerKey::of(keyed)))
}

/// A player's public profile, by id or name (a built-in level by its name).
#[utoipa::path(
    get,
    path = "/v1/players/{who}",
    tag = "players",
    operation_id = "get_player",
    params(("who" = String, Path, description = "A player's id or name (ignoring case), or a built-in level")),
    responses(
        (status = 200, description = "The profile.", body = PlayerProfile),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_player(
    leagues: web::Data<Leagues>,
    who: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let profile = leagues.profile(&wire::who(&who)).await?;
    Ok(HttpResponse::Ok().json(PlayerProfile::of(&profile)))
}

/// A player's rating in a preset after each of its latest rated games there (at most
/// 100), oldest first: the points of a chart. Empty before its first rated game there. A
/// game of a duplicate deal whose twin is in play has no point until the deal is done.
#[utoipa::path(
    get,
    path = "/v1/players/{who}/ratings/{preset}/history",
    tag = "players",
    operation_id = "rating_history",
    params(
        ("who" = String, Path, description = "A player's id or name (ignoring case), or a built-in level"),
        ("preset" = String, Path, description = "A preset's name, e.g. `all_fives`"),
    ),
    responses(
        (status = 200, description = "The points, oldest first.", body = Vec<RatingHistoryPoint>),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn rating_history(
    queries: web::Data<GameQueries>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (who, preset) = path.into_inner();
    let preset: crate::engine::Preset = preset
        .parse()
        .map_err(|_| ApiError::not_found(format!("no preset named {preset:?}")))?;
    let points = queries.rating_history(&wire::who(&who), preset).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(
            points
                .iter()
                .map(RatingHistoryPoint::of)
                .collect::<Vec<_>>(),
        ))
}

/// The profile of the key's player.
#[utoipa::path(
    get,
    path = "/v1/players/me",
    tag = "players",
    operation_id = "my_profile",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The key's player.", body = PlayerProfile),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn my_profile(
    leagues: web::Data<Leagues>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let profile = leagues.my_profile(&caller).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(PlayerProfile::of(&profile)))
}

/// A new key for the key's player; the old one stops working at once.
#[utoipa::path(
    post,
    path = "/v1/players/me/key",
    tag = "players",
    operation_id = "rotate_player_key",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The profile and the new key (shown once).", body = PlayerKey),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn rotate_key(
    leagues: web::Data<Leagues>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let keyed = leagues.rotate_key(&caller).await?;
    Ok(with_key(HttpResponse::Ok(), PlayerKey::of(keyed)))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GamesQuery {
    /// `playing` (games not finished, those still waiting for players included) or
    /// `finished`; every game without it.
    #[param(schema_with = playing_or_finished)]
    status: Option<String>,
    /// From 1.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

impl GamesQuery {
    fn status(&self) -> Result<Option<Status>, ApiError> {
        match self.status.as_deref() {
            None => Ok(None),
            Some("playing") => Ok(Some(Status::Playing)),
            Some("finished") => Ok(Some(Status::Finished)),
            Some(_) => Err(ApiError::bad_request("status: `playing` or `finished`")),
        }
    }
}

fn playing_or_finished() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["playing", "finished"]))
        .build()
}

/// The key's player's games, newest first, each with the player's seat. On (re)connecting
/// to its stream, a client lists `status=playing` to catch up.
#[utoipa::path(
    get,
    path = "/v1/players/me/games",
    tag = "players",
    operation_id = "my_games",
    security(("bearer" = [])),
    params(GamesQuery),
    responses(
        (status = 200, description = "A page of the player's games.", body = PlayerGameList),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn my_games(
    queries: web::Data<GameQueries>,
    query: web::Query<GamesQuery>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let status = query.status()?;
    let (page, per_page) = paging(query.page, query.per_page, DEFAULT_PER_PAGE);
    let found = queries.my_games(&caller, status, page, per_page).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(PlayerGameList {
            games: found.iter().filter_map(PlayerGame::of).collect(),
            page,
            per_page,
        }))
}

/// A player's games, newest first, each with the player's seat and how it ended for it:
/// what its profile page lists. Anyone may read them, as anyone may watch a game; a game
/// of a duplicate deal whose twin is in play shows as made (in play, version 1, nothing
/// of how it went) until the deal is done. A built-in level's games are not indexed: its
/// list is empty (and its profile's `games` null); its matches and tournaments are listed.
#[utoipa::path(
    get,
    path = "/v1/players/{who}/games",
    tag = "players",
    operation_id = "player_games",
    params(("who" = String, Path, description = "A player's id or name (ignoring case)"), GamesQuery),
    responses(
        (status = 200, description = "A page of the player's games.", body = PlayerGameList),
        (status = 400, response = problems::BadRequest),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn player_games(
    queries: web::Data<GameQueries>,
    who: web::Path<String>,
    query: web::Query<GamesQuery>,
) -> Result<HttpResponse, ApiError> {
    let status = query.status()?;
    let (page, per_page) = paging(query.page, query.per_page, DEFAULT_PER_PAGE);
    let found = queries
        .player_games(&wire::who(&who), status, page, per_page)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(PlayerGameList {
            games: found.iter().filter_map(PlayerGame::of).collect(),
            page,
            per_page,
        }))
}

/// Server-Sent Events of the key's player, from now on: `challenge` (one received),
/// `challenge_declined`, `challenge_canceled` and `challenge_expired` for the challenges
/// it is in, `seek_expired`, `match_updated` for its matches, and `game_started` and
/// `game_finished` for the games its seats are bound in.
/// On (re)connecting, list `GET /v1/players/me/games?status=playing` and
/// `GET /v1/challenges` to catch up; on `resync`, list again.
#[utoipa::path(
    get,
    path = "/v1/players/me/events",
    tag = "players",
    operation_id = "my_events",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "`text/event-stream` of `challenge`, `challenge_declined`, `challenge_canceled`, `challenge_expired`, `seek_expired`, `match_updated`, `game_started` and `game_finished` events, each a PlayerEvent in `data`; a comment every 15 s keeps it alive. Nothing is replayed. A stream that fell behind gets a `resync` event, after which the client lists its games again.",
            content_type = "text/event-stream", body = PlayerEventFrame),
        (status = 401, response = problems::Unauthorized),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn my_events(
    players: web::Data<Players>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let news = players.events::<PlayerNews>(&caller).await?;
    let slot = slots.acquire_for(&request)?;
    let hello = web::Bytes::from_static(b": player\n\n");
    // The slot travels with the stream: given back when it ends or the client goes.
    let frames = futures_util::stream::unfold((news, slot), |(mut news, slot)| async move {
        match tokio::time::timeout(Duration::from_secs(15), news.next()).await {
            Ok(Some(item)) => {
                let wire = PlayerEventView::of(&item);
                Some((named_frame(wire.name(), &wire), (news, slot)))
            }
            Ok(None) => None,
            Err(_) => Some((KEEP_ALIVE, (news, slot))),
        }
    });
    let stream = futures_util::stream::once(async move { hello })
        .chain(frames)
        .map(Ok::<_, actix_web::Error>);
    Ok(sse_answer(&request, stream))
}

/// One event of a player's stream as it travels: `event` names it, `data` holds a
/// `PlayerEvent` as JSON.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)] // documentation of the stream's framing: the frame is written by hand
pub struct PlayerEventFrame {
    #[schema(example = "game_started")]
    event: String,
    #[schema(schema_with = player_event_json)]
    data: String,
}

/// A string holding a `PlayerEvent` as JSON (OpenAPI 3.1's `contentSchema`).
fn player_event_json() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .description(Some("A `PlayerEvent`, as JSON."))
        .content_media_type("application/json")
        .content_schema(Some(utoipa::openapi::Ref::from_schema_name("PlayerEvent")))
        .examples([
            r#"{"type":"game_started","game_id":"0b9f3a52-8f0e-4a55-9f0c-5c8d9c4e7b21","seat":1,"preset":"all_fives","rated":false,"players":["bob","alice"]}"#,
        ])
        .build()
}

/// A leaderboard's page holds this many unless the query says.
const LEADERBOARD_PER_PAGE: usize = 50;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LeaderboardQuery {
    /// From 1.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 50.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
    /// The older name of `per_page`, still taken (both given: they must agree).
    #[param(minimum = 1, maximum = 100)]
    limit: Option<usize>,
}

/// A preset's leaderboard: the players (built-in levels included) with at least one rated
/// game there, highest rating first, provisional ratings after every established one.
#[utoipa::path(
    get,
    path = "/v1/leaderboard/{preset}",
    tag = "players",
    operation_id = "leaderboard",
    params(("preset" = String, Path, description = "A preset's name, e.g. `all_fives`"), LeaderboardQuery),
    responses(
        (status = 200, description = "A page of the leaderboard.", body = Leaderboard),
        (status = 400, response = problems::BadRequest),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn leaderboard(
    ratings: web::Data<Ratings>,
    preset: web::Path<String>,
    query: web::Query<LeaderboardQuery>,
) -> Result<HttpResponse, ApiError> {
    let preset: crate::engine::Preset = preset
        .parse()
        .map_err(|_| ApiError::not_found(format!("no preset named {:?}", preset.as_str())))?;
    let asked = match (query.per_page, query.limit) {
        (Some(a), Some(b)) if a != b => {
            return Err(ApiError::bad_request(
                "per_page and limit: one name for one size; send per_page",
            ));
        }
        (a, b) => a.or(b),
    };
    let (page, per_page) = paging(query.page, asked, LEADERBOARD_PER_PAGE);
    let ranked = ratings.leaderboard(preset, page, per_page).await?;
    let first = (page - 1) * per_page;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(Leaderboard {
            preset: preset.name(),
            players: ranked
                .into_iter()
                .enumerate()
                .map(|(i, r)| LeaderboardEntry {
                    rank: first + i + 1,
                    id: r.id,
                    name: r.name,
                    bot: r.bot,
                    rating: whole(r.rating.rating),
                    deviation: whole(r.rating.deviation),
                    games: r.games,
                    provisional: r.rating.provisional(),
                })
                .collect(),
            page,
            per_page,
            limit: per_page,
        }))
}
