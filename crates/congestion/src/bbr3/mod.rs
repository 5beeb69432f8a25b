//! BBRv3, as draft-ietf-ccwg-bbr-06 specifies it and as the google/bbr v3
//! branch of Linux runs it. What v3 adds, its profiles, its signals, its
//! ECN response and how the draft's ambiguities are read are documented for
//! users in `docs/bbr3.md` (the crate's `guide::bbr3` page); this note is
//! about the code.
//!
//! # Files
//!
//! - this file: the state, the per-ACK pipeline (draft §5.2.3, Linux
//!   `bbr_main()`), min_rtt and PROBE_RTT, the trait;
//! - `probe_bw.rs`: the PROBE_BW state machine, the long-term model and
//!   probe timing (§5.3.3, `bbr_update_cycle_phase()`);
//! - `signals.rs`: congestion signals: per-packet loss handling and the
//!   loss-rate bound, the short-term model, STARTUP's exits, ECN, and
//!   spurious-loss undo (§5.3.1, §5.5.10, §5.5.11);
//! - `control.rs`: pacing rate, send quantum, offload budget and cwnd
//!   (§5.6).
//!
//! # Sharing with v1
//!
//! The delivery-rate sampler and RTT estimator are the [`Controller`]'s,
//! shared by every algorithm. The draft's extra_acked filter is the crate's
//! [`WindowedFilter`]; the two-cycle bandwidth filter is
//! [`crate::windowed_filter::TwoSlotMax`]; the draft's send quantum and
//! Linux v3's are in [`crate::pacing`].
//!
//! Units: bytes and bytes per nanosecond, as in v1.
//!
//! [`Controller`]: crate::Controller

mod control;
mod probe_bw;
mod round_losses;
mod signals;

use crate::algorithm::{AckContext, CongestionControl, LossContext, RecoveryState};
use crate::config::{Bbr3Config, Bbr3Ecn, Bbr3ExtraAcked, Bbr3Signals, Config};
use crate::delivery_rate::{DeliveryRateSampler, RateSample};
use crate::float::{ceil_to_u64, min_of_not_nan, u64_as_f64};
use crate::rng::SplitMix64;
use crate::rtt_estimator::RttEstimator;
use crate::snapshot::{Bbr3Snapshot, Mode, Snapshot};
use crate::time::{duration_to_nanos, Instant};
use crate::windowed_filter::{FilterKind, TwoSlotMax, WindowedFilter};
use core::time::Duration;
use round_losses::{Mark, RoundLosses};

/// Nanoseconds per second, to turn bytes/ns into bytes/s.
const NS_PER_SEC: f64 = 1e9;

/// BBR's states, PROBE_BW's four phases among them (draft §5.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Startup,
    Drain,
    Down,
    Cruise,
    Refill,
    Up,
    ProbeRtt,
}

impl State {
    /// `IsInAProbeBWState()` (draft §5.3.3.9).
    fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::Down | State::Cruise | State::Refill | State::Up
        )
    }

    fn mode(self) -> Mode {
        match self {
            State::Startup => Mode::Startup,
            State::Drain => Mode::Drain,
            State::Down => Mode::ProbeBwDown,
            State::Cruise => Mode::ProbeBwCruise,
            State::Refill => Mode::ProbeBwRefill,
            State::Up => Mode::ProbeBwUp,
            State::ProbeRtt => Mode::ProbeRtt,
        }
    }

    /// The phase number Linux reports (`enum bbr_pacing_gain_phase`):
    /// UP 0, DOWN 1, CRUISE 2, REFILL 3.
    fn cycle_index(self) -> Option<u8> {
        match self {
            State::Up => Some(0),
            State::Down => Some(1),
            State::Cruise => Some(2),
            State::Refill => Some(3),
            _ => None,
        }
    }
}

