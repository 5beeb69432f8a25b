//! The adapter's logic, free of noq's types so tests can drive it with
//! plain numbers (noq's `RttEstimator`, which its `on_ack` hands over, has
//! no public constructor).
//!
//! It keeps the per-packet [`SentPacketState`] that noq does not carry,
//! holds an ACK's callbacks back until the ACK is complete (noq reports
//! its losses after its acknowledgements), and then hands it to
//! [`Controller`] as one [`AckEvent`].

use congestion::observe::{Observed, Observer};
use congestion::{AckEvent, AckedPacket, Controller, LostPacket, SentPacketState};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// One ack-eliciting packet noq reported sent, in send order.
#[derive(Clone, Copy, Debug)]
struct Slot {
    pn: u64,
    sent: Instant,
    bytes: u64,
    state: SentPacketState,
    /// False once acknowledged, declared lost or pruned; the slot stays
    /// until every older one is gone, so the ring never shifts.
    live: bool,
}

/// What the ACK being assembled (between noq's first `on_ack` and
/// `on_end_acks`) or just assembled carries besides its packets.
#[derive(Clone, Copy, Debug)]
struct AckInfo {
    prior_in_flight: u64,
    app_limited: bool,
    rtt_sample: Option<Duration>,
    newest_acked_sent: Option<Instant>,
}

/// Events held back until the ACK they belong to is complete.
#[derive(Clone, Copy, Debug)]
struct Pending {
    now: Instant,
    /// `None` when only losses (a timer's) are pending.
    ack: Option<AckInfo>,
}

/// The adapter's state: the controller, the ring of sent packets, and the
/// ACK being assembled.
#[derive(Debug)]
pub(crate) struct Core {
    cc: Controller,
    /// noq's clock at the controller's creation; bbrlab's clock counts from it.
    epoch: Instant,
    ring: VecDeque<Slot>,
    /// Ack-eliciting bytes in flight: ours between ACKs, noq's own count
    /// taken over at each `on_end_acks`.
    in_flight: u64,
    /// Reused buffers: no allocation per ACK once they have grown.
    acked: Vec<AckedPacket>,
    lost: Vec<LostPacket>,
    lost_ranges: u32,
    last_lost_pn: Option<u64>,
    /// Where the last lost packet was found: noq reports an event's losses
    /// in ascending packet number, so the next one is usually just after.
    lost_hint: usize,
    /// Between noq's first `on_ack` of an ACK frame and its `on_end_acks`.
    acking: Option<AckInfo>,
    ack_now: Instant,
    pending: Option<Pending>,
    pending_ce: u64,
    pending_persistent: bool,
    pending_spurious: bool,
    /// Send time of the newest packet an RTT sample was taken from.
    sampled_up_to: Option<Instant>,
    /// noq's smoothed RTT as its last `on_ack` reported it.
    stack_srtt: Option<Duration>,
    latest_rtt: Option<Duration>,
    bandwidth_bits: Option<u64>,
    ssthresh: Option<u64>,
    packets_sent: u64,
    packets_lost: u64,
    bytes_acked: u64,
    ce_events: u64,
    observer: Observer,
}

impl Core {
    /// A copy with all its state (the controller's included), for a
    /// stack that duplicates a connection's controller; `None` when the
    /// controller cannot be copied (a user's algorithm without
    /// `clone_box`).
    pub(crate) fn try_clone(&self) -> Option<Core> {
        Some(Core {
            cc: self.cc.try_clone()?,
            epoch: self.epoch,
            ring: self.ring.clone(),
            in_flight: self.in_flight,
            acked: self.acked.clone(),
            lost: self.lost.clone(),
            lost_ranges: self.lost_ranges,
            last_lost_pn: self.last_lost_pn,
            lost_hint: self.lost_hint,
            acking: self.acking,
            ack_now: self.ack_now,
            pending: self.pending,
            pending_ce: self.pending_ce,
            pending_persistent: self.pending_persistent,
            pending_spurious: self.pending_spurious,
            sampled_up_to: self.sampled_up_to,
            stack_srtt: self.stack_srtt,
            latest_rtt: self.latest_rtt,
            bandwidth_bits: self.bandwidth_bits,
            ssthresh: self.ssthresh,
            packets_sent: self.packets_sent,
            packets_lost: self.packets_lost,
            bytes_acked: self.bytes_acked,
            ce_events: self.ce_events,
            observer: self.observer.clone(),
        })
    }

