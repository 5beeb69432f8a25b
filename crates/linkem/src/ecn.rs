//! The ECN field of real IP packets: read it, and set CE where the link
//! model marks (RFC 3168 §5).
//!
//! IPv4 carries ECN in the two low bits of the TOS byte (byte 1) and has
//! a header checksum over the header's 16-bit words, which a change of
//! the TOS byte must update: [`set_ce`] does so incrementally (RFC 1624
//! eqn. 3), which gives the same checksum as recomputing it
//! ([`ipv4_header_checksum`]). IPv6 carries it in the two low bits of the
//! Traffic Class (the low nibble of byte 0 and the high nibble of byte 1:
//! bits 4-5 of byte 1) and has no header checksum. TCP and UDP checksums
//! do not cover either field, so nothing else changes.

use link::Ecn;

/// Bytes of the fixed IPv4 header (IHL 5).
const IPV4_MIN_HEADER: usize = 20;
/// Bytes of the IPv6 header.
const IPV6_HEADER: usize = 40;

/// The IPv4 header's length in bytes, if `packet` starts with a whole,
/// well-formed one.
fn ipv4_header_len(packet: &[u8]) -> Option<usize> {
    let first = *packet.first()?;
    let len = usize::from(first & 0x0f) * 4;
    (first >> 4 == 4 && len >= IPV4_MIN_HEADER && packet.len() >= len).then_some(len)
}

/// The packet's ECN codepoint: IPv4 with a whole header, or IPv6 with a
/// whole fixed header; `None` for anything else (too short, or another
/// version).
pub fn codepoint(packet: &[u8]) -> Option<Ecn> {
    match packet.first()? >> 4 {
        4 => ipv4_header_len(packet).map(|_| Ecn::from_bits(packet[1])),
        6 if packet.len() >= IPV6_HEADER => Some(Ecn::from_bits(packet[1] >> 4)),
        _ => None,
    }
}

