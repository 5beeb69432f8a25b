//! `model.csv`: what a BBR flow's controller believes, sampled beside
//! what the flow did (`flows.csv`).
//!
//! The shared time series ([`sender::schema`]) carries what every source
//! can report: delivered bytes, cwnd, pacing rate, the bandwidth estimate,
//! min_rtt. A BBR controller's decisions also turn on state no kernel
//! exposes through `TCP_INFO`: BBRv3's long- and short-term inflight
//! bounds (`inflight_hi`/`inflight_lo` in Linux's v3), its short-term
//! bandwidth, the gains of the current phase, the round count, whether
//! the pipe was judged full, v1's long-term (policer) bandwidth. Without
//! them a run's outcome can be seen but not explained: why a flow's cwnd
//! stays low after a loss, say, is a cut of `inflight_shortterm` or of
//! `inflight_longterm`, and only the model says which. bbrlab's BPF
//! control `bbrlab_bbr3` publishes the same bounds in its sidecar
//! (`flows.cc.csv`, same column names), so a simulated and a kernel run
//! can be compared bound by bound.
//!
//! The engine writes a row per BBR-family flow (any controller with a
//! bandwidth estimate) at every sample; runs without one write no file,
//! so their outputs are unchanged.

use crate::cells::{self, Cells, Row};
use congestion::Snapshot;
use std::io;

/// The columns of `model.csv`, in order, with their units and kinds: the
/// schema's ([`sender::schema::MODEL_COLUMNS`]).
pub use sender::schema::MODEL_COLUMNS;

/// One row of `model.csv`: the flow's controller as of the sample time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSample {
    /// Sample time.
    pub t_ns: u64,
    /// Flow index, as in `flows.csv`.
    pub flow: usize,
    /// The controller's own view.
    pub snapshot: Snapshot,
}

impl ModelSample {
    /// Whether a flow whose controller reports `s` has a model to sample:
    /// bbrlab's BBRs from their first packet, and a QUIC stack's
    /// controller once it reports a bandwidth estimate; not CUBIC or Reno.
    pub fn applies(s: &Snapshot) -> bool {
        use congestion::Algorithm::{Bbr, Bbr3, BbrJitter};
        matches!(s.algorithm, Some(Bbr | BbrJitter | Bbr3)) || s.bw_estimate_bytes_per_sec.is_some()
    }

    /// The row's cells in [`MODEL_COLUMNS`]' order ([`Row::cells`]).
    pub fn fields(&self) -> [String; MODEL_COLUMNS.len()] {
        cells::collect(self)
    }
}

impl Row for ModelSample {
    /// [`MODEL_COLUMNS`]' order, with fixed precision so the same run
    /// gives the same bytes.
    fn cells(&self, c: &mut Cells<'_>) -> io::Result<()> {
        let s = &self.snapshot;
        let v3 = s.bbr3.as_ref();
        // Rates to the bit/s and gains to 4 decimals through integers,
        // which format several times faster than floats with a precision
        // (this file has a row per BBR flow every sample interval).
        let bps = |c: &mut Cells<'_>, b: Option<f64>| match b {
            Some(b) => c.put(format_args!("{}", (b * 8.0).round() as i64)),
            None => c.empty(),
        };
        let gain = |c: &mut Cells<'_>, g: f64| {
            let x = (g * 1e4).round() as i64;
            c.put(format_args!("{}.{:04}", x / 10_000, x % 10_000))
        };
        let int = |c: &mut Cells<'_>, v: Option<u64>| match v {
            Some(v) => c.put(format_args!("{v}")),
            None => c.empty(),
        };
        let flag = |c: &mut Cells<'_>, b: Option<bool>| int(c, b.map(u64::from));
        c.put(format_args!("{:.6}", self.t_ns as f64 / 1e9))?;
        c.put(format_args!("{}", self.flow))?;
        c.text(s.mode.name())?;
        bps(c, s.bw_estimate_bytes_per_sec)?;
        bps(c, v3.map(|b| b.bw_bytes_per_sec))?;
        match s.min_rtt {
            Some(d) => {
                let us = (d.as_nanos() + 500) / 1000;
                c.put(format_args!("{}.{:03}", us / 1000, us % 1000))?
            }
            None => c.empty()?,
        }
        gain(c, s.pacing_gain)?;
        gain(c, s.cwnd_gain)?;
        int(c, Some(s.cwnd_bytes))?;
        int(c, Some(s.round_count))?;
        flag(c, Some(s.full_bw_reached))?;
        int(c, Some(s.extra_acked_bytes))?;
        bps(c, s.lt_bw.filter(|l| l.in_use).map(|l| l.bw_bytes_per_sec))?;
        int(c, v3.and_then(|b| b.inflight_longterm_bytes))?;
        int(c, v3.and_then(|b| b.inflight_shortterm_bytes))?;
        bps(c, v3.and_then(|b| b.bw_shortterm_bytes_per_sec))?;
        flag(c, v3.map(|b| b.loss_in_round))?;
        flag(c, v3.map(|b| b.ecn_in_round))?;
        match v3.and_then(|b| b.ecn_alpha) {
            Some(a) => c.put(format_args!("{a:.4}")),
            None => c.empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use congestion::{Algorithm, Config, Controller, Instant};

    fn fresh(a: Algorithm) -> Snapshot {
        Controller::new(&Config::new(a), Instant::from_nanos(0)).snapshot()
    }

    #[test]
    fn a_bbr3_row_has_its_bounds_and_a_cubic_flow_has_no_model() {
        let s = fresh(Algorithm::Bbr3);
        assert!(ModelSample::applies(&s));
        let row = ModelSample {
            t_ns: 1_500_000_000,
            flow: 2,
            snapshot: s,
        }
        .fields();
        let cell = |name: &str| &row[MODEL_COLUMNS.iter().position(|c| c.name == name).unwrap()];
        assert_eq!(cell("time_s"), "1.500000");
        assert_eq!(cell("flow"), "2");
        assert_eq!(cell("mode"), "startup");
        // A fresh flow has no bounds yet: empty, not 0 or u64::MAX.
        assert_eq!(cell("inflight_longterm_bytes"), "");
        assert_eq!(cell("inflight_shortterm_bytes"), "");
        assert_eq!(cell("loss_in_round"), "0");
        let v1 = fresh(Algorithm::Bbr);
        let row = ModelSample {
            t_ns: 0,
            flow: 0,
            snapshot: v1,
        }
        .fields();
        let cell = |name: &str| &row[MODEL_COLUMNS.iter().position(|c| c.name == name).unwrap()];
        // v1 has no v3 state: those cells are empty.
        assert_eq!(cell("bw_bps"), "");
        assert_eq!(cell("loss_in_round"), "");
        assert!(!ModelSample::applies(&fresh(Algorithm::Cubic)));
    }
}
