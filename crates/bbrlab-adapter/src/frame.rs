//! One ACK frame, reported callback by callback, assembled into one
//! [`AckEvent`].
//!
//! quinn and noq report an ACK frame as each acknowledged packet, then the
//! end of the frame (with the stack's bytes in flight and whether the
//! application was the limit), then the frame's losses, then a rise in the
//! peer's CE count. Only after the last of those is the frame complete, and
//! the stack says so by nothing but its next call of another kind (a send,
//! a window query, the next frame). So the frame is held here until the
//! adapter, at that next call, asks for it to be [delivered](FrameAssembler::deliver):
//! one [`Controller::on_ack`], or, for losses a timer declared with no ACK
//! around them, [`Controller::on_timer_losses`].

use congestion::{AckEvent, AckedPacket, Controller, LostPacket};
use std::time::{Duration, Instant};

/// What the frame being assembled carries besides its packets.
#[derive(Clone, Copy, Debug, Default)]
struct FrameInfo {
    prior_in_flight: u64,
    app_limited: bool,
    rtt_sample: Option<Duration>,
    newest_acked_sent: Option<Instant>,
}

/// What is waiting to be delivered, and from when.
#[derive(Clone, Copy, Debug)]
struct Pending {
    now: Instant,
    /// `None` when only a timer's losses (or an undo) are waiting.
    frame: Option<FrameInfo>,
}

/// What [`FrameAssembler::deliver`] handed to the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivered {
    /// Nothing was complete.
    Nothing,
    /// An ACK frame, whose newest acknowledged packet was sent at this
    /// time (the stack's clock), for pruning what the stack will never
    /// report.
    Frame {
        /// When the frame's newest acknowledged packet was sent.
        newest_acked_sent: Option<Instant>,
    },
    /// Losses (or an undo) a timer declared, with no ACK.
    Timer,
}

/// One ACK frame in assembly, and the losses, CE marks and undo that
/// belong to it; the stack's clock maps onto the controller's from
/// `epoch`.
///
/// The buffers are reused: once they have grown to the largest frame,
/// assembling a frame allocates nothing.
#[derive(Clone, Debug)]
pub struct FrameAssembler {
    epoch: Instant,
    acked: Vec<AckedPacket>,
    lost: Vec<LostPacket>,
    lost_ranges: u32,
    /// Between the frame's first acknowledged packet and its end.
    open: Option<FrameInfo>,
    pending: Option<Pending>,
    ce: u64,
    persistent: bool,
    spurious: bool,
    /// Send time of the newest packet an RTT sample was taken from.
    sampled_up_to: Option<Instant>,
    latest_rtt: Option<Duration>,
}

impl FrameAssembler {
    /// An assembler for a controller whose clock starts at the stack's
    /// `epoch`.
    pub fn new(epoch: Instant) -> Self {
        FrameAssembler {
            epoch,
            acked: Vec::new(),
            lost: Vec::new(),
            lost_ranges: 0,
            open: None,
            pending: None,
            ce: 0,
            persistent: false,
            spurious: false,
            sampled_up_to: None,
            latest_rtt: None,
        }
    }

    /// The stack's instant `t` on the controller's clock.
    pub fn at(&self, t: Instant) -> congestion::Instant {
        congestion::Instant::from_std(t, self.epoch)
    }

    /// Whether a frame is open (its packets are being reported): nothing
    /// is complete, so nothing may be delivered.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// When what is waiting began (the frame's end, or the first loss of
    /// a timer's batch), if anything waits.
    pub fn pending_since(&self) -> Option<Instant> {
        self.pending.map(|p| p.now)
    }

    /// The latest RTT sample taken from a frame.
    pub fn latest_rtt(&self) -> Option<Duration> {
        self.latest_rtt
    }

    /// Opens a frame: its first acknowledged packet is about to be
    /// reported. The caller delivers what waited first.
    pub fn open_frame(&mut self) {
        self.open = Some(FrameInfo::default());
    }

    /// One packet of the open frame, sent at `sent` (the stack's clock).
    pub fn acked(&mut self, sent: Instant, packet: AckedPacket) {
        self.acked.push(packet);
        if let Some(f) = self.open.as_mut() {
            if f.newest_acked_sent.is_none_or(|t| sent > t) {
                f.newest_acked_sent = Some(sent);
            }
        }
    }

