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
    /// HyStart++ slow start (RFC 9406); Linux enables HyStart by default.
    pub hystart: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
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
    /// CUBIC switches.
    pub cubic: CubicConfig,
    /// BBRv3 switches and constants (used by `bbr3`).
    pub bbr3: Bbr3Config,
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
            cubic: CubicConfig::default(),
            bbr3: Bbr3Config::default(),
        }
    }
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
/// profile and change a single switch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bbr3Config {
    /// The profile these values started from.
    pub profile: Bbr3Profile,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config::draft()
    }
}

impl Bbr3Config {
    /// draft-ietf-ccwg-bbr-06.
    pub fn draft() -> Self {
        Bbr3Config {
            profile: Bbr3Profile::Draft,
        }
    }

    /// The google/bbr v3 branch of Linux.
    pub fn linux_v3() -> Self {
        Bbr3Config {
            profile: Bbr3Profile::LinuxV3,
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
