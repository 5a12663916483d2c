//! The OpenAPI document (3.1), served at `/openapi.json`, and the Swagger UI over it at
//! `/swagger-ui/` (vendored assets: no network needed).
//!
//! Owns the document's frame: info, servers, tags, the reusable problem responses, the
//! seat-token security scheme (and `security: []` on the operations that need no token),
//! the `X-Request-Id` header on every answer, what every operation may answer (400 for an
//! unusable `Accept-Encoding`, 500), the 429 and the `RateLimit` fields of the rate limits
//! on every limited path, and a line saying that every `GET` also answers `HEAD` (the
//! router's [`crate::api::headers::get_and_head`]; listing a `HEAD` twin under each `GET`
//! doubled the Swagger UI for no client's gain). Each resource's paths
//! and schemas are listed in [`ApiDoc`]; a test compares the document with the committed
//! `openapi/openapi.json`, so code and document cannot drift apart unnoticed.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{AdditionalProperties, Discriminator, Schema};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Ref, RefOr, Response};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::Config;

use crate::api::error::{ApiError, Problem, ProblemCode, problems};
use crate::api::headers::{SWAGGER_UI_CSP, get_and_head, page_headers};
use crate::api::{
    challenges, games, leagues, matches, ops, players, ratelimit, seeks, tournaments, webhooks,
    wire,
};

/// Where the document is served.
pub const OPENAPI_PATH: &str = "/openapi.json";

/// The name of the one bearer scheme (`security(("bearer" = []))`): a seat token or a
/// player key, wherever either works, so Swagger UI's Authorize is done once.
pub const BEARER_SCHEME: &str = "bearer";

#[derive(OpenApi)]
#[openapi(
    servers((url = "/", description = "The server this document was fetched from.")),
    info(
        title = "Domino server",
        description = "A headless REST domino game server: every rule variant, enforced, over HTTP.\n\n\
            Every error answer is `application/problem+json` (RFC 9457) with a machine-readable \
            `code`; see the `Problem` schema. Every answer carries `X-Request-Id` (a sane incoming \
            one of at most 64 characters `[A-Za-z0-9_-]` is kept, otherwise one is made); quote it \
            when reporting a problem.\n\n\
            To watch a game as a table in a browser, open `/watch/{id}` on this server (add \
            `#token=<seat token>` to the address to see your hand and play by clicking; \
            `#replay` steps through a finished game); `/watch` lists the open games.\n\n\
            Every `GET` here also answers `HEAD`: the same status and headers, without the body.",
    ),
    paths(
        games::list_presets, games::create_game, games::list_games, games::take_seat, games::get_game,
        games::make_move, games::game_events, games::lobby_events, games::game_log, games::export_game,
        players::create_player, players::get_player, players::rating_history, players::my_profile, players::rotate_key,
        webhooks::set_webhook, webhooks::get_webhook, webhooks::remove_webhook,
        players::my_games, players::player_games, players::my_events, players::leaderboard,
        challenges::create_challenge, challenges::list_challenges, challenges::get_challenge,
        challenges::accept_challenge, challenges::decline_challenge, challenges::cancel_challenge,
        seeks::create_seek, seeks::list_seeks, seeks::get_seek, seeks::cancel_seek,
        matches::create_match, matches::list_matches, matches::player_matches, matches::get_match, matches::cancel_match,
        tournaments::create_tournament, tournaments::list_tournaments, tournaments::player_tournaments, tournaments::get_tournament,
        tournaments::join_tournament, tournaments::withdraw_from_tournament,
        tournaments::start_tournament, tournaments::tournament_events,
        tournaments::cancel_tournament, tournaments::remove_tournament_player,
        leagues::create_league, leagues::list_leagues, leagues::get_league,
        leagues::enter_league, leagues::leave_league, leagues::league_events,
        ops::healthz, ops::readyz, ops::metrics, openapi_json,
    ),
    components(
        schemas(Problem, ProblemCode, wire::RulesDoc, wire::RulesOverridesDoc, games::VersionEvent, wire::LobbyEventView, wire::PlayerEventView),
        responses(
            problems::BadRequest,
            problems::Unauthorized,
            problems::Forbidden,
            problems::NotFound,
            problems::Conflict,
            problems::PreconditionFailed,
            problems::PayloadTooLarge,
            problems::UnprocessableContent,
            problems::RateLimited,
            problems::RequestTimeout,
            problems::StoreUnavailable,
            problems::InternalError,
        ),
    ),
    tags(
        (name = "lobby", description = "Presets, creating games, taking seats, open games."),
        (name = "players", description = "Players: identities that outlive a game, and their keys."),
        (name = "matches", description = "Matches, the duplicate arena: a series of games on deals the server makes, each deal played twice with the sides swapped, and the margin a deal with its 95% interval."),
        (name = "tournaments", description = "Tournaments: Swiss and round robin for players and built-in levels, each pairing a duplicate deal by default, with standings everyone can follow."),
        (name = "leagues", description = "Leagues: bots entered once, paired in duplicate matches whenever they are free, around the clock, and a table of league ratings anchored by the built-in levels."),
        (name = "challenges", description = "Challenges and matchmaking: a player invites players or built-in levels to a game (it starts when every opponent has accepted), or seeks a game with anyone who wants the same one."),
        (name = "play", description = "Views, moves, events, logs and exports of one game."),
        (name = "ops", description = "Liveness, readiness and metrics, for orchestrators and scrapers."),
        (name = "docs", description = "This document."),
    ),
    modifiers(&Frame, &TaggedUnions),
)]
pub struct ApiDoc;

