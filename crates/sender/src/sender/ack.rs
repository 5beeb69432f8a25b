//! An ACK's arrival: what it acknowledges (ranges, late holes, packets
//! declared lost that arrived after all, TCP's cumulative point), the
//! largest acknowledged packet and the holes below it, and the one event
//! the controller gets for it.

use super::*;

impl Sender {
    /// Processes an ACK arriving at `now`: marks what it acknowledges
    /// (`mark_acked`), moves the largest acknowledged packet and the holes
    /// below it (`advance_largest`), detects losses, and hands the
    /// controller the whole ACK as one [`AckEvent`].
    pub fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.acked_buf.clear();
        self.clear_losses();
        self.newly_largest = None;
        self.ecn.newly_ect = [0; 2];
        // Linux `tcp_ack()`: prior_in_flight is taken before this ACK marks
        // anything, and only its own losses enter the rate sample.
        let prior_in_flight = self.inflight;
        let prev_largest = self.largest_acked;
        let loss_episodes_before = self.loss_episodes;
        // TCP's receive window: new data stops at the right edge the
        // receiver offers (`tcp_snd_wnd_test()`); the edge never moves back.
        if let Some(window) = ack.rwnd_chunks {
            self.set_flow_limit(ack.cum_chunk + u64::from(window));
        }
        let Some(largest) = ack.largest() else {
            // Nothing acknowledged; the controller still sees the ACK
            // (losses a timer declared since the last one leave its next
            // rate sample).
            let nothing = AckEvent::new(now, &[], prior_in_flight, prior_in_flight);
            self.cc.on_ack(&nothing);
            return;
        };
        let largest = largest.min(self.next_pn.saturating_sub(1));
        // Karn's rule as RFC 9002 §5.1 puts it: sample the RTT only from the
        // largest acknowledged packet, and only if this ACK newly acks it.
        // Packet numbers are never reused, so a packet declared lost and
        // acknowledged after all gives an unambiguous sample too (TCP gets
        // the same from timestamps); without it a path whose RTT exceeds
        // the initial RTO would never get a sample and time out forever.
        let rtt_from = match self.pkt(largest) {
            Some(p) if p.status == Status::Outstanding => Some(p.sent),
            _ => self.lost.get(largest).map(|p| p.sent),
        };
        let spurious = self.mark_acked(ack, largest, prev_largest);
        // What the ranges acknowledged; the cumulative point below may
        // acknowledge packets the receiver never saw (their repair arrived).
        let ect_by_ranges = self.ecn.newly_ect;
        let cum_before = self.cum_chunk;
        // TCP's cumulative ACK: data below the receiver's in-order point has
        // arrived, whether or not an ACK range showed the packet.
        if ack.cum_chunk > self.cum_chunk {
            self.cum_chunk = ack.cum_chunk;
            self.on_cumulative_ack();
        }
        let spurious = if ack.dsack {
            self.on_dsack() | spurious
        } else {
            spurious
        };
        self.update_reo_wnd();
        // QUIC 2018 had no undo of spurious reductions.
        if spurious && self.undo.marker && self.loss_detection == LossDetection::Linux {
            self.undo();
        }
        let new_covered = ack.ranges[0].0 <= self.cursor.max(self.base_pn);
        self.advance_largest(largest, prev_largest, rtt_from, new_covered);
        let rtt = rtt_from.map(|sent| now.nanos_since(sent));
        if let Some(r) = rtt {
            self.first_rtt_at.get_or_insert(now);
            self.latest_rtt_ns = Some(r);
            self.rtt_hist.record(r);
        }
        // With timestamps, the undo they allow comes before loss detection
        // (which it may hold back), and the controller's estimators get
        // Linux's RTT sample; the flow's RTT figures (`rtt_hist`) and
        // RACK keep the largest acknowledged packet's.
        let (hold_marks, cc_rtt) = if self.stamps.on {
            self.stamped_ack(now, ack, cum_before, rtt)
        } else {
            (false, rtt)
        };
        if !hold_marks {
            self.detect_losses(now);
        }
        self.trim();
        let point = self.check_recovery_point();
        // The controller begins a recovery again here, as Linux does from
        // `tcp_fastretrans_alert()` when `lost_out` is non-zero at
        // `high_seq`; Linux's `tcp_enter_recovery()` counts it as it counts
        // the first (`TCPSackRecovery`), and so does `loss_episodes`. (Linux
        // also begins a new undo episode there; this sender keeps the one
        // it has: Notes on fidelity, "Recoveries under heavy reordering".)
        if point == RecoveryPoint::ReachedWithRepairsPending
            && self.loss_detection == LossDetection::Linux
        {
            self.loss_episodes += 1;
        }
        let (ce, ack_delay) = if self.acked_buf.is_empty() {
            (0, Duration::ZERO)
        } else {
            let increases_largest = prev_largest.is_none_or(|l| largest > l);
            self.deliver(now, ack, increases_largest, ect_by_ranges)
        };
        let cc_episodes_before = self.cc.recovery_episodes();
        let event = AckEvent::new(now, &self.acked_buf, prior_in_flight, self.inflight)
            .rtt(cc_rtt.map(Duration::from_nanos), ack_delay)
            .lost(&self.lost_buf, self.lost_ranges)
            .ce(ce)
            .recovery_point(point)
            .spurious_loss(std::mem::take(&mut self.undo.tell_controller))
            .persistent_congestion(std::mem::take(&mut self.persistent_congestion));
        self.cc.on_ack(&event);
        self.count_quic_2018_episode(loss_episodes_before, cc_episodes_before);
        // A new episode (from this ACK's losses, or CWR from its CE) has
        // its recovery point at what was sent before this ACK, as Linux
        // sets `high_seq` to `snd_nxt` in `tcp_enter_recovery()` and
        // `tcp_enter_cwr()`.
        self.note_recovery_point();
        if self.stamps.on {
            self.settle_retrans_stamp();
        }
        if !self.acked_buf.is_empty() || self.inflight == 0 {
            self.arm_tlp(now);
        }
        self.account_mode(now);
    }

    /// Marks what `ack` acknowledges up to `largest`: the packets above
    /// the previous largest, holes filled late (reordering), and packets
    /// declared lost that arrived after all. Returns whether one of those
    /// shows a loss was spurious.
    pub(super) fn mark_acked(
        &mut self,
        ack: &Ack,
        largest: u64,
        prev_largest: Option<u64>,
    ) -> bool {
        // New territory: packets above the previous largest. The ranges
        // come highest first, so once one lies wholly below `from` every
        // later one does too: the scan stops there instead of testing the
        // older ranges an ACK repeats (on a path that lost a packet or
        // two, most ACKs carry four ranges, as the receiver keeps the
        // ranges around a lost packet's number apart for good).
        let from = prev_largest.map_or(0, |l| l + 1).max(self.base_pn);
        for &(lo, hi) in ack.ranges() {
            let hi = hi.min(largest);
            if hi < from {
                break;
            }
            for pn in lo.max(from)..=hi {
                self.ack_pn(pn);
            }
        }
        // Holes filled late (reordering): check only the known holes.
        for i in 0..self.holes.len() {
            let pn = self.holes[i];
            if ack.covers(pn) {
                self.reo.seen = true;
                self.ack_pn(pn);
            }
        }
        // Packets declared lost that arrived after all. Only the parts of
        // this ACK's ranges that the previous ACK did not cover can hold
        // one, and a part above every lost packet is rejected at once, so
        // an ACK that only extends its newest range costs no search.
        let mut spurious = false;
        if !self.lost.is_empty() {
            let (first, last) = self.lost.span();
            for &(lo, hi) in ack.ranges() {
                if hi < first || lo > last || self.prev_ranges[..self.prev_len].contains(&(lo, hi))
                {
                    continue;
                }
                let mut parts = [(0u64, 0u64); ACK_RANGES + 1];
                let n = uncovered(lo, hi, &self.prev_ranges[..self.prev_len], &mut parts);
                for &(a, b) in &parts[..n] {
                    while let Some(pn) = self.lost.first_in(a, b) {
                        spurious |= self.on_late_ack(pn);
                    }
                }
            }
        }
        // The whole array, a fixed-size move rather than a call to copy
        // `len` entries: only the first `prev_len` are ever read.
        self.prev_len = ack.ranges().len();
        self.prev_ranges = ack.ranges;
        spurious
    }

    /// The largest acknowledged packet moves up to `largest` (remembering
    /// when it was sent, for RACK), and everything skipped below it that
    /// is still outstanding becomes a hole.
    ///
    /// `new_covered`: the ACK's newest range reaches down to the cursor, so
    /// nothing was skipped. Every packet from the cursor to `largest` (the
    /// newest range's top, or below it) was then in that range, and
    /// `mark_acked` left none of them outstanding: packets at or above the
    /// cursor are only ever acknowledged there (losses, their undo and the
    /// cumulative point concern packets below it), so the scan below would
    /// find no hole, and the usual in-order ACK skips it.
    pub(super) fn advance_largest(
        &mut self,
        largest: u64,
        prev_largest: Option<u64>,
        sent: Option<Instant>,
        new_covered: bool,
    ) {
        if prev_largest.is_none_or(|l| largest > l) {
            self.largest_acked = Some(largest);
            if let Some(sent) = sent {
                self.largest_acked_sent = sent;
            }
        }
        let upto = self.largest_acked.map_or(0, |l| l + 1);
        if new_covered {
            self.cursor = self.cursor.max(upto);
            return;
        }
        let start = self.cursor.max(self.base_pn);
        for pn in start..upto {
            if self
                .pkt_mut(pn)
                .is_some_and(|p| p.status == Status::Outstanding)
            {
                self.holes.push(pn);
            }
        }
        self.cursor = self.cursor.max(upto);
    }

    /// An ACK that newly acknowledged data: timers and counters. Returns
    /// the CE marks it reports and its ACK delay, for the controller's
    /// event.
    pub(super) fn deliver(
        &mut self,
        now: Instant,
        ack: &Ack,
        increases_largest: bool,
        ect_by_ranges: [u64; 2],
    ) -> (u64, Duration) {
        self.rto_backoff = 0;
        // RFC 6298 §5.3 restarts TCP's timer on an ACK of new data; a
        // PTO stays based on the last packet sent, and only its
        // backoff is reset (RFC 9002 §6.2.1).
        if matches!(self.timeout, Timeout::Rto) {
            self.rto_base = now;
        }
        // An answered probe makes way for the next (Linux clears
        // `tlp_high_seq` once the ACK passes it).
        self.tlp.in_flight = false;
        let newly = self.acked_buf.len() as u64;
        self.delivered_packets += newly;
        let mut ce = 0;
        if self.ecn.configured {
            ce = match self.ecn.feedback {
                EcnFeedback::Counts => self.quic_ce(ack, increases_largest, newly, ect_by_ranges),
                EcnFeedback::Ece => self.tcp_ce(ack, newly),
            };
            self.delivered_ce += ce;
        }
        // A TCP ACK carries no ACK delay (the receiver's figure is the
        // model's bookkeeping, not on the wire).
        let delay = match self.ecn.feedback {
            EcnFeedback::Ece => Duration::ZERO,
            EcnFeedback::Counts => Duration::from_nanos(ack.ack_delay_ns),
        };
        (ce, delay)
    }

    /// The receiver's in-order point passed `cum_chunk`. Holes carrying
    /// data below it are acknowledged (as TCP's cumulative ACK covers
    /// segments no SACK block reported), and data below it that was
    /// waiting for repair needs none. A packet declared lost whose data is
    /// thus delivered is not taken as proof of a spurious loss: the
    /// cumulative point cannot tell the original from its repair.
    pub(super) fn on_cumulative_ack(&mut self) {
        let cum = self.cum_chunk;
        if self.stamps.on {
            self.ack_retransmissions_below(cum);
        }
        self.lost.prune_below_chunk(cum);
        while self.unrepaired.first().is_some_and(|&c| c < cum) {
            self.unrepaired.pop_first();
        }
        for i in 0..self.holes.len() {
            let pn = self.holes[i];
            if self.pkt_mut(pn).is_some_and(|p| p.chunk < cum) {
                self.ack_pn(pn);
            }
        }
    }

    /// Marks `pn` acknowledged if it is outstanding.
    ///
    /// Always inlined: LLVM's choice moved with unrelated code (the
    /// timestamps' branches in `on_ack`), once calling it out of line from
    /// the ACK's loops, 45 instructions per ACK on the bench path.
    #[inline(always)]
    pub(super) fn ack_pn(&mut self, pn: u64) {
        // `pkt_mut` spelt out, so the packet's borrow covers only `pkts`
        // and its state goes straight into `acked_buf`.
        let Some(i) = pn.checked_sub(self.base_pn) else {
            return;
        };
        let Some(p) = self.pkts.get_mut(i as usize) else {
            return;
        };
        if p.status != Status::Outstanding {
            return;
        }
        p.status = Status::Acked;
        let (bytes, chunk) = (p.bytes, p.chunk);
        match p.ecn {
            Ecn::Ect0 => self.ecn.newly_ect[0] += 1,
            Ecn::Ect1 => self.ecn.newly_ect[1] += 1,
            _ => {}
        }
        if self.newly_largest.is_none_or(|(l, _)| pn > l) {
            self.newly_largest = Some((pn, p.sent));
        }
        if self.stamps.on {
            self.stamps.note_acked(p.sent, p.retx);
        }
        self.inflight -= bytes as u64;
        self.retrans_out -= p.retx as u64;
        self.acked_buf.push(AckedPacket {
            bytes: bytes as u64,
            state: p.state,
        });
        // A chunk above every chunk ever declared lost is not awaiting
        // repair. That is the usual ACK's (new data, sent after every loss
        // so far was sent), and one comparison spares it the search
        // through the tree's nodes that `remove` makes: with 1 % loss on a
        // 10 Gbit/s path that search cost about 330 instructions per ACK.
        if chunk <= self.unrepaired_bound && !self.unrepaired.is_empty() {
            self.unrepaired.remove(&chunk);
        }
    }

    /// Drops resolved packets from the front of the window.
    pub(super) fn trim(&mut self) {
        while self
            .pkts
            .front()
            .is_some_and(|p| p.status != Status::Outstanding)
        {
            self.pkts.pop_front();
            self.base_pn += 1;
        }
    }
}
