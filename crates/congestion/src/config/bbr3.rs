//! BBRv3's profiles, constants and switches ([`Bbr3Config`],
//! [`Bbr3Profile`], [`Bbr3Signals`]).
//! Re-exported from [`crate::config`].

use core::fmt;
use core::str::FromStr;

/// Whose BBRv3 `bbr3` runs: a named set of [`Bbr3Config`] constants and
/// switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Bbr3Profile {
    /// draft-ietf-ccwg-bbr-06, the default.
    #[default]
    Draft,
    /// The google/bbr v3 branch of Linux (`tcp_bbr.c`): its constants and
    /// its ECN response.
    LinuxV3,
}

impl Bbr3Profile {
    /// Every profile, in the order they are listed to users.
    pub const ALL: [Bbr3Profile; 2] = [Bbr3Profile::Draft, Bbr3Profile::LinuxV3];

    /// The canonical name: `draft`, `linux-v3`.
    pub fn name(self) -> &'static str {
        match self {
            Bbr3Profile::Draft => "draft",
            Bbr3Profile::LinuxV3 => "linux-v3",
        }
    }
}

impl fmt::Display for Bbr3Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned when parsing a BBRv3 profile name fails; its message lists the
/// known names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBbr3Profile {
    /// The name that was given.
    pub given: String,
}

impl fmt::Display for UnknownBbr3Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown bbr3 profile `{}`; known profiles: draft, linux-v3",
            self.given
        )
    }
}

impl std::error::Error for UnknownBbr3Profile {}

impl FromStr for Bbr3Profile {
    type Err = UnknownBbr3Profile;

    /// Parses `draft` or `linux-v3`, ignoring ASCII case and surrounding
    /// whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Bbr3Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownBbr3Profile {
                given: s.to_string(),
            })
    }
}