/// What the derive cannot express: the seat-token scheme, the headers on every response
/// (components' included), and the answers every operation may give.
struct Frame;

const REQUEST_ID_HEADER: &str = "X-Request-Id";
const RATELIMIT_POLICY_HEADER: &str = "RateLimit-Policy";
const RATELIMIT_HEADER: &str = "RateLimit";

impl Modify for Frame {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER_SCHEME,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A seat token (given once when taking a seat) or a player's key (`dpk_...`, given when the player is created): `Authorization: Bearer <token or key>`. A game's endpoints take either (a key for the seats bound to its player); the players', challenges', seeks' and matches' endpoints take a key.",
                    ))
                    .build(),
            ),
        );
        let headers = [
            (
                REQUEST_ID_HEADER,
                "The request's id, as it appears in the server's logs.",
                "0b9f3a52-8f0e-4a55-9f0c-5c8d9c4e7b21",
            ),
            (
                RATELIMIT_POLICY_HEADER,
                "The rate limits that counted this request (IETF draft-ietf-httpapi-ratelimit-headers): \
                 `\"per-ip\"` always, `\"per-token\"` with a bearer token; `q` requests at once, refilled \
                 whole in `w` seconds. Absent when the server runs without limits.",
                "\"per-ip\";q=2000;w=1, \"per-token\";q=200;w=1",
            ),
            (
                RATELIMIT_HEADER,
                "Where this request left each limit of `RateLimit-Policy`: `r` requests may follow at \
                 once, and `r` is whole again within `t` seconds. On a 429, `r=0` and `t` is `Retry-After`.",
                "\"per-ip\";r=1999;t=1, \"per-token\";r=199;t=1",
            ),
        ];
        for (name, description, example) in headers {
            components.headers.insert(
                name.to_owned(),
                HeaderBuilder::new()
                    .description(Some(description))
                    .example(Some(example.into()))
                    .build()
                    .into(),
            );
        }

        let header_ref = |name: &str| RefOr::Ref(Ref::new(format!("#/components/headers/{name}")));
        let with_headers = |response: &mut RefOr<Response>, names: &[&str]| {
            if let RefOr::T(response) = response {
                for name in names {
                    response
                        .headers
                        .insert((*name).to_owned(), header_ref(name));
                }
            }
        };
        // Components' responses are shared by limited and unlimited paths: only the id.
        components
            .responses
            .values_mut()
            .for_each(|r| with_headers(r, &[REQUEST_ID_HEADER]));
        for (path, item) in doc.paths.paths.iter_mut() {
            let limited = !ratelimit::EXEMPT_PATHS.contains(&path.as_str());
            let names: &[&str] = if limited {
                &[REQUEST_ID_HEADER, RATELIMIT_POLICY_HEADER, RATELIMIT_HEADER]
            } else {
                &[REQUEST_ID_HEADER]
            };
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.options,
                &mut item.head,
                &mut item.patch,
                &mut item.trace,
            ];
            for operation in operations.into_iter().flatten() {
                // An operation that says nothing about tokens needs none.
                operation.security.get_or_insert_with(Vec::new);
                let takes_body = operation.request_body.is_some();
                let responses = &mut operation.responses.responses;
                responses.values_mut().for_each(|r| with_headers(r, names));
                // A body that arrives too slowly is cut on every route that takes one.
                if takes_body {
                    responses.insert(
                        "408".to_owned(),
                        RefOr::Ref(Ref::from_response_name("RequestTimeout")),
                    );
                }
                // Any request may name codings the server does not have, and any may meet
                // a bug.
                responses
                    .entry("400".to_owned())
                    .or_insert_with(|| RefOr::Ref(Ref::from_response_name("BadRequest")));
                responses
                    .entry("500".to_owned())
                    .or_insert_with(|| RefOr::Ref(Ref::from_response_name("InternalError")));
                // The rate limits answer before any handler, on every limited path.
                if limited {
                    responses.insert(
                        "429".to_owned(),
                        RefOr::Ref(Ref::from_response_name("RateLimited")),
                    );
                }
            }
        }
    }
}

