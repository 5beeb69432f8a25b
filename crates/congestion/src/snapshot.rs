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
    /// Fast recovery after losses detected by ACKs (SACK / RACK).
    Recovery,
    /// After a retransmission timeout or persistent congestion.
    Loss,
}

/// The operating mode, across all algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// BBR: exponential search for the bottleneck bandwidth.
    #[default]
    Startup,
    /// BBR: draining the queue STARTUP built.
    Drain,
    /// BBR: steady state, cycling the pacing gain.
    ProbeBw,
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
            Mode::ProbeRtt => "probe_rtt",
            Mode::SlowStart => "slow_start",
            Mode::ConservativeSlowStart => "conservative_slow_start",
            Mode::CongestionAvoidance => "congestion_avoidance",
        }
    }
}

/// BBR's long-term bandwidth (policer) model state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
pub struct JitterSnapshot {
    /// Smoothed RTT per eq. (8).
    pub srtt: Duration,
    /// RTT deviation per eq. (9).
    pub rttvar: Duration,
    /// Whether the BDP currently uses srtt instead of min_rtt (eq. 10).
    pub using_srtt: bool,
}

/// A read-only snapshot of any controller.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
    /// Recovery state.
    pub recovery: RecoveryState,
}
