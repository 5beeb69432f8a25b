//! Algorithm selection and configuration.
//!
//! Every constant defaults to what Linux ships (`tcp_bbr.c`, `tcp_cubic.c`),
//! and every BBR mechanism has a switch, because experiments (claims C9 and
//! C14) compare BBR with and without a mechanism.

use core::fmt;
use core::str::FromStr;

/// The built-in algorithms, named the same in every bbrlab interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algorithm {
    /// BBR v1 as Linux ships it.
    #[default]
    Bbr,
    /// BBR with the jitter-robust BDP and cycle of Dong & Guo (2019).
    BbrJitter,
    /// BBRv3: draft-ietf-ccwg-bbr-06, or Linux's v3 branch with
    /// [`Bbr3Profile::LinuxV3`].
    Bbr3,
    /// CUBIC (RFC 9438) with HyStart++ (RFC 9406).
    Cubic,
    /// NewReno (RFC 5681, RFC 6582).
    Reno,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed to users.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Bbr,
        Algorithm::BbrJitter,
        Algorithm::Bbr3,
        Algorithm::Cubic,
        Algorithm::Reno,
    ];

    /// The canonical name: `bbr`, `bbr-jitter`, `bbr3`, `cubic`, `reno`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Bbr => "bbr",
            Algorithm::BbrJitter => "bbr-jitter",
            Algorithm::Bbr3 => "bbr3",
            Algorithm::Cubic => "cubic",
            Algorithm::Reno => "reno",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Returned when parsing an algorithm name fails; its message lists the known names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm {
    /// The name that was given.
    pub given: String,
}

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown congestion control algorithm `{}`; known algorithms: ",
            self.given
        )?;
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(a.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownAlgorithm {}

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// Parses a canonical name. Matching ignores ASCII case and surrounding
    /// whitespace, so `BBR` from a command line works, but no aliases are
    /// accepted: one name per algorithm keeps logs and files unambiguous.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownAlgorithm {
                given: s.to_string(),
            })
    }
}

/// Switches and constants for BBR v1. Defaults are Linux's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    /// Bandwidth max-filter window, in round trips (`bbr_bw_rtts` = 10).
    pub bw_window_rounds: u64,
    /// min_rtt lifetime before PROBE_RTT, in ns (`bbr_min_rtt_win_sec` = 10 s).
    pub min_rtt_window_ns: u64,
    /// Time held at minimal inflight in PROBE_RTT, in ns (`bbr_probe_rtt_mode_ms` = 200).
    pub probe_rtt_duration_ns: u64,
    /// Whether PROBE_RTT runs at all.
    pub probe_rtt: bool,
    /// STARTUP pacing and cwnd gain (`bbr_high_gain` = 2/ln 2 ≈ 2.885).
    pub high_gain: f64,
    /// DRAIN pacing gain (`bbr_drain_gain` = 1/2.885).
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain (`bbr_cwnd_gain` = 2).
    pub cwnd_gain: f64,
    /// Pacing below the estimate by this fraction (`bbr_pacing_margin_percent` = 1 %).
    pub pacing_margin: f64,
    /// Minimum cwnd, in packets (`bbr_cwnd_min_target` = 4).
    pub min_cwnd_packets: u64,
    /// Full-pipe detection: growth below this factor counts as a plateau (`bbr_full_bw_thresh` = 1.25).
    pub full_bw_threshold: f64,
    /// Full-pipe detection: plateau rounds needed (`bbr_full_bw_cnt` = 3).
    pub full_bw_rounds: u32,
    /// Long-term bandwidth sampling, the policer model (`bbr_lt_bw_*`).
    pub lt_bw: bool,
    /// ACK-aggregation compensation (`bbr_extra_acked_gain`).
    pub extra_acked: bool,
    /// Gain applied to the extra_acked estimate (`bbr_extra_acked_gain` = 1.0).
    pub extra_acked_gain: f64,
    /// Idle restart: pace at 1.0 × bw after an app-limited idle period.
    pub idle_restart: bool,
    /// Packet conservation during the first round of recovery.
    pub packet_conservation: bool,
    /// Headroom of three send quanta (and two packets while probing) on
    /// every inflight target (`bbr_quantization_budget()`). QUIC's BBR of
    /// 2018 had none: its targets were gain × BDP exactly.
    pub quantization_budget: bool,
    /// A floor on cwnd in bytes that overrides `min_cwnd_packets × MSS`.
    /// QUIC's BBR of 2018 used 4 × 1460 B whatever the packet size
    /// (`kDefaultMinimumCongestionWindow`).
    pub min_cwnd_bytes: Option<u64>,
    /// How the ACK-aggregation allowance is measured and bounded.
    pub ack_aggregation: AckAggregation,
    /// Which RTTs feed the min_rtt filter.
    pub min_rtt_samples: MinRttSamples,
    /// Whether the bandwidth filter's window is the current PROBE_BW cycle
    /// length + 2 rounds rather than `bw_window_rounds`. Linux and QUIC
    /// both define the window as cycle length + 2 (10); only when
    /// `bbr-jitter` shortens the cycle to 5 does it matter: QUIC derived
    /// the window from the cycle (`kBandwidthWindowSize`), so the paper's
    /// variant, built on QUIC, had a 7-round window while shortened.
    pub bw_window_follows_cycle: bool,
    /// How loss recovery bounds cwnd.
    pub recovery: BbrRecovery,
}

