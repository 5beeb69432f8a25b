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
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads a whole CSV file (bbrlab's own outputs: no quoted commas in
    /// the numeric columns this is used for).
    pub fn read(path: &Path) -> Result<Table, String> {
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

    /// Rows where column `filter.0` equals `filter.1` (all rows if none).
    fn matching<'a>(
        &'a self,
        path: &Path,
        filter: Option<(&'a str, &'a str)>,
    ) -> Result<impl Iterator<Item = &'a Vec<String>> + 'a, String> {
        let fi = match filter {
            Some((c, v)) => Some((self.col(c, path)?, v)),
            None => None,
        };
        Ok(self.rows.iter().filter(move |r| match fi {
            Some((i, v)) => r.get(i).is_some_and(|c| c == v),
            None => true,
        }))
    }

    /// `(x, y)` pairs from numeric columns `x` and `y`, over rows where
    /// column `filter.0` equals `filter.1` (if given); empty cells skipped.
    pub fn points(
        &self,
        path: &Path,
        x: &str,
        y: &str,
        filter: Option<(&str, &str)>,
    ) -> Result<Vec<(f64, f64)>, String> {
        let (xi, yi) = (self.col(x, path)?, self.col(y, path)?);
        Ok(self
            .matching(path, filter)?
            .filter_map(|r| Some((r.get(xi)?.parse().ok()?, r.get(yi)?.parse().ok()?)))
            .collect())
    }

    /// The text cells of column `name` over rows matching `filter`, with
    /// the numeric `time_s` of each row.
    pub fn labels(
        &self,
        path: &Path,
        name: &str,
        filter: Option<(&str, &str)>,
    ) -> Result<Vec<(f64, String)>, String> {
        let (ti, ni) = (self.col("time_s", path)?, self.col(name, path)?);
        Ok(self
            .matching(path, filter)?
            .filter_map(|r| Some((r.get(ti)?.parse().ok()?, r.get(ni)?.clone())))
            .collect())
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
pub struct Series {
    /// Legend text (empty: no legend entry).
    pub label: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A measured curve with its spread, for results over several seeds (or
/// any spread of samples): the centre (a mean or a median) as a line, a
/// shaded band from `lo` to `hi` around it, and, where there are few
/// points, an error bar at each. A single run hides how much of a
/// difference is seed noise; the band shows it. Say in the label what the
/// centre and the band are, e.g. "bbr (mean, min–max over 8 seeds)".
///
/// Draw bands with [`figure_with_bands`]. `claims::band` builds one from
/// runs grouped by sweep point over their seeds.
pub struct Band {
    /// Legend text (empty: no legend entry).
    pub label: String,
    /// `(x, centre, lo, hi)` per point, in x order.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// How to draw a comparison figure for the reproduction report.
pub struct Figure<'a> {
    /// Output path without extension; `.svg` and `.png` are written.
    pub stem: &'a Path,
    /// Title above the plot.
    pub title: &'a str,
    /// X-axis description.
    pub x_label: &'a str,
    /// Y-axis description.
    pub y_label: &'a str,
    /// Logarithmic x axis (sweeps over orders of magnitude, like C1's loss).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Measured lines.
    pub series: &'a [Series],
    /// Published reference values, drawn as black-outlined markers.
    pub published: &'a [(f64, f64)],
}

fn bounds(figure: &Figure<'_>, bands: &[Band]) -> ((f64, f64), (f64, f64)) {
    let spread = bands
        .iter()
        .flat_map(|b| b.points.iter())
        .flat_map(|&(x, y, lo, hi)| [(x, y), (x, lo), (x, hi)]);
    let all = figure
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .chain(figure.published.iter())
        .copied()
        .chain(spread)
        .filter(|&(x, y)| (!figure.log_x || x > 0.0) && (!figure.log_y || y > 0.0));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let span = |lo: f64, hi: f64, log: bool| {
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let lo = lo.min(0.0);
            let hi = if hi > lo { hi } else { lo + 1.0 };
            (lo, hi + (hi - lo) * 0.08)
        }
    };
    (span(x0, x1, figure.log_x), span(y0, y1, figure.log_y))
}

/// Draws a report figure as SVG and PNG.
pub fn figure(figure: &Figure<'_>) -> Result<(), String> {
    figure_with_bands(figure, &[])
}

/// Draws a report figure with spread bands (see [`Band`]) as SVG and PNG.
/// The bands take the colours after the figure's series, so a figure can
/// mix single runs (series) and multi-seed results (bands).
pub fn figure_with_bands(figure: &Figure<'_>, bands: &[Band]) -> Result<(), String> {
    register();
    let svg = figure.stem.with_extension("svg");
    let png = figure.stem.with_extension("png");
    draw_figure(
        SVGBackend::new(&svg, (820, 440)).into_drawing_area(),
        figure,
        bands,
    )?;
    draw_figure(
        BitMapBackend::new(&png, (820, 440)).into_drawing_area(),
        figure,
        bands,
    )?;
    Ok(())
}

fn draw_figure<DB: DrawingBackend>(
    area: DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure<'_>,
    bands: &[Band],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let title = fig.title;
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| format!("drawing `{title}`: {err:?}");
    area.fill(&WHITE).map_err(e)?;
    let ((x0, x1), (y0, y1)) = bounds(fig, bands);
    let mut b = ChartBuilder::on(&area);
    b.caption(title, ("sans-serif", 19))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(72);
    // The four axis combinations have different coordinate types, so the
    // drawing code is shared through a macro.
    macro_rules! body {
        ($chart:expr) => {{
            let mut c = $chart.map_err(e)?;
            c.configure_mesh()
                .x_desc(fig.x_label)
                .y_desc(fig.y_label)
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 14))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(e)?;
            for (i, s) in fig.series.iter().enumerate() {
                let colour = COLOURS[i % COLOURS.len()];
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|&(x, y)| (!fig.log_x || x > 0.0) && (!fig.log_y || y > 0.0))
                    .collect();
                let few = pts.len() <= 40;
                c.draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))
                    .map_err(e)?
                    .label(s.label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                    });
                if few {
                    c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                        .map_err(e)?;
                }
            }
            for (i, b) in bands.iter().enumerate() {
                let colour = COLOURS[(fig.series.len() + i) % COLOURS.len()];
                // A point whose band reaches zero cannot sit on a log axis.
                let pts: Vec<(f64, f64, f64, f64)> = b
                    .points
                    .iter()
                    .copied()
                    .filter(|&(x, _, lo, _)| (!fig.log_x || x > 0.0) && (!fig.log_y || lo > 0.0))
                    .collect();
                let mut area_pts: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.3)).collect();
                area_pts.extend(pts.iter().rev().map(|p| (p.0, p.2)));
                if area_pts.len() >= 4 {
                    c.draw_series(std::iter::once(Polygon::new(
                        area_pts,
                        colour.mix(0.18).filled(),
                    )))
                    .map_err(e)?;
                }
                let series = c
                    .draw_series(LineSeries::new(
                        pts.iter().map(|p| (p.0, p.1)),
                        colour.stroke_width(2),
                    ))
                    .map_err(e)?;
                if !b.label.is_empty() {
                    series.label(b.label.clone()).legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + Rectangle::new([(0, -5), (18, 5)], colour.mix(0.18).filled())
                            + PathElement::new(vec![(0, 0), (18, 0)], colour.stroke_width(2))
                    });
                }
                if pts.len() <= 40 {
                    // Error bars with caps: the band alone is hard to read
                    // where points are far apart.
                    c.draw_series(pts.iter().map(|&(x, _, lo, hi)| {
                        PathElement::new(vec![(x, lo), (x, hi)], colour.stroke_width(1))
                    }))
                    .map_err(e)?;
                    c.draw_series(pts.iter().flat_map(|&(x, _, lo, hi)| {
                        [lo, hi].map(|y| {
                            EmptyElement::at((x, y))
                                + PathElement::new(vec![(-4, 0), (4, 0)], colour.stroke_width(1))
                        })
                    }))
                    .map_err(e)?;
                    c.draw_series(
                        pts.iter()
                            .map(|&(x, y, _, _)| Circle::new((x, y), 3, colour.filled())),
                    )
                    .map_err(e)?;
                }
            }
            if !fig.published.is_empty() {
                let pts: Vec<(f64, f64)> = fig
                    .published
                    .iter()
                    .copied()
                    .filter(|&(x, y)| (!fig.log_x || x > 0.0) && (!fig.log_y || y > 0.0))
                    .collect();
                c.draw_series(
                    pts.iter()
                        .map(|&p| TriangleMarker::new(p, 7, BLACK.stroke_width(2))),
                )
                .map_err(e)?
                .label("published")
                .legend(|(x, y)| TriangleMarker::new((x + 9, y), 6, BLACK.stroke_width(2)));
            }
            c.configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(e)?;
        }};
    }
    match (fig.log_x, fig.log_y) {
        (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1)),
        (true, false) => body!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)),
        (false, true) => body!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale())),
        (true, true) => body!(b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())),
    }
    area.present().map_err(e)?;
    Ok(())
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
