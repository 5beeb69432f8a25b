//! Tail loss probes (RFC 8985 §7, RFC 9002 §6.2's PTO): when the last
//! packets of a flight go unacknowledged, one probe elicits an ACK that
//! lets RACK find the losses before the retransmission timer would.

use super::*;

/// The tail-loss probe's timer and whether a probe is owed or unanswered.
#[derive(Clone, Debug)]
pub(super) struct TailLossProbe {
    /// The probe timeout is armed for this time (RFC 8985 §7.2): when
    /// nothing is acknowledged for about two RTTs, one packet is sent to
    /// provoke an ACK, so a lost tail is found by RACK instead of an RTO.
    pub(super) deadline: Option<Instant>,
    /// A tail-loss probe is owed to the pacer.
    pub(super) owed: bool,
    /// A probe is in flight and not yet answered (Linux `tlp_high_seq`):
    /// only one at a time.
    pub(super) in_flight: bool,
    /// Whether tail-loss probes are enabled.
    pub(super) enabled: bool,
}

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
        let t = 2 * srtt + extra;
        // TCP's retransmission timeout is never below MIN_RTO_NS (its
        // floor, and backoff only raises it), so a probe timeout within
        // that is the smaller without computing the RTO: the usual case,
        // on every ACK, for paths under 100 ms.
        if t <= MIN_RTO_NS && self.timeout == Timeout::Rto {
            return Some(t);
        }
        Some(t.min(self.rto_ns()))
    }

    /// Arms the tail-loss probe if Linux would: TLP is on, data is in
    /// flight, no loss episode is under way (CWR after ECN is none:
    /// `tcp_schedule_loss_probe()` allows `TCP_CA_Open` and `TCP_CA_CWR`)
    /// and no probe is unanswered.
    pub(super) fn arm_tlp(&mut self, now: Instant) {
        self.tlp.deadline = None;
        if !self.tlp.enabled
            || self.inflight == 0
            || self.tlp.in_flight
            || self.cc.recovery_state() > RecoveryState::Cwr
        {
            return;
        }
        self.tlp.deadline = self.tlp_timeout_ns().map(|t| now.saturating_add_nanos(t));
    }
}
