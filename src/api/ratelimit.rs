//! Rate limits: per client address and per seat token, answered 429 `rate_limited` with
//! `Retry-After` before any handler runs, and told on every answer in the `RateLimit-Policy`
//! and `RateLimit` fields of the IETF draft (`draft-ietf-httpapi-ratelimit-headers-11`).
//!
//! Two keyed GCRA limiters (the `governor` crate), each a sustained rate and a burst
//! (`RATE_LIMIT_PER_IP*`, `RATE_LIMIT_PER_TOKEN*` in [`crate::settings`]):
//! - **per client address**: every request, keyed by the peer address of the connection
//!   (IPv6 by its /64, which one host commonly owns whole). `X-Forwarded-For` is believed
//!   only when `RATE_LIMIT_PROXY_HOPS` says how many proxies in front append to it, and
//!   then only the entry the outermost trusted proxy wrote: anything to its left was
//!   written by the client.
//! - **per seat token**: requests carrying `Authorization: Bearer <token>`, keyed by a hash
//!   of the token (the map holds no secrets). The token is not checked here (that needs
//!   the game): a made-up token is limited like a real one, and costs the address as well.
//!
//! The address is checked first, so a refused address spends none of a token's budget.
//! `/healthz`, `/readyz` and `/metrics` are never limited: an orchestrator or a scraper
//! must always be able to look at the process.
//!
//! **The fields.** Each limit that counted a request is one policy, `"per-ip"` or
//! `"per-token"`:
//! - `RateLimit-Policy: "per-ip";q=<burst>;w=<seconds>`: `q` requests at once, and the
//!   bucket refills whole in `w` seconds (the burst over the rate, rounded up, so the
//!   advertised rate is never above the real one);
//! - `RateLimit: "per-ip";r=<remaining>;t=<seconds>`: `r` requests may follow at once
//!   now, and `r` is back to `q` within `t` seconds (0: it is). On a 429 the refusing
//!   policy says `r=0` and `t` = `Retry-After`, so `Retry-After` never points before the
//!   end of the window (the draft's rule). A policy a refused request never reached (the
//!   token's, when the address is refused) is not listed.
//!
//! No partition key (`pk`) is sent: it would name the address or the token.
//!
//! **Memory** stays bounded: a key whose bucket is full again is indistinguishable from a
//! new one, and such keys are dropped every [`SWEEP_EVERY`] by the request that notices
//! it is due (no background task). So the maps hold the keys seen in the last few seconds
//! (at most the sweep interval plus the time a bucket takes to refill), whatever the
//! number of clients over a day.
//!
//! Nothing here logs an address or a token.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{ResponseError, web};
use governor::clock::Clock;
use governor::middleware::{StateInformationMiddleware, StateSnapshot};
use governor::{DefaultKeyedRateLimiter, NotUntil, Quota, RateLimiter};

use crate::api::ApiError;
use crate::api::client::{bearer, client_address, token_hash};
use crate::service::TokenHash;
use crate::settings::{RateLimit, Settings};

/// Paths never limited (operations endpoints).
pub const EXEMPT_PATHS: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// How often keys whose bucket has refilled are dropped.
pub const SWEEP_EVERY: Duration = Duration::from_secs(10);

pub use crate::address::AddressKey;

/// A seat token as a limiter key: the hash a game keeps of it (the first half of its
/// SHA-256), computed once a request ([`token_hash`]).
type TokenKey = TokenHash;

/// The `RateLimit-Policy` field: the policies that counted the request.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
/// The `RateLimit` field: where the request left each policy.
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// One limit, as the fields name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitPolicy {
    PerIp,
    PerToken,
}

impl LimitPolicy {
    pub fn name(self) -> &'static str {
        match self {
            LimitPolicy::PerIp => "per-ip",
            LimitPolicy::PerToken => "per-token",
        }
    }
}

/// Where a request left one limit: one item of the `RateLimit` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitLeft {
    pub policy: LimitPolicy,
    /// Requests that may follow at once (`r`).
    pub remaining: u32,
    /// Seconds until `remaining` is the whole burst again; on a refusal, until the next
    /// request passes (`t`).
    pub reset_secs: u32,
}

