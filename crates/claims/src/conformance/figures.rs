//! A figure per case: each controller's bytes in flight and pacing rate
//! over time at the case's figure point ([`super::figure_point`]), with
//! the case's numeric expectations drawn on them as rows of black
//! triangles over the time they apply (inflight bounds on the first;
//! goodput and bandwidth-estimate bounds, rates like the pacing rate, on
//! the second), apart from the controllers' colours. The state checks
//! have no line to draw; the report lists them beside the figure.

use super::case::Case;
use super::check::{CheckKind, Path};
use super::RunResult;
use figures::{Figure, Series};
use runner::run::FlowSample;
use std::path::Path as FsPath;

/// Most points drawn per line (more only thickens the PNG).
const MAX_POINTS: usize = 1500;

/// Draws `<dir>/<case>-inflight` and `<dir>/<case>-pacing` (SVG and PNG)
/// from the runs of `case` at its figure point that kept their samples;
/// returns the stems written (none if no run kept samples).
pub fn draw(
    dir: &FsPath,
    case: &Case,
    path: &Path,
    runs: &[&RunResult],
) -> Result<Vec<String>, String> {
    let runs: Vec<&&RunResult> = runs.iter().filter(|r| !r.samples.is_empty()).collect();
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let end_s = runs
        .iter()
        .filter_map(|r| r.samples.last())
        .map(|x| x.t_ns as f64 / 1e9)
        .fold(0.0, f64::max);
    let bdp = path.bdp_bytes().max(1.0);
    let at = |w: super::check::When| w.ns(path.rtt_ns) as f64 / 1e9;
    let span = |from: super::check::When, to: &Option<super::check::When>| {
        (at(from), to.map_or(end_s, at).min(end_s))
    };
    // A bound as a row of markers across the time it applies.
    let row = |(a, b): (f64, f64), y: f64, out: &mut Vec<(f64, f64)>| {
        let b = b.max(a);
        out.extend((0..=12).map(|i| (a + (b - a) * i as f64 / 12.0, y)));
    };
    let inflight: Vec<Series> = runs
        .iter()
        .map(|r| series(&r.controller, &r.samples, |x| x.inflight_bytes as f64 / bdp))
        .collect();
    let rate: Vec<Series> = runs
        .iter()
        .map(|r| series(&r.controller, &r.samples, |x| x.pacing_rate_bps / 1e6))
        .collect();
    let (mut inflight_bounds, mut rate_bounds) = (Vec::new(), Vec::new());
    for c in &case.checks {
        match &c.kind {
            CheckKind::InflightAtMost {
                bdp: k,
                packets,
                from,
                to,
            } => {
                let y = k + packets * path.mss as f64 / bdp;
                row(span(*from, to), y, &mut inflight_bounds);
            }
            CheckKind::GoodputAtLeast {
                fraction,
                mbps,
                from,
                to,
            } => {
                let y = fraction * mbps.unwrap_or(path.rate_bps / 1e6);
                row(span(*from, to), y, &mut rate_bounds);
            }
            CheckKind::BwEstimateAtMost { mbps, from, to }
            | CheckKind::BwEstimateAtLeast { mbps, from, to } => {
                row(span(*from, to), *mbps, &mut rate_bounds);
            }
            _ => {}
        }
    }
    let point = runs[0].point.as_str();
    let mut stems = Vec::new();
    for (suffix, title, y_label, series, bounds) in [
        (
            "inflight",
            "bytes in flight",
            "inflight (BDPs of the path)",
            &inflight,
            &inflight_bounds,
        ),
        (
            "pacing",
            "pacing rate",
            "pacing rate (Mbit/s)",
            &rate,
            &rate_bounds,
        ),
    ] {
        let stem = format!("{}-{suffix}", case.id);
        let title = format!("{} {}: {title}, {point}", case.id, case.title);
        figures::figure(&Figure {
            stem: &dir.join(&stem),
            title: &title,
            x_label: "time (s)",
            y_label,
            log_x: false,
            log_y: false,
            series,
            published: bounds,
            published_label: Some("expected bound"),
        })?;
        stems.push(stem);
    }
    Ok(stems)
}

/// One controller's line, thinned to at most [`MAX_POINTS`].
fn series(label: &str, s: &[FlowSample], y: impl Fn(&FlowSample) -> f64) -> Series {
    let step = s.len().div_ceil(MAX_POINTS).max(1);
    Series {
        label: label.to_string(),
        points: s
            .iter()
            .step_by(step)
            .map(|x| (x.t_ns as f64 / 1e9, y(x)))
            .filter(|p| p.1.is_finite())
            .collect(),
    }
}
