//! BBR v1, as Linux ships it, with the QUIC 2018 switches and the
//! jitter-robust variant beside it. The model, the state machine and the
//! Linux additions are documented for users in `docs/bbr.md` (the crate's
//! `guide::bbr` page); this note is about the code.
//!
//! # Beside the Linux core
//!
//! This file is the Linux core. Two variants change parts of it, and each
//! has a file of its own:
//!
//! - `quic_2018.rs`: the QUIC 2018 switches ([`BbrConfig::quic_2018`]),
//!   Chromium's BBR of 2018: its recovery window, its `max_ack_height`
//!   and a bandwidth window that follows the cycle.
//! - `jitter.rs`: `bbr-jitter` (seed 001, eqs. 8–11), which builds the
//!   BDP on srtt and shortens the cycle while the RTT is unstable.
//!
//! They are not separate controllers because they are not separate
//! state machines: each swaps a rule or two inside the one Linux
//! STARTUP/DRAIN/PROBE_BW/PROBE_RTT loop, and the switches combine (the
//! paper's variant is `bbr-jitter` on QUIC 2018). So there is one [`Bbr`]
//! whose behaviour a [`BbrConfig`] and an optional [`JitterConfig`]
//! select, and the variants' state and rules sit in their own files as
//! further `impl Bbr` blocks, so that this one reads as `tcp_bbr.c`.
//! One-expression switches (no quantization budget, a byte minimum cwnd,
//! no pacing margin, no policer model, min_rtt over all acked packets)
//! stay as a branch in the function they alter.
//!
//! Units: bytes, and internally bandwidth in bytes per nanosecond so that a
//! BDP is one multiplication (Linux counts packets and scaled packets/µs).
//! The public answers are in bytes/s.
//! Each rule cites the `tcp_bbr.c` function it follows.

mod jitter;
mod quic_2018;

use self::jitter::JitterState;
use self::quic_2018::{QuicRecovery, QUIC_ACK_HEIGHT_WINDOW_ROUNDS};
use crate::algorithm::{AckContext, CongestionControl, RecoveryState};
use crate::config::{AckAggregation, BbrConfig, BbrRecovery, Config, JitterConfig, MinRttSamples};
use crate::delivery_rate::{DeliveryRateSampler, RateSample};
use crate::float::{at_most_as_u64_in_range, ceil_to_u64, u64_as_f64};
use crate::pacing::send_quantum_bytes;
use crate::rng::SplitMix64;
use crate::rtt_estimator::RttEstimator;
use crate::snapshot::{LtBwSnapshot, Mode, Snapshot};
use crate::time::{duration_to_nanos, Instant};
use crate::windowed_filter::{FilterKind, WindowedFilter};
use core::time::Duration;

/// PROBE_BW pacing gains (`bbr_pacing_gain[]`): probe, drain, then cruise.
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Cycle length in normal operation (`CYCLE_LEN`).
const CYCLE_LEN: usize = 8;

/// Long-term sampling: minimum rounds per interval (`bbr_lt_intvl_min_rtts`).
const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
/// Long-term sampling: loss rate that marks policing (`bbr_lt_loss_thresh` = 50/256).
const LT_LOSS_THRESHOLD: f64 = 50.0 / 256.0;
/// Two intervals this close in ratio mean a policer (`bbr_lt_bw_ratio` = 1/8).
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or this close in absolute terms: 4 kbit/s (`bbr_lt_bw_diff`).
const LT_BW_DIFF_BYTES_PER_SEC: f64 = 4000.0 / 8.0;
/// Nanoseconds per second, to turn internal bytes/ns into bytes/s.
const NS_PER_SEC: f64 = 1e9;
/// Rounds to pace at the long-term bandwidth before re-probing (`bbr_lt_bw_max_rtts`).
const LT_BW_MAX_ROUNDS: u32 = 48;

/// extra_acked max-filter window, rounds per slot (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Cap on the aggregation allowance: bw × 100 ms (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX_NS: f64 = 100_000_000.0;
/// ACK epochs reset after this many packets acked (`bbr_ack_epoch_acked_reset_thresh`).
const ACK_EPOCH_RESET_PACKETS: u64 = 1 << 20;

/// Before any RTT sample, the initial pacing rate assumes 1 ms
/// (`bbr_init_pacing_rate_from_rtt()`).
const DEFAULT_RTT_NS: u64 = 1_000_000;

/// Long-term bandwidth (policer) sampling state (`bbr_lt_bw_sampling()`).
#[derive(Clone, Copy, Debug, Default)]
struct LongTermBw {
    is_sampling: bool,
    use_bw: bool,
    /// `is_sampling || use_bw`, kept with them (set after each write of
    /// either): the per-ACK early exit tests one flag instead of two.
    active: bool,
    bw: f64,
    rounds: u32,
    last_stamp: Instant,
    last_delivered: u64,
    last_lost: u64,
}

/// What [`Bbr::set_pacing_rate`] last saw and left: when the next call
/// sees the same bandwidth, gain and full-pipe flag, and finds the pacing
/// rate where the last call left it, it would compute the same rate and
/// take the same decision, which has already been applied (a rate equal to
/// the current one changes nothing), so it returns at once. Most ACKs in
/// steady state are such repeats. The release build learns that the
/// inputs are unchanged from [`Bbr::pacing_stale`] instead of comparing
/// this; debug builds compare it on every early return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PacingMemo {
    bw_bits: u64,
    gain_bits: u64,
    full_bw_reached: bool,
    /// `pacing_rate`'s bits after that call.
    rate_bits: u64,
}

/// The inputs of an inflight target (`bbr_inflight()`: gain × BDP
/// through `bbr_quantization_budget()`) that change from ACK to ACK,
/// floats as their bits. The others (the send quantum, the MSS and the
/// initial window) change rarely, and where they do
/// ([`Bbr::set_pacing`], [`CongestionControl::on_mss_change`]) both
/// memos are forgotten, which is cheaper than comparing them on every
/// ACK. The target is a pure function of these and those (the
/// configuration aside, which never changes), so equal keys in a memo
/// that survived give the target already computed, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InflightKey {
    bw_bits: u64,
    gain_bits: u64,
    /// The model RTT as it is held: min_rtt in ns, or, when
    /// `rtt_is_srtt`, `bbr-jitter`'s srtt as its f64 bits (the model RTT
    /// is a function of the pair, without the conversion to f64 of
    /// min_rtt that comparing the model RTT itself would cost); `None`
    /// before any sample, when the BDP is the initial window.
    rtt_held: Option<u64>,
    rtt_is_srtt: bool,
    /// PROBE_BW's probing phase, which adds two packets of headroom.
    probing: bool,
}

/// Every input of the cwnd target: an inflight target's, plus those of
/// the aggregation allowance added before the quantization budget
/// (`bbr_set_cwnd()`'s `target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TargetKey {
    inflight: InflightKey,
    /// The larger `extra_acked` slot (Linux aggregation).
    extra_acked: u64,
    /// The `max_ack_height` filter's value bits (QUIC 2018 aggregation).
    max_ack_height_bits: u64,
    full_bw_reached: bool,
}