/// Constants and switches for BBRv3. [`Bbr3Config::draft`] (the default)
/// and [`Bbr3Config::linux_v3`] set them per profile; each difference
/// between the two is a field of its own, so an experiment can take one
/// profile and change a single switch. Linux's values are its fixed-point
/// constants (BBR_UNIT = 256) as the kernel computes them, so 0.90625
/// rather than 0.91 where the kernel truncates 256 × 91 / 100 to 232.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Bbr3Config {
    /// The profile these values are (read with [`Bbr3Config::profile`]).
    /// Private, and set only by the constructors ([`Bbr3Config::draft`],
    /// [`Bbr3Config::linux_v3`], [`Bbr3Config::for_profile`]): a public
    /// label could be set without the constants it names, and a config
    /// so labelled ran the other profile.
    profile: Bbr3Profile,
    /// STARTUP pacing gain: the draft's 4 ln 2 ≈ 2.77 (§2.5); Linux
    /// `bbr_startup_pacing_gain` = 256 × 277 / 100 + 1 = 710/256.
    pub startup_pacing_gain: f64,
    /// STARTUP and DRAIN cwnd gain, 2 (§2.6, `bbr_startup_cwnd_gain`).
    pub startup_cwnd_gain: f64,
    /// DRAIN pacing gain: the draft's 0.5 (§2.5), enough to drain in one
    /// round; Linux `bbr_drain_gain` = 256 × 1000 / 2885 = 88/256, v1's
    /// 1/2.885.
    pub drain_pacing_gain: f64,
    /// The draft leaves DRAIN for PROBE_BW after this many rounds even if
    /// inflight is still above the BDP (§5.3.2, `drain_start_round + 3`):
    /// an overestimated bandwidth would otherwise hold it in DRAIN. Linux
    /// v3 has no such exit (`None`).
    pub drain_max_rounds: Option<u64>,
    /// DRAIN ends when inflight ≤ Inflight(1.0): the draft builds it on
    /// `BBR.bw` (§5.3.2 `BBRInflight(1.0)` via `BDPMultiple()`), which a
    /// lossy round in DRAIN lowers through bw_shortterm; Linux on
    /// `bbr_max_bw()` (`bbr_check_drain()`).
    pub drain_target_uses_max_bw: bool,
    /// Linux v3 resets its congestion signals on entering DRAIN
    /// (`bbr_check_drain()`); the draft's `EnterDrain()` does not.
    pub drain_resets_congestion_signals: bool,
    /// PROBE_BW DOWN pacing gain: the draft's 0.90 (§5.3.3.1); Linux
    /// `bbr_pacing_gain[BBR_BW_PROBE_DOWN]` = 256 × 91 / 100 = 232/256.
    pub probe_down_pacing_gain: f64,
    /// PROBE_BW UP pacing gain, 1.25 in both (§5.3.3.5).
    pub probe_up_pacing_gain: f64,
    /// PROBE_BW cwnd gain outside UP, 2 (`BBR.DefaultCwndGain`).
    pub cwnd_gain: f64,
    /// PROBE_BW UP cwnd gain, 2.25 in both (§5.3.3.5; Linux 2 +
    /// `bbr_bw_probe_cwnd_gain` / 4).
    pub probe_up_cwnd_gain: f64,
    /// PROBE_RTT cwnd gain: half the BDP (`BBR.ProbeRTTCwndGain`,
    /// `bbr_probe_rtt_cwnd_gain`).
    pub probe_rtt_cwnd_gain: f64,
    /// Pacing below the estimate by this fraction, 1 % in both
    /// (`BBR.PacingMarginPercent`, `bbr_pacing_margin_percent`).
    pub pacing_margin: f64,
    /// Minimum cwnd in packets, 4 (`BBR.MinPipeCwnd`, `bbr_cwnd_min_target`).
    pub min_pipe_cwnd_packets: u64,
    /// The loss rate a probe may cause: the draft's 2 % (`BBR.LossThresh`);
    /// Linux `bbr_loss_thresh` = 256 × 2 / 100 = 5/256 ≈ 1.95 %.
    pub loss_thresh: f64,
    /// Multiplicative decrease per lossy round: the draft's 0.7
    /// (`BBR.Beta`); Linux 1 − `bbr_beta` = (256 − 76)/256 ≈ 0.703.
    pub beta: f64,
    /// Headroom left below inflight_longterm: the draft's 0.15
    /// (`BBR.Headroom`); Linux `bbr_inflight_headroom` = 38/256.
    pub headroom: f64,
    /// Full-pipe growth threshold, 1.25 (§5.3.1.2, `bbr_full_bw_thresh`).
    pub full_bw_threshold: f64,
    /// Full-pipe plateau rounds, 3 (`bbr_full_bw_cnt`).
    pub full_bw_rounds: u32,
    /// Linux v3 (`bbr_check_full_bw_reached()`) compares every ACK's
    /// sample with the baseline and restarts the count on growth, counting
    /// plateau rounds only at round starts; the draft checks only at round
    /// starts.
    pub full_bw_check_every_ack: bool,
    /// STARTUP's high-loss exit needs at least this many loss events in
    /// the round, 6 in both (`BBRStartupFullLossCnt`, `bbr_full_loss_cnt`);
    /// 0 disables the exit.
    pub startup_full_loss_count: u32,
    /// What counts as a loss event for that exit.
    pub startup_loss_count: StartupLossCount,
    /// On STARTUP's congestion exit inflight_longterm becomes max(BDP,
    /// inflight_latest); Linux's BDP includes the quantization budget
    /// (`bbr_inflight()`), the draft's is `BBR.bdp`.
    pub startup_exit_bdp_with_budget: bool,
    /// STARTUP grows cwnd past max_inflight: the draft while less than an
    /// initial window has been delivered (§5.6.4.6); Linux v3 while cwnd
    /// is below twice the initial window (`bbr_set_cwnd()`).
    pub startup_grow_below_twice_initial_cwnd: bool,
    /// Linux counts a round, and takes delivery signals, only from an ACK
    /// with a valid rate sample (`rs->interval_us > 0`); the draft's
    /// `UpdateRound()` counts on any ACK of data.
    pub round_needs_valid_sample: bool,
    /// Linux judges PROBE_BW phases by `prior_in_flight` and DRAIN by
    /// inflight, both as they will be at the pacer's next departure
    /// (`bbr_packets_in_net_at_edt()`); the draft uses `C.inflight`.
    pub inflight_at_edt: bool,
    /// Linux's TargetInflight includes the quantization budget
    /// (`bbr_target_inflight()` calls `bbr_inflight()`); the draft's is
    /// min(BBR.bdp, cwnd).
    pub target_inflight_with_budget: bool,
    /// Linux clamps a set inflight_shortterm to inflight_longterm on
    /// entering CRUISE (`bbr_start_bw_probe_cruise()`); the draft does not.
    pub cruise_clamps_shortterm: bool,
    /// The draft's `NoteLoss()` saves the undo state at the first loss of
    /// each round; Linux only when recovery begins (`bbr_ssthresh()`).
    pub note_loss_saves_state: bool,
    /// Linux's `InflightAtLoss` rounds the loss budget up and never goes
    /// below what was in flight before the lost packet
    /// (`bbr_inflight_hi_from_lost_skb()`); the draft's formula can.
    pub inflight_at_loss_rounds_up: bool,
    /// Interval between PROBE_RTTs, 5 s (`BBR.ProbeRTTInterval`,
    /// `bbr_probe_rtt_win_ms`).
    pub probe_rtt_interval_ns: u64,
    /// Time held at the PROBE_RTT cwnd, 200 ms.
    pub probe_rtt_duration_ns: u64,
    /// min_rtt filter window, 10 s.
    pub min_rtt_window_ns: u64,
    /// Linux will not refresh an expired PROBE_RTT min from a delayed ACK's
    /// RTT (`!rs->is_ack_delayed`); the draft takes any sample.
    pub skip_delayed_ack_rtt: bool,
    /// Wall-clock wait before a probe: base 2 s (§5.3.3.8.2 T_bbr,
    /// `bbr_bw_probe_base_us`)…
    pub probe_wait_base_ns: u64,
    /// … plus uniform in [0, 1 s) (`bbr_bw_probe_rand_us`).
    pub probe_wait_rand_ns: u64,
    /// The Reno-coexistence bound: at most 63 rounds between probes
    /// (`bbr_bw_probe_max_rounds`)…
    pub probe_max_rounds: u64,
    /// … with a random head start of 0 or 1 round (2 values,
    /// `bbr_bw_probe_rand_rounds`).
    pub probe_rand_rounds: u64,
    /// How ACK aggregation is measured.
    pub extra_acked: Bbr3ExtraAcked,
    /// The offload budget in send quanta (§5.5.8): 3 for TCP with TSO/GSO
    /// and GRO (the draft's TCP rule, Linux's `3 * bbr_tso_segs_goal()`),
    /// 1 for QUIC without pacing offload (§5.5.8.2).
    pub offload_budget_quanta: u64,
    /// Linux v3's send quantum adds 64 KiB halved per 512 µs of min_rtt
    /// (`bbr_tso_rtt_shift`); the draft's is 1 ms at the pacing rate.
    pub quantum_rtt_allowance: bool,
    /// The draft restores the pre-loss cwnd when any recovery episode ends
    /// (§5.6.4.4); Linux v3 only after an RTO's (`bbr_set_state()`).
    pub restore_cwnd_after_fast_recovery: bool,
    /// After a spurious episode the draft also returns to STARTUP or
    /// re-probes (REFILL) if the losses ended those (§5.5.11.2); Linux's
    /// `bbr_undo_cwnd()` restores only cwnd and the model.
    pub undo_restores_state: bool,
    /// Linux restarts the full-bw search on an RTO and, when not probing,
    /// seeds inflight_shortterm from the pre-RTO cwnd (`bbr_set_state()`);
    /// the draft's `OnEnterRTO()` does neither.
    pub rto_resets_full_bw: bool,
    /// Whether the transport can report more than one loss per round trip
    /// (`C.has_selective_acks`: QUIC, TCP with SACK). Without, any loss
    /// counts as inflight too high (§5.5.10.2).
    pub selective_acks: bool,
    /// Idle restart at 1.0 × bw (§5.4).
    pub idle_restart: bool,
    /// The response to CE marks.
    pub ecn: Bbr3Ecn,
    /// Whether the transport sends ECN-capable packets, so CE can arrive
    /// (Linux `TCP_ECN_OK`). Without it bbr3 starts responding at the first
    /// CE mark it sees.
    pub ecn_capable: bool,
    /// Linux `bbr_ecn_alpha_gain`, the EWMA gain, 16/256 = 1/16.
    pub ecn_alpha_gain: u32,
    /// Linux `bbr_ecn_alpha_init`, 256 (1.0): respond fully at first.
    pub ecn_alpha_init: u32,
    /// Linux `bbr_ecn_factor`: a CE round cuts inflight_shortterm by
    /// alpha × this, 85/256 ≈ 1/3 (0 disables the ECN response).
    pub ecn_factor: u32,
    /// Linux `bbr_ecn_thresh`: a CE fraction above 128/256 means inflight
    /// is too high.
    pub ecn_thresh: u32,
    /// Linux `bbr_full_ecn_cnt`: STARTUP ends after this many rounds with
    /// a CE fraction at or above `ecn_thresh`, 2.
    pub full_ecn_rounds: u32,
    /// Linux `bbr_ecn_reprobe_gain`: after a cycle with CE and no loss,
    /// re-probe with a first step of inflight_longterm × 128/256.
    pub ecn_reprobe_gain: u32,
    /// Linux `bbr_ecn_max_rtt_us`: the ECN logic runs only while min_rtt
    /// is at most 5 ms (shallow-threshold ECN is a datacenter signal);
    /// 0 means any RTT.
    pub ecn_max_rtt_ns: u64,
    /// Which congestion signals feed the model: v3's own (patched kernel,
    /// the default) or the substitutes a stock Linux kernel can give a BPF
    /// congestion control (`bbrlab_bbr3`). Usable with either profile.
    pub signals: Bbr3Signals,
}

