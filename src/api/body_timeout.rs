//! Slow bodies are cut: a request body must arrive whole within `BODY_TIMEOUT_MS` of its
//! head, or the request is answered 408 `request_timeout` and its connection closed.
//!
//! A slow head is cut (`HEAD_TIMEOUT_MS`, see [`crate::api::connection`]), but actix waits
//! for a body as long as its bytes trickle in, so a client sending one byte every few
//! seconds could hold a connection and a worker's attention for minutes. One middleware wraps every request's
//! payload in a deadline, so no route can forget it. The timer is only set when the body
//! is not already there: a body that came with its head (nearly all) costs no timer.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::{InternalError, PayloadError};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web::{self, Bytes};
use actix_web::{HttpMessage, HttpResponse, ResponseError};
use futures_util::Stream;
use tokio::time::{Instant, Sleep};

use crate::api::ApiError;
use crate::settings::Settings;

/// A payload that fails once its deadline passes before its end.
struct BodyDeadline {
    inner: Payload,
    deadline: Instant,
    /// Set on the first wait, so a body that is already there costs no timer.
    timer: Option<Pin<Box<Sleep>>>,
    /// Tells the middleware that this request's body was cut.
    cut: Rc<Cell<bool>>,
}

impl Stream for BodyDeadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.cut.get() {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(item);
        }
        let deadline = self.deadline;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                self.cut.set(true);
                Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the body arrived too slowly",
                )))))
            }
        }
    }
}

/// The 408 problem, with `Connection: close`: the rest of the body is not worth reading.
fn timed_out(limit: Duration) -> HttpResponse {
    let mut answer = ApiError::request_timeout(limit.as_millis() as u64).error_response();
    answer.head_mut().set_connection_type(ConnectionType::Close);
    answer
}

/// Middleware: answers 408 `request_timeout` (and closes the connection) when the body
/// did not arrive within the settings' `body_timeout`, whatever the handler made of the
/// failed read. Needs `web::Data<Settings>` in the app; without it, cuts nothing.
pub async fn cut_slow_bodies(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static, BoxBody>>, actix_web::Error> {
    let limit = req
        .app_data::<web::Data<Settings>>()
        .map(|s| s.body_timeout);
    let payload = req.take_payload();
    let cut = Rc::new(Cell::new(false));
    match (limit, payload) {
        // A request without a body has nothing to wait for.
        (_, Payload::None) => {}
        (Some(limit), payload) => {
            req.set_payload(Payload::Stream {
                payload: Box::pin(BodyDeadline {
                    inner: payload,
                    deadline: Instant::now() + limit,
                    timer: None,
                    cut: cut.clone(),
                }),
            });
        }
        (_, payload) => req.set_payload(payload),
    }
    let outcome = next.call(req).await;
    let Some(limit) = limit.filter(|_| cut.get()) else {
        return outcome.map(ServiceResponse::map_into_left_body);
    };
    tracing::debug!(limit_ms = limit.as_millis() as u64, "a slow body was cut");
    match outcome {
        Ok(res) => {
            let (req, _) = res.into_parts();
            Ok(ServiceResponse::new(req, timed_out(limit)).map_into_right_body())
        }
        Err(err) => Err(InternalError::from_response(err, timed_out(limit)).into()),
    }
}