/// The one's-complement sum of `header`'s 16-bit big-endian words with the
/// checksum field (bytes 10-11) taken as zero, complemented: the IPv4
/// header checksum (RFC 791), computed from scratch.
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in header.chunks(2).enumerate() {
        if i == 5 {
            continue;
        }
        let hi = u32::from(w[0]) << 8;
        sum += hi | w.get(1).map_or(0, |&b| u32::from(b));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Updates a header checksum `hc` for one 16-bit word changing from `old`
/// to `new`: RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'), which unlike eqn. 2
/// never produces the -0 (0xffff) a recomputation cannot give.
fn checksum_update(hc: u16, old: u16, new: u16) -> u16 {
    let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Sets CE in an ECN-capable packet (ECT(0) or ECT(1)), fixing the IPv4
/// header checksum; returns whether it changed the packet. A packet that
/// is not ECN-capable is never marked (RFC 3168 §5: it must be dropped
/// instead, which the caller has done), one already CE stays as it is,
/// and one that is neither well-formed IPv4 nor IPv6 is left alone.
pub fn set_ce(packet: &mut [u8]) -> bool {
    match codepoint(packet) {
        Some(Ecn::Ect0 | Ecn::Ect1) => {}
        _ => return false,
    }
    if packet[0] >> 4 == 4 {
        let old = u16::from_be_bytes([packet[0], packet[1]]);
        packet[1] |= Ecn::Ce.bits();
        let new = u16::from_be_bytes([packet[0], packet[1]]);
        let hc = u16::from_be_bytes([packet[10], packet[11]]);
        packet[10..12].copy_from_slice(&checksum_update(hc, old, new).to_be_bytes());
    } else {
        packet[1] |= Ecn::Ce.bits() << 4;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte IPv4 header (TCP, 10.77.0.1 → 10.77.0.2) with the given
    /// TOS byte and a valid checksum, followed by `payload` bytes.
    fn ipv4(tos: u8, id: u16, payload: usize) -> Vec<u8> {
        let total = (20 + payload) as u16;
        let mut p = vec![
            0x45,
            tos,
            (total >> 8) as u8,
            total as u8,
            (id >> 8) as u8,
            id as u8,
            0x40,
            0x00,
            64,
            6,
            0,
            0,
            10,
            77,
            0,
            1,
            10,
            77,
            0,
            2,
        ];
        p.extend((0..payload).map(|i| (i * 7 + 3) as u8));
        let c = ipv4_header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    /// A header is valid when the one's-complement sum of all its words,
    /// checksum included, is 0xffff (RFC 1071): checked by summing here,
    /// not by the function under test.
    fn ipv4_checksum_ok(header: &[u8]) -> bool {
        let mut sum: u32 = header
            .chunks(2)
            .map(|w| u32::from(w[0]) << 8 | u32::from(w[1]))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    /// A 40-byte IPv6 header with the given Traffic Class and flow label,
    /// followed by `payload` bytes.
    fn ipv6(tclass: u8, flow: u32, payload: usize) -> Vec<u8> {
        let mut p = vec![
            0x60 | (tclass >> 4),
            (tclass << 4) | ((flow >> 16) as u8 & 0x0f),
            (flow >> 8) as u8,
            flow as u8,
            0,
            payload as u8,
            6,
            64,
        ];
        p.extend((0..32).map(|i| 0x20 + i as u8));
        p.extend((0..payload).map(|i| (i * 5 + 1) as u8));
        p
    }

    #[test]
    fn the_recomputed_checksum_makes_a_header_valid() {
        // A published worked example (UDP, 192.168.0.1 → 192.168.0.199):
        // checksum 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_header_checksum(&h), 0xb861);
        assert!(ipv4_checksum_ok(&h));
        for tos in 0..=255u8 {
            for id in [0u16, 1, 0x1234, 0xfffe, 0xffff] {
                assert!(ipv4_checksum_ok(&ipv4(tos, id, 0)), "tos {tos} id {id}");
            }
        }
    }

    #[test]
    fn codepoints_are_read_from_ipv4_tos_and_ipv6_traffic_class() {
        for bits in 0..4u8 {
            let want = Ecn::from_bits(bits);
            // DSCP bits around the ECN field are ignored.
            assert_eq!(codepoint(&ipv4(0xb8 | bits, 1, 10)), Some(want));
            assert_eq!(codepoint(&ipv6(0xb8 | bits, 0xabcde, 10)), Some(want));
        }
        // Too short, or not IP: no codepoint.
        assert_eq!(codepoint(&ipv4(2, 1, 0)[..19]), None);
        assert_eq!(codepoint(&ipv6(2, 1, 0)[..39]), None);
        assert_eq!(codepoint(&[]), None);
        assert_eq!(codepoint(&[0x50; 60]), None);
        // An IHL below 5 is not a header.
        let mut bad = ipv4(2, 1, 10);
        bad[0] = 0x44;
        assert_eq!(codepoint(&bad), None);
    }

    /// For every TOS byte and many header contents: marking sets the ECN
    /// bits to CE, keeps the DSCP, leaves every other byte as it was, and
    /// the incrementally updated checksum is the recomputed one (so the
    /// header validates); Not-ECT and CE packets are left untouched.
    #[test]
    fn ipv4_marking_sets_ce_and_keeps_the_checksum_valid() {
        let mut marked = 0;
        for tos in 0..=255u8 {
            for id in (0..=0xffffu16).step_by(251).chain([0xffff]) {
                let orig = ipv4(tos, id, 16);
                let mut p = orig.clone();
                let changed = set_ce(&mut p);
                match tos & 0b11 {
                    0b01 | 0b10 => {
                        assert!(changed);
                        marked += 1;
                        assert_eq!(p[1], tos | 0b11);
                        assert_eq!(
                            u16::from_be_bytes([p[10], p[11]]),
                            ipv4_header_checksum(&p[..20]),
                            "tos {tos:#x} id {id:#x}: incremental != recomputed"
                        );
                        assert!(ipv4_checksum_ok(&p[..20]));
                        for (i, (a, b)) in orig.iter().zip(&p).enumerate() {
                            if ![1, 10, 11].contains(&i) {
                                assert_eq!(a, b, "byte {i} changed");
                            }
                        }
                        assert_eq!(codepoint(&p), Some(Ecn::Ce));
                    }
                    _ => {
                        assert!(!changed);
                        assert_eq!(p, orig, "tos {tos:#x}: a Not-ECT or CE packet changed");
                    }
                }
            }
        }
        assert!(marked > 10_000);
    }

    /// The RFC 1624 update against a recomputation on headers whose
    /// checksum lands on the edge values (0x0000 and 0xffff sums), with
    /// options (IHL 6) as well.
    #[test]
    fn the_incremental_update_equals_a_recompute_at_the_edges() {
        let mut seen = [false; 2];
        for tos in [0x01u8, 0x02, 0x05, 0xfe] {
            for id in 0..=0xffffu16 {
                let mut p = ipv4(tos, id, 0);
                let c = u16::from_be_bytes([p[10], p[11]]);
                if c == 0x0000 || c == 0xffff {
                    seen[usize::from(c == 0xffff)] = true;
                } else if id % 97 != 0 {
                    continue;
                }
                assert!(set_ce(&mut p));
                assert_eq!(
                    u16::from_be_bytes([p[10], p[11]]),
                    ipv4_header_checksum(&p[..20])
                );
                assert!(ipv4_checksum_ok(&p[..20]));
            }
        }
        assert!(seen[0], "no header with checksum 0x0000 was tried");
        // With options: a 24-byte header.
        let mut p = ipv4(0x02, 7, 8);
        p[0] = 0x46;
        p.splice(20..20, [1, 1, 1, 0]);
        let c = ipv4_header_checksum(&p[..24]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        assert!(set_ce(&mut p));
        assert!(ipv4_checksum_ok(&p[..24]));
        assert_eq!(&p[20..24], &[1, 1, 1, 0]);
    }

    /// IPv6: CE set in the Traffic Class, the DSCP and the flow label kept,
    /// every other byte unchanged; Not-ECT and CE untouched.
    #[test]
    fn ipv6_marking_sets_ce_in_the_traffic_class() {
        for tclass in 0..=255u8 {
            let orig = ipv6(tclass, 0xabcde, 12);
            let mut p = orig.clone();
            let changed = set_ce(&mut p);
            if matches!(tclass & 0b11, 0b01 | 0b10) {
                assert!(changed);
                let tc = (p[0] & 0x0f) << 4 | p[1] >> 4;
                assert_eq!(tc, tclass | 0b11, "tclass {tclass:#x}");
                assert_eq!(p[0], orig[0]);
                assert_eq!(p[1] & 0x0f, orig[1] & 0x0f, "flow label changed");
                assert_eq!(&p[2..], &orig[2..]);
            } else {
                assert!(!changed);
                assert_eq!(p, orig);
            }
        }
    }
}
