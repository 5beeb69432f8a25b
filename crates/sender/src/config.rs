//! What a sender is told about its flow: the controller, the data the
//! application offers, the pacer and the timeout. Plain values, so the
//! simulator and the UDP transport configure one sender type the same way.

use crate::ecn::{Ecn, EcnFeedback};
use congestion::{Config as CcConfig, CongestionControl, Instant};
use std::fmt;
use std::sync::Arc;

/// Builds one instance of a user's congestion control for a flow.
type BuildCc = dyn Fn(&CcConfig, Instant) -> Box<dyn CongestionControl + Send + Sync> + Send + Sync;

/// A user's congestion control, for the simulator and the transport: a
/// name for outputs and a constructor called once per flow (so every flow
/// and every sweep run gets its own state), given the flow's
/// [`CcConfig`] (MSS, initial window, seed) and its start time.
///
/// A scenario that names a QUIC stack's controller (`s2n:bbr2`) makes one
/// by name only ([`CustomCc::named`]): the scenario parser does not link
/// the stacks. Whoever runs the flow attaches the constructor first
/// (bbrlab's runner does, from the `quic-controllers` crate); the
/// simulator refuses a flow whose controller has none
/// ([`CustomCc::is_built`]).
#[derive(Clone)]
pub struct CustomCc {
    /// The name summaries and logs show for the flow's algorithm.
    pub name: String,
    build: Option<Arc<BuildCc>>,
}

impl CustomCc {
    /// A custom algorithm named `name`, built by `build`.
    pub fn new(
        name: &str,
        build: impl Fn(&CcConfig, Instant) -> Box<dyn CongestionControl + Send + Sync>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        CustomCc {
            name: name.to_string(),
            build: Some(Arc::new(build)),
        }
    }

    /// An algorithm known so far only by its name, whose constructor the
    /// caller attaches before the flow runs ([`CustomCc::new`] with the
    /// same name).
    pub fn named(name: &str) -> Self {
        CustomCc {
            name: name.to_string(),
            build: None,
        }
    }

    /// Whether it has a constructor (a [`CustomCc::named`] one has none
    /// until replaced).
    pub fn is_built(&self) -> bool {
        self.build.is_some()
    }

    /// One instance for a flow; `None` for a [`CustomCc::named`] one.
    pub fn build(
        &self,
        cc: &CcConfig,
        now: Instant,
    ) -> Option<Box<dyn CongestionControl + Send + Sync>> {
        self.build.as_ref().map(|b| b(cc, now))
    }

    /// Why a flow with this controller cannot run yet, if it cannot.
    pub fn unbuilt_error(&self) -> Option<String> {
        (!self.is_built()).then(|| {
            format!(
                "the flow's controller `{}` is known only by name: attach its constructor \
                 (CustomCc::new) before running it (bbrlab's runner does this for the QUIC \
                 stacks' controllers)",
                self.name
            )
        })
    }
}

impl fmt::Debug for CustomCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomCc({})", self.name)
    }
}

/// How a flow's application offers data.
#[derive(Clone, Debug, PartialEq)]
pub enum App {
    /// Always has data (until `size_bytes`, if set).
    Bulk,
    /// Offers data at a constant rate: the flow is app-limited whenever the
    /// path could carry more, which exercises BBR's app-limited logic.
    Rate {
        /// Offered load, bytes per second.
        bytes_per_sec: f64,
    },
    /// Always has data for `after_ns` from the flow's start, then offers
    /// `bytes_per_sec`: a bulk flow that turns app-limited, so BBR meets
    /// app-limited samples with its model already at the path's rate
    /// (draft-ietf-ccwg-bbr-06 Appendix A.22, app-limited REFILL).
    BulkThenRate {
        /// How long the flow is bulk, from its start.
        after_ns: u64,
        /// Offered load from then on, bytes per second.
        bytes_per_sec: f64,
    },
    /// Offers `bytes` at once every `every_ns` (video-chunk-like).
    Chunks {
        /// Size of each chunk.
        bytes: u64,
        /// Period between chunks.
        every_ns: u64,
    },
}

