//! The game resources of API.md: presets, lobby, view, moves, events, log, export.
//!
//! Handlers are thin: they parse the request into domain types (a bad tile, an unknown
//! field or a malformed token stops here), call one [`GameService`] function and turn its
//! answer into a view. They know no rules.

use std::time::Duration;

use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::address::AddressKey;
use crate::api::error::{ApiError, problems};
use crate::api::http::{UNCOMPRESSED, VARY_BY_TOKEN, readable};
use crate::api::ratelimit::RateLimits;
use crate::api::streams::StreamSlots;
use crate::api::wire::*;
use crate::engine::{Preset, Seed};
use crate::service::{self, GameService, NewGame, RequestKey, Seen, Watched};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(readable("/v1/presets", list_presets))
        .service(readable("/v1/games", list_games).route(web::post().to(create_game)))
        .service(readable("/v1/lobby/events", lobby_events))
        .service(readable("/v1/games/{id}", get_game))
        .service(web::resource("/v1/games/{id}/seats").route(web::post().to(take_seat)))
        .service(web::resource("/v1/games/{id}/moves").route(web::post().to(make_move)))
        .service(readable("/v1/games/{id}/events", game_events))
        .service(readable("/v1/games/{id}/log", game_log))
        .service(readable("/v1/games/{id}/export", export_game));
}

impl From<service::Error> for ApiError {
    fn from(e: service::Error) -> ApiError {
        use service::Error as E;
        match e {
            E::NotFound => ApiError::NotFound("no such game (or it expired)".into()),
            E::Unauthorized(why) => ApiError::Unauthorized(why.into()),
            E::NotYourTurn(why) => ApiError::NotYourTurn(why),
            E::VersionConflict { current } => ApiError::VersionConflict {
                current_version: current,
            },
            E::NotStarted => ApiError::GameNotStarted(e.to_string()),
            E::Finished => ApiError::GameFinished(e.to_string()),
            E::SeatTaken(why) => ApiError::SeatTaken(why),
            E::SeatAbandoned => ApiError::SeatAbandoned(e.to_string()),
            E::GameFull => ApiError::GameFull(e.to_string()),
            E::IllegalMove { message, legal } => ApiError::IllegalMove {
                detail: message,
                legal_moves: MoveBody::listed(&legal),
            },
            E::InvalidRules(why) => ApiError::InvalidRules(why),
            E::IdempotencyKeyReused => ApiError::IdempotencyKeyReused(e.to_string()),
            E::BadRequest(why) => ApiError::BadRequest(why),
            E::NotFinished => ApiError::PreconditionFailed(
                "the export is available once the match is finished".into(),
            ),
            E::Store(store) => store.into(),
            E::Unsettled { cause, fate } => ApiError::StoreUnsettled {
                cause: cause.to_string(),
                outcome: fate.as_str(),
            },
            E::Internal(why) => ApiError::Internal(why),
        }
    }
}

/// The bearer token, if the request carries one. A malformed `Authorization` is refused
/// rather than treated as a spectator, so a client's mistake does not go unnoticed.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::Unauthorized("malformed Authorization header".into()))?;
    match text.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(Some(token.trim()))
        }
        _ => Err(ApiError::Unauthorized(
            "send the seat's token as `Authorization: Bearer <token>`".into(),
        )),
    }
}

fn etag(s: &Seen) -> String {
    match s.viewer {
        Some(seat) => format!("\"{}-s{seat}\"", s.version),
        None => format!("\"{}\"", s.version),
    }
}

/// A 200 with the ETag of `s`'s version and viewer.
fn view_response(s: &Seen, body: impl serde::Serialize) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::ETAG, etag(s)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(body)
}

fn game_id(path: &web::Path<uuid::Uuid>) -> String {
    path.to_string()
}

