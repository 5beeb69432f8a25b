//! Loss detection: RACK (RFC 8985) as Linux runs it, with its reordering
//! window, or QUIC 2018's thresholds; and whether losses add up to
//! persistent congestion (RFC 9002 §7.6).

use super::*;

/// RACK's reordering state as Linux keeps it (`tp->reord_seen` and
/// `tp->rack`): whether loss is judged by time alone, and how wide the
/// reordering window is.
#[derive(Clone, Debug)]
pub(super) struct Reordering {
    /// Reordering has been observed (Linux `tp->reord_seen`): a hole was
    /// filled by its original packet, or a DSACK reported a needless
    /// retransmission. From then on loss is judged by time alone.
    pub(super) seen: bool,
    /// Multiplier of the reordering window (Linux `rack.reo_wnd_steps`),
    /// raised once per round trip that sees a DSACK.
    pub(super) steps: u64,
    /// Recoveries left before the reordering window falls back to one
    /// step (Linux `rack.reo_wnd_persist`).
    pub(super) persist: u32,
    /// Delivered bytes when the window was last widened: a DSACK for a
    /// packet sent before then belongs to the same round and is ignored
    /// (Linux `rack.last_delivered`).
    pub(super) last_delivered: u64,
    /// A DSACK arrived and has not yet been weighed for the reordering
    /// window (Linux `rack.dsack_seen`).
    pub(super) dsack_pending: bool,
}

impl Sender {
    pub(super) fn loss_delay_ns(&self) -> u64 {
        let srtt = self.cc.rtt().smoothed_ns().unwrap_or(0);
        if self.reo.seen {
            // Linux RACK (`tcp_rack_reo_wnd()`): the latest RTT plus a
            // reordering window of min_rtt/4 per step, at most srtt.
            let min_rtt = self.cc.rtt().min_ns().unwrap_or(srtt);
            let reo_wnd = (min_rtt / 4).saturating_mul(self.reo.steps).min(srtt);
            let rtt = self.latest_rtt_ns.unwrap_or(srtt);
            return (rtt + reo_wnd).max(GRANULARITY_NS);
        }
        // RFC 9002 §6.1.2: 9/8 × max(srtt, latest RTT), at least kGranularity.
        let rtt = srtt.max(self.latest_rtt_ns.unwrap_or(0));
        (rtt + rtt / 8).max(GRANULARITY_NS)
    }

    /// QUIC 2018's rule for the hole `pn` (see [`LossDetection::Quic2018`]):
    /// whether it is lost now; when only time is missing, the time to
    /// check again is folded into `timer`.
    pub(super) fn quic_2018_lost(
        &self,
        pn: u64,
        sent: Instant,
        now: Instant,
        timer: &mut Option<Instant>,
    ) -> bool {
        // `GeneralLossAlgorithm::DetectLosses()`, loss type kNack. The
        // reference is the largest packet this ACK newly acknowledged, or
        // for the timer the largest acknowledged.
        let (ref_pn, ref_sent) = self
            .newly_largest
            .unwrap_or((self.largest_acked.unwrap_or(0), self.largest_acked_sent));
        if pn > ref_pn {
            return false;
        }
        if ref_pn - pn >= PACKET_THRESHOLD {
            return true;
        }
        let srtt = self.cc.rtt().smoothed_ns().unwrap_or(0);
        if self.next_pn.saturating_sub(1) <= ref_pn {
            // Early retransmit: the last packet sent was acknowledged.
            let rtt = srtt.max(self.latest_rtt_ns.unwrap_or(0));
            let delay = (rtt + rtt / 4).max(QUIC_2018_MIN_LOSS_DELAY_NS);
            let at = sent.saturating_add_nanos(delay);
            if now < at {
                *timer = Some(timer.map_or(at, |t| t.min(at)));
                return false;
            }
            return true;
        }
        // A reordering window of one srtt.
        sent.saturating_add_nanos(srtt) < ref_sent
    }

    /// Declares lost every hole that meets the packet or time threshold,
    /// and arms the loss timer for the rest.
    #[inline]
    pub(super) fn detect_losses(&mut self, now: Instant) {
        self.loss_time = None;
        // Without holes there is nothing to judge: `judge_holes`' loop
        // would not run, so no loss, no timer and no persistent congestion
        // (the usual ACK, which then skips the call and the loss delay's
        // arithmetic).
        if !self.holes.is_empty() {
            self.judge_holes(now);
        }
    }

