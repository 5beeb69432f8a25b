//! noq's BBRv3 and CUBIC, driven by bbrlab's sender and paced as noq
//! paces them.
//!
//! The controllers are noq-proto's own (`congestion::Bbr3`,
//! `congestion::Cubic`), called through noq's `congestion::Controller` as
//! noq's connection calls them (noq-proto 1.4.0, `connection/mod.rs`):
//! `on_packet_sent` for each packet and `on_sent` with the newest packet
//! number; `on_cwnd_limited` when the window blocked a send; `on_ack` for
//! every newly acknowledged packet, then `on_end_acks` once per ACK with
//! the largest acknowledged packet number; for losses `on_packet_lost` per
//! packet, then one `on_congestion_event` with the newest lost packet's
//! send time and number; for ECN `on_congestion_event` with 0 bytes.
//!
//! **Pacing.** noq paces at the controller's own `pacing_rate` when it
//! reports one (BBRv3 does), in bursts of 2 ms of data (10 to 256
//! datagrams, at most 10 ms); otherwise (CUBIC) as quinn does, at 1.25 ×
//! window per smoothed RTT (`connection/pacing.rs`, `Pacer::delay`,
//! `delay_at_rate`, `rate_capacity`). The wrapper reports that rate and
//! that burst to bbrlab's pacer.
//!
//! **What noq hides, and what that costs.**
//! - `RttEstimator` has no public constructor, as in quinn; the wrapper
//!   builds one holding bbrlab's estimates ([`rtt`],
//!   [`crate::rtt_layout`]).
//! - BBRv3 keeps its state private and publishes no events, so the `mode`
//!   column shows the fixed label `probe_bw` for `noq:bbr3` (its bandwidth
//!   estimate and pacing rate are read from its metrics).
//! - **BBRv3 seeds its probe timing from the operating system's random
//!   generator** (`Bbr3::new`: `Pcg32::from_rng(rand::rng())`; the
//!   config's seed is private to noq's tests), so a simulation with
//!   `noq:bbr3` is not reproducible run to run: when PROBE_BW probes
//!   differs. Every other controller in bbrlab is deterministic.
//! - "Blocked by the window" (`on_cwnd_limited`) is reported when a send
//!   leaves less than a datagram of window, the closest bbrlab's sender
//!   tells.
//!
//! App-limited and persistent congestion are as for quinn (the
//! [`crate::quinn`] module).

use crate::shell::Shell;
use congestion::{
    AckContext, AckedPacket, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext,
    Mode, Snapshot,
};
use core::time::Duration;
use noq_proto::congestion::{Bbr3Config, Controller, ControllerFactory, CubicConfig};
use std::sync::Arc;

/// noq's default initial RTT (`TransportConfig::initial_rtt`, 333 ms).
const INITIAL_RTT: Duration = Duration::from_millis(333);
/// The QUIC default max_ack_delay (RFC 9000 §18.2).
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);
/// `connection/pacing.rs`: `TARGET_BURST_INTERVAL`, `MAX_BURST_INTERVAL`,
/// `MIN_BURST_SIZE`, `MAX_BURST_SIZE`.
const TARGET_BURST: Duration = Duration::from_millis(2);
const MAX_BURST: Duration = Duration::from_millis(10);
const MIN_BURST_PACKETS: u64 = 10;
const MAX_BURST_PACKETS: u64 = 256;
/// The rate reported while noq does not pace.
pub const UNPACED_BYTES_PER_SEC: u64 = 1 << 40;

/// Which of noq's controllers a [`Noq`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `noq_proto::congestion::Bbr3`.
    Bbr3,
    /// `noq_proto::congestion::Cubic`.
    Cubic,
}

/// noq's burst at a pacing rate (`rate_capacity`): 2 ms of data, 10–256
/// datagrams of `mtu` bytes, at most 10 ms of data (but a datagram).
pub fn rate_burst_bytes(rate: u64, mtu: u64) -> u64 {
    let bytes_in = |d: Duration| (u128::from(rate) * d.as_nanos() / 1_000_000_000) as u64;
    let max = bytes_in(MAX_BURST).max(mtu);
    bytes_in(TARGET_BURST)
        .clamp(MIN_BURST_PACKETS * mtu, MAX_BURST_PACKETS * mtu)
        .min(max)
}

