//! The ECN field of a packet (RFC 3168 §5): the one codepoint type every
//! layer of bbrlab uses. A transport embedding a controller sets it on the
//! packets it sends; the link model marks it; the receiver counts it.
//! It lives here, in the crate every other one depends on, so the link
//! model, the sender and the transports share one definition.

/// The ECN field of a data packet: the two low bits of the IPv4 TOS byte
/// or the IPv6 Traffic Class (RFC 3168 §5); the discriminants are the bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// `0b00`: not ECN-capable; a congested queue must drop it.
    #[default]
    NotEct = 0b00,
    /// `0b01`: ECN-capable, ECT(1) (L4S, RFC 9331).
    Ect1 = 0b01,
    /// `0b10`: ECN-capable, ECT(0): what classic ECN senders set.
    Ect0 = 0b10,
    /// `0b11`: Congestion Experienced, set by a queue instead of a drop.
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint in the two low bits of `bits`.
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// Whether a packet with it is ECN-capable (ECT(0), ECT(1) or CE).
    pub const fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

#[cfg(test)]
mod tests {
    use super::Ecn;

    #[test]
    fn bits_round_trip_and_follow_rfc_3168() {
        // RFC 3168 §5's table, written out independently of the enum.
        let table = [
            (0b00u8, Ecn::NotEct, false),
            (0b01, Ecn::Ect1, true),
            (0b10, Ecn::Ect0, true),
            (0b11, Ecn::Ce, true),
        ];
        for (bits, cp, ect) in table {
            assert_eq!(Ecn::from_bits(bits), cp);
            assert_eq!(cp.bits(), bits);
            assert_eq!(cp.is_ect(), ect);
            // The upper six bits (DSCP) are ignored.
            assert_eq!(Ecn::from_bits(0b1011_1000 | bits), cp);
        }
    }
}
