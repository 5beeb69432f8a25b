//! quinn's BBR and CUBIC, driven by bbrlab's sender and paced as quinn
//! paces them.
//!
//! The controllers are quinn-proto's own (`congestion::Bbr`,
//! `congestion::Cubic`), called through quinn's `congestion::Controller`
//! as quinn's connection calls them: `on_sent` with the packet number,
//! `on_ack` for every newly acknowledged packet then `on_end_acks` once
//! per ACK with the largest acknowledged packet number,
//! `on_congestion_event` once per batch of losses with the newest lost
//! packet's send time (and for ECN with 0 bytes).
//!
//! **Pacing.** quinn paces every controller the same way, whatever the
//! controller estimates (`connection/pacing.rs`, `Pacer::delay` and
//! `optimal_capacity`): a token bucket refilled at 1.25 × window per
//! smoothed RTT, holding at most window × 2 ms / srtt, clamped to 10–256
//! datagrams; no pacing for windows above `u32::MAX` bytes. The wrapper
//! reports that rate and that burst to bbrlab's pacer, so quinn's BBR runs
//! without its own pacing rate here as in quinn (its pacing rate is only
//! shown in the snapshot).
//!
//! **What quinn hides.**
//! - `RttEstimator`, which `Controller::on_ack` borrows, has no public
//!   constructor in quinn-proto 0.11 (`new` and `update` are
//!   `pub(crate)`). The wrapper builds one holding bbrlab's estimates
//!   (latest, smoothed, variance and minimum RTT, the same RFC 9002
//!   estimator) through [`rtt`]; quinn's controllers read only `get()`
//!   (CUBIC) and `min()` (BBR) from it.
//! - quinn's BBR keeps its mode private and publishes no events, so the
//!   `mode` column shows the fixed label `probe_bw` for `quinn:bbr`;
//!   CUBIC's mode is read from its published ssthresh (slow start while
//!   the window is below it).
//! - quinn's `Instant` is `std::time::Instant`; the wrapper maps bbrlab's
//!   clock onto one instant taken when the flow's controller is made.
//!   quinn's controllers use only differences of instants, so results do
//!   not depend on it.
//!
//! **Approximations.** App-limited (for `on_ack` and `on_end_acks`) is
//! whether bbrlab's sampler was app-limited at the last ACK (exact for
//! bulk flows). Persistent congestion is computed as RFC 9002 §7.6 says
//! and quinn does, over each contiguous run of lost packets, against
//! (srtt + max(4 rttvar, 1 ms) + 25 ms max_ack_delay) × 3; bbrlab's
//! retransmission timeout has no quinn counterpart and is ignored.

use crate::shell::Shell;
use congestion::{
    AckContext, AckedPacket, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext,
    Mode, Snapshot,
};
use core::time::Duration;
use quinn_proto::congestion::{BbrConfig, Controller, ControllerFactory, CubicConfig};
use std::sync::Arc;

/// quinn's default initial RTT (`TransportConfig::initial_rtt`, 333 ms),
/// which its pacer and controllers see before the first sample.
const INITIAL_RTT: Duration = Duration::from_millis(333);
/// The QUIC default max_ack_delay (RFC 9000 §18.2), quinn's default too.
const MAX_ACK_DELAY: Duration = Duration::from_millis(25);
/// `connection/pacing.rs`: `BURST_INTERVAL_NANOS`, `MIN_BURST_SIZE`,
/// `MAX_BURST_SIZE`.
const BURST_INTERVAL: Duration = Duration::from_millis(2);
const MIN_BURST_PACKETS: u64 = 10;
const MAX_BURST_PACKETS: u64 = 256;
/// The rate reported while quinn does not pace.
pub const UNPACED_BYTES_PER_SEC: u64 = 1 << 40;

/// Which of quinn's controllers a [`Quinn`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `quinn_proto::congestion::Bbr`.
    Bbr,
    /// `quinn_proto::congestion::Cubic`.
    Cubic,
}

/// quinn's pacing rule (`Pacer::delay`): tokens refill at 1.25 × window
/// per smoothed RTT. `None`: quinn does not pace (window above
/// `u32::MAX`, or a zero srtt).
pub fn pacing_rate(window: u64, srtt: Duration) -> Option<u64> {
    if window > u64::from(u32::MAX) || srtt.is_zero() {
        return None;
    }
    let rate = window as f64 * 1.25 / srtt.as_secs_f64();
    Some((rate as u64).max(1))
}

/// quinn's burst (`optimal_capacity`): window × 2 ms / srtt, clamped to
/// 10–256 datagrams of `mtu` bytes.
pub fn burst_bytes(window: u64, srtt: Duration, mtu: u64) -> u64 {
    let rtt = srtt.as_nanos().max(1);
    let cap = (u128::from(window) * BURST_INTERVAL.as_nanos() / rtt) as u64;
    cap.clamp(MIN_BURST_PACKETS * mtu, MAX_BURST_PACKETS * mtu)
}

/// A quinn controller as a bbrlab [`CongestionControl`].
pub struct Quinn {
    kind: Kind,
    cc: Box<dyn Controller>,
    s: Shell,
}

impl core::fmt::Debug for Quinn {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Quinn({:?}, window {})", self.kind, self.cc.window())
    }
}

impl Quinn {
    /// quinn's BBR with its default settings.
    pub fn bbr(config: &Config, now: Instant) -> Self {
        Self::new(Kind::Bbr, config, now)
    }

    /// quinn's CUBIC with its default settings.
    pub fn cubic(config: &Config, now: Instant) -> Self {
        Self::new(Kind::Cubic, config, now)
    }

