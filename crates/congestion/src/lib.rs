//! # congestion: sans-IO congestion control for transports
//!
//! This crate holds bbrlab's congestion controllers: BBR v1 as Linux ships
//! it (`bbr`), the jitter-robust BBR of Dong & Guo (`bbr-jitter`), BBRv3
//! (`bbr3`, [`guide::bbr3`]: draft-ietf-ccwg-bbr-06 by default, or the google/bbr
//! v3 branch's constants and ECN response, [`Bbr3Config::linux_v3`]), CUBIC
//! (`cubic`) and NewReno (`reno`), plus the pieces every transport needs
//! around them: delivery-rate sampling, RTT estimation and windowed filters.
//! BBR also runs with the switches of Chromium QUIC's BBR of 2018
//! ([`BbrConfig::quic_2018`]), the stack `bbr-jitter` was first built on.
//!
//! It does no I/O, reads no clock, spawns no threads, does not allocate per
//! ACK and depends on nothing outside `std`. A transport (QUIC stack, UDP
//! file mover, simulator) tells a [`Controller`] about sends, ACKs, losses and
//! timeouts, passing the current [`Instant`], and asks it how many bytes may
//! be in flight and how fast to send.
//!
//! ```
//! use congestion::{AckEvent, Algorithm, AckedPacket, Config, Controller, Instant, Mode};
//! use std::time::Duration;
//!
//! let cfg = Config::new("bbr".parse::<Algorithm>().unwrap());
//! let t0 = Instant::from_nanos(0);
//! let mut cc = Controller::new(&cfg, t0);
//! let initial_cwnd = cc.cwnd_bytes(); // 10 packets of 1500 bytes
//! let st = cc.on_packet_sent(t0, 1500, 0, false);
//! let t1 = Instant::from_nanos(40_000_000);
//! let acked = [AckedPacket { bytes: 1500, state: st }];
//! cc.on_ack(&AckEvent::new(t1, &acked, 1500, 0).rtt(Some(Duration::from_millis(40)), Duration::ZERO));
//! // STARTUP grows the window by every byte acknowledged.
//! assert_eq!(cc.mode(), Mode::Startup);
//! assert_eq!(cc.cwnd_bytes(), initial_cwnd + 1500);
//! assert!(cc.pacing_rate_bytes_per_sec() > 0);
//! ```
//!
//! The crate's README has a longer example: a paced flow over a modelled
//! bottleneck, which BBR measures before it leaves STARTUP.
//!
//! # Recovery episodes (read this if you embed BBR in QUIC)
//!
//! [`Config::recovery_exit`] says how your transport ends loss-recovery
//! episodes. The default, [`RecoveryExit::FirstAckAfterStart`], is RFC
//! 9002's and needs no extra calls. [`RecoveryExit::Transport`] is Linux
//! TCP's: you set the [`AckEvent`]'s [`RecoveryPoint`] on the ACK that
//! delivers all data sent before the episode, repairs included. BBR's recovery
//! rule follows by default ([`BbrRecovery::Auto`]): Linux's packet
//! conservation and cwnd restore with TCP-style episodes, QUIC's separate
//! recovery window with RFC 9002 episodes. Linux's rule under RFC 9002
//! episodes restarts conservation nearly every round on a lossy path: 9.9
//! against 91.5 Mbit/s at 5 % loss on 100 Mbit/s / 100 ms (bbrlab's book,
//! "The congestion crate", "Recovery episodes"). CUBIC and Reno reduce
//! once per episode either way.
//!
//! # Your own algorithm
//!
//! Implement [`CongestionControl`] and wrap it with [`Controller::custom`]:
//! the controller's sampler, RTT estimator and recovery tracking drive it
//! as they drive the built-ins. bbrlab's simulator and UDP transport run
//! it too.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod algorithm;
mod bbr;
mod bbr3;
mod config;
mod controller;
mod cubic;
mod cwnd_usage;
mod delivery_rate;
mod ecn;
mod event;
mod float;
pub mod kernel_names;
mod linux_hystart;
mod loss_based;
pub mod observe;
mod pacer;
mod pacing;
mod prr;
mod reno;
mod rng;
mod rtt_estimator;
mod snapshot;
mod time;
mod windowed_filter;

pub use config::{
    AckAggregation, Algorithm, Bbr3Config, Bbr3Ecn, Bbr3ExtraAcked, Bbr3Profile, Bbr3Signals,
    BbrConfig, BbrFlavour, BbrRecovery, Config, ConfigError, ConnectionSeeds, CubicAvoidance,
    CubicConfig, HyStartVariant, JitterCadence, JitterConfig, JitterStats, MinRttSamples,
    RecoveryExit, SrttSample, StartupLossCount, UnknownAlgorithm, UnknownBbr3Profile,
    UnknownBbr3Signals, WindowReduction, MAX_MSS_BYTES,
};
pub use controller::{
    builtin, AckContext, CongestionControl, Controller, LossContext, RecoveryState,
};
pub use delivery_rate::{
    AckedPacket, DeliveryRateSampler, LostPacket, RateSample, SentPacketState,
};
pub use ecn::Ecn;
pub use event::{AckEvent, RecoveryPoint};
pub use pacer::{Burst, Pacer};
pub use rtt_estimator::RttEstimator;
pub use snapshot::{Bbr3Snapshot, JitterSnapshot, LtBwSnapshot, Mode, Snapshot};
pub use time::Instant;

/// The crate's documentation for users: how to drive a controller, and
/// what the BBR algorithms do and where each rule comes from.
pub mod guide {
    /// # Driving a controller from RFC 9002 loss recovery
    ///
    /// The embedding contract, for a QUIC stack (or any transport with RFC
    /// 9002's loss recovery) that drives a [`Controller`](crate::Controller)
    /// itself.
    ///
    #[doc = include_str!("../docs/driving.md")]
    #[doc = concat!("\n```rust\n", include_str!("../examples/rfc9002_loop.rs"), "\n```\n")]
    pub mod driving {}

    /// # BBR v1
    ///
    #[doc = include_str!("../docs/bbr.md")]
    pub mod bbr {}

    /// # BBRv3
    ///
    #[doc = include_str!("../docs/bbr3.md")]
    pub mod bbr3 {}
}

// The README's example is compiled and run as a doc test, so the first
// code a reader copies cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