    pub(crate) fn new(cc: Controller, epoch: Instant, observer: Observer) -> Self {
        Core {
            cc,
            epoch,
            ring: VecDeque::new(),
            in_flight: 0,
            acked: Vec::new(),
            lost: Vec::new(),
            lost_ranges: 0,
            last_lost_pn: None,
            lost_hint: 0,
            acking: None,
            ack_now: epoch,
            pending: None,
            pending_ce: 0,
            pending_persistent: false,
            pending_spurious: false,
            sampled_up_to: None,
            stack_srtt: None,
            latest_rtt: None,
            bandwidth_bits: None,
            ssthresh: None,
            packets_sent: 0,
            packets_lost: 0,
            bytes_acked: 0,
            ce_events: 0,
            observer,
        }
    }

    /// noq's instant on bbrlab's clock.
    fn at(&self, t: Instant) -> congestion::Instant {
        congestion::Instant::from_std(t, self.epoch)
    }

    /// The controller, with every held-back event applied.
    pub(crate) fn controller(&mut self) -> &Controller {
        self.flush();
        &self.cc
    }

    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> u64 {
        self.in_flight
    }

    #[cfg(test)]
    pub(crate) fn ring_len(&self) -> usize {
        self.ring.len()
    }

    /// The bandwidth estimate (bit/s) and ssthresh as of the last event,
    /// kept from the snapshot taken then so `metrics()` need not take one.
    pub(crate) fn estimates(&mut self) -> (Option<u64>, Option<u64>) {
        self.flush();
        (self.bandwidth_bits, self.ssthresh)
    }

    /// noq's `on_packet_sent`: one ack-eliciting packet left.
    pub(crate) fn sent(&mut self, now: Instant, bytes: u64, pn: u64) {
        self.flush();
        let at = self.at(now);
        // noq tells app-limitedness per ACK, not per send (see `end_acks`).
        let state = self.cc.on_packet_sent(at, bytes, self.in_flight, false);
        self.ring.push_back(Slot {
            pn,
            sent: now,
            bytes,
            state,
            live: true,
        });
        self.in_flight = self.in_flight.saturating_add(bytes);
        self.packets_sent += 1;
    }

    /// Index of the live slot for packet `pn` of `bytes` sent at `sent`. The ring is in
    /// send order, so a binary search on the send time finds the run of
    /// packets sent at that instant (a coalesced datagram's); packet numbers
    /// repeat across packet-number spaces, the pair does not in practice.
    fn find_sent(&self, pn: u64, sent: Instant, bytes: u64) -> Option<usize> {
        let start = self.ring.partition_point(|s| s.sent < sent);
        self.ring
            .range(start..)
            .take_while(|s| s.sent == sent)
            .position(|s| s.live && s.pn == pn && s.bytes == bytes)
            .map(|i| start + i)
    }

