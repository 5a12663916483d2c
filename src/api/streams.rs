//! Caps on what holds a connection open: event streams (`GET /v1/games/{id}/events`) and
//! waiting long polls (`GET /v1/games/{id}?after=..`), per client address and in total.
//!
//! The request rate limits ([`crate::api::ratelimit`]) count requests; a stream costs one
//! request and then holds a connection (a file) for as long as the client likes, so one
//! address could otherwise take every file the process may open. Each stream or long
//! poll takes a [`Slot`] before it starts; beyond `MAX_STREAMS_PER_IP` for its address
//! (the same address as the rate limits: IPv6 by /64, `RATE_LIMIT_PROXY_HOPS`) or
//! `MAX_STREAMS` in all, it is answered 429 `rate_limited` with `Retry-After` and a detail
//! naming the cap. A slot is given back when its guard drops: when the stream or poll ends,
//! or when actix drops it because the client went away.
//!
//! `MAX_STREAMS` stays below the connections the server accepts (see
//! [`crate::startup`]), so health checks and ordinary requests always find a connection.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use actix_web::HttpRequest;

use crate::address::AddressKey;
use crate::api::client::client_address;
use crate::api::{ApiError, ProblemCode};
use crate::metrics::Metrics;

/// Seconds a refused client is told to wait: streams end when games or clients do, not on
/// a schedule, so this only spaces the retries.
pub const RETRY_AFTER_SECS: u32 = 5;

/// The open slots, shared by every worker.
pub struct StreamSlots {
    per_address: u32,
    total: usize,
    proxy_hops: u8,
    /// Open slots per address, and in all (the sum of the map).
    open: Mutex<Open>,
    metrics: Arc<Metrics>,
}

#[derive(Default)]
struct Open {
    by_address: HashMap<AddressKey, u32>,
    total: usize,
}

/// Which cap refused a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    Address,
    Total,
}

/// One open stream or long poll; dropping it gives the slot back.
pub struct Slot {
    slots: Arc<StreamSlots>,
    address: Option<AddressKey>,
}

impl StreamSlots {
    pub fn new(per_address: u32, total: usize, proxy_hops: u8, metrics: Arc<Metrics>) -> Self {
        StreamSlots {
            per_address,
            total,
            proxy_hops,
            open: Mutex::new(Open::default()),
            metrics,
        }
    }

    /// A slot for a client at `address` (`None`: unknown, counted in the total only).
    pub fn acquire(self: &Arc<Self>, address: Option<IpAddr>) -> Result<Slot, Full> {
        let address = address.map(AddressKey::from);
        let mut open = self.open.lock().expect("no panic holds this lock");
        let refused = if open.total >= self.total {
            Some(Full::Total)
        } else if let Some(key) = address
            && open.by_address.get(&key).copied().unwrap_or(0) >= self.per_address
        {
            Some(Full::Address)
        } else {
            None
        };
        if let Some(full) = refused {
            drop(open);
            let cap = match full {
                Full::Address => "per_address",
                Full::Total => "total",
            };
            self.metrics.stream_refusals(cap).inc();
            return Err(full);
        }
        open.total += 1;
        if let Some(key) = address {
            *open.by_address.entry(key).or_default() += 1;
        }
        drop(open);
        self.metrics.open_streams.inc();
        Ok(Slot {
            slots: self.clone(),
            address,
        })
    }

    /// A slot for `request`'s client, or the 429 that refuses it.
    pub fn acquire_for(self: &Arc<Self>, request: &HttpRequest) -> Result<Slot, ApiError> {
        let peer = request.peer_addr().map(|a| a.ip());
        let address = client_address(self.proxy_hops, peer, request.headers());
        self.acquire(address).map_err(|full| {
            tracing::debug!(cap = ?full, "stream refused");
            let detail = match full {
                Full::Address => format!(
                    "this address has {} event streams and long polls open, the most \
                     MAX_STREAMS_PER_IP allows; close one or retry in {RETRY_AFTER_SECS} s",
                    self.per_address
                ),
                Full::Total => format!(
                    "the server has {} event streams and long polls open, the most \
                     MAX_STREAMS allows; retry in {RETRY_AFTER_SECS} s",
                    self.total
                ),
            };
            ApiError::new(ProblemCode::RateLimited, detail).retry_after(RETRY_AFTER_SECS)
        })
    }

    /// Slots open now (all addresses).
    pub fn open(&self) -> usize {
        self.open.lock().expect("no panic holds this lock").total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().expect("no panic holds this lock");
        open.total -= 1;
        if let Some(key) = self.address
            && let Some(n) = open.by_address.get_mut(&key)
        {
            *n -= 1;
            // An address with nothing open is forgotten: the map holds open slots only.
            if *n == 0 {
                open.by_address.remove(&key);
            }
        }
        drop(open);
        self.slots.metrics.open_streams.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(per_address: u32, total: usize) -> Arc<StreamSlots> {
        Arc::new(StreamSlots::new(
            per_address,
            total,
            0,
            Arc::new(Metrics::new()),
        ))
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn an_address_gets_its_cap_and_a_dropped_slot_frees_one() {
        let s = slots(2, 100);
        let a = s.acquire(ip("10.0.0.1")).unwrap();
        let _b = s.acquire(ip("10.0.0.1")).unwrap();
        assert_eq!(s.acquire(ip("10.0.0.1")).err(), Some(Full::Address));
        assert!(s.acquire(ip("10.0.0.2")).is_ok(), "another address");
        drop(a);
        assert!(s.acquire(ip("10.0.0.1")).is_ok());
    }

    #[test]
    fn the_total_caps_every_address_together_and_empty_addresses_are_forgotten() {
        let s = slots(5, 2);
        let a = s.acquire(ip("10.0.0.1")).unwrap();
        let b = s.acquire(None).unwrap();
        assert_eq!(s.acquire(ip("10.0.0.3")).err(), Some(Full::Total));
        assert_eq!(s.open(), 2);
        drop((a, b));
        assert_eq!(s.open(), 0);
        assert!(s.open.lock().unwrap().by_address.is_empty());
    }

    #[test]
    fn ipv6_addresses_share_their_64() {
        let s = slots(1, 100);
        let _a = s.acquire(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(s.acquire(ip("2001:db8:1:2::9")).err(), Some(Full::Address));
        assert!(s.acquire(ip("2001:db8:1:3::1")).is_ok());
    }
}
