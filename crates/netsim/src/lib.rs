//! # netsim: bbrlab's packet-level simulator
//!
//! Flows cross one bottleneck path: a forward link direction that carries
//! data and a reverse one that carries ACKs, both modelled by the `link`
//! crate (rate schedules, queues, loss, jitter, policers, ACK aggregation).
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

pub mod config;
pub mod engine;
pub mod event_queue;
pub mod record;
pub mod stats;

pub use config::{
    AckPolicy, App, CustomCc, FlowConfig, LossDetection, Pacing, SenderConfig, SimConfig, Timeout,
};
pub use engine::run;
pub use record::{
    FlowSample, FlowSummary, LinkSample, MemoryRecorder, NoRecorder, Recorder, Summary,
    FLOW_CSV_COUNTER_COLUMNS, FLOW_CSV_HEADER, LINK_CSV_HEADER,
};
/// The reliability layer the simulator runs (shared with the UDP transport).
pub use sender;
