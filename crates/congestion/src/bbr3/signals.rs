//! Congestion signals: loss and CE, the short-term model, STARTUP's exits,
//! the loss-rate bound and spurious-loss undo (draft §5.3.1, §5.5.10,
//! §5.5.11; Linux `bbr_skb_marked_lost()`, `bbr_adapt_lower_bounds()`,
//! `bbr_update_ecn_alpha()`, `bbr_undo_cwnd()`).

use super::{ceil_to_u64, scale, Bbr3, Mark, State, BBR_UNIT};
use crate::algorithm::{AckContext, LossContext, RecoveryState};
use crate::config::{Bbr3Ecn, Bbr3Signals, StartupLossCount};
use crate::delivery_rate::RateSample;
use crate::float::u64_as_f64;
use crate::time::Instant;

impl Bbr3 {
    // ----- recovery bookkeeping (§5.6.4.4) ---------------------------------

    /// `SaveCwnd()`: the last cwnd not cut by recovery or PROBE_RTT.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_recovery < RecoveryState::Recovery && self.state != State::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `RestoreCwnd()`.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// Restores cwnd when a recovery episode ends: the draft after any
    /// episode (§5.6.4.4), Linux v3 only after an RTO's (`bbr_set_state()`
    /// calls `bbr_exit_loss_recovery()` on leaving TCP_CA_Loss).
    ///
    /// Most ACKs find the state as the last one left it: then nothing
    /// ends (`now` is `was`, which cannot be both at least Recovery and
    /// Open) and nothing is written, so one comparison answers.
    pub(super) fn track_recovery(&mut self, ctx: &AckContext<'_>) {
        let was = self.prev_recovery;
        let now = ctx.recovery;
        if now == was {
            return;
        }
        if was >= RecoveryState::Recovery
            && now == RecoveryState::Open
            && (was == RecoveryState::Loss || self.cfg.restore_cwnd_after_fast_recovery)
        {
            self.restore_cwnd();
        }
        self.prev_recovery = now;
    }

    /// `SaveStateUponLoss()` (§5.5.11.1; Linux `bbr_ssthresh()`): what a
    /// spurious episode will restore.
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    // ----- per-packet loss handling (§5.5.10.2) -----------------------------

