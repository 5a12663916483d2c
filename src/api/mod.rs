//! The HTTP layer: actix handlers, one file per resource, the error type, the OpenAPI
//! document.
//!
//! Handlers parse requests into typed values, call the service (or, for operations
//! endpoints, the store's `ping`), and turn results into answers. They know no rules of
//! the game and never talk to Redis: everything stateful goes through the service and
//! the [`crate::store`].
//!
//! Adding a resource: a file with its handlers (each with `#[utoipa::path]`) and a
//! `configure(&mut ServiceConfig)`, one `.configure(...)` line in [`configure`], and its
//! paths and schemas in [`openapi::ApiDoc`].

pub mod body_timeout;
pub mod challenges;
pub mod client;
pub mod connection;
pub mod error;
pub mod feeds;
pub mod games;
pub mod headers;
pub mod leagues;
pub mod matches;
pub mod numbers;
pub mod openapi;
pub mod ops;
pub mod paging;
pub mod players;
pub mod ratelimit;
pub mod seeks;
pub mod streams;
pub mod tournaments;
pub mod watch;
pub mod webhooks;
pub mod wire;

use actix_web::web;

pub use error::{ApiError, Problem, ProblemCode};

/// The preset a body names (`preset`), or 422 `invalid_rules`.
pub(crate) fn preset_named(name: &str) -> Result<crate::engine::Preset, ApiError> {
    name.parse()
        .map_err(|e: crate::engine::RulesError| ApiError::invalid_rules(e.to_string()))
}

/// The clock a body asks for (`clock`, optional), or 422 `invalid_rules` naming the field.
pub(crate) fn clock_asked(
    clock: Option<&wire::ClockBody>,
) -> Result<Option<crate::service::ClockSettings>, ApiError> {
    clock
        .map(wire::ClockBody::parse)
        .transpose()
        .map_err(ApiError::invalid_rules)
}

/// Every route, the extractor limits and error handlers, and the 404 for unknown paths.
/// Middleware (request ids, metrics, the problem fallback, rate limits, the body timeout) is
/// wrapped by the caller, since a `ServiceConfig` cannot wrap.
pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(max_body_bytes)
            .error_handler(error::json_error),
    )
    // For handlers that read raw bytes or text: the same limit.
    .app_data(web::PayloadConfig::new(max_body_bytes))
    .app_data(web::QueryConfig::default().error_handler(numbers::query_error))
    .app_data(web::PathConfig::default().error_handler(error::path_error))
    // The games first, the move's route at their head (see `games::configure`).
    .configure(games::configure)
    .configure(ops::configure)
    .configure(players::configure)
    .configure(webhooks::configure)
    .configure(challenges::configure)
    .configure(seeks::configure)
    .configure(matches::configure)
    .configure(tournaments::configure)
    .configure(leagues::configure)
    .configure(openapi::configure)
    .configure(watch::configure)
    .default_service(web::to(error::unknown_route));
}

#[cfg(test)]
mod tests {
    //! The extractor configuration, through a throwaway JSON route (the real JSON routes
    //! belong to the game resources).
    use actix_web::http::{StatusCode, header};
    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test};
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // only its parsing is under test
    struct ThrowawayMove {
        tile: String,
        claim: Option<u32>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Poll {
        after: u64,
    }

    async fn play(_: web::Json<ThrowawayMove>) -> HttpResponse {
        HttpResponse::Ok().finish()
    }

    async fn poll(_: web::Query<Poll>) -> HttpResponse {
        HttpResponse::Ok().finish()
    }

    async fn game(_: web::Path<uuid::Uuid>) -> HttpResponse {
        HttpResponse::Ok().finish()
    }

    async fn call(req: test::TestRequest) -> (StatusCode, serde_json::Value) {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(error::problem_fallback))
                .route("/play", web::post().to(play))
                .route("/poll", web::get().to(poll))
                .route("/games/{id}", web::get().to(game))
                .configure(|cfg| configure(cfg, 64)),
        )
        .await;
        let res = test::call_service(&app, req.to_request()).await;
        let status = res.status();
        if status.is_client_error() {
            assert_eq!(
                res.headers().get(header::CONTENT_TYPE).unwrap(),
                error::PROBLEM_JSON
            );
        }
        let body = test::read_body(res).await;
        (
            status,
            serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        )
    }

    fn post_json(body: &str) -> test::TestRequest {
        test::TestRequest::post()
            .uri("/play")
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .set_payload(body.to_owned())
    }

    #[actix_web::test]
    async fn a_good_body_passes() {
        assert_eq!(call(post_json(r#"{"tile":"5-3"}"#)).await.0, StatusCode::OK);
    }

    #[actix_web::test]
    async fn malformed_json_is_a_bad_request_problem() {
        let (status, body) = call(post_json(r#"{"tile":"#)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], "bad_request");
        assert_eq!(body["status"], 400);
    }

    #[actix_web::test]
    async fn an_unknown_field_is_a_bad_request_naming_it() {
        let (status, body) = call(post_json(r#"{"tile":"5-3","colour":"red"}"#)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            body["detail"].as_str().unwrap().contains("colour"),
            "{body}"
        );
    }

    #[actix_web::test]
    async fn a_wrong_type_is_a_bad_request() {
        let (status, body) = call(post_json(r#"{"tile":53}"#)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], "bad_request");
    }

    #[actix_web::test]
    async fn a_body_that_is_not_declared_json_is_a_bad_request() {
        let req = test::TestRequest::post()
            .uri("/play")
            .set_payload(r#"{"tile":"5-3"}"#);
        let (status, body) = call(req).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body["detail"].as_str().unwrap().contains("Content-Type"));
    }

    #[actix_web::test]
    async fn a_body_over_the_limit_is_payload_too_large() {
        let (status, body) = call(post_json(&format!(r#"{{"tile":"{}"}}"#, "x".repeat(100)))).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(body["code"], "payload_too_large");
        assert!(body["detail"].as_str().unwrap().contains("64 bytes"));
    }

    #[actix_web::test]
    async fn a_bad_query_string_is_a_bad_request() {
        let (status, body) = call(test::TestRequest::get().uri("/poll?after=soon")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["code"], "bad_request");
    }

    #[actix_web::test]
    async fn a_path_that_names_nothing_is_not_found() {
        let (status, body) = call(test::TestRequest::get().uri("/games/not-a-uuid")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["code"], "not_found");
    }

    #[actix_web::test]
    async fn a_wrong_method_is_a_405_problem_with_allow() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(error::problem_fallback))
                .configure(|cfg| configure(cfg, 64)),
        )
        .await;
        let req = test::TestRequest::post().uri("/healthz").to_request();
        let res = test::call_service(&app, req).await;
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(res.headers().get(header::ALLOW).unwrap(), "GET, HEAD");
        let body: serde_json::Value = test::read_body_json(res).await;
        assert_eq!(body["code"], "method_not_allowed");
    }
}
