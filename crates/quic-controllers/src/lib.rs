//! The QUIC stacks' own congestion controllers inside bbrlab.
//!
//! bbrlab's simulator compares algorithms on one deterministic sender. This
//! crate lets it compare *implementations* too: s2n-quic's BBRv2 and CUBIC
//! (from `s2n-quic-core`, which runs without I/O) and quinn's BBR and CUBIC
//! (from `quinn-proto`), each wrapped as a [`congestion::CongestionControl`]
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
//! Where the stacks hide what the mapping needs, the wrappers approximate;
//! each module says what and how ([`s2n`], [`quinn`]).
//!
//! The crate has `rust-version = "1.95"` because `s2n-quic-core` 0.91 has;
//! `congestion` keeps its own MSRV and stays dependency-free. No TLS crate
//! enters: `s2n-quic-core` without its default features and `quinn-proto`
//! without rustls/ring.

use congestion::{Config, CongestionControl, Instant};
use core::fmt;
use core::str::FromStr;

mod ledger;
pub mod quinn;
pub mod s2n;

/// A stack's controller, by the name scenarios use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackAlgorithm {
    /// s2n-quic's BBRv2 (`s2n_quic_core::recovery::bbr::BbrCongestionController`).
    S2nBbr2,
    /// s2n-quic's CUBIC (`s2n_quic_core::recovery::CubicCongestionController`).
    S2nCubic,
    /// quinn's BBR (`quinn_proto::congestion::Bbr`).
    QuinnBbr,
    /// quinn's CUBIC (`quinn_proto::congestion::Cubic`).
    QuinnCubic,
}

impl StackAlgorithm {
    /// Every stack controller, in the order error messages list them.
    pub const ALL: [StackAlgorithm; 4] = [
        StackAlgorithm::S2nBbr2,
        StackAlgorithm::S2nCubic,
        StackAlgorithm::QuinnBbr,
        StackAlgorithm::QuinnCubic,
    ];

    /// The name scenarios, sweeps, the CLI and Python use.
    pub fn name(self) -> &'static str {
        match self {
            StackAlgorithm::S2nBbr2 => "s2n:bbr2",
            StackAlgorithm::S2nCubic => "s2n:cubic",
            StackAlgorithm::QuinnBbr => "quinn:bbr",
            StackAlgorithm::QuinnCubic => "quinn:cubic",
        }
    }

    /// A fresh controller for one flow: `config` gives the MSS (the
    /// stacks' max datagram size) and the seed (s2n's BBRv2 draws its
    /// probe timing from a random generator); `now` is the flow's start.
    pub fn build(self, config: &Config, now: Instant) -> Box<dyn CongestionControl + Send> {
        match self {
            StackAlgorithm::S2nBbr2 => Box::new(s2n::S2n::bbr2(config, now)),
            StackAlgorithm::S2nCubic => Box::new(s2n::S2n::cubic(config, now)),
            StackAlgorithm::QuinnBbr => Box::new(quinn::Quinn::bbr(config, now)),
            StackAlgorithm::QuinnCubic => Box::new(quinn::Quinn::cubic(config, now)),
        }
    }
}

impl fmt::Display for StackAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no stack controller's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownStackAlgorithm(pub String);

impl fmt::Display for UnknownStackAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown stack controller `{}`; expected one of {}",
            self.0,
            names().join(", ")
        )
    }
}

impl std::error::Error for UnknownStackAlgorithm {}

impl FromStr for StackAlgorithm {
    type Err = UnknownStackAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // As `congestion::Algorithm` parses: ASCII case and surrounding
        // whitespace ignored, no aliases.
        let t = s.trim();
        StackAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownStackAlgorithm(s.to_string()))
    }
}

/// Every stack controller's name.
pub fn names() -> Vec<&'static str> {
    StackAlgorithm::ALL.iter().map(|a| a.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_a_bad_one_lists_the_allowed() {
        for a in StackAlgorithm::ALL {
            assert_eq!(a.name().parse::<StackAlgorithm>(), Ok(a));
        }
        let e = "s2n:bbr3".parse::<StackAlgorithm>().unwrap_err();
        let m = e.to_string();
        assert!(m.contains("`s2n:bbr3`"), "{m}");
        for n in names() {
            assert!(m.contains(n), "{m} lacks {n}");
        }
    }
}