/// Where `bbr3`'s per-packet congestion signals come from.
///
/// Google's v3 branch adds signals to Linux's rate sample through about 19
/// kernel patches; a BPF control on a stock 6.x kernel (`bbrlab_bbr3`) must
/// make do without them. [`Bbr3Signals::StockKernel`] feeds the simulator
/// exactly the substitutes `bbrlab_bbr3` uses, so the cost of running v3
/// without the patches can be measured against [`Bbr3Signals::Exact`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Bbr3Signals {
    /// v3's signals as its patches define them: each ACKed packet's own
    /// `tx_in_flight` and losses over its flight, and the per-lost-packet
    /// inflight-too-high check (`bbr_skb_marked_lost()`).
    #[default]
    Exact,
    /// The stock kernel's substitutes (issue 24's contract):
    /// `tx_in_flight` is `prior_in_flight`; a sample's losses are those
    /// since the ACKed packet left, estimated from the losses marked at
    /// the last two round starts (`bbr3/round_losses.rs`); the inflight-too-high
    /// check runs once per ACK that carries losses instead of per lost
    /// packet. The ECN signal (CE counts per ACK, per-round ratio) is the
    /// same in both modes, since the stock kernel has `delivered_ce`.
    StockKernel,
}

impl Bbr3Signals {
    /// Every mode, in the order they are listed to users.
    pub const ALL: [Bbr3Signals; 2] = [Bbr3Signals::Exact, Bbr3Signals::StockKernel];

