//! Explicit Congestion Notification as the sender and receiver see it:
//! the codepoint a data packet carries (RFC 3168 §5), the counts a QUIC
//! ACK frame reports (RFC 9000 §19.3.2), and which of the two feedback
//! schemes a flow uses.
//!
//! The link model has its own codepoint type (`link::Codepoint`) with the
//! same bits; this crate does not depend on `link`, so the simulator
//! converts through [`Ecn::bits`].

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

/// The cumulative ECN counts a QUIC ACK frame of type 0x03 carries
/// (RFC 9000 §19.3.2): packets received so far with each codepoint.
/// All zero until an ECN-capable packet arrives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// Packets received with ECT(0).
    pub ect0: u64,
    /// Packets received with ECT(1).
    pub ect1: u64,
    /// Packets received with CE.
    pub ce: u64,
}

impl EcnCounts {
    /// Counts one arriving packet with codepoint `ecn`.
    #[inline]
    pub fn count(&mut self, ecn: Ecn) {
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => self.ect0 += 1,
            Ecn::Ect1 => self.ect1 += 1,
            Ecn::Ce => self.ce += 1,
        }
    }
}

/// How the receiver's ECN feedback reaches the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnFeedback {
    /// QUIC: every ACK carries the cumulative ECT(0), ECT(1) and CE counts
    /// (RFC 9000 §13.4); the sender reacts to the increase of the CE count
    /// after validating the counts (§13.4.2.1).
    #[default]
    Counts,
    /// TCP with classic ECN (RFC 3168 §6.1): the receiver sets ECE on its
    /// ACKs from the first CE until a data packet with CWR arrives; the
    /// sender counts the packets an ACK with ECE acknowledges as CE (as
    /// Linux's `tcp_count_delivered()` does) and, after it reacts, sets
    /// CWR on its next new data packet. Retransmissions go out Not-ECT
    /// (RFC 3168 §6.1.5).
    Ece,
}

/// How a data packet leaves the sender: its number, its ECN codepoint and
/// whether it carries TCP's CWR flag ([`crate::Sender::on_sent_ecn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentPacket {
    /// The packet number.
    pub pn: u64,
    /// Its ECN codepoint.
    pub ecn: Ecn,
    /// TCP's Congestion Window Reduced flag ([`EcnFeedback::Ece`] only).
    pub cwr: bool,
}