/// How BBR bounds its window during loss recovery.
///
/// Each rule belongs with one way of ending recovery episodes
/// ([`RecoveryExit`]). Linux's relies on TCP's long episodes (until the
/// repairs are delivered); under RFC 9002's short ones a new episode, and
/// a new round of packet conservation, starts on nearly every round trip
/// of a lossy path: BBR then gets 9.9 Mbit/s at 5 % random loss on
/// 100 Mbit/s / 100 ms, against 91.5 with QUIC's own recovery window
/// (`bbrlab sim scenarios/recovery-exit.toml`). [`BbrRecovery::Auto`],
/// the default, picks the rule that matches the episodes the transport
/// provides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BbrRecovery {
    /// [`BbrRecovery::Linux`] when the transport ends episodes as TCP does
    /// ([`RecoveryExit::Transport`]), [`BbrRecovery::Quic2018`] under
    /// RFC 9002's rule ([`RecoveryExit::FirstAckAfterStart`], the
    /// library's default, which a QUIC stack provides without extra
    /// calls). The simulator and bbrlab's transports drive episodes as TCP
    /// does, so they run Linux's rule.
    #[default]
    Auto,
    /// Linux (`bbr_set_cwnd_to_recover_or_restore()`): cwnd itself loses
    /// the lost bytes, is held to packet conservation for the first
    /// round, and is restored to its pre-loss value when the transport's
    /// recovery episode ends.
    Linux,
    /// QUIC 2018 (`BbrSender::UpdateRecoveryState()`,
    /// `CalculateRecoveryWindow()`): cwnd follows its target untouched; a
    /// separate recovery window starts at inflight + acked, loses the lost
    /// bytes, grows by the bytes acked after the first round, and never
    /// falls below inflight + acked or the minimum cwnd; the window in
    /// force is the smaller of the two. Recovery lasts until an ACK with
    /// no loss acknowledges a packet sent after the latest loss, so
    /// steady (or spurious) losses keep it going without restarting it.
    Quic2018,
}

impl BbrRecovery {
    /// The rule in force under `exit` ([`BbrRecovery::Auto`] resolved).
    pub fn resolve(self, exit: RecoveryExit) -> BbrRecovery {
        match (self, exit) {
            (BbrRecovery::Auto, RecoveryExit::Transport) => BbrRecovery::Linux,
            (BbrRecovery::Auto, RecoveryExit::FirstAckAfterStart) => BbrRecovery::Quic2018,
            (r, _) => r,
        }
    }
}

/// How BBR measures ACK aggregation and how much cwnd it grants for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AckAggregation {
    /// Linux's `extra_acked` (`bbr_update_ack_aggregation()`): two slots of
    /// 5 rounds, each sample capped at cwnd, the allowance capped at
    /// bw × 100 ms; epochs measured from the last delivery time.
    #[default]
    Linux,
    /// QUIC's `max_ack_height` of 2018 (`BbrSender::UpdateAckAggregationBytes()`),
    /// which Linux's mechanism came from (seed 004): a max filter over
    /// 10 rounds of the bytes acked beyond max_bw × epoch length, with no
    /// cap; epochs measured from ACK arrival times, and a new epoch starts
    /// without a sample.
    Quic2018,
}

