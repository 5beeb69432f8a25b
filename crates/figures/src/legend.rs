//! The legend: its entries, its size, and where it goes ([`place_legend`]):
//! where it covers no data, or below the plot when every place inside
//! would cover some ([`Occupancy`]).

use crate::figure::{Band, Figure};
use crate::frame::Frame;
use crate::layer::{Layer, COLOURS};
use crate::text::{text_width, LABEL_FONT};
use plotters::style::RGBColor;

/// The height of one legend row, in pixels.
pub(crate) const LEGEND_ROW: i32 = 18;

/// What a legend row shows beside its text.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key {
    Line(RGBColor),
    /// A scatter's points (a dot).
    Dot(RGBColor),
    Band(RGBColor),
    Published,
}

/// The legend's rows: each labelled series, then each labelled band,
/// then the published markers (if any).
pub(crate) fn legend_entries(figure: &Figure<'_>, bands: &[Band]) -> Vec<(Key, String)> {
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
        let label = figure.published_label.unwrap_or("published");
        out.push((Key::Published, label.to_string()));
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

/// The legend box's size in pixels: key, text and margins, one row per
/// entry.
pub(crate) fn legend_size(entries: &[(Key, String)]) -> (i32, i32) {
    let text = entries
        .iter()
        .map(|(_, s)| text_width(s, LABEL_FONT))
        .max()
        .unwrap_or(0);
    // Slack for the SVG, whose text a browser sets in its own sans-serif.
    let text = text + text / 12 + 4;
    (8 + 22 + 8 + text + 8, 8 + LEGEND_ROW * entries.len() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::clip_polyline;
    use crate::frame::sample as frame;
    use crate::ticks::Axis;

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
}
