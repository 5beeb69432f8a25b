//! Standard figures for any run directory: throughput, RTT, inflight and
//! cwnd, bandwidth estimate, and bottleneck queue, as SVG and PNG; and the
//! reproduction report's comparison figures ([`figure`]).
//!
//! The figures read the run's `flows.csv` and `link.csv` (the shared
//! schema), so they work for any source that writes that schema. Text is
//! drawn with a bundled DejaVu Sans, so no system fonts are needed.
//!
//! Plotters draws the shapes and the text; this module lays the figure out
//! itself (frame, ticks, grid, legend) in pixels, because plotters'
//! defaults made figures hard to read:
//!
//! * **Ticks** ([`scale`]): a log axis gets decades plus 1-2-5 (or finer)
//!   ticks and a range snapped out to a labelled value, so every value lies
//!   between two labels; labels are unique and carry no needless ".0".
//! * **Clipping** ([`clip_polyline`], [`clip_polygon`]): every series and
//!   band is cut to the plotting area, and then drawn where nothing can
//!   leave it (a separate SVG group with a clip path; a separate bitmap
//!   the size of the plotting area for the PNG), so wide strokes cannot
//!   cross the axes either.
//! * **Legend** ([`place_legend`]): put where it covers no data, or below
//!   the plot when every place inside would cover some.
//! * **PNG text** ([`glyph_offsets`]): plotters' bitmap text drops each
//!   glyph's left side bearing, which squeezes spaces away ("RTTbehind");
//!   the PNG's glyphs are placed one by one at their true positions.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle, FontTransform};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Once, OnceLock};

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
    /// Reads a whole CSV file with the `csv` crate, so quoted fields (a
    /// flow named `bbr, no lt_bw`) keep their commas instead of shifting
    /// every later column.
    pub fn read(path: &Path) -> Result<Table, String> {
        let err = |e: csv::Error| format!("cannot read {}: {e}", path.display());
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(path)
            .map_err(err)?;
        let header: Vec<String> = reader
            .headers()
            .map_err(err)?
            .iter()
            .map(str::to_string)
            .collect();
        if header.is_empty() {
            return Err(format!("{} is empty", path.display()));
        }
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(err)?;
            if record.iter().all(str::is_empty) {
                continue;
            }
            rows.push(record.iter().map(str::to_string).collect());
        }
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

// ----- axes and ticks ------------------------------------------------------

/// One axis's visible range, in data units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    /// Lowest visible value.
    pub lo: f64,
    /// Highest visible value.
    pub hi: f64,
    /// Logarithmic: positions are proportional to `log10` of the value.
    pub log: bool,
}

impl Axis {
    /// The value in axis space (`log10` on a log axis), where the mapping
    /// to pixels is linear; `None` for what the axis cannot show (zero or
    /// less on a log axis, NaN).
    pub fn t(&self, v: f64) -> Option<f64> {
        let t = if self.log {
            (v > 0.0).then(|| v.log10())?
        } else {
            v
        };
        t.is_finite().then_some(t)
    }

    /// The visible range in axis space.
    pub fn t_range(&self) -> (f64, f64) {
        let f = |v: f64| if self.log { v.log10() } else { v };
        (f(self.lo), f(self.hi))
    }
}

/// A labelled tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Where, in data units.
    pub value: f64,
    /// What is printed there.
    pub label: String,
}

/// An axis with its labelled ticks and unlabelled grid lines.
#[derive(Clone, Debug)]
pub struct Scale {
    /// The visible range.
    pub axis: Axis,
    /// Labelled ticks, increasing, all inside the range.
    pub ticks: Vec<Tick>,
    /// Light grid lines (data units), inside the range.
    pub minor: Vec<f64>,
}

/// Chooses the visible range and the labelled ticks of an axis that must
/// show data from `lo` to `hi` (published markers included), with at most
/// about `max_labels` labels.
///
/// A log axis adds a margin of a factor 1.2 each side and snaps its ends
/// out to labelled values, so every value lies between two labels; it
/// labels 1-2-3…9 of a decade when it spans less than one, else 1-2-5,
/// else decades (every second or more when there are many). A linear axis
/// starts at zero (or below, for negative data), ends 5 % above the data,
/// and labels multiples of 1, 2, 2.5 or 5 × 10ⁿ. Labels are unique and
/// print no trailing zeros ("10", not "10.0").
pub fn scale(lo: f64, hi: f64, log: bool, max_labels: usize) -> Scale {
    let max_labels = max_labels.max(3);
    if log {
        log_scale(lo, hi, max_labels)
    } else {
        linear_scale(lo, hi, max_labels)
    }
}

fn log_scale(lo: f64, hi: f64, max_labels: usize) -> Scale {
    let (lo, hi) = if lo > 0.0 && hi >= lo && hi.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    };
    let (lo, hi) = (lo / 1.2, hi * 1.2);
    let span = (hi / lo).log10();
    let mut choices: Vec<(&[u32], i32)> = Vec::new();
    if span < 1.0 {
        choices.push((&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1));
    }
    choices.push((&[1, 2, 5], 1));
    for every in 1..=12 {
        choices.push((&[1], every));
    }
    let mut chosen = Vec::new();
    for (mantissas, every) in choices {
        chosen = log_ticks(lo, hi, mantissas, every);
        if chosen.len() <= max_labels {
            break;
        }
    }
    let value = |&(m, e): &(u32, i32)| f64::from(m) * 10f64.powi(e);
    let axis = Axis {
        lo: chosen.first().map_or(lo, value),
        hi: chosen.last().map_or(hi, value),
        log: true,
    };
    let ticks: Vec<Tick> = chosen
        .iter()
        .map(|t| Tick {
            value: value(t),
            label: log_label(t.0, t.1),
        })
        .collect();
    let (e0, e1) = (
        axis.lo.log10().floor() as i32,
        axis.hi.log10().ceil() as i32,
    );
    let mut minor = Vec::new();
    if e1 - e0 <= 8 {
        for e in e0..=e1 {
            for m in 1..=9u32 {
                let v = f64::from(m) * 10f64.powi(e);
                let inside = v >= axis.lo * (1.0 - 1e-9) && v <= axis.hi * (1.0 + 1e-9);
                if inside && !ticks.iter().any(|t| close(t.value, v)) {
                    minor.push(v);
                }
            }
        }
    }
    Scale { axis, ticks, minor }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// The values `m × 10^e` (`m` from `mantissas`, `e` a multiple of `every`)
/// from the largest at or below `lo` to the smallest at or above `hi`.
fn log_ticks(lo: f64, hi: f64, mantissas: &[u32], every: i32) -> Vec<(u32, i32)> {
    let e_lo = lo.log10().floor() as i32 - 1;
    let e_hi = hi.log10().ceil() as i32 + 1;
    let e_lo = e_lo.div_euclid(every) * every;
    let mut all = Vec::new();
    let mut e = e_lo;
    while e <= e_hi + every {
        for &m in mantissas {
            all.push((m, e));
        }
        e += every;
    }
    let value = |&(m, e): &(u32, i32)| f64::from(m) * 10f64.powi(e);
    let first = all
        .iter()
        .rposition(|t| value(t) <= lo * (1.0 + 1e-9))
        .unwrap_or(0);
    let last = all
        .iter()
        .position(|t| value(t) >= hi * (1.0 - 1e-9))
        .unwrap_or(all.len() - 1);
    all[first..=last].to_vec()
}

/// `m × 10^e` printed without float noise or needless zeros.
fn log_label(m: u32, e: i32) -> String {
    if (0..=6).contains(&e) {
        (u64::from(m) * 10u64.pow(e as u32)).to_string()
    } else if (-5..0).contains(&e) {
        format!("0.{}{m}", "0".repeat((-e - 1) as usize))
    } else {
        format!("{m}e{e}")
    }
}

