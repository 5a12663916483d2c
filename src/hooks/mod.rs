//! Calls out to bots' webhooks: the one place the server opens a connection of its own.
//! A bot's URL is an address its owner chose, so every call is guarded: the host is
//! resolved once and only its public addresses are connected to (no second lookup, so no
//! DNS rebinding; [`guard`] says which are refused), no redirect is followed, the answer is
//! read to 16 KiB at most, the whole call ends at its budget, and calls in flight are
//! capped per owner and in all. A hostile bot server (one that drips, never closes or
//! sends a gigabyte) costs one bounded task. Signing is Stripe's scheme ([`signature`]).

pub mod guard;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hmac::{Hmac, KeyInit, Mac};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use sha2::Sha256;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest answer read: a move body is a few hundred bytes.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024;

/// What [`Hooks`] is built from (the `WEBHOOK_*` settings).
#[derive(Debug, Clone, Copy)]
pub struct HookLimits {
    /// Calls to private, loopback and other inner addresses allowed (local development).
    pub allow_private: bool,
    /// Calls in flight to one owner's URL, at most.
    pub per_owner: usize,
    /// Calls in flight in all, at most.
    pub total: usize,
}

/// Why a call brought no answer to play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The URL is not one the server calls (not http(s), no host).
    Url(String),
    /// The host is, or resolves only to, an address the server does not call.
    Refused(String),
    /// No connection was made (the name did not resolve, or nobody answered).
    Connect(String),
    /// No whole answer within the budget.
    Timeout,
    /// Answered with a status other than 2xx (a redirect included: none is followed).
    Status(u16),
    /// The answer is over [`MAX_ANSWER_BYTES`].
    TooLarge,
    /// The answer could not be read, or said nothing the caller could use.
    Unreadable(String),
    /// As many calls to this bot (or in all) are in flight as allowed, for the whole
    /// budget.
    Busy,
}

impl Failure {
    /// The failure's kind, as metrics label it.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Url(_) => "url",
            Failure::Refused(_) => "refused_address",
            Failure::Connect(_) => "connect",
            Failure::Timeout => "timeout",
            Failure::Status(_) => "status",
            Failure::TooLarge => "too_large",
            Failure::Unreadable(_) => "unreadable",
            Failure::Busy => "busy",
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Url(why) => write!(f, "the URL is not one the server calls: {why}"),
            Failure::Refused(why) => write!(f, "the server does not call {why}"),
            Failure::Connect(why) => write!(f, "no connection: {why}"),
            Failure::Timeout => f.write_str("no whole answer within the time allowed"),
            Failure::Status(status) => write!(f, "answered {status}, not 2xx"),
            Failure::TooLarge => write!(f, "the answer is over {MAX_ANSWER_BYTES} bytes"),
            Failure::Unreadable(why) => write!(f, "the answer could not be used: {why}"),
            Failure::Busy => f.write_str("too many calls to this bot in flight"),
        }
    }
}

/// A call's answer: its body and how long it took.
#[derive(Debug)]
pub struct Answer {
    pub body: Vec<u8>,
    pub took: Duration,
}

/// The `Domino-Signature` header of a call made at `t_ms` (unix ms) with `body`:
/// `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, Stripe's scheme: the bot checks it,
/// and refuses a stale `t`, so a call cannot be forged or replayed later.
pub fn signature(secret: &[u8], t_ms: u64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(t_ms.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={t_ms},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// The resolver the client connects through: the public addresses of a name only.
#[derive(Clone)]
struct Guarded {
    allow_private: bool,
}

/// Every address a name resolved to was refused.
#[derive(Debug)]
struct RefusedName(String);

impl fmt::Display for RefusedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RefusedName {}

type Resolving =
    Pin<Box<dyn Future<Output = Result<std::vec::IntoIter<SocketAddr>, std::io::Error>> + Send>>;

impl tower_service::Service<Name> for Guarded {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Resolving;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut why = None;
            let public: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match guard::refused(addr.ip()) {
                    Some(reason) if !allow_private => {
                        why.get_or_insert_with(|| format!("{host} ({}): {reason}", addr.ip()));
                        false
                    }
                    _ => true,
                })
                .collect();
            if public.is_empty() {
                let why = why.unwrap_or_else(|| format!("{host}: no address"));
                return Err(std::io::Error::other(RefusedName(why)));
            }
            Ok(public.into_iter())
        })
    }
}

