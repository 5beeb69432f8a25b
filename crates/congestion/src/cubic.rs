//! CUBIC (RFC 9438) with HyStart++ slow start (RFC 9406), or Linux's
//! HyStart ([`crate::HyStartVariant::Linux`]).
//!
//! After a loss, CUBIC grows the window along a cubic curve centred on the
//! window where the loss happened (W_max): fast while far below it, flat
//! near it (the plateau where the last loss struck), then accelerating past
//! it to probe for more. The curve depends on time since the loss, not on
//! RTT, so flows with different RTTs converge to similar windows. Where
//! Reno would grow faster (small BDPs), CUBIC follows a Reno estimate
//! instead (the Reno-friendly region).
//!
//! HyStart++ leaves slow start when the per-round minimum RTT rises,
//! i.e. when a queue starts to form, and then grows cautiously
//! (conservative slow start) for a few rounds before congestion avoidance.
//!
//! Windows in the formulas are in segments and time in seconds, as in the
//! RFC; the controller's window is in bytes.

use crate::algorithm::{AckContext, CongestionControl};
use crate::config::{Config, CubicAvoidance, CubicConfig, HyStartVariant};
use crate::delivery_rate::DeliveryRateSampler;
use crate::float::{floor_of_non_negative, u64_as_f64};
use crate::linux_hystart::{delay_threshold_ns, LinuxHyStart, DELAY_SAMPLES};
use crate::loss_based::Window;
use crate::snapshot::{Mode, Snapshot};
use crate::time::Instant;

/// RFC 9406 §4.3 constants (the RTT threshold and sample count are
/// Linux's too: [`delay_threshold_ns`], [`DELAY_SAMPLES`]).
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

/// HyStart++ round-by-round RTT tracking (RFC 9406 §4.2).
#[derive(Clone, Debug, Default)]
struct HyStart {
    /// The round ends when a packet sent after this much was delivered is acked.
    round_end_delivered: u64,
    last_round_min_rtt_ns: Option<u64>,
    current_round_min_rtt_ns: Option<u64>,
    rtt_samples: u32,
    /// Set while in conservative slow start: (baseline min RTT, rounds so far).
    css: Option<(u64, u32)>,
}

/// CUBIC.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    w: Window,
    hystart: HyStart,
    /// Used instead of `hystart` with [`HyStartVariant::Linux`].
    linux_hystart: LinuxHyStart,
    /// No congestion event since the start or the last timeout (Linux:
    /// `last_max_cwnd == 0`).
    no_event_yet: bool,
    /// Window at the last congestion event, segments (W_max).
    w_max: f64,
    /// Window before the last reduction, segments (cwnd_prior, §4.3).
    cwnd_prior: f64,
    /// Start of the current avoidance epoch and its K (seconds).
    epoch: Option<(Instant, f64)>,
    /// When the last packet was sent (Linux `lsndtime`), to move the
    /// epoch past an idle period.
    last_sent: Option<Instant>,
    /// The Reno-friendly estimate, segments (W_est).
    w_est: f64,
    /// [`Cubic::aimd_alpha_of`] of `cfg`.
    aimd_alpha: f64,
    /// Fractional growth not yet added to cwnd, bytes.
    pending_growth: f64,
    srtt_ns: Option<u64>,
    min_rtt_ns: Option<u64>,
}

impl Cubic {
    /// CUBIC with `config.cubic`'s switches and `config`'s initial window.
    pub fn new(config: &Config) -> Self {
        Cubic {
            cfg: config.cubic,
            w: Window::new(
                config.mss_bytes,
                config.initial_cwnd_packets,
                config.window_reduction,
            ),
            hystart: HyStart::default(),
            linux_hystart: LinuxHyStart::default(),
            no_event_yet: true,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            last_sent: None,
            w_est: 0.0,
            aimd_alpha: Self::aimd_alpha_of(&config.cubic),
            pending_growth: 0.0,
            srtt_ns: None,
            min_rtt_ns: None,
        }
    }

    fn segments(&self, bytes: u64) -> f64 {
        u64_as_f64(bytes) / u64_as_f64(self.w.mss)
    }

    /// W_cubic(t) = C(t − K)³ + W_max, segments (RFC 9438 §4.2, eq. 1).
    fn w_cubic(&self, t_secs: f64, k: f64) -> f64 {
        let d = t_secs - k;
        self.cfg.c * d * d * d + self.w_max
    }

    /// α_cubic (RFC 9438 §4.3): 3(1−β)/(1+β) until W_est passes the window
    /// before the last reduction, then 1 (plain Reno); Linux's constant
    /// for good (see [`Cubic::aimd_alpha_of`]).
    fn alpha(&self) -> f64 {
        match self.cfg.avoidance {
            CubicAvoidance::Rfc9438 if self.w_est >= self.cwnd_prior => 1.0,
            _ => self.aimd_alpha,
        }
    }

