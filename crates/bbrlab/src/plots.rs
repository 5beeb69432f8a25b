//! Standard figures for any run directory: throughput, RTT, inflight and
//! cwnd, bandwidth estimate, and bottleneck queue, as SVG and PNG.
//!
//! The figures read the run's `flows.csv` and `link.csv` (the shared
//! schema), so they work for any source that writes that schema. Text is
//! drawn with a bundled DejaVu Sans, so no system fonts are needed.

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

fn register() {
    REGISTER.call_once(|| {
        // The bundled font is valid; registration only fails on a corrupt file.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// A CSV file as named columns.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(path: &Path) -> Result<Table, String> {
        let text =
            fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut lines = text.lines();
        let header = lines
            .next()
            .ok_or_else(|| format!("{} is empty", path.display()))?
            .split(',')
            .map(str::to_string)
            .collect();
        let rows = lines
            .filter(|l| !l.is_empty())
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        Ok(Table { header, rows })
    }

    fn col(&self, name: &str, path: &Path) -> Result<usize, String> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "{}: no column `{name}` (is it a bbrlab time series?)",
                path.display()
            )
        })
    }
}

/// One line on a chart.
struct Series {
    label: String,
    points: Vec<(f64, f64)>,
}

/// Draws one chart into `<dir>/<stem>.svg` and `.png`.
fn chart(
    dir: &Path,
    stem: &str,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (0.0f64, 0.0f64);
    for &(x, y) in pts {
        x_max = x_max.max(x);
        y_max = y_max.max(y);
    }
    if x_max <= 0.0 {
        x_max = 1.0;
    }
    if y_max <= 0.0 {
        y_max = 1.0;
    }
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    draw(
        SVGBackend::new(&svg, (900, 420)).into_drawing_area(),
        title,
        y_label,
        x_max,
        y_max * 1.08,
        series,
    )?;
    draw(
        BitMapBackend::new(&png, (900, 420)).into_drawing_area(),
        title,
        y_label,
        x_max,
        y_max * 1.08,
        series,
    )?;
    Ok(())
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    x_max: f64,
    y_max: f64,
    series: &[Series],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing `{title}`: {err:?}");
    area.fill(&WHITE).map_err(e)?;
    let mut c = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_label)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        c.draw_series(LineSeries::new(
            s.points.iter().copied(),
            colour.stroke_width(2),
        ))
        .map_err(e)?
        .label(s.label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2)));
    }
    if series.len() > 1 || series.first().is_some_and(|s| !s.label.is_empty()) {
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(e)?;
    }
    area.present().map_err(e)?;
    Ok(())
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
    chart(
        dir,
        "throughput",
        "Goodput",
        "Mbit/s",
        &flow_series(&flows, &fpath, "goodput_bps", 1e-6, "")?,
    )?;
    made.push("throughput");
    chart(
        dir,
        "rtt",
        "Round-trip time",
        "ms",
        &flow_series(&flows, &fpath, "rtt_ms", 1.0, "")?,
    )?;
    made.push("rtt");
    let mut inflight = flow_series(&flows, &fpath, "inflight_bytes", 1e-3, " inflight")?;
    inflight.extend(flow_series(&flows, &fpath, "cwnd_bytes", 1e-3, " cwnd")?);
    chart(dir, "inflight", "Inflight and cwnd", "kB", &inflight)?;
    made.push("inflight");
    let bw = flow_series(&flows, &fpath, "bw_estimate_bps", 1e-6, "")?;
    if bw.iter().any(|s| !s.points.is_empty()) {
        chart(dir, "bw_estimate", "Bandwidth estimate", "Mbit/s", &bw)?;
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
        chart(
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
