//! What CUBIC and NewReno share: window bookkeeping, Linux-style pacing and
//! the reaction to timeouts.
//!
//! Both grow a window from ACKs and shrink it on loss; they differ only in
//! how congestion avoidance grows it and how far a loss shrinks it. The
//! shared state lives here so the two algorithms are the differences alone.

use crate::algorithm::{AckContext, RecoveryState};
use crate::config::WindowReduction;
use crate::cwnd_usage::CwndUsage;
use crate::float::u64_as_f64;
use crate::pacing::send_quantum_bytes;
use crate::prr::Prr;
use crate::snapshot::{Mode, Snapshot};
use crate::time::Instant;

/// Pacing ratios of Linux `tcp_update_pacing_rate()`: 200 % of cwnd/srtt in
/// slow start (so the window can double), 120 % afterwards.
const SLOW_START_PACING_RATIO: f64 = 2.0;
const AVOIDANCE_PACING_RATIO: f64 = 1.2;
/// Before any RTT sample, pace as if the RTT were 1 ms: effectively unpaced
/// for the initial window, as Linux is before it has an srtt.
const DEFAULT_RTT_NS: f64 = 1e6;

/// Window state common to loss-based controllers.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    pub mss: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub pacing_rate: f64,
    /// `pacing_rate` as [`Window::pacing_rate_bytes_per_sec`] reports it,
    /// converted where the rate is set, once per ACK: the simulator's
    /// sender asks for it several times per packet, and the saturating
    /// conversion cost a dozen instructions each time. Measured on the
    /// one-flow CUBIC bench path (100 Mbit/s, 40 ms, 20 s): 325.1 M to
    /// 321.9 M instructions; `examples/ack_loop`, which never asks for
    /// the rate, pays the conversion alone (13 more per send+ACK).
    pacing_rate_bytes: u64,
    pub send_quantum: u64,
    pub min_rtt_ns: Option<u64>,
    /// Whether a reduction is in progress (Linux `tcp_in_cwnd_reduction()`):
    /// set by a reduction, cleared by the first ACK that finds recovery
    /// over. A reduction that starts while one is in progress keeps the
    /// older undo state.
    pub in_reduction: bool,
    /// (cwnd, ssthresh) before the current reduction began, for undo
    /// (Linux `prior_cwnd` and `prior_ssthresh`).
    pub undo: Option<(u64, u64)>,
    /// How a reduction brings cwnd down.
    reduction: WindowReduction,
    /// PRR's counters while a reduction is under way (with
    /// [`WindowReduction::Prr`]).
    prr: Option<Prr>,
    /// Whether the sender is using the window, which growth requires.
    usage: CwndUsage,
}

impl Window {
    pub fn new(mss: u64, initial_cwnd_packets: u64, reduction: WindowReduction) -> Self {
        let mss = crate::config::usable_mss(mss);
        let mut w = Window {
            mss,
            cwnd: initial_cwnd_packets.max(1).saturating_mul(mss),
            ssthresh: u64::MAX,
            pacing_rate: 0.0,
            pacing_rate_bytes: 1,
            send_quantum: mss,
            min_rtt_ns: None,
            in_reduction: false,
            undo: None,
            reduction,
            prr: None,
            usage: CwndUsage::default(),
        };
        w.update_pacing(None);
        w
    }

    /// Whether the window is below the slow-start threshold.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The smallest window after a reduction: two packets (RFC 5681 §3.1).
    pub fn min_window(&self) -> u64 {
        2 * self.mss
    }

    /// Linux `tcp_update_pacing_rate()`: ratio × cwnd / srtt.
    pub fn update_pacing(&mut self, srtt_ns: Option<u64>) {
        let rtt = srtt_ns
            .filter(|&s| s > 0)
            .map_or(DEFAULT_RTT_NS, u64_as_f64);
        let ratio = if self.cwnd < self.ssthresh / 2 {
            SLOW_START_PACING_RATIO
        } else {
            AVOIDANCE_PACING_RATIO
        };
        let rate = ratio * u64_as_f64(self.cwnd) * 1e9 / rtt;
        self.pacing_rate = if rate.is_finite() && rate >= 1.0 {
            rate
        } else {
            1.0
        };
        // `rate.min(u64::MAX as f64).max(1.0) as u64`, the rate being
        // finite and at least 1: below 2^63 its truncation fits an i64,
        // whose conversion is half the unsigned one's instructions, and
        // min and max leave it alone.
        self.pacing_rate_bytes = if self.pacing_rate < 9_223_372_036_854_775_808.0 {
            self.pacing_rate as i64 as u64
        } else {
            self.pacing_rate.min(u64::MAX as f64) as u64
        };
        self.send_quantum = send_quantum_bytes(self.pacing_rate, self.mss);
    }

    /// Bookkeeping every ACK needs, whatever the algorithm: the window
    /// usage record, and the reduction in progress (PRR while in recovery
    /// or CWR; cwnd to ssthresh when the episode is over, Linux
    /// `tcp_end_cwnd_reduction()`).
    ///
    /// Always inlined into `cubic`'s and `reno`'s `on_ack`, its only
    /// callers: out of line, the call cost 16 instructions an ACK
    /// (`ack_loop`, `cubic`: 591.6 to 575.6 per send+ACK, 2026-12-04).
    #[inline(always)]
    pub fn on_ack(&mut self, ctx: &AckContext<'_>) {
        if let Some(m) = ctx.rtt.min_ns() {
            self.min_rtt_ns = Some(m);
        }
        self.usage.on_ack(ctx.newest_acked_sent);
        match ctx.recovery {
            RecoveryState::Open => {
                self.in_reduction = false;
                if self.prr.take().is_some() && self.ssthresh != u64::MAX {
                    self.cwnd = self.ssthresh;
                }
            }
            RecoveryState::Cwr | RecoveryState::Recovery => {
                if let Some(prr) = &mut self.prr {
                    let cwnd = prr.on_ack(
                        ctx.rate.acked_bytes,
                        ctx.bytes_in_flight,
                        self.ssthresh,
                        ctx.rate.lost_bytes > 0,
                        self.mss,
                    );
                    if let Some(c) = cwnd {
                        self.cwnd = c.max(self.mss);
                    }
                }
            }
            // A timeout ended the reduction (cwnd is one packet).
            RecoveryState::Loss => self.prr = None,
        }
    }