/// noq's pacing without a controller rate (`Pacer::delay`): 1.25 ×
/// window per smoothed RTT; `None`: not paced.
pub fn window_pacing_rate(window: u64, srtt: Duration) -> Option<u64> {
    if window > u64::from(u32::MAX) || srtt.is_zero() {
        return None;
    }
    Some(((window as f64 * 1.25 / srtt.as_secs_f64()) as u64).max(1))
}

/// A noq controller as a bbrlab [`CongestionControl`].
pub struct Noq {
    kind: Kind,
    cc: Box<dyn Controller>,
    s: Shell,
}

impl core::fmt::Debug for Noq {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Noq({:?}, window {})", self.kind, self.cc.window())
    }
}

impl Noq {
    /// noq's BBRv3 with its default settings.
    ///
    /// Not repeatable from run to run, whatever the scenario's seed:
    /// noq-proto 1.4.0 seeds this controller's random wait before probing
    /// (the draft's `BBRPickProbeWait`: 0 or 1 rounds, and 2-3 s) from the
    /// operating system's entropy when `Bbr3Config`'s `probe_rng_seed` is
    /// unset (`Bbr3::new`), and that field has no public setter.
    pub fn bbr3(config: &Config, now: Instant) -> Self {
        Self::new(Kind::Bbr3, config, now)
    }

    /// noq's CUBIC with its default settings.
    pub fn cubic(config: &Config, now: Instant) -> Self {
        Self::new(Kind::Cubic, config, now)
    }

    /// A wrapper running `kind`, with `config`'s MSS as noq's MTU.
    pub fn new(kind: Kind, config: &Config, now: Instant) -> Self {
        let s = Shell::new(config, INITIAL_RTT, MAX_ACK_DELAY);
        let (qnow, mtu) = (s.at(now), s.mtu as u16);
        let cc = match kind {
            Kind::Bbr3 => Arc::new(Bbr3Config::default()).build(qnow, mtu),
            Kind::Cubic => Arc::new(CubicConfig::default()).build(qnow, mtu),
        };
        Noq { kind, cc, s }
    }

    /// The smoothed RTT noq's pacer would use (`RttEstimator::get`).
    pub fn srtt(&self) -> Duration {
        self.s.srtt()
    }

    /// noq's window (`Controller::window`).
    pub fn window(&self) -> u64 {
        self.cc.window()
    }

    /// noq's own metrics (window, ssthresh, BBRv3's pacing rate, send
    /// quantum and bandwidth estimate).
    pub fn metrics(&self) -> noq_proto::congestion::ControllerMetrics {
        self.cc.metrics()
    }

    /// ACKed or lost packets the wrapper could not match to a send.
    pub fn unmatched_packets(&self) -> u64 {
        self.s.ledger.misses
    }
}