    /// `NoteLoss()`: the first loss of a round starts the loss round here,
    /// so the round's delivery signals cover the whole round of loss.
    ///
    /// `may_save` is false for the packets of a loss batch after one that
    /// ended a probe: `StartProbeBW_DOWN()` reset `is_loss_in_round`, and
    /// saving again would overwrite the undo state with the cut model and
    /// make the probe's losses impossible to undo (draft §5.5.11, A.18).
    pub(super) fn note_loss(&mut self, may_save: bool) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered_total;
            self.loss_round_pending = true;
            if may_save && self.cfg.note_loss_saves_state {
                self.save_state_upon_loss();
            }
        }
        self.is_loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Per-packet loss handling: `HandleLostPacket()` for each lost packet,
    /// with the packet's own tx_in_flight and the losses since it was sent,
    /// so delayed loss marking (RACK, RFC 9002) cannot understate the
    /// volume at which losses began. Also counts STARTUP's loss events.
    pub(super) fn handle_loss(&mut self, loss: &LossContext<'_>) {
        if loss.lost.is_empty() {
            return;
        }
        if loss.new_episode {
            self.save_state_upon_loss();
            self.last_episode_at = Some(loss.now);
        }
        self.delivered_total = self.delivered_total.max(loss.delivered_bytes);
        // C.lost before this call's packets, then as each is marked.
        let mut c_lost = loss.total_lost_bytes.saturating_sub(loss.lost_bytes);
        let events = match self.cfg.startup_loss_count {
            StartupLossCount::Ranges => loss.lost_ranges.max(1),
            StartupLossCount::Events => 1,
        };
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(events);
        let mut may_save = true;
        for p in loss.lost {
            c_lost = c_lost.saturating_add(p.bytes);
            self.note_loss(may_save);
            if !self.is_bw_probe_sample {
                continue; // not sent while probing bandwidth
            }
            if self.cfg.signals == Bbr3Signals::StockKernel {
                // No per-lost-packet hook in a stock kernel: the check
                // runs once per ACK instead (`per_ack_loss_check()`).
                continue;
            }
            let tx_in_flight = p.state.bytes_in_flight;
            let lost = c_lost.saturating_sub(p.state.lost_bytes);
            if self.is_inflight_too_high(lost, tx_in_flight) {
                let at_loss = self.inflight_at_loss(p.bytes, lost, tx_in_flight);
                may_save = false;
                self.handle_inflight_too_high(
                    at_loss,
                    p.state.is_app_limited,
                    loss.now,
                    loss.delivered_bytes,
                );
            }
        }
        self.lost_total = self.lost_total.max(loss.total_lost_bytes);
    }

    // ----- the signals a sample carries, exact or stock-kernel ---------------

    /// The inflight a sample's loss rate is judged against. v3 reads
    /// `rs->tx_in_flight`, inflight when the ACKed packet was sent (patch
    /// "tcp: add tx_in_flight to rate sample"; `bbr_is_inflight_too_high()`,
    /// `bbr_handle_inflight_too_high()`). A stock kernel's rate sample has
    /// only `rs->prior_in_flight`, inflight just before this ACK: close to
    /// inflight a round trip ago in steady state, too high right after a
    /// cwnd cut, so the stock-kernel loss rate reads lower there.
    pub(super) fn sample_tx_in_flight(&self, rs: &RateSample) -> u64 {
        match self.cfg.signals {
            Bbr3Signals::Exact => rs.tx_in_flight,
            Bbr3Signals::StockKernel => rs.prior_in_flight,
        }
    }

    /// The losses a sample carries. v3's `rs->lost` is what was marked lost
    /// between the ACKed packet's send and this ACK (its patches snapshot
    /// `tp->lost` per skb; `bbr_is_inflight_too_high()`). A stock kernel
    /// keeps no per-packet snapshot; `bbrlab_bbr3` estimates `tp->lost` at
    /// the packet's send from marks taken at the last two round starts
    /// (`round_losses.rs` says why one mark is not enough). The
    /// simulator's stock-kernel mode does the same with its cumulative
    /// lost bytes.
    pub(super) fn sample_lost(&self, ctx: &AckContext<'_>) -> u64 {
        self.sample_lost_as::<false>(ctx)
    }

    /// [`Bbr3::sample_lost`], with `PLAIN` ([`Bbr3::runs_plain`]: exact
    /// signals) resolving the switch at compile time.
    #[inline(always)]
    pub(super) fn sample_lost_as<const PLAIN: bool>(&self, ctx: &AckContext<'_>) -> u64 {
        let signals = if PLAIN {
            Bbr3Signals::Exact
        } else {
            self.cfg.signals
        };
        match signals {
            Bbr3Signals::Exact => ctx.lost_bytes.saturating_sub(ctx.rate.tx_lost_bytes),
            Bbr3Signals::StockKernel => self.round_losses.since_sent(
                ctx.rate.prior_delivered_bytes,
                Mark {
                    delivered: ctx.delivered_bytes,
                    lost: self.lost_total,
                },
            ),
        }
    }

    /// The stock kernel's stand-in for v3's per-lost-packet hook
    /// (`bbr_skb_marked_lost()` -> `bbr_handle_inflight_too_high()`, which
    /// a BPF control cannot attach to): once per ACK that carries losses,
    /// before the model update, the same loss-rate check with the
    /// stock-kernel signals; the ACK's newly lost bytes play the lost
    /// packet in `InflightAtLoss()` (`bbr_inflight_hi_from_lost_skb()`).
    pub(super) fn per_ack_loss_check(&mut self, ctx: &AckContext<'_>) {
        let rs = ctx.rate;
        if rs.lost_bytes == 0 || !self.is_bw_probe_sample {
            return;
        }
        let lost = self.sample_lost(ctx);
        let tx_in_flight = self.sample_tx_in_flight(rs);
        if self.is_inflight_too_high(lost, tx_in_flight) {
            let at_loss = self.inflight_at_loss(rs.lost_bytes, lost, tx_in_flight);
            self.handle_inflight_too_high(at_loss, rs.is_app_limited, ctx.now, ctx.delivered_bytes);
        }
    }

    /// `IsInflightTooHigh()` for loss: more than `loss_thresh` of what was
    /// in flight was lost, or any loss without selective ACKs.
    pub(super) fn is_inflight_too_high(&self, lost: u64, tx_in_flight: u64) -> bool {
        if lost == 0 {
            return false;
        }
        if !self.cfg.selective_acks {
            return true;
        }
        tx_in_flight > 0 && u64_as_f64(lost) > u64_as_f64(tx_in_flight) * self.cfg.loss_thresh
    }

    /// `InflightAtLoss()`: the prefix of packet P at which the loss rate
    /// crossed `loss_thresh`, solving (lost_prev + x) / (inflight_prev + x)
    /// = thresh for x. Linux (`bbr_inflight_hi_from_lost_skb()`) rounds the
    /// loss budget up and takes x = 0 once earlier losses alone crossed it;
    /// the draft's formula lets x go negative. Inconsistent bookkeeping
    /// (P larger than what was in flight or lost) gives no bound, as Linux.
    pub(super) fn inflight_at_loss(&self, size: u64, lost: u64, tx_in_flight: u64) -> u64 {
        if tx_in_flight < size || lost < size {
            return u64::MAX;
        }
        let thresh = self.cfg.loss_thresh;
        let inflight_prev = (tx_in_flight - size) as f64;
        let lost_prev = (lost - size) as f64;
        let denom = 1.0 - thresh;
        if denom <= 0.0 || !denom.is_finite() {
            return u64::MAX;
        }
        let prefix = if self.cfg.inflight_at_loss_rounds_up {
            let budget = ceil_to_u64(inflight_prev * thresh) as f64;
            if lost_prev >= budget {
                0.0
            } else {
                (budget - lost_prev) / denom
            }
        } else {
            (thresh * inflight_prev - lost_prev) / denom
        };
        let v = inflight_prev + prefix;
        if v.is_nan() || v <= 0.0 {
            0
        } else if v >= u64::MAX as f64 {
            u64::MAX
        } else {
            ceil_to_u64(v)
        }
    }

    /// `HandleInflightTooHigh()`: react once per probe; cut
    /// inflight_longterm to max(tx_in_flight, β × target inflight) unless
    /// app-limited; a probe in UP stops and goes DOWN.
    pub(super) fn handle_inflight_too_high(
        &mut self,
        tx_in_flight: u64,
        is_app_limited: bool,
        now: Instant,
        delivered: u64,
    ) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !is_app_limited {
            let floor = scale(self.target_inflight(), self.cfg.beta);
            self.set_inflight_longterm(tx_in_flight.max(floor));
        }
        if self.state == State::Up {
            self.undo_state = Some(State::Up);
            self.start_probe_bw_down(now, delivered);
        }
    }

    // ----- latest delivery signals and the short-term model (§5.5.10.3) ----

    /// `UpdateLatestDeliverySignals()`. Linux skips invalid samples.
    pub(super) fn update_latest_delivery_signals<const PLAIN: bool>(
        &mut self,
        rs: &RateSample,
        delivered: u64,
    ) {
        self.loss_round_start = false;
        if rs.acked_bytes == 0 {
            return;
        }
        if !PLAIN && self.cfg.round_needs_valid_sample && rs.interval_ns.is_none() {
            return;
        }
        // `bw_latest.max(rate)`, with an invalid sample's rate taken as 0,
        // without `f64::max`'s NaN handling or the substitution: `bw_latest`
        // holds 0 or a sample's rate, never NaN or negative, so neither an
        // invalid sample's NaN nor 0 is greater; a valid rate is never NaN
        // or -0 (bytes over a non-zero interval, both integers).
        debug_assert!(self.bw_latest >= 0.0);
        let rate = self.sample_rate;
        if rate > self.bw_latest {
            self.bw_latest = rate;
        }
        // The max, written only when it rises (most ACKs leave it).
        if rs.delivered_bytes > self.inflight_latest {
            self.inflight_latest = rs.delivered_bytes;
        }
        if rs.prior_delivered_bytes >= self.loss_round_delivered {
            self.loss_round_delivered = delivered;
            self.loss_round_start = true;
        }
    }

    /// `AdvanceLatestDeliverySignals()`.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = self.sample_rate().unwrap_or(0.0);
            self.inflight_latest = rs.delivered_bytes;
        }
    }

    /// `ResetCongestionSignals()`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.is_ecn_in_round = false;
        self.ce_new_episode_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// `UpdateCongestionSignals()`: max_bw every ACK, the short-term model
    /// once per loss round.
    ///
    /// Always inlined: with two copies of the ACK rules
    /// ([`Bbr3::on_ack_as`]) LLVM called it out of line in both, a call and
    /// its register saves on every ACK (`examples/ack_loop`: bbr3 693
    /// instructions per send+ACK with the calls, 662 without).
    #[inline(always)]
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_max_bw(rs);
        if rs.lost_bytes > 0 {
            // Linux: `loss_in_round |= rs->losses > 0`.
            self.is_loss_in_round = true;
        }
        if !self.loss_round_start {
            return;
        }
        self.loss_round_had_loss = self.is_loss_in_round;
        self.adapt_lower_bounds_from_congestion();
        self.is_loss_in_round = false;
        self.is_ecn_in_round = false;
        self.ce_new_episode_in_round = false;
    }

    /// `IsProbingBW()`: STARTUP, REFILL and UP only. DOWN and CRUISE are
    /// *not* probing and so apply the short-term cuts; an implementation
    /// that treats all four PROBE_BW phases as probing never cuts.
    pub(super) fn is_probing_bw(&self) -> bool {
        matches!(self.state, State::Startup | State::Refill | State::Up)
    }

    /// `AdaptLowerBoundsFromCongestion()`, once per round: loss (and, per
    /// the ECN profile, CE) cuts the short-term model by β, never below
    /// what the last round delivered; Linux's ECN response cuts
    /// inflight_shortterm by `ecn_factor × ecn_alpha`.
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        let mut ecn_inflight = u64::MAX;
        let loss_like = match self.cfg.ecn {
            Bbr3Ecn::AsLoss => self.is_loss_in_round || self.is_ecn_in_round,
            // CE is handled below, without the floor.
            Bbr3Ecn::Classic => self.is_loss_in_round && !self.is_ecn_in_round,
            Bbr3Ecn::LinuxV3 => {
                if self.is_ecn_in_round && self.cfg.ecn_factor > 0 {
                    self.init_lower_bounds(false);
                    ecn_inflight = self.ecn_cut(self.inflight_shortterm);
                }
                self.is_loss_in_round
            }
        };
        if loss_like {
            self.init_lower_bounds(true);
            self.loss_lower_bounds();
        }
        if self.cfg.ecn == Bbr3Ecn::Classic && self.is_ecn_in_round && self.ce_new_episode_in_round
        {
            // RFC 3168 §6.1.2: the multiplicative decrease a Reno flow
            // makes, once per round with CE, not floored at the last
            // round's delivery as the loss cut is (that floor keeps random
            // loss from being over-read; CE is never random). Floored the
            // cut leaves a CE-responsive co-flow to do all the yielding
            // (picoquic issue 2029). Once per episode: marks for data
            // sent before the last cut do not cut again.
            self.init_lower_bounds(false);
            let beta = self.cfg.beta;
            self.set_inflight_shortterm(scale(self.inflight_shortterm, beta));
        }
        self.set_inflight_shortterm(self.inflight_shortterm.min(ecn_inflight));
    }

    /// `InitLowerBounds()`: the first cut of a cycle starts from max_bw and
    /// the current cwnd.
    fn init_lower_bounds(&mut self, init_bw: bool) {
        if init_bw && self.bw_shortterm.is_infinite() {
            self.set_bw_shortterm(self.max_bw());
        }
        if self.inflight_shortterm == u64::MAX {
            self.set_inflight_shortterm(self.cwnd);
        }
    }

    /// `LossLowerBounds()`: × β, floored at the latest round's delivery.
    fn loss_lower_bounds(&mut self) {
        let beta = self.cfg.beta;
        self.set_bw_shortterm(self.bw_latest.max(beta * self.bw_shortterm));
        self.set_inflight_shortterm(
            self.inflight_latest
                .max(scale(self.inflight_shortterm, beta)),
        );
    }

    /// `ResetShortTermModel()`.
    pub(super) fn reset_short_term_model(&mut self) {
        self.set_bw_shortterm(f64::INFINITY);
        self.set_inflight_shortterm(u64::MAX);
    }

    // ----- full pipe and STARTUP's exits (§5.3.1) ---------------------------

    /// `ResetFullBW()`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// `CheckFullBWReached()`: three non-app-limited rounds whose delivery
    /// rate grew less than 25 %. Linux v3 restarts the count on any ACK
    /// whose sample grew 25 %, and counts only at round starts.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let Some(rate) = self.sample_rate() else {
            return;
        };
        if !self.cfg.full_bw_check_every_ack && !self.round_start {
            return;
        }
        if rate >= self.full_bw * self.cfg.full_bw_threshold {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_count = self.full_bw_count.saturating_add(1);
        self.full_bw_now = self.full_bw_count >= self.cfg.full_bw_rounds;
        if self.full_bw_now {
            self.set_full_bw_reached(true);
        }
    }

    /// `CheckStartupHighLoss()` (§5.3.1.3; Linux
    /// `bbr_check_loss_too_high_in_startup()`): at the end of a loss round
    /// in recovery, exit STARTUP if the round lost more than `loss_thresh`
    /// in at least `startup_full_loss_count` events. Without selective
    /// ACKs any loss in recovery does.
    pub(super) fn check_startup_high_loss(&mut self, ctx: &AckContext<'_>) {
        if self.full_bw_reached || self.state != State::Startup {
            if self.loss_round_start {
                self.loss_events_in_round = 0;
            }
            return;
        }
        if self.loss_round_start {
            let rs = ctx.rate;
            let lost = self.sample_lost(ctx);
            // "In fast recovery for at least one full round": the loss
            // round began at the round's first loss, which began or
            // continued an episode. Under RFC 9002's short episodes the
            // episode may have just ended as the round did, so a round
            // with loss counts as a round in recovery; an RTO's recovery
            // (TCP_CA_Loss) does not, as in Linux.
            let in_recovery = ctx.recovery == RecoveryState::Recovery
                || (self.loss_round_had_loss && ctx.recovery <= RecoveryState::Cwr);
            let ce_round = self.cfg.ecn.ce_as_loss() && self.round_ce_too_high();
            let too_high = (in_recovery
                && self.is_inflight_too_high(lost, self.sample_tx_in_flight(rs)))
                || ce_round;
            let enough = !self.cfg.selective_acks
                || self.loss_events_in_round >= self.cfg.startup_full_loss_count;
            let any = self.cfg.startup_full_loss_count > 0;
            if any && too_high && enough && (in_recovery || ce_round) {
                self.handle_queue_too_high_in_startup();
            }
            self.loss_events_in_round = 0;
        }
    }

    /// STARTUP ends on congestion: the pipe is deemed full and
    /// inflight_longterm is set to max(BDP, what the last round delivered)
    /// (draft §5.3.1.3; Linux `bbr_handle_queue_too_high_in_startup()`,
    /// whose BDP includes the quantization budget). Undo may return here.
    pub(super) fn handle_queue_too_high_in_startup(&mut self) {
        self.set_full_bw_reached(true);
        self.undo_state = Some(State::Startup);
        let bw = self.max_bw();
        let bdp = if self.cfg.startup_exit_bdp_with_budget {
            self.inflight(bw, 1.0)
        } else {
            self.bdp_multiple(bw, 1.0)
        };
        self.set_inflight_longterm(bdp.max(self.inflight_latest));
    }

    // ----- ECN ---------------------------------------------------------------

    /// Whether this connection reacts to CE: under the draft always (§3.7);
    /// under Linux v3 once ECN-capable on a path with min_rtt at most
    /// `ecn_max_rtt_ns` (`bbr->ecn_eligible`, sticky once set).
    fn update_ecn_eligible(&mut self) {
        if self.ecn_eligible {
            return;
        }
        let capable = self.cfg.ecn_capable || self.ce_packets_total > 0;
        let low_rtt = self.cfg.ecn_max_rtt_ns == 0
            || self
                .min_rtt_ns
                .is_some_and(|m| m <= self.cfg.ecn_max_rtt_ns);
        self.ecn_eligible = match self.cfg.ecn {
            Bbr3Ecn::AsLoss | Bbr3Ecn::Classic => capable,
            Bbr3Ecn::LinuxV3 => capable && low_rtt && self.cfg.ecn_factor > 0,
        };
    }

    /// At each round start: the round's CE fraction (in 1/256 of the
    /// packets acknowledged), Linux's EWMA `ecn_alpha`
    /// (`bbr_update_ecn_alpha()`), and STARTUP's exit on ECN.
    pub(super) fn update_ecn_round(&mut self, _ctx: &AckContext<'_>) {
        self.update_ecn_eligible();
        let acked = self
            .acked_packets_total
            .saturating_sub(self.alpha_last_acked);
        let ce = self.ce_packets_total.saturating_sub(self.alpha_last_ce);
        if !self.ecn_eligible || acked == 0 {
            self.round_ce_ratio = 0;
            if self.cfg.ecn.ce_as_loss() {
                // Rounds before the first CE mark are not CE-free rounds
                // of an ECN path; the first judged round is the one that
                // brought the mark. (Linux, as `bbr_update_ecn_alpha()`,
                // counts from the start once eligible.)
                self.alpha_last_acked = self.acked_packets_total;
                self.alpha_last_ce = self.ce_packets_total;
            }
            return;
        }
        let ratio = (u128::from(ce.min(acked)) << 8) / u128::from(acked);
        let ratio = ratio.min(u128::from(BBR_UNIT)) as u32;
        self.round_ce_ratio = ratio;
        self.alpha_last_acked = self.acked_packets_total;
        self.alpha_last_ce = self.ce_packets_total;
        if self.cfg.ecn == Bbr3Ecn::LinuxV3 {
            let gain = self.cfg.ecn_alpha_gain.min(BBR_UNIT);
            let alpha = ((BBR_UNIT - gain) * self.ecn_alpha) >> 8;
            let alpha = alpha + ((gain * ratio) >> 8);
            self.ecn_alpha = alpha.min(BBR_UNIT);
            // bbr_check_ecn_too_high_in_startup()
            if !self.full_bw_reached && self.cfg.full_ecn_rounds > 0 && self.cfg.ecn_thresh > 0 {
                if ratio >= self.cfg.ecn_thresh {
                    self.startup_ecn_rounds = self.startup_ecn_rounds.saturating_add(1);
                } else {
                    self.startup_ecn_rounds = 0;
                }
                if self.startup_ecn_rounds >= self.cfg.full_ecn_rounds {
                    self.handle_queue_too_high_in_startup();
                }
            }
        }
    }

    /// Notes CE marks this ACK reported: the round has ECN congestion,
    /// and under the draft's reading each such ACK is one loss event.
    pub(super) fn note_ce(&mut self, ctx: &AckContext<'_>) {
        if ctx.ce_packets == 0 {
            return;
        }
        self.update_ecn_eligible();
        if !self.ecn_eligible {
            return;
        }
        if self.cfg.ecn.ce_as_loss() {
            // As NoteLoss(): the first congestion of a round starts the
            // loss round, and each CE-reporting ACK is one loss event.
            if !self.is_loss_in_round && !self.is_ecn_in_round {
                self.loss_round_delivered = ctx.delivered_bytes;
            }
            self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        }
        self.is_ecn_in_round = true;
    }

    /// Whether the last round's CE fraction says inflight was too high:
    /// above `loss_thresh` (the draft, CE as loss) or `ecn_thresh`
    /// (Linux `bbr_is_inflight_too_high()`).
    pub(super) fn round_ce_too_high(&self) -> bool {
        if !self.ecn_eligible || self.round_ce_ratio == 0 {
            return false;
        }
        match self.cfg.ecn {
            Bbr3Ecn::AsLoss | Bbr3Ecn::Classic => {
                f64::from(self.round_ce_ratio) / f64::from(BBR_UNIT) > self.cfg.loss_thresh
            }
            Bbr3Ecn::LinuxV3 => {
                self.cfg.ecn_thresh > 0 && self.round_ce_ratio > self.cfg.ecn_thresh
            }
        }
    }

    /// The ECN half of `IsInflightTooHigh()`, judged on this sample's own
    /// interval as Linux v3's `bbr_is_inflight_too_high()` does (`ce >
    /// delivered × ecn_thresh`, both in packets, counted from the ACKed
    /// packet's send): above `ecn_thresh` (Linux) or `loss_thresh` (the
    /// draft's readings). Judging only once per round, from the round
    /// before, would let every ACK between round starts pass as safe and
    /// raise `inflight_longterm` again right after a probe was cut for CE.
    pub(super) fn sample_ce_too_high(&self, rs: &RateSample) -> bool {
        let (ce, delivered) = (rs.delivered_ce_packets, rs.delivered_packets);
        if !self.ecn_eligible || ce == 0 || delivered == 0 {
            return false;
        }
        match self.cfg.ecn {
            Bbr3Ecn::AsLoss | Bbr3Ecn::Classic => {
                u64_as_f64(ce) > u64_as_f64(delivered) * self.cfg.loss_thresh
            }
            Bbr3Ecn::LinuxV3 => {
                self.cfg.ecn_thresh > 0
                    && u128::from(ce)
                        > (u128::from(delivered) * u128::from(self.cfg.ecn_thresh)) >> 8
            }
        }
    }

    /// `bbr_ecn_cut()`: `v × (1 − ecn_alpha × ecn_factor)`, in Linux's
    /// fixed point.
    fn ecn_cut(&self, v: u64) -> u64 {
        if v == u64::MAX {
            return v;
        }
        let cut =
            BBR_UNIT.saturating_sub((self.ecn_alpha * self.cfg.ecn_factor.min(BBR_UNIT)) >> 8);
        ((u128::from(v) * u128::from(cut)) >> 8) as u64
    }

    // ----- spurious-loss undo (§5.5.11.2) ------------------------------------

    /// `HandleSpuriousLossDetection()`: restore cwnd and the model saved at
    /// the start of the episode; the draft also returns to STARTUP or to
    /// the probe the losses ended (Linux `bbr_undo_cwnd()` does not).
    pub(super) fn handle_spurious_loss(&mut self, now: Instant) {
        self.restore_cwnd();
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.set_bw_shortterm(self.bw_shortterm.max(self.undo_bw_shortterm));
        self.set_inflight_shortterm(self.inflight_shortterm.max(self.undo_inflight_shortterm));
        self.set_inflight_longterm(self.inflight_longterm.max(self.undo_inflight_longterm));
        if self.cfg.undo_restores_state {
            match self.undo_state {
                Some(State::Startup) if self.state != State::Startup => {
                    self.set_full_bw_reached(false);
                    if self.state != State::ProbeRtt {
                        self.enter_startup();
                    }
                }
                Some(State::Up) if self.state != State::Up && self.state != State::ProbeRtt => {
                    self.start_probe_bw_refill(0, self.delivered_total);
                }
                _ => {}
            }
        }
        self.undo_state = None;
        let _ = now;
    }
}
