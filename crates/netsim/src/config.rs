//! What a simulation is made of: one path (a forward and a reverse link
//! direction, shared by every flow, plus any hops in series of a
//! [`Topology`]) and the flows that cross it, each maybe through its own
//! access links.
//!
//! These are plain values. The `bbrlab` binary builds them from scenario
//! files; tests build them directly.

use congestion::Config as CcConfig;
use link::{DelaySchedule, ResolvedDirection};
pub use sender::{
    AckPolicy, App, CustomCc, Ecn, EcnFeedback, LossDetection, MssChange, Pacing, SenderConfig,
    Timeout,
};

/// One flow.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// Label used in outputs.
    pub name: String,
    /// Congestion controller and its switches.
    pub cc: CcConfig,
    /// When the flow starts sending.
    pub start_ns: u64,
    /// When it stops offering new data (it still finishes retransmissions).
    pub stop_ns: Option<u64>,
    /// Total bytes to transfer; `None` for unlimited.
    pub size_bytes: Option<u64>,
    /// Extra round-trip propagation delay for this flow only (its access
    /// path), so flows can have different RTTs over one bottleneck.
    pub extra_rtt_ns: u64,
    /// The application pattern.
    pub app: App,
    /// The receiver's ACK policy.
    pub ack: AckPolicy,
    /// How the pacer releases packets.
    pub pacing: Pacing,
    /// Linux's TSO deferral (scenario `tso_defer`;
    /// [`sender::SenderConfig::tso_defer`]).
    pub tso_defer: bool,
    /// How many of the flow's first packets leave back to back before
    /// pacing starts (scenario `initial_burst`; Linux TCP: 10;
    /// [`sender::SenderConfig::initial_burst_packets`]).
    pub initial_burst_packets: u32,
    /// A change of the segment size while the flow runs (sender's
    /// [`sender::MssChange`]); `None` keeps `cc.mss_bytes`.
    pub mss_change: Option<sender::MssChange>,
    /// What the sender does when ACKs stop coming.
    pub timeout: Timeout,
    /// How the sender detects losses (Linux TCP's or QUIC 2018's).
    pub loss_detection: LossDetection,
    /// A user's congestion control to run instead of `cc.algorithm`.
    pub custom_cc: Option<CustomCc>,
    /// Protocol header bytes each data packet carries besides its payload
    /// (IPv4 + TCP with timestamps is 20 + 20 + 12 = 52). The link is
    /// charged payload + header bytes, while only payload counts as
    /// delivered, so a simulated flow can be compared with a real one whose
    /// goodput pays for its headers. 0, the default, makes every packet all
    /// payload, which is how every published claim was calibrated.
    pub header_bytes: u32,
    /// TCP's timestamp option as Linux uses it, at the sender and the
    /// receiver ([`sender::SenderConfig::timestamps`]); off by default.
    pub timestamps: bool,
    /// The ECN codepoint of the flow's data packets: [`Ecn::NotEct`] (the
    /// default) for none, [`Ecn::Ect0`] (scenario `ecn = true`) or
    /// [`Ecn::Ect1`] to make them ECN-capable. Feedback follows the ACK
    /// policy: TCP's ECE/CWR under [`AckPolicy::Linux`], QUIC's counts
    /// otherwise. ACKs are never ECN-capable.
    pub ecn: Ecn,
    /// The flow's own access link for its data, crossed before the first
    /// bottleneck hop; `None` sends straight into the bottleneck.
    pub access_forward: Option<Segment>,
    /// The flow's own access link for its ACKs, crossed after the shared
    /// reverse direction; `None` hands ACKs straight to the sender.
    pub access_reverse: Option<Segment>,
    /// The bottleneck hops the flow's data crosses, `(first, last)`
    /// inclusive, indices into [`SimConfig::forward`] (hop 0) followed by
    /// [`Topology::hops`]; `None` crosses every hop.
    pub hops: Option<(usize, usize)>,
    /// Whether the flow opens its connection before its data.
    pub handshake: Handshake,
}