impl CongestionControl for Noq {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        let pn = self.s.ledger.on_sent(now, bytes, in_flight_before, ());
        let q = self.s.at(now);
        let size = bytes.min(u64::from(u16::MAX)) as u16;
        self.cc.on_packet_sent(q, size, pn);
        self.cc.on_sent(q, bytes, pn);
        if in_flight_before + bytes + self.s.mtu > self.cc.window() {
            self.cc.on_cwnd_limited();
        }
    }

    fn on_packets_acked(&mut self, _now: Instant, acked: &[AckedPacket]) {
        self.s.take_acked(acked);
    }

    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        _ce_packets: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        // noq: `on_congestion_event(now, largest sent time, false, true,
        // 0, largest packet number)` when the ACK's ECN-CE count grows.
        let (sent, pn) = self.s.acked.last().map_or((now, 0), |a| (a.sent, a.pn));
        let (qn, qs) = (self.s.at(now), self.s.at(sent));
        self.cc.on_congestion_event(qn, qs, false, true, 0, pn);
        self.kind == Kind::Cubic && new_episode
    }

    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        let est = self.s.on_ack(ack, sampler.is_app_limited());
        if self.s.acked.is_empty() {
            return;
        }
        let Some(noq_rtt) = rtt::build(est) else {
            // Layout not recognised: the controller is not told of ACKs,
            // and the tests catch it.
            return;
        };
        let now = self.s.at(ack.now);
        let app_limited = self.s.app_limited;
        for a in &self.s.acked {
            let sent = self.s.at(a.sent);
            self.cc
                .on_ack(now, sent, a.bytes, a.pn, app_limited, &noq_rtt);
        }
        let largest = self.s.acked.last().map(|a| a.pn);
        self.cc
            .on_end_acks(now, ack.bytes_in_flight, app_limited, largest);
        self.s.acked.clear();
    }

    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {
        // Losses arrive through `on_loss`.
    }

    fn on_loss(&mut self, loss: &LossContext<'_>) {
        let (lost, persistent) = self.s.take_lost(loss);
        let Some(newest) = lost.last() else {
            return;
        };
        let now = self.s.at(loss.now);
        for e in &lost {
            self.cc
                .on_packet_lost(e.bytes.min(u64::from(u16::MAX)) as u16, e.pn, now);
        }
        let bytes: u64 = lost.iter().map(|e| e.bytes).sum();
        let sent = lost.iter().map(|e| e.sent).max().unwrap_or(loss.now);
        let qs = self.s.at(sent);
        self.cc
            .on_congestion_event(now, qs, persistent, false, bytes, newest.pn);
    }

    fn on_spurious_loss(&mut self, _now: Instant) {
        self.cc.on_spurious_congestion_event();
    }

    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        // noq has no RTO; its PTO does not reach the controller.
    }

    fn on_mss_change(&mut self, mss: u64) {
        self.s.mtu = mss.clamp(1, u64::from(u16::MAX));
        self.cc.on_mtu_update(self.s.mtu as u16);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cc.window()
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        match self.cc.metrics().pacing_rate {
            Some(rate) => rate.max(1),
            None => {
                window_pacing_rate(self.cc.window(), self.srtt()).unwrap_or(UNPACED_BYTES_PER_SEC)
            }
        }
    }

    fn send_quantum_bytes(&self) -> u64 {
        match self.cc.metrics().pacing_rate {
            Some(rate) => rate_burst_bytes(rate.max(1), self.s.mtu),
            // `optimal_capacity`: the burst at window per srtt.
            None => {
                let rtt = self.srtt().as_nanos().max(1);
                let rate = u64::try_from(u128::from(self.cc.window()) * 1_000_000_000 / rtt)
                    .unwrap_or(u64::MAX);
                rate_burst_bytes(rate, self.s.mtu)
            }
        }
    }

    fn snapshot(&self) -> Snapshot {
        let m = self.cc.metrics();
        let mut s = Snapshot::default();
        s.mode = self.mode();
        s.cwnd_bytes = self.cc.window();
        s.pacing_rate_bytes_per_sec = self.pacing_rate_bytes_per_sec();
        s.ssthresh_bytes = m.ssthresh.filter(|&s| s != u64::MAX);
        s.min_rtt = self.s.rtt.map(|r| r.min);
        // noq's BBRv3 reports max_bw in bits/s.
        s.bw_estimate_bytes_per_sec = m.bandwidth_estimate.map(|b| b as f64 / 8.0);
        s
    }

    fn mode(&self) -> Mode {
        match self.kind {
            Kind::Bbr3 => Mode::ProbeBw,
            Kind::Cubic => match self.cc.metrics().ssthresh {
                Some(s) if self.cc.window() >= s => Mode::CongestionAvoidance,
                _ => Mode::SlowStart,
            },
        }
    }

    fn name(&self) -> &str {
        match self.kind {
            Kind::Bbr3 => "noq:bbr3",
            Kind::Cubic => "noq:cubic",
        }
    }
}

pub mod rtt {
    //! A `noq_proto::RttEstimator` holding given estimates, laid out as
    //! [`crate::rtt_layout`] says. The crate pins noq-proto to `=1.4.0`,
    //! the version read.
    pub use crate::rtt_layout::Estimates;
    crate::estimator_layout!(noq_proto::RttEstimator);
}