/// What the ACK stream says about bandwidth probing (draft §2.14,
/// `BBR.ack_phase`; Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// BBRv3.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    mss: u64,
    initial_cwnd: u64,
    /// [`Bbr3::min_pipe_cwnd`], kept: read several times per ACK, and
    /// changed only with the MSS (set with it).
    min_pipe_cwnd: u64,
    rng: SplitMix64,

    state: State,
    cwnd: u64,
    /// Pacing rate, bytes/s: written only by [`Bbr3::store_pacing_rate`].
    pacing_rate: f64,
    /// `pacing_rate` as reported ([`crate::float::rate_bytes_per_sec`]),
    /// kept with it: the sender reads it per packet, the rate changes far
    /// less often.
    pacing_rate_bps: u64,
    send_quantum: u64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Speed only: the two gains are the table's for the current state,
    /// as [`Bbr3::update_gains`] left them; cleared wherever the state or
    /// a gain is written (`set_state`, `set_gains`, `set_cwnd_gain`).
    gains_current: bool,

    // Round counting (§5.5.1).
    round_count: u64,
    round_start: bool,
    rounds_since_probe_up: u64,

    // Long-term model.
    /// max_bw filter, bytes/ns, two slots advanced once per cycle (§5.5.3).
    max_bw_filter: TwoSlotMax,
    /// Bytes; `u64::MAX` is the draft's Infinity.
    inflight_longterm: u64,
    // Short-term model (bytes/ns and bytes; infinite when unset).
    bw_shortterm: f64,
    inflight_shortterm: u64,
    /// min(max_bw, bw_shortterm), bytes/ns (`BoundBWForModel()`).
    bw: f64,
    /// Speed only: max_bw or bw_shortterm was written since `bw` was
    /// last taken from them: set where the max_bw filter changes
    /// ([`Bbr3::update_max_bw`], [`Bbr3::advance_max_bw_filter`]) and by
    /// [`Bbr3::set_bw_shortterm`], cleared by [`Bbr3::bound_bw_for_model`].
    bw_inputs_written: bool,

    // Latest delivery signals and the loss round (§5.5.10.3).
    bw_latest: f64,
    inflight_latest: u64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    is_loss_in_round: bool,
    is_ecn_in_round: bool,
    /// This round had CE that opened a new episode: marks on data sent
    /// after the connection last entered CWR (RFC 3168 §6.1.2: react at
    /// most once per window of data, and not to marks on data sent
    /// before the reduction). The draft profile's classic cut waits for
    /// it, so marks still arriving for data sent before a cut do not cut
    /// again a round later.
    ce_new_episode_in_round: bool,
    /// Whether the loss round that just ended had loss (read by STARTUP's
    /// high-loss exit after the per-round reset).
    loss_round_had_loss: bool,
    /// A loss noted since the last ACK started the loss round: the next
    /// ACK moves its end past the data it delivers, as Linux's
    /// `tp->delivered` already counts the ACK that reveals a loss.
    loss_round_pending: bool,
    /// When losses last began an episode: an RTO the transport reports
    /// right after declaring the flight lost (as bbrlab's transports do)
    /// must not overwrite the undo state those losses saved.
    last_episode_at: Option<Instant>,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,

    // min_rtt and PROBE_RTT (§5.3.4).
    min_rtt_ns: Option<u64>,
    min_rtt_stamp: Instant,
    probe_rtt_min_ns: Option<u64>,
    probe_rtt_min_stamp: Instant,
    /// `probe_rtt_min_stamp` plus the PROBE_RTT interval, saturating:
    /// the interval has passed once `now` is past it, which is `now -
    /// stamp > interval` with the subtraction saturating (both false
    /// while `now` is not past the stamp, and when the sum saturates, as
    /// no `now - stamp` then exceeds the interval). Kept with the stamp
    /// ([`Bbr3::stamp_probe_rtt_min`]): one comparison per ACK instead of
    /// a subtraction, a select and a comparison.
    probe_rtt_expiry: Instant,
    probe_rtt_expired: bool,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    idle_restart: bool,

    // ACK aggregation (§5.5.9).
    extra_acked_interval_start: Instant,
    extra_acked_delivered: u64,
    extra_acked_filter: WindowedFilter,
    /// Speed only: the round and extra_acked of the draft filter's last
    /// update when it left the filter holding that sample alone, which
    /// the same sample again leaves unchanged
    /// ([`Bbr3::update_ack_aggregation`]). Only updates write the
    /// filter's samples.
    extra_acked_settled: Option<(u64, u64)>,
    extra_acked_slots: [u64; 2],
    extra_acked_win_rounds: u32,
    extra_acked_win_idx: usize,

    // Full pipe (§5.3.1.2).
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u64,

    // PROBE_BW (§5.3.3).
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    bw_probe_up_rounds: u32,
    bw_probe_wait_ns: u64,
    cycle_stamp: Instant,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,

    // STARTUP's congestion exits (§5.3.1.3).
    loss_events_in_round: u32,
    startup_ecn_rounds: u32,

    // Recovery and undo (§5.5.11, §5.6.4.4).
    prior_cwnd: u64,
    prev_recovery: RecoveryState,
    undo_state: Option<State>,
    undo_bw_shortterm: f64,
    undo_inflight_shortterm: u64,
    undo_inflight_longterm: u64,

    // ECN.
    ecn_eligible: bool,
    /// Linux's EWMA of the CE fraction, in 1/256 (`bbr->ecn_alpha`).
    ecn_alpha: u32,
    /// CE fraction of the last completed round, in 1/256.
    round_ce_ratio: u32,
    /// Packets acknowledged and CE-marked, in total and at the last round.
    acked_packets_total: u64,
    ce_packets_total: u64,
    alpha_last_acked: u64,
    alpha_last_ce: u64,

    // Whether the sender used the whole cwnd this round or the last
    // (`C.is_cwnd_limited`, Linux `tp->is_cwnd_limited`).
    cwnd_limited_this_round: bool,
    cwnd_limited_last_round: bool,

    /// This ACK's delivery rate, bytes/ns (`RS.delivery_rate`), divided
    /// out once per ACK; NaN for an invalid sample, which no valid one
    /// is (a byte count over at least 1 ns): a plain `f64` is stored
    /// and read back on every ACK without an `Option`'s tag. Read it
    /// through [`Bbr3::sample_rate`].
    sample_rate: f64,
    /// Speed only: the send quantum is the one its inputs give, none of
    /// them written since ([`Bbr3::set_send_quantum`]).
    quantum_current: bool,
    /// Speed only: max_inflight, until an input changes
    /// ([`Bbr3::max_inflight`] lists where each is written).
    max_inflight_memo: Option<u64>,
    /// Speed only: the gain's bits of the last pacing decision, while
    /// its other inputs stand ([`Bbr3::set_pacing_rate_with_gain`]).
    pacing_memo: Option<u64>,
    /// Speed only: the last per-ACK pacing decision
    /// ([`Bbr3::set_pacing_rate`]) stands: the RTT was seen and
    /// `pacing_memo` holds the current pacing gain, so the next would
    /// return at once. Cleared with every write of `pacing_memo` and of
    /// the pacing gain; one test instead of three on every ACK.
    pacing_current: bool,
    /// Speed only: cwnd's cap in the current state, until an input
    /// changes ([`Bbr3::cwnd_cap`] lists where each is written).
    cwnd_cap_memo: Option<u64>,
    /// Speed only: the BDPs asked for on every ACK, kept current by
    /// [`Bbr3::refresh_bdps`] wherever an input changes
    /// ([`control::Bdps`]).
    bdps: control::Bdps,

    /// Totals as of the last event (`C.delivered`, `C.lost`).
    delivered_total: u64,
    lost_total: u64,
    /// Delivered and lost at the last two round starts: the current
    /// round's boundary (`BBR.next_round_delivered`), and what the
    /// stock-kernel substitute for a sample's losses reads
    /// (`Bbr3Signals::StockKernel`; `bbrlab_bbr3` marks `tp->lost`).
    round_losses: RoundLosses,
    /// Speed only: [`Bbr3::runs_plain`], fixed at construction (the
    /// configuration never changes afterwards), so that each ACK picks
    /// the rules' copy with those switches resolved at compile time.
    plain: bool,
}

