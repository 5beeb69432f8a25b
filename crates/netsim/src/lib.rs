//! # netsim: bbrlab's packet-level simulator
//!
//! Flows cross one bottleneck path: a forward link direction that carries
//! data and a reverse one that carries ACKs, both modelled by the `link`
//! crate (rate schedules, queues, loss, jitter, policers, ACK aggregation).
//! A [`Topology`] adds more forward hops in series (a parking lot, each
//! flow crossing its own run of them), and delay schedules; a flow may
//! have its own access link each way ([`FlowConfig::access_forward`],
//! [`FlowConfig::access_reverse`]), any `link` direction too.
//! Each flow has a sender driven by a `congestion::Controller` (paced
//! exactly, event by event; RACK-style loss detection; an RTO that backs
//! off; retransmission of lost data in new packets) and a receiver that
//! acknowledges every packet or Linux-style delayed ACKs with SACK-like
//! ranges.
//!
//! A run is deterministic: the same [`SimConfig`] (seed included) gives
//! the same samples and summary, bit for bit. Memory is bounded: per-packet
//! state lives only while a packet is in flight, samples stream to a
//! [`Recorder`], and RTT percentiles come from a fixed-size histogram.
//!
//! It exists to reproduce published results quickly and repeatably: the same
//! controllers and the same sender as the UDP transport, over the same
//! link model as the emulator, with nothing left to chance but the seed.
//!
//! # Example
//!
//! The bufferbloat experiment in miniature: one flow for 10 simulated
//! seconds through 10 Mbit/s with a 40 ms round trip and a 1000-packet
//! buffer (1.2 s of queue), once with CUBIC and once with BBR. Both fill
//! the pipe. CUBIC, which backs off only on loss, keeps filling the buffer
//! too: its median RTT is over 300 ms. BBR paces at the bottleneck's rate
//! and keeps its median RTT about 50 ms, near the path's 41.2 ms.
//!
//! ```
//! use congestion::{Algorithm, Config};
//! use link::{QueueConfig, RateSchedule, ResolvedDirection};
//! use netsim::{FlowConfig, NoRecorder, SimConfig};
//!
//! const MS: u64 = 1_000_000;
//! let forward = ResolvedDirection {
//!     rate: RateSchedule::Constant(10e6), // bits/s
//!     delay_ns: 20 * MS,
//!     queue: QueueConfig::drop_tail(link::units::Size::Packets(1000)),
//!     loss: None,
//!     jitter: None,
//!     policer: None,
//!     aggregation: None,
//! };
//! // ACKs come back over an uncongested 20 ms.
//! let reverse = ResolvedDirection { rate: RateSchedule::Unlimited, ..forward.clone() };
//! let run = |algorithm| {
//!     let cfg = SimConfig {
//!         duration_ns: 10_000 * MS,
//!         seed: 1,
//!         forward: forward.clone(),
//!         reverse: reverse.clone(),
//!         flows: vec![FlowConfig::bulk("f", Config::new(algorithm))],
//!         sample_interval_ns: 0,
//!         topology: Default::default(),
//!     };
//!     netsim::run(&cfg, &mut NoRecorder).unwrap().flows.remove(0)
//! };
//! let (cubic, bbr) = (run(Algorithm::Cubic), run(Algorithm::Bbr));
//! for f in [&cubic, &bbr] {
//!     assert!(f.goodput_bps > 8.5e6, "{}: {} bit/s", f.algorithm, f.goodput_bps);
//! }
//! let (cubic_rtt, bbr_rtt) = (cubic.rtt_median_ms.unwrap(), bbr.rtt_median_ms.unwrap());
//! assert!(cubic_rtt > 250.0, "CUBIC's median RTT {cubic_rtt} ms");
//! assert!(bbr_rtt < 70.0, "BBR's median RTT {bbr_rtt} ms");
//! ```

pub mod cells;
pub mod config;
pub mod engine;
pub mod event_queue;
pub mod model;
pub mod packet_log;
pub mod record;
pub mod stats;
pub mod workload;

pub use config::{
    AckPolicy, App, CustomCc, Ecn, EcnFeedback, FlowConfig, Handshake, LossDetection, MssChange,
    Pacing, Segment, SenderConfig, SimConfig, Timeout, Topology, MAX_HOPS,
};
pub use engine::{
    run, run_workload, RunStopped, HEARTBEAT_EVENTS, MAX_EVENTS_AT_ONE_INSTANT, MAX_INFLIGHT_BYTES,
};
pub use model::{ModelSample, MODEL_COLUMNS};
pub use packet_log::{PacketKind, PacketRecord, PACKET_COLUMNS};
pub use record::{
    FlowSample, FlowSummary, HandshakeRecord, HopSummary, LinkSample, MemoryRecorder, NoRecorder,
    PacketMemory, Recorder, Summary, TimestampRecord,
};
/// The reliability layer the simulator runs (shared with the UDP transport).
pub use sender;
/// The header line of `link.csv`, from the one time-series schema
/// (`sender::schema`); kept here for the users that name it by this path.
pub use sender::schema::LINK_CSV_HEADER;
pub use workload::{
    ArrivalProcess, Arrivals, CrossKind, CrossSummary, CrossTraffic, EmpiricalCdf, FctBucket,
    FctRecord, FctSummary, Periods, SizeDist, Workload, FCT_COLUMNS,
};
