//! Losses and recovery episodes: a packet declared lost is charged to
//! its undo episode and queued for repair; the controller is told the
//! batch (in the ACK's event, or on its own for a timer's); the episode ends when everything sent before it began is
//! delivered (TCP's `snd_una` passing `high_seq`).

use super::*;

impl Sender {
    /// Declares `pn` lost, charging it to the current undo episode.
    /// The caller has already taken the packet out of flight; this records
    /// the loss for the controller and queues the repair.
    pub(super) fn mark_lost(&mut self, pn: u64) {
        let episode = self.undo.marker.then_some(self.undo.episode);
        let Some(p) = self.pkt_mut(pn) else { return };
        p.status = Status::Lost;
        p.lost_in = episode.unwrap_or(0);
        let copy = *p;
        self.packets_lost += 1;
        if self.last_lost_pn.is_none_or(|l| pn != l + 1) {
            self.lost_ranges += 1;
        }
        self.last_lost_pn = Some(pn);
        self.undo.lost += episode.is_some() as u64;
        self.lost.insert(pn, copy);
        self.lost_buf.push(LostPacket {
            bytes: copy.bytes as u64,
            state: copy.state,
        });
        self.retx.push_back((copy.chunk, copy.bytes));
        self.unrepaired.insert(copy.chunk);
        self.unrepaired_bound = self.unrepaired_bound.max(copy.chunk);
    }

    /// Starts gathering a new batch of losses.
    pub(super) fn clear_losses(&mut self) {
        self.lost_buf.clear();
        self.lost_ranges = 0;
        self.last_lost_pn = None;
    }

    /// Tells the controller what a timer's loss detection just found (an
    /// ACK's losses go in its event).
    pub(super) fn report_timer_losses(&mut self, t: Instant) {
        if !self.lost_buf.is_empty() {
            self.cc
                .on_timer_losses(t, &self.lost_buf, self.lost_ranges, self.inflight);
        }
        if std::mem::take(&mut self.persistent_congestion) {
            self.cc.on_persistent_congestion(t, self.inflight);
        }
    }

    /// Under QUIC 2018's loss detection, counts in `loss_episodes` an
    /// episode the controller began inside recovery because a packet sent
    /// after the current one began was lost (RFC 9002 §7.3.2), which loss
    /// detection, counting only from Open or CWR, did not. Such an episode
    /// is one where, since `cc_before` (the controller's count before it
    /// heard of this ACK's losses) and `counted_before` (ours before loss
    /// detection), the controller's count grew, ours did not, and the
    /// controller is in recovery: an ACK whose acknowledged packets end
    /// the episode and whose CE marks begin a CWR one leaves it in CWR.
    ///
    /// Only an ACK needs this: a loss the timer finds lies below packets
    /// an ACK acknowledged, sent after it and so after the episode began,
    /// and that ACK ended the episode (RFC 9002 §7.3.2), so the timer's
    /// loss begins one from Open, which loss detection counts.
    pub(super) fn count_quic_2018_episode(&mut self, counted_before: u64, cc_before: u64) {
        if self.loss_detection == LossDetection::Quic2018
            && !self.lost_buf.is_empty()
            && self.loss_episodes == counted_before
            && self.cc.recovery_episodes() > cc_before
            && self.cc.recovery_state() == RecoveryState::Recovery
        {
            self.loss_episodes += 1;
        }
    }

    /// Records the recovery point when the controller has begun a new
    /// episode since we last looked.
    pub(super) fn note_recovery_point(&mut self) {
        let episodes = self.cc.recovery_episodes();
        if episodes != self.seen_episodes {
            self.seen_episodes = episodes;
            self.recovery_point = Some((self.next_pn, self.next_chunk));
        }
    }

    /// Ends the recovery episode once everything sent before it began has
    /// been delivered: no packet from before the point is still
    /// outstanding (the window is trimmed up to the first outstanding one)
    /// and no chunk from before it awaits repair. That is TCP's
    /// `snd_una` ≥ `high_seq`. Returns what the controller's event says.
    pub(super) fn check_recovery_point(&mut self) -> RecoveryPoint {
        let Some((high_pn, high_chunk)) = self.recovery_point else {
            return RecoveryPoint::NotReached;
        };
        let state = self.recovery_state();
        if state == RecoveryState::Open {
            self.recovery_point = None;
            return RecoveryPoint::NotReached;
        }
        // CWR is held until something *above* the point is acknowledged
        // (`tcp_fastretrans_alert()`: `snd_una != high_seq`), so the
        // receiver has seen the CWR flag before the next ECE counts anew.
        let pkts_done = if state == RecoveryState::Cwr {
            self.base_pn > high_pn || (self.pkts.is_empty() && self.next_pn > high_pn)
        } else {
            self.pkts.is_empty() || self.base_pn >= high_pn
        };
        let data_done = self.unrepaired.first().is_none_or(|&c| c >= high_chunk);
        if !(pkts_done && data_done) {
            return RecoveryPoint::NotReached;
        }
        self.recovery_point = None;
        // A recovery that ends without undo ages the widened reordering
        // window (Linux `tcp_try_undo_recovery()`).
        self.reo.persist = self.reo.persist.saturating_sub(1);
        if self.unrepaired.is_empty() {
            RecoveryPoint::Reached
        } else {
            RecoveryPoint::ReachedWithRepairsPending
        }
    }
}
