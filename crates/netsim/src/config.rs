//! What a simulation is made of: one path (a forward and a reverse link
//! direction, shared by every flow) and the flows that cross it.
//!
//! These are plain values. The `bbrlab` binary builds them from scenario
//! files; tests build them directly.

use congestion::Config as CcConfig;
use link::ResolvedDirection;

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
    /// Offers `bytes` at once every `every_ns` (video-chunk-like).
    Chunks {
        /// Size of each chunk.
        bytes: u64,
        /// Period between chunks.
        every_ns: u64,
    },
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
}

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
    /// What the sender does when ACKs stop coming.
    pub timeout: Timeout,
}

/// The sender's timeout when ACKs stop: TCP's or QUIC's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timeout {
    /// TCP's retransmission timeout (RFC 6298, Linux's 200 ms floor):
    /// everything outstanding is declared lost and the controller is told
    /// (cwnd collapses to one packet's worth). The simulator's default,
    /// since it models TCP.
    #[default]
    Rto,
    /// QUIC's probe timeout (RFC 9002 §6.2): when it fires, up to two probe
    /// packets go out regardless of cwnd and nothing is declared lost; the
    /// timeout doubles each time. cwnd collapses only on persistent
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
    /// one timer wake and one GSO system call carry a whole quantum.
    Quantum,
}

impl FlowConfig {
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
            timeout: Timeout::Rto,
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
}