impl Bbr3 {
    /// Creates BBRv3 (`OnInit()`, draft §5.2.1; Linux `bbr_init()`).
    pub fn new(config: &Config, now: Instant) -> Self {
        let mss = crate::config::usable_mss(config.mss_bytes);
        let initial_cwnd = config.initial_cwnd_packets.max(1).saturating_mul(mss);
        let cfg = config.bbr3;
        let mut b = Bbr3 {
            cfg,
            mss,
            initial_cwnd,
            min_pipe_cwnd: cfg.min_pipe_cwnd_packets.saturating_mul(mss),
            rng: SplitMix64::new(config.seed),
            state: State::Startup,
            cwnd: initial_cwnd,
            pacing_rate: 0.0,
            pacing_rate_bps: 1,
            send_quantum: 2 * mss,
            has_seen_rtt: false,
            pacing_gain: cfg.startup_pacing_gain,
            cwnd_gain: cfg.startup_cwnd_gain,
            gains_current: false,
            round_count: 0,
            round_start: false,
            rounds_since_probe_up: 0,
            max_bw_filter: TwoSlotMax::new(),
            inflight_longterm: u64::MAX,
            bw_shortterm: f64::INFINITY,
            inflight_shortterm: u64::MAX,
            bw: 0.0,
            bw_inputs_written: true,
            bw_latest: 0.0,
            inflight_latest: 0,
            // Linux starts the loss round after the first full flight.
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            is_ecn_in_round: false,
            ce_new_episode_in_round: false,
            loss_round_had_loss: false,
            loss_round_pending: false,
            last_episode_at: None,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            min_rtt_ns: None,
            min_rtt_stamp: now,
            probe_rtt_min_ns: None,
            probe_rtt_min_stamp: now,
            probe_rtt_expiry: now.saturating_add_nanos(cfg.probe_rtt_interval_ns),
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            extra_acked_interval_start: now,
            extra_acked_delivered: 0,
            extra_acked_filter: WindowedFilter::new(
                FilterKind::Max,
                control::draft_extra_acked_window(false),
            ),
            extra_acked_settled: None,
            extra_acked_slots: [0; 2],
            extra_acked_win_rounds: 0,
            extra_acked_win_idx: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: u64::MAX,
            bw_probe_up_rounds: 0,
            bw_probe_wait_ns: 0,
            cycle_stamp: now,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            prior_cwnd: 0,
            prev_recovery: RecoveryState::Open,
            undo_state: None,
            undo_bw_shortterm: 0.0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            ecn_eligible: false,
            ecn_alpha: cfg.ecn_alpha_init.min(BBR_UNIT),
            round_ce_ratio: 0,
            acked_packets_total: 0,
            ce_packets_total: 0,
            alpha_last_acked: 0,
            alpha_last_ce: 0,
            cwnd_limited_this_round: false,
            cwnd_limited_last_round: false,
            delivered_total: 0,
            lost_total: 0,
            round_losses: RoundLosses::default(),
            sample_rate: f64::NAN,
            quantum_current: false,
            max_inflight_memo: None,
            pacing_memo: None,
            pacing_current: false,
            cwnd_cap_memo: None,
            bdps: control::Bdps::default(),
            plain: false,
        };
        b.plain = b.runs_plain();
        b.refresh_bdps();
        if cfg.round_needs_valid_sample {
            // Linux: `loss_round_delivered = tp->delivered + 1`, so the
            // first loss round ends only after the first flight.
            b.loss_round_delivered = 1;
        }
        b.init_pacing_rate(None);
        b
    }

    // ----- model accessors -------------------------------------------------

    /// Whether every per-ACK switch is at its draft (default) value:
    /// exact signals, rounds and delivery signals from every sample
    /// (no valid-interval requirement), min_rtt refreshed from delayed
    /// ACKs too, the draft's `extra_acked` filter. Fixed at construction,
    /// as the configuration never changes afterwards; each ACK then runs
    /// [`Bbr3::on_ack_as`]`::<true>`, with these tests resolved at
    /// compile time.
    fn runs_plain(&self) -> bool {
        self.cfg.signals == Bbr3Signals::Exact
            && !self.cfg.round_needs_valid_sample
            && !self.cfg.skip_delayed_ack_rtt
            && self.cfg.extra_acked == Bbr3ExtraAcked::Draft
    }

    /// This ACK's delivery rate, bytes/ns, `None` for an invalid sample
    /// (the field's NaN).
    fn sample_rate(&self) -> Option<f64> {
        (!self.sample_rate.is_nan()).then_some(self.sample_rate)
    }

