//! PROBE_BW: DOWN → CRUISE → REFILL → UP, the long-term model and probe
//! timing (draft §5.3.3, §5.5.6; Linux `bbr_update_cycle_phase()`,
//! `bbr_adapt_upper_bounds()`, `bbr_check_time_to_probe_bw()`).

use super::{ceil_to_u64, scale, AckPhase, Bbr3, State};
use crate::algorithm::{AckContext, RecoveryState};
use crate::config::{Bbr3Ecn, Bbr3Signals};
use crate::float::u64_as_f64;
use crate::time::Instant;

impl Bbr3 {
    /// `EnterProbeBW()`.
    pub(super) fn enter_probe_bw(&mut self, ctx: &AckContext<'_>) {
        self.set_cwnd_gain(self.cfg.cwnd_gain);
        self.start_probe_bw_down(ctx.now, ctx.delivered_bytes);
    }

    /// `StartProbeBW_DOWN()`: a new cycle; pick when the next probe starts.
    pub(super) fn start_probe_bw_down(&mut self, now: Instant, delivered: u64) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = u64::MAX;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(delivered);
        self.set_state(State::Down);
    }

    /// `StartProbeBW_CRUISE()`; Linux (`bbr_start_bw_probe_cruise()`) also
    /// clamps a set inflight_shortterm to inflight_longterm.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        if self.cfg.cruise_clamps_shortterm && self.inflight_shortterm != u64::MAX {
            self.set_inflight_shortterm(self.inflight_shortterm.min(self.inflight_longterm));
        }
        self.set_state(State::Cruise);
    }

    /// `StartProbeBW_REFILL()`: the pivot of the time-scale strategy; the
    /// short-term model is forgotten and the long-term one probed.
    /// `up_rounds` is 0 except for Linux's ECN re-probe.
    pub(super) fn start_probe_bw_refill(&mut self, up_rounds: u32, delivered: u64) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(delivered);
        self.set_state(State::Refill);
    }

    /// `StartProbeBW_UP()`.
    fn start_probe_bw_up(&mut self, ctx: &AckContext<'_>) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(ctx.delivered_bytes);
        self.reset_full_bw();
        self.full_bw = self.sample_rate().unwrap_or(0.0);
        self.set_state(State::Up);
        self.raise_inflight_longterm_slope();
    }

    /// `UpdateProbeBWCyclePhase()`.
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    pub(super) fn update_probe_bw_cycle_phase(&mut self, ctx: &AckContext<'_>) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(ctx) {
            return;
        }
        if !self.state.is_probe_bw() {
            return;
        }
        // What "C.inflight" means here: the draft's inflight after this ACK,
        // or Linux's prior_in_flight as it will be at the next departure.
        let inflight = if self.cfg.inflight_at_edt {
            self.in_net_at_edt(ctx.rate.prior_in_flight, ctx)
        } else {
            ctx.bytes_in_flight
        };
        let state = self.state;
        match state {
            State::Down => {
                if self.is_time_to_probe_bw(ctx) {
                    return;
                }
                if self.is_time_to_cruise(inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            State::Cruise => {
                self.is_time_to_probe_bw(ctx);
            }
            // One round of REFILL, then UP.
            State::Refill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(ctx);
            }
            State::Up if self.is_time_to_go_down(inflight) => {
                self.prev_probe_too_high = false;
                self.start_probe_bw_down(ctx.now, ctx.delivered_bytes);
            }
            _ => {}
        }
    }

    /// `IsTimeToProbeBW()`: the wall-clock wait or the Reno bound has
    /// passed, or (Linux) CE without loss has cleared and a quick re-probe
    /// is due.
    fn is_time_to_probe_bw(&mut self, ctx: &AckContext<'_>) -> bool {
        if self.cfg.ecn == Bbr3Ecn::LinuxV3
            && self.cfg.ecn_reprobe_gain > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && ctx.recovery == RecoveryState::Open
        {
            // bbr_check_time_to_probe_bw(): n with 2^n ≈ inflight_longterm
            // × reprobe gain, in packets.
            let packets = scale(self.inflight_longterm, 1.0) / self.mss.max(1);
            let target = (u128::from(packets) * u128::from(self.cfg.ecn_reprobe_gain)) >> 8;
            let n = if target == 0 {
                0
            } else {
                127 - target.leading_zeros()
            };
            self.start_probe_bw_refill(n.min(30), ctx.delivered_bytes);
            return true;
        }
        if self.has_elapsed_in_phase(ctx.now, self.bw_probe_wait_ns)
            || self.is_reno_coexistence_probe_time()
        {
            self.start_probe_bw_refill(0, ctx.delivered_bytes);
            return true;
        }
        false
    }

    /// `PickProbeWait()`: a random 0 or 1 head start on the round count,
    /// and a wall-clock wait uniform in [2 s, 3 s), from the seeded RNG.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rng.below(self.cfg.probe_rand_rounds.max(1));
        self.bw_probe_wait_ns = self
            .cfg
            .probe_wait_base_ns
            .saturating_add(self.rng.below(self.cfg.probe_wait_rand_ns));
    }

    /// `IsRenoCoexistenceProbeTime()`: probe at least every
    /// min(target inflight in packets, 63) rounds, as often as a Reno flow
    /// with this BDP would. The draft's pseudocode compares rounds with
    /// TargetInflight() in bytes; Reno's epoch is its BDP in packets, so
    /// the bytes are converted with the MSS, as Linux (which counts
    /// packets) does.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss.max(1);
        let rounds = reno_rounds.min(self.cfg.probe_max_rounds);
        self.rounds_since_probe_up >= rounds
    }

    /// `TargetInflight()`: the BDP unless congestion cut cwnd. Linux's BDP
    /// (`bbr_target_inflight()`) includes the quantization budget.
    pub(super) fn target_inflight(&self) -> u64 {
        let bdp = if self.cfg.target_inflight_with_budget {
            self.quantization_budget(self.unit_bdp())
        } else {
            self.unit_bdp()
        };
        bdp.min(self.cwnd)
    }

    /// `HasElapsedInPhase()`.
    fn has_elapsed_in_phase(&self, now: Instant, interval_ns: u64) -> bool {
        now.nanos_since(self.cycle_stamp) > interval_ns
    }

    /// `IsTimeToCruise()`: headroom left and the queue drained.
    fn is_time_to_cruise(&self, inflight: u64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(self.max_bw(), 1.0)
    }

    /// `IsTimeToGoDown()`: precautionary stop at a risky inflight_longterm,
    /// or a bandwidth plateau not caused by inflight_longterm.
    fn is_time_to_go_down(&mut self, inflight: u64) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_longterm {
            // bw is limited by inflight_longterm: the plateau says nothing.
            self.reset_full_bw();
            self.full_bw = self.sample_rate().unwrap_or(0.0);
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// `InflightWithHeadroom()`: inflight_longterm less 15 % (at least one
    /// packet), floored at the minimum cwnd.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == u64::MAX {
            return u64::MAX;
        }
        let headroom = scale(self.inflight_longterm, self.cfg.headroom).max(self.headroom_unit());
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// The smallest headroom: one packet (draft `1*C.SMSS`; Linux 1 packet).
    fn headroom_unit(&self) -> u64 {
        self.mss
    }

    /// `RaiseInflightLongtermSlope()`: each round of UP doubles the growth
    /// of inflight_longterm (1, 2, 4, … packets per round).
    fn raise_inflight_longterm_slope(&mut self) {
        let growth = 1u64 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (self.cwnd / growth).max(self.mss);
    }

    /// `ProbeInflightLongtermUpward()`: one packet more per
    /// `probe_up_acked_per_inc` bytes acknowledged, while cwnd-limited at
    /// inflight_longterm.
    fn probe_inflight_longterm_upward(&mut self, ctx: &AckContext<'_>) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked = self.bw_probe_up_acked.saturating_add(ctx.rate.acked_bytes);
        let per = self.probe_up_acked_per_inc.max(1);
        if self.bw_probe_up_acked >= per {
            let delta = self.bw_probe_up_acked / per;
            self.bw_probe_up_acked -= delta * per;
            self.set_inflight_longterm(
                self.inflight_longterm
                    .saturating_add(delta.saturating_mul(self.mss)),
            );
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// `AdaptLongTermModel()`: follow the ACK phase, advance the max_bw
    /// filter one round after a probe ends, re-probe after a successful
    /// precautionary probe, and move inflight_longterm with the loss rate.
    /// Returns true when it decided a state transition.
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    fn adapt_long_term_model(&mut self, ctx: &AckContext<'_>) -> bool {
        let rs = ctx.rate;
        // Both phase steps wait for a round start, tested once: most ACKs
        // start no round. (The first step's ProbeFeedback is not the
        // second's ProbeStopping, so at most one of them runs.)
        if self.round_start {
            match self.ack_phase {
                AckPhase::ProbeStarting => self.ack_phase = AckPhase::ProbeFeedback,
                AckPhase::ProbeStopping => {
                    self.is_bw_probe_sample = false;
                    self.ack_phase = AckPhase::Init;
                    if self.state.is_probe_bw() && !rs.is_app_limited {
                        self.advance_max_bw_filter();
                    }
                    if self.state.is_probe_bw()
                        && self.prev_probe_precautionary
                        && !self.prev_probe_too_high
                    {
                        self.start_probe_bw_refill(0, ctx.delivered_bytes);
                        return true;
                    }
                }
                _ => {}
            }
        }
        // What follows acts only on a bandwidth-probe sample (the cut) or
        // on a finite inflight_longterm (the raise, Linux
        // `bbr_adapt_upper_bounds()`); without either, both of its exits
        // return false with nothing changed, so the per-sample loss and CE
        // tests, pure reads, are skipped: the common case outside probes
        // until congestion first bounds the model (all of PROBE_RTT on a
        // path without loss).
        if !self.is_bw_probe_sample && self.inflight_longterm == u64::MAX {
            return false;
        }
        let lost = self.sample_lost(ctx);
        let tx_in_flight = self.sample_tx_in_flight(rs);
        let loss_too_high = rs.acked_bytes > 0 && self.is_inflight_too_high(lost, tx_in_flight);
        // v3 judges each sample's own CE count; a stock kernel (the BPF
        // control `bbrlab_bbr3`) keeps no per-packet CE snapshot and judges
        // the last round's fraction at round starts.
        let ce_too_high = match self.cfg.signals {
            Bbr3Signals::Exact => self.sample_ce_too_high(rs),
            Bbr3Signals::StockKernel => self.round_start && self.round_ce_too_high(),
        };
        if loss_too_high || ce_too_high {
            if self.is_bw_probe_sample {
                self.handle_inflight_too_high(
                    tx_in_flight,
                    rs.is_app_limited,
                    ctx.now,
                    ctx.delivered_bytes,
                );
            }
            return false;
        }
        if self.inflight_longterm == u64::MAX {
            return false;
        }
        if tx_in_flight > self.inflight_longterm {
            self.set_inflight_longterm(tx_in_flight);
        }
        if self.state == State::Up {
            self.probe_inflight_longterm_upward(ctx);
        }
        false
    }

    /// `AdvanceMaxBwFilter()`: the draft's cycle_count++. The filter keeps
    /// the previous cycle's slot if this cycle had no sample (Linux
    /// `bbr_advance_max_bw_filter()`).
    fn advance_max_bw_filter(&mut self) {
        self.max_bw_filter.advance();
        // max_bw may fall: an input of bw.
        self.bw_inputs_written = true;
    }

    /// What will still be in the network at the pacer's next departure
    /// (Linux `bbr_packets_in_net_at_edt()`); inflight as is without a
    /// departure time from the transport.
    pub(super) fn in_net_at_edt(&self, inflight: u64, ctx: &AckContext<'_>) -> u64 {
        let Some(edt) = ctx.next_departure else {
            return inflight;
        };
        let ahead_ns = edt.nanos_since(ctx.now);
        let delivered_by_then = ceil_to_u64(self.bw * u64_as_f64(ahead_ns));
        let mut at_edt = inflight;
        if self.pacing_gain > 1.0 {
            at_edt = at_edt.saturating_add(ctx.next_burst_bytes);
        }
        at_edt.saturating_sub(delivered_by_then)
    }
}
