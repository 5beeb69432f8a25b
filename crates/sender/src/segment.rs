//! What a data packet carries besides its payload and number, as the
//! sender marks it and the receiver reads it: its ECN codepoint and the
//! two TCP header flags a Linux receiver acts on.

use congestion::Ecn;

/// The TCP header flags of a data segment that change what its receiver
/// does. A QUIC sender sets neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFlags {
    /// Congestion Window Reduced (RFC 3168 §6.1.2): the sender reacted to
    /// ECE, so the receiver stops echoing it.
    pub cwr: bool,
    /// Push: the segment ends a whole TSO packet of the sender's (Linux
    /// marks the skbs it queues, `tcp_mark_push()`, and the front of one
    /// the window cut loses the mark, `tso_fragment()`). A Linux receiver
    /// acknowledges a pushed segment once the application has read it,
    /// without waiting for a second segment ([`crate::AckPolicy::Linux`]),
    /// which keeps its delayed ACKs on the sender's bursts.
    pub psh: bool,
}

/// How a data packet leaves the sender: its number, its ECN codepoint and
/// TCP flags ([`crate::Sender::on_sent_ecn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentPacket {
    /// The packet number.
    pub pn: u64,
    /// Its ECN codepoint.
    pub ecn: Ecn,
    /// TCP's Congestion Window Reduced flag ([`crate::EcnFeedback::Ece`]
    /// only).
    pub cwr: bool,
    /// TCP's Push flag: the segment ends a whole send unit (a sender with
    /// TCP's retransmission timeout only; see [`TcpFlags::psh`]).
    pub psh: bool,
}

impl SentPacket {
    /// The flags the segment carries to its receiver
    /// ([`crate::Receiver::on_segment`]).
    pub fn tcp_flags(&self) -> TcpFlags {
        TcpFlags {
            cwr: self.cwr,
            psh: self.psh,
        }
    }
}
