//! ECN for the transport, as QUIC does it (RFC 9000 §13.4, RFC 9002 §7.1).
//!
//! - The sender marks data packets ECT(0): the shared sender
//!   (`sender::Sender::on_sent_ecn`, configured with `SenderConfig::ecn`)
//!   says each packet's codepoint, and `quinn-udp`'s `Transmit::ecn` puts
//!   it into the IP TOS / IPv6 traffic class of the `sendmsg`.
//! - The receiver reads each datagram's codepoint (`RecvMeta::ecn`, from
//!   the `IP_TOS` / `IPV6_TCLASS` control message `quinn-udp` asks for
//!   with `IP_RECVTOS` / `IPV6_RECVTCLASS`) and gives it to the shared
//!   receiver (`sender::Receiver::on_packet_ecn`), whose ACKs carry the
//!   cumulative ECT(0), ECT(1) and CE counts of the packets their ranges
//!   cover; the wire format sends them in an ACK of type 8
//!   ([`crate::wire::Frame::Ack`]'s `ecn`) once one is non-zero.
//! - The shared sender validates the counts (RFC 9000 §13.4.2.1) and gives
//!   the controller the CE increase through `Controller::on_ecn_ce` before
//!   the ACK's `on_ack`, exactly as the simulator's flows do; if
//!   validation fails it stops marking.
//!
//! This module converts between `quinn-udp`'s codepoint and the shared
//! one, and says why validation failed.

use quinn_udp::EcnCodepoint;
use sender::Ecn;

/// The codepoint to hand `quinn-udp` for a packet marked `ecn` (`None`:
/// Not-ECT).
pub fn to_quinn(ecn: Ecn) -> Option<EcnCodepoint> {
    EcnCodepoint::from_bits(ecn.bits())
}

/// The codepoint a datagram arrived with, as `quinn-udp` reports it.
pub fn from_quinn(ecn: Option<EcnCodepoint>) -> Ecn {
    ecn.map_or(Ecn::NotEct, |c| Ecn::from_bits(c as u8))
}

/// Why validation failed, judged from the ACK on which it did: a plain
/// ACK (no counts at all) or counts that did not add up.
pub fn failure_reason(ack_had_counts: bool) -> &'static str {
    if ack_had_counts {
        "the ECN counts failed validation: they decreased, fell behind the ECT(0) packets acknowledged (the path clears the codepoint), or counted more ECT than was sent"
    } else {
        "ACKs of ECT(0) packets carry no ECN counts (the receiver does not report ECN, or the path clears every codepoint)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codepoints_convert_both_ways() {
        for (e, q) in [
            (Ecn::NotEct, None),
            (Ecn::Ect0, Some(EcnCodepoint::Ect0)),
            (Ecn::Ect1, Some(EcnCodepoint::Ect1)),
            (Ecn::Ce, Some(EcnCodepoint::Ce)),
        ] {
            assert_eq!(to_quinn(e), q);
            assert_eq!(from_quinn(q), e);
        }
    }
}