    /// The frame ends at `now` with `in_flight` bytes in flight after its
    /// acknowledged packets (before its losses) and the application the
    /// limit or not. A frame that acknowledged nothing the controller saw
    /// sent is no ACK event. The frame's RTT sample is taken from its
    /// newest packet if nothing newer was sampled before (the largest
    /// acknowledged packet, when it grows: RFC 9002 §5.1); the stacks do
    /// not give the controller the peer's ACK delay, so it includes it.
    pub fn close_frame(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        let Some(mut f) = self.open.take().filter(|_| !self.acked.is_empty()) else {
            return;
        };
        // Saturating: byte counts near u64::MAX must not overflow (a panic
        // with overflow checks on).
        let acked_bytes = self
            .acked
            .iter()
            .fold(0u64, |sum, p| sum.saturating_add(p.bytes));
        f.prior_in_flight = in_flight.saturating_add(acked_bytes);
        f.app_limited = app_limited;
        if let Some(sent) = f.newest_acked_sent {
            if self.sampled_up_to.is_none_or(|t| sent > t) {
                self.sampled_up_to = Some(sent);
                let rtt = now.saturating_duration_since(sent);
                f.rtt_sample = Some(rtt);
                self.latest_rtt = Some(rtt);
            }
        }
        self.pending = Some(Pending {
            now,
            frame: Some(f),
        });
    }

    /// Something belonging to no closed frame happens at `now` (a timer's
    /// loss, a CE rise between frames): it waits from then.
    pub fn begin_pending(&mut self, now: Instant) {
        if self.pending.is_none() {
            self.pending = Some(Pending { now, frame: None });
        }
    }

    /// A packet declared lost; `new_range` when it does not follow the
    /// previous lost one (by packet number), so the losses' ranges count.
    pub fn lost(&mut self, packet: LostPacket, new_range: bool) {
        self.lost.push(packet);
        if new_range {
            self.lost_ranges = self.lost_ranges.saturating_add(1);
        }
    }

    /// `marks` more packets reported CE-marked.
    pub fn ce(&mut self, marks: u64) {
        self.ce = self.ce.saturating_add(marks);
    }

    /// The losses establish persistent congestion.
    pub fn persistent_congestion(&mut self) {
        self.persistent = true;
    }

    /// The last reduction was spurious; the next delivery undoes it.
    pub fn spurious(&mut self) {
        self.spurious = true;
    }

