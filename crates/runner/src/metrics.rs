//! Metrics computed from a run's time series, not from the simulator's
//! state: fairness over sliding windows with the time to converge to a
//! fair share, and the distribution of the bottleneck queue. They read only
//! what `flows.csv` and `link.csv` hold (a flow's delivered bytes at each
//! sample, the forward queue at each sample), so the same numbers come from
//! a run as it is simulated ([`MetricsRecorder`], into `summary.json`) and
//! from the files of a finished run ([`read_flows`], [`read_link`], for
//! `bbrlab plot` and Python).
//!
//! # Jain's index over sliding windows
//!
//! Jain's index of rates x₁…xₙ is (Σx)² / (n·Σx²): 1 when every flow gets
//! the same, 1/n when one flow gets everything (R. Jain, D. Chiu, W. Hawe,
//! "A Quantitative Measure of Fairness and Discrimination for Resource
//! Allocation in Shared Computer Systems", DEC-TR-301, 1984, §3). Over a
//! whole run it hides how long the flows took to share; over sliding
//! windows it shows it.
//!
//! A window ends at every step (default every 100 ms, at the first sample
//! at or after each multiple of the step) and reaches back one window
//! length (default 1 s) to the latest sample at or before its start. A
//! flow's rate in it is its delivered-bytes delta over the window's actual
//! length. The flows judged are those sampled at both ends, i.e. started
//! before the window began (a flow is sampled from its start on); a window
//! with fewer than two such flows, or in which no flow delivered anything,
//! has no index. A finite flow keeps being sampled after it completes, so
//! it counts as getting nothing from then on: the index is meant for bulk
//! flows.
//!
//! # Time to converge
//!
//! Converged at: the end of the first window from which every later
//! window's index is at least the threshold (default 0.9), counting only
//! windows that end at least one window length after the last flow joined
//! (so every judged window sees every flow for all of its length), and
//! only if the index then holds for at least one window length before the
//! run ends (a last window that happens to be fair is not convergence).
//! Time to converge: that instant minus the time the last flow joined (its
//! first sample), so it is never shorter than one window. None when the
//! flows never settled that way or no window was judged. This is the "stays within the fair band from then on" form of
//! convergence time used in congestion-control evaluations, judged here on
//! Jain's index over all flows rather than on one flow's rate; 0.9 is the
//! usual cut-off for "fair".
//!
//! # Queue occupancy
//!
//! Percentiles (p50, p90, p99) and the maximum of the forward (data)
//! direction's queue in bytes and in delay over every `link.csv` sample,
//! with [`crate::stats::quantile`]'s rule. Samples are taken at even
//! intervals, so these are time-weighted, not packet-weighted.

use crate::stats::quantile;
use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::path::Path;

/// How the sliding Jain's index is taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JainParams {
    /// Window length, ns.
    pub window_ns: u64,
    /// A window ends every `step_ns`.
    pub step_ns: u64,
    /// The index at or above which the flows count as sharing fairly.
    pub threshold: f64,
}

impl Default for JainParams {
    fn default() -> Self {
        JainParams {
            window_ns: 1_000_000_000,
            step_ns: 100_000_000,
            threshold: 0.9,
        }
    }
}

impl JainParams {
    /// Checks the parameters; an error says which and what is allowed.
    pub fn check(&self) -> Result<(), String> {
        if self.window_ns == 0 {
            return Err("Jain window: must be longer than 0 s".into());
        }
        if self.step_ns == 0 {
            return Err("Jain step: must be longer than 0 s".into());
        }
        if self.step_ns > self.window_ns {
            return Err(format!(
                "Jain step {} s is longer than the window {} s: windows would leave gaps; use a step at most the window",
                self.step_ns as f64 / 1e9,
                self.window_ns as f64 / 1e9
            ));
        }
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(format!(
                "Jain threshold {}: must be in (0, 1] (Jain's index lies between 1/n and 1)",
                self.threshold
            ));
        }
        Ok(())
    }
}

pub use stats::jain;

/// One sliding window's index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JainWindow {
    /// The window's end (the sample it ends at), s.
    pub end_s: f64,
    /// Flows judged (sampled at both ends).
    pub flows: usize,
    /// Jain's index of their rates.
    pub jain: f64,
}

