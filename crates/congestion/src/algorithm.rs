//! What every algorithm implements: the [`CongestionControl`] trait and
//! the events it is told ([`AckContext`], [`RecoveryState`]).
//!
//! It lives apart from [`crate::controller`], which picks and runs an
//! algorithm: the algorithms depend on this interface, the controller on
//! the algorithms, and nothing depends back up.

use crate::delivery_rate::{AckedPacket, DeliveryRateSampler, LostPacket, RateSample};
use crate::rtt_estimator::RttEstimator;
pub use crate::snapshot::RecoveryState;
use crate::snapshot::{Mode, Snapshot};
use crate::time::Instant;
use core::time::Duration;

/// What an algorithm is told about one ACK batch.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AckContext<'a> {
    /// When the ACK arrived.
    pub now: Instant,
    /// The delivery-rate sample for this ACK.
    pub rate: &'a RateSample,
    /// The RTT estimator, already updated with this ACK's sample.
    pub rtt: &'a RttEstimator,
    /// This ACK's RTT sample, if it produced one.
    pub rtt_sample: Option<Duration>,
    /// The smallest of `now − sent time` over every packet this ACK newly
    /// acknowledges (QUIC's BBR takes min_rtt from these; see
    /// [`crate::MinRttSamples::AllAcked`]). Meaningful only where packet
    /// numbers are never reused.
    pub min_acked_rtt: Option<Duration>,
    /// When the newest packet this ACK newly acknowledges was sent.
    pub newest_acked_sent: Option<Instant>,
    /// The ACK delay the receiver reported (zero: not delayed). QUIC's
    /// meaning (RFC 9000 §19.3): the RTT estimator subtracts it; BBR's
    /// min_rtt rules do not read it (see [`AckContext::ack_maybe_delayed`]).
    pub ack_delay: Duration,
    /// Whether this ACK's RTT sample may be inflated by the receiver's
    /// delayed-ACK timer, so that BBR must not let it replace an expired
    /// min_rtt. Linux marks only a lone runt: the ACK newly delivers one
    /// packet, smaller than an MSS, and reports no CE
    /// (`FLAG_ACK_MAYBE_DELAYED` in `tcp_clean_rtx_queue()`, read as
    /// `rs->is_ack_delayed` by `bbr_update_min_rtt()`). A full-sized
    /// packet's ACK is not suspect, since a receiver ACKs every second
    /// full segment at once; nor is any ACK of several packets. Taking a
    /// non-zero `ack_delay` as "delayed" instead marks nearly every ACK
    /// of a receiver that delays ACKs, so an expired min_rtt is never
    /// refreshed while another flow keeps a queue standing.
    pub ack_maybe_delayed: bool,
    /// Bytes in flight after this ACK (acked and lost packets removed).
    pub bytes_in_flight: u64,
    /// Total bytes delivered so far, this ACK included.
    pub delivered_bytes: u64,
    /// Total bytes declared lost so far.
    pub lost_bytes: u64,
    /// The recovery state after this ACK.
    pub recovery: RecoveryState,
    /// When the pacer will next let a packet leave, if the transport said
    /// (Linux `tcp_wstamp_ns`, the earliest departure time). BBR uses it to
    /// count what will still be in the network by then
    /// (`bbr_packets_in_net_at_edt()`).
    pub next_departure: Option<Instant>,
    /// Bytes the pacer releases at that time (one packet, or a send
    /// quantum for a bursting pacer): Linux's TSO burst, `bbr_tso_segs_goal()`.
    pub next_burst_bytes: u64,
    /// Packets this ACK newly acknowledges. With [`AckContext::ce_packets`]
    /// it gives the CE fraction BBRv3 steers by (Linux v3 counts
    /// `rs->delivered_ce` against `rs->delivered`, both in packets).
    pub acked_packets: u64,
    /// Packets this ACK newly reports as CE-marked (QUIC: the increase of
    /// the ACK frame's ECN-CE count, RFC 9000 §13.4.2; TCP with classic
    /// ECN: the packets an ACK carrying ECE acknowledges, as Linux's
    /// `tcp_count_delivered()` counts them). Zero without ECN.
    pub ce_packets: u64,
}

impl<'a> AckContext<'a> {
    /// A context for an ACK at `now` with this rate sample and RTT
    /// estimator, and nothing else: no RTT sample, nothing in flight,
    /// nothing acknowledged, the open state. For an algorithm's own unit
    /// tests (a [`Controller`](crate::Controller) builds the real ones);
    /// set the fields a test needs on the value.
    pub fn new(now: Instant, rate: &'a RateSample, rtt: &'a RttEstimator) -> Self {
        AckContext {
            now,
            rate,
            rtt,
            rtt_sample: None,
            min_acked_rtt: None,
            newest_acked_sent: None,
            ack_delay: Duration::ZERO,
            ack_maybe_delayed: false,
            bytes_in_flight: 0,
            delivered_bytes: 0,
            lost_bytes: 0,
            recovery: RecoveryState::Open,
            next_departure: None,
            next_burst_bytes: 0,
            acked_packets: 0,
            ce_packets: 0,
        }
    }
}