/// Where BBR's min_rtt samples come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MinRttSamples {
    /// Linux: one sample per ACK, the transport's RTT sample (`rs->rtt_us`),
    /// and an expired min_rtt is replaced only by a sample not inflated by
    /// a delayed ACK (`bbr_update_min_rtt()`).
    #[default]
    Latest,
    /// QUIC 2018 (`BbrSender::UpdateBandwidthAndMinRtt()`): the smallest of
    /// the RTTs of every packet the ACK newly acknowledges (ACK arrival
    /// minus that packet's send time), and an expired min_rtt is replaced
    /// by it unconditionally. Needs packet numbers that are never reused,
    /// as in QUIC and in bbrlab's sender, or the RTT of a retransmitted
    /// packet would be ambiguous.
    AllAcked,
}

/// A named set of [`BbrConfig`] switches: whose BBR v1 to model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BbrFlavour {
    /// Linux `tcp_bbr.c`, the default.
    #[default]
    Linux,
    /// Chromium QUIC's `BbrSender` of 2018, the stack seed 001's authors
    /// built their variant on (see [`BbrConfig::quic_2018`]).
    Quic2018,
}

impl BbrConfig {
    /// BBR v1 as Chromium's QUIC had it in 2018 (`bbr_sender.cc`). It
    /// differs from Linux in: no quantization budget; a minimum cwnd of
    /// 4 × 1460 B; the uncapped `max_ack_height` allowance; min_rtt over
    /// every acked packet; a bandwidth window of cycle length + 2; its own
    /// recovery window ([`BbrRecovery::Quic2018`]); no
    /// pacing margin (pacing at exactly gain × bw); and no long-term
    /// (policer) bandwidth sampling, which QUIC did not have.
    pub fn quic_2018() -> Self {
        BbrConfig {
            pacing_margin: 0.0,
            lt_bw: false,
            quantization_budget: false,
            min_cwnd_bytes: Some(4 * 1460),
            ack_aggregation: AckAggregation::Quic2018,
            min_rtt_samples: MinRttSamples::AllAcked,
            bw_window_follows_cycle: true,
            recovery: BbrRecovery::Quic2018,
            ..BbrConfig::default()
        }
    }

    /// The switches of `flavour`.
    pub fn flavour(flavour: BbrFlavour) -> Self {
        match flavour {
            BbrFlavour::Linux => BbrConfig::default(),
            BbrFlavour::Quic2018 => BbrConfig::quic_2018(),
        }
    }
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            bw_window_rounds: 10,
            min_rtt_window_ns: 10_000_000_000,
            probe_rtt_duration_ns: 200_000_000,
            probe_rtt: true,
            // Linux: bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1.
            high_gain: 2.885,
            drain_gain: 1.0 / 2.885,
            cwnd_gain: 2.0,
            pacing_margin: 0.01,
            min_cwnd_packets: 4,
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            lt_bw: true,
            extra_acked: true,
            extra_acked_gain: 1.0,
            idle_restart: true,
            packet_conservation: true,
            quantization_budget: true,
            min_cwnd_bytes: None,
            ack_aggregation: AckAggregation::Linux,
            min_rtt_samples: MinRttSamples::Latest,
            bw_window_follows_cycle: false,
            recovery: BbrRecovery::Auto,
        }
    }
}

/// Parameters of `bbr-jitter` (Dong & Guo 2019, eqs. 8–11).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JitterConfig {
    /// srtt gain α in eq. (8).
    pub alpha: f64,
    /// rttvar gain β in eq. (9).
    pub beta: f64,
    /// Instability threshold γ: unstable when rttvar > γ·srtt (eqs. 10–11).
    pub gamma: f64,
    /// How srtt and rttvar are kept (the paper leaves it to its QUIC code).
    pub stats: JitterStats,
    /// How often eqs. (8)–(9) are updated (the paper does not say).
    pub cadence: JitterCadence,
}