/// The sliding index of a run and what it says about convergence.
#[derive(Clone, Debug, PartialEq)]
pub struct JainSeries {
    /// The parameters used.
    pub params: JainParams,
    /// Every window with an index, in time order.
    pub windows: Vec<JainWindow>,
    /// When the last flow joined (its first sample), s.
    pub last_join_s: Option<f64>,
}

impl JainSeries {
    /// The windows that count for convergence: those ending at least one
    /// window after the last flow joined.
    fn judged(&self) -> impl Iterator<Item = &JainWindow> {
        let from = self.last_join_s.unwrap_or(0.0) + self.params.window_ns as f64 / 1e9;
        // 1 ns of slack: times come through f64 seconds.
        self.windows.iter().filter(move |w| w.end_s >= from - 1e-9)
    }

    /// The end of the first window from which every judged window is at
    /// or above the threshold; `None` if the last judged window is below
    /// it or there is none (see the module documentation).
    pub fn converged_at_s(&self) -> Option<f64> {
        let mut at = None;
        let mut last = None;
        for w in self.judged() {
            if w.jain >= self.params.threshold {
                at.get_or_insert(w.end_s);
            } else {
                at = None;
            }
            last = Some(w.end_s);
        }
        // Held for at least one window before the run ended: a last window
        // that happens to be fair is not convergence.
        let window = self.params.window_ns as f64 / 1e9;
        at.filter(|&a| last.is_some_and(|l| l - a >= window - 1e-9))
    }

    /// [`JainSeries::converged_at_s`] minus the time the last flow joined.
    pub fn time_to_converge_s(&self) -> Option<f64> {
        Some(self.converged_at_s()? - self.last_join_s.unwrap_or(0.0))
    }

    /// The summary's view; `None` without any window.
    pub fn json(&self) -> Option<FairnessJson> {
        if self.windows.is_empty() {
            return None;
        }
        let n = self.windows.len();
        let judged: Vec<f64> = self.judged().map(|w| w.jain).collect();
        Some(FairnessJson {
            window_s: r6(self.params.window_ns as f64 / 1e9),
            step_s: r6(self.params.step_ns as f64 / 1e9),
            threshold: self.params.threshold,
            windows: n,
            jain_min: judged.iter().copied().reduce(f64::min).map(r6),
            jain_mean: (!judged.is_empty())
                .then(|| r6(judged.iter().sum::<f64>() / judged.len() as f64)),
            last_join_s: self.last_join_s.map(r6),
            converged_at_s: self.converged_at_s().map(r6),
            time_to_converge_s: self.time_to_converge_s().map(r6),
        })
    }
}

/// `summary.json`'s `fairness_over_time`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FairnessJson {
    /// Window length, s.
    pub window_s: f64,
    /// Step between window ends, s.
    pub step_s: f64,
    /// The fair-share threshold.
    pub threshold: f64,
    /// Windows with an index (two or more flows).
    pub windows: usize,
    /// Lowest index of the windows judged for convergence.
    pub jain_min: Option<f64>,
    /// Mean index of the windows judged for convergence.
    pub jain_mean: Option<f64>,
    /// When the last flow joined, s.
    pub last_join_s: Option<f64>,
    /// The end of the first window from which the index stays at or above
    /// the threshold, s; null if it never does.
    pub converged_at_s: Option<f64>,
    /// `converged_at_s − last_join_s`, s.
    pub time_to_converge_s: Option<f64>,
}

/// Rounds to 6 decimals, as the rest of `summary.json`.
fn r6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// The sliding Jain's index, fed one sample at a time in the order the
/// simulator (and `flows.csv`) gives them: by time, then flow. Memory is
/// one window of step snapshots, plus one entry per window for the series.
pub struct SlidingJain {
    params: JainParams,
    /// Snapshots `(t_ns, [(flow, delivered)])`, oldest first: at most the
    /// latest one at or before the current window's start and those after.
    snaps: VecDeque<(u64, Vec<(usize, u64)>)>,
    next_grid: u64,
    cur_t: Option<u64>,
    cur: Vec<(usize, u64)>,
    prev_flows: Vec<usize>,
    last_join_ns: Option<u64>,
    windows: Vec<JainWindow>,
}

impl SlidingJain {
    /// An empty series; `params` must pass [`JainParams::check`].
    pub fn new(params: JainParams) -> Self {
        SlidingJain {
            params,
            snaps: VecDeque::new(),
            next_grid: 0,
            cur_t: None,
            cur: Vec::new(),
            prev_flows: Vec::new(),
            last_join_ns: None,
            windows: Vec::new(),
        }
    }