/// Every preset of RULES.md with its full rule set.
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
    request_body = CreateGame,
    responses(
        (status = 201, description = "Created: the spectator view; `Location` names the game.", body = GameView,
            headers(("Location" = String, description = "/v1/games/{id}"))),
        (status = 400, response = problems::BadRequest),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 429, response = problems::RateLimited),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn create_game(
    req: HttpRequest,
    games: web::Data<GameService>,
    limits: Option<web::Data<RateLimits>>,
    body: web::Json<CreateGame>,
) -> Result<HttpResponse, ApiError> {
    // The address the rate limits count (behind trusted proxies, the forwarded one).
    let peer = req.peer_addr().map(|a| a.ip());
    let from = match &limits {
        Some(limits) => limits.client_address(peer, req.headers()),
        None => peer,
    };
    let body = body.into_inner();
    let preset: Preset = body
        .preset
        .parse()
        .map_err(|e: crate::engine::RulesError| ApiError::InvalidRules(e.to_string()))?;
    let deal = body
        .deal
        .as_ref()
        .map(DealBody::parse)
        .transpose()
        .map_err(ApiError::BadRequest)?;
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
            .map_err(|e| ApiError::InvalidRules(format!("seed: {e}")))?,
        deal,
        clock: body
            .clock
            .as_ref()
            .map(ClockBody::parse)
            .transpose()
            .map_err(ApiError::InvalidRules)?,
    };
    let seen = games.create(new, from.map(AddressKey::from)).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/games/{}", seen.id)))
        .insert_header((header::ETAG, etag(&seen)))
        .json(GameView::of(&seen)))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only `waiting` (games with free seats) is listed.
    #[param(schema_with = waiting_only)]
    status: Option<String>,
    /// From 1; a page no list could reach (page x per_page past 2^63) is a 400.
    #[param(minimum = 1)]
    page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    per_page: Option<usize>,
}

fn waiting_only() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .enum_values(Some(["waiting"]))
        .description(Some("Only `waiting` (games with free seats) is listed."))
        .build()
}

/// Open games, newest first, paginated.
#[utoipa::path(
    get,
    path = "/v1/games",
    tag = "lobby",
    operation_id = "list_games",
    params(ListQuery),
    responses(
        (status = 200, description = "A page of open games.", body = GameList),
        (status = 400, response = problems::BadRequest),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn list_games(
    games: web::Data<GameService>,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    if query.status.as_deref().is_some_and(|s| s != "waiting") {
        return Err(ApiError::BadRequest(
            "status: only `waiting` games are listed".into(),
        ));
    }
    let page = query.page.unwrap_or(1);
    let per_page = query.per_page.unwrap_or(20);
    let found = games.list_open(page, per_page).await?;
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
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried join with the same key and body gets the same seat and token again (with the seat's view as it is now); the same key with another body is refused (422). The key unlocks the seat's token, so it is a secret as strong as the token: 16 to 128 visible ASCII characters, random (a UUID).",
            min_length = 16, max_length = 128, pattern = "^[!-~]+$")),
    request_body = JoinGame,
    responses(
        (status = 201, description = "The seat, its token (shown once, and again to a retry with the same Idempotency-Key and body) and its view.", body = SeatGranted),
        (status = 400, response = problems::BadRequest),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn take_seat(
    games: web::Data<GameService>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    body: web::Json<JoinGame>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path);
    // The same request is the same name and seat, however the JSON was spaced.
    let key = idempotency_key(request.headers(), service::MIN_JOIN_KEY)?.map(|key| {
        let same = serde_json::json!({"name": body.name, "seat": body.seat});
        RequestKey::for_join(key.to_owned(), &id, same.to_string().as_bytes())
    });
    let joined = games.join(&id, &body.name, body.seat, key.as_ref()).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::ETAG, etag(&joined.seen)))
        // The token would share a compressed body with names others chose (BREACH).
        .insert_header(UNCOMPRESSED)
        .json(SeatGranted {
            seat: joined.seat,
            view: GameView::of(&joined.seen),
            token: joined.token,
        }))
}

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
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "Your seat's view with a token, else the spectator's.", body = GameView,
            headers(("ETag" = String, description = "The version (and seat) of this view."))),
        (status = 304, description = "Unchanged since the ETag given."),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_game(
    games: web::Data<GameService>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    query: web::Query<ViewQuery>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path);
    let token = bearer(request.headers())?;
    let seen = match (query.after, query.wait) {
        (Some(after), wait) => {
            // Held while the poll waits; given back when it answers or is dropped.
            let _slot = slots.acquire_for(&request)?;
            games
                .view_after(
                    &id,
                    token,
                    after,
                    Duration::from_secs(wait.unwrap_or(30).min(30)),
                )
                .await?
        }
        (None, Some(_)) => {
            return Err(ApiError::BadRequest(
                "wait goes with after=<version>".into(),
            ));
        }
        (None, None) => games.view(&id, token).await?,
    };
    let tag = etag(&seen);
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
    let mut res = view_response(&seen, GameView::of(&seen));
    res.headers_mut().insert(VARY_BY_TOKEN.0, VARY_BY_TOKEN.1);
    Ok(res)
}