/// Every tagged union (an enum serialised with its `type` field: moves, events) as named
/// variant schemas joined by a `type` discriminator, so a generated client gets one named
/// type per variant and picks it by `type` (what the derive cannot express).
struct TaggedUnions;

/// Unions whose variants refuse fields they do not name (serde's `deny_unknown_fields`).
const CLOSED_UNIONS: &[&str] = &["Move"];

impl Modify for TaggedUnions {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let Some(components) = doc.components.as_mut() else {
            return;
        };
        let mut variants = Vec::new();
        for (name, schema) in components.schemas.iter_mut() {
            let RefOr::T(Schema::OneOf(one_of)) = schema else {
                continue;
            };
            let Some(tags) = one_of.items.iter().map(tag_of).collect::<Option<Vec<_>>>() else {
                continue;
            };
            let closed = CLOSED_UNIONS.contains(&name.as_str());
            let mut discriminator = Discriminator::new("type");
            for (item, tag) in one_of.items.iter_mut().zip(tags) {
                let variant = format!("{}{name}", pascal_case(&tag));
                let mut shape =
                    std::mem::replace(item, RefOr::Ref(Ref::from_schema_name(&variant)));
                if let RefOr::T(Schema::Object(object)) = &mut shape
                    && closed
                {
                    object.additional_properties =
                        Some(Box::new(AdditionalProperties::FreeForm(false)));
                }
                discriminator
                    .mapping
                    .insert(tag, format!("#/components/schemas/{variant}"));
                variants.push((variant, shape));
            }
            one_of.discriminator = Some(discriminator);
        }
        components.schemas.extend(variants);
        let absorbed = flatten_unions_of_unions(&mut components.schemas);
        // A union whose variants another now lists is left out if nothing else names it
        // (Redocly flags an unused component).
        let text = serde_json::to_string(&*doc).expect("the document serialises");
        let unused: Vec<String> = absorbed
            .into_iter()
            .filter(|name| !text.contains(&format!("\"#/components/schemas/{name}\"")))
            .collect();
        if let Some(components) = doc.components.as_mut() {
            for name in unused {
                components.schemas.remove(&name);
            }
        }
    }
}