    /// One flow's delivered bytes at `t_ns`.
    pub fn sample(&mut self, t_ns: u64, flow: usize, delivered: u64) {
        if self.cur_t != Some(t_ns) {
            self.close_instant();
            self.cur_t = Some(t_ns);
        }
        self.cur.push((flow, delivered));
    }

    /// Ends the sampling instant under way.
    fn close_instant(&mut self) {
        let Some(t) = self.cur_t.take() else { return };
        let mut now = std::mem::take(&mut self.cur);
        now.sort_unstable_by_key(|e| e.0);
        for &(f, _) in &now {
            if self.prev_flows.binary_search(&f).is_err() {
                self.last_join_ns = Some(t);
            }
        }
        self.prev_flows = now.iter().map(|e| e.0).collect();
        if t < self.next_grid {
            return;
        }
        // The first step's multiple past `t`, computed, not stepped to: a
        // sample far past the last (a time of 1e308 s in a hand-edited
        // flows.csv reads as u64::MAX ns) made that loop run for ever.
        let step = self.params.step_ns.max(1);
        self.next_grid = (t / step).saturating_add(1).saturating_mul(step);
        // Keep one snapshot at or before the window's start.
        let start = t.saturating_sub(self.params.window_ns);
        while self.snaps.len() >= 2 && self.snaps[1].0 <= start {
            self.snaps.pop_front();
        }
        if t >= self.params.window_ns {
            if let Some((t0, then)) = self.snaps.front().filter(|s| s.0 <= start) {
                let len = (t - t0) as f64 / 1e9;
                let rates: Vec<f64> = now
                    .iter()
                    .filter_map(|&(f, d)| {
                        let i = then.binary_search_by_key(&f, |e| e.0).ok()?;
                        Some(d.saturating_sub(then[i].1) as f64 / len)
                    })
                    .collect();
                if rates.len() >= 2 {
                    if let Some(j) = jain(&rates) {
                        self.windows.push(JainWindow {
                            end_s: t as f64 / 1e9,
                            flows: rates.len(),
                            jain: j,
                        });
                    }
                }
            }
        }
        self.snaps.push_back((t, now));
    }

    /// The series, after the last sample.
    pub fn finish(mut self) -> JainSeries {
        self.close_instant();
        JainSeries {
            params: self.params,
            windows: self.windows,
            last_join_s: self.last_join_ns.map(|t| t as f64 / 1e9),
        }
    }
}

/// The sliding index of samples `(t_ns, flow, delivered_bytes)` given in
/// time order (as `flows.csv` has them).
pub fn sliding_jain(
    samples: impl IntoIterator<Item = (u64, usize, u64)>,
    params: JainParams,
) -> Result<JainSeries, String> {
    params.check()?;
    let mut s = SlidingJain::new(params);
    for (t, f, d) in samples {
        s.sample(t, f, d);
    }
    Ok(s.finish())
}

/// `summary.json`'s `queue`: the forward queue's distribution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueJson {
    /// The link direction (`forward`, the data direction).
    pub direction: &'static str,
    /// Samples the percentiles are over.
    pub samples: usize,
    /// Queue length, bytes: median.
    pub bytes_p50: f64,
    /// 90th percentile, bytes.
    pub bytes_p90: f64,
    /// 99th percentile, bytes.
    pub bytes_p99: f64,
    /// Largest sample, bytes.
    pub bytes_max: f64,
    /// Queueing delay, ms: median.
    pub delay_ms_p50: f64,
    /// 90th percentile, ms.
    pub delay_ms_p90: f64,
    /// 99th percentile, ms.
    pub delay_ms_p99: f64,
    /// Largest sample, ms.
    pub delay_ms_max: f64,
}

/// The forward queue's samples: bytes and delay (ms) at each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueSamples {
    /// Queue length at each sample, bytes.
    pub bytes: Vec<f64>,
    /// Queueing delay at each sample, ms.
    pub delay_ms: Vec<f64>,
}