/// What an algorithm is told about packets declared lost.
///
/// BBRv3 needs each lost packet's send-time state (its `tx_in_flight` and
/// the connection's `lost` when it left) to judge the loss rate packet by
/// packet (draft-ietf-ccwg-bbr-06, `BBRHandleLostPacket()`), and how many
/// separate holes the losses make (Startup's high-loss exit counts
/// discontiguous lost ranges); older algorithms only need the total.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct LossContext<'a> {
    /// When the losses were declared.
    pub now: Instant,
    /// The packets declared lost, with their send-time state.
    pub lost: &'a [LostPacket],
    /// The sum of their sizes.
    pub lost_bytes: u64,
    /// How many discontiguous ranges of packet numbers they form (at least
    /// 1). Transports that cannot tell report 1 per call.
    pub lost_ranges: u32,
    /// Bytes in flight, these packets excluded.
    pub bytes_in_flight: u64,
    /// Whether these losses begin a new recovery episode.
    pub new_episode: bool,
    /// Total bytes delivered so far (the draft's `C.delivered`).
    pub delivered_bytes: u64,
    /// Total bytes declared lost so far, these included (the draft's
    /// `C.lost`).
    pub total_lost_bytes: u64,
}

impl<'a> LossContext<'a> {
    /// A context for `lost`, declared at `now`, as one range beginning a
    /// new episode with nothing else in flight. For an algorithm's own
    /// unit tests; set the fields a test needs on the value.
    pub fn new(now: Instant, lost: &'a [LostPacket]) -> Self {
        let lost_bytes = lost.iter().fold(0u64, |a, p| a.saturating_add(p.bytes));
        LossContext {
            now,
            lost,
            lost_bytes,
            lost_ranges: 1,
            bytes_in_flight: 0,
            new_episode: true,
            delivered_bytes: 0,
            total_lost_bytes: lost_bytes,
        }
    }
}

/// The algorithm side of the interface.
///
/// [`Controller`](crate::controller::Controller) calls these; transports normally use [`Controller`](crate::controller::Controller) rather
/// than an algorithm directly, so they get the shared sampler and recovery
/// tracking for free. The trait is public so that researchers can add an
/// algorithm and run it everywhere bbrlab runs one.
pub trait CongestionControl {
    /// A packet was sent. `in_flight_before` excludes it.
    fn on_packet_sent(&mut self, _now: Instant, _bytes: u64, _in_flight_before: u64) {}

    /// The sender had data to send and held it for want of window,
    /// sending nothing, with `in_flight` bytes out (a TCP sender waiting
    /// for an ACK to open a whole TSO packet's room, Linux's
    /// `tcp_tso_should_defer()`). The window counts as used, as Linux's
    /// `is_cwnd_limited` does; an algorithm that reads no such fact
    /// ignores it.
    fn on_held_by_cwnd(&mut self, _now: Instant, _in_flight: u64) {}

    /// The first send after an application-limited idle period.
    fn on_restart_from_idle(&mut self, _now: Instant, _rtt: &RttEstimator) {}

    /// A copy of this algorithm with its state, for
    /// [`Controller::try_clone`](crate::Controller::try_clone) (a stack that
    /// clones a connection's controller). `None`, the default, for an
    /// algorithm that cannot be copied; its controller then cannot be
    /// either, and the caller builds a fresh one.
    fn clone_box(&self) -> Option<Box<dyn CongestionControl + Send + Sync>> {
        None
    }

    /// The connection's handshake has ended at `now`, before any data was
    /// sent, and `rtt` holds its RTT sample (TCP's SYN exchange, QUIC's
    /// first flight). Linux builds its controller at this point
    /// (`tcp_init_transfer()`), so an algorithm that reads the RTT at
    /// start (BBR's `bbr_init()`: min_rtt and the initial pacing rate)
    /// starts from it; the default ignores it.
    fn on_handshake_rtt(&mut self, _now: Instant, _rtt: &RttEstimator) {}

    /// The packets an ACK newly acknowledges, each with the state stored
    /// at its send, handed over before anything else of that ACK (before
    /// [`CongestionControl::on_congestion_experienced`] and
    /// [`CongestionControl::on_ack`]). The default ignores them: bbrlab's
    /// algorithms read the ACK through its rate sample. A wrapper around
    /// another stack's controller needs them, because those controllers
    /// keep per-packet state of their own (s2n-quic's `PacketInfo`,
    /// quinn's per-packet `on_ack` and packet numbers) and must be told
    /// which of their packets this ACK covers.
    fn on_packets_acked(&mut self, _now: Instant, _acked: &[AckedPacket]) {}