    /// `BBR.max_bw`, bytes/ns.
    fn max_bw(&self) -> f64 {
        self.max_bw_filter.get()
    }

    /// min_rtt in ns, if any RTT was sampled.
    fn min_rtt(&self) -> Option<u64> {
        self.min_rtt_ns
    }

    /// The minimum cwnd, `BBR.MinPipeCwnd` = 4 packets (§2.8).
    fn min_pipe_cwnd(&self) -> u64 {
        debug_assert_eq!(
            self.min_pipe_cwnd,
            self.cfg.min_pipe_cwnd_packets.saturating_mul(self.mss)
        );
        self.min_pipe_cwnd
    }

    /// `C.is_cwnd_limited`: the whole cwnd was used at some point in the
    /// last packet-timed round trip (§2.2).
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_this_round || self.cwnd_limited_last_round
    }

    // ----- round counting (§5.5.1) ----------------------------------------

    /// `UpdateRound()`; Linux `bbr_update_round_start()` also needs a
    /// valid rate sample.
    fn update_round<const PLAIN: bool>(&mut self, rs: &RateSample, delivered: u64) {
        self.round_start = false;
        if rs.acked_bytes == 0 {
            return;
        }
        if !PLAIN && self.cfg.round_needs_valid_sample && rs.interval_ns.is_none() {
            return;
        }
        if rs.prior_delivered_bytes >= self.round_losses.round_start_delivered() {
            self.start_round(delivered);
            self.round_count = self.round_count.saturating_add(1);
            self.rounds_since_probe_up = self.rounds_since_probe_up.saturating_add(1);
            self.round_start = true;
            self.cwnd_limited_last_round = self.cwnd_limited_this_round;
            self.cwnd_limited_this_round = false;
        }
    }

    /// `StartRound()`. Also marks the cumulative losses, which the
    /// stock-kernel signals estimate a sample's losses from.
    fn start_round(&mut self, delivered: u64) {
        self.round_losses.start_round(Mark {
            delivered,
            lost: self.lost_total,
        });
    }

    /// `UpdateMaxBw()` (§5.5.5): app-limited samples count only if they
    /// raise the estimate.
    fn update_max_bw(&mut self, rs: &RateSample) {
        // An invalid sample's NaN fails `rate > 0.0`, as `None` returned.
        let rate = self.sample_rate;
        if rate > 0.0
            && (rate >= self.max_bw() || !rs.is_app_limited)
            && self.max_bw_filter.update(rate)
        {
            self.bw_inputs_written = true;
        }
    }

    /// `BoundBWForModel()`: bw = min(max_bw, bw_shortterm).
    ///
    /// `max_bw` is never NaN ([`TwoSlotMax`] stores only a value that
    /// compares greater), so the minimum is taken without `f64::min`'s
    /// NaN test ([`min_of_not_nan`]); it runs on every ACK. The two agree
    /// bit for bit unless both are zeros of opposite sign, and neither is
    /// ever -0 here: max_bw is 0 or a rate, bw_shortterm infinite, max_bw,
    /// or the larger of bw_latest (0 or a rate) and β × itself (β > 0).
    ///
    /// Taken again only after one of its two inputs was written
    /// ([`Bbr3::bw_inputs_written`]): a minimum of the same inputs is the
    /// bw it left.
    fn bound_bw_for_model(&mut self) {
        if !self.bw_inputs_written {
            debug_assert_eq!(
                min_of_not_nan(self.max_bw(), self.bw_shortterm).to_bits(),
                self.bw.to_bits()
            );
            return;
        }
        self.bw_inputs_written = false;
        let bw = min_of_not_nan(self.max_bw(), self.bw_shortterm);
        // Most ACKs leave it as it was, and then so are the BDPs.
        if bw.to_bits() != self.bw.to_bits() {
            self.bw = bw;
            self.refresh_bdps();
        }
    }

    // ----- state entries ---------------------------------------------------

    /// Every write of `state` goes through here: whether it is UP is an
    /// input of max_inflight (the budget's two packets), so the memo of it
    /// is forgotten, and the gains are the new state's only once
    /// [`Bbr3::update_gains`] has run. State changes are rare next to
    /// ACKs.
    fn set_state(&mut self, state: State) {
        self.state = state;
        self.max_inflight_memo = None;
        // Which bounds apply to cwnd.
        self.cwnd_cap_memo = None;
        self.gains_current = false;
    }

    /// Every write of `inflight_longterm` goes through here: it is an
    /// input of cwnd's cap ([`Bbr3::cwnd_cap`]), whose memo is forgotten.
    fn set_inflight_longterm(&mut self, v: u64) {
        self.inflight_longterm = v;
        self.cwnd_cap_memo = None;
    }

    /// Every write of `bw_shortterm` goes through here: it is an input of
    /// bw ([`Bbr3::bound_bw_for_model`]).
    fn set_bw_shortterm(&mut self, v: f64) {
        self.bw_shortterm = v;
        self.bw_inputs_written = true;
    }

    /// Every write of `inflight_shortterm` goes through here, for the
    /// same reason as [`Bbr3::set_inflight_longterm`].
    fn set_inflight_shortterm(&mut self, v: u64) {
        self.inflight_shortterm = v;
        self.cwnd_cap_memo = None;
    }

    /// Writes both gains, as a state entry does (`EnterStartup()`,
    /// `EnterDrain()`, `EnterProbeRTT()`).
    fn set_gains(&mut self, pacing_gain: f64, cwnd_gain: f64) {
        self.pacing_gain = pacing_gain;
        self.pacing_current = false;
        self.set_cwnd_gain(cwnd_gain);
    }

    /// Every write of `full_bw_reached` goes through here: it is an input
    /// of the pacing decision, whose memo is forgotten, and of the draft's
    /// extra_acked window.
    fn set_full_bw_reached(&mut self, reached: bool) {
        self.full_bw_reached = reached;
        self.forget_pacing();
        // The draft's extra_acked window follows the flag; set here, where
        // it changes, instead of before each of the filter's updates (the
        // window is read only by them).
        self.extra_acked_filter
            .set_window(control::draft_extra_acked_window(reached));
    }

    /// Every write of `cwnd_gain` goes through here: it is an input of
    /// max_inflight, whose memo is forgotten when the gain changes
    /// ([`Bbr3::update_gains`] writes it on every ACK, mostly unchanged).
    fn set_cwnd_gain(&mut self, gain: f64) {
        if gain.to_bits() != self.cwnd_gain.to_bits() {
            self.max_inflight_memo = None;
        }
        self.cwnd_gain = gain;
        self.gains_current = false;
    }

    /// `EnterStartup()`.
    fn enter_startup(&mut self) {
        self.set_state(State::Startup);
        self.set_gains(self.cfg.startup_pacing_gain, self.cfg.startup_cwnd_gain);
    }

    /// `EnterDrain()`; Linux also resets the congestion signals
    /// (`bbr_check_drain()`).
    fn enter_drain(&mut self) {
        self.set_state(State::Drain);
        self.set_gains(self.cfg.drain_pacing_gain, self.cfg.startup_cwnd_gain);
        self.drain_start_round = self.round_count;
        if self.cfg.drain_resets_congestion_signals {
            self.reset_congestion_signals();
        }
    }

    /// `CheckStartupDone()`.
    fn check_startup_done(&mut self, ctx: &AckContext<'_>) {
        self.check_startup_high_loss(ctx);
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// `CheckDrainDone()` (§5.3.2): inflight at most one BDP, or (draft)
    /// three rounds in DRAIN.
    fn check_drain_done(&mut self, ctx: &AckContext<'_>) {
        if self.state != State::Drain {
            return;
        }
        let inflight = if self.cfg.inflight_at_edt {
            self.in_net_at_edt(ctx.bytes_in_flight, ctx)
        } else {
            ctx.bytes_in_flight
        };
        let timed_out = self
            .cfg
            .drain_max_rounds
            .is_some_and(|r| self.round_count > self.drain_start_round.saturating_add(r));
        let bw = if self.cfg.drain_target_uses_max_bw {
            self.max_bw()
        } else {
            self.max_bw().min(self.bw_shortterm)
        };
        if inflight <= self.inflight(bw, 1.0) || timed_out {
            self.enter_probe_bw(ctx);
        }
    }

    // ----- min_rtt and PROBE_RTT (§5.3.4) ----------------------------------

    /// `UpdateMinRTT()`.
    fn update_min_rtt<const PLAIN: bool>(&mut self, ctx: &AckContext<'_>) {
        let now = ctx.now;
        debug_assert_eq!(
            now > self.probe_rtt_expiry,
            now.nanos_since(self.probe_rtt_min_stamp) > self.cfg.probe_rtt_interval_ns
        );
        self.probe_rtt_expired = now > self.probe_rtt_expiry;
        if let Some(rtt) = ctx.rtt_sample {
            let rtt_ns = duration_to_nanos(rtt);
            // Linux will not refresh an expired estimate from an ACK that
            // may have been delayed (`bbr_update_min_rtt()`).
            let delayed = !PLAIN && self.cfg.skip_delayed_ack_rtt && ctx.ack_maybe_delayed;
            let may_refresh = self.probe_rtt_expired && !delayed;
            if self.probe_rtt_min_ns.is_none_or(|m| rtt_ns < m) || may_refresh {
                self.probe_rtt_min_ns = Some(rtt_ns);
                self.stamp_probe_rtt_min(now);
            }
        }
        if let Some(p) = self.probe_rtt_min_ns {
            if self.min_rtt_ns == Some(p) {
                // The usual case: `p <= m` holds, so whether min_rtt has
                // expired cannot matter (its test is not computed) and
                // only the stamp is taken over, as below.
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            } else {
                let min_rtt_expired =
                    now.nanos_since(self.min_rtt_stamp) > self.cfg.min_rtt_window_ns;
                if self.min_rtt_ns.is_none_or(|m| p <= m) || min_rtt_expired {
                    self.min_rtt_ns = Some(p);
                    self.refresh_bdps();
                    self.min_rtt_stamp = self.probe_rtt_min_stamp;
                }
            }
        }
    }

    /// Stamps the PROBE_RTT min at `now`, and its expiry with it.
    fn stamp_probe_rtt_min(&mut self, now: Instant) {
        self.probe_rtt_min_stamp = now;
        self.probe_rtt_expiry = now.saturating_add_nanos(self.cfg.probe_rtt_interval_ns);
    }

    /// `CheckProbeRTT()`.
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    fn check_probe_rtt(&mut self, ctx: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(ctx.delivered_bytes);
        }
        if self.state == State::ProbeRtt {
            self.handle_probe_rtt(ctx, sampler);
        }
        if ctx.rate.delivered_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// `EnterProbeRTT()`: cwnd gain 0.5, the cap at half the BDP.
    fn enter_probe_rtt(&mut self) {
        self.set_state(State::ProbeRtt);
        self.set_gains(1.0, self.cfg.probe_rtt_cwnd_gain);
    }

    /// `HandleProbeRTT()`.
    fn handle_probe_rtt(&mut self, ctx: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        // The deliberately low rate must not lower max_bw.
        sampler.on_app_limited(ctx.bytes_in_flight);
        match self.probe_rtt_done_stamp {
            None if ctx.bytes_in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(
                    ctx.now
                        .saturating_add(Duration::from_nanos(self.cfg.probe_rtt_duration_ns)),
                );
                self.probe_rtt_round_done = false;
                self.start_round(ctx.delivered_bytes);
            }
            Some(_) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(ctx.now);
                }
            }
            None => {}
        }
    }

    /// `CheckProbeRTTDone()`.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        // Schedule the next PROBE_RTT.
        self.stamp_probe_rtt_min(now);
        self.restore_cwnd();
        self.exit_probe_rtt(now);
    }

    /// `ExitProbeRTT()` (§5.3.4.4): back to STARTUP, or to PROBE_BW via
    /// DOWN straight into CRUISE (inflight is already below the BDP).
    fn exit_probe_rtt(&mut self, now: Instant) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now, self.delivered_total);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    // ----- the per-ACK pipeline (§5.2.3) -----------------------------------

    /// Gains for the current state (§5.6.1's table; Linux `bbr_update_gains()`).
    ///
    /// They depend on the state alone (the configuration never changes),
    /// so once written for a state they are left until the state or a
    /// gain is written again ([`Bbr3::gains_current`]); most ACKs change
    /// neither.
    fn update_gains(&mut self) {
        if self.gains_current {
            debug_assert_eq!((self.pacing_gain.to_bits(), self.cwnd_gain.to_bits()), {
                let (p, w) = self.gains_for_state();
                (p.to_bits(), w.to_bits())
            });
            return;
        }
        let (p, w) = self.gains_for_state();
        self.pacing_gain = p;
        self.pacing_current = false;
        self.set_cwnd_gain(w);
        self.gains_current = true;
    }

    /// §5.6.1's table: the pacing and cwnd gains of the current state.
    fn gains_for_state(&self) -> (f64, f64) {
        let c = &self.cfg;
        match self.state {
            State::Startup => (c.startup_pacing_gain, c.startup_cwnd_gain),
            State::Drain => (c.drain_pacing_gain, c.startup_cwnd_gain),
            State::Down => (c.probe_down_pacing_gain, c.cwnd_gain),
            State::Cruise | State::Refill => (1.0, c.cwnd_gain),
            State::Up => (c.probe_up_pacing_gain, c.probe_up_cwnd_gain),
            State::ProbeRtt => (1.0, c.probe_rtt_cwnd_gain),
        }
    }

    /// [`CongestionControl::on_ack`]'s rules (`UpdateOnACK()`, §5.2.3).
    /// With `PLAIN` (the flag [`Bbr3::runs_plain`] set at construction)
    /// the per-ACK switches it names are the constants they would test
    /// as; otherwise each is tested as before.
    #[inline(always)]
    fn on_ack_as<const PLAIN: bool>(
        &mut self,
        ctx: &AckContext<'_>,
        sampler: &mut DeliveryRateSampler,
    ) {
        let rs = ctx.rate;
        self.sample_rate = match rs.delivery_rate_bytes_per_ns() {
            Some(r) => {
                debug_assert!(!r.is_nan());
                r
            }
            None => f64::NAN,
        };
        self.delivered_total = ctx.delivered_bytes;
        // `lost_total.max(lost_bytes)`, written only when it rises (a
        // test and a branch, where the max was a select and a store on
        // every ACK).
        if ctx.lost_bytes > self.lost_total {
            self.lost_total = ctx.lost_bytes;
        }
        self.acked_packets_total = self.acked_packets_total.saturating_add(ctx.acked_packets);
        // Without ECN (most ACKs) there is nothing to add: adding 0
        // leaves the total as it is, saturating or not.
        if ctx.ce_packets != 0 {
            self.ce_packets_total = self.ce_packets_total.saturating_add(ctx.ce_packets);
        }
        self.track_recovery(ctx);
        if self.loss_round_pending {
            self.loss_round_delivered = ctx.delivered_bytes;
            self.loss_round_pending = false;
        }
        if !PLAIN && self.cfg.signals == Bbr3Signals::StockKernel {
            // Before the model update, as `bbrlab_bbr3`'s cong_control.
            self.per_ack_loss_check(ctx);
        }

        // UpdateModelAndState()
        self.update_round::<PLAIN>(rs, ctx.delivered_bytes);
        if self.round_start {
            self.update_ecn_round(ctx);
        }
        self.note_ce(ctx);
        self.update_latest_delivery_signals::<PLAIN>(rs, ctx.delivered_bytes);
        self.update_congestion_signals(rs);
        self.update_ack_aggregation::<PLAIN>(ctx);
        self.check_full_bw_reached(rs);
        if matches!(self.state, State::Startup | State::Drain) {
            self.check_startup_done(ctx);
            self.check_drain_done(ctx);
        } else {
            // What the two checks do outside STARTUP and DRAIN, by one
            // test of the state instead of their three: the high-loss
            // check's per-round reset of the loss events (nothing else:
            // neither state can be entered from these checks here).
            if self.loss_round_start {
                self.loss_events_in_round = 0;
            }
        }
        self.update_probe_bw_cycle_phase(ctx);
        self.update_min_rtt::<PLAIN>(ctx);
        self.check_probe_rtt(ctx, sampler);
        self.advance_latest_delivery_signals(rs);
        self.bound_bw_for_model();

        // UpdateControlParameters()
        self.update_gains();
        self.set_pacing_rate(ctx.rtt);
        self.set_send_quantum();
        self.set_cwnd(ctx);
        // Linux `bbr_main()`: the sample's interval counts (`rs->lost`,
        // `rs->delivered_ce`); a stock kernel has this ACK's only
        // (`bbrlab_bbr3`: `rs->losses`, the increase of `delivered_ce`).
        let signals = if PLAIN {
            Bbr3Signals::Exact
        } else {
            self.cfg.signals
        };
        match signals {
            // Set only when true, rather than or-ed in: most ACKs have
            // neither, and a test and a branch each cost less than
            // reading, or-ing and writing back the flag.
            Bbr3Signals::Exact => {
                if self.sample_lost_as::<PLAIN>(ctx) > 0 {
                    self.loss_in_cycle = true;
                }
                if rs.delivered_ce_packets > 0 {
                    self.ecn_in_cycle = true;
                }
            }
            Bbr3Signals::StockKernel => {
                self.loss_in_cycle |= rs.lost_bytes > 0;
                self.ecn_in_cycle |= ctx.ce_packets > 0;
            }
        }
    }
}

