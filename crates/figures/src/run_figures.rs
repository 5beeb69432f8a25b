//! The standard figures of a run directory ([`plot_run`]): which columns
//! of `flows.csv` and `link.csv` are drawn, and how.

use crate::csv_table::Table;
use crate::figure::{Figure, Series};
use crate::layout::plan;
use crate::render::write_figure;
use crate::text::register;
use std::collections::BTreeMap;
use std::path::Path;

/// Draws one chart of series over time (s) into `<dir>/<stem>.svg` and
/// `.png`, at the size of a run's standard figures: shared with other
/// time-series figures (the search's worst path) so that they look alike.
pub fn time_chart(
    dir: &Path,
    stem: &str,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    register();
    let stem = dir.join(stem);
    let fig = Figure {
        stem: &stem,
        title,
        x_label: "time (s)",
        y_label,
        log_x: false,
        log_y: false,
        series,
        published: &[],
        published_label: None,
    };
    write_figure(&plan(&fig, &[], (900, 420)), &stem)
}

/// Per-flow series of column `col` scaled by `scale`, skipping empty cells.
fn flow_series(
    t: &Table,
    path: &Path,
    col: &str,
    scale: f64,
    suffix: &str,
) -> Result<Vec<Series>, String> {
    let (ti, fi, ci) = (
        t.col("time_s", path)?,
        t.col("flow", path)?,
        t.col(col, path)?,
    );
    let mut by_flow: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &t.rows {
        let (Some(x), Some(f)) = (
            r.get(ti).and_then(|v| v.parse().ok()),
            r.get(fi).and_then(|v| v.parse().ok()),
        ) else {
            continue;
        };
        if let Some(y) = r.get(ci).and_then(|v| v.parse::<f64>().ok()) {
            by_flow.entry(f).or_default().push((x, y * scale));
        }
    }
    Ok(by_flow
        .into_iter()
        .map(|(f, points)| Series {
            label: format!("flow {f}{suffix}"),
            points,
        })
        .collect())
}

/// Draws the standard figures for the run in `dir`; returns the file stems.
pub fn plot_run(dir: &Path) -> Result<Vec<&'static str>, String> {
    register();
    let fpath = dir.join("flows.csv");
    let flows = Table::read(&fpath)?;
    let mut made = Vec::new();
    time_chart(
        dir,
        "throughput",
        "Goodput",
        "Mbit/s",
        &flow_series(&flows, &fpath, "goodput_bps", 1e-6, "")?,
    )?;
    made.push("throughput");
    time_chart(
        dir,
        "rtt",
        "Round-trip time",
        "ms",
        &flow_series(&flows, &fpath, "rtt_ms", 1.0, "")?,
    )?;
    made.push("rtt");
    let mut inflight = flow_series(&flows, &fpath, "inflight_bytes", 1e-3, " inflight")?;
    inflight.extend(flow_series(&flows, &fpath, "cwnd_bytes", 1e-3, " cwnd")?);
    time_chart(dir, "inflight", "Inflight and cwnd", "kB", &inflight)?;
    made.push("inflight");
    let bw = flow_series(&flows, &fpath, "bw_estimate_bps", 1e-6, "")?;
    if bw.iter().any(|s| !s.points.is_empty()) {
        time_chart(dir, "bw_estimate", "Bandwidth estimate", "Mbit/s", &bw)?;
        made.push("bw_estimate");
    }
    let lpath = dir.join("link.csv");
    if lpath.exists() {
        let link = Table::read(&lpath)?;
        let (ti, di, qi) = (
            link.col("time_s", &lpath)?,
            link.col("direction", &lpath)?,
            link.col("queue_packets", &lpath)?,
        );
        let points: Vec<(f64, f64)> = link
            .rows
            .iter()
            .filter(|r| r.get(di).is_some_and(|d| d == "forward"))
            .filter_map(|r| Some((r.get(ti)?.parse().ok()?, r.get(qi)?.parse().ok()?)))
            .collect();
        time_chart(
            dir,
            "queue",
            "Bottleneck queue",
            "packets",
            &[Series {
                label: String::new(),
                points,
            }],
        )?;
        made.push("queue");
    }
    Ok(made)
}
