//! Explicit Congestion Notification as the sender and receiver see it:
//! the codepoint a data packet carries (RFC 3168 §5), the counts a QUIC
//! ACK frame reports (RFC 9000 §19.3.2), and which of the two feedback
//! schemes a flow uses.
//!
//! The codepoint type itself is [`congestion::Ecn`], shared with the link
//! model.

/// Kept here too, where it was first defined.
pub use crate::segment::SentPacket;
pub use congestion::Ecn;

/// The cumulative ECN counts a QUIC ACK frame of type 0x03 carries
/// (RFC 9000 §19.3.2): packets received so far with each codepoint. All
/// zero until an ECN-capable packet arrives.
///
/// They are carried modulo 2^32 (the receiver's counters wrap), which
/// keeps an ACK small in the simulator's event queue; the sender extends
/// them to 64 bits by the change since the largest counts it has seen,
/// as QUIC's packet numbers are (RFC 9000 §A.3): a change
/// of less than 2^31 is an increase, else a decrease. No path holds 2^31
/// packets in flight, so the extension is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnCounts {
    /// Packets received with ECT(0), modulo 2^32.
    pub ect0: u32,
    /// Packets received with ECT(1), modulo 2^32.
    pub ect1: u32,
    /// Packets received with CE, modulo 2^32.
    pub ce: u32,
}

impl EcnCounts {
    /// Counts one arriving packet with codepoint `ecn`.
    #[inline]
    pub fn count(&mut self, ecn: Ecn) {
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ect0 => self.ect0 = self.ect0.wrapping_add(1),
            Ecn::Ect1 => self.ect1 = self.ect1.wrapping_add(1),
            Ecn::Ce => self.ce = self.ce.wrapping_add(1),
        }
    }
}

/// A count carried modulo 2^32 ([`EcnCounts`]) extended to 64 bits next to
/// `reference`, the largest extended count seen: the nearest value whose
/// low 32 bits are `wire` (below `reference` when the change is 2^31 or
/// more, a decrease).
pub fn extend_count(reference: u64, wire: u32) -> u64 {
    let delta = wire.wrapping_sub(reference as u32);
    if delta < 1 << 31 {
        reference + delta as u64
    } else {
        reference.saturating_sub(delta.wrapping_neg() as u64)
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
