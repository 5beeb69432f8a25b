//! BBR v1's switches and constants ([`BbrConfig`]) and those of its
//! `bbr-jitter` variant ([`JitterConfig`]). Re-exported from
//! [`crate::config`].

use super::RecoveryExit;

/// Switches and constants for BBR v1. Defaults are Linux's.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
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
/// (bbrlab's recovery-exit scenario). [`BbrRecovery::Auto`],
/// the default, picks the rule that matches the episodes the transport
/// provides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