/// One request counted: where it left each limit that counted it, and whether one refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateCounted {
    /// At most one per policy, address first.
    pub standings: Vec<LimitLeft>,
    pub refusal: Option<RateRefusal>,
}

/// Which limit refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateRefusal {
    Address { retry_after_secs: u32 },
    Token { retry_after_secs: u32 },
}

impl RateRefusal {
    pub fn retry_after_secs(self) -> u32 {
        match self {
            RateRefusal::Address { retry_after_secs } | RateRefusal::Token { retry_after_secs } => {
                retry_after_secs
            }
        }
    }
}

type Limiter<K> = DefaultKeyedRateLimiter<K, StateInformationMiddleware>;

/// The server's limiters, shared by every worker.
pub struct RateLimits {
    per_address: Option<Limiter<AddressKey>>,
    per_token: Option<Limiter<TokenKey>>,
    /// The `RateLimit-Policy` field, by the limits that counted a request: address,
    /// token, both (a set of [`Policy`] bits, less one). Made once: it depends on the
    /// settings only.
    policy_fields: [Option<HeaderValue>; 3],
    proxy_hops: u8,
    /// The figures, for a refusal's detail.
    limit_per_ip: Option<RateLimit>,
    limit_per_token: Option<RateLimit>,
    born: Instant,
    /// Milliseconds after `born` of the last sweep.
    last_sweep_ms: AtomicU64,
}

fn quota(limit: RateLimit) -> Quota {
    Quota::per_second(limit.per_second).allow_burst(limit.burst)
}

fn limiter<K: std::hash::Hash + Eq + Clone>(limit: RateLimit) -> Limiter<K> {
    RateLimiter::keyed(quota(limit)).with_middleware::<StateInformationMiddleware>()
}

/// Whole seconds, rounded up.
fn ceil_secs(wait: Duration) -> u32 {
    u32::try_from(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).unwrap_or(u32::MAX)
}

/// Whole seconds to wait, at least 1 (a `Retry-After` of 0 invites a tight loop).
fn retry_after<P: governor::clock::Reference>(not_until: &NotUntil<P>, now: P) -> u32 {
    ceil_secs(not_until.wait_time_from(now)).max(1)
}

/// Where an allowed request left its limit. The snapshot rounds the remaining burst down,
/// so the refill time computed from it is an upper bound.
fn standing(policy: LimitPolicy, snapshot: &StateSnapshot) -> LimitLeft {
    let quota = snapshot.quota();
    let remaining = snapshot.remaining_burst_capacity();
    let missing = quota.burst_size().get().saturating_sub(remaining);
    LimitLeft {
        policy,
        remaining,
        reset_secs: ceil_secs(quota.replenish_interval().saturating_mul(missing)),
    }
}

/// One item of `RateLimit-Policy`: the burst, and the whole seconds it takes to refill
/// (rounded up: the rate it implies is never above the real one).
fn policy_item(policy: LimitPolicy, limit: RateLimit) -> String {
    let (burst, rate) = (limit.burst.get(), limit.per_second.get());
    format!(
        "\"{}\";q={burst};w={}",
        policy.name(),
        burst.div_ceil(rate).max(1)
    )
}

impl RateLimits {
    pub fn new(settings: &Settings) -> RateLimits {
        let address = settings
            .rate_limit_per_ip
            .map(|l| policy_item(LimitPolicy::PerIp, l));
        let token = settings
            .rate_limit_per_token
            .map(|l| policy_item(LimitPolicy::PerToken, l));
        let field = |items: &[&Option<String>]| {
            let items: Option<Vec<&str>> = items.iter().map(|i| i.as_deref()).collect();
            items.map(|items| {
                HeaderValue::from_str(&items.join(", "))
                    .expect("names and numbers are visible ASCII")
            })
        };
        RateLimits {
            per_address: settings.rate_limit_per_ip.map(limiter),
            per_token: settings.rate_limit_per_token.map(limiter),
            policy_fields: [
                field(&[&address]),
                field(&[&token]),
                field(&[&address, &token]),
            ],
            proxy_hops: settings.proxy_hops,
            limit_per_ip: settings.rate_limit_per_ip,
            limit_per_token: settings.rate_limit_per_token,
            born: Instant::now(),
            last_sweep_ms: AtomicU64::new(0),
        }
    }