/// Linux's fixed-point unit for fractions (`BBR_UNIT`).
pub(crate) const BBR_UNIT: u32 = 256;

impl CongestionControl for Bbr3 {
    /// Counts whether the sender is using its whole cwnd (`C.is_cwnd_limited`):
    /// after this send there is no room under cwnd for another full
    /// packet. Linux counts in packets (`tcp_packets_in_flight()` ≥ cwnd,
    /// `tcp_cwnd_validate()`); in bytes, a cwnd that is not a whole number
    /// of packets (`inflight_longterm` set from a loss is seldom one) is
    /// full once the next packet no longer fits, since a sender sends a
    /// packet only when all of it fits. Counting only an exactly filled
    /// cwnd left such a flow never cwnd-limited, so PROBE_UP never raised
    /// `inflight_longterm` again.
    fn on_packet_sent(&mut self, _now: Instant, bytes: u64, in_flight_before: u64) {
        // Once the round is marked, the sends after it would only mark
        // it again: the flag is tested first, and the sums skipped.
        if self.cwnd_limited_this_round {
            return;
        }
        let after = in_flight_before.saturating_add(bytes);
        if after.saturating_add(self.mss) > self.cwnd {
            self.cwnd_limited_this_round = true;
        }
    }

    /// Held back for want of window: Linux's `tcp_write_xmit()` sets
    /// `is_cwnd_limited` when `tcp_tso_should_defer()` waits for it.
    fn on_held_by_cwnd(&mut self, _now: Instant, _in_flight: u64) {
        self.cwnd_limited_this_round = true;
    }

