//! The QUIC stacks' own congestion controllers inside bbrlab.
//!
//! bbrlab's simulator compares algorithms on one deterministic sender. This
//! crate lets it compare *implementations* too: s2n-quic's BBRv2 and CUBIC
//! (from `s2n-quic-core`, which runs without I/O), quinn's BBR and CUBIC
//! (from `quinn-proto`) and noq's BBRv3 and CUBIC (from `noq-proto`), each
//! wrapped as a [`congestion::CongestionControl`]
//! that [`congestion::Controller::custom`] runs like a built-in algorithm.
//!
//! The adapter crates (`bbrlab-s2n`, `bbrlab-quinn`) map bbrlab's
//! controllers *into* the stacks; this crate reads the same mapping the
//! other way, bbrlab's sender events into the stacks' callbacks:
//!
//! | bbrlab event | s2n-quic `CongestionController` | quinn `congestion::Controller` |
//! |---|---|---|
//! | `on_packet_sent` | `on_packet_sent` (its `PacketInfo` kept per packet) | `on_sent` (packet number = send order) |
//! | `on_packets_acked` + `on_ack` | `on_rtt_update`, then one `on_ack` with the newest packet's `PacketInfo` | `on_ack` per packet, then `on_end_acks` |
//! | `on_loss` | `on_packet_lost` per packet (loss bursts and persistent congestion computed as s2n does) | one `on_congestion_event` (persistent congestion as RFC 9002 §7.6) |
//! | `on_congestion_experienced` | `on_explicit_congestion` | `on_congestion_event` with 0 lost bytes |
//! | `on_mss_change` | `on_mtu_update` | `on_mtu_update` |
//! | `pacing_rate_bytes_per_sec`, `send_quantum_bytes` | the pacer behind `earliest_departure_time()` (rate and burst) | quinn's pacer rule: 1.25 × window / srtt, bursts of window × 2 ms / srtt |
//! | `on_retransmission_timeout` | nothing (QUIC has no RTO callback) | nothing |
//!
//! noq, a fork of quinn, is mapped as quinn is, with its extra callbacks
//! (per-packet sends and losses, `on_cwnd_limited`, spurious congestion)
//! and its pacer, which paces at the controller's own rate when it gives
//! one ([`noq`]).
//!
//! Where the stacks hide what the mapping needs, the wrappers approximate;
//! each module says what and how ([`s2n`], [`quinn`], [`noq`]).
//!
//! The crate has `rust-version = "1.95"` because `s2n-quic-core` 0.91 has;
//! `congestion` keeps its own MSRV and stays dependency-free. No TLS crate
//! enters: `s2n-quic-core` without its default features, `quinn-proto` and
//! `noq-proto` without rustls/ring.

use congestion::{Config, CongestionControl, Instant};

mod ledger;
pub mod noq;
pub mod quinn;
#[doc(hidden)]
pub mod rtt_layout;
pub mod s2n;
mod shell;

pub use stack_names::{names, StackAlgorithm, UnknownStackAlgorithm};

/// A fresh controller of `alg` for one flow: `config` gives the MSS (the
/// stacks' max datagram size) and the seed (s2n's BBRv2 draws its probe
/// timing from a random generator); `now` is the flow's start.
pub fn build(
    alg: StackAlgorithm,
    config: &Config,
    now: Instant,
) -> Box<dyn CongestionControl + Send + Sync> {
    match alg {
        StackAlgorithm::S2nBbr2 => Box::new(s2n::S2n::bbr2(config, now)),
        StackAlgorithm::S2nCubic => Box::new(s2n::S2n::cubic(config, now)),
        StackAlgorithm::QuinnBbr => Box::new(quinn::Quinn::bbr(config, now)),
        StackAlgorithm::QuinnCubic => Box::new(quinn::Quinn::cubic(config, now)),
        StackAlgorithm::NoqBbr3 => Box::new(noq::Noq::bbr3(config, now)),
        StackAlgorithm::NoqCubic => Box::new(noq::Noq::cubic(config, now)),
    }
}