    /// A wrapper running `kind`, with `config`'s MSS as quinn's MTU.
    pub fn new(kind: Kind, config: &Config, now: Instant) -> Self {
        let s = Shell::new(config, INITIAL_RTT, MAX_ACK_DELAY);
        let (qnow, mtu) = (s.at(now), s.mtu as u16);
        let cc = match kind {
            Kind::Bbr => Arc::new(BbrConfig::default()).build(qnow, mtu),
            Kind::Cubic => Arc::new(CubicConfig::default()).build(qnow, mtu),
        };
        Quinn { kind, cc, s }
    }

    /// The smoothed RTT quinn's pacer would use (`RttEstimator::get`).
    pub fn srtt(&self) -> Duration {
        self.s.srtt()
    }

    /// quinn's window (`Controller::window`).
    pub fn window(&self) -> u64 {
        self.cc.window()
    }

    /// quinn's own metrics (window, ssthresh, BBR's pacing rate).
    pub fn metrics(&self) -> quinn_proto::congestion::ControllerMetrics {
        self.cc.metrics()
    }

    /// ACKed or lost packets the wrapper could not match to a send.
    pub fn unmatched_packets(&self) -> u64 {
        self.s.ledger.misses
    }
}

impl CongestionControl for Quinn {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        let pn = self.s.ledger.on_sent(now, bytes, in_flight_before, ());
        let q = self.s.at(now);
        self.cc.on_sent(q, bytes, pn);
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
        // quinn: `on_congestion_event(now, largest acked's send time,
        // false, 0)` when the ACK's ECN-CE count grows.
        let sent = self.s.acked.last().map_or(now, |a| a.sent);
        let (qn, qs) = (self.s.at(now), self.s.at(sent));
        self.cc.on_congestion_event(qn, qs, false, 0);
        self.kind == Kind::Cubic && new_episode
    }

    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        let est = self.s.on_ack(ack, sampler.is_app_limited());
        if self.s.acked.is_empty() {
            return;
        }
        let Some(quinn_rtt) = rtt::build(est) else {
            // Layout not recognised (see `rtt`): the controller is
            // not told of ACKs, and the tests catch it.
            return;
        };
        let now = self.s.at(ack.now);
        let app_limited = self.s.app_limited;
        for a in &self.s.acked {
            let sent = self.s.at(a.sent);
            self.cc.on_ack(now, sent, a.bytes, app_limited, &quinn_rtt);
        }
        let largest = self.s.acked.last().map(|a| a.pn);
        self.cc
            .on_end_acks(now, ack.bytes_in_flight, app_limited, largest);
        self.s.acked.clear();
    }

    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {
        // Losses arrive through `on_loss`; see the s2n wrapper.
    }

    fn on_loss(&mut self, loss: &LossContext<'_>) {
        let (lost, persistent) = self.s.take_lost(loss);
        if lost.is_empty() {
            return;
        }
        let bytes: u64 = lost.iter().map(|e| e.bytes).sum();
        let newest = lost.iter().map(|e| e.sent).max().unwrap_or(loss.now);
        let (qn, qs) = (self.s.at(loss.now), self.s.at(newest));
        self.cc.on_congestion_event(qn, qs, persistent, bytes);
    }

    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        // quinn has no RTO; its PTO does not reach the controller.
    }

    fn on_mss_change(&mut self, mss: u64) {
        self.s.mtu = mss.clamp(1, u64::from(u16::MAX));
        self.cc.on_mtu_update(self.s.mtu as u16);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cc.window()
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        pacing_rate(self.cc.window(), self.srtt()).unwrap_or(UNPACED_BYTES_PER_SEC)
    }

    fn send_quantum_bytes(&self) -> u64 {
        burst_bytes(self.cc.window(), self.srtt(), self.s.mtu)
    }

    fn snapshot(&self) -> Snapshot {
        let m = self.cc.metrics();
        let mut s = Snapshot::default();
        s.mode = self.mode();
        s.cwnd_bytes = self.cc.window();
        s.pacing_rate_bytes_per_sec = self.pacing_rate_bytes_per_sec();
        s.ssthresh_bytes = m.ssthresh.filter(|&s| s != u64::MAX);
        s.min_rtt = self.s.rtt.map(|r| r.min);
        // quinn's BBR reports its own pacing rate in bits/s; shown as
        // its bandwidth view although quinn does not pace by it.
        s.bw_estimate_bytes_per_sec = m.pacing_rate.map(|b| b as f64 / 8.0);
        s
    }

    fn mode(&self) -> Mode {
        match self.kind {
            Kind::Bbr => Mode::ProbeBw,
            Kind::Cubic => match self.cc.metrics().ssthresh {
                Some(s) if self.cc.window() >= s => Mode::CongestionAvoidance,
                _ => Mode::SlowStart,
            },
        }
    }

    fn name(&self) -> &str {
        match self.kind {
            Kind::Bbr => "quinn:bbr",
            Kind::Cubic => "quinn:cubic",
        }
    }
}

pub mod rtt {
    //! A `quinn_proto::RttEstimator` holding given estimates: quinn-proto
    //! 0.11 gives no way to make one outside the crate (its constructor
    //! and update are `pub(crate)`), so [`build`] lays the four estimates
    //! out as quinn's type ([`crate::rtt_layout`] says how and why that
    //! is sound). The crate pins quinn-proto to `=0.11.19`, the version
    //! read.
    pub use crate::rtt_layout::Estimates;
    crate::estimator_layout!(quinn_proto::RttEstimator);
}