fn linear_scale(lo: f64, hi: f64, max_labels: usize) -> Scale {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi >= lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let mut lo = lo.min(0.0);
    let mut hi = if hi > lo { hi } else { lo + 1.0 };
    let span = hi - lo;
    if lo < 0.0 {
        lo -= 0.05 * span;
    }
    hi += 0.05 * span;
    // The smallest step of 1, 2, 2.5 or 5 × 10ⁿ that keeps the labels
    // within the budget.
    let raw = (hi - lo) / (max_labels - 1) as f64;
    let mut k = raw.log10().floor() as i32;
    let (mantissa, step) = loop {
        let base = 10f64.powi(k);
        if let Some(&m) = [1.0, 2.0, 2.5, 5.0]
            .iter()
            .find(|&&m| m * base >= raw * (1.0 - 1e-9))
        {
            break (m, m * base);
        }
        k += 1;
    };
    let decimals = ((-k).max(0) + i32::from(mantissa == 2.5)) as usize;
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last)
        .map(|i| {
            let value = i as f64 * step;
            Tick {
                value,
                label: trim_number(&format!("{value:.decimals$}")),
            }
        })
        .collect::<Vec<_>>();
    let minor_step = if mantissa == 2.5 {
        step / 5.0
    } else {
        step / 2.0
    };
    let minor = ((lo / minor_step - 1e-9).ceil() as i64..=(hi / minor_step + 1e-9).floor() as i64)
        .map(|i| i as f64 * minor_step)
        .filter(|v| {
            !ticks
                .iter()
                .any(|t| (t.value - v).abs() < minor_step * 1e-6)
        })
        .collect();
    Scale {
        axis: Axis { lo, hi, log: false },
        ticks,
        minor,
    }
}

/// "10.50" → "10.5", "10.0" → "10", "-0" → "0".
fn trim_number(s: &str) -> String {
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

// ----- mapping and clipping -------------------------------------------------

/// The plotting area in pixels (inclusive edges) and what it shows.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Leftmost pixel column of the plotting area.
    pub left: i32,
    /// Topmost pixel row.
    pub top: i32,
    /// Rightmost pixel column.
    pub right: i32,
    /// Bottom pixel row.
    pub bottom: i32,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
}

impl Frame {
    /// A data point in axis space, `None` if the axes cannot show it.
    pub fn t(&self, (x, y): (f64, f64)) -> Option<(f64, f64)> {
        Some((self.x.t(x)?, self.y.t(y)?))
    }

    /// The visible rectangle in axis space: `(x0, x1, y0, y1)`.
    pub fn t_rect(&self) -> (f64, f64, f64, f64) {
        let (x0, x1) = self.x.t_range();
        let (y0, y1) = self.y.t_range();
        (x0, x1, y0, y1)
    }

    /// A point in axis space to pixels (y grows downwards). This is the
    /// one mapping every element of a figure goes through.
    pub fn px_t(&self, (tx, ty): (f64, f64)) -> (f64, f64) {
        let (x0, x1, y0, y1) = self.t_rect();
        let fx = (tx - x0) / (x1 - x0);
        let fy = (ty - y0) / (y1 - y0);
        (
            f64::from(self.left) + fx * f64::from(self.right - self.left),
            f64::from(self.bottom) - fy * f64::from(self.bottom - self.top),
        )
    }

    /// A data point to pixels, `None` if the axes cannot show it.
    pub fn px(&self, p: (f64, f64)) -> Option<(f64, f64)> {
        Some(self.px_t(self.t(p)?))
    }

    /// Whether a pixel position is inside the plotting area.
    pub fn contains_px(&self, (x, y): (f64, f64)) -> bool {
        let eps = 1e-6;
        x >= f64::from(self.left) - eps
            && x <= f64::from(self.right) + eps
            && y >= f64::from(self.top) - eps
            && y <= f64::from(self.bottom) + eps
    }
}

fn inside((x, y): (f64, f64), (x0, x1, y0, y1): (f64, f64, f64, f64)) -> bool {
    let ex = (x1 - x0).abs() * 1e-12;
    let ey = (y1 - y0).abs() * 1e-12;
    x >= x0 - ex && x <= x1 + ex && y >= y0 - ey && y <= y1 + ey
}

