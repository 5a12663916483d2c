//! A player's webhook on the wire.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::service::{WebhookSet, WebhookState};

/// The body of `PUT /v1/players/me/webhook`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWebhook {
    /// Where the server POSTs a call when one of the player's seats is to move: `http` or
    /// `https`, on a public address (unless the server allows private ones).
    #[schema(example = "https://bot.example/move", max_length = 2048)]
    pub url: String,
}

/// Median and 99th percentile of the latest answered calls' times.
#[derive(Serialize, ToSchema)]
pub struct Latency {
    pub p50: u32,
    pub p99: u32,
}

/// A webhook's status: active, or paused after failures in a row.
#[derive(Serialize, ToSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum WebhookStatus {
    Active,
    Paused,
}

/// A player's webhook and how its calls went.
#[derive(Serialize, ToSchema)]
pub struct WebhookView {
    pub url: String,
    pub status: WebhookStatus,
    /// Why it is paused (`PUT` it again to resume); null while active.
    pub paused_reason: Option<String>,
    /// Of the latest answered calls (ms); null before any.
    pub latency_ms: Option<Latency>,
    /// Calls made since it was registered, and how many of them failed.
    pub calls: u64,
    pub failures: u64,
    /// When it was registered (epoch ms).
    pub since_ms: u64,
}

impl WebhookView {
    pub fn of(state: &WebhookState) -> WebhookView {
        WebhookView {
            url: state.url.clone(),
            status: if state.paused_reason.is_some() {
                WebhookStatus::Paused
            } else {
                WebhookStatus::Active
            },
            paused_reason: state.paused_reason.clone(),
            latency_ms: state.latency_ms.map(|(p50, p99)| Latency { p50, p99 }),
            calls: state.calls,
            failures: state.failures,
            since_ms: state.since_ms,
        }
    }
}

/// What anyone may see of a player's webhook: whether it is called, and how it answers.
#[derive(Serialize, ToSchema)]
pub struct WebhookSummary {
    pub status: WebhookStatus,
    /// Of the latest answered calls (ms); null before any.
    pub latency_ms: Option<Latency>,
    /// Calls made since it was registered, and how many of them failed.
    pub calls: u64,
    pub failures: u64,
}

impl WebhookSummary {
    pub fn of(state: &WebhookState) -> WebhookSummary {
        let view = WebhookView::of(state);
        WebhookSummary {
            status: view.status,
            latency_ms: view.latency_ms,
            calls: view.calls,
            failures: view.failures,
        }
    }
}

/// A webhook just registered, with its secret, shown this once.
#[derive(Serialize, ToSchema)]
pub struct WebhookSecret {
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// The HMAC-SHA256 key of every call's `Domino-Signature`, shown once. It starts with
    /// `dwh_`.
    #[schema(example = "dwh_5be0f1d2...")]
    pub secret: String,
}

impl WebhookSecret {
    pub fn of(set: WebhookSet) -> WebhookSecret {
        WebhookSecret {
            webhook: WebhookView::of(&set.state),
            secret: set.secret,
        }
    }
}
