//! The event streams (Server-Sent Events) of a game and of the lobby, and their framing
//! as the document describes it.

use std::time::Duration;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;

use crate::api::error::{ApiError, problems};
use crate::api::headers::{UNCOMPRESSED, VARY_BY_TOKEN};
use crate::api::streams::StreamSlots;
use crate::api::wire::*;
use crate::domain::GameId;
use crate::service::{self, FeedEvent, Games};

use super::fanout::Fanout;

use super::*;

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

/// A game's event as its stream sends it: a spectator's rendered once for all the game's
/// spectators here, a seat's with its own view.
fn sse_frame(id: GameId, fanout: &Fanout, watched: &FeedEvent) -> web::Bytes {
    match watched.view {
        None => fanout.spectator_frame(id, &watched.event, || render(watched)),
        Some(_) => render(watched),
    }
}

fn render(FeedEvent { event, view }: &FeedEvent) -> web::Bytes {
    let wire = VersionEvent {
        version: event.version,
        status: event.status,
        turn: event.turn,
        moves: event.moves.iter().map(|&m| ExportedMove::of(m)).collect(),
        view: view.as_ref().map(GameView::of),
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
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "`text/event-stream` of `version` events, each a VersionEvent in `data`, starting with the current version; with a seat's token each carries that seat's `view`; a comment every 15 s keeps it alive; the stream ends after a finished game's last event.",
            content_type = "text/event-stream", body = VersionEventFrame),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 403, response = problems::Forbidden),
        (status = 404, response = problems::NotFound),
        (status = 409, response = problems::Conflict),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn game_events(
    games: web::Data<Games>,
    fanout: web::Data<Fanout>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
    path: web::Path<uuid::Uuid>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let id = game_id(path.into_inner());
    let after = match request.headers().get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or_else(|| ApiError::bad_request("Last-Event-ID is a version number"))?,
        ),
    };
    let slot = slots.acquire_for(&request)?;
    let feed = games.events(id, after, &caller).await?;
    let hello = web::Bytes::from(format!(": game {id} at version {}\n\n", feed.current));
    // A comment after 15 s without an event keeps proxies from closing the stream.
    // The slot travels with the feed: given back when the feed ends, or when actix drops
    // the body because the client went away.
    let fanout = fanout.into_inner();
    let frames = futures_util::stream::unfold(
        (feed.events, slot, fanout),
        move |(mut events, slot, fanout)| async move {
            match tokio::time::timeout(Duration::from_secs(15), events.next()).await {
                Ok(Some(event)) => Some((sse_frame(id, &fanout, &event), (events, slot, fanout))),
                Ok(None) => None,
                Err(_) => Some((KEEP_ALIVE, (events, slot, fanout))),
            }
        },
    );
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

/// A comment line, sent after 15 s without an event, that keeps proxies from closing a
/// stream.
pub(in crate::api) const KEEP_ALIVE: web::Bytes = web::Bytes::from_static(b": keep-alive\n\n");

/// One event of a stream without ids (the lobby's, a player's): `event` names it, `data`
/// holds it as JSON. A client resumes those by listing again, not by `Last-Event-ID`.
pub(in crate::api) fn named_frame(name: &str, data: &impl serde::Serialize) -> web::Bytes {
    let json = serde_json::to_string(data).expect("an event serialises");
    web::Bytes::from(format!("event: {name}\ndata: {json}\n\n"))
}

/// A stream of Server-Sent Events as it is answered: never compressed (a compressor would
/// hold events back), closed when it ends (a client reconnects for the next one anyway,
/// and a stopping server is not kept waiting by a connection left idle), and empty for a
/// `HEAD` (actix drops a HEAD answer's body but still reads it to its end: an endless
/// stream would hold the connection for good).
pub(in crate::api) fn sse_answer(
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
    fanout: web::Data<Fanout>,
    slots: web::Data<StreamSlots>,
    request: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let slot = slots.acquire_for(&request)?;
    let news = fanout.into_inner().lobby().await?;
    let hello = web::Bytes::from_static(b": lobby\n\n");
    // The slot travels with the stream, as for a game's.
    let frames = futures_util::stream::unfold((news, slot), |(mut news, slot)| async move {
        match tokio::time::timeout(Duration::from_secs(15), news.next()).await {
            Ok(Some(frame)) => Some((frame, (news, slot))),
            Ok(None) => None,
            Err(_) => Some((KEEP_ALIVE, (news, slot))),
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
    #[schema(schema_with = lobby_event_json)]
    data: String,
}

/// A string holding a `LobbyEvent` as JSON (OpenAPI 3.1's `contentSchema`).
fn lobby_event_json() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::Type::String)
        .description(Some("A `LobbyEvent`, as JSON."))
        .content_media_type("application/json")
        .content_schema(Some(utoipa::openapi::Ref::from_schema_name("LobbyEvent")))
        .examples([
            r#"{"type":"opened","game":{"game_id":"0b9f3a52-8f0e-4a55-9f0c-5c8d9c4e7b21","preset":"all_fives","seats":2,"free_seats":[0],"created_ms":1795000000000}}"#,
        ])
        .build()
}