    /// `HandleRestartFromIdle()` (§5.4.1, Linux `bbr_cwnd_event()`).
    fn on_restart_from_idle(&mut self, now: Instant, rtt: &RttEstimator) {
        if !self.cfg.idle_restart {
            return;
        }
        self.idle_restart = true;
        self.extra_acked_interval_start = now;
        self.extra_acked_delivered = 0;
        if self.state.is_probe_bw() {
            self.set_pacing_rate_with_gain(1.0, rtt);
        } else if self.state == State::ProbeRtt {
            self.check_probe_rtt_done(now);
        }
    }

    /// Linux v3's `bbr_init()` runs when the handshake ends: min_rtt and
    /// the PROBE_RTT minimum are the handshake's (`tcp_min_rtt()`),
    /// stamped now, and the pacing rate starts from its srtt; draft-06's
    /// `BBROnInit()` likewise takes min_rtt from SRTT when one exists and
    /// stamps it at initialisation.
    fn on_handshake_rtt(&mut self, now: Instant, rtt: &RttEstimator) {
        self.min_rtt_ns = rtt.min_ns();
        self.refresh_bdps();
        self.min_rtt_stamp = now;
        self.probe_rtt_min_ns = rtt.min_ns();
        self.stamp_probe_rtt_min(now);
        self.extra_acked_interval_start = now;
        self.cycle_stamp = now;
        self.init_pacing_rate(rtt.smoothed_ns());
    }

