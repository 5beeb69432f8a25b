//! # link: one model of a network path direction
//!
//! bbrlab's simulator and its userspace emulator must mean the same thing
//! by "10 Mbit/s, 40 ms, 100-packet buffer, 1 % loss". This crate is that
//! meaning, written once. A [`Direction`] answers one question per packet:
//! *a packet of B bytes arrives at time t: when does it leave the
//! bottleneck and reach the far end, or is it dropped, and why?*
//!
//! The features, each selectable per direction:
//! - **rate**: constant, a step schedule, a square wave, or a mahimahi
//!   packet-delivery trace;
//! - **propagation delay**;
//! - **queue**: drop-tail in packets or bytes, with CoDel (RFC 8289) or a
//!   step on the sojourn time as AQM, either of which can mark ECN-capable
//!   packets CE instead of dropping them (RFC 3168; see [`Ecn`]);
//!   or one of the disciplines that decide at dequeue: FQ-CoDel
//!   (RFC 8290), PIE (RFC 8033) and DualPI2 (RFC 9332), see [`sched`];
//! - **random loss**: Bernoulli or Gilbert–Elliott bursts;
//! - **delay jitter**: Normal (truncated at a floor) or Uniform, with or
//!   without reordering;
//! - **a token-bucket policer**;
//! - **aggregation**: packets held and released in bursts, every N ms or
//!   every K packets, as Wi-Fi and cable do to ACKs.
//!
//! The model has no clock and no event loop: time is passed in, and because
//! the queue is FIFO with a schedule known in advance, every packet's fate
//! is decided when it arrives. The dequeue-time disciplines are the
//! exception: their packets come back [`Verdict::Queued`], and the driver
//! collects their fates with [`Direction::release_due`] at the times
//! [`Direction::next_release_ns`] names. Runs are deterministic for a
//! given seed.
//!
//! # Example
//!
//! A direction as a scenario's `[link.forward]` table writes it (here read
//! with the `toml` crate; [`DirectionConfig`] is plain serde): 10 Mbit/s,
//! 20 ms of delay and a 4-packet drop-tail queue. Six 1500-byte packets
//! arrive at once.
//!
//! ```
//! use link::{Direction, DirectionConfig, DropReason, Verdict};
//! use std::path::Path;
//!
//! let text = r#"
//!     rate = "10mbit"
//!     delay = "20ms"
//!     queue = { limit = "4pkt" }
//! "#;
//! let cfg: DirectionConfig = toml::from_str(text).unwrap();
//! // Resolving checks the whole table and loads trace files relative to
//! // the scenario's directory.
//! let mut forward = Direction::new(&cfg.resolve(Path::new("."))?, 1);
//!
//! let verdicts: Vec<Verdict> = (0..6).map(|_| forward.enqueue(0, 1500)).collect();
//! // Each packet takes 1.2 ms to serialise at 10 Mbit/s, then 20 ms to
//! // cross: the fourth leaves the queue after four serialisations.
//! let Verdict::Deliver { dequeue_ns, arrive_ns, .. } = verdicts[3] else {
//!     panic!("{:?}", verdicts[3]);
//! };
//! assert_eq!((dequeue_ns, arrive_ns), (4_800_000, 24_800_000));
//! // The queue holds four, so the last two are dropped.
//! for v in &verdicts[4..] {
//!     assert!(matches!(v, Verdict::Drop { reason: DropReason::QueueFull, .. }));
//! }
//! assert_eq!(forward.stats().dropped_total(), 2);
//! # Ok::<(), link::LinkError>(())
//! ```

#![warn(missing_docs)]

mod codel;
pub mod config;
pub mod delay_schedule;
pub mod direction;
mod drop_reason;
pub mod fifo;
pub mod sched;
pub mod units;

pub use config::{
    AggregationConfig, Aqm, DirectionConfig, Discipline, JitterConfig, JitterDist, LinkError,
    LossConfig, QueueConfig, RateConfig, RateSchedule, ResolvedDirection,
};
/// The ECN codepoint, shared with every other layer.
pub use congestion::Ecn;
pub use delay_schedule::{DelaySchedule, DelayShape, ScheduledDelay};
pub use direction::{Direction, DirectionStats, DropReason, QueueState, Release, Verdict};
pub use sched::fq_codel_bucket;