impl QueueSamples {
    /// Percentiles and maxima; `None` without samples.
    pub fn json(&self) -> Option<QueueJson> {
        if self.bytes.is_empty() || self.delay_ms.is_empty() {
            return None;
        }
        let (mut b, mut d) = (self.bytes.clone(), self.delay_ms.clone());
        let q = |v: &mut Vec<f64>, p: f64| r6(quantile(v, p).unwrap_or(f64::NAN));
        Some(QueueJson {
            direction: "forward",
            samples: self.bytes.len(),
            bytes_p50: q(&mut b, 0.5),
            bytes_p90: q(&mut b, 0.9),
            bytes_p99: q(&mut b, 0.99),
            bytes_max: q(&mut b, 1.0),
            delay_ms_p50: q(&mut d, 0.5),
            delay_ms_p90: q(&mut d, 0.9),
            delay_ms_p99: q(&mut d, 0.99),
            delay_ms_max: q(&mut d, 1.0),
        })
    }
}

/// Collects both metrics from a run's samples as the simulator makes them,
/// wrapped around the run's sink by [`crate::run::simulate`].
pub struct MetricsRecorder<R> {
    /// The sink the samples go on to.
    pub inner: R,
    jain: SlidingJain,
    queue: QueueSamples,
}

impl<R> MetricsRecorder<R> {
    /// Wraps `inner` with the default parameters.
    pub fn new(inner: R) -> Self {
        MetricsRecorder {
            inner,
            jain: SlidingJain::new(JainParams::default()),
            queue: QueueSamples::default(),
        }
    }

    /// The sink and both metrics' summaries.
    pub fn finish(self) -> (R, Option<FairnessJson>, Option<QueueJson>) {
        (self.inner, self.jain.finish().json(), self.queue.json())
    }
}

impl<R: netsim::Recorder> netsim::Recorder for MetricsRecorder<R> {
    fn flow_sample(&mut self, s: &netsim::FlowSample) -> io::Result<()> {
        self.jain.sample(s.t_ns, s.flow, s.delivered_bytes);
        self.inner.flow_sample(s)
    }
    fn link_sample(&mut self, s: &netsim::LinkSample) -> io::Result<()> {
        if s.direction == "forward" {
            self.queue.bytes.push(s.queue_bytes as f64);
            self.queue.delay_ms.push(s.queue_delay_ns as f64 / 1e6);
        }
        self.inner.link_sample(s)
    }
    fn flow_completed(&mut self, r: &netsim::FctRecord) -> io::Result<()> {
        self.inner.flow_completed(r)
    }
    fn model_sample(&mut self, s: &netsim::ModelSample) -> io::Result<()> {
        self.inner.model_sample(s)
    }
    fn heartbeat(&mut self, t_ns: u64) -> io::Result<()> {
        self.inner.heartbeat(t_ns)
    }
    fn wants_packets(&self) -> bool {
        self.inner.wants_packets()
    }
    fn packet(&mut self, p: &netsim::PacketRecord) -> io::Result<()> {
        self.inner.packet(p)
    }
}

/// Seconds in a CSV cell to ns.
fn ns(s: f64) -> u64 {
    (s * 1e9).round().max(0.0) as u64
}

/// Opens a CSV file and reads its header row, errors naming the file.
fn open_csv(path: &Path) -> Result<(csv::Reader<std::fs::File>, csv::StringRecord), String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let head = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    Ok((r, head))
}

/// The index of column `name` in `head`, or an error saying the file is
/// not the `kind` of bbrlab file it should be.
fn column(path: &Path, head: &csv::StringRecord, name: &str, kind: &str) -> Result<usize, String> {
    head.iter().position(|h| h == name).ok_or_else(|| {
        format!(
            "{}: no column `{name}` (not a bbrlab {kind}?)",
            path.display()
        )
    })
}

/// Reads the `(t_ns, flow, delivered_bytes)` samples of a `flows.csv`.
pub fn read_flows(path: &Path) -> Result<Vec<(u64, usize, u64)>, String> {
    let (mut r, head) = open_csv(path)?;
    let col = |n: &str| column(path, &head, n, "flows.csv");
    let (ti, fi, di) = (col("time_s")?, col("flow")?, col("delivered_bytes")?);
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let cell = |c: usize, what: &str| -> Result<&str, String> {
            rec.get(c)
                .ok_or_else(|| format!("{}: row {}: no `{what}`", path.display(), i + 2))
        };
        let bad = |what: &str, v: &str| {
            format!(
                "{}: row {}: `{what}` is {v:?}, not a number",
                path.display(),
                i + 2
            )
        };
        let t = cell(ti, "time_s")?;
        let f = cell(fi, "flow")?;
        let d = cell(di, "delivered_bytes")?;
        if d.is_empty() {
            // A missing value (a real source's log without the count at
            // this sample): no sample, as for the figures.
            continue;
        }
        out.push((
            ns(t.parse().map_err(|_| bad("time_s", t))?),
            f.parse().map_err(|_| bad("flow", f))?,
            d.parse().map_err(|_| bad("delivered_bytes", d))?,
        ));
    }
    Ok(out)
}