    /// The canonical name: `exact`, `stock-kernel`.
    pub fn name(self) -> &'static str {
        match self {
            Bbr3Signals::Exact => "exact",
            Bbr3Signals::StockKernel => "stock-kernel",
        }
    }
}

impl fmt::Display for Bbr3Signals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned when parsing a [`Bbr3Signals`] name fails; its message lists
/// the known names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownBbr3Signals {
    /// The name that was given.
    pub given: String,
}

impl fmt::Display for UnknownBbr3Signals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown bbr3 signals `{}`; known values: exact, stock-kernel",
            self.given
        )
    }
}

impl std::error::Error for UnknownBbr3Signals {}

impl FromStr for Bbr3Signals {
    type Err = UnknownBbr3Signals;

    /// Parses `exact` or `stock-kernel`, ignoring ASCII case and
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Bbr3Signals::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownBbr3Signals {
                given: s.to_string(),
            })
    }
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config::draft()
    }
}

/// Linux's fixed-point fraction `n`/256 as an `f64`.
const fn unit(n: u32) -> f64 {
    n as f64 / 256.0
}

impl Bbr3Config {
    /// draft-ietf-ccwg-bbr-06.
    pub fn draft() -> Self {
        Bbr3Config {
            profile: Bbr3Profile::Draft,
            startup_pacing_gain: 2.77,
            startup_cwnd_gain: 2.0,
            drain_pacing_gain: 0.5,
            drain_max_rounds: Some(3),
            drain_target_uses_max_bw: false,
            drain_resets_congestion_signals: false,
            probe_down_pacing_gain: 0.90,
            probe_up_pacing_gain: 1.25,
            cwnd_gain: 2.0,
            probe_up_cwnd_gain: 2.25,
            probe_rtt_cwnd_gain: 0.5,
            pacing_margin: 0.01,
            min_pipe_cwnd_packets: 4,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            full_bw_check_every_ack: false,
            startup_full_loss_count: 6,
            startup_loss_count: StartupLossCount::Ranges,
            startup_exit_bdp_with_budget: false,
            startup_grow_below_twice_initial_cwnd: false,
            round_needs_valid_sample: false,
            inflight_at_edt: false,
            target_inflight_with_budget: false,
            cruise_clamps_shortterm: false,
            note_loss_saves_state: true,
            inflight_at_loss_rounds_up: false,
            probe_rtt_interval_ns: 5_000_000_000,
            probe_rtt_duration_ns: 200_000_000,
            min_rtt_window_ns: 10_000_000_000,
            skip_delayed_ack_rtt: false,
            probe_wait_base_ns: 2_000_000_000,
            probe_wait_rand_ns: 1_000_000_000,
            probe_max_rounds: 63,
            probe_rand_rounds: 2,
            extra_acked: Bbr3ExtraAcked::Draft,
            offload_budget_quanta: 3,
            quantum_rtt_allowance: false,
            restore_cwnd_after_fast_recovery: true,
            undo_restores_state: true,
            rto_resets_full_bw: false,
            selective_acks: true,
            idle_restart: true,
            ecn: Bbr3Ecn::Classic,
            ecn_capable: false,
            ecn_alpha_gain: 16,
            ecn_alpha_init: 256,
            ecn_factor: 85,
            ecn_thresh: 128,
            full_ecn_rounds: 2,
            ecn_reprobe_gain: 128,
            ecn_max_rtt_ns: 5_000_000,
            signals: Bbr3Signals::Exact,
        }
    }