/// How Linux's receiver raises its window's clamp from what the
/// application read (`tcp_rcv_space_adjust()`, "dynamic right-sizing"),
/// which decides how long its window grows and so how often it
/// acknowledges each segment at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RcvAutotuning {
    /// Twice what was read in the last receiver round trip plus 16
    /// segments, and twice its growth on top of that, measured over the
    /// sender's smoothed RTT: the rule of Linux before 6.16, and the one
    /// the simulator's fidelity tests are matched with. The default.
    #[default]
    Cushioned,
    /// Linux 6.16 and later (`tcp_rcvbuf_grow()`, "tcp: fix sk_rcvbuf
    /// overshoot"): twice what was read plus four times its growth
    /// relative to the round trip before, plus the span held above a
    /// hole, which out-of-order data also raises the clamp by; measured
    /// over the receiver's own RTT estimate, which takes a smaller
    /// sample at once and a larger one an eighth of the way
    /// (`tcp_rcv_rtt_update()`), starting from the handshake's. Kernel
    /// 6.18's `tcp:tcp_rcvbuf_grow` tracepoint reads every clamp it set
    /// to within a few bytes of this rule.
    Linux6_16,
}

/// When the receiver acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// An ACK for every data packet.
    EveryPacket,
    /// Linux-like delayed ACKs: every `max_packets` packets or after
    /// `max_delay_ns`, and immediately on out-of-order arrival.
    Delayed {
        /// Packets per ACK (2 in Linux).
        max_packets: u32,
        /// Delayed-ACK timer (40 ms minimum in Linux).
        max_delay_ns: u64,
    },
    /// Linux's receiver, to compare with kernel TCP: quick ACKs for the
    /// first packets and for every in-order segment that raises the
    /// receive window (`tcp_grow_window()`; the window follows what the
    /// application reads, see `rcv_window.rs`), then an ACK for every
    /// second full segment or after the delayed-ACK timer
    /// (`__tcp_ack_snd_check()`, `tcp_send_delayed_ack()`); an immediate
    /// ACK when a hole is filled;
    /// for out-of-order data, three immediate duplicate ACKs per in-order
    /// point and then SACK compression, holding further ACKs for up to
    /// `comp_sack_max` packets or a timer of 5 % of the receiver's RTT, at
    /// most `comp_sack_delay_ns`, plus `comp_sack_slack_ns`
    /// (`__tcp_ack_snd_check()`).
    Linux {
        /// Packets acknowledged at once at the start (`TCP_MAX_QUICKACKS`, 16).
        quickacks: u32,
        /// Delayed-ACK timer (`TCP_ATO_MIN`, 40 ms).
        max_delay_ns: u64,
        /// SACK compression delay (`net.ipv4.tcp_comp_sack_delay_ns`, 1 ms).
        comp_sack_delay_ns: u64,
        /// The compression timer's slack (`net.ipv4.tcp_comp_sack_slack_ns`,
        /// 100 µs up to Linux 6.18). Linux arms the timer as an hrtimer
        /// with this range, which fires at the range's end unless another
        /// timer interrupt comes first; so the model adds it whole. On the
        /// emulator's log (kernel 6.18, 40-90 ms paths) the compressed
        /// ACKs left the receiver 1.10-1.13 ms after the first segment
        /// they held, not 1.0.
        comp_sack_slack_ns: u64,
        /// SACKs compressed into one at most (`net.ipv4.tcp_comp_sack_nr`, 44).
        comp_sack_max: u32,
        /// The receive window's first clamp, bytes: `net.ipv4.tcp_rmem[1]`
        /// (131,072) at the window share of a segment's buffer memory
        /// (0.625 on the kernel traced: `scaling_ratio` 160/256), 81,920.
        rcv_window_init: u64,
        /// The most the window may grow to, bytes: `tcp_rmem[2]` (32 MiB
        /// since Linux 6.16) at the same share, 20,971,520.
        rcv_window_max: u64,
        /// How the window's clamp follows the application's reads.
        autotuning: RcvAutotuning,
    },
    /// Chromium QUIC's ACK decimation, the `ACKD` connection option of
    /// its 2018 stack (`QuicConnection::SetFromConfig()` sets
    /// `ack_mode_ = ACK_DECIMATION`; the rule is in
    /// `QuicConnection::MaybeQueueAck()`): the first `after_packets`
    /// packets are acknowledged TCP-style (every second packet, or after
    /// `max_delay_ns`); from then on one ACK per `max_packets` packets, or
    /// when a timer of min(`max_delay_ns`, min_rtt / `min_rtt_divisor`)
    /// started by the first unacknowledged packet fires, whichever comes
    /// first. Out-of-order packets are acknowledged at once, as in plain
    /// `ACK_DECIMATION` mode (not `AKD2`'s reordering-tolerant one).
    ///
    /// The receiver's min_rtt is its own RTT statistics' in Chromium
    /// (`RttStats::min_rtt()`, from its handshake and the pings it bundles
    /// into its ACK-only packets); a model gives it with
    /// [`crate::Receiver::set_min_rtt_ns`] (the simulator passes the
    /// sender's, measured on the same path). Until it has one the timer is
    /// `max_delay_ns`. [`AckPolicy::CHROMIUM_ACK_DECIMATION`] has the 2018
    /// constants.
    Decimated {
        /// Packets received before decimation starts
        /// (`kMinReceivedBeforeAckDecimation` = 100, "to avoid the
        /// beginning of slow start").
        after_packets: u64,
        /// Packets per ACK while decimating
        /// (`kMaxRetransmittablePacketsBeforeAck` = 10).
        max_packets: u32,
        /// The timer is min_rtt / this (`kAckDecimationDelay` = 0.25, so 4;
        /// `AKD3`'s `kShortAckDecimationDelay` = 0.125 would be 8).
        min_rtt_divisor: u32,
        /// The delayed-ACK timer and the timer's cap
        /// (`kDefaultDelayedAckTimeMs` = 25 ms).
        max_delay_ns: u64,
    },
}

