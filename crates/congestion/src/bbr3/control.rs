//! The control parameters: pacing rate, send quantum, offload budget,
//! ACK-aggregation allowance and cwnd (draft §5.5.8, §5.5.9, §5.6; Linux
//! `bbr_set_pacing_rate()`, `bbr_quantization_budget()`, `bbr_set_cwnd()`,
//! `bbr_bound_cwnd_for_inflight_model()`).

use super::{ceil_to_u64, Bbr3, State, NS_PER_SEC};
use crate::algorithm::AckContext;
use crate::config::Bbr3ExtraAcked;
use crate::float::{at_most_as_u64, u64_as_f64};
use crate::pacing::{send_quantum_bytes_bbr3_draft, send_quantum_bytes_bbr3_linux};
use crate::rtt_estimator::RttEstimator;

/// Before any RTT sample the initial pacing rate assumes 1 ms
/// (`InitPacingRate()`).
const DEFAULT_RTT_NS: u64 = 1_000_000;
/// Linux caps the aggregation allowance at bw × 100 ms
/// (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX_NS: f64 = 100_000_000.0;
/// Linux's extra_acked slot length, rounds (`bbr_extra_acked_win_rtts`).
const LINUX_EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// The draft's extra_acked window after STARTUP, rounds
/// (`BBR.ExtraAckedFilterLen`).
const DRAFT_EXTRA_ACKED_WIN_ROUNDS: u64 = 10;

/// The draft's extra_acked filter window, rounds: one in STARTUP, so the
/// allowance follows the growing rate, `BBR.ExtraAckedFilterLen` once the
/// pipe is full.
pub(super) fn draft_extra_acked_window(full_bw_reached: bool) -> u64 {
    if full_bw_reached {
        DRAFT_EXTRA_ACKED_WIN_ROUNDS
    } else {
        1
    }
}

/// The two BDPs BBRv3 asks for on every ACK in some state, at the
/// current bw: `BDPMultiple(1.0)` (the target inflight, checked each ACK
/// of PROBE_BW for the Reno-coexistence probe) and
/// `BDPMultiple(probe_rtt_cwnd_gain)` (PROBE_RTT's cwnd, checked each
/// ACK of PROBE_RTT). Each costs two float multiplications and a rounding
/// up, a few dozen instructions, and its inputs (bw, min_rtt, the initial
/// cwnd; the gains are configuration) change far less often than ACKs
/// arrive. [`Bbr3::refresh_bdps`] recomputes both wherever an input is
/// written, so a read is a load.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Bdps {
    /// `BDPMultiple(bw, 1.0)`.
    unit: u64,
    /// `BDPMultiple(bw, probe_rtt_cwnd_gain)`.
    probe_rtt: u64,
}

impl Bbr3 {
    // ----- pacing (§5.6.2) ----------------------------------------------------

