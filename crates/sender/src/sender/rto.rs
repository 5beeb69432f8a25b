//! The retransmission timer (RFC 6298: srtt + 4·rttvar, at least 200 ms
//! as Linux, doubled on each expiry) and what its expiry does.

use super::*;

impl Sender {
    pub(super) fn rto_ns(&self) -> u64 {
        // In integer ns: asked on every ACK once two smoothed RTTs pass the
        // RTO's floor (`tlp_timeout_ns`), where `Duration`'s round trips
        // cost more than the rule.
        let var4 = 4 * self.cc.rtt().var_ns();
        let base = match (self.cc.rtt().smoothed_ns(), self.timeout) {
            (None, _) => INITIAL_RTO_NS,
            // RFC 6298 §2.3 with Linux's floor.
            (Some(s), Timeout::Rto) => (s + var4).max(MIN_RTO_NS),
            // RFC 9002 §6.2.1.
            (Some(s), Timeout::Pto { max_ack_delay_ns }) => {
                s + var4.max(GRANULARITY_NS) + max_ack_delay_ns
            }
        };
        base.saturating_mul(1u64 << self.rto_backoff.min(16))
            .min(MAX_RTO_NS)
    }

    /// When the retransmission timer expires (if data is in flight).
    fn rto_at(&self) -> Instant {
        self.rto_base.saturating_add_nanos(self.rto_ns())
    }

    /// When the sender's timer (loss detection or RTO) next needs attention.
    ///
    /// Asked after every send and ACK, so the three candidates are compared
    /// by hand: the iterator chain this replaced cost about 80 instructions
    /// a call in the simulator's profile.
    pub fn timer_deadline(&self) -> Option<Instant> {
        let earlier = |a: Option<Instant>, b: Option<Instant>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        };
        let rto = if self.inflight > 0 {
            Some(self.rto_at())
        } else {
            None
        };
        earlier(earlier(self.loss_time, rto), self.tlp.deadline)
    }

    /// Whether [`Sender::timer_deadline`] is at or after `t`, or there is
    /// none, told without computing it: the loss time and the tail-loss
    /// probe's deadline are compared as they are, and the retransmission
    /// timer by its floor, `rto_base` plus the least `rto_ns`
    /// can be (TCP's 200 ms floor, which backoff only multiplies and
    /// `MAX_RTO_NS` is above; nothing for QUIC's PTO, whose sum has no
    /// floor). A caller whose timer is already armed at `t` (the
    /// simulator, after every send and ACK) learns that the deadline
    /// cannot move it earlier at a fraction of `timer_deadline`'s cost;
    /// when this says `false` the deadline may still be at or after `t`.
    #[inline]
    pub fn timer_deadline_not_before(&self, t: Instant) -> bool {
        let rto_floor_ns = match self.timeout {
            Timeout::Rto => MIN_RTO_NS,
            Timeout::Pto { .. } => 0,
        };
        self.loss_time.is_none_or(|l| l >= t)
            && self.tlp.deadline.is_none_or(|d| d >= t)
            && (self.inflight == 0 || self.rto_base.saturating_add_nanos(rto_floor_ns) >= t)
    }

    /// The timer fired at `now`.
    pub fn on_timer(&mut self, now: Instant) {
        // A probe deadline that has passed with nothing in flight has
        // nothing to probe (RFC 8985 §7.2 arms it only with data
        // outstanding). Left armed, with the retransmission timer's base
        // also past, nothing below cleared it, and the timer fired again
        // at the same instant for ever (found by `bbrlab fuzz`: BBR flows
        // sending chunks over a reordering path).
        if self.inflight == 0 && self.tlp.deadline.is_some_and(|t| t <= now) {
            self.tlp.deadline = None;
            self.tlp.owed = false;
        }
        if self.tlp.deadline.is_some_and(|t| t <= now)
            && self.loss_time.is_none_or(|t| t > now)
            && self.rto_at() > now
        {
            // RFC 8985 §7.3: send one probe; the RTO stays armed.
            self.tlp.deadline = None;
            self.tlp.owed = self.inflight > 0;
            return;
        }
        if self.loss_time.is_some_and(|t| t <= now) {
            self.clear_losses();
            self.newly_largest = None;
            self.detect_losses(now);
            self.trim();
            self.report_timer_losses(now);
            self.note_recovery_point();
            return;
        }
        if self.inflight == 0 || self.rto_at() > now {
            return;
        }
        if let Timeout::Pto { .. } = self.timeout {
            // PTO: probe, declare nothing lost, back off.
            self.probes_owed = 2;
            self.rtos += 1;
            self.rto_backoff += 1;
            self.rto_base = now;
            return;
        }
        // RTO: everything outstanding is lost; back off. The first timeout
        // of a run opens an undo episode (`tcp_enter_loss()` calls
        // `tcp_init_undo()`); backed-off repeats keep it.
        if self.rto_backoff == 0 {
            self.init_undo();
        }
        self.tlp.deadline = None;
        self.tlp.owed = false;
        self.tlp.in_flight = false;
        self.retrans_out = 0;
        self.clear_losses();
        for pn in self.base_pn..self.next_pn {
            if self
                .pkt(pn)
                .is_some_and(|p| p.status == Status::Outstanding)
            {
                self.mark_lost(pn);
            }
        }
        self.holes.clear();
        self.cursor = self.next_pn;
        self.inflight = 0;
        self.loss_time = None;
        self.cc
            .on_retransmission_timeout(now, &self.lost_buf, self.lost_ranges, 0);
        self.note_recovery_point();
        self.rtos += 1;
        self.rto_backoff += 1;
        self.rto_base = now;
        self.trim();
        self.account_mode(now);
    }
}