    /// The google/bbr v3 branch of Linux (`tcp_bbr.c`).
    pub fn linux_v3() -> Self {
        Bbr3Config {
            profile: Bbr3Profile::LinuxV3,
            startup_pacing_gain: unit(256 * 277 / 100 + 1),
            drain_pacing_gain: unit(256 * 1000 / 2885),
            drain_max_rounds: None,
            drain_target_uses_max_bw: true,
            drain_resets_congestion_signals: true,
            probe_down_pacing_gain: unit(256 * 91 / 100),
            probe_up_pacing_gain: unit(256 * 5 / 4),
            loss_thresh: unit(256 * 2 / 100),
            beta: unit(256 - 256 * 30 / 100),
            headroom: unit(256 * 15 / 100),
            full_bw_check_every_ack: true,
            startup_loss_count: StartupLossCount::Events,
            startup_exit_bdp_with_budget: true,
            startup_grow_below_twice_initial_cwnd: true,
            round_needs_valid_sample: true,
            inflight_at_edt: true,
            target_inflight_with_budget: true,
            cruise_clamps_shortterm: true,
            note_loss_saves_state: false,
            inflight_at_loss_rounds_up: true,
            skip_delayed_ack_rtt: true,
            extra_acked: Bbr3ExtraAcked::Linux,
            quantum_rtt_allowance: true,
            restore_cwnd_after_fast_recovery: false,
            undo_restores_state: false,
            rto_resets_full_bw: true,
            ecn: Bbr3Ecn::LinuxV3,
            ..Bbr3Config::draft()
        }
    }

    /// The profile whose values these started from. A single switch
    /// changed after construction keeps the label: the profile says
    /// where a configuration came from, its fields what runs.
    pub fn profile(&self) -> Bbr3Profile {
        self.profile
    }

    /// The configuration of `profile`.
    pub fn for_profile(profile: Bbr3Profile) -> Self {
        match profile {
            Bbr3Profile::Draft => Bbr3Config::draft(),
            Bbr3Profile::LinuxV3 => Bbr3Config::linux_v3(),
        }
    }
}