    /// gain × bw less the pacing margin, bytes/s.
    fn rate_for(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - self.cfg.pacing_margin) * NS_PER_SEC
    }

    /// `InitPacingRate()`: startup gain × initial cwnd / (srtt or 1 ms).
    pub(super) fn init_pacing_rate(&mut self, srtt_ns: Option<u64>) {
        let rtt_ns = match srtt_ns {
            Some(s) if s > 0 => {
                self.has_seen_rtt = true;
                s
            }
            _ => DEFAULT_RTT_NS,
        };
        let bw = self.cwnd as f64 / rtt_ns.max(1) as f64;
        self.store_pacing_rate(self.rate_for(bw, self.cfg.startup_pacing_gain));
        // An input of the next pacing decision and of the send quantum.
        self.forget_pacing();
        self.quantum_current = false;
    }

    /// Sets the pacing rate and its integer form together.
    #[inline]
    fn store_pacing_rate(&mut self, rate: f64) {
        self.pacing_rate = rate;
        self.pacing_rate_bps = crate::float::rate_bytes_per_sec(rate);
    }

    /// `SetPacingRateWithGain()`: before the pipe is full the rate only
    /// rises, so app-limited samples cannot slow STARTUP.
    ///
    /// Its decision reads bw, the gain, the full-pipe flag and the pacing
    /// rate it may replace (and the configuration, which never changes).
    /// Taken again on the same inputs, it sets the rate it already set
    /// or again leaves it, so it changes nothing: a call with the gain of
    /// the last one ([`Bbr3::pacing_memo`]) returns at once while the
    /// memo stands. The memo is forgotten wherever another input is
    /// written: bw in [`Bbr3::refresh_bdps`], the flag in
    /// [`Bbr3::set_full_bw_reached`], the rate in
    /// [`Bbr3::init_pacing_rate`]; cheaper than comparing them all on
    /// every ACK, as a key did (`examples/ack_loop`). Only with the RTT
    /// seen, so the initialisation below cannot run.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64, rtt: &RttEstimator) {
        if self.has_seen_rtt && self.pacing_memo == Some(gain.to_bits()) {
            debug_assert!({
                let rate = self.rate_for(self.bw, gain);
                let acts = rate.is_finite()
                    && rate > 0.0
                    && (self.full_bw_reached || rate > self.pacing_rate);
                !acts || rate.to_bits() == self.pacing_rate.to_bits()
            });
            return;
        }
        if !self.has_seen_rtt && rtt.smoothed_ns().is_some() {
            self.init_pacing_rate(rtt.smoothed_ns());
        }
        let rate = self.rate_for(self.bw, gain);
        if rate.is_finite() && rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.store_pacing_rate(rate);
            // An input of the send quantum.
            self.quantum_current = false;
        }
        self.pacing_memo = Some(gain.to_bits());
        // Perhaps not the pacing gain's (a restart paces at 1.0): the
        // per-ACK call below judges.
        self.pacing_current = false;
    }

    /// Forgets the pacing decision's memo: one of its inputs was written.
    pub(super) fn forget_pacing(&mut self) {
        self.pacing_memo = None;
        self.pacing_current = false;
    }

    /// `SetPacingRate()`.
    ///
    /// Its early exit is [`Bbr3::pacing_current`], kept by the writes of
    /// the memo and of the pacing gain, instead of comparing the memo
    /// with the gain; debug builds compare anyway.
    #[inline(always)]
    pub(super) fn set_pacing_rate(&mut self, rtt: &RttEstimator) {
        if self.pacing_current {
            debug_assert!(
                self.has_seen_rtt && self.pacing_memo == Some(self.pacing_gain.to_bits())
            );
            return;
        }
        self.set_pacing_rate_with_gain(self.pacing_gain, rtt);
        self.pacing_current =
            self.has_seen_rtt && self.pacing_memo == Some(self.pacing_gain.to_bits());
    }

    /// `SetSendQuantum()` (§5.6.3), or Linux v3's TSO goal, which adds a
    /// min_rtt-based allowance (`bbr_tso_segs_generic()`).
    ///
    /// Recomputed only after an input was written (most ACKs write
    /// none): the pacing rate ([`Bbr3::init_pacing_rate`],
    /// [`Bbr3::set_pacing_rate_with_gain`]), min_rtt
    /// ([`Bbr3::refresh_bdps`]) or the MSS (`on_mss_change`); the
    /// configuration never changes. Cheaper than comparing a key of the
    /// inputs on every ACK (`examples/ack_loop`).
    ///
    /// Always inlined: its early exit is a test, and as a call it cost 2
    /// instructions more per ACK (`examples/ack_loop`).
    #[inline(always)]
    pub(super) fn set_send_quantum(&mut self) {
        if self.quantum_current {
            debug_assert_eq!(self.send_quantum, self.send_quantum_rules());
            return;
        }
        self.update_send_quantum();
    }

    /// [`Bbr3::set_send_quantum`] past its inline early exit.
    #[inline(never)]
    fn update_send_quantum(&mut self) {
        self.quantum_current = true;
        let quantum = self.send_quantum_rules();
        if quantum != self.send_quantum {
            self.send_quantum = quantum;
            // An input of max_inflight (the offload budget).
            self.max_inflight_memo = None;
        }
    }

    /// The send quantum its inputs give now.
    fn send_quantum_rules(&self) -> u64 {
        if self.cfg.quantum_rtt_allowance {
            send_quantum_bytes_bbr3_linux(self.pacing_rate, self.mss, self.min_rtt())
        } else {
            send_quantum_bytes_bbr3_draft(self.pacing_rate, self.mss)
        }
    }

    // ----- volumes (§5.6.4.2) -------------------------------------------------

    /// `BDPMultiple()`: gain × bw × min_rtt, rounded up; the initial cwnd
    /// before any RTT sample.
    pub(super) fn bdp_multiple(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt() {
            None => self.initial_cwnd,
            Some(rtt) => ceil_to_u64(bw * u64_as_f64(rtt) * gain),
        }
    }

    /// Recomputes [`Bdps`], and forgets what reads the same inputs:
    /// max_inflight, the pacing decision (bw) and the send quantum
    /// (min_rtt). Called after every write of an input of `BDPMultiple()`
    /// at the current bw: `bw`, `min_rtt_ns`, `initial_cwnd` (and at
    /// creation).
    pub(super) fn refresh_bdps(&mut self) {
        self.max_inflight_memo = None;
        // PROBE_RTT's BDP is an input of cwnd's cap.
        self.cwnd_cap_memo = None;
        self.forget_pacing();
        // min_rtt is an input of Linux's send quantum.
        self.quantum_current = false;
        self.bdps = Bdps {
            unit: self.bdp_multiple(self.bw, 1.0),
            probe_rtt: self.bdp_multiple(self.bw, self.cfg.probe_rtt_cwnd_gain),
        };
    }

    /// `BDPMultiple(bw, 1.0)`, from [`Bdps`].
    pub(super) fn unit_bdp(&self) -> u64 {
        debug_assert_eq!(self.bdps.unit, self.bdp_multiple(self.bw, 1.0));
        self.bdps.unit
    }

    /// `UpdateOffloadBudget()` (§5.5.8): `offload_budget_quanta` send quanta
    /// (3 for TCP's TSO/GSO and GRO, 1 for QUIC).
    fn offload_budget(&self) -> u64 {
        self.send_quantum
            .saturating_mul(self.cfg.offload_budget_quanta)
    }

    /// `QuantizationBudget()`: at least the offload budget and the minimum
    /// cwnd, plus two packets in UP so a probe can exceed a small BDP.
    pub(super) fn quantization_budget(&self, cap: u64) -> u64 {
        let mut cap = cap.max(self.offload_budget()).max(self.min_pipe_cwnd());
        if self.state == State::Up {
            cap = cap.saturating_add(2 * self.mss);
        }
        cap
    }

    /// `Inflight(gain)`.
    pub(super) fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// `UpdateMaxInflight()`: cwnd_gain × BDP + extra_acked, budgeted.
    ///
    /// Remembered until an input changes, which in steady state is far
    /// less often than ACKs arrive. Its inputs are bw, min_rtt and the
    /// initial cwnd (forgotten in [`Bbr3::refresh_bdps`]), cwnd_gain
    /// ([`Bbr3::set_cwnd_gain`]), extra_acked
    /// ([`Bbr3::update_ack_aggregation`]), whether the state is UP
    /// ([`Bbr3::set_state`]), the send quantum
    /// ([`Bbr3::set_send_quantum`]) and the MSS (`on_mss_change`), and the
    /// configuration, which never changes. Forgetting it where each is
    /// written costs less than comparing them all on every ACK, as a key
    /// did (`examples/ack_loop`); a remembered value is the one the rules
    /// would compute, bit for bit (checked under `debug_assert!`).
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    fn max_inflight(&mut self) -> u64 {
        if let Some(v) = self.max_inflight_memo {
            debug_assert_eq!(v, self.max_inflight_rules());
            return v;
        }
        let v = self.max_inflight_rules();
        self.max_inflight_memo = Some(v);
        v
    }

    /// [`Bbr3::max_inflight`] computed.
    fn max_inflight_rules(&self) -> u64 {
        let cap = self
            .bdp_multiple(self.bw, self.cwnd_gain)
            .saturating_add(self.extra_acked());
        self.quantization_budget(cap)
    }

    /// `ProbeRTTCwnd()`: half the BDP, at least the minimum cwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        debug_assert_eq!(
            self.bdps.probe_rtt,
            self.bdp_multiple(self.bw, self.cfg.probe_rtt_cwnd_gain)
        );
        self.bdps.probe_rtt.max(self.min_pipe_cwnd())
    }

    // ----- ACK aggregation (§5.5.9) ------------------------------------------

    /// `UpdateACKAggregation()`: data acknowledged beyond bw × the interval.
    pub(super) fn update_ack_aggregation<const PLAIN: bool>(&mut self, ctx: &AckContext<'_>) {
        let rs = ctx.rate;
        let linux = !PLAIN && self.cfg.extra_acked == Bbr3ExtraAcked::Linux;
        if (!PLAIN && self.cfg.extra_acked == Bbr3ExtraAcked::Off)
            || rs.acked_bytes == 0
            || (linux && rs.interval_ns.is_none())
        {
            return;
        }
        if linux && self.round_start {
            let thresh = if self.full_bw_reached {
                LINUX_EXTRA_ACKED_WIN_ROUNDS
            } else {
                1
            };
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(0x1F);
            if self.extra_acked_win_rounds >= thresh {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked_slots[self.extra_acked_win_idx] = 0;
                // extra_acked may fall: max_inflight reads it.
                self.max_inflight_memo = None;
            }
        }
        let interval_ns = u64_as_f64(ctx.now.nanos_since(self.extra_acked_interval_start));
        // `as` saturates; the test is `extra_acked_delivered <=
        // expected_f as u64`, mostly without the conversion.
        let expected_f = self.bw * interval_ns;
        let expected = if at_most_as_u64(self.extra_acked_delivered, expected_f) {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = ctx.now;
            0
        } else {
            expected_f as u64
        };
        self.extra_acked_delivered = self.extra_acked_delivered.saturating_add(rs.acked_bytes);
        let extra = self
            .extra_acked_delivered
            .saturating_sub(expected)
            .min(self.cwnd);
        if linux {
            let slot = &mut self.extra_acked_slots[self.extra_acked_win_idx];
            if extra > *slot {
                *slot = extra;
                // extra_acked may rise: max_inflight reads it.
                self.max_inflight_memo = None;
            }
        } else {
            // The window (1 round in STARTUP, then
            // `BBR.ExtraAckedFilterLen`) is set with the full-pipe flag
            // ([`Bbr3::set_full_bw_reached`]), which it follows.
            debug_assert_eq!(
                self.extra_acked_filter.window(),
                draft_extra_acked_window(self.full_bw_reached)
            );
            let round = self.round_count;
            if self.extra_acked_settled == Some((round, extra)) {
                // The filter holds only this sample, so updating it with
                // the sample again would change nothing
                // (`WindowedFilter::holds_only`): most ACKs of a round
                // bring the same extra (a steady flow's is its own size).
                debug_assert!(self.extra_acked_filter.holds_only(round, u64_as_f64(extra)));
                return;
            }
            let before = self.extra_acked_filter.get_or(0.0);
            let after = self.extra_acked_filter.update(round, u64_as_f64(extra));
            if after.to_bits() != before.to_bits() {
                // extra_acked changed: max_inflight reads it.
                self.max_inflight_memo = None;
            }
            self.extra_acked_settled = self
                .extra_acked_filter
                .holds_only(round, u64_as_f64(extra))
                .then_some((round, extra));
        }
    }

    /// `BBR.extra_acked`; Linux caps it at bw × 100 ms
    /// (`bbr_ack_aggregation_cwnd()`). Both add it in STARTUP too.
    pub(super) fn extra_acked(&self) -> u64 {
        match self.cfg.extra_acked {
            Bbr3ExtraAcked::Draft => {
                let v = self.extra_acked_filter.get_or(0.0);
                if v.is_finite() && v > 0.0 {
                    v as u64
                } else {
                    0
                }
            }
            Bbr3ExtraAcked::Linux => {
                let aggr = self.extra_acked_slots[0].max(self.extra_acked_slots[1]);
                let cap = self.bw * EXTRA_ACKED_MAX_NS;
                if cap.is_finite() && cap >= 0.0 {
                    aggr.min(cap as u64)
                } else {
                    aggr
                }
            }
            Bbr3ExtraAcked::Off => 0,
        }
    }

    // ----- cwnd (§5.6.4) --------------------------------------------------------

    /// `SetCwnd()`: towards max_inflight by at most the data acked, then
    /// the PROBE_RTT and model bounds.
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    pub(super) fn set_cwnd(&mut self, ctx: &AckContext<'_>) {
        let acked = ctx.rate.acked_bytes;
        let max_inflight = self.max_inflight();
        let mut cwnd = self.cwnd;
        if acked > 0 {
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(max_inflight);
            } else if cwnd < max_inflight || self.startup_may_grow(ctx) {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(self.min_pipe_cwnd());
        }
        // BoundCwndForProbeRTT() and BoundCwndForModel(): two caps, one
        // minimum.
        self.cwnd = cwnd.min(self.cwnd_cap()).max(self.mss);
    }

    /// The cap `BoundCwndForProbeRTT()` and `BoundCwndForModel()` put on
    /// cwnd together, the smaller of theirs.
    ///
    /// Remembered until an input changes, which is far less often than
    /// ACKs arrive: the state ([`Bbr3::set_state`]), inflight_longterm
    /// and inflight_shortterm ([`Bbr3::set_inflight_longterm`],
    /// [`Bbr3::set_inflight_shortterm`]), PROBE_RTT's BDP
    /// ([`Bbr3::refresh_bdps`]) and the MSS with the minimum cwnd
    /// (`on_mss_change`); the configuration never changes. A remembered
    /// cap is the one the rules give, checked under `debug_assert!`.
    fn cwnd_cap(&mut self) -> u64 {
        if let Some(cap) = self.cwnd_cap_memo {
            debug_assert_eq!(cap, self.cwnd_cap_rules());
            return cap;
        }
        let cap = self.cwnd_cap_rules();
        self.cwnd_cap_memo = Some(cap);
        cap
    }

    /// [`Bbr3::cwnd_cap`] computed.
    fn cwnd_cap_rules(&self) -> u64 {
        let model = self.model_cwnd_cap();
        if self.state == State::ProbeRtt {
            model.min(self.probe_rtt_cwnd())
        } else {
            model
        }
    }

    /// STARTUP grows cwnd past max_inflight while little is known: the
    /// draft until an initial window is delivered; Linux v3 while cwnd is
    /// below twice the initial window (`bbr_set_cwnd()`).
    fn startup_may_grow(&self, ctx: &AckContext<'_>) -> bool {
        if self.cfg.startup_grow_below_twice_initial_cwnd {
            self.cwnd < self.initial_cwnd.saturating_mul(2)
        } else {
            ctx.delivered_bytes < self.initial_cwnd
        }
    }

    /// `BoundCwndForModel()` (§5.6.4.7): inflight_longterm in DOWN, REFILL
    /// and UP; inflight_longterm less headroom in CRUISE and PROBE_RTT;
    /// inflight_shortterm everywhere; never below the minimum cwnd. The
    /// cap; cwnd takes the smaller of it and its own value.
    fn model_cwnd_cap(&self) -> u64 {
        let mut cap = u64::MAX;
        if self.state.is_probe_bw() && self.state != State::Cruise {
            cap = self.inflight_longterm;
        } else if self.state == State::ProbeRtt || self.state == State::Cruise {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm);
        cap.max(self.min_pipe_cwnd())
    }
}
