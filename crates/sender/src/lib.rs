//! # sender: bbrlab's one reliability layer
//!
//! The simulator (`netsim`) and the UDP transport run this same code
//! around a `congestion::Controller`, so a difference between a simulated
//! and a real run is the network's, not a second implementation's. Like
//! `congestion`, it does no I/O and reads no clock: every call takes the
//! time as a value in nanoseconds.
//!
//! - [`Sender`]: the send window, loss detection (RACK-style, with Linux's
//!   reordering handling), recovery episodes, spurious-loss undo, the
//!   retransmission and probe timers, and pacing decisions.
//! - [`Receiver`]: which packets arrived, unique bytes delivered, and when
//!   to acknowledge (every packet, or Linux-like delayed ACKs).
//! - [`LogHistogram`] and [`ModeTimes`]: constant-memory RTT percentiles
//!   and time per controller mode, reported the same way by every source.

mod app;
pub mod config;
pub mod histogram;
pub mod mode_times;
pub mod receiver;
pub mod schema;
pub mod sender;

pub use config::{AckPolicy, App, CustomCc, LossDetection, Pacing, SenderConfig, Timeout};
pub use histogram::LogHistogram;
pub use mode_times::ModeTimes;
pub use receiver::{Ack, AckAction, Receiver, ACK_RANGES};
pub use sender::{SendDecision, Sender};