/// How `bbr3` counts the loss events of a round for STARTUP's high-loss
/// exit (draft §5.3.1.3, Linux `bbr_check_loss_too_high_in_startup()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartupLossCount {
    /// The draft: discontiguous sequence ranges lost in the round
    /// ([`crate::LossContext::lost_ranges`]).
    #[default]
    Ranges,
    /// Linux v3: loss-marking events, one per ACK (here: per loss call)
    /// that marks any packet lost (`rs->losses > 0`).
    Events,
}

/// How `bbr3` responds to CE marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bbr3Ecn {
    /// The draft (§3.7) specifies no particular ECN response but requires
    /// that a flow sending ECT "MUST treat any CE marks as congestion".
    /// bbrlab's reading, the classic one of RFC 3168 §6.1.2: a CE mark is
    /// treated wherever the draft uses loss as a congestion signal, with
    /// CE-marked data counted like lost data: a round with CE is a
    /// congestion round for the short-term cuts (§5.5.10.3); a round whose
    /// CE-marked fraction exceeds `loss_thresh` means inflight was too high
    /// when probing (§5.5.10.2) and counts towards STARTUP's high-loss
    /// exit (§5.3.1.3), each ACK that reports CE counting as one loss event.
    AsLoss,
    /// As [`Bbr3Ecn::AsLoss`], except that a round with CE cuts the
    /// short-term volume (`inflight_shortterm`) by β without the floor at
    /// the latest round's delivery that the loss cut has: the
    /// multiplicative decrease RFC 3168 §6.1.2 asks of a flow that treats
    /// CE as loss. The floor exists so that random loss is not over-read;
    /// CE is never random, and floored the cut leaves a CE-responsive
    /// co-flow on a shallow marking queue to do all the yielding (picoquic
    /// issue 2029). The cut comes at most once per CE episode (RFC 3168:
    /// not again for marks on data sent before the last cut), and leaves
    /// the rate bound `bw_shortterm` alone, as Linux's ECN response cuts
    /// volume only (`bbr_ecn_lower_bounds()`): cutting the rate too left a
    /// lone flow on a 20 Mbit/s, 40 ms CoDel-ECN queue at 76 % of the link
    /// (marks in two successive rounds halved the pacing rate until the
    /// next probe), and now it gets 86 %. bbrlab's default for the draft
    /// profile: on a 1 ms step queue at 50 Mbit/s, 40 ms, `AsLoss` left
    /// an ECN CUBIC co-flow 3.0 of 48 Mbit/s, this 17.1 of 40 (bbrlab's
    /// ECN step scenario).
    #[default]
    Classic,
    /// Linux v3 (`bbr_update_ecn_alpha()`, `bbr_ecn_lower_bounds()`,
    /// `bbr_check_ecn_too_high_in_startup()`): an EWMA `ecn_alpha` of the
    /// per-round CE fraction; a round with CE cuts `inflight_shortterm` by
    /// `ecn_factor × ecn_alpha`; a CE fraction above `ecn_thresh` means
    /// inflight is too high; STARTUP ends after `full_ecn_rounds` rounds at
    /// or above it; a cycle with CE but no loss re-probes early. Used only
    /// while min_rtt ≤ `ecn_max_rtt_ns` (shallow-threshold ECN on a
    /// low-latency path), otherwise CE is ignored, as Linux does.
    LinuxV3,
}

impl Bbr3Ecn {
    /// Whether CE is read where the draft reads loss (inflight too high,
    /// STARTUP's exit): every response but Linux's.
    pub fn ce_as_loss(self) -> bool {
        matches!(self, Bbr3Ecn::AsLoss | Bbr3Ecn::Classic)
    }
}

/// How `bbr3` measures ACK aggregation (`BBR.extra_acked`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Bbr3ExtraAcked {
    /// Draft §5.5.9: a max filter over 10 rounds after STARTUP, 1 round
    /// in it; no cap beyond cwnd per sample; sampled on every ACK of data.
    #[default]
    Draft,
    /// Linux v3 (`bbr_update_ack_aggregation()`): two slots of 5 rounds
    /// (of 1 round in STARTUP); the allowance capped at bw × 100 ms;
    /// sampled only on ACKs with a valid rate sample.
    Linux,
    /// No allowance: the rule switched off, to show what it is for (the
    /// conformance suite's negative for the draft's A.12 and A.13, where
    /// ACKs come back in bursts).
    Off,
}
