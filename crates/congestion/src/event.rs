//! What one ACK tells a controller, as one value.
//!
//! An ACK carries several facts a congestion controller needs (packets
//! newly acknowledged, packets it shows lost, CE marks, an RTT sample, the
//! end of a recovery episode), and the order in which a controller applies
//! them decides what it does: Linux's `tcp_ack()` fixes `prior_in_flight`
//! before marking anything, runs `tcp_fastretrans_alert()` (undo, the end
//! of an episode, new losses) and only then takes the rate sample and runs
//! the algorithm (`tcp_rate_gen()`, `cong_control`). [`AckEvent`] carries
//! the facts and [`Controller::on_ack`](crate::Controller::on_ack) applies
//! that order once, in one place, so a transport states what happened and
//! never encodes the order itself.

use crate::delivery_rate::{AckedPacket, LostPacket};
use crate::time::Instant;
use core::time::Duration;

/// Whether an ACK ended the current recovery episode, for a transport that
/// tracks episodes itself ([`RecoveryExit::Transport`](crate::RecoveryExit),
/// TCP's rule). Ignored under RFC 9002's rule, where the controller ends an
/// episode when a packet sent after it began is acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecoveryPoint {
    /// The episode goes on, or there is none (the usual case).
    #[default]
    NotReached,
    /// Everything sent before the episode began, repairs included, is now
    /// delivered (TCP: `snd_una` reached `high_seq`): the episode ends.
    Reached,
    /// Everything sent before the episode began is acknowledged, but data
    /// declared lost since it began still waits for its repair to be
    /// delivered. A new episode begins at once, as Linux re-enters
    /// recovery while `lost_out` is non-zero: CUBIC cuts again, BBR saves
    /// its cwnd, and neither restores or restarts packet conservation.
    ReachedWithRepairsPending,
}

/// Everything one ACK tells the controller. Build it with
/// [`AckEvent::new`] and the setters for what the ACK carries besides its
/// packets, then hand it to [`Controller::on_ack`](crate::Controller::on_ack).
///
/// The fields are public to read; the struct is `#[non_exhaustive]` so a
/// later version can carry a new fact without breaking a transport that
/// builds events with the setters.
///
/// Bytes in flight appear twice, because the controller needs both:
/// `prior_bytes_in_flight` is the amount when the ACK arrived, before it
/// acknowledged anything or revealed a loss (Linux `prior_in_flight`, the
/// figure BBR's packet conservation and the rate sample use);
/// `bytes_in_flight` is the amount after this ACK's acknowledged and lost
/// packets left the flight (what the window is compared with next).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AckEvent<'a> {
    /// When the ACK arrived.
    pub now: Instant,
    /// Bytes in flight when the ACK arrived, before anything was removed.
    pub prior_bytes_in_flight: u64,
    /// Bytes in flight after this ACK's acknowledged and lost packets.
    pub bytes_in_flight: u64,
    /// The packets this ACK newly acknowledges, with the state
    /// [`Controller::on_packet_sent`](crate::Controller::on_packet_sent)
    /// returned for each. May be empty (an ACK that only revealed losses).
    pub acked: &'a [AckedPacket],
    /// The packets loss detection declared lost on this ACK.
    pub lost: &'a [LostPacket],
    /// How many discontiguous ranges of packet numbers `lost` forms
    /// (BBRv3's STARTUP exit counts them, draft-ietf-ccwg-bbr-06
    /// §5.3.1.3); 1 when unknown.
    pub lost_ranges: u32,
    /// Packets this ACK newly reports CE-marked: QUIC, the increase of the
    /// ACK frame's ECN-CE count (RFC 9000 §13.4.2.1); TCP with RFC 3168
    /// ECN, the packets an ACK carrying ECE acknowledges. Marks on an event
    /// that acknowledges nothing are kept for the next one that does.
    pub ce_packets: u64,
    /// The RTT measured from the newest packet this ACK newly acknowledges,
    /// if the transport took one (never from a retransmission: Karn's
    /// rule, RFC 9002 §5.1).
    pub rtt_sample: Option<Duration>,
    /// The peer's reported ACK delay (QUIC); zero for TCP.
    pub ack_delay: Duration,
    /// Whether this ACK ended a recovery episode the transport tracks.
    pub recovery_point: RecoveryPoint,
    /// This ACK proves the last window reduction was spurious (an original
    /// transmission declared lost was acknowledged after all, DSACK, or
    /// F-RTO after a timeout): the controller restores its window first,
    /// as Linux's undo runs before the ACK's new losses.
    pub spurious_loss: bool,
    /// The packets declared lost on this ACK establish persistent
    /// congestion (RFC 9002 §7.6): the window collapses as after a timeout.
    pub persistent_congestion: bool,
    /// The application had nothing to send when this ACK arrived although
    /// the window allowed more: the delivery-rate samples that follow do
    /// not lower BBR's bandwidth estimate. (A transport that tells this at
    /// send time instead, with
    /// [`Controller::on_packet_sent`](crate::Controller::on_packet_sent)'s
    /// `app_limited` or [`Controller::on_app_limited`](crate::Controller::on_app_limited),
    /// leaves it false.)
    pub app_limited: bool,
}

