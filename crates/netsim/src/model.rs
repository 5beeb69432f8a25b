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

use congestion::Snapshot;
use std::io::{self, Write};

/// The columns of `model.csv`, in order. Volumes in bytes, rates in
/// bit/s, times in ms; a cell is empty where the controller has no such
/// state (a v1 flow has no inflight bounds, an unset bound is empty).
pub const MODEL_COLUMNS: [&str; 19] = [
    "time_s",
    "flow",
    "mode",
    "bw_estimate_bps",
    "bw_bps",
    "min_rtt_ms",
    "pacing_gain",
    "cwnd_gain",
    "cwnd_bytes",
    "round_count",
    "full_bw_reached",
    "extra_acked_bytes",
    "lt_bw_bps",
    "inflight_longterm_bytes",
    "inflight_shortterm_bytes",
    "bw_shortterm_bps",
    "loss_in_round",
    "ecn_in_round",
    "ecn_alpha",
];

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

    /// The row's cells in [`MODEL_COLUMNS`]' order, with fixed precision
    /// so the same run gives the same bytes.
    pub fn fields(&self) -> [String; MODEL_COLUMNS.len()] {
        let mut cells = Vec::with_capacity(MODEL_COLUMNS.len());
        let mut buf = String::new();
        self.for_each_cell(&mut buf, |c| {
            cells.push(c.to_string());
            Ok(())
        })
        .expect("collecting cannot fail");
        cells.try_into().expect("one cell per column")
    }

    /// Hands each cell of the row, in [`MODEL_COLUMNS`]' order, to `cell`,
    /// formatted into `buf` (reused from cell to cell and row to row): the
    /// writer of `model.csv` formats a row without allocating, since the
    /// simulator writes one per BBR flow every sample interval.
    pub fn for_each_cell(
        &self,
        buf: &mut String,
        mut cell: impl FnMut(&str) -> io::Result<()>,
    ) -> io::Result<()> {
        use std::fmt::Write as _;
        let s = &self.snapshot;
        let v3 = s.bbr3.as_ref();
        let mut put = |buf: &mut String, f: &dyn Fn(&mut String) -> std::fmt::Result| {
            buf.clear();
            f(buf).map_err(io::Error::other)?;
            cell(buf)
        };
        let bps = |b: f64| move |o: &mut String| write!(o, "{:.0}", b * 8.0);
        let none = |_: &mut String| Ok(());
        let flag = |b: bool| move |o: &mut String| write!(o, "{}", u8::from(b));
        put(buf, &|o| write!(o, "{:.6}", self.t_ns as f64 / 1e9))?;
        put(buf, &|o| write!(o, "{}", self.flow))?;
        put(buf, &|o| o.write_str(s.mode.name()))?;
        match s.bw_estimate_bytes_per_sec {
            Some(b) => put(buf, &bps(b))?,
            None => put(buf, &none)?,
        }
        match v3 {
            Some(b) => put(buf, &bps(b.bw_bytes_per_sec))?,
            None => put(buf, &none)?,
        }
        match s.min_rtt {
            Some(d) => put(buf, &|o| write!(o, "{:.3}", d.as_secs_f64() * 1e3))?,
            None => put(buf, &none)?,
        }
        put(buf, &|o| write!(o, "{:.4}", s.pacing_gain))?;
        put(buf, &|o| write!(o, "{:.4}", s.cwnd_gain))?;
        put(buf, &|o| write!(o, "{}", s.cwnd_bytes))?;
        put(buf, &|o| write!(o, "{}", s.round_count))?;
        put(buf, &flag(s.full_bw_reached))?;
        put(buf, &|o| write!(o, "{}", s.extra_acked_bytes))?;
        match s.lt_bw.filter(|l| l.in_use) {
            Some(l) => put(buf, &bps(l.bw_bytes_per_sec))?,
            None => put(buf, &none)?,
        }
        match v3.and_then(|b| b.inflight_longterm_bytes) {
            Some(v) => put(buf, &|o| write!(o, "{v}"))?,
            None => put(buf, &none)?,
        }
        match v3.and_then(|b| b.inflight_shortterm_bytes) {
            Some(v) => put(buf, &|o| write!(o, "{v}"))?,
            None => put(buf, &none)?,
        }
        match v3.and_then(|b| b.bw_shortterm_bytes_per_sec) {
            Some(b) => put(buf, &bps(b))?,
            None => put(buf, &none)?,
        }
        match v3 {
            Some(b) => {
                put(buf, &flag(b.loss_in_round))?;
                put(buf, &flag(b.ecn_in_round))?;
            }
            None => {
                put(buf, &none)?;
                put(buf, &none)?;
            }
        }
        match v3.and_then(|b| b.ecn_alpha) {
            Some(a) => put(buf, &|o| write!(o, "{a:.4}")),
            None => put(buf, &none),
        }
    }

    /// Writes the row as one CSV record (its cells never need quoting:
    /// numbers and mode names).
    pub fn write_csv<W: Write>(&self, w: &mut csv::Writer<W>, buf: &mut String) -> io::Result<()> {
        self.for_each_cell(buf, |c| w.write_field(c).map_err(io::Error::other))?;
        w.write_record(None::<&[u8]>).map_err(io::Error::other)
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
        let cell = |name: &str| &row[MODEL_COLUMNS.iter().position(|c| *c == name).unwrap()];
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
        let cell = |name: &str| &row[MODEL_COLUMNS.iter().position(|c| *c == name).unwrap()];
        // v1 has no v3 state: those cells are empty.
        assert_eq!(cell("bw_bps"), "");
        assert_eq!(cell("loss_in_round"), "");
        assert!(!ModelSample::applies(&fresh(Algorithm::Cubic)));
    }
}
