//! A client's address as the server counts it: what the rate limits key on and what the
//! cap on waiting games counts, derived by the api layer (from the connection, or from
//! `X-Forwarded-For` behind trusted proxies) and passed down through the service.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IPv4 address, or the /64 prefix of an IPv6 address (which one host commonly owns
/// whole, so it counts as one client).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AddressKey {
    V4(u32),
    V6Prefix(u64),
}

impl From<IpAddr> for AddressKey {
    fn from(ip: IpAddr) -> AddressKey {
        match ip {
            IpAddr::V4(v4) => AddressKey::V4(v4.into()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4.into()),
                None => AddressKey::V6Prefix((u128::from(v6) >> 64) as u64),
            },
        }
    }
}

/// `192.0.2.1`, or `2001:db8:1:2::/64`: how the store names a client.
impl fmt::Display for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AddressKey::V4(v4) => write!(f, "{}", Ipv4Addr::from(v4)),
            AddressKey::V6Prefix(prefix) => {
                write!(f, "{}/64", Ipv6Addr::from(u128::from(prefix) << 64))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_ip_or_v6_prefix() {
        let key = |s: &str| AddressKey::from(s.parse::<IpAddr>().unwrap()).to_string();
        assert_eq!(key("192.0.2.1"), "192.0.2.1");
        assert_eq!(key("::ffff:192.0.2.1"), "192.0.2.1");
        assert_eq!(key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
    }
}
