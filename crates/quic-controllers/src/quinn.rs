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

use crate::ledger::Ledger;
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

/// One newly acknowledged packet, waiting for the ACK's RTT estimate.
#[derive(Clone, Copy, Debug)]
struct Acked {
    pn: u64,
    sent: Instant,
    bytes: u64,
}

/// A quinn controller as a bbrlab [`CongestionControl`].
pub struct Quinn {
    kind: Kind,
    cc: Box<dyn Controller>,
    /// quinn time of bbrlab's `Instant::ZERO`.
    base: std::time::Instant,
    ledger: Ledger<()>,
    acked: Vec<Acked>,
    /// bbrlab's RTT estimates as of the last ACK (latest, smoothed,
    /// variance, min); `None` before the first sample.
    rtt: Option<rtt::Estimates>,
    app_limited: bool,
    mtu: u64,
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
        let mtu = config.mss_bytes.clamp(1, u64::from(u16::MAX));
        let base = std::time::Instant::now();
        let qnow = base + Duration::from_nanos(now.as_nanos());
        let cc = match kind {
            Kind::Bbr => Arc::new(BbrConfig::default()).build(qnow, mtu as u16),
            Kind::Cubic => Arc::new(CubicConfig::default()).build(qnow, mtu as u16),
        };
        Quinn {
            kind,
            cc,
            base,
            ledger: Ledger::new(),
            acked: Vec::new(),
            rtt: None,
            app_limited: false,
            mtu,
        }
    }

    fn q(&self, t: Instant) -> std::time::Instant {
        self.base + Duration::from_nanos(t.as_nanos())
    }

    /// The smoothed RTT quinn's pacer would use (`RttEstimator::get`).
    pub fn srtt(&self) -> Duration {
        self.rtt.map_or(INITIAL_RTT, |r| r.smoothed)
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
        self.ledger.misses
    }

    fn persistent_threshold(&self) -> Option<Duration> {
        let r = self.rtt?;
        Some((r.smoothed + (4 * r.var).max(Duration::from_millis(1)) + MAX_ACK_DELAY) * 3)
    }
}

