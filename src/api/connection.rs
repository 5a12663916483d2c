//! What one connection may hold: a cap on the connections one client address keeps open
//! (`MAX_CONNECTIONS_PER_IP`), and a deadline on every request head (`HEAD_TIMEOUT_MS`),
//! not only the first.
//!
//! actix cuts a slow *first* head (`client_request_timeout`), but arms that timer once
//! per connection: after an answer on a kept-alive connection, the first byte of the next
//! head cancels the keep-alive timer and nothing replaces it, so one byte held the
//! connection for ever. Only the bytes on the socket show when a next head begins, so
//! every connection's stream is wrapped ([`Watched`]): a read between two requests arms
//! the deadline, a request reaching the app ([`answering`]) disarms it, and past it the
//! read side reports its end, which makes actix close the connection. A connection with
//! no byte of a next head is left to actix's keep-alive timer.
//!
//! The cap is counted when a connection is accepted, before actix reads anything: a
//! connection over it gets a written 429 problem and is closed at once, so refusing costs
//! the server no more than the refused client's round trip.

use std::cell::Cell;
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::ResponseError;
use actix_web::dev::ServiceRequest;
use actix_web::rt::net::TcpStream;
use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::address::AddressKey;
use crate::api::{ApiError, ProblemCode};
use crate::metrics::Metrics;

/// `Retry-After` of a connection refused by the cap: a kept-alive connection left idle
/// closes within the keep-alive (5 s), freeing its place.
pub const CONNECTION_RETRY_AFTER_SECS: u32 = 5;

/// The longest a refused connection is kept to deliver its 429: long enough for the
/// client to read it and close, short enough that refusals cost the server nothing.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// The connection caps and head deadline of one server, shared by its workers.
pub struct ConnectionLimits {
    /// `None`: connections are not counted per address.
    per_address: Option<usize>,
    open: Mutex<HashMap<AddressKey, usize>>,
    head_timeout: Duration,
    /// How long a head already buffered by actix may wait after an answer: the keep-alive
    /// (so an idle connection is closed by it first) and a head's time.
    buffered_head_timeout: Duration,
    /// The whole 429 answer, written as is.
    refusal: Vec<u8>,
    refused: Counter,
    heads_cut: Counter,
}

impl ConnectionLimits {
    /// `per_address`: connections one address may keep open (`None`: no cap);
    /// `keep_alive`: how long actix keeps an idle connection.
    pub fn new(
        per_address: Option<usize>,
        head_timeout: Duration,
        keep_alive: Duration,
        metrics: &Metrics,
    ) -> ConnectionLimits {
        ConnectionLimits {
            per_address,
            open: Mutex::new(HashMap::new()),
            head_timeout,
            buffered_head_timeout: keep_alive + head_timeout,
            refusal: refusal(per_address.unwrap_or(0)),
            refused: metrics.connection_refusals.clone(),
            heads_cut: metrics.heads_cut.clone(),
        }
    }

    /// A place for a connection from `peer`, or `None` when its address has its cap.
    fn admit(&self, peer: Option<SocketAddr>) -> Option<Option<AddressKey>> {
        let (Some(max), Some(peer)) = (self.per_address, peer) else {
            return Some(None);
        };
        let key = AddressKey::from(peer.ip());
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(key).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(Some(key))
    }

    fn release(&self, key: AddressKey) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&key);
            }
        }
    }

    /// Connections open now from the address of `ip`.
    #[cfg(test)]
    fn open_from(&self, ip: std::net::IpAddr) -> usize {
        let open = self.open.lock().unwrap();
        open.get(&AddressKey::from(ip)).copied().unwrap_or(0)
    }

    /// Takes an accepted connection: watched, or answered 429 and closed when its address
    /// has its cap (then `Err`, which ends the connection without a log line).
    pub async fn accept(
        self: Arc<Self>,
        io: TcpStream,
    ) -> io::Result<(Watched, Option<SocketAddr>)> {
        let peer = io.peer_addr().ok();
        let Some(key) = self.admit(peer) else {
            self.refused.inc();
            tracing::debug!(peer = ?peer, "a connection over MAX_CONNECTIONS_PER_IP refused");
            refuse(io, &self.refusal).await;
            return Err(io::Error::other("over MAX_CONNECTIONS_PER_IP"));
        };
        let watch = Rc::new(HeadWatch {
            answering: Cell::new(0),
            read_since_answer: Cell::new(false),
            deadline: Cell::new(None),
            head_timeout: self.head_timeout,
            buffered_head_timeout: self.buffered_head_timeout,
        });
        Ok((
            Watched {
                io,
                watch,
                timer: None,
                key,
                limits: self,
            },
            peer,
        ))
    }
}