/// The request's `Idempotency-Key`, if any: `min` to 128 visible ASCII characters.
fn idempotency_key(headers: &HeaderMap, min: usize) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .filter(|k| (min..=128).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .map(Some)
        .ok_or_else(|| {
            ApiError::BadRequest(if min > 1 {
                format!(
                    "Idempotency-Key: {min} to 128 visible ASCII characters on a join (its retry \
                     gets the seat's token: use a random key, such as a UUID)"
                )
            } else {
                "Idempotency-Key: 1 to 128 visible ASCII characters".into()
            })
        })
}

/// Makes a move. Built-in bots whose turn follows move before the answer.
#[utoipa::path(
    post,
    path = "/v1/games/{id}/moves",
    tag = "play",
    operation_id = "make_move",
    params(("id" = uuid::Uuid, Path, description = "The game"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "A retried request with the same key and body gets the first answer again; 1 to 128 visible ASCII characters.",
            min_length = 1, max_length = 128, pattern = "^[!-~]+$")),
    security(("seat_token" = [])),
    request_body = MoveBody,
    responses(
        (status = 200, description = "Your new view and what the move caused.", body = MoveResult),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn make_move(
    games: web::Data<GameService>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path);
    let token = bearer(request.headers())?.ok_or_else(|| {
        ApiError::Unauthorized(
            "a move needs the seat's token: `Authorization: Bearer <token>`".into(),
        )
    })?;
    let parsed: MoveBody = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the body is not acceptable: {e}")))?;
    let key = idempotency_key(request.headers(), 1)?
        .map(|key| RequestKey::new(key.to_owned(), token, &body));
    let request = parsed.to_request();
    let moved = games.make_move(&id, token, request, key.as_ref()).await?;
    Ok(HttpResponse::Ok().json(MoveResult::of(&moved)))
}

/// One Server-Sent Event per stored version: public facts, and on a seat's stream that
/// seat's view.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct VersionEvent {
    pub version: u64,
    pub status: service::Status,
    pub turn: Option<u8>,
    /// The moves stored with this version, in public form.
    pub moves: Vec<ExportedMove>,
    /// Only on a stream opened with a seat's token: that seat's view, loaded right after
    /// this version was stored (its `version` may be later when moves followed quickly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<GameView>,
}

/// One event of the stream as it travels: the SSE fields, `data` holding a `VersionEvent`
/// as JSON.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)] // documentation of the stream's framing: the frame is written by hand
pub struct VersionEventFrame {
    /// The version, as text (what a client sends back in `Last-Event-ID`).
    #[schema(example = "3")]
    id: String,
    #[schema(example = "version")]
    event: String,
    #[schema(schema_with = version_event_json)]
    data: String,
}

/// A string holding a `VersionEvent` as JSON (OpenAPI 3.1's `contentSchema`).
fn version_event_json() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .description(Some("A `VersionEvent`, as JSON."))
        .content_media_type("application/json")
        .content_schema(Some(utoipa::openapi::Ref::from_schema_name("VersionEvent")))
        .examples([
            r#"{"version":3,"status":"playing","turn":0,"moves":[{"seat":1,"move":{"type":"draw"}}]}"#,
        ])
        .build()
}

fn sse_frame(Watched { event, seen }: &Watched) -> web::Bytes {
    let wire = VersionEvent {
        version: event.version,
        status: event.status,
        turn: event.turn,
        moves: event.moves.iter().map(|&m| ExportedMove::of(m)).collect(),
        view: seen.as_ref().map(GameView::of),
    };
    let json = serde_json::to_string(&wire).expect("events serialise");
    web::Bytes::from(format!(
        "id: {}\nevent: version\ndata: {json}\n\n",
        event.version
    ))
}