/// Cuts a polyline (axis space) to the rectangle `(x0, x1, y0, y1)`: the
/// pieces inside, each at least two points, with new end points where the
/// line crosses the edge (Liang–Barsky per segment).
pub fn clip_polyline(points: &[(f64, f64)], rect: (f64, f64, f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let (x0, x1, y0, y1) = rect;
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let flush = |current: &mut Vec<(f64, f64)>, pieces: &mut Vec<Vec<(f64, f64)>>| {
        if current.len() >= 2 {
            pieces.push(std::mem::take(current));
        } else {
            current.clear();
        }
    };
    if points.len() == 1 && inside(points[0], rect) {
        return vec![vec![points[0], points[0]]];
    }
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let mut visible = true;
        for (p, q) in [
            (-dx, a.0 - x0),
            (dx, x1 - a.0),
            (-dy, a.1 - y0),
            (dy, y1 - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    visible = false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if !visible || t0 > t1 {
            flush(&mut current, &mut pieces);
            continue;
        }
        let start = (a.0 + t0 * dx, a.1 + t0 * dy);
        let end = (a.0 + t1 * dx, a.1 + t1 * dy);
        if current.last() != Some(&start) {
            flush(&mut current, &mut pieces);
            current.push(start);
        }
        current.push(end);
        if t1 < 1.0 {
            flush(&mut current, &mut pieces);
        }
    }
    flush(&mut current, &mut pieces);
    pieces
}

/// Cuts a polygon (axis space) to the rectangle `(x0, x1, y0, y1)`
/// (Sutherland–Hodgman); empty if nothing of it is inside.
pub fn clip_polygon(points: &[(f64, f64)], rect: (f64, f64, f64, f64)) -> Vec<(f64, f64)> {
    let (x0, x1, y0, y1) = rect;
    // Each edge: is a point inside, and where does a segment cross it.
    type Edge = (fn(f64, f64, f64) -> bool, usize, f64);
    let edges: [Edge; 4] = [
        (|v, _, lim| v >= lim, 0, x0),
        (|v, _, lim| v <= lim, 0, x1),
        (|v, _, lim| v >= lim, 1, y0),
        (|v, _, lim| v <= lim, 1, y1),
    ];
    let coord = |p: (f64, f64), axis: usize| if axis == 0 { p.0 } else { p.1 };
    let mut poly = points.to_vec();
    for (keep, axis, lim) in edges {
        if poly.is_empty() {
            break;
        }
        let mut out = Vec::with_capacity(poly.len() + 4);
        for i in 0..poly.len() {
            let cur = poly[i];
            let prev = poly[(i + poly.len() - 1) % poly.len()];
            let (cin, pin) = (
                keep(coord(cur, axis), 0.0, lim),
                keep(coord(prev, axis), 0.0, lim),
            );
            if cin != pin {
                let (pc, cc) = (coord(prev, axis), coord(cur, axis));
                let t = (lim - pc) / (cc - pc);
                let hit = (prev.0 + t * (cur.0 - prev.0), prev.1 + t * (cur.1 - prev.1));
                out.push(if axis == 0 {
                    (lim, hit.1)
                } else {
                    (hit.0, lim)
                });
            }
            if cin {
                out.push(cur);
            }
        }
        poly = out;
    }
    if poly.len() < 3 {
        Vec::new()
    } else {
        poly
    }
}

// ----- what a figure draws ------------------------------------------------

const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// One drawn element, in axis space, already clipped to the plotting area.
#[derive(Clone, Debug)]
pub enum Layer {
    /// A shaded area (a band's spread).
    Fill(RGBColor, Vec<(f64, f64)>),
    /// A piece of a line.
    Line(RGBColor, Vec<(f64, f64)>),
    /// A filled dot of radius 3 px (a measured point).
    Dot(RGBColor, (f64, f64)),
    /// A vertical error bar from the first to the second point, with caps.
    ErrorBar(RGBColor, (f64, f64), (f64, f64)),
    /// A published reference value (black triangle).
    Published((f64, f64)),
}

/// What a legend row shows beside its text.
#[derive(Clone, Copy, Debug)]
enum Key {
    Line(RGBColor),
    Band(RGBColor),
    Published,
}

/// Everything needed to draw one figure on any backend.
struct Plan {
    size: (u32, u32),
    title: String,
    x_label: String,
    y_label: String,
    frame: Frame,
    xs: Scale,
    ys: Scale,
    layers: Vec<Layer>,
    legend: Vec<(Key, String)>,
    /// Top-left corner and size of the legend box, in pixels.
    legend_box: Option<((i32, i32), (i32, i32))>,
}

const LABEL_FONT: f64 = 13.0;
const DESC_FONT: f64 = 14.0;
const TITLE_FONT: f64 = 17.0;
const LEGEND_ROW: i32 = 18;

fn text_width(text: &str, size: f64) -> i32 {
    register();
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map_or(text.chars().count() as i32 * (size * 0.6) as i32, |b| {
            b.0 as i32
        })
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
        .filter(|&(x, y)| x.is_finite() && y.is_finite())
        .filter(|&(x, y)| (!figure.log_x || x > 0.0) && (!figure.log_y || y > 0.0));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        let (lx, ly) = (
            if figure.log_x { 1.0 } else { 0.0 },
            if figure.log_y { 1.0 } else { 0.0 },
        );
        return ((lx, lx * 10.0 + 1.0), (ly, ly * 10.0 + 1.0));
    }
    ((x0, x1), (y0, y1))
}

/// The layers of a figure, clipped to `frame`, in drawing order.
fn layers(figure: &Figure<'_>, bands: &[Band], frame: &Frame) -> Vec<Layer> {
    let rect = frame.t_rect();
    let mut out = Vec::new();
    let band_colour = |i: usize| COLOURS[(figure.series.len() + i) % COLOURS.len()];
    // Spreads first, under every line.
    for (i, b) in bands.iter().enumerate() {
        let pts: Vec<(f64, f64, f64)> = b
            .points
            .iter()
            .filter_map(|&(x, _, lo, hi)| {
                let (tx, tlo) = frame.t((x, lo))?;
                Some((tx, tlo, frame.y.t(hi)?))
            })
            .collect();
        if pts.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.2)).collect();
            poly.extend(pts.iter().rev().map(|p| (p.0, p.1)));
            let clipped = clip_polygon(&poly, rect);
            if !clipped.is_empty() {
                out.push(Layer::Fill(band_colour(i), clipped));
            }
        }
    }
    let line = |colour: RGBColor, pts: &[(f64, f64)], out: &mut Vec<Layer>| {
        let t: Vec<(f64, f64)> = pts.iter().filter_map(|&p| frame.t(p)).collect();
        for piece in clip_polyline(&t, rect) {
            out.push(Layer::Line(colour, piece));
        }
        if t.len() <= 40 {
            for p in t.into_iter().filter(|&p| inside(p, rect)) {
                out.push(Layer::Dot(colour, p));
            }
        }
    };
    for (i, s) in figure.series.iter().enumerate() {
        line(COLOURS[i % COLOURS.len()], &s.points, &mut out);
    }
    for (i, b) in bands.iter().enumerate() {
        let colour = band_colour(i);
        let centre: Vec<(f64, f64)> = b.points.iter().map(|p| (p.0, p.1)).collect();
        line(colour, &centre, &mut out);
        if b.points.len() <= 40 {
            // Error bars with caps: the band alone is hard to read where
            // points are far apart.
            for &(x, _, lo, hi) in &b.points {
                let (Some(a), Some(z)) = (frame.t((x, lo)), frame.t((x, hi))) else {
                    continue;
                };
                if let Some(piece) = clip_polyline(&[a, z], rect).into_iter().next() {
                    out.push(Layer::ErrorBar(colour, piece[0], piece[1]));
                }
            }
        }
    }
    for &p in figure.published {
        if let Some(t) = frame.t(p).filter(|&t| inside(t, rect)) {
            out.push(Layer::Published(t));
        }
    }
    out
}

fn legend_entries(figure: &Figure<'_>, bands: &[Band]) -> Vec<(Key, String)> {
    let mut out: Vec<(Key, String)> = figure
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
        .map(|(i, s)| (Key::Line(COLOURS[i % COLOURS.len()]), s.label.clone()))
        .collect();
    for (i, b) in bands.iter().enumerate() {
        if !b.label.is_empty() {
            let colour = COLOURS[(figure.series.len() + i) % COLOURS.len()];
            out.push((Key::Band(colour), b.label.clone()));
        }
    }
    if !figure.published.is_empty() {
        out.push((Key::Published, "published".to_string()));
    }
    out
}

/// Which cells of a grid over the plotting area hold ink, for placing the
/// legend where it hides nothing.
pub struct Occupancy {
    left: i32,
    top: i32,
    cols: usize,
    rows: usize,
    cells: Vec<bool>,
}

const CELL: i32 = 4;

impl Occupancy {
    /// The cells `layers` (axis space) cover in `frame`.
    pub fn of(frame: &Frame, layers: &[Layer]) -> Occupancy {
        let cols = ((frame.right - frame.left) / CELL + 1) as usize;
        let rows = ((frame.bottom - frame.top) / CELL + 1) as usize;
        let mut o = Occupancy {
            left: frame.left,
            top: frame.top,
            cols,
            rows,
            cells: vec![false; cols * rows],
        };
        for layer in layers {
            match layer {
                Layer::Line(_, pts) => {
                    for w in pts.windows(2) {
                        o.mark_segment(frame.px_t(w[0]), frame.px_t(w[1]), 1.0);
                    }
                }
                Layer::Dot(_, p) => o.mark_disc(frame.px_t(*p), 3.0),
                Layer::Published(p) => o.mark_disc(frame.px_t(*p), 7.0),
                Layer::ErrorBar(_, a, b) => {
                    let (a, b) = (frame.px_t(*a), frame.px_t(*b));
                    o.mark_segment(a, b, 4.0);
                }
                Layer::Fill(_, poly) => {
                    let px: Vec<(f64, f64)> = poly.iter().map(|&p| frame.px_t(p)).collect();
                    o.mark_polygon(&px);
                }
            }
        }
        o
    }

    fn mark(&mut self, (x, y): (f64, f64)) {
        let c = ((x - f64::from(self.left)) / f64::from(CELL)).floor();
        let r = ((y - f64::from(self.top)) / f64::from(CELL)).floor();
        if c >= 0.0 && r >= 0.0 && (c as usize) < self.cols && (r as usize) < self.rows {
            self.cells[r as usize * self.cols + c as usize] = true;
        }
    }

    fn mark_disc(&mut self, (x, y): (f64, f64), radius: f64) {
        let mut dy = -radius;
        while dy <= radius {
            let mut dx = -radius;
            while dx <= radius {
                self.mark((x + dx, y + dy));
                dx += 1.0;
            }
            dy += 1.0;
        }
    }

    fn mark_segment(&mut self, a: (f64, f64), b: (f64, f64), half_width: f64) {
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let steps = (len / 1.0).ceil().max(1.0) as usize;
        for i in 0..=steps {
            let f = i as f64 / steps as f64;
            let p = (a.0 + f * (b.0 - a.0), a.1 + f * (b.1 - a.1));
            self.mark_disc(p, half_width);
        }
    }

