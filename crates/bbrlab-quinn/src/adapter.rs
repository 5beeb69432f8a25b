//! The adapter's logic, free of quinn's types so tests can drive it with
//! plain numbers (quinn's `RttEstimator`, which its `on_ack` hands over,
//! has no public constructor).
//!
//! quinn tells the controller much less than noq: no packet numbers, a
//! send per transmit (one or more datagrams built at one instant), an
//! acknowledgement per packet with only its send time and size, and losses
//! as a byte count with the send time of the newest lost packet. The
//! adapter keeps one [`SentPacketState`] per transmit, finds it by send
//! time, and hands each ACK frame to [`Controller`] as one
//! [`congestion::AckEvent`], once quinn has reported its losses too.
//!
//! The frame's assembly is `bbrlab-adapter`'s [`FrameAssembler`], shared
//! with `bbrlab-noq`; the record of packets in flight is this adapter's
//! own, since the two stacks key packets differently (a packet number
//! there, a send time here) and report losses differently (per packet
//! there, in bytes here).

use bbrlab_adapter::{Delivered, FrameAssembler};
use congestion::observe::{Observed, Observer};
use congestion::{AckedPacket, Controller, LostPacket, SentPacketState};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// One transmit quinn reported sent (`on_sent`), in send order.
#[derive(Clone, Copy, Debug)]
struct Slot {
    sent: Instant,
    bytes: u64,
    /// Bytes of it acknowledged so far (its datagrams are acked one by one).
    acked: u64,
    state: SentPacketState,
    /// False once fully acknowledged or pruned; the slot stays until every
    /// older one is gone, so the ring never shifts.
    live: bool,
}