/// How a flow opens its connection (`handshake` in a scenario).
///
/// Why model it: Linux builds its congestion controller when the SYN
/// exchange ends, from that exchange's RTT (`tcp_init_transfer()`, then
/// BBR's `bbr_init()` takes min_rtt from it and paces its first flight
/// at 2.89 × 10 packets per handshake RTT). Without a handshake the first
/// RTT sample comes from the first data packet, whose serialization a
/// slow link adds to it: 6 ms on 2 Mbit/s, which a BBR flow then keeps in
/// min_rtt, and so in its window, for ten seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Handshake {
    /// Data from the flow's start; the first RTT sample is the first
    /// data packet's (the default).
    #[default]
    None,
    /// TCP's SYN exchange: a SYN of 60 bytes (IPv4 and TCP with a SYN's
    /// options: MSS, SACK-permitted, timestamps, window scale) crosses the
    /// flow's data path and a SYN-ACK of 60 bytes its ACK path; the
    /// data and the timers start when the SYN-ACK arrives, and the
    /// exchange's RTT seeds the controller
    /// ([`sender::Sender::on_handshake`]). A lost SYN or SYN-ACK is sent
    /// again after 1 s, doubling (Linux's `TCP_TIMEOUT_INIT`).
    Tcp,
}

/// A link direction that is not the shared forward or reverse one: a
/// flow's access link or a bottleneck hop after the first.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// The direction (its `delay_ns` is ignored when `delay_schedule` is set).
    pub direction: ResolvedDirection,
    /// Propagation delay that changes over time, in place of `delay_ns`.
    pub delay_schedule: Option<DelaySchedule>,
}

impl Segment {
    /// A segment with a constant delay.
    pub fn new(direction: ResolvedDirection) -> Self {
        Segment {
            direction,
            delay_schedule: None,
        }
    }
}

/// What a path has besides one forward and one reverse direction: more
/// bottlenecks in series (a parking lot) and delay schedules. The default
/// is today's single path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// Bottleneck hops after [`SimConfig::forward`], in the order data
    /// crosses them: hop 1, hop 2, ... (at most [`MAX_HOPS`] hops in all).
    /// ACKs of every flow come back over the one shared
    /// [`SimConfig::reverse`].
    pub hops: Vec<Segment>,
    /// A delay schedule for [`SimConfig::forward`], in place of its `delay_ns`.
    pub forward_delay_schedule: Option<DelaySchedule>,
    /// A delay schedule for [`SimConfig::reverse`], in place of its `delay_ns`.
    pub reverse_delay_schedule: Option<DelaySchedule>,
}

/// Most forward bottleneck hops a path may have (the first included).
pub const MAX_HOPS: usize = 16;

impl FlowConfig {
    /// The part of the flow the sender itself runs on.
    pub fn sender_config(&self) -> SenderConfig {
        SenderConfig {
            cc: self.cc,
            start_ns: self.start_ns,
            stop_ns: self.stop_ns,
            size_bytes: self.size_bytes,
            app: self.app.clone(),
            pacing: self.pacing,
            initial_burst_packets: self.initial_burst_packets,
            mss_change: self.mss_change,
            timeout: self.timeout,
            tail_loss_probe: true,
            loss_detection: self.loss_detection,
            custom_cc: self.custom_cc.clone(),
            ecn: self.ecn,
            ecn_feedback: match self.ack {
                AckPolicy::Linux { .. } => EcnFeedback::Ece,
                _ => EcnFeedback::Counts,
            },
            tso_defer: self.tso_defer,
            timestamps: self.timestamps,
        }
    }

    /// A bulk flow of `cc` starting at 0 with per-packet ACKs.
    pub fn bulk(name: &str, cc: CcConfig) -> Self {
        FlowConfig {
            name: name.to_string(),
            cc,
            start_ns: 0,
            stop_ns: None,
            size_bytes: None,
            extra_rtt_ns: 0,
            app: App::Bulk,
            ack: AckPolicy::EveryPacket,
            pacing: Pacing::Exact,
            tso_defer: false,
            initial_burst_packets: 0,
            mss_change: None,
            timeout: Timeout::Rto,
            loss_detection: LossDetection::Linux,
            custom_cc: None,
            header_bytes: 0,
            timestamps: false,
            ecn: Ecn::NotEct,
            access_forward: None,
            access_reverse: None,
            hops: None,
            handshake: Handshake::None,
        }
    }
}

/// A whole simulation.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Simulated duration.
    pub duration_ns: u64,
    /// Seed for every random choice (link randomness, BBR's cycle start).
    pub seed: u64,
    /// Data direction (sender → receiver): the bottleneck.
    pub forward: ResolvedDirection,
    /// ACK direction (receiver → sender).
    pub reverse: ResolvedDirection,
    /// The flows.
    pub flows: Vec<FlowConfig>,
    /// Time-series sampling interval (0 disables sampling).
    pub sample_interval_ns: u64,
    /// More bottleneck hops and delay schedules; the default is one path.
    pub topology: Topology,
}