    fn mark_polygon(&mut self, poly: &[(f64, f64)]) {
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in poly {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        for r in 0..self.rows {
            let cy = f64::from(self.top) + (r as f64 + 0.5) * f64::from(CELL);
            if cy < y0 || cy > y1 {
                continue;
            }
            for c in 0..self.cols {
                let cx = f64::from(self.left) + (c as f64 + 0.5) * f64::from(CELL);
                if cx >= x0 && cx <= x1 && point_in_polygon((cx, cy), poly) {
                    self.cells[r * self.cols + c] = true;
                }
            }
        }
        // Thin slivers between cell centres still count.
        for w in poly.windows(2) {
            self.mark_segment(w[0], w[1], 0.0);
        }
    }

    /// How many occupied cells a pixel box `(x, y, w, h)` touches.
    pub fn count(&self, (x, y, w, h): (i32, i32, i32, i32)) -> usize {
        let c0 = ((x - self.left).div_euclid(CELL)).max(0) as usize;
        let r0 = ((y - self.top).div_euclid(CELL)).max(0) as usize;
        let c1 = ((x + w - self.left).div_euclid(CELL)).max(-1);
        let r1 = ((y + h - self.top).div_euclid(CELL)).max(-1);
        if c1 < 0 || r1 < 0 {
            return 0;
        }
        let c1 = (c1 as usize).min(self.cols - 1);
        let r1 = (r1 as usize).min(self.rows - 1);
        let mut n = 0;
        for r in r0..=r1 {
            for c in c0..=c1 {
                n += usize::from(self.cells[r * self.cols + c]);
            }
        }
        n
    }
}

fn point_in_polygon((x, y): (f64, f64), poly: &[(f64, f64)]) -> bool {
    let mut inside = false;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + n - 1) % n]);
        if (a.1 > y) != (b.1 > y) && x < (b.0 - a.0) * (y - a.1) / (b.1 - a.1) + a.0 {
            inside = !inside;
        }
    }
    inside
}

/// Where a legend box of `size` (pixels) goes inside the plotting area:
/// the top-left corner of the first place, in order of preference (the
/// four corners, then the middles of the edges), whose box covers no
/// occupied cell; `None` when every place covers some, and the legend
/// must go outside.
pub fn place_legend(frame: &Frame, size: (i32, i32), occupied: &Occupancy) -> Option<(i32, i32)> {
    let inset = 8;
    let (w, h) = size;
    let (l, r) = (frame.left + inset, frame.right - inset - w);
    let (t, b) = (frame.top + inset, frame.bottom - inset - h);
    if r < l || b < t {
        return None;
    }
    let (cx, cy) = ((l + r) / 2, (t + b) / 2);
    let places = [
        (r, t),
        (l, t),
        (r, b),
        (l, b),
        (cx, t),
        (cx, b),
        (r, cy),
        (l, cy),
    ];
    // A margin round the box so lines do not graze its border.
    places
        .into_iter()
        .find(|&(x, y)| occupied.count((x - 3, y - 3, w + 6, h + 6)) == 0)
}

fn legend_size(entries: &[(Key, String)]) -> (i32, i32) {
    let text = entries
        .iter()
        .map(|(_, s)| text_width(s, LABEL_FONT))
        .max()
        .unwrap_or(0);
    // Slack for the SVG, whose text a browser sets in its own sans-serif.
    let text = text + text / 12 + 4;
    (8 + 22 + 8 + text + 8, 8 + LEGEND_ROW * entries.len() as i32)
}

/// Lays out a figure on a canvas of `width` × `height` pixels (taller if
/// the legend has to go below the plot).
fn plan(figure: &Figure<'_>, bands: &[Band], (width, height): (u32, u32)) -> Plan {
    let ((x0, x1), (y0, y1)) = bounds(figure, bands);
    let (w, h) = (width as i32, height as i32);
    let top = 44;
    let bottom = h - 58;
    let ys = scale(y0, y1, figure.log_y, ((bottom - top) / 26) as usize);
    let widest = ys
        .ticks
        .iter()
        .map(|t| text_width(&t.label, LABEL_FONT))
        .max()
        .unwrap_or(0);
    let left = (12 + 20 + 10 + widest + 8).max(64);
    let right = w - 32;
    let xs = scale(x0, x1, figure.log_x, ((right - left) / 64) as usize);
    let frame = Frame {
        left,
        top,
        right,
        bottom,
        x: xs.axis,
        y: ys.axis,
    };
    let layers = layers(figure, bands, &frame);
    let legend = legend_entries(figure, bands);
    let mut size = (width, height);
    let legend_box = if legend.is_empty() {
        None
    } else {
        let lsize = legend_size(&legend);
        let occupied = Occupancy::of(&frame, &layers);
        Some(match place_legend(&frame, lsize, &occupied) {
            Some(at) => (at, lsize),
            None => {
                // Below the x-axis description, the canvas grown to fit.
                size.1 = (bottom + 54 + lsize.1 + 10) as u32;
                ((left, bottom + 54), lsize)
            }
        })
    };
    Plan {
        size,
        title: figure.title.to_string(),
        x_label: figure.x_label.to_string(),
        y_label: figure.y_label.to_string(),
        frame,
        xs,
        ys,
        layers,
        legend,
        legend_box,
    }
}

// ----- drawing ------------------------------------------------------------

/// How text is set: whole strings (SVG: the browser sets them) or glyph by
/// glyph at the font's true positions (PNG; see [`glyph_offsets`]).
#[derive(Clone, Copy, PartialEq)]
enum TextMode {
    Whole,
    Glyphs,
}

/// Metrics read from the bundled font's tables: plotters does not expose
/// its font, and its bitmap text needs each glyph's left side bearing.
struct FontMetrics {
    /// Ascender − descender in font units: ab_glyph's pixel-size unit.
    height: f64,
    cmap: Vec<(u16, u16, i16, usize)>,
    data: &'static [u8],
    hmtx: usize,
    n_hmetrics: usize,
}

fn be_u16(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(o)?, *d.get(o + 1)?]))
}

fn be_u32(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_be_bytes(d.get(o..o + 4)?.try_into().ok()?))
}

impl FontMetrics {
    fn parse(d: &'static [u8]) -> Option<FontMetrics> {
        let n = usize::from(be_u16(d, 4)?);
        let table = |tag: &[u8; 4]| {
            (0..n).find_map(|i| {
                let r = 12 + 16 * i;
                (d.get(r..r + 4)? == tag).then(|| be_u32(d, r + 8))?
            })
        };
        let hhea = table(b"hhea")? as usize;
        let hmtx = table(b"hmtx")? as usize;
        let cmap = table(b"cmap")? as usize;
        let ascender = be_u16(d, hhea + 4)? as i16;
        let descender = be_u16(d, hhea + 6)? as i16;
        let n_hmetrics = usize::from(be_u16(d, hhea + 34)?);
        // A Unicode BMP subtable in format 4.
        let subtables = usize::from(be_u16(d, cmap + 2)?);
        let sub = (0..subtables).find_map(|i| {
            let r = cmap + 4 + 8 * i;
            let (platform, encoding) = (be_u16(d, r)?, be_u16(d, r + 2)?);
            let off = cmap + be_u32(d, r + 4)? as usize;
            let unicode = (platform == 3 && encoding == 1) || platform == 0;
            (unicode && be_u16(d, off)? == 4).then_some(off)
        })?;
        let segs = usize::from(be_u16(d, sub + 6)? / 2);
        let ends = sub + 14;
        let starts = ends + 2 * segs + 2;
        let deltas = starts + 2 * segs;
        let ros = deltas + 2 * segs;
        let mut segments = Vec::with_capacity(segs);
        for i in 0..segs {
            segments.push((
                be_u16(d, starts + 2 * i)?,
                be_u16(d, ends + 2 * i)?,
                be_u16(d, deltas + 2 * i)? as i16,
                ros + 2 * i,
            ));
        }
        Some(FontMetrics {
            height: f64::from(ascender) - f64::from(descender),
            cmap: segments,
            data: d,
            hmtx,
            n_hmetrics,
        })
    }