impl AckPolicy {
    /// Linux's defaults for [`AckPolicy::Linux`].
    pub const LINUX: AckPolicy = AckPolicy::Linux {
        quickacks: 16,
        max_delay_ns: 40_000_000,
        comp_sack_delay_ns: 1_000_000,
        comp_sack_slack_ns: 100_000,
        comp_sack_max: 44,
        rcv_window_init: 81_920,
        rcv_window_max: 20_971_520,
        autotuning: RcvAutotuning::Cushioned,
    };

    /// Chromium QUIC's ACK decimation with its 2018 constants
    /// (`quic_connection.cc`): 100 packets first, then up to 10 packets
    /// per ACK or a quarter of min_rtt, at most 25 ms.
    pub const CHROMIUM_ACK_DECIMATION: AckPolicy = AckPolicy::Decimated {
        after_packets: 100,
        max_packets: 10,
        min_rtt_divisor: 4,
        max_delay_ns: 25_000_000,
    };
}

/// One flow as the sender sees it. The simulator's and the transport's
/// flow descriptions carry more (labels, access delays, sockets); they hand
/// the sender this part.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Congestion controller and its switches.
    pub cc: CcConfig,
    /// When the flow starts sending.
    pub start_ns: u64,
    /// When it stops offering new data (it still finishes retransmissions).
    pub stop_ns: Option<u64>,
    /// Total bytes to transfer; `None` for unlimited.
    pub size_bytes: Option<u64>,
    /// The application pattern.
    pub app: App,
    /// How the pacer releases packets.
    pub pacing: Pacing,
    /// How many of the flow's first packets may leave back to back, before
    /// the pacer charges any of them its time at the pacing rate. Linux TCP
    /// charges pacing time only once ten data segments have gone out
    /// (`tcp_update_skb_after_send()`, after sch_fq, which gives a new flow
    /// a first quantum of ten packets), so its initial window leaves as one
    /// burst; BBR's first round of delivery-rate samples, and so where
    /// STARTUP's rounds fall, follow from that burst. 0 or 1 (the default
    /// is 0) paces from the first packet.
    pub initial_burst_packets: u32,
    /// What the sender does when ACKs stop coming.
    pub timeout: Timeout,
    /// Tail-loss probes (RFC 8985 §7), on in Linux by default: after about
    /// two RTTs without an ACK, one packet goes out to draw an ACK that
    /// lets RACK find a lost tail, instead of waiting for the RTO. Only
    /// with [`Timeout::Rto`]; QUIC's PTO already is such a probe.
    pub tail_loss_probe: bool,
    /// How losses are detected, and whether spurious ones are undone.
    pub loss_detection: LossDetection,
    /// A user's congestion control to run instead of `cc.algorithm`
    /// (`cc` still supplies the MSS, initial window and seed).
    pub custom_cc: Option<CustomCc>,
    /// The ECN codepoint data packets carry: [`Ecn::NotEct`] (the default)
    /// leaves ECN off; [`Ecn::Ect0`] or [`Ecn::Ect1`] makes them
    /// ECN-capable, so a marking queue marks them CE instead of dropping.
    pub ecn: Ecn,
    /// How CE marks come back: QUIC's counts or TCP's ECE flag.
    pub ecn_feedback: EcnFeedback,
    /// A change of the segment size while the flow runs (path MTU
    /// discovery raising it, or a route with a smaller MTU lowering it);
    /// `None` keeps `cc.mss_bytes` throughout.
    pub mss_change: Option<MssChange>,
    /// Linux's TSO deferral (`tcp_tso_should_defer()`): a TCP sender
    /// whose window has room for only part of its next TSO packet waits
    /// for the ACK due within a millisecond instead of sending the part.
    /// Only with [`Timeout::Rto`] and [`Pacing::Quantum`] or
    /// [`Pacing::Off`], which send TSO packets; off by default.
    pub tso_defer: bool,
    /// TCP's timestamp option as Linux uses it (RFC 7323; on in Linux by
    /// default, off here by default so that earlier results stand):
    ///
    /// - an ACK echoes the timestamp of the segment at the point last
    ///   acknowledged ([`crate::Ack::ts_echo_ms`]), and the receiver
    ///   discards a segment whose timestamp is older (PAWS), which the
    ///   simulator applies when it passes each segment's timestamp;
    /// - a recovery is undone when an echo shows that an original, not a
    ///   repair, filled the hole, before the recovery point too (Linux's
    ///   partial undo);
    /// - the RTT is sampled as Linux samples it: from the oldest packet an
    ///   ACK newly acknowledges that was never retransmitted, else from
    ///   the echo when the cumulative point moved.
    ///
    /// With it, also a rule that belongs to TCP whether or not it uses
    /// timestamps, kept under the same switch because its effect was
    /// measured together with the rest (Notes on fidelity, "Recoveries
    /// under heavy reordering"): a cumulative ACK acknowledges a
    /// retransmission still in flight whose data it covers, as TCP's
    /// segment is one however often it was sent.
    ///
    /// Only with [`LossDetection::Linux`].
    pub timestamps: bool,
}