/// How often `bbr-jitter` updates srtt and rttvar (seed 001, eqs. 8–9).
///
/// The paper gives the two EWMAs and their gains (α = 1/8, β = 1/4) but
/// not how often they run, and the gains only mean something per update:
/// at α = 1/8 per ACK, srtt follows a queue that builds after a bandwidth
/// drop within about 16 ACKs, so rttvar rarely exceeds γ·srtt, while at one
/// update per round trip srtt lags the queue by several rounds and the
/// rule of eqs. (10)–(11) engages (issue 26, C13). Each cadence is a
/// reading of the paper, none is the paper's; the default keeps
/// bbrlab's behaviour before the switch existed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JitterCadence {
    /// Every RTT sample the transport hands over (the default). bbrlab's
    /// transports, as QUIC's, give one sample per ACK frame that newly
    /// acknowledges its largest packet (RFC 9002 §5.1).
    #[default]
    EverySample,
    /// The first sample starts the statistics; after that only every
    /// N-th sample feeds eqs. (8)–(9), the samples between are skipped
    /// (not averaged): a coarser clock for the same EWMA. N = 1 is
    /// [`JitterCadence::EverySample`].
    EveryNSamples(core::num::NonZeroU32),
    /// Once per BBR round trip: the first sample of each round (the ACK
    /// that starts it, [`crate::Snapshot::round_count`]); the other samples
    /// of the round are skipped. How an implementation inside BBR's own
    /// round-driven code might update them.
    PerRound,
    /// Once per ACK frame, with the frame's RTT sample: what the paper's
    /// QUIC code did (`RttStats::UpdateRtt()` runs once per ACK frame).
    /// With bbrlab's transports, which hand at most one sample per ACK
    /// frame, this updates exactly when [`JitterCadence::EverySample`]
    /// does; it is named so that a scenario says what it assumes, and it
    /// is the receiver's ACK frequency (its ACK policy, e.g. Chromium's
    /// ACK decimation) that sets how often that is.
    PerAckFrame,
}

/// How `bbr-jitter` keeps its RTT statistics (seed 001, eqs. 8–9). The
/// paper gives the equations but not their order, their start or how the
/// ACK delay enters; its authors' code was Chromium's QUIC of 2018.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JitterStats {
    /// bbrlab's reading, the default: srtt is updated first and rttvar
    /// measures the sample's distance from the new srtt; rttvar starts at
    /// 0; raw samples. The variant then departs from `bbr` only on
    /// evidence of jitter, so it is `bbr` exactly on a clean path, which is
    /// what an embedder switching to it expects.
    #[default]
    SrttFirst,
    /// As QUIC's RTT statistics of 2018 keep them (Chromium
    /// `RttStats::UpdateRtt()`): the ACK delay is subtracted when the
    /// sample exceeds it; the deviation is updated before srtt, against the
    /// old srtt; the first sample sets the deviation to half of it. The
    /// threshold then fires for the first samples of every path (0.5 > γ),
    /// and at an effectively lower γ than [`JitterStats::SrttFirst`]
    /// under jitter. Use it to reproduce the paper's stack.
    Quic2018,
}

impl Default for JitterConfig {
    fn default() -> Self {
        // Seed 001 §"参数设置": α = 0.125, β = 0.25, γ = 0.3.
        JitterConfig {
            alpha: 0.125,
            beta: 0.25,
            gamma: 0.3,
            stats: JitterStats::SrttFirst,
            cadence: JitterCadence::EverySample,
        }
    }
}

/// Switches for CUBIC. Defaults follow RFC 9438 and Linux.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// Cubic scaling constant C (RFC 9438 §5.1: 0.4).
    pub c: f64,
    /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3).
    pub reno_friendly: bool,
    /// A delay-based slow-start exit; Linux enables HyStart by default.
    pub hystart: bool,
    /// Which one: RFC 9406's HyStart++ (the default, what QUIC stacks
    /// implement) or the HyStart of Linux's `tcp_cubic.c`, to compare with
    /// kernel TCP (see [`HyStartVariant`]).
    pub hystart_variant: HyStartVariant,
    /// Whose congestion-avoidance rules: RFC 9438's (the default) or
    /// those of Linux's `tcp_cubic.c`, to compare with kernel TCP (see
    /// [`CubicAvoidance`]).
    pub avoidance: CubicAvoidance,
}

