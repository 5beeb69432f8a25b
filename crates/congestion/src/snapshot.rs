//! A read-only view of a controller's state, for plots, logs and tests.
//!
//! One struct for every algorithm, with the BBR-only parts optional, so the
//! shared time-series schema can be filled from any controller without
//! matching on its type.

use crate::config::Algorithm;
use core::time::Duration;

/// The loss-recovery state of the connection, as Linux's `icsk_ca_state`
/// distinguishes it (ordered: `Open < Recovery < Loss`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecoveryState {
    /// No loss episode in progress.
    #[default]
    Open,
    /// A window reduction after ECN: an ACK reported CE and the episode
    /// it opened has not ended (Linux `TCP_CA_CWR`, entered for every
    /// congestion control by `tcp_enter_cwr()` and left once an ACK
    /// passes `high_seq`; QUIC: the recovery period an ECN-CE increase
    /// starts, RFC 9002 §7.1). Ordered as Linux orders the states: more
    /// than Open, less than Recovery, so a rule for "in recovery" does not
    /// fire on CE alone.
    Cwr,
    /// Fast recovery after losses detected by ACKs (SACK / RACK).
    Recovery,
    /// After a retransmission timeout or persistent congestion.
    Loss,
}

/// The operating mode, across all algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// BBR: exponential search for the bottleneck bandwidth.
    #[default]
    Startup,
    /// BBR: draining the queue STARTUP built.
    Drain,
    /// BBR: steady state, cycling the pacing gain.
    ProbeBw,
    /// BBRv3 PROBE_BW: pacing below the estimate to drain the queue
    /// (draft-ietf-ccwg-bbr-06 §5.3.3).
    ProbeBwDown,
    /// BBRv3 PROBE_BW: holding inflight just under the estimate.
    ProbeBwCruise,
    /// BBRv3 PROBE_BW: refilling the pipe at 1.0 × bw before probing.
    ProbeBwRefill,
    /// BBRv3 PROBE_BW: probing above the estimate for more bandwidth.
    ProbeBwUp,
    /// BBR: cwnd held at the minimum to re-measure the propagation delay.
    ProbeRtt,
    /// CUBIC/Reno: slow start.
    SlowStart,
    /// CUBIC: HyStart++ conservative slow start.
    ConservativeSlowStart,
    /// CUBIC/Reno: congestion avoidance.
    CongestionAvoidance,
}

impl Mode {
    /// Stable lowercase name for CSV and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeBwDown => "probe_bw_down",
            Mode::ProbeBwCruise => "probe_bw_cruise",
            Mode::ProbeBwRefill => "probe_bw_refill",
            Mode::ProbeBwUp => "probe_bw_up",
            Mode::ProbeRtt => "probe_rtt",
            Mode::SlowStart => "slow_start",
            Mode::ConservativeSlowStart => "conservative_slow_start",
            Mode::CongestionAvoidance => "congestion_avoidance",
        }
    }
}

/// BBR's long-term bandwidth (policer) model state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LtBwSnapshot {
    /// Whether a sampling interval is open.
    pub is_sampling: bool,
    /// Whether BBR is pacing at the long-term bandwidth (policer detected).
    pub in_use: bool,
    /// The long-term bandwidth, bytes/s (0 if none yet).
    pub bw_bytes_per_sec: f64,
    /// Rounds counted in the current interval, or since lt_bw came into use.
    pub rounds: u32,
}

/// `bbr-jitter`'s RTT statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct JitterSnapshot {
    /// Smoothed RTT per eq. (8).
    pub srtt: Duration,
    /// RTT deviation per eq. (9).
    pub rttvar: Duration,
    /// Whether the BDP currently uses srtt instead of min_rtt (eq. 10).
    pub using_srtt: bool,
}

/// BBRv3's two-scale model and its congestion signals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Bbr3Snapshot {
    /// `inflight_longterm` (the draft's upper bound from loss and ECN over
    /// probe cycles), bytes; `None` while unset (infinite).
    pub inflight_longterm_bytes: Option<u64>,
    /// `inflight_shortterm` (the bound from the latest round's signals),
    /// bytes; `None` while unset.
    pub inflight_shortterm_bytes: Option<u64>,
    /// `bw_shortterm`, bytes/s; `None` while unset.
    pub bw_shortterm_bytes_per_sec: Option<f64>,
    /// The EWMA of the CE fraction (the `linux-v3` profile's `ecn_alpha`),
    /// 0.0–1.0; `None` where the profile keeps none.
    pub ecn_alpha: Option<f64>,
    /// Whether the current round has seen loss.
    pub loss_in_round: bool,
    /// Whether the current round has seen CE.
    pub ecn_in_round: bool,
    /// `BBR.bw` = min(max_bw, bw_shortterm), the rate it paces by, bytes/s.
    pub bw_bytes_per_sec: f64,
    /// Whether the last probe saw too much loss or CE (the next probe is a
    /// precautionary one).
    pub prev_probe_too_high: bool,
    /// The wall-clock wait drawn for this cycle (2–3 s).
    pub bw_probe_wait: Duration,
    /// Rounds counted towards the Reno-coexistence bound.
    pub rounds_since_probe_up: u64,
}

/// A read-only snapshot of any controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Snapshot {
    /// The algorithm; `None` for a user's own ([`crate::Controller::custom`]).
    pub algorithm: Option<Algorithm>,
    /// The current mode.
    pub mode: Mode,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Pacing rate, bytes/s.
    pub pacing_rate_bytes_per_sec: u64,
    /// Slow-start threshold (CUBIC/Reno), bytes.
    pub ssthresh_bytes: Option<u64>,
    /// BBR's bottleneck bandwidth estimate (the max filter), bytes/s.
    pub bw_estimate_bytes_per_sec: Option<f64>,
    /// BBR's propagation-delay estimate.
    pub min_rtt: Option<Duration>,
    /// Current pacing gain (1.0 for CUBIC/Reno).
    pub pacing_gain: f64,
    /// Current cwnd gain (1.0 for CUBIC/Reno).
    pub cwnd_gain: f64,
    /// Index into the PROBE_BW gain cycle.
    pub cycle_index: Option<u8>,
    /// Round trips counted so far (BBR's clock for its bandwidth filter).
    pub round_count: u64,
    /// Whether BBR has decided the pipe is full.
    pub full_bw_reached: bool,
    /// Long-term bandwidth model state (BBR only).
    pub lt_bw: Option<LtBwSnapshot>,
    /// ACK-aggregation allowance currently added to cwnd, bytes (BBR only).
    pub extra_acked_bytes: u64,
    /// `bbr-jitter` statistics.
    pub jitter: Option<JitterSnapshot>,
    /// BBRv3's model (`bbr3` only).
    pub bbr3: Option<Bbr3Snapshot>,
    /// Recovery state.
    pub recovery: RecoveryState,
}