/// The answer to a connection over the cap, whole: status line, headers and problem.
fn refusal(max: usize) -> Vec<u8> {
    let problem = ApiError::new(
        ProblemCode::RateLimited,
        format!(
            "this address has {max} connections open already (MAX_CONNECTIONS_PER_IP); \
             reuse one (keep-alive) or close one, and retry"
        ),
    )
    .retry_after(CONNECTION_RETRY_AFTER_SECS);
    let status = problem.status_code();
    let body = serde_json::to_vec(&problem.problem()).unwrap_or_default();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: {}\r\nretry-after: {CONNECTION_RETRY_AFTER_SECS}\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        crate::api::error::PROBLEM_JSON,
        body.len(),
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

/// Writes the 429, ends the write side, and reads until the client closes (or
/// `REFUSAL_LINGER` passes): closing a socket with unread bytes sends a reset, which can
/// destroy the answer before the client has read it.
async fn refuse(mut io: TcpStream, answer: &[u8]) {
    let _ = tokio::time::timeout(REFUSAL_LINGER, async {
        io.write_all(answer).await?;
        io.shutdown().await?;
        let mut sink = [0u8; 2048];
        while io.read(&mut sink).await? > 0 {}
        Ok::<_, io::Error>(())
    })
    .await;
}

/// What a connection's stream and its requests share: whether a request is being
/// answered, and when the head being read must be whole. One worker thread owns both.
pub struct HeadWatch {
    /// Requests in the app whose answers are not yet written.
    answering: Cell<u32>,
    /// Whether a byte was read since the last answer ended.
    read_since_answer: Cell<bool>,
    deadline: Cell<Option<Instant>>,
    head_timeout: Duration,
    buffered_head_timeout: Duration,
}

impl HeadWatch {
    fn bytes_read(&self) {
        if self.answering.get() == 0 && !self.read_since_answer.replace(true) {
            self.deadline.set(Some(Instant::now() + self.head_timeout));
        }
    }
}

/// A request being answered on a watched connection: no head deadline runs until it is
/// dropped, with its answer's body.
pub struct Answering(Rc<HeadWatch>);

/// Marks the request's connection busy until the returned value is dropped (`None` on a
/// connection that is not watched, e.g. in tests of the app alone).
pub fn answering(req: &ServiceRequest) -> Option<Answering> {
    let watch = req.conn_data::<Rc<HeadWatch>>()?;
    watch.answering.set(watch.answering.get() + 1);
    watch.deadline.set(None);
    Some(Answering(watch.clone()))
}

impl Drop for Answering {
    fn drop(&mut self) {
        let watch = &self.0;
        let left = watch.answering.get().saturating_sub(1);
        watch.answering.set(left);
        if left == 0 {
            // A next head may already wait in actix's buffer, read along with this request:
            // it gets the keep-alive and a head's time; a later first byte restarts it. The
            // reading task is not woken to arm the timer (a whole poll of the connection,
            // a quarter of a move's): actix arms its keep-alive timer as the answer ends,
            // which closes the connection first unless a byte arrives, and the read of that
            // byte arms the head's deadline.
            watch.read_since_answer.set(false);
            watch
                .deadline
                .set(Some(Instant::now() + watch.buffered_head_timeout));
        }
    }
}

/// An accepted connection's stream: the per-address place it holds, and the deadline of
/// the head being read.
pub struct Watched {
    io: TcpStream,
    watch: Rc<HeadWatch>,
    /// Made on the first wait that has a deadline.
    timer: Option<Pin<Box<Sleep>>>,
    key: Option<AddressKey>,
    limits: Arc<ConnectionLimits>,
}

impl Watched {
    /// What the connection's requests see of it (`conn_data`).
    pub fn watch(&self) -> Rc<HeadWatch> {
        self.watch.clone()
    }

    /// Whether the head being read is past its deadline; else the timer wakes this task.
    fn head_late(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.watch.deadline.get() else {
            return false;
        };
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx).is_ready()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.limits.release(key);
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                this.watch.bytes_read();
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                if this.head_late(cx) {
                    this.limits.heads_cut.inc();
                    tracing::debug!("a request head was not whole within HEAD_TIMEOUT_MS: closed");
                    // The end of the stream: actix closes the connection.
                    this.watch.deadline.set(None);
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().unwrap(), 40_000))
    }

    #[test]
    fn an_address_gets_its_cap_of_places_and_ipv6_counts_per_64() {
        let limits = ConnectionLimits::new(
            Some(2),
            Duration::from_secs(5),
            Duration::from_secs(5),
            &Metrics::new(),
        );
        let a = limits.admit(peer("192.0.2.1")).unwrap().unwrap();
        assert!(limits.admit(peer("192.0.2.1")).is_some());
        assert!(limits.admit(peer("192.0.2.1")).is_none());
        // Another address has places of its own.
        assert!(limits.admit(peer("192.0.2.2")).is_some());
        // A /64 is one client, whatever its interface ids.
        assert!(limits.admit(peer("2001:db8:1:2::1")).is_some());
        assert!(limits.admit(peer("2001:db8:1:2::ffff")).is_some());
        assert!(limits.admit(peer("2001:db8:1:2:3:4:5:6")).is_none());
        // A closed connection gives its place back; an address with none is forgotten.
        limits.release(a);
        assert_eq!(limits.open_from("192.0.2.1".parse().unwrap()), 1);
        assert!(limits.admit(peer("192.0.2.1")).is_some());
    }

    #[test]
    fn without_a_cap_no_connection_is_counted() {
        let limits = ConnectionLimits::new(
            None,
            Duration::from_secs(5),
            Duration::from_secs(5),
            &Metrics::new(),
        );
        for _ in 0..1000 {
            assert_eq!(limits.admit(peer("192.0.2.1")), Some(None));
        }
    }

    #[test]
    fn the_refusal_is_a_whole_http_answer_with_a_problem_naming_the_setting() {
        let answer = String::from_utf8(refusal(7)).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nconnection: close"), "{head}");
        assert!(
            head.contains(&format!("\r\ncontent-length: {}", body.len())),
            "{head}"
        );
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["code"], "rate_limited");
        assert_eq!(problem["status"], 429);
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains("MAX_CONNECTIONS_PER_IP") && detail.contains('7'),
            "{detail}"
        );
    }
}