impl CongestionControl for Quinn {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        let pn = self.ledger.on_sent(now, bytes, in_flight_before, ());
        let q = self.q(now);
        self.cc.on_sent(q, bytes, pn);
    }

    fn on_packets_acked(&mut self, _now: Instant, acked: &[AckedPacket]) {
        self.acked.clear();
        for p in acked {
            if let Some(e) = self.ledger.take(&p.state) {
                self.acked.push(Acked {
                    pn: e.pn,
                    sent: e.sent,
                    bytes: e.bytes,
                });
            }
        }
        self.acked.sort_by_key(|a| a.pn);
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
        let sent = self.acked.last().map_or(now, |a| a.sent);
        let (qn, qs) = (self.q(now), self.q(sent));
        self.cc.on_congestion_event(qn, qs, false, 0);
        self.kind == Kind::Cubic && new_episode
    }

    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        self.ledger.set_totals(ack.delivered_bytes, ack.lost_bytes);
        self.app_limited = sampler.is_app_limited();
        if let (Some(latest), Some(smoothed), Some(min)) =
            (ack.rtt.latest(), ack.rtt.smoothed(), ack.rtt.min())
        {
            self.rtt = Some(rtt::Estimates {
                latest,
                smoothed,
                var: ack.rtt.var(),
                min,
            });
        }
        if self.acked.is_empty() {
            return;
        }
        let est = self.rtt.unwrap_or(rtt::Estimates {
            latest: INITIAL_RTT,
            smoothed: INITIAL_RTT,
            var: INITIAL_RTT / 2,
            min: INITIAL_RTT,
        });
        let Some(quinn_rtt) = rtt::build(est) else {
            // Layout not recognised (see `rtt`): the controller is
            // not told of ACKs, and the tests catch it.
            return;
        };
        let now = self.q(ack.now);
        for a in &self.acked {
            let sent = self.base + Duration::from_nanos(a.sent.as_nanos());
            self.cc
                .on_ack(now, sent, a.bytes, self.app_limited, &quinn_rtt);
        }
        let largest = self.acked.last().map(|a| a.pn);
        self.cc
            .on_end_acks(now, ack.bytes_in_flight, self.app_limited, largest);
        self.acked.clear();
    }

    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {
        // Losses arrive through `on_loss`; see the s2n wrapper.
    }

    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.ledger
            .set_totals(loss.delivered_bytes, loss.total_lost_bytes);
        let mut lost: Vec<_> = loss
            .lost
            .iter()
            .filter_map(|p| self.ledger.take(&p.state))
            .collect();
        if lost.is_empty() {
            return;
        }
        lost.sort_by_key(|e| e.pn);
        let bytes: u64 = lost.iter().map(|e| e.bytes).sum();
        let newest = lost.iter().map(|e| e.sent).max().unwrap_or(loss.now);
        // RFC 9002 §7.6.2, as quinn's `detect_lost_packets` applies it:
        // a contiguous run of lost packets spanning more than the
        // persistent-congestion duration, after an RTT sample.
        let persistent = self.persistent_threshold().is_some_and(|thr| {
            let mut i = 0;
            let mut found = false;
            while i < lost.len() && !found {
                let mut j = i + 1;
                while j < lost.len() && lost[j].pn == lost[j - 1].pn + 1 {
                    j += 1;
                }
                found = lost[j - 1].sent.saturating_since(lost[i].sent) > thr;
                i = j;
            }
            found
        });
        let (qn, qs) = (self.q(loss.now), self.q(newest));
        self.cc.on_congestion_event(qn, qs, persistent, bytes);
    }

    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        // quinn has no RTO; its PTO does not reach the controller.
    }

    fn on_mss_change(&mut self, mss: u64) {
        self.mtu = mss.clamp(1, u64::from(u16::MAX));
        self.cc.on_mtu_update(self.mtu as u16);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cc.window()
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        pacing_rate(self.cc.window(), self.srtt()).unwrap_or(UNPACED_BYTES_PER_SEC)
    }

    fn send_quantum_bytes(&self) -> u64 {
        burst_bytes(self.cc.window(), self.srtt(), self.mtu)
    }

    fn snapshot(&self) -> Snapshot {
        let m = self.cc.metrics();
        let mut s = Snapshot::default();
        s.mode = self.mode();
        s.cwnd_bytes = self.cc.window();
        s.pacing_rate_bytes_per_sec = self.pacing_rate_bytes_per_sec();
        s.ssthresh_bytes = m.ssthresh.filter(|&s| s != u64::MAX);
        s.min_rtt = self.rtt.map(|r| r.min);
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
    //! A `quinn_proto::RttEstimator` holding given estimates.
    //!
    //! quinn's `Controller::on_ack` borrows quinn's `RttEstimator`, and
    //! quinn-proto 0.11 gives no way to make one outside the crate: its
    //! constructor and update are `pub(crate)`. Its four fields (quinn-proto
    //! 0.11.19, `connection/paths.rs`) are three `Duration`s (latest, var,
    //! min) and an `Option<Duration>` (smoothed).
    //!
    //! [`build`] writes four `Duration`s, `[Duration; 4]`, and reinterprets
    //! them as quinn's type. Why that is sound whatever order the compiler
    //! gave quinn's fields:
    //! - `transmute` refuses to compile unless both types have the same
    //!   size, 64 bytes. That holds only if `Option<Duration>` is 16 bytes,
    //!   i.e. uses the niche in `Duration`'s nanoseconds, so every valid
    //!   `Duration` is also a valid `Option<Duration>` (a `Some`).
    //! - Four fields of 16 bytes, aligned to 8, filling 64 bytes without
    //!   padding, can only sit at offsets 0, 16, 32 and 48: each field
    //!   reads exactly one of our `Duration`s, a valid value.
    //!
    //! Which slot holds which field is then found at run time through
    //! quinn's public getters (`get`, `min`, `conservative`), once, and
    //! checked; if the check fails (another quinn-proto), [`build`] returns
    //! `None`. The crate pins quinn-proto to `=0.11.19`, the version read.

    use core::time::Duration;
    use quinn_proto::RttEstimator;
    use std::sync::OnceLock;

    /// The estimates to put in quinn's estimator.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Estimates {
        /// The latest sample.
        pub latest: Duration,
        /// The smoothed RTT.
        pub smoothed: Duration,
        /// The RTT variation.
        pub var: Duration,
        /// The minimum RTT.
        pub min: Duration,
    }

    /// Slot index of each field.
    #[derive(Clone, Copy, Debug)]
    struct Slots {
        latest: usize,
        smoothed: usize,
        var: usize,
        min: usize,
    }

    fn raw(slots: [Duration; 4]) -> RttEstimator {
        // SAFETY: see the module's documentation: equal sizes are checked
        // at compile time, which forces quinn's four 16-byte fields onto
        // our four slots, and every slot holds a valid `Duration`, which is
        // valid for both `Duration` and `Option<Duration>`.
        unsafe { core::mem::transmute::<[Duration; 4], RttEstimator>(slots) }
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn discover() -> Option<Slots> {
        let probe = [ms(1), ms(2), ms(3), ms(4)];
        let e = raw(probe);
        let smoothed = probe.iter().position(|&d| d == e.get())?;
        let min = probe.iter().position(|&d| d == e.min())?;
        // With the smoothed slot zero, `conservative()` = max(smoothed,
        // latest) is the latest.
        let mut p2 = [ms(10), ms(20), ms(30), ms(40)];
        p2[smoothed] = Duration::ZERO;
        let latest = p2.iter().position(|&d| d == raw(p2).conservative())?;
        let var = (0..4).find(|&i| i != smoothed && i != min && i != latest)?;
        let mut seen = [smoothed, min, latest, var];
        seen.sort_unstable();
        if seen != [0, 1, 2, 3] {
            return None;
        }
        let slots = Slots {
            latest,
            smoothed,
            var,
            min,
        };
        // Check on other values.
        let want = Estimates {
            latest: ms(90),
            smoothed: ms(70),
            var: ms(5),
            min: ms(40),
        };
        let e = raw(place(slots, want));
        (e.get() == want.smoothed && e.min() == want.min && e.conservative() == want.latest)
            .then_some(slots)
    }

    fn place(s: Slots, e: Estimates) -> [Duration; 4] {
        let mut out = [Duration::ZERO; 4];
        out[s.latest] = e.latest;
        out[s.smoothed] = e.smoothed;
        out[s.var] = e.var;
        out[s.min] = e.min;
        out
    }

    /// quinn's estimator holding `e`; `None` if quinn's layout was not
    /// recognised.
    pub fn build(e: Estimates) -> Option<RttEstimator> {
        static SLOTS: OnceLock<Option<Slots>> = OnceLock::new();
        let slots = (*SLOTS.get_or_init(discover))?;
        Some(raw(place(slots, e)))
    }

    /// Whether [`build`] works with the linked quinn-proto.
    pub fn available() -> bool {
        build(Estimates {
            latest: Duration::ZERO,
            smoothed: Duration::ZERO,
            var: Duration::ZERO,
            min: Duration::ZERO,
        })
        .is_some()
    }
}
