//! Tail loss probes (RFC 8985 §7, RFC 9002 §6.2's PTO): when the last
//! packets of a flight go unacknowledged, one probe elicits an ACK that
//! lets RACK find the losses before the retransmission timer would.

use super::*;

impl Sender {
    /// What a tail-loss probe sends (RFC 8985 §7.3): new data if the
    /// application and the receiver allow, else the newest packet still
    /// unacknowledged again. It ignores cwnd and pacing, as Linux's
    /// `tcp_send_loss_probe()` does.
    pub(super) fn tail_loss_probe(&mut self) -> Option<SendDecision> {
        let more = self.total_chunks != Some(self.next_chunk)
            && self.flow_limit.is_none_or(|l| self.next_chunk < l)
            && matches!(self.app, AppState::Bulk);
        if more {
            return Some(SendDecision::Send {
                chunk: self.next_chunk,
                bytes: self.chunk_bytes(self.next_chunk),
                retransmission: false,
            });
        }
        let p = self
            .pkts
            .iter()
            .rev()
            .find(|p| p.status == Status::Outstanding)?;
        Some(SendDecision::Send {
            chunk: p.chunk,
            bytes: p.bytes,
            retransmission: true,
        })
    }

    /// The probe timeout of RFC 8985 §7.2 as Linux computes it
    /// (`tcp_schedule_loss_probe()`): two smoothed RTTs, plus the
    /// worst-case delayed-ACK time when a single packet is in flight (its
    /// ACK may be delayed), else plus 2 ms; never past the RTO.
    pub(super) fn tlp_timeout_ns(&self) -> Option<u64> {
        let srtt = self.cc.rtt().smoothed_ns()?;
        let extra = if self.inflight <= self.mss {
            MIN_RTO_NS
        } else {
            2 * GRANULARITY_NS
        };
        Some((2 * srtt + extra).min(self.rto_ns()))
    }

    /// Arms the tail-loss probe if Linux would: TLP is on, data is in
    /// flight, no loss episode is under way (CWR after ECN is none:
    /// `tcp_schedule_loss_probe()` allows `TCP_CA_Open` and `TCP_CA_CWR`)
    /// and no probe is unanswered.
    pub(super) fn arm_tlp(&mut self, now: Instant) {
        self.tlp_deadline = None;
        if !self.tlp_enabled
            || self.inflight == 0
            || self.tlp_in_flight
            || self.cc.recovery_state() > RecoveryState::Cwr
        {
            return;
        }
        self.tlp_deadline = self.tlp_timeout_ns().map(|t| now.saturating_add_nanos(t));
    }
}