    /// Counts one request of this address (if known) and token (if any); refuses it when
    /// either is over its limit.
    pub fn check(&self, address: Option<IpAddr>, token: Option<&TokenHash>) -> RateCounted {
        self.sweep_if_due();
        let mut counted = RateCounted {
            standings: Vec::with_capacity(2),
            refusal: None,
        };
        if let (Some(limiter), Some(address)) = (&self.per_address, address) {
            match limiter.check_key(&AddressKey::from(address)) {
                Ok(snapshot) => counted
                    .standings
                    .push(standing(LimitPolicy::PerIp, &snapshot)),
                Err(n) => {
                    let retry_after_secs = retry_after(&n, limiter.clock().now());
                    counted.standings.push(LimitLeft {
                        policy: LimitPolicy::PerIp,
                        remaining: 0,
                        reset_secs: retry_after_secs,
                    });
                    counted.refusal = Some(RateRefusal::Address { retry_after_secs });
                    return counted;
                }
            }
        }
        if let (Some(limiter), Some(key)) = (&self.per_token, token) {
            match limiter.check_key(key) {
                Ok(snapshot) => counted
                    .standings
                    .push(standing(LimitPolicy::PerToken, &snapshot)),
                Err(n) => {
                    let retry_after_secs = retry_after(&n, limiter.clock().now());
                    counted.standings.push(LimitLeft {
                        policy: LimitPolicy::PerToken,
                        remaining: 0,
                        reset_secs: retry_after_secs,
                    });
                    counted.refusal = Some(RateRefusal::Token { retry_after_secs });
                }
            }
        }
        counted
    }

    /// The two fields for a counted request; `None` when no limit counted it.
    pub fn fields(&self, counted: &RateCounted) -> Option<[(HeaderName, HeaderValue); 2]> {
        if counted.standings.is_empty() {
            return None;
        }
        let counted_by = counted
            .standings
            .iter()
            .fold(0, |set, s| set | (1 << s.policy as usize));
        let policy = self.policy_fields[counted_by - 1]
            .clone()
            .expect("a limit that counted is configured");
        // Written piece by piece: every limited answer carries it, and `format!` would
        // cost several times more.
        let mut limit = String::with_capacity(64);
        for s in &counted.standings {
            if !limit.is_empty() {
                limit.push_str(", ");
            }
            limit.push('"');
            limit.push_str(s.policy.name());
            limit.push_str("\";r=");
            limit.push_str(&s.remaining.to_string());
            limit.push_str(";t=");
            limit.push_str(&s.reset_secs.to_string());
        }
        let limit = HeaderValue::try_from(limit).expect("names and numbers are visible ASCII");
        Some([(RATELIMIT_POLICY, policy), (RATELIMIT, limit)])
    }

    /// Keys tracked now (addresses, tokens): what the sweep keeps bounded.
    pub fn tracked(&self) -> (usize, usize) {
        (
            self.per_address.as_ref().map_or(0, |l| l.len()),
            self.per_token.as_ref().map_or(0, |l| l.len()),
        )
    }

    /// Drops every key whose bucket has refilled, now.
    pub fn sweep(&self) {
        if let Some(l) = &self.per_address {
            l.retain_recent();
            l.shrink_to_fit();
        }
        if let Some(l) = &self.per_token {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }

    /// One request in [`SWEEP_EVERY`] sweeps; the others only read an atomic.
    fn sweep_if_due(&self) {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.last_sweep_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= SWEEP_EVERY.as_millis() as u64
            && self
                .last_sweep_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.sweep();
        }
    }

