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
//! - **queue**: drop-tail in packets or bytes, or CoDel (RFC 8289);
//! - **random loss**: Bernoulli or Gilbert–Elliott bursts;
//! - **delay jitter**: Normal (truncated at a floor) or Uniform, with or
//!   without reordering;
//! - **a token-bucket policer**;
//! - **aggregation**: packets held and released in bursts, every N ms or
//!   every K packets, as Wi-Fi and cable do to ACKs.
//!
//! The model has no clock and no event loop: time is passed in, and because
//! the queue is FIFO with a schedule known in advance, every packet's fate
//! is decided when it arrives. Runs are deterministic for a given seed.

#![warn(missing_docs)]

pub mod config;
pub mod direction;
pub mod units;

pub use config::{
    AggregationConfig, DirectionConfig, JitterConfig, JitterDist, LinkError, LossConfig,
    QueueConfig, RateConfig, RateSchedule, ResolvedDirection,
};
pub use direction::{Direction, DirectionStats, DropReason, QueueState, Release, Verdict};