type Https = hyper_rustls::HttpsConnector<HttpConnector<Guarded>>;

/// The webhook client: one per process.
pub struct Hooks {
    http: Client<Https, Full<Bytes>>,
    limits: HookLimits,
    total: Arc<Semaphore>,
    /// Per owner (a player's id), its calls in flight.
    owners: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Hooks {
    pub fn new(limits: HookLimits) -> Hooks {
        let mut http = HttpConnector::new_with_resolver(Guarded {
            allow_private: limits.allow_private,
        });
        // The scheme is https's or http's, as the URL says.
        http.enforce_http(false);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(Arc::new(rustls::crypto::ring::default_provider()))
            .expect("ring offers the default protocol versions")
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        // A bot's server keeps few idle connections of ours, and not for long.
        let http = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(limits.per_owner.max(1))
            .pool_idle_timeout(Duration::from_secs(30))
            .build(https);
        Hooks {
            http,
            limits,
            total: Arc::new(Semaphore::new(limits.total.max(1))),
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// `url` if the server would call it: http or https, with a host, and not an address
    /// literal it refuses. A name is judged by what it resolves to, at each call.
    pub fn check_url(&self, url: &str) -> Result<url::Url, Failure> {
        let parsed = url::Url::parse(url).map_err(|e| Failure::Url(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Failure::Url(format!(
                "the scheme is {}, not http or https",
                parsed.scheme()
            )));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(Failure::Url("it holds a user name or password".into()));
        }
        let ip = match parsed.host() {
            None => return Err(Failure::Url("it has no host".into())),
            Some(url::Host::Domain(_)) => return Ok(parsed),
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        };
        match guard::refused(ip) {
            Some(why) if !self.limits.allow_private => {
                Err(Failure::Refused(format!("{ip}: {why}")))
            }
            _ => Ok(parsed),
        }
    }

    /// A permit for one more call to `owner`'s URL, waited for until `deadline` at most.
    async fn permit(
        &self,
        owner: &str,
        deadline: Instant,
    ) -> Result<(OwnedSemaphorePermit, OwnedSemaphorePermit), Failure> {
        let mine = {
            let mut owners = self.owners.lock().expect("not poisoned");
            // Owners with nothing in flight are forgotten, so the map holds the busy ones.
            if owners.len() > 1024 {
                owners.retain(|_, s| Arc::strong_count(s) > 1);
            }
            owners
                .entry(owner.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(self.limits.per_owner.max(1))))
                .clone()
        };
        let deadline = tokio::time::Instant::from_std(deadline);
        let mine = tokio::time::timeout_at(deadline, mine.acquire_owned())
            .await
            .map_err(|_| Failure::Busy)?
            .map_err(|_| Failure::Busy)?;
        let all = tokio::time::timeout_at(deadline, self.total.clone().acquire_owned())
            .await
            .map_err(|_| Failure::Busy)?
            .map_err(|_| Failure::Busy)?;
        Ok((mine, all))
    }

    /// POSTs `body` to `url` for `owner`, signed with `secret`, and reads its answer, all
    /// within `budget`: a 2xx answer of at most [`MAX_ANSWER_BYTES`] is the only success.
    pub async fn call(
        &self,
        owner: &str,
        url: &str,
        secret: &[u8],
        call_id: &str,
        body: Vec<u8>,
        budget: Duration,
    ) -> Result<Answer, Failure> {
        let began = Instant::now();
        let url = self.check_url(url)?;
        let _permits = self.permit(owner, began + budget).await?;
        let left = budget.saturating_sub(began.elapsed());
        let t_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let uri: hyper::Uri = url
            .as_str()
            .parse()
            .map_err(|e: hyper::http::uri::InvalidUri| Failure::Url(e.to_string()))?;
        let request = hyper::Request::post(uri)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(
                hyper::header::USER_AGENT,
                concat!("domino-server/", env!("CARGO_PKG_VERSION"), " (webhook)"),
            )
            .header("Domino-Signature", signature(secret, t_ms, &body))
            .header("Domino-Call-Id", call_id)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure::Url(e.to_string()))?;
        let body = tokio::time::timeout(left, async move {
            let res = self
                .http
                .request(request)
                .await
                .map_err(|e| sent_error(&e))?;
            let status = res.status();
            if !status.is_success() {
                return Err(Failure::Status(status.as_u16()));
            }
            // Read to the cap and no further: a gigabyte costs 16 KiB.
            match Limited::new(res.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
            {
                Ok(body) => Ok(body.to_bytes().to_vec()),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(Failure::TooLarge),
                Err(e) => Err(Failure::Unreadable(e.to_string())),
            }
        })
        .await
        .map_err(|_| Failure::Timeout)??;
        Ok(Answer {
            body,
            took: began.elapsed(),
        })
    }
}

/// What a failed send was: a refused name (our resolver's answer), or a connection that
/// was not made or broke.
fn sent_error(e: &hyper_util::client::legacy::Error) -> Failure {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        // The resolver's refusal travels inside an I/O error, whose `source` skips it.
        let inner = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<RefusedName>());
        if let Some(refused) = err.downcast_ref::<RefusedName>().or(inner) {
            return Failure::Refused(refused.0.clone());
        }
        source = err.source();
    }
    let mut why = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(err) = source {
        why = format!("{why}: {err}");
        source = err.source();
    }
    Failure::Connect(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(allow_private: bool) -> Hooks {
        Hooks::new(HookLimits {
            allow_private,
            per_owner: 2,
            total: 8,
        })
    }

    #[test]
    fn a_signature_is_stripes_scheme_over_time_and_body() {
        // HMAC-SHA256("secret", "1700000000000.{}"), computed apart with Python's hmac.
        assert_eq!(
            signature(b"secret", 1_700_000_000_000, b"{}"),
            "t=1700000000000,v1=8399216d111287e3bb28e25c0f4f31dffdf831c68c9ee2b96c2f67c9b81d341b"
        );
    }

    #[test]
    fn only_http_urls_to_allowed_hosts_are_called() {
        let strict = hooks(false);
        assert!(strict.check_url("https://bot.example/move").is_ok());
        assert!(strict.check_url("http://93.184.216.34:8080/").is_ok());
        for (url, kind) in [
            ("ftp://bot.example/", "url"),
            ("file:///etc/passwd", "url"),
            ("http://user:pw@bot.example/", "url"),
            ("not a url", "url"),
            ("http://127.0.0.1:8080/", "refused_address"),
            ("http://[::1]/", "refused_address"),
            ("http://[::ffff:169.254.169.254]/", "refused_address"),
            ("http://169.254.169.254/latest/meta-data", "refused_address"),
            ("http://10.0.0.1/", "refused_address"),
        ] {
            let failure = strict.check_url(url).unwrap_err();
            assert_eq!(failure.kind(), kind, "{url}: {failure}");
        }
        assert!(hooks(true).check_url("http://127.0.0.1:8080/").is_ok());
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_before_connecting() {
        let failure = hooks(false)
            .call(
                "p",
                "http://localhost:9/",
                b"k",
                "c",
                b"{}".to_vec(),
                Duration::from_secs(2),
            )
            .await
            .unwrap_err();
        assert_eq!(failure.kind(), "refused_address", "{failure}");
        assert!(failure.to_string().contains("loopback"), "{failure}");
    }
}