    /// noq's `on_ack`: one packet of the ACK frame being processed.
    pub(crate) fn ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        pn: u64,
        stack_srtt: Duration,
    ) {
        if self.acking.is_none() {
            // A new ACK frame: whatever the previous one held back goes now.
            self.flush();
            self.ack_now = now;
            self.acking = Some(AckInfo {
                prior_in_flight: 0,
                app_limited: false,
                rtt_sample: None,
                newest_acked_sent: None,
            });
        }
        self.stack_srtt = Some(stack_srtt);
        let Some(i) = self.find_sent(pn, sent, bytes) else {
            // Pruned, or sent before this controller existed (path migration).
            return;
        };
        let slot = &mut self.ring[i];
        slot.live = false;
        self.acked.push(AckedPacket {
            bytes: slot.bytes,
            state: slot.state,
        });
        self.in_flight = self.in_flight.saturating_sub(slot.bytes);
        self.bytes_acked = self.bytes_acked.saturating_add(slot.bytes);
        if let Some(a) = self.acking.as_mut() {
            if a.newest_acked_sent.is_none_or(|t| sent > t) {
                a.newest_acked_sent = Some(sent);
            }
        }
    }

    /// noq's `on_end_acks`: the ACK frame's packets are all reported.
    /// `in_flight` is noq's count after them, before this frame's losses.
    pub(crate) fn end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        let acking = self.acking.take();
        // noq's count is the truth: it also drops packets of discarded
        // packet-number spaces, which nobody reports to the controller.
        self.in_flight = in_flight;
        let Some(mut info) = acking.filter(|_| !self.acked.is_empty()) else {
            // The frame acknowledged nothing the controller saw sent (only
            // ack-only packets, or pruned ones): no ACK event, as a
            // transport calls `on_ack` only for newly acknowledged data.
            return;
        };
        let acked_bytes = self.acked.iter().map(|p| p.bytes).sum::<u64>();
        info.prior_in_flight = in_flight.saturating_add(acked_bytes);
        info.app_limited = app_limited;
        // One sample per frame, from its newest packet if nothing newer was
        // sampled before (noq samples the largest acknowledged packet when
        // it grows; RFC 9002 §5.1). noq does not tell the controller the
        // peer's ACK delay, so the sample includes it.
        if let Some(sent) = info.newest_acked_sent {
            if self.sampled_up_to.is_none_or(|t| sent > t) {
                self.sampled_up_to = Some(sent);
                let rtt = now.saturating_duration_since(sent);
                info.rtt_sample = Some(rtt);
                self.latest_rtt = Some(rtt);
            }
        }
        self.pending = Some(Pending {
            now,
            ack: Some(info),
        });
    }

    /// noq's `on_packet_lost`: one packet declared lost.
    pub(crate) fn lost(&mut self, now: Instant, bytes: u64, pn: u64) {
        if self.pending.is_some_and(|p| p.now != now) {
            // Losses at another instant are a timer's, not this ACK's.
            self.flush();
        }
        if self.pending.is_none() {
            self.pending = Some(Pending { now, ack: None });
        }
        // noq gives no send time here: find the packet by number and size,
        // starting where the last lost one was.
        let hint = self.lost_hint.min(self.ring.len());
        let matches = |s: &Slot| s.live && s.pn == pn && s.bytes == bytes;
        let found = (hint..self.ring.len())
            .chain(0..hint)
            .find(|&i| matches(&self.ring[i]));
        let Some(i) = found else {
            // An ack-only packet (noq reports those lost too) or a pruned one.
            return;
        };
        self.lost_hint = i + 1;
        let slot = &mut self.ring[i];
        slot.live = false;
        self.lost.push(LostPacket {
            bytes: slot.bytes,
            state: slot.state,
        });
        self.in_flight = self.in_flight.saturating_sub(slot.bytes);
        self.packets_lost += 1;
        if self
            .last_lost_pn
            .is_none_or(|last| pn != last.wrapping_add(1))
        {
            self.lost_ranges = self.lost_ranges.saturating_add(1);
        }
        self.last_lost_pn = Some(pn);
    }

    /// noq's `on_congestion_event`: after an ACK frame's (or a timer's)
    /// losses, or for a rise in the peer's CE count.
    pub(crate) fn congestion_event(&mut self, now: Instant, persistent: bool, is_ecn: bool) {
        if self.pending.is_none() {
            self.pending = Some(Pending { now, ack: None });
        }
        if is_ecn {
            // noq says that the CE count rose, not by how much: one mark.
            self.pending_ce += 1;
            self.ce_events += 1;
        }
        self.pending_persistent |= persistent;
    }

    /// noq's `on_spurious_congestion_event`, raised at the start of the ACK
    /// that acknowledged every packet it had declared lost; applied with
    /// that ACK.
    pub(crate) fn spurious(&mut self) {
        self.flush();
        self.pending_spurious = true;
    }

    /// noq's `on_mtu_update`: the datagram size the controller counts in.
    pub(crate) fn mtu(&mut self, mtu: u16) {
        self.cc.on_mss_change(u64::from(mtu));
    }

    /// Hands the held-back frame to the controller as one event (or a
    /// timer's losses, and an undo, on their own). noq reports an ACK frame's losses after
    /// its acknowledgements; the controller wants them before the rate
    /// sample, as Linux's `tcp_ack()` marks losses before `tcp_rate_gen()`.
    pub(crate) fn flush(&mut self) {
        if self.acking.is_some() {
            // Mid-frame (a query between two `on_ack`s): nothing is complete.
            return;
        }
        let Some(p) = self.pending.take() else {
            return;
        };
        let now = self.at(p.now);
        if let Some(a) = p.ack {
            let event = AckEvent::new(now, &self.acked, a.prior_in_flight, self.in_flight)
                .rtt(a.rtt_sample, Duration::ZERO)
                .lost(&self.lost, self.lost_ranges)
                .ce(std::mem::take(&mut self.pending_ce))
                .spurious_loss(std::mem::take(&mut self.pending_spurious))
                .persistent_congestion(std::mem::take(&mut self.pending_persistent))
                .app_limited(a.app_limited);
            self.cc.on_ack(&event);
            self.prune(a.newest_acked_sent);
        } else {
            // A timer's losses, between ACKs; CE marks wait for the next
            // ACK's event.
            if std::mem::take(&mut self.pending_spurious) {
                self.cc.on_spurious_loss(now);
            }
            if !self.lost.is_empty() {
                self.cc
                    .on_timer_losses(now, &self.lost, self.lost_ranges, self.in_flight);
            }
            if std::mem::take(&mut self.pending_persistent) {
                self.cc.on_persistent_congestion(now, self.in_flight);
            }
        }
        self.acked.clear();
        self.lost.clear();
        self.lost_ranges = 0;
        self.last_lost_pn = None;
        self.lost_hint = 0;
        while self.ring.front().is_some_and(|s| !s.live) {
            self.ring.pop_front();
        }
        self.publish();
    }

    /// Drops slots noq will never report: a live packet sent more than two
    /// smoothed RTTs before the newest acknowledged one would have been
    /// declared lost by RFC 9002 §6.1.2's time threshold (9/8 RTT) had it
    /// been in the same packet-number space and path generation; it is in
    /// a space noq discarded (Initial, Handshake) or on the previous path.
    fn prune(&mut self, newest_acked_sent: Option<Instant>) {
        let Some(newest) = newest_acked_sent else {
            return;
        };
        let srtt = self
            .cc
            .rtt()
            .smoothed()
            .unwrap_or(Duration::from_millis(333));
        let Some(horizon) = newest.checked_sub(srtt * 2) else {
            return;
        };
        for s in self.ring.iter_mut() {
            if s.sent >= horizon {
                break;
            }
            s.live = false;
        }
    }

    fn publish(&mut self) {
        let snapshot = self.cc.snapshot();
        self.bandwidth_bits = snapshot
            .bw_estimate_bytes_per_sec
            .map(|b| (b * 8.0).clamp(0.0, u64::MAX as f64) as u64);
        self.ssthresh = snapshot.ssthresh_bytes;
        self.observer.publish(
            0,
            &Observed {
                snapshot,
                bytes_in_flight: self.in_flight,
                srtt: self.stack_srtt,
                latest_rtt: self.latest_rtt,
                packets_sent: self.packets_sent,
                packets_lost: self.packets_lost,
                bytes_acked: self.bytes_acked,
                ce_packets: self.ce_events,
                ..Observed::default()
            },
        );
    }
}
