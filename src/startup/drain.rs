//! Stopping: the shutdown token, the requests in flight (their answers' bodies included)
//! that a stopping server waits for, and the signals that begin it.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServerHandle, ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web;
use actix_web::web::Bytes;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::api::connection::Answering;

/// What a stopping server gives the last answers to leave its sockets.
const FLUSH_ALLOWANCE: Duration = Duration::from_millis(250);

/// The one owner of stopping: the shutdown token, and the requests in flight (their
/// answers' bodies included) that a stopping server waits for.
pub(super) struct Drain {
    /// Cancelled on SIGTERM/SIGINT; the service's long polls and feeds select on it.
    stopping: CancellationToken,
    in_flight: AtomicUsize,
    /// Woken when the last request in flight is done.
    idle: Notify,
}

impl Drain {
    pub(super) fn new(stopping: CancellationToken) -> Drain {
        Drain {
            stopping,
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
        }
    }

    fn enter(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self.clone())
    }

    /// Resolves once no request is in flight.
    async fn idle(&self) {
        loop {
            // Created before the check: a wake-up in between is not lost.
            let woken = self.idle.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            woken.await;
        }
    }
}

/// One request in flight; dropped with its answer's body.
struct InFlight(Arc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// An answer's body, holding its request's place in flight until it is written (or the
/// client goes away).
pub(super) struct Tracked<B> {
    body: Pin<Box<B>>,
    _in_flight: InFlight,
    /// Holds its connection's head deadline off (see `api::connection`).
    _answering: Option<Answering>,
}

impl<B: MessageBody> MessageBody for Tracked<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        self.body.as_mut().poll_next(cx)
    }
}

/// Middleware: counts the request in flight until its answer is written (and, for its
/// connection, as a request being answered), and once the server is stopping makes every
/// answer close its connection.
pub(super) async fn track_in_flight<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<Tracked<B>>, actix_web::Error> {
    let drain = req
        .app_data::<web::Data<Drain>>()
        .expect("the app holds the drain")
        .clone()
        .into_inner();
    let in_flight = drain.enter();
    let answering = api::connection::answering(&req);
    let mut res = next.call(req).await?;
    if drain.stopping.is_cancelled() {
        res.response_mut()
            .head_mut()
            .set_connection_type(ConnectionType::Close);
    }
    Ok(res.map_body(|_, body| Tracked {
        body: Box::pin(body),
        _in_flight: in_flight,
        _answering: answering,
    }))
}

/// On SIGTERM or SIGINT: long polls answer and event streams end (the token), no new
/// connection is accepted, requests in flight get up to `grace` to finish, and then the
/// server stops, closing the connections left idle (actix's graceful stop would wait for
/// their keep-alive to run out).
pub(super) async fn stop_on_signal(server: ServerHandle, drain: Arc<Drain>, grace: Duration) {
    shutdown_signal().await;
    drain.stopping.cancel();
    server.pause().await;
    if tokio::time::timeout(grace, drain.idle()).await.is_err() {
        tracing::warn!(
            in_flight = drain.in_flight.load(Ordering::SeqCst),
            "SHUTDOWN_TIMEOUT_SECS ran out: stopping with requests in flight"
        );
    } else {
        // A body is done when its last bytes are handed to the connection, a moment
        // before they are written out; a forced stop in between would cut the answer.
        tokio::time::sleep(FLUSH_ALLOWANCE.min(grace)).await;
    }
    server.stop(false).await;
}

/// Resolves on the first SIGTERM (orchestrators) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received: answering long polls, ending streams, finishing in-flight requests"),
        () = terminate => tracing::info!("SIGTERM received: answering long polls, ending streams, finishing in-flight requests"),
    }
}
