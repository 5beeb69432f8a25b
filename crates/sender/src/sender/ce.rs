//! ECN on the sending side: which codepoint a packet carries, and the
//! CE marks an ACK reports, QUIC-style (ECN counts, RFC 9000 §13.4) or
//! TCP-style (ECE, RFC 3168).

use super::*;

/// The sender's side of ECN: what it marks, what the peer reported, and
/// TCP's CWR exchange.
#[derive(Clone, Debug)]
pub(super) struct EcnState {
    /// The codepoint new data packets carry (`NotEct` once ECN is off,
    /// from the start or after a failed validation).
    pub(super) codepoint: Ecn,
    /// How CE marks come back.
    pub(super) feedback: EcnFeedback,
    /// QUIC: the largest ECN counts any ACK reported, extended to 64 bits
    /// (ECT(0), ECT(1), CE; counts never decrease, RFC 9000 §13.4.2.1).
    pub(super) peer: [u64; 3],
    /// The flow was configured ECN-capable (else its ACKs are not read
    /// for ECN at all).
    pub(super) configured: bool,
    /// Packets sent with ECT(0) and ECT(1).
    pub(super) ect_sent: [u64; 2],
    /// Packets sent with ECT(0) and ECT(1) that ACK ranges acknowledged
    /// (so the receiver counted them before it sent that ACK).
    pub(super) ect_acked: [u64; 2],
    /// Of those, newly acknowledged by the ACK being processed.
    pub(super) newly_ect: [u64; 2],
    /// TCP: CWR goes on the next new data packet (Linux
    /// `TCP_ECN_QUEUE_CWR`).
    pub(super) cwr_pending: bool,
    /// TCP: the window of the last reaction to ECE: no new reaction until
    /// a packet from this number on is acknowledged (Linux's CWR state,
    /// which ends when `snd_una` passes `high_seq`).
    pub(super) cwr_high: Option<u64>,
}

impl Sender {
    /// The codepoint and CWR flag of a packet of an ECN-capable flow.
    pub(super) fn marking(&mut self, retransmission: bool) -> (Ecn, bool) {
        let tcp = self.ecn.feedback == EcnFeedback::Ece;
        let ecn = if tcp && retransmission {
            Ecn::NotEct
        } else {
            self.ecn.codepoint
        };
        let cwr = tcp && !retransmission && std::mem::take(&mut self.ecn.cwr_pending);
        match ecn {
            Ecn::Ect0 => self.ecn.ect_sent[0] += 1,
            Ecn::Ect1 => self.ecn.ect_sent[1] += 1,
            _ => {}
        }
        (ecn, cwr)
    }

    /// QUIC's ECN feedback (RFC 9000 §13.4.2.1, RFC 9002 §7.1 and B.7's
    /// `ProcessECN`) for an ACK that newly acknowledges `newly` packets,
    /// `ect_by_ranges` of them ECT(0) and ECT(1) through its ranges.
    /// Returns the CE marks to report to the controller now.
    ///
    /// - The counts are validated against what was sent and acknowledged,
    ///   but only on an ACK that raises the largest acknowledged packet
    ///   (a reordered ACK MUST NOT fail validation): a count that
    ///   decreased, ECT(0) + CE (or ECT(1) + CE) below the ECT(0) (ECT(1))
    ///   packets acknowledged by ranges, or an ECT count above the packets
    ///   sent with it, fails validation, and the sender stops marking its
    ///   packets ECN-capable. The sum is checked cumulatively, which is the
    ///   RFC's per-ACK check summed over ACKs, and also holds when a
    ///   packet's range dropped out of the few an ACK carries before the
    ///   packet was acknowledged.
    /// - Counts never decrease: a lower count (a reordered ACK) changes
    ///   nothing.
    /// - The CE count's increase may exceed the packets this ACK newly
    ///   acknowledges (an ACK was lost; RFC 9000 allows it): the controller
    ///   is told at most `newly` marks now, and the rest on later ACKs, so
    ///   the CE fraction of an ACK never exceeds 1 and every mark is told
    ///   once.
    pub(super) fn quic_ce(
        &mut self,
        ack: &Ack,
        increases_largest: bool,
        newly: u64,
        ect_by_ranges: [u64; 2],
    ) -> u64 {
        if self.ecn_failed {
            return 0;
        }
        let p = self.ecn.peer;
        let [ect0, ect1, ce] = [
            extend_count(p[0], ack.ecn.ect0),
            extend_count(p[1], ack.ecn.ect1),
            extend_count(p[2], ack.ecn.ce),
        ];
        self.ecn.ect_acked[0] += ect_by_ranges[0];
        self.ecn.ect_acked[1] += ect_by_ranges[1];
        if increases_largest {
            let decreased = ect0 < p[0] || ect1 < p[1] || ce < p[2];
            let bleached = ect0 + ce < self.ecn.ect_acked[0] || ect1 + ce < self.ecn.ect_acked[1];
            let remarked = ect0 > self.ecn.ect_sent[0] || ect1 > self.ecn.ect_sent[1];
            if decreased || bleached || remarked {
                self.ecn_failed = true;
                self.ecn.codepoint = Ecn::NotEct;
                return 0;
            }
        }
        self.ecn.peer = [p[0].max(ect0), p[1].max(ect1), p[2].max(ce)];
        self.ecn.peer[2]
            .saturating_sub(self.delivered_ce)
            .min(newly)
    }

    /// TCP's classic ECN feedback (RFC 3168 §6.1.2): every packet an ACK
    /// with ECE newly acknowledges counts as CE-marked (Linux counts
    /// `delivered_ce` so). The first ECE of a window is the reaction: CWR
    /// is queued for the next new data packet, and a further reaction
    /// waits until a packet sent after this one is acknowledged.
    pub(super) fn tcp_ce(&mut self, ack: &Ack, newly: u64) -> u64 {
        if let (Some(h), Some((l, _))) = (self.ecn.cwr_high, self.newly_largest) {
            if l >= h {
                self.ecn.cwr_high = None;
            }
        }
        if !ack.ece {
            return 0;
        }
        if self.ecn.cwr_high.is_none() {
            self.ecn.cwr_pending = true;
            self.ecn.cwr_high = Some(self.next_pn);
        }
        newly
    }
}