    /// `UpdateOnACK()` (§5.2.3).
    fn on_ack(&mut self, ctx: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        debug_assert_eq!(self.plain, self.runs_plain());
        if self.plain {
            self.on_ack_as::<true>(ctx, sampler);
        } else {
            self.on_ack_as::<false>(ctx, sampler);
        }
    }

    /// Losses outside an ACK (a timer) still count; without per-packet
    /// detail the loss is noted for the round.
    fn on_packets_lost(
        &mut self,
        now: Instant,
        lost_bytes: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) {
        self.lost_total = self.lost_total.saturating_add(lost_bytes);
        if new_episode {
            self.save_state_upon_loss();
            self.last_episode_at = Some(now);
        }
        if lost_bytes > 0 {
            self.note_loss(true);
        }
    }

    /// `HandleLostPacket()` for each packet (§5.5.10.2). A loss that ends
    /// a probe changes the gains at once, so the next send is paced for
    /// DOWN even before the ACK that revealed the loss is processed.
    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.handle_loss(loss);
        self.update_gains();
    }

    fn on_congestion_experienced(
        &mut self,
        _now: Instant,
        _ce_packets: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        self.ce_new_episode_in_round |= new_episode;
        false
    }

    /// `OnEnterRTO()` (§5.6.4.4): cwnd = inflight + 1 packet. Linux v3
    /// (`bbr_set_state()`, TCP_CA_Loss) also restarts the full-bw search
    /// and, when not probing, seeds `inflight_shortterm` from the cwnd.
    fn on_retransmission_timeout(&mut self, now: Instant, bytes_in_flight: u64) {
        if self.last_episode_at != Some(now) {
            self.save_state_upon_loss();
        }
        self.prev_recovery = RecoveryState::Loss;
        if self.cfg.rto_resets_full_bw {
            self.reset_full_bw();
            if !self.is_probing_bw() && self.inflight_shortterm == u64::MAX {
                self.set_inflight_shortterm(self.cwnd.max(self.prior_cwnd));
            }
        }
        self.cwnd = bytes_in_flight.saturating_add(self.mss);
    }

    /// A timeout's answer with nothing left in flight, then RFC 9002
    /// §7.6.2's minimum window: the timeout's own answer keeps what is in
    /// flight plus a packet (the draft's `BBROnEnterRTO()`, written for a
    /// TCP sender that has just declared everything lost), which after
    /// persistent congestion would leave the window nearly where it was.
    fn on_persistent_congestion(&mut self, now: Instant, min_window: u64) {
        self.on_retransmission_timeout(now, 0);
        self.cwnd = min_window.max(1);
    }

    // CE: the trait's default (no loss-style cut, no episode) is bbr3's
    // answer; it reads CE from the AckContext once per round instead (see
    // the module docs).

    /// `HandleSpuriousLossDetection()` (§5.5.11.2); the restored model and
    /// state take effect at once.
    fn on_spurious_loss(&mut self, now: Instant) {
        self.handle_spurious_loss(now);
        self.bound_bw_for_model();
        self.update_gains();
    }

    fn on_mss_change(&mut self, mss: u64) {
        let mss = crate::config::usable_mss(mss);
        let per_packet = |v: u64, old: u64| -> u64 {
            if v == u64::MAX {
                v
            } else {
                (v / old).saturating_mul(mss)
            }
        };
        let old = self.mss;
        self.cwnd = per_packet(self.cwnd, old).max(mss);
        self.prior_cwnd = per_packet(self.prior_cwnd, old);
        self.initial_cwnd = per_packet(self.initial_cwnd, old).max(mss);
        self.refresh_bdps();
        self.set_inflight_longterm(per_packet(self.inflight_longterm, old));
        self.set_inflight_shortterm(per_packet(self.inflight_shortterm, old));
        self.mss = mss;
        self.min_pipe_cwnd = self.cfg.min_pipe_cwnd_packets.saturating_mul(mss);
        // Inputs of max_inflight (the budget's packets), written after
        // `refresh_bdps` forgot it, and of cwnd's cap (the floors).
        self.max_inflight_memo = None;
        self.cwnd_cap_memo = None;
        // An input of the send quantum.
        self.quantum_current = false;
        self.set_send_quantum();
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd.max(self.mss)
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        debug_assert_eq!(
            self.pacing_rate_bps,
            crate::float::rate_bytes_per_sec(self.pacing_rate)
        );
        self.pacing_rate_bps
    }

    fn send_quantum_bytes(&self) -> u64 {
        self.send_quantum.max(1)
    }

    fn mode(&self) -> Mode {
        self.state.mode()
    }

    fn snapshot(&self) -> Snapshot {
        let finite = |v: u64| (v != u64::MAX).then_some(v);
        Snapshot {
            mode: self.state.mode(),
            cwnd_bytes: self.cwnd_bytes(),
            pacing_rate_bytes_per_sec: self.pacing_rate_bytes_per_sec(),
            bw_estimate_bytes_per_sec: (self.max_bw() > 0.0).then(|| self.max_bw() * NS_PER_SEC),
            min_rtt: self.min_rtt_ns.map(Duration::from_nanos),
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            cycle_index: self.state.cycle_index(),
            round_count: self.round_count,
            full_bw_reached: self.full_bw_reached,
            extra_acked_bytes: self.extra_acked(),
            bbr3: Some(Bbr3Snapshot {
                inflight_longterm_bytes: finite(self.inflight_longterm),
                inflight_shortterm_bytes: finite(self.inflight_shortterm),
                bw_shortterm_bytes_per_sec: self
                    .bw_shortterm
                    .is_finite()
                    .then_some(self.bw_shortterm * NS_PER_SEC),
                ecn_alpha: (self.cfg.ecn == Bbr3Ecn::LinuxV3)
                    .then(|| f64::from(self.ecn_alpha) / f64::from(BBR_UNIT)),
                loss_in_round: self.is_loss_in_round,
                ecn_in_round: self.is_ecn_in_round,
                bw_bytes_per_sec: self.bw * NS_PER_SEC,
                prev_probe_too_high: self.prev_probe_too_high,
                bw_probe_wait: Duration::from_nanos(self.bw_probe_wait_ns),
                rounds_since_probe_up: self.rounds_since_probe_up,
            }),
            ..Snapshot::default()
        }
    }

    fn name(&self) -> &str {
        "bbr3"
    }
}

/// `v × f` for a byte count that may be the draft's Infinity (`u64::MAX`),
/// which stays infinite; saturating, and never NaN.
fn scale(v: u64, f: f64) -> u64 {
    if v == u64::MAX {
        return v;
    }
    let x = u64_as_f64(v) * f;
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x as u64
    }
}