    /// α_cubic below the Reno estimate's switch to 1, a constant of the
    /// configuration, computed once: RFC 9438's 3(1−β)/(1+β); Linux
    /// keeps its integer form of it for good: one segment per
    /// `cwnd · beta_scale / 8` acked, `beta_scale` = ⌊8(1+β)/(3(1−β))⌋
    /// (`cubictcp_register()`, `bictcp_update()`). Computed on every
    /// avoidance ACK it cost five instructions (Linux's, with `floor`'s
    /// libm call, some thirty); the expressions are the ones that ran
    /// per ACK, so the value is the same, bit for bit.
    fn aimd_alpha_of(cfg: &CubicConfig) -> f64 {
        let beta = cfg.beta;
        match cfg.avoidance {
            CubicAvoidance::Linux => {
                let beta_scale = (8.0 * (1.0 + beta) / (3.0 * (1.0 - beta))).floor();
                if beta_scale >= 1.0 {
                    8.0 / beta_scale
                } else {
                    3.0 * (1.0 - beta) / (1.0 + beta)
                }
            }
            CubicAvoidance::Rfc9438 => 3.0 * (1.0 - beta) / (1.0 + beta),
        }
    }

    /// How far ahead the curve is aimed, seconds: one smoothed RTT (RFC
    /// 9438 §4.4), or Linux's minimum RTT (`delay_min` in
    /// `bictcp_update()`), which in a deep queue is far shorter.
    fn lookahead_secs(&self) -> f64 {
        let ns = match self.cfg.avoidance {
            CubicAvoidance::Rfc9438 => self.srtt_ns,
            CubicAvoidance::Linux => self.min_rtt_ns.or(self.srtt_ns),
        };
        u64_as_f64(ns.unwrap_or(0)) / 1e9
    }

    /// HyStart++ bookkeeping and slow-start growth (RFC 9406 §4.2).
    fn slow_start(&mut self, ctx: &AckContext<'_>, acked: u64) {
        let h = &mut self.hystart;
        if ctx.rate.prior_delivered_bytes >= h.round_end_delivered {
            // A new round: last round's min RTT becomes the reference.
            h.round_end_delivered = ctx.delivered_bytes;
            h.last_round_min_rtt_ns = h.current_round_min_rtt_ns.take();
            h.rtt_samples = 0;
            if let Some((_, rounds)) = h.css.as_mut() {
                *rounds += 1;
                if *rounds >= CSS_ROUNDS {
                    // §4.2: after CSS_ROUNDS, enter congestion avoidance.
                    h.css = None;
                    self.w.ssthresh = self.w.cwnd;
                    return;
                }
            }
        }
        if let Some(rtt) = ctx.rtt_sample {
            let rtt = crate::time::duration_to_nanos(rtt);
            h.current_round_min_rtt_ns =
                Some(h.current_round_min_rtt_ns.map_or(rtt, |m| m.min(rtt)));
            h.rtt_samples = h.rtt_samples.saturating_add(1);
        }
        let enough = h.rtt_samples >= DELAY_SAMPLES;
        match (h.css, h.current_round_min_rtt_ns, h.last_round_min_rtt_ns) {
            (None, Some(cur), Some(last))
                if enough && cur >= last.saturating_add(delay_threshold_ns(last)) =>
            {
                h.css = Some((cur, 0));
            }
            (Some((baseline, _)), Some(cur), _) if enough && cur < baseline => {
                // The RTT rise was spurious: resume slow start.
                h.css = None;
            }
            _ => {}
        }
        let grow = if h.css.is_some() {
            acked / CSS_GROWTH_DIVISOR
        } else {
            acked
        };
        self.w.cwnd = self.w.cwnd.saturating_add(grow);
    }

