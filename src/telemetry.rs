//! Logs: the tracing subscriber, and the request middleware that ties every log line of a
//! request to a request id.
//!
//! Owns how and where log lines are written. It must never log a request's
//! `Authorization` header (a seat token is a bearer secret) nor any body (bodies hold
//! hands and tokens): the request span records only the id, the method and the path.
//!
//! Cost matters here: writing one line per request at `info` measured a 20-50% throughput
//! loss on this server, so the access line is at `debug` (off by default). A request still
//! costs one span (no output, a few allocations), which is what makes the request id
//! appear on every line that *is* written: warnings, errors and whatever the service logs.

use std::io::IsTerminal;
use std::time::Instant;

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::InternalError;
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::{Instrument, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;
use uuid::Uuid;

use crate::settings::LogFormat;

/// The header that carries the request id, both ways.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The longest incoming request id kept; longer ones are replaced.
pub const MAX_REQUEST_ID_LEN: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("RUST_LOG: {0}")]
    Filter(#[from] tracing_subscriber::filter::ParseError),
    #[error("a global tracing subscriber is already installed: {0}")]
    AlreadyInstalled(String),
}

/// Installs the global subscriber: `filter` is `RUST_LOG`'s syntax, `writer` is where
/// lines go (stdout in the binary, a sink in quiet tests). Also routes the `log` crate's
/// records (actix-server's, redis's) into tracing.
pub fn init<W>(format: LogFormat, filter: &str, writer: W) -> Result<(), TelemetryError>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    subscriber(format, filter, writer)?
        .try_init()
        .map_err(|e| TelemetryError::AlreadyInstalled(e.to_string()))
}

/// The subscriber [`init`] installs, for a caller that installs it otherwise (a test
/// that captures lines with `tracing::subscriber::set_default`).
pub fn subscriber<W>(
    format: LogFormat,
    filter: &str,
    writer: W,
) -> Result<Box<dyn Subscriber + Send + Sync>, TelemetryError>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = EnvFilter::builder().parse(filter)?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    Ok(match format {
        // The default formatter rather than `.pretty()`: one line per event stays
        // greppable, and it still shows the span (so the request id) in front.
        LogFormat::Pretty => Box::new(builder.with_ansi(std::io::stdout().is_terminal()).finish()),
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(true)
                .with_current_span(true)
                // The request span is the only one that matters; the list would repeat it.
                .with_span_list(false)
                .finish(),
        ),
    })
}

/// The id of the request being served, in the request's extensions for handlers that
/// want to mention it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(pub String);

/// An incoming id is kept only if it cannot surprise a log reader or a header parser.
fn is_sane_request_id(id: &str) -> bool {
    (1..=MAX_REQUEST_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Middleware: request id, request span, `X-Request-Id` on every answer, one `debug`
/// access line per request, and a `warn`/`error` line per 5xx with its cause.
pub async fn request_telemetry(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody + 'static>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|id| is_sane_request_id(id))
        .map_or_else(|| Uuid::new_v4().to_string(), str::to_owned);
    // ERROR level, because a span's level only decides whether it exists: this way it
    // exists whenever any line of the request can be written (even with RUST_LOG=warn),
    // and every such line carries the id.
    let span = tracing::error_span!("request", request_id = %id, method = %req.method(), path = %req.path());
    req.extensions_mut().insert(RequestId(id.clone()));
    let started = Instant::now();
    // The id is a UUID or passed `is_sane_request_id`, so always a valid header value.
    let header = HeaderValue::from_str(&id).ok();

    let outcome = next.call(req).instrument(span.clone()).await;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    match outcome {
        Ok(mut res) => {
            if let Some(header) = header {
                res.headers_mut().insert(REQUEST_ID_HEADER, header);
            }
            span.in_scope(|| log_answer(res.status(), res.response().error(), latency_ms));
            Ok(res)
        }
        // Inner services answer their own errors, so this is an inner middleware's
        // failure; its answer travels inside the error, and gets the id all the same.
        Err(err) => {
            let mut answer = err.error_response();
            if let Some(header) = header {
                answer.headers_mut().insert(REQUEST_ID_HEADER, header);
            }
            span.in_scope(|| log_answer(answer.status(), Some(&err), latency_ms));
            Err(InternalError::from_response(err, answer).into())
        }
    }
}

fn log_answer(status: StatusCode, error: Option<&actix_web::Error>, latency_ms: f64) {
    if status.is_server_error() {
        let cause = error.map(ToString::to_string);
        let cause = cause.as_deref().unwrap_or("(no cause recorded)");
        // A store that does not answer is an outage to watch, not a bug.
        if status == StatusCode::SERVICE_UNAVAILABLE {
            tracing::warn!(
                status = status.as_u16(),
                latency_ms,
                cause,
                "request failed"
            );
        } else {
            tracing::error!(
                status = status.as_u16(),
                latency_ms,
                cause,
                "request failed"
            );
        }
    } else {
        tracing::debug!(status = status.as_u16(), latency_ms, "request served");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use actix_web::middleware::from_fn;
    use actix_web::test as actix_test;
    use actix_web::{App, HttpResponse, web};

    use super::*;

    #[test]
    fn only_short_plain_request_ids_are_kept() {
        assert!(is_sane_request_id("abc-DEF_123"));
        assert!(is_sane_request_id(&"a".repeat(64)));
        assert!(!is_sane_request_id(&"a".repeat(65)));
        assert!(!is_sane_request_id(""));
        assert!(!is_sane_request_id("a b"));
        assert!(!is_sane_request_id("a\u{1b}[31m"));
        assert!(!is_sane_request_id("id;drop"));
    }

    #[test]
    fn a_bad_filter_names_rust_log() {
        let err = init(LogFormat::Json, "info,x=nonsense", std::io::sink).unwrap_err();
        assert!(err.to_string().starts_with("RUST_LOG:"), "{err}");
    }

    /// Lines written by a subscriber, kept for inspection.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    #[actix_web::test]
    async fn every_line_of_a_request_carries_its_id_and_no_secret() {
        let captured = Captured::default();
        // `actix_web::test` serves on this thread, so a thread-local subscriber sees it.
        let _guard = tracing::subscriber::set_default(
            subscriber(LogFormat::Json, "warn", captured.clone()).unwrap(),
        );
        let app = actix_test::init_service(App::new().wrap(from_fn(request_telemetry)).route(
            "/fail",
            web::post().to(|_: String| async {
                tracing::warn!("the handler warns");
                HttpResponse::InternalServerError().finish()
            }),
        ))
        .await;
        let req = actix_test::TestRequest::post()
            .uri("/fail")
            .insert_header(("Authorization", "Bearer seat-secret-token"))
            .set_payload("hand: 6-6 5-5")
            .to_request();
        let res = actix_test::call_service(&app, req).await;
        let id = res
            .headers()
            .get(&REQUEST_ID_HEADER)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();

        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            2,
            "the handler's warning and the 5xx line:\n{text}"
        );
        for line in &lines {
            assert_eq!(line["span"]["request_id"], id.as_str(), "{line}");
            assert_eq!(line["span"]["path"], "/fail", "{line}");
        }
        assert_eq!(lines[1]["level"], "ERROR");
        assert_eq!(lines[1]["status"], 500);
        // The body whole: a random request id may hold "6-6" by itself.
        assert!(
            !text.contains("seat-secret-token") && !text.contains("6-6 5-5"),
            "{text}"
        );
    }
}