/// The congestion-avoidance rules CUBIC follows. RFC 9438 and Linux's
/// `bictcp_update()` agree on the cubic curve and on the Reno-friendly
/// region, but differ in two rules that matter on small windows and deep
/// queues, which is where kernel TCP is compared with the simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CubicAvoidance {
    /// RFC 9438: the Reno-friendly estimate grows by α = 3(1−β)/(1+β)
    /// segments per round trip until it passes the window before the last
    /// reduction, then by 1 (§4.3); the curve is aimed one smoothed RTT
    /// ahead (§4.4).
    #[default]
    Rfc9438,
    /// Linux (`bictcp_update()`): the Reno-friendly estimate grows by one
    /// segment per `cwnd · beta_scale / 8` segments acked for good
    /// (`beta_scale` = ⌊8(1+β) / (3(1−β))⌋ = 15, so α = 8/15 ≈ 0.53 per
    /// round trip) and never switches to 1; the curve is aimed one
    /// *minimum* RTT ahead (`delay_min`). Under random loss, where the
    /// estimate often passes the last window before the next loss, RFC
    /// 9438's switch to α = 1 gives about a quarter more throughput than
    /// kernel CUBIC.
    Linux,
}

impl CubicAvoidance {
    /// The names scenarios use.
    pub const NAMES: [&'static str; 2] = ["rfc9438", "linux"];

    /// The rules called `name` (one of [`CubicAvoidance::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc9438" => Some(CubicAvoidance::Rfc9438),
            "linux" => Some(CubicAvoidance::Linux),
            _ => None,
        }
    }
}

/// The delay-based slow-start exit CUBIC runs when
/// [`CubicConfig::hystart`] is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HyStartVariant {
    /// HyStart++ (RFC 9406): a round's RTT against the previous round's,
    /// then five rounds of conservative slow start.
    #[default]
    Rfc9406,
    /// Linux's HyStart (`hystart_update()` in `tcp_cubic.c`): a round's RTT
    /// against the connection's minimum, or an ACK train longer than half
    /// of it, and straight to congestion avoidance. Kernel CUBIC leaves
    /// slow start this way, often well before HyStart++ would.
    Linux,
}

impl HyStartVariant {
    /// The names scenarios use.
    pub const NAMES: [&'static str; 2] = ["rfc9406", "linux"];

    /// The variant called `name` (one of [`HyStartVariant::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc9406" => Some(HyStartVariant::Rfc9406),
            "linux" => Some(HyStartVariant::Linux),
            _ => None,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
            hystart_variant: HyStartVariant::Rfc9406,
            avoidance: CubicAvoidance::Rfc9438,
        }
    }
}

/// Everything needed to build a [`crate::Controller`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Which algorithm.
    pub algorithm: Algorithm,
    /// How recovery episodes end; see [`RecoveryExit`].
    pub recovery_exit: RecoveryExit,
    /// Payload bytes per full-sized packet; windows are counted in these.
    pub mss_bytes: u64,
    /// Initial window in packets (Linux `TCP_INIT_CWND` = 10).
    pub initial_cwnd_packets: u64,
    /// Seed for BBR's random PROBE_BW start phase.
    pub seed: u64,
    /// BBR switches (used by `bbr` and `bbr-jitter`).
    pub bbr: BbrConfig,
    /// `bbr-jitter` parameters.
    pub jitter: JitterConfig,
    /// How CUBIC and Reno bring their window down in a recovery or CWR
    /// episode; see [`WindowReduction`].
    pub window_reduction: WindowReduction,
    /// CUBIC switches.
    pub cubic: CubicConfig,
    /// BBRv3 switches and constants (used by `bbr3`).
    pub bbr3: Bbr3Config,
    /// Which acknowledged packet's RTT the smoothed RTT follows; see
    /// [`SrttSample`].
    pub srtt_sample: SrttSample,
}

