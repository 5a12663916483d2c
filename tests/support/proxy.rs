//! A TCP proxy to the test Redis that a test can take down and bring back: a Redis outage
//! confined to one test, never disturbing the shared Redis or the other tests.
//!
//! Shared by the store tests and the API fault tests (`#[path]`-included: it is not a test
//! target of its own). Three states:
//! - up: every connection is piped to Redis;
//! - down ([`Proxy::stop`]): the port is closed and every connection cut, so connecting is
//!   refused at once (Redis stopped, or its host gone with a reset);
//! - silent ([`Proxy::hang`]): every connection is cut, and new ones are accepted but never
//!   answered (a partition that drops packets): only the client's timeouts end a call.
//!
//! While up, it can also hold back Redis's answers to scripts ([`Proxy::delay_scripts`]:
//! a write Redis applied but answered late) and counts what clients send
//! ([`Proxy::sent`]: one count per chunk read, about one per request or pipeline).
#![allow(dead_code)] // each includer uses its own part

use std::io;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

pub struct Proxy {
    pub addr: SocketAddr,
    target: SocketAddr,
    /// The acceptor runs while this is set.
    running: Arc<AtomicBool>,
    /// Accepted connections are piped to Redis while this is set, else held unanswered.
    forward: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Mutex<Option<thread::JoinHandle<()>>>,
    /// Held-back answers to scripts wait this long (0: not held).
    script_delay_ms: Arc<AtomicU64>,
    /// Chunks clients sent.
    sent: Arc<AtomicUsize>,
}

/// `REDIS_URL`, or the local default.
pub fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

impl Proxy {
    /// A running proxy to `REDIS_URL`'s server, and the URL to reach Redis through it.
    pub fn to_redis() -> (Proxy, String) {
        let url = redis_url();
        let rest = url
            .strip_prefix("redis://")
            .expect("the outage tests need a redis:// URL");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(at) => (&authority[..=at], &authority[at + 1..]),
            None => ("", authority),
        };
        let hostport = if hostport.contains(':') {
            hostport.to_owned()
        } else {
            format!("{hostport}:6379")
        };
        let target = hostport.to_socket_addrs().unwrap().next().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Proxy {
            addr: listener.local_addr().unwrap(),
            target,
            running: Arc::new(AtomicBool::new(false)),
            forward: Arc::new(AtomicBool::new(true)),
            conns: Arc::new(Mutex::new(Vec::new())),
            acceptor: Mutex::new(None),
            script_delay_ms: Arc::new(AtomicU64::new(0)),
            sent: Arc::new(AtomicUsize::new(0)),
        };
        proxy.serve(listener);
        let url = format!("redis://{userinfo}{}{path}", proxy.addr);
        (proxy, url)
    }

    /// From now on, Redis's answer to a chunk that runs a script (EVAL, EVALSHA) reaches
    /// the client `delay` late, though Redis ran it at once (`Duration::ZERO`: stop).
    pub fn delay_scripts(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap();
        self.script_delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Chunks the clients have sent through the proxy so far.
    pub fn sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }

    /// Up: connections (new ones; held ones are cut) reach Redis again.
    pub fn start(&self) {
        self.forward.store(true, Ordering::SeqCst);
        self.cut();
        self.listen();
    }

    /// Down: the port closed, every connection cut.
    pub fn stop(&self) {
        self.running.store(false, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.lock().unwrap().take() {
            acceptor.join().unwrap();
        }
        self.cut();
    }

    /// Silent: every connection cut; new ones are accepted and never answered.
    pub fn hang(&self) {
        self.forward.store(false, Ordering::SeqCst);
        self.cut();
        self.listen();
    }

    fn listen(&self) {
        if !self.running.load(Ordering::SeqCst) {
            // std sets SO_REUSEADDR on Unix, so the port can be bound again at once.
            self.serve(TcpListener::bind(self.addr).unwrap());
        }
    }

    fn cut(&self) {
        for conn in self.conns.lock().unwrap().drain(..) {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    fn serve(&self, listener: TcpListener) {
        listener.set_nonblocking(true).unwrap();
        self.running.store(true, Ordering::SeqCst);
        let (running, forward, conns, target) = (
            self.running.clone(),
            self.forward.clone(),
            self.conns.clone(),
            self.target,
        );
        let (delay_ms, sent) = (self.script_delay_ms.clone(), self.sent.clone());
        let acceptor = thread::spawn(move || {
            while running.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        if !forward.load(Ordering::SeqCst) {
                            // Held open, never read: the client waits for its timeout.
                            conns.lock().unwrap().push(client);
                            continue;
                        }
                        let Ok(server) = TcpStream::connect(target) else {
                            continue;
                        };
                        let mut list = conns.lock().unwrap();
                        list.push(client.try_clone().unwrap());
                        list.push(server.try_clone().unwrap());
                        // Answers owed to scripts sent while a delay was asked for.
                        let held = Arc::new(Mutex::new(Vec::<Duration>::new()));
                        let (to_server, to_client) = (held.clone(), held);
                        let (delay_ms, sent) = (delay_ms.clone(), sent.clone());
                        pipe(
                            client.try_clone().unwrap(),
                            server.try_clone().unwrap(),
                            move |chunk| {
                                sent.fetch_add(1, Ordering::SeqCst);
                                let ms = delay_ms.load(Ordering::SeqCst);
                                if ms > 0 && chunk.windows(4).any(|w| w == b"EVAL") {
                                    to_server.lock().unwrap().push(Duration::from_millis(ms));
                                }
                            },
                        );
                        pipe(server, client, move |_| {
                            let owed = to_client.lock().unwrap().pop();
                            if let Some(delay) = owed {
                                // The delay injected into an answer: what is tested.
                                thread::sleep(delay);
                            }
                        });
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // The accept loop's poll, not a wait for a result.
                        thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => panic!("proxy accept: {e}"),
                }
            }
        });
        *self.acceptor.lock().unwrap() = Some(acceptor);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Copies `from` to `to`, showing each chunk to `before` before it is written.
fn pipe(mut from: TcpStream, mut to: TcpStream, mut before: impl FnMut(&[u8]) + Send + 'static) {
    thread::spawn(move || {
        let mut buf = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            before(&buf[..n]);
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
