//! A player's webhook: the URL the server calls when one of the player's seats is to move,
//! kept in the player's record (the players aggregate owns it, its counters included).
//! Registering pings the URL first; the secret that signs every call is shown once.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::store::SaveOutcome;
use crate::store::players::PlayerStore;

use super::{Error, PlayerRecord, Players};
use crate::domain::{Caller, PlayerId};
use crate::service::shared::now_ms;

/// What every webhook secret starts with (as Stripe's `whsec_`): a leaked one is found by
/// scanners, and told apart from a player key.
const SECRET_PREFIX: &str = "dwh_";
/// Answered calls whose times a webhook keeps, the newest: its p50 and p99.
const LATENCIES_KEPT: usize = 200;

/// A player's webhook as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(in crate::service) struct Webhook {
    url: String,
    /// The whole secret as shown: the HMAC key the bot holds too.
    secret: String,
    since_ms: u64,
    /// Why it is paused; `None` while active.
    paused: Option<String>,
    failures_in_row: u32,
    calls: u64,
    failures: u64,
    /// The newest answered calls' times (ms), oldest first.
    latencies_ms: VecDeque<u32>,
}

/// A webhook as its owner reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookState {
    pub url: String,
    pub paused_reason: Option<String>,
    pub since_ms: u64,
    pub calls: u64,
    pub failures: u64,
    /// Median and 99th percentile of the latest answered calls' times, if any.
    pub latency_ms: Option<(u32, u32)>,
}

/// A webhook just registered: its state and its secret, shown this once.
#[derive(Debug, Clone)]
pub struct WebhookSet {
    /// Whose it is.
    pub player: PlayerId,
    pub state: WebhookState,
    pub secret: String,
}

/// What the server needs to call a player's active webhook.
#[derive(Debug, Clone)]
pub(in crate::service) struct Hook {
    pub(in crate::service) url: String,
    pub(in crate::service) secret: String,
}

/// What a call's end did to the webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::service) enum Counted {
    /// Counted; the webhook is still active.
    Active,
    /// This failure paused it, for this reason.
    Paused(String),
    /// It is gone, or another webhook replaced it: nothing was counted.
    Gone,
}

impl Webhook {
    pub(super) fn state(&self) -> WebhookState {
        let mut sorted: Vec<u32> = self.latencies_ms.iter().copied().collect();
        sorted.sort_unstable();
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        WebhookState {
            url: self.url.clone(),
            paused_reason: self.paused.clone(),
            since_ms: self.since_ms,
            calls: self.calls,
            failures: self.failures,
            latency_ms: (!sorted.is_empty()).then(|| (at(0.5), at(0.99))),
        }
    }
}

fn new_secret() -> String {
    format!("{SECRET_PREFIX}{}", hex::encode(rand::random::<[u8; 32]>()))
}

/// A ping's challenge: 128 random bits.
fn challenge() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

impl PlayerRecord {
    /// Whether the server calls this player's webhook (it has one, active).
    pub(in crate::service) fn calls_hook(&self) -> bool {
        self.webhook.as_ref().is_some_and(|h| h.paused.is_none())
    }
}

impl Players {
    /// Registers `url` as the key's player's webhook, once it answered a ping: the URL
    /// must be one the server calls, and echo the ping's challenge within the webhook
    /// budget. Replaces any webhook before (and resumes a paused one).
    pub async fn set_webhook(&self, caller: &Caller, url: &str) -> Result<WebhookSet, Error> {
        let (_, record) = self.authenticate(caller).await?;
        let hooks = &self.ctx.webhooks;
        hooks
            .client
            .check_url(url)
            .map_err(|f| Error::InvalidWebhook(f.to_string()))?;
        let secret = new_secret();
        let challenge = challenge();
        let call_id = uuid::Uuid::new_v4().to_string();
        let body = serde_json::json!({"type": "ping", "call_id": call_id, "challenge": challenge});
        let answer = hooks
            .client
            .call(
                &record.id,
                url,
                secret.as_bytes(),
                &call_id,
                body.to_string().into_bytes(),
                hooks.timeout,
            )
            .await
            .map_err(|f| Error::InvalidWebhook(format!("the ping failed: {f}")))?;
        let echoed = serde_json::from_slice::<serde_json::Value>(&answer.body)
            .ok()
            .and_then(|v| {
                v.get("challenge")
                    .and_then(|c| c.as_str().map(str::to_owned))
            });
        if echoed.as_deref() != Some(challenge.as_str()) {
            return Err(Error::InvalidWebhook(
                "the ping's answer did not carry its challenge: answer a ping with \
                 {\"challenge\": <the ping's challenge>}"
                    .into(),
            ));
        }
        let hook = Webhook {
            url: url.to_owned(),
            secret: secret.clone(),
            since_ms: now_ms(),
            paused: None,
            failures_in_row: 0,
            calls: 0,
            failures: 0,
            latencies_ms: VecDeque::new(),
        };
        let id = record.id.clone();
        self.change_webhook(&id, |record| {
            record.webhook = Some(hook.clone());
            Some(())
        })
        .await?
        .ok_or(Error::PlayerNotFound)?;
        tracing::info!(player_id = %id, url, "webhook registered");
        Ok(WebhookSet {
            player: id,
            state: hook.state(),
            secret,
        })
    }