    /// Hands what is complete to `cc`, with `in_flight` bytes in flight
    /// now: a closed frame as one [`AckEvent`], or a timer's losses on
    /// their own (CE marks then wait for the next frame). Nothing while a
    /// frame is open.
    pub fn deliver(&mut self, cc: &mut Controller, in_flight: u64) -> Delivered {
        if self.open.is_some() {
            return Delivered::Nothing;
        }
        let Some(p) = self.pending.take() else {
            return Delivered::Nothing;
        };
        let now = self.at(p.now);
        let delivered = if let Some(f) = p.frame {
            let event = AckEvent::new(now, &self.acked, f.prior_in_flight, in_flight)
                .rtt(f.rtt_sample, Duration::ZERO)
                .lost(&self.lost, self.lost_ranges)
                .ce(std::mem::take(&mut self.ce))
                .spurious_loss(std::mem::take(&mut self.spurious))
                .persistent_congestion(std::mem::take(&mut self.persistent))
                .app_limited(f.app_limited);
            cc.on_ack(&event);
            Delivered::Frame {
                newest_acked_sent: f.newest_acked_sent,
            }
        } else {
            if std::mem::take(&mut self.spurious) {
                cc.on_spurious_loss(now);
            }
            if !self.lost.is_empty() {
                cc.on_timer_losses(now, &self.lost, self.lost_ranges, in_flight);
            }
            if std::mem::take(&mut self.persistent) {
                cc.on_persistent_congestion(now, in_flight);
            }
            Delivered::Timer
        };
        self.acked.clear();
        self.lost.clear();
        self.lost_ranges = 0;
        delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use congestion::{Algorithm, Config};

    fn sent(cc: &mut Controller, at: congestion::Instant, in_flight: u64) -> AckedPacket {
        AckedPacket {
            bytes: 1200,
            state: cc.on_packet_sent(at, 1200, in_flight, false),
        }
    }

    /// A frame reported as packets, its end, then a loss and a CE rise is
    /// one ACK event when delivered, the same as one event built by hand;
    /// nothing is delivered while the frame is open.
    #[test]
    fn a_frame_reported_piecewise_is_the_event_built_at_once() {
        let epoch = Instant::now();
        let mut cc = Controller::new(&Config::new(Algorithm::Cubic), congestion::Instant::ZERO);
        let mut reference =
            Controller::new(&Config::new(Algorithm::Cubic), congestion::Instant::ZERO);
        let mut f = FrameAssembler::new(epoch);
        let t0 = congestion::Instant::ZERO;
        let (a, b, c) = (
            sent(&mut cc, t0, 0),
            sent(&mut cc, t0, 1200),
            sent(&mut cc, t0, 2400),
        );
        for p in [0, 1200, 2400] {
            reference.on_packet_sent(t0, 1200, p, false);
        }
        let now = epoch + Duration::from_millis(40);
        f.open_frame();
        f.acked(epoch, a);
        f.acked(epoch, b);
        assert_eq!(f.deliver(&mut cc, 1200), Delivered::Nothing, "open");
        f.close_frame(now, 1200, false);
        f.lost(
            LostPacket {
                bytes: c.bytes,
                state: c.state,
            },
            true,
        );
        f.ce(1);
        assert_eq!(
            f.deliver(&mut cc, 0),
            Delivered::Frame {
                newest_acked_sent: Some(epoch)
            }
        );
        assert_eq!(f.latest_rtt(), Some(Duration::from_millis(40)));
        let at = congestion::Instant::from_std(now, epoch);
        let lost = [LostPacket {
            bytes: c.bytes,
            state: c.state,
        }];
        reference.on_ack(
            &AckEvent::new(at, &[a, b], 3600, 0)
                .rtt(Some(Duration::from_millis(40)), Duration::ZERO)
                .lost(&lost, 1)
                .ce(1),
        );
        assert_eq!(cc.snapshot(), reference.snapshot());
        assert_eq!(cc.recovery_episodes(), 1);
        assert_eq!(f.deliver(&mut cc, 0), Delivered::Nothing, "delivered once");
    }

    /// A frame whose packets' bytes add up past u64::MAX (a stack's bug,
    /// or a fuzzer) saturates instead of overflowing: the sum used to
    /// panic with overflow checks on.
    #[test]
    fn huge_byte_counts_saturate() {
        let epoch = Instant::now();
        let mut cc = Controller::new(&Config::new(Algorithm::Bbr3), congestion::Instant::ZERO);
        let state = cc.on_packet_sent(congestion::Instant::ZERO, u64::MAX, 0, false);
        let mut f = FrameAssembler::new(epoch);
        f.open_frame();
        for _ in 0..2 {
            f.acked(
                epoch,
                AckedPacket {
                    bytes: u64::MAX,
                    state,
                },
            );
        }
        f.close_frame(epoch + Duration::from_millis(10), u64::MAX, false);
        assert!(matches!(
            f.deliver(&mut cc, u64::MAX),
            Delivered::Frame { .. }
        ));
        assert!(cc.cwnd_bytes() > 0 && cc.pacing_rate_bytes_per_sec() > 0);
    }

    /// Losses with no frame around them are a timer's; a frame with no
    /// packet the controller saw is no event.
    #[test]
    fn timer_losses_go_alone_and_an_empty_frame_is_no_event() {
        let epoch = Instant::now();
        let mut cc = Controller::new(&Config::new(Algorithm::Reno), congestion::Instant::ZERO);
        let p = sent(&mut cc, congestion::Instant::ZERO, 0);
        let mut f = FrameAssembler::new(epoch);
        f.open_frame();
        f.close_frame(epoch, 1200, false);
        assert_eq!(f.pending_since(), None);
        f.begin_pending(epoch + Duration::from_millis(300));
        f.lost(
            LostPacket {
                bytes: p.bytes,
                state: p.state,
            },
            true,
        );
        f.persistent_congestion();
        assert_eq!(f.deliver(&mut cc, 0), Delivered::Timer);
        assert_eq!(cc.recovery_state(), congestion::RecoveryState::Loss);
    }
}