/// BBR v1 (and, with a [`JitterConfig`], `bbr-jitter`).
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mss: u64,
    initial_cwnd: u64,
    /// [`Bbr::min_cwnd_for`] at `mss`, kept: it is read up to four times
    /// per ACK (PROBE_RTT, the cwnd floor, QUIC 2018's recovery window),
    /// and its inputs change only with the MSS.
    min_cwnd: u64,
    rng: SplitMix64,

    mode: Mode,
    cwnd: u64,
    /// Pacing rate, bytes/s.
    pacing_rate: f64,
    /// `pacing_rate` as reported ([`crate::float::rate_bytes_per_sec`]),
    /// kept with it: the sender reads it per packet, the rate changes far
    /// less often.
    pacing_rate_bps: u64,
    /// Send quantum for `pacing_rate`, cached because the cwnd target needs
    /// it on every ACK.
    send_quantum: u64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,

    /// Max filter of delivery rate (bytes/ns), indexed by round count.
    bw_filter: WindowedFilter,
    /// [`Bbr::bw`], kept: the ACK-aggregation step reads it on every ACK,
    /// and its inputs (the filter's max, the policed rate and whether it
    /// is in use) change far less often. Every write of one of them is
    /// followed by [`Bbr::model_written`], which takes it again; debug
    /// builds compare it with the rules on each read.
    bw_now: f64,
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,

    min_rtt_ns: Option<u64>,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    idle_restart: bool,

    prior_cwnd: u64,
    prev_recovery: RecoveryState,
    packet_conservation: bool,

    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,

    cycle_index: usize,
    cycle_stamp: Instant,

    lt: LongTermBw,

    ack_epoch_stamp: Instant,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rounds: u32,
    extra_acked_win_idx: usize,
    /// QUIC 2018's `max_ack_height`: max filter of aggregation samples
    /// over [`QUIC_ACK_HEIGHT_WINDOW_ROUNDS`] rounds
    /// ([`AckAggregation::Quic2018`]).
    max_ack_height: WindowedFilter,
    /// [`BbrRecovery::Quic2018`]'s state.
    quic_recovery: QuicRecovery,

    jitter: Option<JitterState>,
    /// The time of the latest delivery (Linux `tp->delivered_mstamp`).
    delivered_time: Instant,
    /// Total bytes delivered and lost (Linux `tp->delivered`, `tp->lost`).
    delivered_total: u64,
    lost_total: u64,

    /// Speed only: the last pacing decision ([`PacingMemo`]).
    pacing_memo: Option<PacingMemo>,
    /// Speed only: whether an input of the per-ACK pacing decision (the
    /// bandwidth, the pacing gain, the full-pipe flag, the pacing rate)
    /// may have been written since [`Bbr::set_pacing_rate_rules`] last
    /// ran for it. Set where each is written, so that the common ACK
    /// tests one flag instead of building and comparing the
    /// [`PacingMemo`] key (which debug builds still compare on every
    /// skip).
    pacing_stale: bool,
    /// Speed only: whether an input of [`Bbr::update_gains`] (the mode,
    /// the gain-cycle phase, whether the policed rate is in use) or its
    /// output (the pacing gain, which the policer model also writes) may
    /// have been written since it last ran. Set where each is written.
    gains_stale: bool,
    /// Speed only: whether an input of the cwnd target ([`TargetKey`])
    /// may have been written since [`Bbr::cwnd_target`] last built its
    /// key; while clear, the remembered target is returned without
    /// building and comparing the key (debug builds still do).
    targets_stale: bool,
    /// Speed only: the same for the inflight target ([`InflightKey`],
    /// [`Bbr::inflight_target_memo`]).
    inflight_stale: bool,
    /// `bbr_ack_epoch_acked_reset_thresh` in bytes at `mss`, kept with
    /// the MSS as [`Bbr::min_cwnd`] is: it is read on every ACK.
    ack_epoch_reset_bytes: u64,
    /// Speed only: the last cwnd target and its inputs ([`TargetKey`]).
    target_memo: Option<(TargetKey, u64)>,
    /// Speed only: the last inflight target the gain cycle and DRAIN
    /// asked for, and its inputs ([`InflightKey`]).
    inflight_memo: Option<(InflightKey, u64)>,
    /// Speed only: [`Bbr::runs_plain`], fixed at construction (neither
    /// the configuration nor the jitter variant changes afterwards), so
    /// that each ACK picks the rules' copy with those switches resolved
    /// at compile time instead of testing each one.
    plain: bool,
}

impl Bbr {
    /// Creates BBR; `jitter` selects the `bbr-jitter` variant (`bbr_init()`).
    pub fn new(config: &Config, jitter: Option<JitterConfig>, now: Instant) -> Self {
        let mss = crate::config::usable_mss(config.mss_bytes);
        let initial_cwnd = config.initial_cwnd_packets.max(1).saturating_mul(mss);
        let mut cfg = config.bbr;
        cfg.recovery = cfg.recovery.resolve(config.recovery_exit);
        let mut bbr = Bbr {
            cfg,
            mss,
            initial_cwnd,
            min_cwnd: Self::min_cwnd_for(&cfg, mss),
            rng: SplitMix64::new(config.seed),
            mode: Mode::Startup,
            cwnd: initial_cwnd,
            pacing_rate: 0.0,
            pacing_rate_bps: 1,
            send_quantum: 2 * mss,
            has_seen_rtt: false,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            bw_filter: WindowedFilter::new(FilterKind::Max, cfg.bw_window_rounds),
            // An empty filter's 0, and the policed rate not in use.
            bw_now: 0.0,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            min_rtt_ns: None,
            min_rtt_stamp: now,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            prior_cwnd: 0,
            prev_recovery: RecoveryState::Open,
            packet_conservation: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_index: 0,
            cycle_stamp: now,
            lt: LongTermBw::default(),
            ack_epoch_stamp: now,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rounds: 0,
            extra_acked_win_idx: 0,
            max_ack_height: WindowedFilter::new(FilterKind::Max, QUIC_ACK_HEIGHT_WINDOW_ROUNDS),
            quic_recovery: QuicRecovery::default(),
            jitter: jitter.map(JitterState::new),
            delivered_time: now,
            delivered_total: 0,
            lost_total: 0,
            pacing_memo: None,
            pacing_stale: true,
            gains_stale: true,
            targets_stale: true,
            inflight_stale: true,
            ack_epoch_reset_bytes: ACK_EPOCH_RESET_PACKETS.saturating_mul(mss),
            target_memo: None,
            inflight_memo: None,
            plain: false,
        };
        bbr.plain = bbr.runs_plain();
        bbr.reset_lt_bw_sampling(now, 0, 0);
        bbr.init_pacing_rate_from_rtt(None);
        bbr
    }

