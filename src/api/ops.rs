//! Operations endpoints: liveness, readiness, metrics.
//!
//! These answer orchestrators and scrapers, not players. They must stay cheap and must not
//! depend on anything but the process itself (`/healthz`) or the store's `ping`, asked
//! through the service (`/readyz`): a readiness check that loaded games would turn a slow
//! store into a restart loop.

use actix_web::http::header::{CacheControl, CacheDirective};
use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::error::{ApiError, problems};
use crate::api::headers::get_and_head;
use crate::metrics::{self, Metrics};
use crate::service::Services;
use crate::settings::Settings;

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Resources rather than the method macros: a wrong method then answers 405 with
    // `Allow` instead of falling through to the 404.
    cfg.service(get_and_head("/healthz", healthz))
        .service(get_and_head("/readyz", readyz))
        .service(get_and_head("/metrics", metrics));
}

/// The process is alive.
#[derive(Debug, Serialize, ToSchema)]
// Named `Health` in the OpenAPI document, as it always was; `Health` in Rust is the store's.
#[schema(as = Health)]
pub struct Liveness {
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// The server can serve games: its store answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ready`, or `degraded` when the store answers but some games cannot be moved now
    /// (`degraded` says why).
    #[schema(example = "ready")]
    pub status: &'static str,
    /// Which store keeps the games: `memory`, `redis` (one server) or `redis-cluster`.
    #[schema(example = "redis")]
    pub store: &'static str,
    /// What keeps some moves from being acknowledged, each naming the Redis node: a master
    /// with fewer replicas online than `REDIS_WAIT_REPLICAS` asks (its games' moves answer
    /// 503 until one is back). Empty when every game can be moved.
    #[schema(example = json!([]))]
    pub degraded: Vec<String>,
}

fn no_store() -> CacheControl {
    CacheControl(vec![CacheDirective::NoStore])
}

/// Liveness: answers as long as the process serves HTTP.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "ops",
    operation_id = "healthz",
    responses((status = 200, description = "The process is alive.", body = Liveness)),
)]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(no_store())
        .json(Liveness { status: "ok" })
}

/// Readiness: answers 200 when the store answers a ping within `STORE_TIMEOUT_MS` (and, on
/// a Redis Cluster, says every slot is served). A master short of replicas leaves it
/// ready but `degraded`: the other masters' games play on.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "ops",
    operation_id = "readyz",
    responses(
        (status = 200, description = "The store answers: the server can serve games.", body = Readiness),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn readyz(
    services: web::Data<Services>,
    settings: web::Data<Settings>,
) -> Result<HttpResponse, ApiError> {
    let health = services.ready(settings.store_timeout).await?;
    Ok(HttpResponse::Ok()
        .insert_header(no_store())
        .json(Readiness {
            status: if health.degraded.is_empty() {
                "ready"
            } else {
                "degraded"
            },
            store: services.store_kind(),
            degraded: health.degraded,
        }))
}

/// Prometheus metrics in the OpenMetrics text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "ops",
    operation_id = "metrics",
    responses((
        status = 200,
        description = "Every metric of this process: HTTP requests by method, route pattern and \
            status class, request latency, and the game counters.",
        body = String,
        content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8",
    )),
)]
pub async fn metrics(metrics: web::Data<Metrics>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(no_store())
        .content_type(metrics::CONTENT_TYPE)
        .body(metrics.encode())
}