    /// Congestion avoidance (RFC 9438 §4.2–4.5).
    fn avoidance(&mut self, now: Instant, acked: u64) {
        let cwnd_seg = self.segments(self.w.cwnd);
        if self.epoch.is_none() {
            // §4.2, eq. 2: K from the window at the start of the epoch. Above
            // W_max (no loss yet, or the window outgrew it) the curve starts
            // at its inflection point here: K = 0, W_max = cwnd.
            let k = if self.w_max > cwnd_seg {
                ((self.w_max - cwnd_seg) / self.cfg.c).cbrt()
            } else {
                self.w_max = cwnd_seg;
                0.0
            };
            self.epoch = Some((now, k));
            // §4.3: W_est starts from the epoch's window.
            self.w_est = cwnd_seg;
        }
        let (start, k) = self.epoch.unwrap_or((now, 0.0));
        let t = now.saturating_since(start).as_secs_f64();
        let rtt = self.lookahead_secs();
        let acked_seg = self.segments(acked);
        // §4.3: the Reno-friendly estimate grows α_cubic per window acked.
        self.w_est += self.alpha() * acked_seg / cwnd_seg.max(1.0);
        // §4.4: aim for W_cubic one RTT ahead (see `lookahead_secs`), clamped
        // to [cwnd, 1.5 cwnd], closing (target − cwnd)/cwnd per segment acked.
        let cubic_seg = || {
            let target = self.w_cubic(t + rtt, k).clamp(cwnd_seg, 1.5 * cwnd_seg);
            cwnd_seg + (target - cwnd_seg) / cwnd_seg.max(1.0) * acked_seg
        };
        let linux = self.cfg.avoidance == CubicAvoidance::Linux;
        let new_seg = if !self.cfg.reno_friendly {
            cubic_seg()
        } else if linux {
            // Linux takes whichever grows faster: the cubic target's
            // increment, or catching up with the Reno estimate (the
            // estimate caps `cnt` at cwnd / (tcp_cwnd − cwnd) in
            // `bictcp_update()`), even while W_cubic(t) is below the
            // estimate but the target one min RTT ahead is above it.
            cubic_seg().max(self.w_est)
        } else if self.w_cubic(t, k) < self.w_est {
            // RFC 9438 §4.3: the Reno-friendly region.
            self.w_est
        } else {
            cubic_seg()
        };
        // Linux, after a HyStart exit and before any loss, grows at least
        // 5 % per round trip (`bictcp_update()` caps cnt at 20 while
        // last_max_cwnd is 0): the cubic curve alone, starting flat at the
        // exit window, would take tens of seconds to fill a deep buffer.
        // A rule of Linux's avoidance, kept with Linux's HyStart too,
        // which it followed before the avoidance switch existed.
        let linux_floor = linux || self.cfg.hystart_variant == HyStartVariant::Linux;
        let new_seg = if linux_floor && self.no_event_yet {
            new_seg.max(cwnd_seg + acked_seg / 20.0)
        } else {
            new_seg
        };
        let growth = (new_seg - cwnd_seg) * u64_as_f64(self.w.mss) + self.pending_growth;
        if growth.is_finite() && growth >= 1.0 {
            // `growth.floor()` and its cast, without floor's libm call.
            let (whole, whole_bytes) = floor_of_non_negative(growth);
            self.w.cwnd = self.w.cwnd.saturating_add(whole_bytes);
            self.pending_growth = growth - whole;
        } else if growth.is_finite() {
            self.pending_growth = growth.max(0.0);
        }
    }

    /// A congestion event: remember W_max and cut by β (RFC 9438 §4.6–4.7).
    fn reduce(&mut self) {
        self.no_event_yet = false;
        let cwnd_seg = self.segments(self.w.cwnd);
        self.w_max = if self.cfg.fast_convergence && cwnd_seg < self.w_max {
            // §4.7: release bandwidth to newer flows.
            cwnd_seg * (1.0 + self.cfg.beta) / 2.0
        } else {
            cwnd_seg
        };
        self.cwnd_prior = cwnd_seg;
        self.w.ssthresh = ((self.w.cwnd as f64 * self.cfg.beta) as u64).max(self.w.min_window());
        self.epoch = None;
        self.pending_growth = 0.0;
        self.hystart.css = None;
    }

    fn current_mode(&self) -> Mode {
        if !self.w.in_slow_start() {
            Mode::CongestionAvoidance
        } else if self.hystart.css.is_some() {
            Mode::ConservativeSlowStart
        } else {
            Mode::SlowStart
        }
    }
}

impl CongestionControl for Cubic {
    /// The built-in's canonical name (seen when [`crate::builtin`] runs
    /// it inside a user's algorithm).
    fn name(&self) -> &str {
        "cubic"
    }

