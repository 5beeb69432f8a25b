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
//!   to acknowledge (every packet, or Linux-like delayed ACKs); the ECN
//!   codepoints that arrived, as QUIC's counts and TCP's ECE flag.
//! - [`ecn`]: ECN codepoints, counts and the two feedback schemes.
//! - [`LogHistogram`] and [`ModeTimes`]: constant-memory RTT percentiles
//!   and time per controller mode, reported the same way by every source.
//! - [`schema`]: the one time-series schema, the columns of `flows.csv`
//!   and `link.csv` that every source writes.
//!
//! # Example
//!
//! The whole contract in one loop: a 150 kB BBR flow over a lossless path
//! with 20 ms each way. The caller owns the clock and the wire; the
//! sender says what to send and when ([`Sender::poll`],
//! [`Sender::timer_deadline`]), and the receiver what to acknowledge.
//!
//! ```
//! use congestion::{Algorithm, Config, Instant};
//! use sender::{AckAction, AckPolicy, Receiver, SendDecision, Sender, SenderConfig};
//! use std::collections::VecDeque;
//!
//! const ONE_WAY_NS: u64 = 20_000_000;
//! let mut cfg = SenderConfig::bulk(Config::new(Algorithm::Bbr));
//! cfg.size_bytes = Some(150_000); // 100 packets of 1500 bytes
//! let mut tx = Sender::new(&cfg, 1);
//! let mut rx = Receiver::new(AckPolicy::EveryPacket, Some(100));
//! // What is on the wire, in arrival order (the delay is fixed).
//! let mut data = VecDeque::new(); // (arrival, packet number, chunk, bytes)
//! let mut acks = VecDeque::new(); // (arrival, ack)
//! let mut now = Instant::ZERO;
//! while !tx.is_done() {
//!     // Send all the sender allows now; note when pacing allows more.
//!     let mut next_send = None;
//!     loop {
//!         match tx.poll(now) {
//!             SendDecision::Send { chunk, bytes, retransmission } => {
//!                 let pn = tx.on_sent(now, chunk, bytes, retransmission);
//!                 data.push_back((now.saturating_add_nanos(ONE_WAY_NS), pn, chunk, bytes));
//!             }
//!             SendDecision::PaceUntil(t) => {
//!                 next_send = Some(t);
//!                 break;
//!             }
//!             _ => break, // the window is full, or nothing is left to send
//!         }
//!     }
//!     // Jump to the next event: a send, an arrival or the sender's timer.
//!     let next_data = data.front().map(|d: &(Instant, u64, u64, u32)| d.0);
//!     let next_ack = acks.front().map(|a: &(Instant, sender::Ack)| a.0);
//!     now = [next_send, next_data, next_ack, tx.timer_deadline()]
//!         .into_iter()
//!         .flatten()
//!         .min()
//!         .expect("something is pending until the flow is done");
//!     while data.front().is_some_and(|d| d.0 <= now) {
//!         let (_, pn, chunk, bytes) = data.pop_front().unwrap();
//!         if let AckAction::Send(ack) = rx.on_packet(now, pn, chunk, bytes.into()) {
//!             acks.push_back((now.saturating_add_nanos(ONE_WAY_NS), ack));
//!         }
//!     }
//!     while acks.front().is_some_and(|a| a.0 <= now) {
//!         let (_, ack) = acks.pop_front().unwrap();
//!         tx.on_ack(now, &ack);
//!     }
//!     if tx.timer_deadline().is_some_and(|t| t <= now) {
//!         tx.on_timer(now);
//!     }
//! }
//! assert_eq!(rx.unique_bytes, 150_000);
//! assert_eq!(tx.delivered_bytes(), 150_000);
//! // STARTUP doubles the window each 40 ms round trip from 10 packets:
//! // 100 packets take four rounds, not ten.
//! let done_ns = rx.completed_at.unwrap().as_nanos();
//! assert!(done_ns < 5 * 2 * ONE_WAY_NS, "{done_ns} ns");
//! ```

mod app;
pub mod config;
pub mod ecn;
pub mod histogram;
pub mod mode_times;
pub mod pattern;
mod rcv_window;
pub mod receiver;
pub mod sample_interval;
pub mod schema;
pub mod segment;
pub mod sender;
pub mod timestamp;

pub use config::{
    AckPolicy, App, CustomCc, LossDetection, MssChange, Pacing, RcvAutotuning, SenderConfig,
    Timeout,
};
pub use ecn::{extend_count, Ecn, EcnCounts, EcnFeedback, SentPacket};
pub use histogram::LogHistogram;
pub use mode_times::ModeTimes;
pub use receiver::{Ack, AckAction, Receiver, ACK_RANGES};
pub use segment::TcpFlags;
pub use sender::{SendDecision, Sender, MAX_RTO_NS};
pub use timestamp::EchoState;