/// Server-Sent Events: one event per new version (`id:` = version); `Last-Event-ID`
/// resumes. Public facts only, so no token is needed; with a seat's token each event also
/// carries that seat's view (a bot's one stream: no request after each event).
#[utoipa::path(
    get,
    path = "/v1/games/{id}/events",
    tag = "play",
    operation_id = "game_events",
    params(("id" = uuid::Uuid, Path, description = "The game"),
        ("Last-Event-ID" = Option<u64>, Header, nullable = false, description = "Resume after this version: the stored events after it follow (when the capped history no longer reaches back, one event for the current version stands for the missed ones).")),
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "`text/event-stream` of `version` events, each a VersionEvent in `data`, starting with the current version; with a seat's token each carries that seat's `view`; a comment every 15 s keeps it alive; the stream ends after a finished game's last event.",
            content_type = "text/event-stream", body = VersionEventFrame),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn game_events(
    games: web::Data<GameService>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path);
    let after = match request.headers().get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::BadRequest("Last-Event-ID is a version number".into()))?,
        ),
    };
    let slot = slots.acquire_for(&request)?;
    let feed = games.events(&id, after, bearer(request.headers())?).await?;
    let hello = web::Bytes::from(format!(": game {id} at version {}\n\n", feed.current));
    // A comment after 15 s without an event keeps proxies from closing the stream.
    // The slot travels with the feed: given back when the feed ends, or when actix drops
    // the body because the client went away.
    let frames =
        futures_util::stream::unfold((feed.events, slot), |(mut events, slot)| async move {
            match tokio::time::timeout(Duration::from_secs(15), events.next()).await {
                Ok(Some(event)) => Some((sse_frame(&event), (events, slot))),
                Ok(None) => None,
                Err(_) => Some((web::Bytes::from_static(b": keep-alive\n\n"), (events, slot))),
            }
        });
    let stream = futures_util::stream::once(async move { hello })
        .chain(frames)
        .map(Ok::<_, actix_web::Error>);
    let mut answer = sse_answer(&request, stream);
    // A seat's stream carries its view.
    answer
        .headers_mut()
        .insert(VARY_BY_TOKEN.0, VARY_BY_TOKEN.1);
    Ok(answer)
}

/// A stream of Server-Sent Events as it is answered: never compressed (a compressor would
/// hold events back), closed when it ends (a client reconnects for the next one anyway,
/// and a stopping server is not kept waiting by a connection left idle), and empty for a
/// `HEAD` (actix drops a HEAD answer's body but still reads it to its end: an endless
/// stream would hold the connection for good).
fn sse_answer(
    request: &HttpRequest,
    stream: impl futures_util::Stream<Item = Result<web::Bytes, actix_web::Error>> + 'static,
) -> HttpResponse {
    let mut answer = HttpResponse::Ok();
    answer
        .force_close()
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("X-Accel-Buffering", HeaderValue::from_static("no")))
        .insert_header(UNCOMPRESSED);
    if request.method() == actix_web::http::Method::HEAD {
        return answer.streaming(futures_util::stream::empty::<
            Result<web::Bytes, actix_web::Error>,
        >());
    }
    answer.streaming(stream)
}