    fn glyph(&self, c: char) -> u16 {
        let c = u32::from(c);
        if c > 0xFFFF {
            return 0;
        }
        let c = c as u16;
        for &(start, end, delta, ro_at) in &self.cmap {
            if c > end {
                continue;
            }
            if c < start {
                return 0;
            }
            let ro = be_u16(self.data, ro_at).unwrap_or(0);
            if ro == 0 {
                return (c as i16).wrapping_add(delta) as u16;
            }
            let at = ro_at + usize::from(ro) + 2 * usize::from(c - start);
            return match be_u16(self.data, at) {
                Some(0) | None => 0,
                Some(g) => (g as i16).wrapping_add(delta) as u16,
            };
        }
        0
    }

    /// Left side bearing of `c`'s glyph, in font units.
    fn lsb(&self, c: char) -> i16 {
        let g = usize::from(self.glyph(c));
        let at = if g < self.n_hmetrics {
            self.hmtx + 4 * g + 2
        } else {
            self.hmtx + 4 * self.n_hmetrics + 2 * (g - self.n_hmetrics)
        };
        be_u16(self.data, at).map_or(0, |v| v as i16)
    }

    /// Advance width of `c`'s glyph, in font units.
    #[cfg(test)]
    fn advance(&self, c: char) -> u16 {
        let g = usize::from(self.glyph(c)).min(self.n_hmetrics.saturating_sub(1));
        be_u16(self.data, self.hmtx + 4 * g).unwrap_or(0)
    }
}

fn metrics() -> Option<&'static FontMetrics> {
    static METRICS: OnceLock<Option<FontMetrics>> = OnceLock::new();
    METRICS.get_or_init(|| FontMetrics::parse(FONT)).as_ref()
}

/// Where each glyph of `text` at font size `size` must be drawn, as the
/// pixel offset along the baseline of the glyph's own left edge.
///
/// Plotters' bitmap text (ab_glyph) draws each glyph's ink box at the pen
/// position, dropping the glyph's left side bearing: a glyph with a wide
/// bearing ("b", "h", "n") is pulled left into the space before it, which
/// squeezes "RTT behind" into "RTTbehind". Drawn one at a time at the pen
/// position (plotters' own layout of the prefix) plus the bearing, glyphs
/// sit where the font puts them.
fn glyph_offsets(text: &str, size: f64) -> Vec<(usize, char, i32)> {
    let font = ("sans-serif", size).into_font();
    let scale = metrics().map_or(0.0, |m| size / m.height);
    text.char_indices()
        .map(|(i, c)| {
            let pen = if i == 0 {
                0
            } else {
                font.box_size(&text[..i]).map_or(0, |b| b.0 as i32)
            };
            let lsb = metrics().map_or(0.0, |m| f64::from(m.lsb(c)) * scale);
            (i, c, pen + lsb.floor() as i32)
        })
        .collect()
}

type DrawResult = Result<(), String>;

fn fail<E: std::fmt::Debug>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("drawing `{what}`: {e:?}")
}

/// Draws `text` anchored at `pos` (`h`, `v` say which point of the text
/// `pos` is), rotated a quarter turn anticlockwise if `vertical`.
#[allow(clippy::too_many_arguments)]
fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    mode: TextMode,
    text: &str,
    pos: (i32, i32),
    size: f64,
    (h, v): (HPos, VPos),
    vertical: bool,
    what: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut style = TextStyle::from(("sans-serif", size).into_font()).color(&BLACK);
    if vertical {
        style = style.transform(FontTransform::Rotate270);
    }
    if mode == TextMode::Whole {
        // Plotters writes an SVG font-size of size / 1.24, a smaller em
        // than the PNG's (size / 1.164 for DejaVu's ascender − descender
        // of 2384 units per 2048-unit em); match the PNG, so a browser
        // sets the text as wide as the layout assumed.
        let style = TextStyle::from(("sans-serif", size * 1.065).into_font())
            .color(&BLACK)
            .transform(if vertical {
                FontTransform::Rotate270
            } else {
                FontTransform::None
            });
        return area
            .draw(&Text::new(text, pos, style.pos(Pos::new(h, v))))
            .map_err(fail(what));
    }
    let width = text_width(text, size);
    let shift = match h {
        HPos::Left => 0,
        HPos::Center => -width / 2,
        HPos::Right => -width,
    };
    let style = style.pos(Pos::new(HPos::Left, v));
    for (i, c, off) in glyph_offsets(text, size) {
        if c == ' ' {
            continue;
        }
        let along = shift + off;
        let at = if vertical {
            (pos.0, pos.1 - along)
        } else {
            (pos.0 + along, pos.1)
        };
        let glyph = &text[i..i + c.len_utf8()];
        area.draw(&Text::new(glyph, at, style.clone()))
            .map_err(fail(what))?;
    }
    Ok(())
}

fn to_px(frame: &Frame, p: (f64, f64), origin: (i32, i32)) -> (i32, i32) {
    let (x, y) = frame.px_t(p);
    (x.round() as i32 - origin.0, y.round() as i32 - origin.1)
}

/// Background, title and grid: what lies under the data.
fn draw_under<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    mode: TextMode,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    area.fill(&WHITE).map_err(fail(what))?;
    let f = &plan.frame;
    draw_text(
        area,
        mode,
        &plan.title,
        ((f.left + f.right) / 2, 12),
        TITLE_FONT,
        (HPos::Center, VPos::Top),
        false,
        what,
    )?;
    let light = RGBColor(236, 236, 236);
    let bold = RGBColor(205, 205, 205);
    let grid = |x: Option<f64>, y: Option<f64>, colour: RGBColor| -> DrawResult {
        let line = match (x, y) {
            (Some(x), _) => {
                let Some(t) = f.x.t(x) else { return Ok(()) };
                let (px, _) = f.px_t((t, f.t_rect().2));
                let px = px.round() as i32;
                [(px, f.top), (px, f.bottom)]
            }
            (_, Some(y)) => {
                let Some(t) = f.y.t(y) else { return Ok(()) };
                let (_, py) = f.px_t((f.t_rect().0, t));
                let py = py.round() as i32;
                [(f.left, py), (f.right, py)]
            }
            _ => return Ok(()),
        };
        area.draw(&PathElement::new(line.to_vec(), colour))
            .map_err(fail(what))
    };
    for &v in &plan.xs.minor {
        grid(Some(v), None, light)?;
    }
    for &v in &plan.ys.minor {
        grid(None, Some(v), light)?;
    }
    for t in &plan.xs.ticks {
        grid(Some(t.value), None, bold)?;
    }
    for t in &plan.ys.ticks {
        grid(None, Some(t.value), bold)?;
    }
    Ok(())
}

/// The data, in pixels relative to `origin`. `segments`: draw each line
/// segment on its own, so that wide strokes get no miter spikes (plotters'
/// bitmap joins of a reversing line reach far past the data).
fn draw_layers<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    origin: (i32, i32),
    segments: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    let f = &plan.frame;
    let px = |p: (f64, f64)| to_px(f, p, origin);
    for layer in &plan.layers {
        match layer {
            Layer::Fill(colour, poly) => {
                let pts: Vec<(i32, i32)> = poly.iter().map(|&p| px(p)).collect();
                area.draw(&Polygon::new(pts, colour.mix(0.18).filled()))
                    .map_err(fail(what))?;
            }
            Layer::Line(colour, pts) => {
                let mut pts: Vec<(i32, i32)> = pts.iter().map(|&p| px(p)).collect();
                pts.dedup();
                if pts.len() == 1 {
                    pts.push(pts[0]);
                }
                let style = colour.stroke_width(2);
                if segments {
                    for w in pts.windows(2) {
                        area.draw(&PathElement::new(vec![w[0], w[1]], style))
                            .map_err(fail(what))?;
                    }
                } else {
                    area.draw(&PathElement::new(pts, style))
                        .map_err(fail(what))?;
                }
            }
            Layer::Dot(colour, p) => {
                area.draw(&Circle::new(px(*p), 3, colour.filled()))
                    .map_err(fail(what))?;
            }
            Layer::ErrorBar(colour, a, b) => {
                let (a, b) = (px(*a), px(*b));
                let style = colour.stroke_width(1);
                area.draw(&PathElement::new(vec![a, b], style))
                    .map_err(fail(what))?;
                for (x, y) in [a, b] {
                    area.draw(&PathElement::new(vec![(x - 4, y), (x + 4, y)], style))
                        .map_err(fail(what))?;
                }
            }
            Layer::Published(p) => {
                area.draw(&TriangleMarker::new(px(*p), 7, BLACK.stroke_width(2)))
                    .map_err(fail(what))?;
            }
        }
    }
    Ok(())
}