/// Which packet of an ACK the smoothed RTT (and so the retransmission
/// timer) is sampled from. The RTT the algorithms see, and min_rtt, are
/// always the newest packet's: the least delayed by the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SrttSample {
    /// The largest (newest) packet the ACK newly acknowledges, less the
    /// peer's reported ACK delay where that stays above min_rtt (RFC 9002
    /// §5.1 and §5.3). The default: QUIC.
    #[default]
    Newest,
    /// The oldest packet the ACK newly acknowledges, with no ACK delay
    /// taken off (TCP carries none): what Linux's `tcp_clean_rtx_queue()`
    /// hands `tcp_rtt_estimator()` (`seq_rtt_us`, from the first
    /// cumulatively acknowledged segment, else the first newly SACKed
    /// one), while `tcp_update_rtt_min()` and the congestion control get
    /// the newest (`ca_rtt_us`). Under a receiver that acknowledges every
    /// second segment the smoothed RTT then includes the first segment's
    /// wait for the second, as the kernel's srtt (`tcpi_rtt`) does.
    Oldest,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            algorithm: Algorithm::Bbr,
            recovery_exit: RecoveryExit::default(),
            mss_bytes: 1500,
            initial_cwnd_packets: 10,
            seed: 1,
            bbr: BbrConfig::default(),
            jitter: JitterConfig::default(),
            window_reduction: WindowReduction::default(),
            cubic: CubicConfig::default(),
            bbr3: Bbr3Config::default(),
            srtt_sample: SrttSample::default(),
        }
    }
}

/// How a loss-based window (CUBIC, Reno) comes down to its new ssthresh
/// when an episode begins. BBR keeps its own recovery rules either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowReduction {
    /// Proportional Rate Reduction (RFC 6937), as Linux runs it in
    /// recovery and CWR (`tcp_cwnd_reduction()`): sending continues in
    /// proportion to delivery through the episode, and cwnd becomes
    /// ssthresh when it ends. The default, because the kernel's CUBIC is
    /// what the simulator is validated against.
    #[default]
    Prr,
    /// cwnd drops to ssthresh at once (RFC 9002 §7.3.2's simplest choice,
    /// and what quinn and s2n-quic do).
    Immediate,
}

/// Whose BBRv3 `bbr3` runs: a named set of [`Bbr3Config`] constants and
/// switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
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
pub struct Bbr3Config {
    /// The profile these values started from.
    pub profile: Bbr3Profile,
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
pub enum Bbr3Signals {
    /// v3's signals as its patches define them: each ACKed packet's own
    /// `tx_in_flight` and losses over its flight, and the per-lost-packet
    /// inflight-too-high check (`bbr_skb_marked_lost()`).
    #[default]
    Exact,
    /// The stock kernel's substitutes (issue 24's contract):
    /// `tx_in_flight` is `prior_in_flight`; a sample's losses are those
    /// since the current packet-timed round started; the inflight-too-high
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
    /// an ECN CUBIC co-flow 3.0 of 48 Mbit/s, this 17.1 of 40
    /// (`scenarios/ecn-step.toml`).
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
pub enum Bbr3ExtraAcked {
    /// Draft §5.5.9: a max filter over 10 rounds after STARTUP, 1 round
    /// in it; no cap beyond cwnd per sample; sampled on every ACK of data.
    #[default]
    Draft,
    /// Linux v3 (`bbr_update_ack_aggregation()`): two slots of 5 rounds
    /// (of 1 round in STARTUP); the allowance capped at bw × 100 ms;
    /// sampled only on ACKs with a valid rate sample.
    Linux,
}

/// How a loss-recovery episode ends.
///
/// It matters more than it looks. BBR holds cwnd to packet conservation for
/// the first round of every episode and restores the pre-loss window when
/// one ends; CUBIC and Reno cut the window once per episode. Under steady
/// random loss a new episode starts as soon as the previous one ends, so
/// the episode length decides how much of the time BBR spends conserving.
/// Linux episodes last until the cumulative ACK passes `high_seq` (the
/// highest sequence sent when the episode began), which includes the
/// round trip needed to repair losses; RFC 9002 episodes end one round
/// trip after they begin. With 5 % loss on a 100 Mbit/s, 100 ms path the
/// difference is ~88 against ~11 Mbit/s for BBR, measured in netsim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecoveryExit {
    /// RFC 9002 §7.3.2: the episode ends when a packet sent after it began
    /// is acknowledged, and a loss of such a packet starts a new one. The
    /// default, because a QUIC-style transport has no cumulative ACK point.
    #[default]
    FirstAckAfterStart,
    /// Linux TCP (`tcp_fastretrans_alert()`): the episode ends only when the
    /// transport calls [`crate::Controller::on_recovery_point_reached`],
    /// meaning everything sent before the episode began has been delivered
    /// (`snd_una` ≥ `high_seq`). Losses during an episode never start
    /// another. Use it to behave as Linux does, as the simulator does.
    Transport,
}

impl Config {
    /// Default configuration for `algorithm`.
    pub fn new(algorithm: Algorithm) -> Self {
        Config {
            algorithm,
            ..Config::default()
        }
    }

