//! Which addresses the server may call: public ones only, unless private ones are allowed
//! (local development). A bot's URL is a request to connect wherever its owner says, so
//! every range that reaches the server's own host, its network or its cloud's metadata is
//! refused, in every form an IPv6 address can carry an IPv4 one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` may not be called, or `None` when it is public.
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], bits: u32) -> bool {
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    // Metadata first, for the reason's sake: it lies in link-local (and Alibaba's in CGNAT).
    let ranges: [([u8; 4], u32, &'static str); 17] = [
        ([169, 254, 169, 254], 32, "a cloud metadata address"),
        ([100, 100, 100, 200], 32, "a cloud metadata address"),
        ([0, 0, 0, 0], 8, "an unspecified address"),
        ([127, 0, 0, 0], 8, "a loopback address"),
        ([10, 0, 0, 0], 8, "a private address"),
        ([172, 16, 0, 0], 12, "a private address"),
        ([192, 168, 0, 0], 16, "a private address"),
        ([169, 254, 0, 0], 16, "a link-local address"),
        ([100, 64, 0, 0], 10, "a shared (CGNAT) address"),
        ([192, 0, 0, 0], 24, "a reserved address"),
        ([192, 0, 2, 0], 24, "a documentation address"),
        ([198, 51, 100, 0], 24, "a documentation address"),
        ([203, 0, 113, 0], 24, "a documentation address"),
        ([198, 18, 0, 0], 15, "a benchmarking address"),
        ([224, 0, 0, 0], 4, "a multicast address"),
        ([255, 255, 255, 255], 32, "a broadcast address"),
        ([240, 0, 0, 0], 4, "a reserved address"),
    ];
    ranges
        .iter()
        .find(|(net, bits, _)| in_v4(ip, *net, *bits))
        .map(|(_, _, why)| *why)
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    // Forms that carry an IPv4 address: judged by it.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    let low_v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    // IPv4-compatible (::a.b.c.d, deprecated) and NAT64's well-known prefix (64:ff9b::/96).
    if s[..6] == [0; 6] || (s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4]) {
        return refused_v4(low_v4);
    }
    // NAT64's local-use prefix (64:ff9b:1::/48) places the IPv4 address as its operator
    // chose: refused whole.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        return Some("a local NAT64 address");
    }
    // 6to4 (2002::/16) carries the IPv4 address in its next 32 bits.
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return refused_v4(v4);
    }
    let ranges: [(u16, u16, &'static str); 8] = [
        (0xfe80, 0xffc0, "a link-local address"),
        (0xfec0, 0xffc0, "a site-local address"),
        (0xfc00, 0xfe00, "a private (unique local) address"),
        (0xff00, 0xff00, "a multicast address"),
        // Teredo hides the IPv4 address it reaches: refused whole.
        (0x2001, 0xffff, "a Teredo or reserved address"),
        (0x0100, 0xffff, "a discard address"),
        (0x3fff, 0xffff, "a documentation address"),
        (0x5f00, 0xff00, "a segment-routing address"),
    ];
    if s[0] == 0x2001 && s[1] == 0x0db8 {
        return Some("a documentation address");
    }
    if s[0] == 0x2001 && s[1] != 0 {
        // Only 2001:0::/32 (Teredo) of 2001::/16 is refused here; the rest is public.
        return None;
    }
    ranges
        .iter()
        .find(|(prefix, mask, _)| s[0] & mask == *prefix)
        .map(|(_, _, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(ip: &str) -> Option<&'static str> {
        refused(ip.parse().unwrap())
    }

    #[test]
    fn public_addresses_are_allowed() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(why(ip), None, "{ip}");
        }
    }

    #[test]
    fn every_inner_range_is_refused_in_every_form() {
        for (ip, reason) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("100.64.0.1", "CGNAT"),
            ("100.127.255.255", "CGNAT"),
            ("100.100.100.200", "metadata"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fe80::1", "link-local"),
            ("fc00::1", "unique local"),
            ("fd00:ec2::254", "unique local"),
            ("ff02::1", "multicast"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "metadata"),
            ("::ffff:10.0.0.1", "private"),
            ("::127.0.0.1", "loopback"),
            ("::10.0.0.1", "private"),
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b::a9fe:a9fe", "metadata"),
            ("2002:7f00:1::", "loopback"),
            ("2002:a00:1::1", "private"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("2001:db8::1", "documentation"),
        ] {
            let got = why(ip).unwrap_or_else(|| panic!("{ip} was allowed"));
            assert!(got.contains(reason), "{ip}: {got}");
        }
    }

    #[test]
    fn a_private_neighbour_of_a_public_range_is_told_apart() {
        assert_eq!(why("172.15.255.255"), None);
        assert_eq!(why("172.32.0.0"), None);
        assert_eq!(why("100.63.255.255"), None);
        assert_eq!(why("100.128.0.0"), None);
        assert_eq!(why("11.0.0.0"), None);
    }
}