/// Server-Sent Events of the lobby: games opened, filled and finished, from now on. To
/// follow the list of open games without polling it: open this, then list, then apply
/// the news; on `resync` (news was lost), list again.
#[utoipa::path(
    get,
    path = "/v1/lobby/events",
    tag = "lobby",
    operation_id = "lobby_events",
    security(()),
    responses(
        (status = 200, description = "`text/event-stream` of `opened`, `filled` and `finished` events, each a LobbyEvent in `data`; a comment every 15 s keeps it alive. Nothing is replayed: list the open games after the stream opens. A stream that fell behind (news came faster than it was read) is not closed: it gets a `resync` event (`{\"type\":\"resync\"}`), after which the client lists the open games again, and the news goes on.",
            content_type = "text/event-stream", body = LobbyEventFrame),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn lobby_events(
    games: web::Data<GameService>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let slot = slots.acquire_for(&request)?;
    let news = games.lobby().await?;
    let hello = web::Bytes::from_static(b": lobby\n\n");
    // The slot travels with the stream, as for a game's.
    let frames = futures_util::stream::unfold((news, slot), |(mut news, slot)| async move {
        loop {
            match tokio::time::timeout(Duration::from_secs(15), news.next()).await {
                Ok(Some(item)) => {
                    let wire = match &item {
                        service::LobbyItem::News(event) => match LobbyEventView::of(event) {
                            Some(wire) => wire,
                            None => continue,
                        },
                        service::LobbyItem::Resync => LobbyEventView::Resync {},
                    };
                    let json = serde_json::to_string(&wire).expect("lobby news serialises");
                    let frame = format!("event: {}\ndata: {json}\n\n", wire.name());
                    return Some((web::Bytes::from(frame), (news, slot)));
                }
                Ok(None) => return None,
                Err(_) => {
                    let alive = web::Bytes::from_static(b": keep-alive\n\n");
                    return Some((alive, (news, slot)));
                }
            }
        }
    });
    let stream = futures_util::stream::once(async move { hello })
        .chain(frames)
        .map(Ok::<_, actix_web::Error>);
    Ok(sse_answer(&request, stream))
}

/// One event of the lobby's stream as it travels: `event` names it, `data` holds a
/// `LobbyEvent` as JSON.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)] // documentation of the stream's framing: the frame is written by hand
pub struct LobbyEventFrame {
    #[schema(example = "opened")]
    event: String,
    /// A `LobbyEvent`, as JSON.
    #[schema(
        example = r#"{"type":"opened","game":{"game_id":"0b9f3a52-8f0e-4a55-9f0c-5c8d9c4e7b21","preset":"all_fives","seats":2,"free_seats":[0],"created_ms":1795000000000}}"#
    )]
    data: String,
}

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
    /// `(after, limit)`; a refusal names the parameter.
    fn parse(&self) -> Result<(u64, u64), ApiError> {
        let number = |text: &Option<String>, name: &str, default: u64| match text {
            None => Ok(default),
            Some(text) => text.parse::<u64>().map_err(|_| {
                ApiError::BadRequest(format!(
                    "{name}: a whole number, not {:?}",
                    text.chars().take(24).collect::<String>()
                ))
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
    security((), ("seat_token" = [])),
    responses(
        (status = 200, description = "The moves after `after` (at most `limit`) and what each caused; `next` asks for the following page.", body = GameLog),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn game_log(
    games: web::Data<GameService>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    query: web::Query<LogQuery>,
) -> Result<HttpResponse, ApiError> {
    let (after, limit) = query.parse()?;
    let log = games
        .log(&game_id(&path), bearer(request.headers())?, after, limit)
        .await?;
    let mut res = view_response(&log.seen, GameLog::of(&log));
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
        (status = 412, response = problems::PreconditionFailed),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn export_game(
    games: web::Data<GameService>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(&path);
    let export = games.export(&id).await?;
    let mut answer = HttpResponse::Ok();
    answer
        .insert_header((header::ETAG, etag(&export.seen)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .content_type("application/json");
    // actix reads a HEAD answer's body to its end before dropping it: make none.
    if request.method() == actix_web::http::Method::HEAD {
        return Ok(answer.streaming(futures_util::stream::empty::<
            Result<web::Bytes, actix_web::Error>,
        >()));
    }
    // Made chunk by chunk as the client reads: a long match's export is never whole here.
    let chunks = futures_util::stream::unfold(ExportWriter::of(export), move |mut writer| {
        let id = id.clone();
        async move {
            let chunk = match writer.chunk()? {
                Ok(bytes) => Ok(web::Bytes::from(bytes)),
                Err(e) => {
                    tracing::error!(game_id = %id, error = %e, "an export was cut short");
                    Err(actix_web::error::ErrorInternalServerError(e.to_string()))
                }
            };
            Some((chunk, writer))
        }
    });
    Ok(answer.streaming(chunks))
}