    /// The key's player's webhook.
    pub async fn webhook(&self, caller: &Caller) -> Result<WebhookState, Error> {
        let (_, record) = self.authenticate(caller).await?;
        record
            .webhook
            .as_ref()
            .map(Webhook::state)
            .ok_or(Error::WebhookNotFound)
    }

    /// Removes the key's player's webhook: its seats are played by pulling again.
    pub async fn remove_webhook(&self, caller: &Caller) -> Result<(), Error> {
        let (_, record) = self.authenticate(caller).await?;
        let id = record.id.clone();
        self.change_webhook(&id, |record| record.webhook.take().map(|_| ()))
            .await?
            .ok_or(Error::WebhookNotFound)?;
        tracing::info!(player_id = %id, "webhook removed");
        Ok(())
    }

    /// Player `player`'s webhook, if it has one that is active.
    pub(in crate::service) async fn hook_of(
        &self,
        player: &PlayerId,
    ) -> Result<Option<Hook>, Error> {
        Ok(self
            .player_record(player)
            .await?
            .and_then(|(_, record)| record.webhook)
            .filter(|hook| hook.paused.is_none())
            .map(|hook| Hook {
                url: hook.url,
                secret: hook.secret,
            }))
    }

    /// Counts a call to player `player`'s webhook `secret` (the one it was made with): its
    /// time if answered, else a failure, which pauses the webhook after `max_failures` in
    /// a row.
    pub(in crate::service) async fn count_call(
        &self,
        player: &PlayerId,
        secret: &str,
        answered: Result<Duration, String>,
    ) -> Result<Counted, Error> {
        let max_failures = self.ctx.webhooks.max_failures;
        let counted = self
            .change_webhook(player, |record| {
                let hook = record.webhook.as_mut().filter(|h| h.secret == secret)?;
                hook.calls += 1;
                match &answered {
                    Ok(took) => {
                        hook.failures_in_row = 0;
                        hook.latencies_ms
                            .push_back(u32::try_from(took.as_millis()).unwrap_or(u32::MAX));
                        if hook.latencies_ms.len() > LATENCIES_KEPT {
                            hook.latencies_ms.pop_front();
                        }
                        Some(Counted::Active)
                    }
                    Err(why) => {
                        hook.failures += 1;
                        hook.failures_in_row += 1;
                        if hook.paused.is_none() && hook.failures_in_row >= max_failures {
                            let reason = format!(
                                "{} calls in a row failed, the last: {why}",
                                hook.failures_in_row
                            );
                            hook.paused = Some(reason.clone());
                            Some(Counted::Paused(reason))
                        } else {
                            Some(Counted::Active)
                        }
                    }
                }
            })
            .await?;
        Ok(counted.unwrap_or(Counted::Gone))
    }

    /// Applies `change` to player `id`'s record and saves it, again on a lost race;
    /// `change` answering `None` saves nothing. `None` too when there is no such player.
    async fn change_webhook<T>(
        &self,
        id: &PlayerId,
        mut change: impl FnMut(&mut PlayerRecord) -> Option<T>,
    ) -> Result<Option<T>, Error> {
        for _ in 0..8 {
            let Some((version, mut record)) = self.player_record(id).await? else {
                return Ok(None);
            };
            let Some(answer) = change(&mut record) else {
                return Ok(None);
            };
            match self
                .ctx
                .store
                .players()
                .save_player(id, version, record.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => return Ok(Some(answer)),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Ok(None),
            }
        }
        Err(Error::Internal(
            "a player's record kept changing under its webhook's".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(latencies: &[u32]) -> Webhook {
        Webhook {
            url: "https://bot.example/".into(),
            secret: new_secret(),
            since_ms: 1,
            paused: None,
            failures_in_row: 0,
            calls: latencies.len() as u64,
            failures: 0,
            latencies_ms: latencies.iter().copied().collect(),
        }
    }

    #[test]
    fn a_webhooks_latency_is_its_answered_calls_median_and_99th_percentile() {
        assert_eq!(hook(&[]).state().latency_ms, None);
        assert_eq!(hook(&[40]).state().latency_ms, Some((40, 40)));
        let many: Vec<u32> = (1..=101).rev().collect();
        assert_eq!(hook(&many).state().latency_ms, Some((51, 100)));
    }

    #[test]
    fn a_secret_is_told_apart_from_a_key_and_holds_256_bits() {
        let secret = new_secret();
        assert!(
            secret.starts_with(SECRET_PREFIX) && !secret.starts_with(crate::domain::KEY_PREFIX)
        );
        assert_eq!(secret.len(), SECRET_PREFIX.len() + 64);
        assert_ne!(new_secret(), secret);
    }
}
