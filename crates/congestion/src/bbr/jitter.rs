//! `bbr-jitter`: BBR v1 made robust to per-packet delay jitter (Dong &
//! Guo 2019, seed 001, eqs. 8–11).
//!
//! With per-packet delay jitter, min_rtt is far below the typical RTT and a
//! BDP built on it starves the pipe. The variant keeps an EWMA srtt and
//! rttvar; while rttvar > γ·srtt it computes the BDP from srtt instead of
//! min_rtt and shortens the cycle to {1.25, 0.75, 1, 1, 1}.
//!
//! Why a file of its own, and not a controller of its own: the variant
//! changes two numbers the Linux core asks for, the RTT under the BDP
//! ([`Bbr::model_rtt_ns`]) and the PROBE_BW cycle length
//! ([`Bbr::cycle_len`]), and nothing else. So it is the same [`Bbr`] with
//! an optional [`JitterState`] that the core hands every RTT sample (it
//! keeps those its [`JitterCadence`] asks for); with
//! none (plain `bbr`) both answers are Linux's. Keeping the statistics
//! and those two answers here leaves the core reading as `tcp_bbr.c`.

use super::{Bbr, CYCLE_LEN};
use crate::algorithm::CongestionControl;
use crate::config::{JitterCadence, JitterConfig, JitterStats};
use crate::float::u64_as_f64;
use crate::snapshot::JitterSnapshot;
use crate::time::duration_to_nanos;
use core::time::Duration;

/// Cycle length for `bbr-jitter` while the RTT is unstable (seed 001, eq. 11).
const JITTER_CYCLE_LEN: usize = 5;

/// `bbr-jitter`'s RTT statistics (seed 001, eqs. 8–9), in ns as f64.
#[derive(Clone, Copy, Debug)]
pub(super) struct JitterState {
    cfg: JitterConfig,
    srtt_ns: f64,
    rttvar_ns: f64,
    has_sample: bool,
    /// Samples skipped since the last update ([`JitterCadence::EveryNSamples`]).
    skipped: u32,
    /// The round of the last update ([`JitterCadence::PerRound`]).
    last_round: u64,
}

impl JitterState {
    /// No sample yet: the variant behaves as `bbr` until the first RTT.
    pub(super) fn new(cfg: JitterConfig) -> Self {
        JitterState {
            cfg,
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            has_sample: false,
            skipped: 0,
            last_round: 0,
        }
    }

    /// One RTT sample, from the ACK frame that is in round `round` (BBR's
    /// round count after this ACK): feeds eqs. (8)–(9) when the cadence
    /// says so ([`JitterCadence`]), else skips it. The first sample always
    /// starts the statistics.
    pub(super) fn on_sample(&mut self, rtt: Duration, ack_delay: Duration, round: u64) {
        if self.has_sample {
            match self.cfg.cadence {
                JitterCadence::EverySample | JitterCadence::PerAckFrame => {}
                JitterCadence::EveryNSamples(n) => {
                    self.skipped += 1;
                    if self.skipped < n.get() {
                        return;
                    }
                }
                JitterCadence::PerRound if round == self.last_round => return,
                JitterCadence::PerRound => {}
            }
        }
        self.skipped = 0;
        self.last_round = round;
        self.update(rtt, ack_delay);
    }

    /// Eq. (8) then eq. (9), in the paper's order: rttvar measures the
    /// sample's distance from the freshly updated srtt.
    ///
    /// The first sample sets srtt to it and rttvar to 0. The paper does not
    /// say how to start; RFC 6298's rtt/2 would declare every new path
    /// unstable (0.5 > γ = 0.3) for its first samples, so the variant would
    /// differ from `bbr` on a clean path. Starting at 0 makes it depart from
    /// `bbr` only on evidence of jitter.
    fn update(&mut self, rtt: Duration, ack_delay: Duration) {
        if self.cfg.stats == JitterStats::Quic2018 {
            return self.update_quic(rtt, ack_delay);
        }
        let r = u64_as_f64(duration_to_nanos(rtt));
        if !self.has_sample {
            self.srtt_ns = r;
            self.rttvar_ns = 0.0;
            self.has_sample = true;
            return;
        }
        self.srtt_ns = (1.0 - self.cfg.alpha) * self.srtt_ns + self.cfg.alpha * r;
        self.rttvar_ns =
            (1.0 - self.cfg.beta) * self.rttvar_ns + self.cfg.beta * (self.srtt_ns - r).abs();
    }

    /// [`JitterStats::Quic2018`]: the sample less the ACK delay (when it
    /// exceeds it), deviation before srtt, deviation starting at half the
    /// first sample.
    fn update_quic(&mut self, rtt: Duration, ack_delay: Duration) {
        let raw = duration_to_nanos(rtt);
        let delay = duration_to_nanos(ack_delay);
        let r = u64_as_f64(if raw > delay { raw - delay } else { raw });
        if !self.has_sample {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
            self.has_sample = true;
            return;
        }
        self.rttvar_ns =
            (1.0 - self.cfg.beta) * self.rttvar_ns + self.cfg.beta * (self.srtt_ns - r).abs();
        self.srtt_ns = (1.0 - self.cfg.alpha) * self.srtt_ns + self.cfg.alpha * r;
    }

    /// Eqs. (10)–(11): the path is "unstable" when rttvar > γ·srtt.
    pub(super) fn unstable(&self) -> bool {
        self.has_sample && self.rttvar_ns > self.cfg.gamma * self.srtt_ns
    }

    /// What the snapshot shows of the variant: its statistics and whether
    /// they are in force.
    pub(super) fn snapshot(&self) -> JitterSnapshot {
        JitterSnapshot {
            srtt: Duration::from_nanos(self.srtt_ns as u64),
            rttvar: Duration::from_nanos(self.rttvar_ns as u64),
            using_srtt: self.unstable(),
        }
    }
}

impl Bbr {
    /// The RTT the BDP is built on: min_rtt, or for an unstable `bbr-jitter`
    /// path the smoothed RTT (seed 001, eq. 10).
    pub(super) fn model_rtt_ns(&self) -> Option<f64> {
        if let Some(j) = self.jitter.as_ref().filter(|j| j.unstable()) {
            return Some(j.srtt_ns);
        }
        self.min_rtt_ns.map(u64_as_f64)
    }

    /// What [`Bbr::model_rtt_ns`] is computed from, for the targets'
    /// memo keys: `bbr-jitter`'s srtt as its bits and `true`, or min_rtt
    /// in ns and `false`. Equal pairs give equal model RTTs.
    pub(super) fn model_rtt_held(&self) -> (Option<u64>, bool) {
        if let Some(j) = self.jitter.as_ref().filter(|j| j.unstable()) {
            return (Some(j.srtt_ns.to_bits()), true);
        }
        (self.min_rtt_ns, false)
    }

    /// The PROBE_BW cycle length in force: 5 phases while `bbr-jitter`
    /// uses srtt, else Linux's 8 (seed 001, eq. 11).
    pub(super) fn cycle_len(&self) -> usize {
        if CongestionControl::using_srtt(self) == Some(true) {
            JITTER_CYCLE_LEN
        } else {
            CYCLE_LEN
        }
    }
}