    /// [`Sender::detect_losses`] with holes to judge.
    #[inline(never)]
    fn judge_holes(&mut self, now: Instant) {
        let Some(largest) = self.largest_acked else {
            return;
        };
        let quic = self.loss_detection == LossDetection::Quic2018;
        let delay = self.loss_delay_ns();
        let reord_seen = self.reo.seen;
        // First and last packet newly declared lost that was sent after
        // the first RTT sample: (pn, sent time).
        let mut span: Option<((u64, Instant), (u64, Instant))> = None;
        let rtt_at = self.first_rtt_at.unwrap_or(Instant::from_nanos(u64::MAX));
        let mut new_episode_seen = false;
        let mut i = 0;
        while i < self.holes.len() {
            let pn = self.holes[i];
            let Some(&p) = self.pkt(pn).filter(|p| p.status == Status::Outstanding) else {
                self.holes.remove(i);
                continue;
            };
            // Once reordering has been seen, Linux's RACK no longer counts
            // packets (the dupthresh rule), only time.
            if quic {
                let mut timer = self.loss_time;
                let lost = self.quic_2018_lost(pn, p.sent, now, &mut timer);
                self.loss_time = timer;
                if !lost {
                    i += 1;
                    continue;
                }
            }
            let by_count = !reord_seen && largest - pn >= PACKET_THRESHOLD;
            let at = p.sent.saturating_add_nanos(delay);
            if !quic && !by_count && at > now {
                self.loss_time = Some(self.loss_time.map_or(at, |l| l.min(at)));
                // The holes after this one were sent after it (holes are
                // kept in packet-number order, numbered as sent), so none
                // is lost by count (fewer packets above it) or by time
                // (its deadline is no earlier), and none can set an
                // earlier timer: the scan stops, where it would visit
                // every waiting hole on every ACK. Acknowledged ones among
                // them leave the list when a later scan reaches them.
                debug_assert!(self.holes[i + 1..].iter().all(|&q| q > pn
                    && self
                        .pkt(q)
                        .is_none_or(|x| x.status != Status::Outstanding || x.sent >= p.sent)));
                break;
            }
            self.holes.remove(i);
            // TCP judges loss per byte of the stream, not per copy: data
            // the cumulative ACK has passed is acknowledged, and a repeat
            // copy (repair or probe) of data another copy delivered is
            // simply retired. Neither is a loss.
            if p.chunk < self.cum_chunk {
                self.ack_pn(pn);
                continue;
            }
            self.inflight -= p.bytes as u64;
            self.retrans_out -= p.retx as u64;
            if p.retx && !self.unrepaired.contains(&p.chunk) {
                self.set_status(pn, Status::Acked);
                continue;
            }
            // The first loss seen from the open (or CWR) state begins an
            // episode that may later be undone (Linux `tcp_enter_recovery()`
            // calls `tcp_init_undo()` before it marks anything).
            if !new_episode_seen && self.recovery_state() <= RecoveryState::Cwr {
                new_episode_seen = true;
                self.init_undo();
            }
            self.mark_lost(pn);
            if p.sent >= rtt_at {
                let here = (pn, p.sent);
                span = Some(span.map_or((here, here), |(first, _)| (first, here)));
            }
        }
        if let (Some(span), Timeout::Pto { max_ack_delay_ns }) = (span, self.timeout) {
            self.persistent_congestion |= self.is_persistent(span, max_ack_delay_ns);
        }
    }

    /// RFC 9002 §7.6: lost packets (sent after the first RTT sample) span
    /// more than three PTOs without backoff, with none acknowledged in
    /// between. Judged per batch of newly lost packets, as the RFC's
    /// Appendix B.8 does; `first`/`last` are the batch's (pn, sent time).
    pub(super) fn is_persistent(
        &self,
        (first, last): ((u64, Instant), (u64, Instant)),
        max_ack_delay_ns: u64,
    ) -> bool {
        let Some(srtt) = self.cc.rtt().smoothed_ns() else {
            return false;
        };
        let pto = srtt + (4 * self.cc.rtt().var_ns()).max(GRANULARITY_NS) + max_ack_delay_ns;
        if last.1.nanos_since(first.1) < 3 * pto {
            return false;
        }
        (first.0..=last.0).all(|pn| {
            pn < self.base_pn
                || self
                    .pkts
                    .get((pn - self.base_pn) as usize)
                    .is_some_and(|p| p.status == Status::Lost)
        })
    }

    /// RFC 8985 §6.2 step 4 as Linux has it (`tcp_rack_update_reo_wnd()`):
    /// a DSACK widens the reordering window by one step (min_rtt/4), at
    /// most once per round trip (a DSACK for data sent before the last
    /// widening belongs to the same round); the width then persists for
    /// 16 recoveries, after which it falls back to one step.
    pub(super) fn update_reo_wnd(&mut self) {
        // The packets this ACK acknowledged: the DSACK pending is weighed
        // (and cleared) only on an ACK that acknowledged something, and the
        // maximum of their delivered counts matters only when one is
        // pending, so the usual ACK skips the scan.
        let Some(first) = self.acked_buf.first() else {
            return;
        };
        let widen = self.reo.dsack_pending && {
            let prior_delivered = self
                .acked_buf
                .iter()
                .fold(first.state.delivered_bytes, |m, p| {
                    m.max(p.state.delivered_bytes)
                });
            prior_delivered >= self.reo.last_delivered
        };
        self.reo.dsack_pending = false;
        if widen {
            self.reo.steps = (self.reo.steps + 1).min(255);
            self.reo.last_delivered = self.cc.sampler().delivered_bytes();
            self.reo.persist = REO_WND_PERSIST;
        } else if self.reo.persist == 0 {
            self.reo.steps = 1;
        }
    }
}