    /// The configuration a command line names: `algorithm` by its name and,
    /// for `bbr3` only, a profile by its name (`draft`, `linux-v3`), whose
    /// every constant is set (not just its label). Errors name the option
    /// (`--cc`, `--bbr3-profile`) and what it allows.
    pub fn from_names(algorithm: &str, bbr3_profile: Option<&str>) -> Result<Self, String> {
        let a: Algorithm = algorithm.parse().map_err(|e| format!("--cc: {e}"))?;
        let mut cfg = Config::new(a);
        if let Some(p) = bbr3_profile {
            if a != Algorithm::Bbr3 {
                return Err(format!(
                    "--bbr3-profile {p}: only for --cc bbr3 (this run is --cc {})",
                    a.name()
                ));
            }
            let profile: Bbr3Profile = p.parse().map_err(|e| format!("--bbr3-profile: {e}"))?;
            cfg.bbr3 = Bbr3Config::for_profile(profile);
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A named profile sets the profile's constants, and a profile for any
    /// algorithm but bbr3, or an unknown name, is refused by option.
    #[test]
    fn a_command_lines_names_make_the_whole_configuration() {
        let c = Config::from_names("bbr3", Some("linux-v3")).unwrap();
        assert_eq!(c.algorithm, Algorithm::Bbr3);
        assert_eq!(c.bbr3, Bbr3Config::linux_v3());
        assert_eq!(
            Config::from_names("bbr3", None).unwrap().bbr3,
            Bbr3Config::default()
        );
        assert_eq!(
            Config::from_names("cubic", None).unwrap().algorithm,
            Algorithm::Cubic
        );
        let e = Config::from_names("cubic", Some("draft")).unwrap_err();
        assert!(
            e.contains("only for --cc bbr3") && e.contains("--cc cubic"),
            "{e}"
        );
        assert!(Config::from_names("vegas", None)
            .unwrap_err()
            .starts_with("--cc:"));
        assert!(Config::from_names("bbr3", Some("v9"))
            .unwrap_err()
            .starts_with("--bbr3-profile:"));
    }

    #[test]
    fn names_round_trip_and_unknown_lists_known() {
        for a in Algorithm::ALL {
            assert_eq!(a.name().parse::<Algorithm>(), Ok(a));
        }
        assert_eq!(
            " BBR-Jitter ".parse::<Algorithm>(),
            Ok(Algorithm::BbrJitter)
        );
        let err = "vegas".parse::<Algorithm>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`vegas`"), "{msg}");
        assert!(msg.contains("bbr, bbr-jitter, bbr3, cubic, reno"), "{msg}");
    }

    #[test]
    fn bbr3_profiles_parse_and_unknown_lists_known() {
        for p in Bbr3Profile::ALL {
            assert_eq!(p.name().parse::<Bbr3Profile>(), Ok(p));
            assert_eq!(Bbr3Config::for_profile(p).profile, p);
        }
        assert_eq!(" Linux-V3 ".parse(), Ok(Bbr3Profile::LinuxV3));
        assert_eq!(Bbr3Config::default().profile, Bbr3Profile::Draft);
        let msg = "v2".parse::<Bbr3Profile>().unwrap_err().to_string();
        assert!(
            msg.contains("`v2`") && msg.contains("draft, linux-v3"),
            "{msg}"
        );
    }
}