/// Axes, tick labels, axis descriptions and the legend: what lies over
/// the data.
fn draw_over<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    plan: &Plan,
    mode: TextMode,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let what = plan.title.as_str();
    let f = &plan.frame;
    let axis = BLACK.stroke_width(1);
    area.draw(&PathElement::new(
        vec![(f.left, f.top), (f.left, f.bottom), (f.right, f.bottom)],
        axis,
    ))
    .map_err(fail(what))?;
    let (tx0, _, ty0, _) = f.t_rect();
    for t in &plan.xs.ticks {
        let Some(v) = f.x.t(t.value) else { continue };
        let x = f.px_t((v, ty0)).0.round() as i32;
        area.draw(&PathElement::new(
            vec![(x, f.bottom), (x, f.bottom + 5)],
            axis,
        ))
        .map_err(fail(what))?;
        draw_text(
            area,
            mode,
            &t.label,
            (x, f.bottom + 8),
            LABEL_FONT,
            (HPos::Center, VPos::Top),
            false,
            what,
        )?;
    }
    for t in &plan.ys.ticks {
        let Some(v) = f.y.t(t.value) else { continue };
        let y = f.px_t((tx0, v)).1.round() as i32;
        area.draw(&PathElement::new(vec![(f.left - 5, y), (f.left, y)], axis))
            .map_err(fail(what))?;
        draw_text(
            area,
            mode,
            &t.label,
            (f.left - 8, y),
            LABEL_FONT,
            (HPos::Right, VPos::Center),
            false,
            what,
        )?;
    }
    draw_text(
        area,
        mode,
        &plan.x_label,
        ((f.left + f.right) / 2, f.bottom + 30),
        DESC_FONT,
        (HPos::Center, VPos::Top),
        false,
        what,
    )?;
    draw_text(
        area,
        mode,
        &plan.y_label,
        (14, (f.top + f.bottom) / 2),
        DESC_FONT,
        (HPos::Center, VPos::Top),
        true,
        what,
    )?;
    if let Some(((x, y), (w, h))) = plan.legend_box {
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            WHITE.mix(0.92).filled(),
        ))
        .map_err(fail(what))?;
        area.draw(&Rectangle::new(
            [(x, y), (x + w, y + h)],
            RGBColor(120, 120, 120),
        ))
        .map_err(fail(what))?;
        for (i, (key, label)) in plan.legend.iter().enumerate() {
            let cy = y + 4 + LEGEND_ROW * i as i32 + LEGEND_ROW / 2;
            let (k0, k1) = (x + 8, x + 30);
            match *key {
                Key::Line(c) => area
                    .draw(&PathElement::new(
                        vec![(k0, cy), (k1, cy)],
                        c.stroke_width(2),
                    ))
                    .map_err(fail(what))?,
                Key::Band(c) => {
                    area.draw(&Rectangle::new(
                        [(k0, cy - 5), (k1, cy + 5)],
                        c.mix(0.18).filled(),
                    ))
                    .map_err(fail(what))?;
                    area.draw(&PathElement::new(
                        vec![(k0, cy), (k1, cy)],
                        c.stroke_width(2),
                    ))
                    .map_err(fail(what))?;
                }
                Key::Published => area
                    .draw(&TriangleMarker::new(
                        ((k0 + k1) / 2, cy),
                        6,
                        BLACK.stroke_width(2),
                    ))
                    .map_err(fail(what))?,
            }
            draw_text(
                area,
                mode,
                label,
                (x + 38, cy),
                LABEL_FONT,
                (HPos::Left, VPos::Center),
                false,
                what,
            )?;
        }
    }
    Ok(())
}

/// The SVG document's body: everything between its `<svg>` and `</svg>`.
fn svg_body(doc: &str) -> &str {
    let start = doc.find('>').map_or(0, |i| i + 1);
    let end = doc.rfind("</svg>").unwrap_or(doc.len());
    doc.get(start..end).unwrap_or("")
}