    /// The limit that made `refusal`, with its figures, as a refusal's detail names it.
    pub fn refused_by(&self, refusal: RateRefusal) -> String {
        let (policy, limit, whose) = match refusal {
            RateRefusal::Address { .. } => {
                (LimitPolicy::PerIp, self.limit_per_ip, "client address")
            }
            RateRefusal::Token { .. } => (LimitPolicy::PerToken, self.limit_per_token, "token"),
        };
        match limit {
            Some(l) => format!(
                "{} limit ({}/s a {whose}, {} at once)",
                policy.name(),
                l.per_second,
                l.burst
            ),
            None => format!("{} limit", policy.name()),
        }
    }

    /// Proxies trusted to append the client's address to `X-Forwarded-For`.
    pub fn proxy_hops(&self) -> u8 {
        self.proxy_hops
    }
}

/// Middleware: refuses a request over a limit with 429 `rate_limited` and `Retry-After`,
/// and puts `RateLimit-Policy` and `RateLimit` on every answer of a limited path.
/// Needs `web::Data<RateLimits>` in the app; without it, limits nothing.
pub async fn limit(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static, BoxBody>>, actix_web::Error> {
    let Some(limits) = req
        .app_data::<web::Data<RateLimits>>()
        .filter(|_| !EXEMPT_PATHS.contains(&req.path()))
        .cloned()
    else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body);
    };
    let address = client_address(
        limits.proxy_hops,
        req.peer_addr().map(|a| a.ip()),
        req.headers(),
    );
    // A malformed `Authorization` counts as none here: the handler refuses it.
    let token = bearer(req.headers())
        .ok()
        .flatten()
        .map(|token| token_hash(&req, token));
    let counted = limits.check(address, token.as_ref());
    let fields = limits.fields(&counted);
    let mut res = match counted.refusal {
        Some(refusal) => {
            let which = limits.refused_by(refusal);
            tracing::debug!(limit = %which, "rate limited");
            let answer =
                ApiError::rate_limited(&which, refusal.retry_after_secs()).error_response();
            req.into_response(answer).map_into_right_body()
        }
        None => next.call(req).await?.map_into_left_body(),
    };
    for (name, value) in fields.into_iter().flatten() {
        res.headers_mut().insert(name, value);
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn limits(per_ip: Option<(u32, u32)>, per_token: Option<(u32, u32)>, hops: u8) -> RateLimits {
        let limit = |(rate, burst): (u32, u32)| RateLimit {
            per_second: NonZeroU32::new(rate).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        };
        RateLimits::new(&Settings {
            rate_limit_per_ip: per_ip.map(limit),
            rate_limit_per_token: per_token.map(limit),
            proxy_hops: hops,
            ..Settings::default()
        })
    }

    /// Only whether the request passed.
    fn check(
        l: &RateLimits,
        address: Option<IpAddr>,
        token: Option<&str>,
    ) -> Result<(), RateRefusal> {
        match l.check(address, token.map(TokenHash::of).as_ref()).refusal {
            None => Ok(()),
            Some(refusal) => Err(refusal),
        }
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn a_token_gets_its_burst_then_waits_and_others_are_unaffected() {
        let l = limits(None, Some((1, 3)), 0);
        for _ in 0..3 {
            assert_eq!(check(&l, None, Some("alice")), Ok(()));
        }
        assert_eq!(
            check(&l, None, Some("alice")),
            Err(RateRefusal::Token {
                retry_after_secs: 1
            })
        );
        assert_eq!(check(&l, None, Some("bob")), Ok(()));
        assert_eq!(check(&l, ip("10.0.0.1"), None), Ok(()), "no address limit");
    }

    #[test]
    fn retry_after_rounds_up_the_wait() {
        // One request per 10 s: the next is due in 10 s.
        let l = RateLimits {
            per_address: Some(
                RateLimiter::keyed(Quota::with_period(Duration::from_secs(10)).unwrap())
                    .with_middleware::<StateInformationMiddleware>(),
            ),
            ..limits(None, None, 0)
        };
        assert_eq!(check(&l, ip("10.0.0.1"), None), Ok(()));
        assert_eq!(
            check(&l, ip("10.0.0.1"), None),
            Err(RateRefusal::Address {
                retry_after_secs: 10
            })
        );
    }

    #[test]
    fn an_address_over_its_limit_spends_no_token_budget() {
        let l = limits(Some((1, 1)), Some((1, 1)), 0);
        assert_eq!(check(&l, ip("10.0.0.1"), Some("t")), Ok(()));
        assert!(matches!(
            check(&l, ip("10.0.0.1"), Some("t")),
            Err(RateRefusal::Address { .. })
        ));
        // The token is refused only for its own sake, from another address.
        assert!(matches!(
            check(&l, ip("10.0.0.2"), Some("t")),
            Err(RateRefusal::Token { .. })
        ));
    }

    #[test]
    fn ipv6_addresses_share_their_64_and_mapped_ipv4_is_ipv4() {
        let l = limits(Some((1, 1)), None, 0);
        assert_eq!(check(&l, ip("2001:db8:1:2::1"), None), Ok(()));
        assert!(check(&l, ip("2001:db8:1:2:ffff::9"), None).is_err());
        assert_eq!(check(&l, ip("2001:db8:1:3::1"), None), Ok(()));
        assert_eq!(check(&l, ip("192.0.2.7"), None), Ok(()));
        assert!(check(&l, ip("::ffff:192.0.2.7"), None).is_err());
    }

    #[test]
    fn the_sweep_drops_refilled_keys() {
        let l = limits(Some((1000, 1)), Some((1000, 1)), 0);
        for i in 0..100u8 {
            check(
                &l,
                Some(IpAddr::from([10, 0, 0, i])),
                Some(&format!("t{i}")),
            )
            .unwrap();
        }
        assert_eq!(l.tracked(), (100, 100));
        std::thread::sleep(Duration::from_millis(20));
        l.sweep();
        assert_eq!(l.tracked(), (0, 0));
    }

    fn field(l: &RateLimits, counted: &RateCounted, name: &HeaderName) -> String {
        let fields = l.fields(counted).expect("fields");
        let (_, value) = fields.iter().find(|(n, _)| n == name).unwrap();
        value.to_str().unwrap().to_owned()
    }

    #[test]
    fn the_fields_name_each_limit_that_counted_with_its_quota_and_what_is_left() {
        // 5 at once and one a second; 10 at once, refilled at 4 a second: whole again in
        // 3 s (2.5 rounded up).
        let l = limits(Some((1, 5)), Some((4, 10)), 0);
        let first = l.check(ip("10.0.0.1"), None);
        assert_eq!(field(&l, &first, &RATELIMIT_POLICY), r#""per-ip";q=5;w=5"#);
        assert_eq!(field(&l, &first, &RATELIMIT), r#""per-ip";r=4;t=1"#);
        let second = l.check(ip("10.0.0.1"), Some(&TokenHash::of("tok")));
        assert_eq!(
            field(&l, &second, &RATELIMIT_POLICY),
            r#""per-ip";q=5;w=5, "per-token";q=10;w=3"#
        );
        assert_eq!(
            field(&l, &second, &RATELIMIT),
            r#""per-ip";r=3;t=2, "per-token";r=9;t=1"#
        );
        assert_eq!(
            l.fields(&limits(None, None, 0).check(ip("10.0.0.1"), Some(&TokenHash::of("tok")))),
            None
        );
    }

    #[test]
    fn a_refusal_says_nothing_is_left_until_retry_after() {
        let l = limits(Some((1, 2)), None, 0);
        check(&l, ip("10.0.0.1"), None).unwrap();
        check(&l, ip("10.0.0.1"), None).unwrap();
        let refused = l.check(ip("10.0.0.1"), Some(&TokenHash::of("tok")));
        let Some(refusal) = refused.refusal else {
            panic!("the third request is over the burst")
        };
        assert_eq!(
            field(&l, &refused, &RATELIMIT),
            format!(r#""per-ip";r=0;t={}"#, refusal.retry_after_secs())
        );
    }
}
