//! The headers client authors meet on every resource: CORS for browser pages on other
//! origins, `HEAD` (headers only) wherever `GET` is allowed, `Vary` on answers that depend
//! on the seat token, and compressed answers (actix's `Compress`, wrapped in
//! [`crate::startup`]) that leave the event stream and the seat token alone.
//!
//! Owns which headers a browser page may send and read, and how a resource answering
//! `GET` and `HEAD` is routed. The rate limit fields are [`crate::api::ratelimit`]'s; the OpenAPI side of
//! `HEAD` is [`crate::api::openapi`]'s.

use actix_cors::Cors;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{FromRequest, Handler, HttpResponseBuilder, Resource, Responder, web};

use crate::api::ratelimit::{RATELIMIT, RATELIMIT_POLICY};
use crate::settings::CorsOrigins;

/// Request headers a page may send besides the CORS-safelisted ones.
pub const CORS_ALLOWED_HEADERS: [HeaderName; 7] = [
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    header::IF_MATCH,
    header::IF_NONE_MATCH,
    HeaderName::from_static("idempotency-key"),
    HeaderName::from_static("last-event-id"),
    HeaderName::from_static("x-request-id"),
];

/// Answer headers a page may read besides the CORS-safelisted ones.
pub const CORS_EXPOSED_HEADERS: [HeaderName; 6] = [
    header::ETAG,
    header::LOCATION,
    header::RETRY_AFTER,
    RATELIMIT,
    RATELIMIT_POLICY,
    HeaderName::from_static("x-request-id"),
];

/// How long a browser may reuse a preflight's answer, in seconds.
pub const CORS_MAX_AGE_SECS: usize = 3600;

/// The CORS middleware for `CORS_ORIGINS`; `None` when unset (no CORS headers at all).
/// No credentials mode: the seat token travels in `Authorization`, which a page sets
/// itself, so `*` stays usable.
pub fn cors(origins: &CorsOrigins) -> Option<Cors> {
    let base = || {
        Cors::default()
            .allowed_methods(["GET", "HEAD", "POST"])
            .allowed_headers(CORS_ALLOWED_HEADERS)
            .expose_headers(CORS_EXPOSED_HEADERS)
            .max_age(CORS_MAX_AGE_SECS)
    };
    match origins {
        CorsOrigins::None => None,
        CorsOrigins::Any => Some(base().allow_any_origin().send_wildcard()),
        CorsOrigins::List(list) => Some(
            list.iter()
                .fold(base(), |cors, origin| cors.allowed_origin(origin)),
        ),
    }
}

/// A resource answering `GET` and `HEAD` with one handler: actix routes `HEAD` only where
/// asked, and drops the body of a `HEAD` answer itself, keeping every header.
pub fn get_and_head<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        .route(web::get().to(handler.clone()))
        .route(web::head().to(handler))
}

/// The pages' Content-Security-Policy, with `$style` among the styles allowed.
macro_rules! page_csp {
    ($style:literal) => {
        concat!(
            "default-src 'none'; script-src 'self'; style-src 'self'",
            $style,
            "; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
             form-action 'none'; frame-ancestors 'none'"
        )
    };
}

/// The policy of the watch pages: scripts, styles, images and requests from this server
/// only, no inline script, no framing, no form posts elsewhere.
pub const PAGE_CSP: &str = page_csp!("");

/// The policy of Swagger UI: the watch pages', and the one inline style it has (its logo's,
/// by hash: `tests/api/docs.rs` finds it in the UI's scripts). Its React sets every other
/// style through the DOM, which `style-src` allows.
pub const SWAGGER_UI_CSP: &str =
    page_csp!(" 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='");

/// The headers of a page or one of its assets: its policy (`csp`), no framing for the
/// browsers that predate `frame-ancestors`, no sniffing, and no `Referer` (a watch page's
/// address may carry a token in its fragment; browsers never send that part, and this
/// leaves nothing to chance).
pub fn page_headers<'a>(
    answer: &'a mut HttpResponseBuilder,
    csp: &'static str,
) -> &'a mut HttpResponseBuilder {
    answer
        .insert_header((header::CONTENT_SECURITY_POLICY, csp))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
}

/// `Vary` for answers that differ by seat token (a seat's view, its log), so a cache
/// never hands one seat's answer to another, or to a spectator.
pub const VARY_BY_TOKEN: (HeaderName, HeaderValue) =
    (header::VARY, HeaderValue::from_static("Authorization"));

/// What an answer that must not be compressed carries on its way out: `Compress` leaves
/// an answer with a `Content-Encoding` alone, and [`keep_uncompressed`] removes this one
/// before it leaves. For the event stream: a compressor holds small writes back until
/// it has a block's worth, so events would arrive late and in batches. For the join
/// answer: its seat token would share a compressed body with names others chose, whose
/// compressed length could be probed for it (BREACH).
pub const UNCOMPRESSED: (HeaderName, HeaderValue) = (
    header::CONTENT_ENCODING,
    HeaderValue::from_static("identity"),
);

/// Middleware, outside `Compress`: removes the [`UNCOMPRESSED`] marker (`identity` is not a
/// coding an answer should name).
pub async fn keep_uncompressed(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, actix_web::Error> {
    let mut res = next.call(req).await?;
    if res.headers().get(&UNCOMPRESSED.0) == Some(&UNCOMPRESSED.1) {
        res.headers_mut().remove(&UNCOMPRESSED.0);
    }
    Ok(res)
}