    /// An ACK batch was processed. The algorithm may mark the sampler
    /// app-limited (BBR does, in PROBE_RTT).
    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler);

    /// Packets were declared lost. `new_episode` is true when this starts a
    /// new recovery episode (at most one window reduction per round trip).
    fn on_packets_lost(
        &mut self,
        now: Instant,
        lost_bytes: u64,
        bytes_in_flight: u64,
        new_episode: bool,
    );

    /// Packets were declared lost, with everything known about them. The
    /// [`Controller`](crate::controller::Controller) calls this; the
    /// default hands the totals to
    /// [`CongestionControl::on_packets_lost`], so an algorithm that needs
    /// no more implements only that.
    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.on_packets_lost(
            loss.now,
            loss.lost_bytes,
            loss.bytes_in_flight,
            loss.new_episode,
        );
    }

    /// An ACK reported `ce_packets` newly CE-marked packets (ECN). Called
    /// before [`CongestionControl::on_ack`] for that ACK. `new_episode` is
    /// true when a response now would begin a new congestion episode (the
    /// newest packet the ACK acknowledges was sent after the current
    /// episode began: RFC 9002 §7.1, at most one reduction per round
    /// trip). Return true if the algorithm reduced its window as for a
    /// loss, so the controller starts an episode; the default ignores CE,
    /// as Linux's BBR v1 does (its `cong_control` bypasses the
    /// CWR window reduction). BBRv3 reads CE from the [`AckContext`]
    /// and returns false; the draft profile's classic response notes
    /// only whether the marks open a new episode.
    fn on_congestion_experienced(
        &mut self,
        _now: Instant,
        _ce_packets: u64,
        _bytes_in_flight: u64,
        _new_episode: bool,
    ) -> bool {
        false
    }

    /// A retransmission timeout fired. `bytes_in_flight` is what is still
    /// out after the timeout's losses (nothing, for a TCP sender that
    /// declares everything outstanding lost).
    fn on_retransmission_timeout(&mut self, now: Instant, bytes_in_flight: u64);

    /// QUIC declared persistent congestion (RFC 9002 §7.6): every packet
    /// sent over a long period was lost, and §7.6.2 requires the window to
    /// fall to the minimum, `min_window` bytes (§7.2's kMinimumWindow, two
    /// datagrams), whatever is still in flight. The default answers as to
    /// a timeout with nothing left in flight; bbrlab's own algorithms
    /// answer so and then set their window to `min_window`.
    fn on_persistent_congestion(&mut self, now: Instant, min_window: u64) {
        let _ = min_window;
        self.on_retransmission_timeout(now, 0);
    }

    /// The transport found that the losses behind the current (or last)
    /// reduction were not losses: the packets were reordered or delayed,
    /// or the timeout fired too early. Undo what the reduction did, as
    /// Linux's `tcp_undo_cwnd_reduction()` calls the algorithm's
    /// `undo_cwnd`. The default keeps the window as it is.
    fn on_spurious_loss(&mut self, _now: Instant) {}

    /// The transport begins processing an ACK: losses it reports from now
    /// until [`CongestionControl::on_ack`] are that ACK's own and are in
    /// its rate sample; earlier ones were found by a timer.
    fn on_ack_begin(&mut self) {}

    /// The segment size changed (PMTU discovery).
    fn on_mss_change(&mut self, mss: u64);

    /// How many bytes may be in flight.
    fn cwnd_bytes(&self) -> u64;

    /// How fast to send, in bytes per second (always ≥ 1).
    fn pacing_rate_bytes_per_sec(&self) -> u64;

    /// How many bytes to release back to back at each pacing opportunity.
    fn send_quantum_bytes(&self) -> u64;

    /// A read-only view of the algorithm's state for plots and logs.
    fn snapshot(&self) -> Snapshot;

    /// The current mode alone. Callers that account time per mode ask on
    /// every ACK, so algorithms override this to skip building a snapshot.
    fn mode(&self) -> Mode {
        self.snapshot().mode
    }

    /// For `bbr-jitter`, whether its BDP is currently built on srtt rather
    /// than min_rtt (seed 001, eq. 10); `None` for controllers without that
    /// rule. Asked on every ACK, like [`CongestionControl::mode`].
    fn using_srtt(&self) -> Option<bool> {
        None
    }

    /// The name logs and summaries show. Built-in algorithms are named by
    /// [`Algorithm::name`](crate::config::Algorithm::name); a user's algorithm should override this.
    fn name(&self) -> &str {
        "custom"
    }
}