    /// A send left `in_flight_before + bytes` in flight.
    pub fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        let after = in_flight_before.saturating_add(bytes);
        self.usage.on_sent(now, after, self.cwnd, self.mss);
        if let Some(prr) = &mut self.prr {
            prr.on_sent(bytes);
        }
    }

    /// The sender held data back for want of window (see
    /// [`crate::CongestionControl::on_held_by_cwnd`]).
    pub fn on_held_by_cwnd(&mut self, now: Instant, in_flight: u64) {
        self.usage.on_held(now, in_flight);
    }

    /// Whether an ACK may grow the window: not during a reduction (Linux
    /// runs the algorithm's `cong_avoid` only outside `TCP_CA_CWR` and
    /// `TCP_CA_Recovery`, `tcp_cong_control()`; after a timeout it grows
    /// from one packet again), and only while the sender uses the window
    /// (`tcp_is_cwnd_limited()`).
    pub fn may_grow(&self, recovery: RecoveryState) -> bool {
        matches!(recovery, RecoveryState::Open | RecoveryState::Loss)
            && self.usage.may_grow(self.cwnd, self.in_slow_start())
    }

    /// A reduction to `self.ssthresh` begins (the caller has set it):
    /// cwnd drops at once, or PRR starts from the current window.
    pub fn begin_reduction(&mut self) {
        match self.reduction {
            WindowReduction::Immediate => self.cwnd = self.ssthresh,
            WindowReduction::Prr => self.prr = Some(Prr::start(self.cwnd)),
        }
    }

    /// Called just before a reduction: remembers the window to undo to,
    /// unless a reduction is already in progress. Linux saves
    /// `prior_cwnd` and `prior_ssthresh = tcp_current_ssthresh()` (the
    /// larger of ssthresh and 3/4 of cwnd) only when not already reducing
    /// (`tcp_enter_recovery()`, `tcp_enter_loss()`).
    pub fn save_for_undo(&mut self) {
        if !self.in_reduction {
            let current = self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4);
            self.undo = Some((self.cwnd, current));
        }
        self.in_reduction = true;
    }

    /// Undoes a spurious reduction (`tcp_undo_cwnd_reduction()` with
    /// `tcp_reno_undo_cwnd()`): cwnd back to at least its prior value,
    /// ssthresh back to the prior one if that was larger. Returns whether
    /// there was anything to undo.
    pub fn undo(&mut self) -> bool {
        let Some((cwnd, ssthresh)) = self.undo.take() else {
            return false;
        };
        self.prr = None;
        self.cwnd = self.cwnd.max(cwnd);
        if ssthresh > self.ssthresh {
            self.ssthresh = ssthresh;
        }
        self.in_reduction = false;
        true
    }

    /// A retransmission timeout: the window collapses to one packet, the
    /// loss window of RFC 5681 §3.1.
    pub fn on_timeout(&mut self, reduced_ssthresh: u64) {
        self.ssthresh = reduced_ssthresh.max(self.min_window());
        self.cwnd = self.mss;
        self.prr = None;
    }

    /// QUIC's persistent congestion after the timeout's answer
    /// ([`Window::on_timeout`]): the window is `min_window`, RFC 9002
    /// §7.6.2's minimum, rather than the loss window's one packet.
    pub fn on_persistent_congestion(&mut self, min_window: u64, srtt_ns: Option<u64>) {
        self.cwnd = min_window.max(1);
        self.update_pacing(srtt_ns);
    }

    /// Keeps the window's packet count when the MSS changes.
    pub fn on_mss_change(&mut self, mss: u64, srtt_ns: Option<u64>) {
        let mss = crate::config::usable_mss(mss);
        let packets = (self.cwnd / self.mss).max(1);
        if self.ssthresh != u64::MAX {
            self.ssthresh = (self.ssthresh / self.mss).max(2).saturating_mul(mss);
        }
        self.mss = mss;
        self.cwnd = packets.saturating_mul(mss);
        self.update_pacing(srtt_ns);
    }

    pub fn pacing_rate_bytes_per_sec(&self) -> u64 {
        debug_assert_eq!(
            self.pacing_rate_bytes,
            self.pacing_rate.min(u64::MAX as f64).max(1.0) as u64
        );
        self.pacing_rate_bytes
    }

    /// The snapshot fields every loss-based controller fills the same way.
    pub fn snapshot(&self, mode: Mode) -> Snapshot {
        Snapshot {
            mode,
            cwnd_bytes: self.cwnd,
            pacing_rate_bytes_per_sec: self.pacing_rate_bytes_per_sec(),
            ssthresh_bytes: (self.ssthresh != u64::MAX).then_some(self.ssthresh),
            min_rtt: self.min_rtt_ns.map(core::time::Duration::from_nanos),
            pacing_gain: 1.0,
            cwnd_gain: 1.0,
            ..Snapshot::default()
        }
    }
}
