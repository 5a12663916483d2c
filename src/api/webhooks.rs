//! A player's webhook: the URL the server calls when one of the player's seats is to move
//! (`/v1/players/me/webhook`).

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::api::error::{ApiError, problems};
use crate::api::headers::{UNCOMPRESSED, get_and_head};
use crate::api::numbers::Json;
use crate::api::wire::{GameView, MoveBody, SetWebhook, WebhookSecret, WebhookView};
use crate::domain::Caller;
use crate::service::{CallWire, Calls, MoveRequest, Players, View};

/// The api's wire for webhook calls: a seat's view written as `GET /v1/games/{id}` writes
/// it, a move read as `POST /v1/games/{id}/moves` reads its body.
pub struct Wire;

impl CallWire for Wire {
    fn view_json(&self, view: &View) -> String {
        serde_json::to_string(&GameView::of(view)).expect("a view serializes")
    }

    fn read_move(&self, body: &[u8]) -> Result<MoveRequest, String> {
        serde_json::from_slice::<MoveBody>(body)
            .map(|m| m.to_request())
            .map_err(|e| e.to_string())
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        get_and_head("/v1/players/me/webhook", get_webhook)
            .route(web::put().to(set_webhook))
            .route(web::delete().to(remove_webhook)),
    );
}

/// Registers (or replaces) the key's player's webhook, once it answered a ping; the seats
/// the player holds in games in play are called from then on (a webhook paused is resumed
/// so).
#[utoipa::path(
    put,
    path = "/v1/players/me/webhook",
    tag = "players",
    operation_id = "set_webhook",
    security(("bearer" = [])),
    request_body = SetWebhook,
    responses(
        (status = 200, description = "Active: the webhook answered its ping. The secret that signs every call is shown this once.", body = WebhookSecret),
        (status = 400, response = problems::BadRequest),
        (status = 401, response = problems::Unauthorized),
        (status = 413, response = problems::PayloadTooLarge),
        (status = 422, response = problems::UnprocessableContent),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn set_webhook(
    calls: web::Data<Calls>,
    caller: Caller,
    body: Json<SetWebhook>,
) -> Result<HttpResponse, ApiError> {
    let set = calls.set_webhook(&caller, &body.url).await?;
    // It carries a secret: never compressed beside text others chose, never cached.
    Ok(HttpResponse::Ok()
        .insert_header(UNCOMPRESSED)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(WebhookSecret::of(set)))
}

/// The key's player's webhook: its status and how its calls went.
#[utoipa::path(
    get,
    path = "/v1/players/me/webhook",
    tag = "players",
    operation_id = "get_webhook",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The webhook.", body = WebhookView),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn get_webhook(
    players: web::Data<Players>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let state = players.webhook(&caller).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .json(WebhookView::of(&state)))
}

/// Removes the key's player's webhook: its seats are played by pulling again.
#[utoipa::path(
    delete,
    path = "/v1/players/me/webhook",
    tag = "players",
    operation_id = "remove_webhook",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "Removed."),
        (status = 401, response = problems::Unauthorized),
        (status = 404, response = problems::NotFound),
        (status = 503, response = problems::StoreUnavailable),
    ),
)]
pub async fn remove_webhook(
    players: web::Data<Players>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    players.remove_webhook(&caller).await?;
    Ok(HttpResponse::NoContent().finish())
}