    /// Whether every per-ACK switch but the recovery rule is at its
    /// Linux value: no jitter variant, a bandwidth window in rounds, the
    /// policer model, Linux's `extra_acked`, min_rtt from the latest
    /// sample, PROBE_RTT on. [`CongestionControl::on_ack`] then runs
    /// [`Bbr::on_ack_as`]`::<true>`, where each of these tests is the
    /// constant it would evaluate to; otherwise `::<false>`, which tests
    /// them as before.
    fn runs_plain(&self) -> bool {
        self.jitter.is_none()
            && !self.cfg.bw_window_follows_cycle
            && self.cfg.lt_bw
            && self.cfg.extra_acked
            && self.cfg.ack_aggregation == AckAggregation::Linux
            && self.cfg.min_rtt_samples == MinRttSamples::Latest
            && self.cfg.probe_rtt
    }

    // ----- model accessors -------------------------------------------------

    /// The max-filtered bandwidth estimate, bytes/ns (`bbr_max_bw()`).
    fn max_bw(&self) -> f64 {
        self.bw_filter.get_or_zero()
    }

    /// The bandwidth BBR uses: the policed rate when a policer was detected,
    /// otherwise the max filter (`bbr_bw()`).
    fn bw(&self) -> f64 {
        debug_assert_eq!(self.bw_now.to_bits(), self.bw_rules().to_bits());
        self.bw_now
    }

