//! The game resources of the HTTP contract: presets, lobby, view, moves, events, log, export.
//!
//! Handlers are thin: they parse the request into domain types (a bad tile, an unknown
//! field or a malformed token stops here), call one use case of one aggregate ([`crate::service::Games`]) and turn its
//! answer into a view. They know no rules.
//!
//! One file per resource; the handlers are re-exported here for the router and the
//! document. What they share (the ETag, the keys) lives here; the token is [`crate::api::client`]'s.

pub mod fanout;
mod history;
mod lobby;
mod play;
mod streams;

pub use history::*;
pub use lobby::*;
pub use play::*;
pub use streams::*;

use actix_web::http::header::{self, HeaderMap};
use actix_web::{HttpResponse, web};

use crate::api::error::{ApiError, ProblemCode};
use crate::api::headers::get_and_head;
use crate::domain::Caller;
use crate::service::{self, View};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // The move first: actix tries the patterns in this order, each dynamic one a regex
    // search (and again when the metrics look up the route's pattern), and moves are
    // most requests. No other pattern matches a move's path, so the order changes nothing
    // else.
    cfg.service(web::resource("/v1/games/{id}/moves").route(web::post().to(make_move)))
        .service(get_and_head("/v1/presets", list_presets))
        .service(get_and_head("/v1/games", list_games).route(web::post().to(create_game)))
        .service(get_and_head("/v1/lobby/events", lobby_events))
        .service(get_and_head("/v1/games/{id}", get_game))
        .service(web::resource("/v1/games/{id}/seats").route(web::post().to(take_seat)))
        .service(get_and_head("/v1/games/{id}/events", game_events))
        .service(get_and_head("/v1/games/{id}/log", game_log))
        .service(get_and_head("/v1/games/{id}/export", export_game));
}

fn etag(s: &View) -> String {
    match s.viewer {
        Some(seat) => format!("\"{}-s{seat}\"", s.version),
        None => format!("\"{}\"", s.version),
    }
}

/// The version an `If-Match` pins a change to: `None` without one, or with `*`. The tags
/// are this server's ETags (`"17"`, `"17-s0"`: the version, then the viewer), compared
/// strongly (RFC 9110 §13.1.1): a weak tag, or one this server never made, matches no
/// version, which is a failed precondition.
fn if_match(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_request("If-Match: entity tags are visible ASCII"))?;
    let mut versions = Vec::new();
    for tag in text.split(',').map(str::trim) {
        if tag == "*" {
            return Ok(None);
        }
        let version = tag
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .map(|t| t.split_once("-s").map_or(t, |(version, _)| version))
            .and_then(|v| v.parse::<u64>().ok());
        versions.extend(version);
    }
    versions.sort_unstable();
    versions.dedup();
    match versions[..] {
        [version] => Ok(Some(version)),
        [] => Err(ApiError::new(
            ProblemCode::PreconditionFailed,
            "If-Match names no version of this game: send the ETag of your last view",
        )),
        _ => Err(ApiError::bad_request(
            "If-Match: name one version of the game",
        )),
    }
}

/// A 200 with the ETag of `s`'s version and viewer.
fn view_response(s: &View, body: impl serde::Serialize) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::ETAG, etag(s)))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(body)
}

/// A create's `Idempotency-Key` (a challenge, a seek, a match), if any: the same request
/// is the same kind of create with the same body as parsed (`same`), however its JSON was
/// spaced; the service scopes it to the caller's player.
pub(in crate::api) fn create_key(
    headers: &HeaderMap,
    kind: service::Create,
    same: &impl std::fmt::Debug,
) -> Result<Option<service::RequestKey>, ApiError> {
    Ok(idempotency_key(headers, 1)?.map(|key| {
        service::RequestKey::for_create(key.to_owned(), kind, format!("{same:?}").as_bytes())
    }))
}

/// The request's `Idempotency-Key`, if any: `min` to 128 visible ASCII characters.
pub(in crate::api) fn idempotency_key(
    headers: &HeaderMap,
    min: usize,
) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .filter(|k| (min..=128).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        // A key that guards a secret (min > 1) must be hard to guess.
        .filter(|k| min <= 1 || service::strong_key(k))
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(if min > 1 {
                format!(
                    "Idempotency-Key: {min} to 128 visible ASCII characters, {} of them \
                     distinct at least, on a join or a player's creation (its retry gets the \
                     seat's token or the player's key: use a random key, such as a UUID)",
                    service::MIN_KEY_DISTINCT
                )
            } else {
                "Idempotency-Key: 1 to 128 visible ASCII characters".into()
            })
        })
}
