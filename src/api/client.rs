//! Who sent a request: its bearer token (and the token's hash, computed once a request)
//! and its client's address, from the connection or, behind trusted proxies, from
//! `X-Forwarded-For`. The one reading of each, for the handlers, the rate limits and the
//! stream caps alike.

use std::future::{Ready, ready};
use std::net::IpAddr;

use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{FromRequest, HttpMessage, HttpRequest};

use crate::address::AddressKey;
use crate::api::error::ApiError;
use crate::domain::Caller;
use crate::service::TokenHash;

/// Who sent a request, as a handler takes it: made once here from its bearer, so no use
/// case reads a raw key. A malformed `Authorization` is refused here, before the handler.
impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Caller, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(bearer(req.headers()).map(Caller::of))
    }
}

/// The bearer token, if the request carries one. A malformed `Authorization` is refused
/// rather than treated as a spectator, so a client's mistake does not go unnoticed.
pub fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::unauthorized("malformed Authorization header"))?;
    match text.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(Some(token.trim()))
        }
        // A player key sent bare is the usual slip: say which header it needs.
        _ if text.trim_start().starts_with(crate::domain::KEY_PREFIX) => Err(
            ApiError::unauthorized("send the player key as `Authorization: Bearer <player key>`"),
        ),
        _ => Err(ApiError::unauthorized(
            "send the seat's token or the player's key as `Authorization: Bearer <token>`",
        )),
    }
}

/// The hash of `token`, the request's bearer token, computed once a request: kept in the
/// request's extensions for the handler, which finds the token's seat by it.
pub fn token_hash(req: &impl HttpMessage, token: &str) -> TokenHash {
    if let Some(hash) = req.extensions().get::<TokenHash>() {
        return *hash;
    }
    let hash = TokenHash::of(token);
    req.extensions_mut().insert(hash);
    hash
}

/// The address a request's creations count against (games, players, challenges): the
/// client's, behind `proxy_hops` trusted proxies the forwarded one.
pub fn creator_of(req: &actix_web::HttpRequest, proxy_hops: u8) -> Option<AddressKey> {
    client_address(proxy_hops, req.peer_addr().map(|a| a.ip()), req.headers()).map(AddressKey::from)
}

/// The client's address: the peer's, or with `proxy_hops` trusted proxies the entry of
/// `X-Forwarded-For` the outermost of them appended (the peer's when there is none):
/// anything to its left was written by the client.
pub fn client_address(proxy_hops: u8, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
    if proxy_hops == 0 {
        return peer;
    }
    let entries: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let hops = usize::from(proxy_hops);
    if entries.len() < hops {
        return peer;
    }
    parse_forwarded(entries[entries.len() - hops]).or(peer)
}

/// An `X-Forwarded-For` entry: an address, possibly with a port (`1.2.3.4:5`, `[::1]:5`).
fn parse_forwarded(entry: &str) -> Option<IpAddr> {
    if let Ok(ip) = entry.parse() {
        return Some(ip);
    }
    if let Some(rest) = entry.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    entry.rsplit_once(':')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::HeaderValue;

    use super::*;

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn forwarded_for_is_believed_only_as_far_as_the_trusted_hops() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::HeaderName::from_static("x-forwarded-for"),
            HeaderValue::from_static("6.6.6.6, 203.0.113.9, 10.0.0.2"),
        );
        let peer = ip("10.0.0.1");
        assert_eq!(client_address(0, peer, &headers), peer);
        assert_eq!(client_address(1, peer, &headers), ip("10.0.0.2"));
        assert_eq!(client_address(2, peer, &headers), ip("203.0.113.9"));
        assert_eq!(
            client_address(4, peer, &headers),
            peer,
            "fewer entries than hops: the peer"
        );
        assert_eq!(parse_forwarded("[2001:db8::1]:443"), ip("2001:db8::1"));
        assert_eq!(parse_forwarded("192.0.2.1:80"), ip("192.0.2.1"));
        assert_eq!(parse_forwarded("unknown"), None);
    }

    #[test]
    fn only_a_well_formed_bearer_is_a_token_and_a_malformed_one_is_refused() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, HeaderValue::from_static(v));
            h
        };
        assert_eq!(bearer(&with("Bearer abc")).unwrap(), Some("abc"));
        assert_eq!(bearer(&with("bearer  abc ")).unwrap(), Some("abc"));
        assert_eq!(bearer(&HeaderMap::new()).unwrap(), None);
        assert!(bearer(&with("Basic abc")).is_err());
        assert!(bearer(&with("Bearer ")).is_err());
    }
}