/// The segment size changes at `at_ns` to `mss` bytes: data not yet sent
/// then goes in segments of the new size (what was sent keeps its size,
/// retransmissions included, as TCP resends a segment whole), and the
/// controller is told (`on_mss_change`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MssChange {
    /// When, in simulated (or transport) nanoseconds.
    pub at_ns: u64,
    /// The new segment size, bytes (at least 1).
    pub mss: u64,
}

/// How the sender decides a packet is lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossDetection {
    /// Linux TCP: three packets or RACK's time threshold, time alone once
    /// reordering was seen, an adaptive reordering window, and undo of
    /// spurious reductions (DSACK, late ACKs, F-RTO). The default.
    #[default]
    Linux,
    /// Chromium QUIC's loss detection of 2018 (`GeneralLossAlgorithm`,
    /// type `kNack`), the stack of seed 001: a packet is lost once the
    /// largest packet this ACK newly acknowledges is 3 or more above it,
    /// however much reordering was seen; when that largest is the last
    /// packet sent, after 1.25 × max(srtt, latest RTT) (at least 5 ms);
    /// otherwise once it was sent more than srtt before that largest.
    /// Nothing is undone: that stack had no spurious-loss undo.
    Quic2018,
}

impl SenderConfig {
    /// A bulk sender of `cc` starting at 0, paced exactly, with TCP's RTO.
    pub fn bulk(cc: CcConfig) -> Self {
        SenderConfig {
            cc,
            start_ns: 0,
            stop_ns: None,
            size_bytes: None,
            app: App::Bulk,
            pacing: Pacing::Exact,
            initial_burst_packets: 0,
            timeout: Timeout::Rto,
            tail_loss_probe: true,
            loss_detection: LossDetection::Linux,
            custom_cc: None,
            ecn: Ecn::NotEct,
            ecn_feedback: EcnFeedback::Counts,
            mss_change: None,
            tso_defer: false,
            timestamps: false,
        }
    }

