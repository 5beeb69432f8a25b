//! The adapter's logic, free of noq's types so tests can drive it with
//! plain numbers (noq's `RttEstimator`, which its `on_ack` hands over, has
//! no public constructor).
//!
//! It keeps the per-packet [`SentPacketState`] that noq does not carry,
//! holds an ACK's callbacks back until the ACK is complete (noq reports
//! its losses after its acknowledgements) in `bbrlab-adapter`'s
//! [`FrameAssembler`], and then hands it to [`Controller`] as one
//! `AckEvent`.

use bbrlab_adapter::{Delivered, FrameAssembler};
use congestion::observe::{Observed, Observer};
use congestion::{AckedPacket, Controller, LostPacket, SentPacketState};
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

/// The adapter's state: the controller, the ring of sent packets, and the
/// ACK frame being assembled.
#[derive(Debug)]
pub(crate) struct Core {
    cc: Controller,
    /// The frame noq is reporting, until it is complete.
    frame: FrameAssembler,
    ring: VecDeque<Slot>,
    /// Ack-eliciting bytes in flight: ours between ACKs, noq's own count
    /// taken over at each `on_end_acks`.
    in_flight: u64,
    last_lost_pn: Option<u64>,
    /// Where the last lost packet was found: noq reports an event's losses
    /// in ascending packet number, so the next one is usually just after.
    lost_hint: usize,
    /// noq's smoothed RTT as its last `on_ack` reported it.
    stack_srtt: Option<Duration>,
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
            frame: self.frame.clone(),
            ring: self.ring.clone(),
            in_flight: self.in_flight,
            last_lost_pn: self.last_lost_pn,
            lost_hint: self.lost_hint,
            stack_srtt: self.stack_srtt,
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
            frame: FrameAssembler::new(epoch),
            ring: VecDeque::new(),
            in_flight: 0,
            last_lost_pn: None,
            lost_hint: 0,
            stack_srtt: None,
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
        self.frame.at(t)
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
        _now: Instant,
        sent: Instant,
        bytes: u64,
        pn: u64,
        stack_srtt: Duration,
    ) {
        if !self.frame.is_open() {
            // A new ACK frame: whatever the previous one held back goes now.
            self.flush();
            self.frame.open_frame();
        }
        self.stack_srtt = Some(stack_srtt);
        let Some(i) = self.find_sent(pn, sent, bytes) else {
            // Pruned, or sent before this controller existed (path migration).
            return;
        };
        let slot = &mut self.ring[i];
        slot.live = false;
        let packet = AckedPacket {
            bytes: slot.bytes,
            state: slot.state,
        };
        self.frame.acked(sent, packet);
        self.in_flight = self.in_flight.saturating_sub(packet.bytes);
        self.bytes_acked = self.bytes_acked.saturating_add(packet.bytes);
    }

    /// noq's `on_end_acks`: the ACK frame's packets are all reported.
    /// `in_flight` is noq's count after them, before this frame's losses.
    /// A frame that acknowledged nothing the controller saw sent (only
    /// ack-only packets, or pruned ones) is no ACK event.
    pub(crate) fn end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        // noq's count is the truth: it also drops packets of discarded
        // packet-number spaces, which nobody reports to the controller.
        self.in_flight = in_flight;
        self.frame.close_frame(now, in_flight, app_limited);
    }

    /// noq's `on_packet_lost`: one packet declared lost.
    pub(crate) fn lost(&mut self, now: Instant, bytes: u64, pn: u64) {
        if self.frame.pending_since().is_some_and(|t| t != now) {
            // Losses at another instant are a timer's, not this ACK's.
            self.flush();
        }
        self.frame.begin_pending(now);
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
        let packet = LostPacket {
            bytes: slot.bytes,
            state: slot.state,
        };
        let new_range = self
            .last_lost_pn
            .is_none_or(|last| pn != last.wrapping_add(1));
        self.frame.lost(packet, new_range);
        self.in_flight = self.in_flight.saturating_sub(packet.bytes);
        self.packets_lost += 1;
        self.last_lost_pn = Some(pn);
    }

    /// noq's `on_congestion_event`: after an ACK frame's (or a timer's)
    /// losses, or for a rise in the peer's CE count.
    pub(crate) fn congestion_event(&mut self, now: Instant, persistent: bool, is_ecn: bool) {
        self.frame.begin_pending(now);
        if is_ecn {
            // noq says that the CE count rose, not by how much: one mark.
            self.frame.ce(1);
            self.ce_events += 1;
        }
        if persistent {
            self.frame.persistent_congestion();
        }
    }

    /// noq's `on_spurious_congestion_event`, raised at the start of the ACK
    /// that acknowledged every packet it had declared lost; applied with
    /// that ACK.
    pub(crate) fn spurious(&mut self) {
        self.flush();
        self.frame.spurious();
    }

    /// noq's `on_mtu_update`: the datagram size the controller counts in.
    pub(crate) fn mtu(&mut self, mtu: u16) {
        self.cc.on_mss_change(u64::from(mtu));
    }

    /// Hands the held-back frame to the controller as one event (or a
    /// timer's losses, and an undo, on their own). noq reports an ACK
    /// frame's losses after its acknowledgements; the controller wants
    /// them before the rate sample, as Linux's `tcp_ack()` marks losses
    /// before `tcp_rate_gen()`, so the frame waits until it is complete.
    pub(crate) fn flush(&mut self) {
        match self.frame.deliver(&mut self.cc, self.in_flight) {
            Delivered::Nothing => return,
            Delivered::Frame { newest_acked_sent } => self.prune(newest_acked_sent),
            Delivered::Timer => {}
        }
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
                latest_rtt: self.frame.latest_rtt(),
                packets_sent: self.packets_sent,
                packets_lost: self.packets_lost,
                bytes_acked: self.bytes_acked,
                ce_packets: self.ce_events,
                ..Observed::default()
            },
        );
    }
}