    /// [`Bbr::bw`] computed.
    fn bw_rules(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// gain × bw × RTT in bytes, rounded up; the initial window before any
    /// RTT sample (`bbr_bdp()`).
    fn bdp(&self, bw: f64, gain: f64) -> u64 {
        match self.model_rtt_ns() {
            None => self.initial_cwnd,
            Some(rtt_ns) => ceil_to_u64(bw * rtt_ns * gain),
        }
    }

    /// Headroom for send bursts: three send quanta, rounded up to an even
    /// number of packets, plus two packets in the probing phase so the probe
    /// can actually exceed the BDP (`bbr_quantization_budget()`).
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        if !self.cfg.quantization_budget {
            // QUIC 2018 (`GetTargetCongestionWindow()`): gain × BDP exactly.
            return cwnd;
        }
        let mut c = cwnd.saturating_add(self.send_quantum.saturating_mul(3));
        let two = 2 * self.mss;
        c = c.div_ceil(two).saturating_mul(two);
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            c = c.saturating_add(two);
        }
        c
    }

    /// Inflight target for `gain` (`bbr_inflight()`).
    fn inflight_target(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// The cwnd floor: `bbr_cwnd_min_target` packets, or a fixed byte
    /// count (QUIC's `kDefaultMinimumCongestionWindow`).
    fn min_cwnd(&self) -> u64 {
        debug_assert_eq!(self.min_cwnd, Self::min_cwnd_for(&self.cfg, self.mss));
        self.min_cwnd
    }

    /// [`Bbr::min_cwnd`] computed, for segments of `mss` bytes.
    fn min_cwnd_for(cfg: &BbrConfig, mss: u64) -> u64 {
        cfg.min_cwnd_bytes
            .unwrap_or_else(|| cfg.min_cwnd_packets.saturating_mul(mss))
    }

    // ----- pacing ----------------------------------------------------------

    /// gain × bw, less the pacing margin, in bytes/s (`bbr_rate_bytes_per_sec()`).
    fn rate_for(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - self.cfg.pacing_margin) * NS_PER_SEC
    }

    /// Sets the pacing rate (bytes/s) and the send quantum that follows from it.
    fn set_pacing(&mut self, rate: f64) {
        if rate != self.pacing_rate {
            self.pacing_rate = rate;
            self.pacing_rate_bps = crate::float::rate_bytes_per_sec(rate);
            self.pacing_stale = true;
            let quantum = send_quantum_bytes(rate, self.mss);
            if quantum != self.send_quantum {
                self.send_quantum = quantum;
                self.forget_targets();
            }
        }
    }

    /// Forgets the remembered inflight and cwnd targets: an input left out
    /// of their keys ([`InflightKey`]) changed.
    fn forget_targets(&mut self) {
        self.inflight_memo = None;
        self.target_memo = None;
        self.targets_written();
    }

    /// An input of both the cwnd and the inflight target (the model's
    /// RTT, say) may have changed: each must look at its inputs again on
    /// its next call.
    fn targets_written(&mut self) {
        self.targets_stale = true;
        self.inflight_stale = true;
    }

    /// An input shared by the pacing decision and both targets (the
    /// bandwidth, a gain, the full-pipe flag, min_rtt, the mode or the
    /// gain-cycle phase) may have changed: each must look at its inputs
    /// again on its next call.
    ///
    /// Also where [`Bbr::bw`] is taken again: each write of the filter's
    /// max or of the policed rate or its use is followed by this call.
    fn model_written(&mut self) {
        self.bw_now = self.bw_rules();
        self.pacing_stale = true;
        self.targets_written();
    }

    /// An input of [`Bbr::update_gains`] (the mode, the gain-cycle phase,
    /// the policed rate's use) or the pacing gain itself may have
    /// changed: the gains must be set again, and so must everything that
    /// rests on them ([`Bbr::model_written`]).
    fn gains_input_written(&mut self) {
        self.gains_stale = true;
        self.model_written();
    }

    /// The initial pacing rate: high_gain × initial cwnd / RTT, using srtt
    /// when one exists and 1 ms otherwise (`bbr_init_pacing_rate_from_rtt()`).
    fn init_pacing_rate_from_rtt(&mut self, srtt_ns: Option<u64>) {
        let rtt_ns = match srtt_ns {
            Some(s) if s > 0 => {
                self.has_seen_rtt = true;
                s
            }
            _ => DEFAULT_RTT_NS,
        };
        let bw = self.cwnd as f64 / rtt_ns.max(1) as f64;
        self.set_pacing(self.rate_for(bw, self.cfg.high_gain));
    }

    /// Paces at gain × bw; before the pipe is full the rate only rises, so a
    /// noisy early sample cannot slow STARTUP (`bbr_set_pacing_rate()`).
    ///
    /// Always inlined: its early exit is a few comparisons, and as a call
    /// (which `#[inline]` left it) it cost 8 more instructions per ACK.
    ///
    /// The per-ACK call, at `bw()` and the pacing gain, both read only
    /// past the early exit.
    #[inline(always)]
    fn set_pacing_rate(&mut self, rtt: &RttEstimator) {
        // With the RTT seen (so the initialisation below cannot run), the
        // same inputs and the rate where the last call left it, this call
        // would repeat the last one's decision, already in force.
        //
        // Whether the inputs are the same is known without comparing
        // them: every place that writes one sets `pacing_stale`, and only
        // this per-ACK call (at the pacing gain) clears it. Debug builds
        // compare the remembered key anyway.
        //
        // The flag also stands for "no RTT seen yet": it starts set and
        // is cleared only below, and only once an RTT was seen, so while
        // none was it stays set and this one test covers both (a test
        // fewer per ACK).
        debug_assert!(self.has_seen_rtt || self.pacing_stale);
        if !self.pacing_stale {
            debug_assert_eq!(
                self.pacing_memo,
                Some(PacingMemo {
                    bw_bits: self.bw().to_bits(),
                    gain_bits: self.pacing_gain.to_bits(),
                    full_bw_reached: self.full_bw_reached,
                    rate_bits: self.pacing_rate.to_bits(),
                })
            );
            return;
        }
        self.set_pacing_rate_rules(self.bw(), self.pacing_gain, rtt);
        self.pacing_stale = !self.has_seen_rtt;
    }

    /// [`Bbr::set_pacing_rate`] past its inline early exit.
    fn set_pacing_rate_rules(&mut self, bw: f64, gain: f64, rtt: &RttEstimator) {
        if !self.has_seen_rtt && rtt.smoothed_ns().is_some() {
            self.init_pacing_rate_from_rtt(rtt.smoothed_ns());
        }
        let memo = PacingMemo {
            bw_bits: bw.to_bits(),
            gain_bits: gain.to_bits(),
            full_bw_reached: self.full_bw_reached,
            rate_bits: 0,
        };
        let rate = self.rate_for(bw, gain);
        if rate.is_finite() && rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.set_pacing(rate);
        }
        self.pacing_memo = Some(PacingMemo {
            rate_bits: self.pacing_rate.to_bits(),
            ..memo
        });
    }

    // ----- mode changes ----------------------------------------------------

    /// `bbr_reset_startup_mode()`.
    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
        self.gains_input_written();
    }

    /// Enters PROBE_BW at a random phase other than the 0.75 drain phase:
    /// starting there would cost a round of utilisation for no benefit, as
    /// there is no probe queue to drain (`bbr_reset_probe_bw_mode()`).
    fn reset_probe_bw_mode(&mut self, now: Instant) {
        self.mode = Mode::ProbeBw;
        self.gains_input_written();
        let len = self.cycle_len() as u64;
        // Pick from {1, ..., len-1}, then advance once: lands anywhere but 1.
        self.cycle_index = (len - 1 - self.rng.below(len - 1)) as usize;
        self.advance_cycle_phase(now);
    }

    /// `bbr_reset_mode()`.
    fn reset_mode(&mut self, now: Instant) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.reset_startup_mode();
        }
    }

    /// Remembers cwnd before recovery or PROBE_RTT cut it (`bbr_save_cwnd()`).
    fn save_cwnd(&mut self) {
        if self.prev_recovery < RecoveryState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    // ----- the per-ACK model update ----------------------------------------

    /// Whether this ACK's rate sample ends a round and starts the next:
    /// it acknowledges a packet sent after the previous round ended
    /// (`bbr_update_bw()`); invalid samples never do.
    fn starts_round(&self, rs: &RateSample) -> bool {
        rs.delivery_rate_bytes_per_ns().is_some()
            && rs.prior_delivered_bytes >= self.next_round_delivered
    }

    /// Counts rounds and feeds the bandwidth filter (`bbr_update_bw()`).
    /// A round ends when a packet sent after the previous round ended is
    /// acked. Invalid samples are skipped entirely, as Linux does.
    fn update_bw<const PLAIN: bool>(&mut self, rs: &RateSample, ctx: &AckContext<'_>) {
        self.round_start = false;
        let Some(rate) = rs.delivery_rate_bytes_per_ns() else {
            return;
        };
        if self.starts_round(rs) {
            self.next_round_delivered = ctx.delivered_bytes;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling_as::<PLAIN>(rs.lost_bytes, rs.is_app_limited, ctx.now);
        // App-limited samples underestimate the path, so they may only raise
        // the estimate, never hold it up or replace a better one.
        let max_bw = self.max_bw();
        if !rs.is_app_limited || rate >= max_bw {
            // A max filter (`Bbr::new`), and `rate` is never NaN: a
            // finite byte count over an interval of at least 1 ns.
            let new_max = self.bw_filter.update_max(self.round_count, rate);
            // `max_bw()` after the update; the pacing decision rests on it.
            if new_max.to_bits() != max_bw.to_bits() {
                self.model_written();
            }
        }
    }

    /// Measures ACK aggregation: data acked in the current epoch beyond what
    /// bw predicts (`bbr_update_ack_aggregation()`).
    fn update_ack_aggregation<const PLAIN: bool>(&mut self, rs: &RateSample) {
        if !(PLAIN || self.cfg.extra_acked) || rs.acked_bytes == 0 || rs.interval_ns.is_none() {
            return;
        }
        if !PLAIN && self.cfg.ack_aggregation == AckAggregation::Quic2018 {
            return self.update_max_ack_height(rs.acked_bytes);
        }
        if self.round_start {
            self.extra_acked_win_rounds = (self.extra_acked_win_rounds + 1).min(0x1F);
            if self.extra_acked_win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.extra_acked_win_rounds = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
                self.targets_stale = true;
            }
        }
        let epoch_ns = u64_as_f64(self.delivered_time.nanos_since(self.ack_epoch_stamp));
        // The data bw predicts for the epoch: `expected_f as u64` (`as`
        // saturates, and everything after is saturating arithmetic).
        let expected_f = self.bw() * epoch_ns;
        // A new epoch starts when ACKs arrive no faster than bw predicts, or
        // when the epoch has run so long its arithmetic would lose meaning.
        //
        // Both are in the range where the comparison needs no tests
        // (`at_most_as_u64_in_range`): Linux's aggregation (this path;
        // QUIC 2018's returned above, and the choice never changes) keeps
        // `ack_epoch_acked` at most the reset size, 2^20 packets of at
        // most `MAX_MSS_BYTES` (< 2^32), so below 2^52; and `expected_f`
        // is a product of two finite non-negative numbers, neither above
        // 2^64 (bw is a byte count over at least 1 ns, or the mean of two
        // such; the epoch a u64 of nanoseconds), so finite and not
        // negative. A comparison and two branches fewer per ACK.
        let within_expected = at_most_as_u64_in_range(self.ack_epoch_acked, expected_f);
        let reset_bytes = self.ack_epoch_reset_bytes;
        debug_assert_eq!(
            reset_bytes,
            ACK_EPOCH_RESET_PACKETS.saturating_mul(self.mss)
        );
        let expected = if within_expected
            || self.ack_epoch_acked.saturating_add(rs.acked_bytes) >= reset_bytes
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = self.delivered_time;
            0
        } else {
            expected_f as u64
        };
        self.ack_epoch_acked = self
            .ack_epoch_acked
            .saturating_add(rs.acked_bytes)
            .min(reset_bytes);
        let extra = self.ack_epoch_acked.saturating_sub(expected).min(self.cwnd);
        // The index is 0 or 1 (it starts at 0 and only flips), so `& 1`
        // leaves it as it is, and lets the compiler drop the bounds check
        // (two instructions per ACK).
        let idx = self.extra_acked_win_idx & 1;
        debug_assert_eq!(idx, self.extra_acked_win_idx);
        if extra > self.extra_acked[idx] {
            self.extra_acked[idx] = extra;
            self.targets_stale = true;
        }
    }

    /// The aggregation allowance added to the cwnd target, once the pipe is
    /// full, capped at bw × 100 ms (`bbr_ack_aggregation_cwnd()`); QUIC
    /// 2018's `max_ack_height` is added whole.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.cfg.extra_acked || !self.full_bw_reached {
            return 0;
        }
        if self.cfg.ack_aggregation == AckAggregation::Quic2018 {
            return self.max_ack_height_cwnd();
        }
        let max_aggr = self.bw() * EXTRA_ACKED_MAX_NS;
        let aggr =
            self.cfg.extra_acked_gain * u64_as_f64(self.extra_acked[0].max(self.extra_acked[1]));
        let v = aggr.min(max_aggr);
        if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        }
    }

    /// Whether the current gain phase is over (`bbr_is_next_cycle_phase()`).
    fn is_next_cycle_phase(&mut self, ctx: &AckContext<'_>) -> bool {
        let rs = ctx.rate;
        let min_rtt_ns = self.min_rtt_ns.unwrap_or(0);
        let is_full_length = self.delivered_time.nanos_since(self.cycle_stamp) > min_rtt_ns;
        if self.pacing_gain == 1.0 {
            return is_full_length;
        }
        let inflight = self.in_net_at_edt(rs.prior_in_flight, ctx);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            // Probe until the probe actually put 1.25 BDP in flight, unless a
            // loss says the extra data is not fitting.
            return is_full_length
                && (rs.lost_bytes > 0
                    || inflight >= self.inflight_target_memo(bw, self.pacing_gain));
        }
        // Drain phase: done early once the probe's queue is gone.
        is_full_length || inflight <= self.inflight_target_memo(bw, 1.0)
    }

    /// What will still be in the network when the next packet leaves
    /// (`bbr_packets_in_net_at_edt()`): inflight, plus the next burst if
    /// the gain is raising inflight, less what the path delivers at bw
    /// until the pacer's departure time. Without a departure time from the
    /// transport, inflight as it is.
    fn in_net_at_edt(&self, inflight: u64, ctx: &AckContext<'_>) -> u64 {
        let Some(edt) = ctx.next_departure else {
            return inflight;
        };
        let ahead_ns = edt.nanos_since(ctx.now);
        let delivered_by_then = ceil_to_u64(self.bw() * u64_as_f64(ahead_ns));
        let mut at_edt = inflight;
        if self.pacing_gain > 1.0 {
            at_edt = at_edt.saturating_add(ctx.next_burst_bytes);
        }
        at_edt.saturating_sub(delivered_by_then)
    }

    /// `bbr_advance_cycle_phase()`.
    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_index = (self.cycle_index + 1) % self.cycle_len();
        self.cycle_stamp = now;
        self.gains_input_written();
    }

    /// `bbr_update_cycle_phase()`.
    ///
    /// Always inlined, as [`Bbr::check_drain`] is: with two copies of the
    /// per-ACK rules ([`Bbr::on_ack_as`]) LLVM called both out of line,
    /// a call and three register saves per ACK for a test or two.
    #[inline(always)]
    fn update_cycle_phase(&mut self, ctx: &AckContext<'_>) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ctx) {
            self.advance_cycle_phase(self.delivered_time);
        }
    }

    /// Full-pipe detection: three rounds without 25 % growth, judged only on
    /// rounds that were not app-limited (`bbr_check_full_bw_reached()`).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let max_bw = self.max_bw();
        if max_bw >= self.full_bw * self.cfg.full_bw_threshold {
            self.full_bw = max_bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= self.cfg.full_bw_rounds;
        self.model_written();
    }

    /// STARTUP → DRAIN when the pipe is full; DRAIN → PROBE_BW once inflight
    /// is down to one BDP (`bbr_check_drain()`).
    #[inline(always)]
    fn check_drain(&mut self, ctx: &AckContext<'_>) {
        // Both steps act only in STARTUP or DRAIN: one test of the mode
        // for the ACKs of every other (most ACKs), where there were two.
        if !matches!(self.mode, Mode::Startup | Mode::Drain) {
            return;
        }
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.gains_input_written();
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(ctx.bytes_in_flight, ctx)
                <= self.inflight_target_memo(self.max_bw(), 1.0)
        {
            self.reset_probe_bw_mode(ctx.now);
        }
    }

    /// Leaves PROBE_RTT once its hold time and round are both done
    /// (`bbr_check_probe_rtt_done()`).
    fn check_probe_rtt_done(&mut self, now: Instant) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        // The hold measured RTprop: the estimate is fresh again.
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now);
    }

    /// Tracks min_rtt and drives PROBE_RTT (`bbr_update_min_rtt()`).
    fn update_min_rtt<const PLAIN: bool>(
        &mut self,
        ctx: &AckContext<'_>,
        sampler: &mut DeliveryRateSampler,
    ) {
        let now = ctx.now;
        let expired = now.nanos_since(self.min_rtt_stamp) > self.cfg.min_rtt_window_ns;
        let samples = if PLAIN {
            MinRttSamples::Latest
        } else {
            self.cfg.min_rtt_samples
        };
        let (sample, replaces_expired) = match samples {
            // An expired estimate is replaced by any sample not inflated by
            // a delayed ACK (`bbr_update_min_rtt()`: `!rs->is_ack_delayed`).
            MinRttSamples::Latest => (ctx.rtt_sample, !ctx.ack_maybe_delayed),
            // QUIC 2018: the ACK's smallest per-packet RTT, unconditionally.
            MinRttSamples::AllAcked => (ctx.min_acked_rtt, true),
        };
        if let Some(rtt) = sample {
            let rtt_ns = duration_to_nanos(rtt);
            let lower = self.min_rtt_ns.is_none_or(|m| rtt_ns < m);
            if lower || (expired && replaces_expired) {
                self.min_rtt_ns = Some(rtt_ns);
                self.min_rtt_stamp = now;
                self.model_written();
            }
        }
        if (PLAIN || self.cfg.probe_rtt)
            && expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.gains_input_written();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // PROBE_RTT's deliberately low rate must not lower the bw
            // estimate: mark the pipe app-limited.
            sampler.on_app_limited(ctx.bytes_in_flight);
            match self.probe_rtt_done_stamp {
                None if ctx.bytes_in_flight <= self.min_cwnd() => {
                    self.probe_rtt_done_stamp = Some(
                        now.saturating_add(Duration::from_nanos(self.cfg.probe_rtt_duration_ns)),
                    );
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = ctx.delivered_bytes;
                }
                Some(_) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done {
                        self.check_probe_rtt_done(now);
                    }
                }
                None => {}
            }
        }
        // Tested first: the flag is set only by a restart from idle, so
        // most ACKs find nothing to clear.
        if self.idle_restart && ctx.rate.delivered_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains()`. Skipped while its inputs and outputs are
    /// as it left them ([`Bbr::gains_stale`]), as it would write the same
    /// gains again (debug builds compute them and compare).
    fn update_gains(&mut self) {
        if !self.gains_stale {
            debug_assert_eq!((self.pacing_gain.to_bits(), self.cwnd_gain.to_bits()), {
                let (p, c) = self.gains_rules();
                (p.to_bits(), c.to_bits())
            });
            return;
        }
        self.gains_stale = false;
        let (p, c) = self.gains_rules();
        self.model_written();
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// The pacing and cwnd gains [`Bbr::update_gains`] sets.
    fn gains_rules(&self) -> (f64, f64) {
        match self.mode {
            Mode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            Mode::Drain => (self.cfg.drain_gain, self.cfg.high_gain),
            Mode::ProbeBw => {
                let g = if self.lt.use_bw {
                    1.0
                } else {
                    PACING_GAIN_CYCLE[self.cycle_index % CYCLE_LEN]
                };
                (g, self.cfg.cwnd_gain)
            }
            _ => (1.0, 1.0),
        }
    }

    // ----- long-term bandwidth (policer) model -----------------------------

    fn reset_lt_bw_sampling_interval(&mut self, now: Instant, delivered: u64, lost: u64) {
        self.lt.last_stamp = now;
        self.lt.last_delivered = delivered;
        self.lt.last_lost = lost;
        self.lt.rounds = 0;
    }

    fn reset_lt_bw_sampling(&mut self, now: Instant, delivered: u64, lost: u64) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.gains_input_written();
        self.lt.is_sampling = false;
        self.lt.active = false;
        self.reset_lt_bw_sampling_interval(now, delivered, lost);
    }

    /// An interval ended with bandwidth `bw`. Two consecutive intervals that
    /// agree within 1/8 (or 4 kbit/s) indicate a policer: use their average
    /// (`bbr_lt_bw_interval_done()`).
    fn lt_bw_interval_done(&mut self, bw: f64, delivered: u64, lost: u64) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw
                || self.rate_for(diff, 1.0) <= LT_BW_DIFF_BYTES_PER_SEC
            {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.lt.active = true;
                self.pacing_gain = 1.0;
                self.gains_input_written();
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.model_written();
        self.reset_lt_bw_sampling_interval(self.delivered_time, delivered, lost);
    }

    /// Token-bucket policers show up as sustained high loss at a flat
    /// delivery rate. Sample intervals of 4–16 rounds that start and end with
    /// loss; an interval with ≥ 20 % loss yields a long-term bandwidth sample
    /// (`bbr_lt_bw_sampling()`, paper §6.3).
    #[inline]
    fn lt_bw_sampling(&mut self, sample_lost: u64, is_app_limited: bool, now: Instant) {
        self.lt_bw_sampling_as::<false>(sample_lost, is_app_limited, now);
    }

    /// [`Bbr::lt_bw_sampling`]; `PLAIN` ([`Bbr::runs_plain`]) says the
    /// model is on.
    #[inline(always)]
    fn lt_bw_sampling_as<const PLAIN: bool>(
        &mut self,
        sample_lost: u64,
        is_app_limited: bool,
        now: Instant,
    ) {
        // The common ACK, checked inline: without the model, or with no
        // interval open, the policed rate not in use and no loss to open
        // one, the rules below change nothing.
        debug_assert_eq!(self.lt.active, self.lt.use_bw || self.lt.is_sampling);
        if !(PLAIN || self.cfg.lt_bw) || (!self.lt.active && sample_lost == 0) {
            return;
        }
        self.lt_bw_sampling_rules(sample_lost, is_app_limited, now);
    }

    /// [`Bbr::lt_bw_sampling`] past its inline early exit.
    fn lt_bw_sampling_rules(&mut self, sample_lost: u64, is_app_limited: bool, now: Instant) {
        let (delivered, lost) = (self.delivered_total, self.lost_total);
        if self.lt.use_bw {
            // Re-probe the path after pacing at the policed rate for a while.
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    self.reset_lt_bw_sampling(self.delivered_time, delivered, lost);
                    self.reset_probe_bw_mode(now);
                }
            }
            return;
        }
        // Start an interval only at a loss, so it spans from loss to loss,
        // as a token bucket's drops recur once it is empty.
        if !self.lt.is_sampling {
            if sample_lost == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(self.delivered_time, delivered, lost);
            self.lt.is_sampling = true;
            self.lt.active = true;
        }
        // App-limited data says nothing about a policer.
        if is_app_limited {
            self.reset_lt_bw_sampling(self.delivered_time, delivered, lost);
            return;
        }
        if self.round_start {
            self.lt.rounds += 1;
        }
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            self.reset_lt_bw_sampling(self.delivered_time, delivered, lost);
            return;
        }
        if sample_lost == 0 {
            return;
        }
        let int_lost = lost.saturating_sub(self.lt.last_lost);
        let int_delivered = delivered.saturating_sub(self.lt.last_delivered);
        if int_delivered == 0 || (int_lost as f64) < LT_LOSS_THRESHOLD * int_delivered as f64 {
            return;
        }
        let t_ns = self.delivered_time.nanos_since(self.lt.last_stamp);
        if t_ns < 1_000_000 {
            return; // Linux measures in ms and skips intervals under 1 ms.
        }
        let bw = int_delivered as f64 / t_ns as f64;
        self.lt_bw_interval_done(bw, delivered, lost);
    }

    // ----- cwnd ------------------------------------------------------------

    /// Loss-recovery adjustments. Returns true while packet conservation
    /// governs cwnd (`bbr_set_cwnd_to_recover_or_restore()`).
    fn set_cwnd_to_recover_or_restore(&mut self, ctx: &AckContext<'_>, cwnd: &mut u64) -> bool {
        let rs = ctx.rate;
        let state = ctx.recovery;
        let acked = rs.acked_bytes;
        // Lost packets leave the pipe: take them out of the window.
        if rs.lost_bytes > 0 {
            *cwnd = cwnd.saturating_sub(rs.lost_bytes).max(self.mss);
        }
        if state == RecoveryState::Recovery && self.prev_recovery != RecoveryState::Recovery {
            // Entering recovery: send one packet per packet acked for the
            // first round (packet conservation).
            if self.cfg.packet_conservation {
                self.packet_conservation = true;
                self.next_round_delivered = ctx.delivered_bytes;
            }
            *cwnd = ctx.bytes_in_flight.saturating_add(acked);
        } else if self.prev_recovery >= RecoveryState::Recovery && state < RecoveryState::Recovery {
            // Leaving recovery: restore the pre-loss window.
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_recovery = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(ctx.bytes_in_flight.saturating_add(acked));
            return true;
        }
        false
    }

    /// The inputs of [`Bbr::inflight_target`] for `bw` and `gain`.
    fn inflight_key(&self, bw: f64, gain: f64) -> InflightKey {
        let (rtt_held, rtt_is_srtt) = self.model_rtt_held();
        InflightKey {
            bw_bits: bw.to_bits(),
            gain_bits: gain.to_bits(),
            rtt_held,
            rtt_is_srtt,
            probing: self.mode == Mode::ProbeBw && self.cycle_index == 0,
        }
    }

    /// [`Bbr::inflight_target`], remembered with its inputs: the gain
    /// cycle's probe and drain phases and DRAIN ask for it on every ACK,
    /// and its inputs change far less often than ACKs arrive.
    ///
    /// The lookup is always inlined (3 instructions fewer per ACK than a
    /// call); computing and remembering a new target is not.
    #[inline(always)]
    fn inflight_target_memo(&mut self, bw: f64, gain: f64) -> u64 {
        // Nothing the key is built from written since it was last built:
        // each caller passes the same bandwidth and gain until the phase,
        // the mode or the gains change, which set `inflight_stale`.
        if !self.inflight_stale {
            if let Some((k, target)) = self.inflight_memo {
                debug_assert_eq!(k, self.inflight_key(bw, gain));
                debug_assert_eq!(target, self.inflight_target(bw, gain));
                return target;
            }
        }
        self.refresh_inflight_target(bw, gain)
    }

    /// [`Bbr::inflight_target_memo`] past its lookup: the key built and
    /// compared, and the target computed if it changed. Out of line as a
    /// whole, key comparison included: inline, the key (built in memory)
    /// gave the gain cycle's per-ACK phase check a stack frame and three
    /// register saves it needs only after an input changed
    /// (`examples/ack_loop`).
    #[inline(never)]
    fn refresh_inflight_target(&mut self, bw: f64, gain: f64) -> u64 {
        self.inflight_stale = false;
        let key = self.inflight_key(bw, gain);
        if let Some((k, target)) = self.inflight_memo {
            if k == key {
                debug_assert_eq!(target, self.inflight_target(bw, gain));
                return target;
            }
        }
        self.remember_inflight_target(key, bw, gain)
    }

    /// [`Bbr::refresh_inflight_target`] for a key that changed.
    fn remember_inflight_target(&mut self, key: InflightKey, bw: f64, gain: f64) -> u64 {
        let target = self.inflight_target(bw, gain);
        self.inflight_memo = Some((key, target));
        target
    }

    /// The cwnd target: gain × BDP plus the aggregation allowance, with
    /// the quantization budget (`bbr_set_cwnd()`'s `target`). Remembered
    /// with its inputs ([`TargetKey`]), which in steady state change far
    /// less often than ACKs arrive.
    fn cwnd_target(&mut self) -> u64 {
        if !self.targets_stale {
            if let Some((k, target)) = self.target_memo {
                debug_assert_eq!(k, self.target_key(self.bw()));
                debug_assert_eq!(target, self.cwnd_target_rules(self.bw()));
                return target;
            }
        }
        self.targets_stale = false;
        let bw = self.bw();
        let key = self.target_key(bw);
        if let Some((k, target)) = self.target_memo {
            if k == key {
                debug_assert_eq!(target, self.cwnd_target_rules(bw));
                return target;
            }
        }
        let target = self.cwnd_target_rules(bw);
        self.target_memo = Some((key, target));
        target
    }

    /// The inputs of the cwnd target at bandwidth `bw`.
    fn target_key(&self, bw: f64) -> TargetKey {
        TargetKey {
            inflight: self.inflight_key(bw, self.cwnd_gain),
            extra_acked: self.extra_acked[0].max(self.extra_acked[1]),
            max_ack_height_bits: self.max_ack_height.get_or(0.0).to_bits(),
            full_bw_reached: self.full_bw_reached,
        }
    }

    /// [`Bbr::cwnd_target`] computed, at bandwidth `bw`.
    fn cwnd_target_rules(&self, bw: f64) -> u64 {
        let target = self.bdp(bw, self.cwnd_gain);
        let target = target.saturating_add(self.ack_aggregation_cwnd());
        self.quantization_budget(target)
    }

    /// Moves cwnd towards its target, never faster than the data acked
    /// (`bbr_set_cwnd()`).
    fn set_cwnd(&mut self, ctx: &AckContext<'_>) {
        let acked = ctx.rate.acked_bytes;
        let mut cwnd = self.cwnd;
        let quic_recovery = self.cfg.recovery == BbrRecovery::Quic2018;
        if acked > 0 && (quic_recovery || !self.set_cwnd_to_recover_or_restore(ctx, &mut cwnd)) {
            if self.mode == Mode::ProbeRtt {
                // Whatever the target, cwnd would be raised to the floor
                // here and capped at it below (x.max(m).min(m) is m for
                // every x), so it ends at the floor: the target, a memo
                // key built and compared on every ACK of PROBE_RTT,
                // cannot matter and is not asked for. The cap below then
                // leaves it at the floor too, so the window is set here
                // and the rest skipped (the common ACK of PROBE_RTT).
                self.cwnd = self.min_cwnd().max(self.mss);
                return;
            } else {
                let target = self.cwnd_target();
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || ctx.delivered_bytes < self.initial_cwnd {
                    // STARTUP: grow freely (slow-start-like) until the target is known.
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(self.min_cwnd());
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.min_cwnd());
        }
        // Linux counts cwnd in packets, so it can never hold less than one.
        // In bytes, conservation (inflight + acked) right after an MSS
        // increase can: floor at one current-size packet.
        self.cwnd = cwnd.max(self.mss);
    }
}

impl Bbr {
    /// [`CongestionControl::on_ack`], with `PLAIN` true only when
    /// [`Bbr::runs_plain`] holds: each switch it covers is then tested
    /// as the constant it is. Always inlined, into the two arms of
    /// `on_ack`'s one test.
    #[inline(always)]
    fn on_ack_as<const PLAIN: bool>(
        &mut self,
        ctx: &AckContext<'_>,
        sampler: &mut DeliveryRateSampler,
    ) {
        let rs = ctx.rate;

        if rs.acked_bytes > 0 {
            self.delivered_time = ctx.now;
        }
        self.delivered_total = ctx.delivered_bytes;
        if let (true, Some(rtt)) = (!PLAIN && self.jitter.is_some(), ctx.rtt_sample) {
            // The round this ACK is in, for a per-round cadence: update_bw()
            // below counts it, by the same test.
            let round = self.round_count + u64::from(self.starts_round(rs));
            if let Some(j) = self.jitter.as_mut() {
                j.on_sample(rtt, ctx.ack_delay, round);
                // srtt, and whether it stands in for min_rtt, may have
                // changed: both targets rest on the model RTT.
                self.targets_written();
            }
        }
        if !PLAIN && self.cfg.bw_window_follows_cycle {
            // QUIC 2018: `kBandwidthWindowSize` = cycle length + 2.
            self.set_bw_window_from_cycle();
        }
        // bbr_update_model()
        self.update_bw::<PLAIN>(rs, ctx);
        self.update_ack_aggregation::<PLAIN>(rs);
        self.update_cycle_phase(ctx);
        self.check_full_bw_reached(rs);
        self.check_drain(ctx);
        self.update_min_rtt::<PLAIN>(ctx, sampler);
        self.update_gains();

        self.set_pacing_rate(ctx.rtt);
        // QUIC 2018's recovery state and window, unless they would write
        // nothing (`QuicRecovery::is_quiet`: no episode, no loss), as on
        // most ACKs. Both run before `set_cwnd()`, though QUIC updates the
        // window after it: they write only the recovery state and
        // `next_round_delivered`, which `set_cwnd()` does not read, and
        // read nothing it writes (the window step reads the MSS and the
        // floor), so the order changes no value.
        if self.cfg.recovery == BbrRecovery::Quic2018 && !self.quic_recovery_is_quiet(ctx) {
            self.update_quic_recovery(ctx);
        }
        self.set_cwnd(ctx);
    }
}

impl CongestionControl for Bbr {
    /// The built-in's canonical name (seen when [`crate::builtin`] runs
    /// it inside a user's algorithm).
    fn name(&self) -> &str {
        if self.jitter.is_some() {
            "bbr-jitter"
        } else {
            "bbr"
        }
    }

    /// After idle, restart at 1.0 × bw rather than bursting, and restart the
    /// ACK-aggregation epoch (`bbr_cwnd_event()`, CA_EVENT_TX_START).
    fn on_restart_from_idle(&mut self, now: Instant, rtt: &RttEstimator) {
        if !self.cfg.idle_restart {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => {
                // Paced at 1.0 × bw, not the per-ACK call's gain: the
                // rules run whole, and the next ACK's call must too.
                self.set_pacing_rate_rules(self.bw(), 1.0, rtt);
                self.pacing_stale = true;
            }
            Mode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }

    /// `bbr_init()` runs when the handshake ends: min_rtt is the
    /// handshake's (`tcp_min_rtt()`), stamped now, the pacing rate starts
    /// from its srtt (`bbr_init_pacing_rate_from_rtt()`), and the epochs
    /// that `bbr_init()` stamps (the gain cycle, ACK aggregation, the
    /// long-term sampling interval) start now, not when the flow was
    /// created.
    fn on_handshake_rtt(&mut self, now: Instant, rtt: &RttEstimator) {
        self.min_rtt_ns = rtt.min_ns();
        self.min_rtt_stamp = now;
        self.model_written();
        self.cycle_stamp = now;
        self.ack_epoch_stamp = now;
        self.delivered_time = now;
        self.reset_lt_bw_sampling(now, 0, 0);
        self.init_pacing_rate_from_rtt(rtt.smoothed_ns());
    }

    /// `bbr_main()`: update the model, then pacing rate, then cwnd.
    fn on_ack(&mut self, ctx: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        debug_assert_eq!(self.plain, self.runs_plain());
        if self.plain {
            self.on_ack_as::<true>(ctx, sampler);
        } else {
            self.on_ack_as::<false>(ctx, sampler);
        }
    }

    /// Losses act through the next ACK's rate sample, as in Linux; here we
    /// only remember the pre-loss window when an episode begins
    /// (`bbr_ssthresh()` calls `bbr_save_cwnd()`).
    fn on_packets_lost(
        &mut self,
        _now: Instant,
        lost_bytes: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) {
        self.lost_total = self.lost_total.saturating_add(lost_bytes);
        if self.cfg.recovery == BbrRecovery::Quic2018 {
            // Counted into the next ACK's recovery update; losses found
            // while handling an ACK are in its rate sample instead.
            self.quic_recovery.on_packets_lost(lost_bytes);
            return;
        }
        if new_episode {
            self.save_cwnd();
        }
    }

    /// RTO: cwnd collapses to one packet; the full-bw plateau search
    /// restarts and the timeout counts as a lossy round for the policer model
    /// (`bbr_set_state()` for TCP_CA_Loss, `tcp_enter_loss()`).
    fn on_retransmission_timeout(&mut self, now: Instant, _bytes_in_flight: u64) {
        self.save_cwnd();
        self.prev_recovery = RecoveryState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        self.lt_bw_sampling(1, false, now);
        self.cwnd = self.mss;
    }

    /// A timeout's answer (the model keeps what it learned, cwnd saved
    /// for the recovery's end), then RFC 9002 §7.6.2's minimum window in
    /// place of the timeout's one packet.
    fn on_persistent_congestion(&mut self, now: Instant, min_window: u64) {
        self.on_retransmission_timeout(now, 0);
        self.cwnd = min_window.max(1);
    }

    /// `bbr_undo_cwnd()`: the slow-down was spurious, so the full-pipe
    /// search starts over and the policer model drops what it learned from
    /// the bogus losses. cwnd itself is restored by the recovery exit the
    /// controller signals next (`prior_cwnd`, as after any episode).
    fn on_spurious_loss(&mut self, _now: Instant) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        let (delivered, lost) = (self.delivered_total, self.lost_total);
        self.reset_lt_bw_sampling(self.delivered_time, delivered, lost);
    }

    fn on_mss_change(&mut self, mss: u64) {
        let mss = crate::config::usable_mss(mss);
        // Keep the window's packet count, as TCP does when the MSS changes.
        let packets = (self.cwnd / self.mss).max(1);
        self.prior_cwnd = (self.prior_cwnd / self.mss).saturating_mul(mss);
        self.initial_cwnd = (self.initial_cwnd / self.mss).max(1).saturating_mul(mss);
        self.mss = mss;
        self.min_cwnd = Self::min_cwnd_for(&self.cfg, mss);
        self.ack_epoch_reset_bytes = ACK_EPOCH_RESET_PACKETS.saturating_mul(mss);
        self.cwnd = packets.saturating_mul(mss);
        self.send_quantum = send_quantum_bytes(self.pacing_rate, mss);
        self.forget_targets();
    }

    fn cwnd_bytes(&self) -> u64 {
        self.effective_cwnd()
    }

    fn on_ack_begin(&mut self) {
        self.quic_recovery.on_ack_begin();
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        debug_assert_eq!(
            self.pacing_rate_bps,
            crate::float::rate_bytes_per_sec(self.pacing_rate)
        );
        self.pacing_rate_bps
    }

    fn send_quantum_bytes(&self) -> u64 {
        self.send_quantum
    }

    fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether `bbr-jitter` currently substitutes srtt for min_rtt.
    fn using_srtt(&self) -> Option<bool> {
        self.jitter.as_ref().map(JitterState::unstable)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            mode: self.mode,
            cwnd_bytes: self.effective_cwnd(),
            pacing_rate_bytes_per_sec: self.pacing_rate_bytes_per_sec(),
            bw_estimate_bytes_per_sec: self.bw_filter.get().map(|b| b * NS_PER_SEC),
            min_rtt: self.min_rtt_ns.map(Duration::from_nanos),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            cycle_index: (self.mode == Mode::ProbeBw).then_some(self.cycle_index as u8),
            round_count: self.round_count,
            full_bw_reached: self.full_bw_reached,
            lt_bw: Some(LtBwSnapshot {
                is_sampling: self.lt.is_sampling,
                in_use: self.lt.use_bw,
                bw_bytes_per_sec: self.lt.bw * NS_PER_SEC,
                rounds: self.lt.rounds,
            }),
            extra_acked_bytes: self.ack_aggregation_cwnd(),
            jitter: self.jitter.map(|j| j.snapshot()),
            ..Snapshot::default()
        }
    }
}
