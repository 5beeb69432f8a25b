//! A claim's finished runs and what its evaluation reads from them: the
//! sweep parameters, the summary's figures, and the time series of
//! `flows.csv` and `link.csv`.

use figures::Table;
use runner::output::{LinkJson, SummaryJson};
use std::path::PathBuf;

/// One finished run of a claim's scenario.
pub struct RunData {
    /// Sweep parameters (`key`, `value`).
    pub params: Vec<(String, String)>,
    /// Its summary.
    pub summary: SummaryJson,
    /// Its output directory (flows.csv, link.csv, summary.json).
    pub dir: PathBuf,
    /// Relative link from the report page to that directory.
    pub href: String,
    /// Simulated duration, s.
    pub duration_s: f64,
}

impl RunData {
    /// The value of sweep parameter `key`, if swept.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Bit/s as Mbit/s.
pub(crate) fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// Flow `flow`'s goodput over the run, Mbit/s (0 if there is no such flow).
pub(crate) fn goodput(d: &RunData, flow: usize) -> f64 {
    d.summary
        .flows
        .get(flow)
        .map_or(0.0, |f| mbps(f.goodput_bps))
}

/// Flow `flow`'s median RTT over the run, ms (NaN if unknown).
pub(crate) fn median_rtt(d: &RunData, flow: usize) -> f64 {
    d.summary
        .flows
        .get(flow)
        .and_then(|f| f.rtt_median_ms)
        .unwrap_or(f64::NAN)
}

/// The run's retransmission rate over all its flows: retransmitted data
/// packets over data packets sent (NaN if none were sent).
pub(crate) fn retransmission_rate(d: &RunData) -> f64 {
    let (re, sent) = d.summary.flows.iter().fold((0u64, 0u64), |(r, s), f| {
        (r + f.retransmissions, s + f.packets_sent)
    });
    if sent == 0 {
        f64::NAN
    } else {
        re as f64 / sent as f64
    }
}

/// The forward (data) direction's drops and CE marks, from the summary.
pub(crate) fn forward_link(d: &RunData) -> Option<&LinkJson> {
    d.summary.links.iter().find(|l| l.direction == "forward")
}

/// Flow 0's share of the run's time in `mode` (0 if never).
pub(crate) fn mode_fraction(d: &RunData, mode: &str) -> f64 {
    d.summary.flows[0]
        .mode_fractions
        .iter()
        .find(|m| m.0 == mode)
        .map_or(0.0, |m| m.1)
}

/// The run whose sweep parameters include every `(key, value)`.
pub(crate) fn find<'a>(data: &'a [RunData], want: &[(&str, &str)]) -> Result<&'a RunData, String> {
    data.iter()
        .find(|d| want.iter().all(|(k, v)| d.param(k) == Some(v)))
        .ok_or_else(|| format!("no run with {want:?}"))
}

/// Sweep parameter `key` as a number, its unit (`pkt`, `ms`) dropped; NaN
/// if not swept or not a number.
pub(crate) fn param_f64(d: &RunData, key: &str) -> f64 {
    d.param(key)
        .and_then(|v| {
            v.trim_matches('"')
                .trim_end_matches("pkt")
                .trim_end_matches("ms")
                .parse()
                .ok()
        })
        .unwrap_or(f64::NAN)
}

/// The run's `flows.csv`, and its path for error messages.
pub(crate) fn flows_table(d: &RunData) -> Result<(Table, PathBuf), String> {
    let p = d.dir.join("flows.csv");
    Ok((Table::read(&p)?, p))
}

/// Column `col` of flow `flow` over time, scaled.
pub(crate) fn series(
    d: &RunData,
    flow: usize,
    col: &str,
    scale: f64,
) -> Result<Vec<(f64, f64)>, String> {
    let (t, p) = flows_table(d)?;
    let f = flow.to_string();
    Ok(t.points(&p, "time_s", col, Some(("flow", &f)))?
        .into_iter()
        .map(|(x, y)| (x, y * scale))
        .collect())
}

/// The forward bottleneck's queue over time, packets, from `link.csv`.
pub(crate) fn link_queue(d: &RunData) -> Result<Vec<(f64, f64)>, String> {
    link_series(d, "queue_packets")
}

/// Column `col` of the forward bottleneck over time, from `link.csv`.
pub(crate) fn link_series(d: &RunData, col: &str) -> Result<Vec<(f64, f64)>, String> {
    let p = d.dir.join("link.csv");
    Table::read(&p)?.points(&p, "time_s", col, Some(("direction", "forward")))
}

/// The run's time-series interval in s, read from its first two samples.
pub(crate) fn sample_interval(d: &RunData) -> Option<f64> {
    let (t, p) = flows_table(d).ok()?;
    let ts = t.points(&p, "time_s", "flow", Some(("flow", "0"))).ok()?;
    Some(ts.get(1)?.0 - ts.first()?.0)
}