/// The adapter's state: the controller, the ring of transmits, and the
/// ACK frame being assembled.
#[derive(Debug)]
pub(crate) struct Core {
    cc: Controller,
    /// The frame quinn is reporting, until it is complete.
    frame: FrameAssembler,
    ring: VecDeque<Slot>,
    /// Bytes in flight: ours between ACKs, quinn's own count taken over at
    /// each `on_end_acks`.
    in_flight: u64,
    stack_srtt: Option<Duration>,
    transmits: u64,
    loss_events: u64,
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
            stack_srtt: self.stack_srtt,
            transmits: self.transmits,
            loss_events: self.loss_events,
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
            stack_srtt: None,
            transmits: 0,
            loss_events: 0,
            bytes_acked: 0,
            ce_events: 0,
            observer,
        }
    }

    /// quinn's instant on bbrlab's clock.
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

    /// quinn's `on_sent`: a transmit of `bytes` (one or more datagrams).
    pub(crate) fn sent(&mut self, now: Instant, bytes: u64) {
        self.flush();
        let at = self.at(now);
        // quinn tells app-limitedness per ACK, not per send (see `end_acks`).
        let state = self.cc.on_packet_sent(at, bytes, self.in_flight, false);
        self.ring.push_back(Slot {
            sent: now,
            bytes,
            acked: 0,
            state,
            live: true,
        });
        self.in_flight = self.in_flight.saturating_add(bytes);
        self.transmits += 1;
    }

    /// The first live slot of a transmit sent at `sent`: the ring is in
    /// send order, and quinn stamps every packet of a transmit with its
    /// `now`. Several transmits can share an instant (quinn's driver polls
    /// for transmits repeatedly with one `now`); their states differ only
    /// by what was sent between them, so crediting the oldest live one
    /// first is as good as knowing which.
    fn find(&self, sent: Instant) -> Option<usize> {
        let start = self.ring.partition_point(|s| s.sent < sent);
        self.ring
            .range(start..)
            .take_while(|s| s.sent == sent)
            .position(|s| s.live)
            .map(|i| start + i)
    }

    /// quinn's `on_ack`: one packet of the ACK frame being processed.
    pub(crate) fn ack(&mut self, sent: Instant, bytes: u64, stack_srtt: Duration) {
        if !self.frame.is_open() {
            // A new ACK frame: whatever the previous one held back goes now.
            self.flush();
            self.frame.open_frame();
        }
        self.stack_srtt = Some(stack_srtt);
        let Some(i) = self.find(sent) else {
            // Pruned, or sent before this controller existed (migration).
            return;
        };
        let slot = &mut self.ring[i];
        slot.acked = slot.acked.saturating_add(bytes);
        if slot.acked >= slot.bytes {
            slot.live = false;
        }
        let state = slot.state;
        self.frame.acked(sent, AckedPacket { bytes, state });
        self.in_flight = self.in_flight.saturating_sub(bytes);
        self.bytes_acked = self.bytes_acked.saturating_add(bytes);
    }

    /// quinn's `on_end_acks`: the ACK frame's packets are all reported.
    /// `in_flight` is quinn's count after them, before this frame's losses.
    /// A frame that acknowledged nothing the controller saw sent (only
    /// ack-only packets, or pruned ones) is no ACK event.
    pub(crate) fn end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        // quinn's count is the truth: ours cannot tell which bytes of a
        // transmit were ack-only datagrams, nor see discarded spaces.
        self.in_flight = in_flight;
        self.frame.close_frame(now, in_flight, app_limited);
    }

    /// quinn's `on_congestion_event`: after an ACK frame's (or a timer's)
    /// losses, `lost_bytes` of them, the newest sent at `sent`; or, with
    /// `lost_bytes == 0`, a rise in the peer's CE count.
    pub(crate) fn congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        persistent: bool,
        lost_bytes: u64,
    ) {
        if self.frame.pending_since().is_some_and(|t| t != now) {
            // An event at another instant is a timer's, not this ACK's.
            self.flush();
        }
        self.frame.begin_pending(now);
        if persistent {
            self.frame.persistent_congestion();
        }
        if lost_bytes == 0 {
            // quinn: "0 for ECN triggers". It says the CE count rose, not
            // by how much: one mark.
            self.frame.ce(1);
            self.ce_events += 1;
            return;
        }
        // One lost "packet" of all the lost bytes, with the state of the
        // transmit that holds the newest of them (or the newest one sent
        // before it, if that slot is gone): the rate sampler and BBR need
        // the bytes and the newest state; which transmits they came from
        // quinn does not say, nor how many ranges they form (one).
        let i = self.ring.partition_point(|s| s.sent <= sent);
        let state = match i.checked_sub(1).map(|j| self.ring[j]) {
            Some(slot) => slot.state,
            // Its slot was pruned: a state as of its send, as far as the
            // sampler still knows it.
            None => SentPacketState {
                sent_time: self.at(sent),
                delivered_bytes: self.cc.sampler().delivered_bytes(),
                delivered_time: self.at(sent),
                first_sent_time: self.at(sent),
                is_app_limited: false,
                bytes_in_flight: self.in_flight,
                lost_bytes: self.cc.sampler().lost_bytes(),
                delivered_packets: 0,
                delivered_ce_packets: 0,
            },
        };
        self.frame.lost(
            LostPacket {
                bytes: lost_bytes,
                state,
            },
            false,
        );
        self.in_flight = self.in_flight.saturating_sub(lost_bytes);
        self.loss_events += 1;
    }

    /// quinn's `on_mtu_update`: the datagram size the controller counts in.
    pub(crate) fn mtu(&mut self, mtu: u16) {
        self.cc.on_mss_change(u64::from(mtu));
    }

    /// Hands the held-back frame to the controller as one event (or a
    /// timer's losses on their own). quinn reports an ACK frame's losses
    /// after its acknowledgements; the controller wants them before the
    /// rate sample, as Linux's `tcp_ack()` marks losses before
    /// `tcp_rate_gen()`, so the frame waits until it is complete.
    pub(crate) fn flush(&mut self) {
        match self.frame.deliver(&mut self.cc, self.in_flight) {
            Delivered::Nothing => return,
            Delivered::Frame { newest_acked_sent } => self.prune(newest_acked_sent),
            Delivered::Timer => {}
        }
        while self.ring.front().is_some_and(|s| !s.live) {
            self.ring.pop_front();
        }
        self.publish();
    }

    /// Drops slots quinn will never finish reporting: a transmit sent more
    /// than two smoothed RTTs before the newest acknowledged packet would
    /// have been acknowledged or declared lost by RFC 9002 §6.1.2's time
    /// threshold (9/8 RTT). Slots of lost transmits, of ack-only datagrams
    /// and of discarded packet-number spaces end here.
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
        self.observer.publish(
            0,
            &Observed {
                snapshot: self.cc.snapshot(),
                bytes_in_flight: self.in_flight,
                srtt: self.stack_srtt,
                latest_rtt: self.frame.latest_rtt(),
                packets_sent: self.transmits,
                packets_lost: self.loss_events,
                bytes_acked: self.bytes_acked,
                ce_packets: self.ce_events,
                ..Observed::default()
            },
        );
    }
}