/// The figure as an SVG document: the data in a group clipped to the
/// plotting area.
fn render_svg(plan: &Plan) -> Result<String, String> {
    let what = plan.title.as_str();
    let pass = |f: &dyn Fn(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> DrawResult| {
        let mut s = String::new();
        {
            let area = SVGBackend::with_string(&mut s, plan.size).into_drawing_area();
            f(&area)?;
            area.present().map_err(fail(what))?;
        }
        Ok::<String, String>(s)
    };
    let under = pass(&|a| draw_under(a, plan, TextMode::Whole))?;
    let data = pass(&|a| draw_layers(a, plan, (0, 0), false))?;
    let over = pass(&|a| draw_over(a, plan, TextMode::Whole))?;
    let f = &plan.frame;
    let head_end = under.find('>').map_or(0, |i| i + 1);
    Ok(format!(
        "{}{}<clipPath id=\"plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\n<g clip-path=\"url(#plot-area)\">{}</g>\n{}</svg>\n",
        &under[..head_end],
        svg_body(&under),
        f.left,
        f.top,
        f.right - f.left + 1,
        f.bottom - f.top + 1,
        svg_body(&data),
        svg_body(&over),
    ))
}

/// The figure as an RGB bitmap: the data drawn into a bitmap of the
/// plotting area's size (so nothing can leave it), copied over the grid.
fn render_png(plan: &Plan) -> Result<Vec<u8>, String> {
    let what = plan.title.as_str();
    let (w, h) = plan.size;
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    {
        let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_under(&area, plan, TextMode::Glyphs)?;
        area.present().map_err(fail(what))?;
    }
    let f = &plan.frame;
    // The plotting area, edges inclusive, clamped to the canvas.
    let (x0, y0) = (f.left.max(0) as usize, f.top.max(0) as usize);
    let x1 = (f.right + 1).clamp(0, w as i32) as usize;
    let y1 = (f.bottom + 1).clamp(0, h as i32) as usize;
    if x1 > x0 && y1 > y0 {
        let (pw, ph) = (x1 - x0, y1 - y0);
        let mut sub = vec![0u8; pw * ph * 3];
        for r in 0..ph {
            let from = ((y0 + r) * w as usize + x0) * 3;
            sub[r * pw * 3..(r + 1) * pw * 3].copy_from_slice(&buf[from..from + pw * 3]);
        }
        {
            let area =
                BitMapBackend::with_buffer(&mut sub, (pw as u32, ph as u32)).into_drawing_area();
            draw_layers(&area, plan, (x0 as i32, y0 as i32), true)?;
            area.present().map_err(fail(what))?;
        }
        for r in 0..ph {
            let to = ((y0 + r) * w as usize + x0) * 3;
            buf[to..to + pw * 3].copy_from_slice(&sub[r * pw * 3..(r + 1) * pw * 3]);
        }
    }
    {
        let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw_over(&area, plan, TextMode::Glyphs)?;
        area.present().map_err(fail(what))?;
    }
    Ok(buf)
}

fn write_figure(plan: &Plan, stem: &Path) -> DrawResult {
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    let what = plan.title.as_str();
    fs::write(&svg, render_svg(plan)?)
        .map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    let pixels = render_png(plan)?;
    let mut backend = BitMapBackend::new(&png, plan.size);
    backend
        .blit_bitmap((0, 0), plan.size, &pixels)
        .map_err(fail(what))?;
    backend.present().map_err(fail(what))?;
    Ok(())
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
    write_figure(&plan(figure, bands, (820, 440)), figure.stem)
}

/// Draws one chart of a run into `<dir>/<stem>.svg` and `.png`.
fn chart(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(x: Axis, y: Axis) -> Frame {
        Frame {
            left: 80,
            top: 40,
            right: 780,
            bottom: 380,
            x,
            y,
        }
    }

    fn check_scale(s: &Scale, data: &[f64], max_labels: usize) {
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        let mut unique = labels.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), labels.len(), "duplicate labels {labels:?}");
        assert!(
            s.ticks.len() >= 2 && s.ticks.len() <= max_labels,
            "{labels:?}"
        );
        for t in &s.ticks {
            assert!(
                !t.label.ends_with(".0") && !t.label.contains(".0e"),
                "{labels:?}"
            );
            let slack = 1e-9 * t.value.abs().max(1e-300);
            assert!(
                t.value >= s.axis.lo - slack && t.value <= s.axis.hi + slack,
                "label {} outside {:?}",
                t.label,
                s.axis
            );
            assert_eq!(
                t.label
                    .parse::<f64>()
                    .ok()
                    .map(|v| close(v, t.value) || v == t.value),
                Some(true),
                "{}",
                t.label
            );
        }
        let (first, last) = (s.ticks[0].value, s.ticks[s.ticks.len() - 1].value);
        for &v in data {
            assert!(v >= s.axis.lo && v <= s.axis.hi, "{v} outside {:?}", s.axis);
            // Every value lies between two labels: none below the lowest
            // or above the highest (C3's 43 ms under a lowest label of 100).
            if s.axis.log {
                assert!(v >= first && v <= last, "{v} outside labels {labels:?}");
            } else {
                // Linear: the grid goes on, so within a step of a label.
                let step = s.ticks[1].value - s.ticks[0].value;
                assert!(
                    v >= first - step && v <= last + step,
                    "{v} far from {labels:?}"
                );
            }
            if s.axis.log {
                let d = 10f64.powf(v.log10().floor());
                assert!(
                    s.ticks
                        .iter()
                        .any(|t| t.value >= d * (1.0 - 1e-9) && t.value <= d * 10.0 * (1.0 + 1e-9)),
                    "no label in the decade of {v}: {labels:?}"
                );
            }
        }
    }

    #[test]
    fn log_ticks_label_every_decade_of_the_data_once_inside_the_range() {
        let cases: &[&[f64]] = &[
            &[43.0, 50.0, 60.0, 1300.0],      // C3: 43 ms published, ~50 ms bbr
            &[0.9, 1.05, 10.0, 100.0, 380.0], // C7's RTT in seconds
            &[10.0, 300.0, 4000.0],           // C7's buffer sizes
            &[0.001, 0.01, 5.0, 50.0],        // C1's loss rates
            &[45.0, 52.0, 60.0],              // less than a decade
            &[1e-6, 1e3],
            &[7.0, 7.0],
        ];
        for data in cases {
            let lo = data.iter().copied().fold(f64::MAX, f64::min);
            let hi = data.iter().copied().fold(f64::MIN, f64::max);
            for max_labels in [8, 11, 13] {
                let s = scale(lo, hi, true, max_labels);
                check_scale(&s, data, max_labels);
            }
        }
        // C3 concretely: a label below the 43 ms marker, none repeated.
        let s = scale(43.0, 1300.0, true, 12);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["20", "50", "100", "200", "500", "1000", "2000"]);
        // C7's axes: no "10.0", no "100.0".
        let s = scale(0.9, 380.0, true, 13);
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            ["0.5", "1", "2", "5", "10", "20", "50", "100", "200", "500"]
        );
    }

    #[test]
    fn linear_ticks_are_unique_round_and_cover_the_data() {
        for (lo, hi) in [
            (0.0, 10.0),
            (0.0, 120.0),
            (0.0, 3.0),
            (-2.0, 7.5),
            (0.2, 0.35),
            (0.0, 1e-7),
            (5.0, 5.0),
        ] {
            for max_labels in [6, 11, 14] {
                let s = scale(lo, hi, false, max_labels);
                check_scale(&s, &[lo, hi], max_labels);
            }
        }
        let s = scale(0.0, 10.0, false, 12);
        assert!(s.ticks.iter().any(|t| t.label == "10"));
        assert!(s.ticks.iter().all(|t| !t.label.contains('.')));
    }

    #[test]
    fn clipped_lines_and_bands_stay_inside_the_plotting_area() {
        let f = frame(
            Axis {
                lo: 0.0,
                hi: 10.0,
                log: false,
            },
            Axis {
                lo: 1.0,
                hi: 100.0,
                log: true,
            },
        );
        let rect = f.t_rect();
        // A line that leaves and re-enters through every edge.
        let line: Vec<(f64, f64)> = [
            (-5.0, 50.0),
            (2.0, 0.01),
            (4.0, 50.0),
            (6.0, 1e4),
            (8.0, 5.0),
            (15.0, 5.0),
        ]
        .iter()
        .filter_map(|&p| f.t(p))
        .collect();
        let pieces = clip_polyline(&line, rect);
        assert!(pieces.len() >= 3, "{pieces:?}");
        for piece in &pieces {
            assert!(piece.len() >= 2);
            for &p in piece {
                assert!(f.contains_px(f.px_t(p)), "{p:?} -> {:?}", f.px_t(p));
            }
        }
        // The visible part survives: (8, 5) to the right edge at y = 5.
        let last = pieces.last().unwrap();
        assert_eq!(last.last().unwrap(), &(10.0, 5f64.log10()));
        // A band much taller than the area.
        let band = [(-1.0, 1e-3), (11.0, 1e-3), (11.0, 1e5), (-1.0, 1e5)];
        let t: Vec<(f64, f64)> = band.iter().filter_map(|&p| f.t(p)).collect();
        let clipped = clip_polygon(&t, rect);
        assert!(clipped.len() >= 4);
        for &p in &clipped {
            assert!(f.contains_px(f.px_t(p)), "{p:?}");
        }
        // Entirely outside: nothing.
        assert!(clip_polyline(&[(20.0, 1.0), (30.0, 1.5)], rect).is_empty());
        assert!(clip_polygon(&[(20.0, 1.0), (30.0, 1.0), (30.0, 1.5)], rect).is_empty());
    }

    #[test]
    fn every_layer_of_a_figure_maps_inside_the_plotting_area() {
        let series = [Series {
            label: "a".into(),
            points: vec![(0.0, 0.0), (1.0, 10.0), (2.0, 0.0), (3.0, 1e9), (4.0, -5.0)],
        }];
        let bands = [Band {
            label: "b".into(),
            points: vec![(0.0, 1.0, 0.0, 2.0), (4.0, 3.0, -1.0, 1e10)],
        }];
        let fig = Figure {
            stem: Path::new("unused"),
            title: "t",
            x_label: "x",
            y_label: "y",
            log_x: false,
            log_y: false,
            series: &series,
            published: &[(2.0, 5.0)],
        };
        let mut p = plan(&fig, &bands, (820, 440));
        // Narrow the axes so that the data overflows them.
        p.frame.y = Axis {
            lo: 0.0,
            hi: 5.0,
            log: false,
        };
        p.frame.x = Axis {
            lo: 0.5,
            hi: 3.5,
            log: false,
        };
        let layers = layers(&fig, &bands, &p.frame);
        assert!(!layers.is_empty());
        for layer in &layers {
            let pts: Vec<(f64, f64)> = match layer {
                Layer::Fill(_, v) | Layer::Line(_, v) => v.clone(),
                Layer::Dot(_, a) | Layer::Published(a) => vec![*a],
                Layer::ErrorBar(_, a, b) => vec![*a, *b],
            };
            for q in pts {
                assert!(p.frame.contains_px(p.frame.px_t(q)), "{layer:?}");
            }
        }
    }

    #[test]
    fn png_strokes_do_not_cross_the_axes() {
        // A spiky line touching zero: 2 px strokes with miter joins ran
        // below the x axis in the PNG.
        let points: Vec<(f64, f64)> = (0..200)
            .map(|i| (i as f64 * 0.1, if i % 2 == 0 { 0.0 } else { 10.0 }))
            .collect();
        let series = [Series {
            label: String::new(),
            points,
        }];
        let fig = Figure {
            stem: Path::new("unused"),
            title: "spikes",
            x_label: "x",
            y_label: "y",
            log_x: false,
            log_y: false,
            series: &series,
            published: &[],
        };
        register();
        let p = plan(&fig, &[], (820, 440));
        let buf = render_png(&p).unwrap();
        let w = p.size.0 as usize;
        let c = COLOURS[0];
        let blueish = |x: usize, y: usize| {
            let i = (y * w + x) * 3;
            let (r, g, b) = (buf[i], buf[i + 1], buf[i + 2]);
            b > 120 && r < 150 && b > r + 40 && g < 200 && (r, g, b) != (c.0, c.1, c.1)
        };
        let f = p.frame;
        let mut inside = 0;
        for y in 0..p.size.1 as usize {
            for x in 0..w {
                let within = x as i32 >= f.left
                    && x as i32 <= f.right
                    && y as i32 >= f.top
                    && y as i32 <= f.bottom;
                if blueish(x, y) {
                    assert!(within, "series pixel at ({x}, {y}) outside {f:?}");
                    inside += 1;
                }
            }
        }
        assert!(inside > 1000, "the series was drawn ({inside} pixels)");
    }

    #[test]
    fn legend_goes_to_a_free_corner_or_below() {
        let f = frame(
            Axis {
                lo: 0.0,
                hi: 100.0,
                log: false,
            },
            Axis {
                lo: 0.0,
                hi: 100.0,
                log: false,
            },
        );
        // Horizontal lines everywhere except the top-left quarter.
        let mut data = Vec::new();
        for k in 0..=50 {
            let y = f64::from(k) * 2.0;
            let x0 = if y > 50.0 { 50.0 } else { 0.0 };
            data.push(vec![(x0, y), (100.0, y)]);
        }
        let layers: Vec<Layer> = data
            .iter()
            .flat_map(|l| clip_polyline(l, f.t_rect()))
            .map(|p| Layer::Line(COLOURS[0], p))
            .collect();
        let occupied = Occupancy::of(&f, &layers);
        let size = (200, 80);
        let (x, y) = place_legend(&f, size, &occupied).expect("a free corner");
        // No data point under the box.
        for l in &data {
            for i in 0..=1000 {
                let fr = f64::from(i) / 1000.0;
                let p = (l[0].0 + fr * (l[1].0 - l[0].0), l[0].1);
                let (px, py) = f.px(p).unwrap();
                let hit = px >= f64::from(x)
                    && px <= f64::from(x + size.0)
                    && py >= f64::from(y)
                    && py <= f64::from(y + size.1);
                assert!(!hit, "legend at ({x}, {y}) covers {p:?}");
            }
        }
        assert!(x < (f.left + f.right) / 2 && y < (f.top + f.bottom) / 2);
        // Data everywhere: the legend goes outside.
        let full: Vec<Layer> = (0..=100)
            .map(|k| Layer::Line(COLOURS[0], vec![(0.0, f64::from(k)), (100.0, f64::from(k))]))
            .collect();
        assert_eq!(place_legend(&f, size, &Occupancy::of(&f, &full)), None);
    }

    #[test]
    fn a_figure_whose_corners_are_full_puts_the_legend_below_the_plot() {
        let series = [Series {
            label: "everywhere".into(),
            points: (0..=400)
                .map(|i| (f64::from(i) * 0.25, if i % 2 == 0 { 0.0 } else { 10.0 }))
                .collect(),
        }];
        let fig = Figure {
            stem: Path::new("unused"),
            title: "t",
            x_label: "x",
            y_label: "y",
            log_x: false,
            log_y: false,
            series: &series,
            published: &[],
        };
        let p = plan(&fig, &[], (820, 440));
        let ((_, y), (_, h)) = p.legend_box.unwrap();
        assert!(
            y > p.frame.bottom + 40,
            "legend at {y}, axis at {}",
            p.frame.bottom
        );
        assert!(y + h < p.size.1 as i32 && p.size.1 > 440);
    }

    #[test]
    fn font_metrics_agree_with_plotters_layout() {
        register();
        let m = metrics().expect("the bundled font parses");
        assert_eq!(m.advance(' '), 651);
        assert!(m.lsb('b') > 100 && m.lsb('T') <= 0);
        for text in ["RTT behind a full buffer", "bbr bw estimate", "0.001"] {
            let ours: f64 =
                text.chars().map(|c| f64::from(m.advance(c))).sum::<f64>() * 13.0 / m.height;
            let theirs = ("sans-serif", 13.0).into_font().box_size(text).unwrap().0;
            // Kerning aside, within a pixel or two.
            assert!(
                (ours - f64::from(theirs)).abs() < 3.0,
                "{text}: {ours} vs {theirs}"
            );
        }
    }

    /// The widest run of blank columns inside the ink of `text` drawn at
    /// 13 px into a bitmap.
    fn widest_gap(text: &str, mode: TextMode) -> usize {
        register();
        let (w, h) = (200u32, 30u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let area = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            draw_text(
                &area,
                mode,
                text,
                (10, 5),
                13.0,
                (HPos::Left, VPos::Top),
                false,
                "t",
            )
            .unwrap();
            area.present().unwrap();
        }
        let ink: Vec<bool> = (0..w as usize)
            .map(|x| (0..h as usize).any(|y| buf[(y * w as usize + x) * 3] < 160))
            .collect();
        let first = ink.iter().position(|&i| i).unwrap();
        let last = ink.iter().rposition(|&i| i).unwrap();
        let mut best = 0;
        let mut run = 0;
        for &i in &ink[first..=last] {
            run = if i { 0 } else { run + 1 };
            best = best.max(run);
        }
        best
    }

    #[test]
    fn png_text_keeps_its_spaces() {
        // "T b": the space is 3.5 px plus b's 1 px bearing; plotters'
        // bitmap text left 2 px ("RTTbehind").
        assert!(widest_gap("T b", TextMode::Glyphs) >= 3);
        assert!(widest_gap("RTT behind", TextMode::Glyphs) >= 3);
    }

    #[test]
    fn tables_keep_quoted_commas() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        fs::write(
            &p,
            "time_s,flow,name,x\n0.5,0,\"bbr, no lt_bw\",7\n\n1.5,0,cubic,8\n",
        )
        .unwrap();
        let t = Table::read(&p).unwrap();
        assert_eq!(
            t.points(&p, "time_s", "x", None).unwrap(),
            [(0.5, 7.0), (1.5, 8.0)]
        );
        let names = t.labels(&p, "name", Some(("flow", "0"))).unwrap();
        assert_eq!(names[0].1, "bbr, no lt_bw");
        let empty = dir.path().join("e.csv");
        fs::write(&empty, "").unwrap();
        let err = Table::read(&empty).err().expect("an empty file is refused");
        assert!(err.contains("empty"), "{err}");
    }

    #[test]
    fn svg_draws_the_data_in_a_clipped_group() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("f");
        let series = [Series {
            label: "bbr".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }];
        figure(&Figure {
            stem: &stem,
            title: "t",
            x_label: "x",
            y_label: "y",
            log_x: false,
            log_y: true,
            series: &series,
            published: &[(0.5, 1.5)],
        })
        .unwrap();
        let svg = fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("</svg>").count(), 1);
        let group = svg.find("<g clip-path=\"url(#plot-area)\">").unwrap();
        let end = svg[group..].find("</g>").unwrap() + group;
        let polyline = svg.find("stroke=\"#1F77B4\"").unwrap();
        assert!(polyline > group && polyline < end);
        assert!(stem.with_extension("png").exists());
    }
}