    /// Whether the flow keeps TCP timestamps: the switch asked for it and
    /// the stack is Linux's ([`Self::timestamps`]). The one place the rule
    /// lives, so the sender and a simulator's receiver agree.
    pub fn keeps_timestamps(&self) -> bool {
        self.timestamps && self.loss_detection == LossDetection::Linux
    }
}

/// The sender's timeout when ACKs stop: TCP's or QUIC's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timeout {
    /// TCP's retransmission timeout (RFC 6298, Linux's 200 ms floor),
    /// restarted by every ACK of new data: everything outstanding is
    /// declared lost and the controller is told (cwnd collapses to one
    /// packet's worth). The simulator's default, since it models TCP.
    #[default]
    Rto,
    /// QUIC's probe timeout (RFC 9002 §6.2), counted from the last packet
    /// sent (an ACK resets only its backoff): when it fires, up to two
    /// probe packets go out regardless of cwnd and nothing is declared
    /// lost; the timeout doubles each time. cwnd collapses only on persistent
    /// congestion (§7.6: losses spanning three PTOs with no ACK between).
    Pto {
        /// The peer's maximum ACK delay, added to the PTO.
        max_ack_delay_ns: u64,
    },
}

/// How the sender's pacer turns the controller's rate into send times.
/// Both send at exactly the pacing rate on average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// One packet at a time, each `bytes / rate` after the previous: the
    /// idealised pacer, and the simulator's default.
    #[default]
    Exact,
    /// Bursts of up to the controller's send quantum (about 1 ms of data,
    /// at most 64 KiB), then a pause of the burst's length at the rate, as
    /// Linux's fq releases TSO super-packets. A real sender needs this so
    /// one timer wake and one GSO system call carry a whole quantum. A
    /// burst that leaves late (the flow waited on its window, or woke
    /// late) is forgiven at most half its length, as Linux charges a TSO
    /// packet (`tcp_update_skb_after_send()`): one burst leaves at once,
    /// never two.
    Quantum,
    /// No pacer: every packet the window allows leaves at once. Linux TCP
    /// sends a loss-based control this way when no fq qdisc is installed,
    /// since it paces internally only for a control that asks
    /// (`tcp_needs_internal_pacing()`, set by BBR), so each ACK of slow
    /// start releases a burst at the host's speed. A competing flow's
    /// RTT samples, and so HyStart's exit, see those bursts queue.
    Off,
}