impl<'a> AckEvent<'a> {
    /// An ACK at `now` newly acknowledging `acked`, with `prior_bytes_in_flight`
    /// in flight when it arrived and `bytes_in_flight` after it. Nothing
    /// lost, no CE, no RTT sample: add those with the setters.
    #[inline]
    pub fn new(
        now: Instant,
        acked: &'a [AckedPacket],
        prior_bytes_in_flight: u64,
        bytes_in_flight: u64,
    ) -> Self {
        AckEvent {
            now,
            prior_bytes_in_flight,
            bytes_in_flight,
            acked,
            lost: &[],
            lost_ranges: 1,
            ce_packets: 0,
            rtt_sample: None,
            ack_delay: Duration::ZERO,
            recovery_point: RecoveryPoint::NotReached,
            spurious_loss: false,
            persistent_congestion: false,
            app_limited: false,
        }
    }

    /// The RTT sample this ACK gave, and the peer's ACK delay.
    #[must_use]
    #[inline]
    pub fn rtt(mut self, sample: Option<Duration>, ack_delay: Duration) -> Self {
        self.rtt_sample = sample;
        self.ack_delay = ack_delay;
        self
    }

    /// The packets loss detection declared lost on this ACK, forming
    /// `ranges` discontiguous ranges (1 when unknown).
    #[must_use]
    #[inline]
    pub fn lost(mut self, lost: &'a [LostPacket], ranges: u32) -> Self {
        self.lost = lost;
        self.lost_ranges = ranges.max(1);
        self
    }

    /// Packets newly reported CE-marked.
    #[must_use]
    #[inline]
    pub fn ce(mut self, packets: u64) -> Self {
        self.ce_packets = packets;
        self
    }

    /// Whether this ACK ended the recovery episode the transport tracks.
    #[must_use]
    #[inline]
    pub fn recovery_point(mut self, point: RecoveryPoint) -> Self {
        self.recovery_point = point;
        self
    }

    /// Whether this ACK proves the last reduction spurious.
    #[must_use]
    #[inline]
    pub fn spurious_loss(mut self, spurious: bool) -> Self {
        self.spurious_loss = spurious;
        self
    }

    /// Whether this ACK's losses establish persistent congestion.
    #[must_use]
    #[inline]
    pub fn persistent_congestion(mut self, persistent: bool) -> Self {
        self.persistent_congestion = persistent;
        self
    }

    /// Whether the application was limiting the rate when the ACK arrived.
    #[must_use]
    #[inline]
    pub fn app_limited(mut self, app_limited: bool) -> Self {
        self.app_limited = app_limited;
        self
    }
}