/// Reads the forward direction's queue samples of a `link.csv`.
pub fn read_link(path: &Path) -> Result<QueueSamples, String> {
    let (mut r, head) = open_csv(path)?;
    let col = |n: &str| column(path, &head, n, "link.csv");
    let (di, bi, qi) = (
        col("direction")?,
        col("queue_bytes")?,
        col("queue_delay_ms")?,
    );
    let mut out = QueueSamples::default();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        if rec.get(di) != Some("forward") {
            continue;
        }
        if [bi, qi]
            .iter()
            .any(|&c| rec.get(c).is_none_or(str::is_empty))
        {
            continue; // a missing value: no sample
        }
        let num = |c: usize, what: &str| -> Result<f64, String> {
            let v = rec.get(c).unwrap_or("");
            v.parse().map_err(|_| {
                format!(
                    "{}: row {}: `{what}` is {v:?}, not a number",
                    path.display(),
                    i + 2
                )
            })
        };
        out.bytes.push(num(bi, "queue_bytes")?);
        out.delay_ms.push(num(qi, "queue_delay_ms")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Samples every 100 ms for `secs` seconds of flows whose bytes per
    /// 100 ms are `rate(flow, t_ns)`; a flow is sampled from `start(flow)`.
    fn series(
        flows: usize,
        secs: u64,
        start: impl Fn(usize) -> u64,
        rate: impl Fn(usize, u64) -> u64,
    ) -> Vec<(u64, usize, u64)> {
        let mut delivered = vec![0u64; flows];
        let mut out = Vec::new();
        for k in 0..=secs * 10 {
            let t = k * 100 * MS;
            for (f, d) in delivered.iter_mut().enumerate() {
                if t < start(f) {
                    continue;
                }
                if t > start(f) {
                    *d += rate(f, t);
                }
                out.push((t, f, *d));
            }
        }
        out
    }

    /// A sample far past the others (a hand-edited `flows.csv` with a time
    /// of 1e308 s reads as `u64::MAX` ns) ends the series at once, with the
    /// windows before it as they were: the window grid is computed, not
    /// stepped through (it had stepped 0.1 s at a time, for ever).
    #[test]
    fn a_sample_at_the_end_of_time_ends_the_series_at_once() {
        let mut samples = series(2, 3, |_| 0, |_, _| 1000);
        let before = sliding_jain(samples.clone(), JainParams::default()).unwrap();
        for f in 0..2 {
            samples.push((u64::MAX, f, 10_000));
        }
        let after = sliding_jain(samples, JainParams::default()).unwrap();
        assert!(!before.windows.is_empty());
        assert_eq!(after.windows[..before.windows.len()], before.windows[..]);
        assert!(after.windows.len() <= before.windows.len() + 1);
    }

    #[test]
    fn jain_of_equal_rates_is_one_and_of_one_taker_is_one_over_n() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[5.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(jain(&[]), None);
    }

    #[test]
    fn equal_flows_are_fair_in_every_window_and_converge_after_one_window() {
        let s = sliding_jain(series(3, 5, |_| 0, |_, _| 1000), JainParams::default()).unwrap();
        // Windows end every 100 ms from 1 s to 5 s: 41 of them.
        assert_eq!(s.windows.len(), 41);
        assert!(s.windows.iter().all(|w| w.flows == 3));
        assert!(s.windows.iter().all(|w| (w.jain - 1.0).abs() < 1e-12));
        assert_eq!(s.windows[0].end_s, 1.0);
        assert_eq!(s.converged_at_s(), Some(1.0));
        assert_eq!(s.time_to_converge_s(), Some(1.0));
    }

    #[test]
    fn a_starved_flow_gives_one_over_n_and_never_converges() {
        let s = sliding_jain(
            series(3, 4, |_| 0, |f, _| if f == 0 { 1000 } else { 0 }),
            JainParams::default(),
        )
        .unwrap();
        assert!(!s.windows.is_empty());
        for w in &s.windows {
            assert!((w.jain - 1.0 / 3.0).abs() < 1e-12, "{w:?}");
        }
        assert_eq!(s.converged_at_s(), None);
        let j = s.json().unwrap();
        assert_eq!(j.converged_at_s, None);
        assert_eq!(j.jain_min, Some(0.333333));
    }

    /// Two flows at 9:1 until 5 s, then 5:5. A window ending at 5 + x s
    /// (1 s long) holds 1 − x s of 9:1 and x s of 5:5, so its rates are
    /// 9 − 4x and 1 + 4x and its index 100 / (2 (82 − 64x + 32x²)). That
    /// is at least 0.9 for x ≥ 0.583 (the root of 32x² − 64x + 26.44),
    /// so the first window on the 100 ms grid that stays fair ends at 5.6 s
    /// (x = 0.5 gives 0.862, x = 0.6 gives 0.907). Before 5 s the index is
    /// 100 / 164 = 0.61.
    #[test]
    fn a_step_to_equal_rates_converges_when_the_window_is_fair_enough() {
        let rate = |f: usize, t: u64| match (f, t <= 5000 * MS) {
            (0, true) => 900,
            (1, true) => 100,
            _ => 500,
        };
        let s = sliding_jain(series(2, 10, |_| 0, rate), JainParams::default()).unwrap();
        let at = |end: f64| {
            s.windows
                .iter()
                .find(|w| (w.end_s - end).abs() < 1e-9)
                .unwrap()
                .jain
        };
        assert!((at(3.0) - 100.0 / 164.0).abs() < 1e-9);
        assert!((at(5.5) - 100.0 / (2.0 * 58.0)).abs() < 1e-9);
        assert!((at(5.6) - 100.0 / (2.0 * 55.12)).abs() < 1e-9);
        assert_eq!(at(6.0), 1.0);
        assert_eq!(s.converged_at_s(), Some(5.6));
        assert_eq!(s.time_to_converge_s(), Some(5.6));
        // A stricter threshold waits for a later window: 0.98 needs
        // 82 − 64x + 32x² ≤ 51.02, x ≥ 0.821 (x = 0.8 gives 0.975), the
        // grid's 5.9 s.
        let strict = JainParams {
            threshold: 0.98,
            ..JainParams::default()
        };
        let s = sliding_jain(series(2, 10, |_| 0, rate), strict).unwrap();
        assert_eq!(s.converged_at_s(), Some(5.9));
    }

    /// Fair only in the last half second: not converged (it must hold for
    /// a window before the run ends).
    #[test]
    fn a_fair_tail_shorter_than_a_window_is_not_convergence() {
        let rate = |f: usize, t: u64| match (f, t <= 4000 * MS) {
            (0, true) => 900,
            (1, true) => 100,
            _ => 500,
        };
        // 9:1 until 4 s, equal after, the run's last sample at 5 s: windows
        // are fair (≥ 0.9) from 4.6 s (as in the step test), 0.4 s before
        // the end.
        let s = sliding_jain(series(2, 5, |_| 0, rate), JainParams::default()).unwrap();
        assert!(s.windows.last().unwrap().jain >= 0.9);
        assert_eq!(s.converged_at_s(), None);
        // With the run to 6 s it has held for 1.4 s: converged at 4.6 s.
        let s = sliding_jain(series(2, 6, |_| 0, rate), JainParams::default()).unwrap();
        assert_eq!(s.converged_at_s(), Some(4.6));
    }

    /// A flow joining at 2 s is judged once a whole window has passed:
    /// windows before 3 s hold one flow and have no index.
    #[test]
    fn a_late_flow_is_judged_after_one_full_window() {
        let s = sliding_jain(
            series(2, 6, |f| if f == 1 { 2000 * MS } else { 0 }, |_, _| 700),
            JainParams::default(),
        )
        .unwrap();
        assert_eq!(s.last_join_s, Some(2.0));
        assert_eq!(s.windows[0].end_s, 3.0);
        assert_eq!(s.converged_at_s(), Some(3.0));
        assert_eq!(s.time_to_converge_s(), Some(1.0));
    }

    #[test]
    fn bad_parameters_are_refused_with_what_is_allowed() {
        let e = sliding_jain(
            Vec::new(),
            JainParams {
                threshold: 1.5,
                ..JainParams::default()
            },
        )
        .unwrap_err();
        assert!(e.contains("(0, 1]"), "{e}");
        let e = JainParams {
            step_ns: 2_000_000_000,
            ..JainParams::default()
        }
        .check()
        .unwrap_err();
        assert!(e.contains("longer than the window"), "{e}");
        assert!(JainParams {
            window_ns: 0,
            ..JainParams::default()
        }
        .check()
        .is_err());
    }

    #[test]
    fn queue_percentiles_of_a_hand_built_sample_set() {
        // 1 … 100 bytes; delays 0.1 … 10 ms, shuffled.
        let mut q = QueueSamples::default();
        for i in 0..100u32 {
            let v = f64::from((i * 37) % 100 + 1);
            q.bytes.push(v);
            q.delay_ms.push(v / 10.0);
        }
        let j = q.json().unwrap();
        assert_eq!(j.samples, 100);
        // Type 7: p50 at position 49.5 → 50.5; p90 at 89.1 → 90.1; p99 at
        // 98.01 → 99.01.
        assert_eq!(
            (j.bytes_p50, j.bytes_p90, j.bytes_p99, j.bytes_max),
            (50.5, 90.1, 99.01, 100.0)
        );
        assert_eq!(
            (
                j.delay_ms_p50,
                j.delay_ms_p90,
                j.delay_ms_p99,
                j.delay_ms_max
            ),
            (5.05, 9.01, 9.901, 10.0)
        );
        assert_eq!(QueueSamples::default().json(), None);
    }

    #[test]
    fn files_that_are_not_time_series_are_refused_with_where() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("flows.csv");
        std::fs::write(&p, "a,b\n1,2\n").unwrap();
        let e = read_flows(&p).unwrap_err();
        assert!(e.contains("no column `time_s`"), "{e}");
        // An empty cell is a missing sample, not an error.
        std::fs::write(&p, "time_s,flow,delivered_bytes\n0.1,0,\n0.2,0,5\n").unwrap();
        assert_eq!(read_flows(&p).unwrap(), [(200_000_000, 0, 5)]);
        std::fs::write(&p, "time_s,flow,delivered_bytes\n0.1,0,x\n").unwrap();
        let e = read_flows(&p).unwrap_err();
        assert!(e.contains("row 2") && e.contains("delivered_bytes"), "{e}");
        let e = read_link(&dir.path().join("missing.csv")).unwrap_err();
        assert!(e.contains("missing.csv"), "{e}");
    }

    /// The numbers `summary.json` gets as the run is simulated are the
    /// ones the run's files give afterwards (what `bbrlab plot` and Python
    /// read), and a run gets both fields.
    #[test]
    fn the_summary_matches_what_the_files_give() {
        let text = r#"
name = "two"
duration = "4s"
sample_interval = "50ms"
[link.forward]
rate = "10mbit"
delay = "10ms"
queue = { limit = "100pkt" }
[link.reverse]
delay = "10ms"
[[flow]]
algorithm = "cubic"
[[flow]]
algorithm = "bbr"
start = "1s"
"#;
        let sc = scenario::parse(
            text,
            "two.toml",
            std::path::Path::new("."),
            std::path::Path::new("two.toml"),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let json = crate::sweep::run_one(&sc.name, &sc.runs[0], dir.path()).unwrap();
        let fair = json.fairness_over_time.clone().expect("two flows: windows");
        let from_files = sliding_jain(
            read_flows(&dir.path().join("flows.csv")).unwrap(),
            JainParams::default(),
        )
        .unwrap();
        assert_eq!(from_files.json().unwrap(), fair);
        assert_eq!(fair.last_join_s, Some(1.0));
        // From 2 s (one window after the join) every 100 ms to 3.9 s (the
        // last sample is at 3.95 s: the run's end is not sampled).
        assert_eq!(fair.windows, 20);
        let q = json.queue.clone().unwrap();
        let qf = read_link(&dir.path().join("link.csv"))
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(q.samples, qf.samples);
        assert_eq!(q.bytes_p99, qf.bytes_p99);
        // link.csv rounds delays to its precision.
        assert!(
            (q.delay_ms_p99 - qf.delay_ms_p99).abs() < 1e-3,
            "{q:?} {qf:?}"
        );
        assert!(q.bytes_max > 0.0, "cubic fills the queue");
        let written: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            written["runs"][0]["fairness_over_time"]["windows"],
            serde_json::json!(20)
        );
        assert!(written["runs"][0]["queue"]["delay_ms_p50"].is_number());
    }
}
