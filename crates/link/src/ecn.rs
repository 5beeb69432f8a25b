//! The ECN field of an IP packet (RFC 3168 §5).

/// An IP packet's ECN codepoint: the two low bits of the IPv4 TOS byte or
/// the IPv6 Traffic Class (RFC 3168 §5). The discriminants are the bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Codepoint {
    /// `0b00`: the sender does not do ECN; congestion must drop it.
    #[default]
    NotEct = 0b00,
    /// `0b01`: ECN-capable transport, ECT(1) (L4S uses it, RFC 9331).
    Ect1 = 0b01,
    /// `0b10`: ECN-capable transport, ECT(0).
    Ect0 = 0b10,
    /// `0b11`: Congestion Experienced, set by a router instead of dropping.
    Ce = 0b11,
}

impl Codepoint {
    /// The codepoint in the two low bits of `bits` (the rest are ignored,
    /// so an IPv4 TOS byte or an IPv6 Traffic Class can be passed whole).
    pub const fn from_bits(bits: u8) -> Codepoint {
        match bits & 0b11 {
            0b00 => Codepoint::NotEct,
            0b01 => Codepoint::Ect1,
            0b10 => Codepoint::Ect0,
            _ => Codepoint::Ce,
        }
    }

    /// The two bits, `0b00`..=`0b11`.
    pub const fn bits(self) -> u8 {
        self as u8
    }

    /// Whether a router may mark it instead of dropping it: ECT(0), ECT(1)
    /// and CE (a CE packet came from an ECN-capable sender too; marking it
    /// again leaves it CE, RFC 3168 §5).
    pub const fn is_ect(self) -> bool {
        !matches!(self, Codepoint::NotEct)
    }
}

#[cfg(test)]
mod tests {
    use super::Codepoint;

    #[test]
    fn bits_round_trip_and_follow_rfc_3168() {
        // RFC 3168 §5's table, written out independently of the enum.
        let table = [
            (0b00u8, Codepoint::NotEct, false),
            (0b01, Codepoint::Ect1, true),
            (0b10, Codepoint::Ect0, true),
            (0b11, Codepoint::Ce, true),
        ];
        for (bits, cp, ect) in table {
            assert_eq!(Codepoint::from_bits(bits), cp);
            assert_eq!(cp.bits(), bits);
            assert_eq!(cp.is_ect(), ect);
            // The upper six bits (DSCP) are ignored.
            assert_eq!(Codepoint::from_bits(0b1011_1000 | bits), cp);
        }
    }
}