/// A union whose members are tagged unions themselves (a move as made: a seat's or the
/// server's) becomes the union of their variants, with their discriminators merged, so it
/// too is picked by `type`. Left alone if two members share a tag. Answers the names of
/// the unions absorbed so.
fn flatten_unions_of_unions(schemas: &mut BTreeMap<String, RefOr<Schema>>) -> Vec<String> {
    let tagged: BTreeMap<String, (Vec<RefOr<Schema>>, Discriminator)> = schemas
        .iter()
        .filter_map(|(name, schema)| match schema {
            RefOr::T(Schema::OneOf(one_of)) => Some((
                format!("#/components/schemas/{name}"),
                (one_of.items.clone(), one_of.discriminator.clone()?),
            )),
            _ => None,
        })
        .collect();
    let mut absorbed = Vec::new();
    for schema in schemas.values_mut() {
        let RefOr::T(Schema::OneOf(one_of)) = schema else {
            continue;
        };
        if one_of.discriminator.is_some() {
            continue;
        }
        let members: Option<Vec<_>> = one_of
            .items
            .iter()
            .map(|item| match item {
                RefOr::Ref(r) => tagged.get(&r.ref_location),
                RefOr::T(_) => None,
            })
            .collect();
        let Some(members) = members else {
            continue;
        };
        let mut discriminator = Discriminator::new("type");
        let mut items = Vec::new();
        let mut clash = false;
        for (member_items, member) in members {
            for (tag, variant) in &member.mapping {
                clash |= discriminator
                    .mapping
                    .insert(tag.clone(), variant.clone())
                    .is_some();
            }
            items.extend(member_items.iter().cloned());
        }
        if !clash && !items.is_empty() {
            absorbed.extend(one_of.items.iter().filter_map(|item| {
                match item {
                    RefOr::Ref(r) => r
                        .ref_location
                        .strip_prefix("#/components/schemas/")
                        .map(str::to_owned),
                    RefOr::T(_) => None,
                }
            }));
            one_of.items = items;
            one_of.discriminator = Some(discriminator);
        }
    }
    absorbed
}

/// The one value of a variant's `type` property, if `item` is such a variant.
fn tag_of(item: &RefOr<Schema>) -> Option<String> {
    let object = match item {
        RefOr::T(Schema::Object(object)) => object,
        // A variant that wraps a struct (`Challenge(ChallengeView)`): the struct, and an
        // object holding the tag.
        RefOr::T(Schema::AllOf(all_of)) => {
            return all_of.items.iter().find_map(tag_of);
        }
        _ => return None,
    };
    let RefOr::T(Schema::Object(tag)) = object.properties.get("type")? else {
        return None;
    };
    match tag.enum_values.as_deref()? {
        [serde_json::Value::String(value)] => Some(value.clone()),
        _ => None,
    }
}

fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The document as served and as committed: pretty JSON, built once.
pub fn document() -> &'static str {
    static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
        ApiDoc::openapi()
            .to_pretty_json()
            .expect("the OpenAPI document serialises")
    });
    &DOCUMENT
}

/// The OpenAPI document of this server.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "docs",
    operation_id = "openapi",
    responses((status = 200, description = "This document (OpenAPI 3.1).", content_type = "application/json", body = Object)),
)]
pub async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(document())
}

/// A file of Swagger UI (its page for an empty tail), under its policy. Served here
/// rather than by the crate's own service, which answers `GET` only and sets no headers.
async fn swagger_ui(tail: web::Path<String>) -> Result<HttpResponse, ApiError> {
    // The UI fetches the document from the route above rather than from a copy the UI
    // would serve itself, so there is one document and one route.
    static CONFIG: LazyLock<Arc<Config<'static>>> =
        LazyLock::new(|| Arc::new(Config::new([OPENAPI_PATH])));
    let file = utoipa_swagger_ui::serve(&tail, Arc::clone(&CONFIG))
        .map_err(|e| ApiError::internal(format!("Swagger UI: {e}")))?
        .ok_or_else(|| ApiError::not_found("no such file of Swagger UI"))?;
    let mut answer = HttpResponse::Ok();
    if file.gzpipped {
        answer.insert_header((header::CONTENT_ENCODING, "gzip"));
    }
    Ok(page_headers(&mut answer, SWAGGER_UI_CSP)
        .content_type(file.content_type)
        .body(file.bytes.into_owned()))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(get_and_head(OPENAPI_PATH, openapi_json))
        .service(get_and_head("/swagger-ui/{_:.*}", swagger_ui))
        .service(get_and_head("/swagger-ui", || async {
            HttpResponse::MovedPermanently()
                .insert_header((header::LOCATION, "/swagger-ui/"))
                .finish()
        }));
}