    fn on_ack(&mut self, ctx: &AckContext<'_>, _sampler: &mut DeliveryRateSampler) {
        self.w.on_ack(ctx);
        self.srtt_ns = ctx.rtt.smoothed_ns();
        self.min_rtt_ns = ctx.rtt.min_ns();
        let acked = ctx.rate.acked_bytes;
        let linux_hystart = self.cfg.hystart && self.cfg.hystart_variant == HyStartVariant::Linux;
        if linux_hystart && acked > 0 && self.w.in_slow_start() {
            // Linux judges every ACK with an RTT sample in slow start, used
            // window or not (`cubictcp_acked()` runs from pkts_acked, before
            // and apart from `cong_avoid`), and grows after: an ACK that
            // ends slow start already grows as avoidance below.
            let cwnd_packets = self.w.cwnd / self.w.mss.max(1);
            if self.linux_hystart.on_ack(
                ctx.now,
                ctx.rtt_sample,
                ctx.rate.prior_delivered_bytes,
                ctx.delivered_bytes,
                cwnd_packets,
                self.w.pacing_rate,
            ) {
                self.w.ssthresh = self.w.cwnd;
            }
        }
        // RFC 9438 §4.6 / RFC 6582: no growth during recovery; Linux
        // `cubictcp_cong_avoid()`: none unless cwnd-limited.
        if acked > 0 && self.w.may_grow(ctx.recovery) {
            if !self.w.in_slow_start() {
                self.avoidance(ctx.now, acked);
            } else if self.cfg.hystart && !linux_hystart {
                self.slow_start(ctx, acked);
            } else {
                self.w.cwnd = self.w.cwnd.saturating_add(acked);
            }
        }
        self.w.update_pacing(self.srtt_ns);
    }

    /// RFC 9438 §4.6 and RFC 3168 §6.1.2: a congestion event signalled by
    /// ECN reduces the window as a loss does, at most once per round trip
    /// (the controller's episode, RFC 9002 §7.1).
    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        _ce_packets: u64,
        bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        self.on_packets_lost(now, 0, bytes_in_flight, new_episode);
        true
    }

    fn on_packets_lost(
        &mut self,
        _now: Instant,
        _lost_bytes: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) {
        if !new_episode {
            return;
        }
        self.w.save_for_undo();
        self.reduce();
        self.w.begin_reduction();
        self.w.update_pacing(self.srtt_ns);
    }

    /// A send with nothing in flight ends an idle period: the avoidance
    /// epoch moves later by the time since the last send, so the cubic
    /// curve resumes where it left off instead of reading the idle time as
    /// growth. Without it `t` runs on through the idle, the curve's target
    /// is far above the window, and the window grows by the clamp's 1.5×
    /// per round trip after a few seconds idle (an adopter saw 546 kB →
    /// 2.76 MB in four round trips after 30 s). RFC 9438 §5.8 keeps an
    /// application-limited flow's window from growing; Linux moves the
    /// epoch so (`bictcp_cwnd_event()` on `CA_EVENT_TX_START`, which
    /// `tcp_event_data_sent()` raises when nothing is in flight), never
    /// past now.
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        if in_flight_before == 0 {
            if let (Some((start, k)), Some(last)) = (self.epoch, self.last_sent) {
                let moved = start.saturating_add_nanos(now.nanos_since(last));
                self.epoch = Some((moved.min(now), k));
            }
        }
        self.last_sent = Some(now);
        self.w.on_packet_sent(now, bytes, in_flight_before);
    }

    fn on_held_by_cwnd(&mut self, now: Instant, in_flight: u64) {
        self.w.on_held_by_cwnd(now, in_flight);
    }

    /// §4.8: ssthresh as for a loss (β), cwnd to one packet. Linux's
    /// HyStart starts over (`cubictcp_state()` on `TCP_CA_Loss`).
    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        self.linux_hystart.reset();
        self.w.save_for_undo();
        self.reduce();
        // Linux's `bictcp_reset()` on `TCP_CA_Loss` forgets last_max_cwnd.
        self.no_event_yet = true;
        let ssthresh = self.w.ssthresh;
        self.w.on_timeout(ssthresh);
        self.w.update_pacing(self.srtt_ns);
    }

    /// The timeout's answer with nothing in flight, then RFC 9002 §7.6.2's
    /// minimum window.
    fn on_persistent_congestion(&mut self, now: Instant, min_window: u64) {
        self.on_retransmission_timeout(now, 0);
        self.w.on_persistent_congestion(min_window, self.srtt_ns);
    }

    /// Restores cwnd and ssthresh as Linux's CUBIC does (it undoes with
    /// `tcp_reno_undo_cwnd()`). W_max and the epoch are not restored:
    /// RFC 9438 §4.9 allows it, but the kernel we validate against does
    /// not, and the next avoidance epoch starts from the restored cwnd.
    fn on_spurious_loss(&mut self, _now: Instant) {
        if self.w.undo() {
            self.epoch = None;
            self.pending_growth = 0.0;
            self.w.update_pacing(self.srtt_ns);
        }
    }

    fn on_mss_change(&mut self, mss: u64) {
        // W_max and W_est are in segments, so they carry over unchanged.
        self.w.on_mss_change(mss, self.srtt_ns);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.w.cwnd
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.w.pacing_rate_bytes_per_sec()
    }

    fn send_quantum_bytes(&self) -> u64 {
        self.w.send_quantum
    }

    fn mode(&self) -> Mode {
        self.current_mode()
    }

    fn snapshot(&self) -> Snapshot {
        self.w.snapshot(self.current_mode())
    }
}
