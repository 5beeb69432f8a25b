//! Laying a figure out in pixels: the axes' scales, the plotting area,
//! the layers and the legend's place ([`plan`]), for any backend to draw.

use crate::figure::{Band, Figure};
use crate::frame::Frame;
use crate::layer::{layers, Layer, COLOURS};
use crate::legend::{legend_entries, legend_size, place_legend, Key, Occupancy};
use crate::text::{text_width, LABEL_FONT};
use crate::ticks::{scale, Scale};

/// Everything needed to draw one figure on any backend.
pub(crate) struct Plan {
    /// The canvas, in pixels.
    pub(crate) size: (u32, u32),
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    /// The plotting area.
    pub(crate) frame: Frame,
    /// The horizontal axis with its ticks.
    pub(crate) xs: Scale,
    /// The vertical axis with its ticks.
    pub(crate) ys: Scale,
    /// The data, clipped, in drawing order.
    pub(crate) layers: Vec<Layer>,
    /// The legend's rows.
    pub(crate) legend: Vec<(Key, String)>,
    /// Top-left corner and size of the legend box, in pixels.
    pub(crate) legend_box: Option<((i32, i32), (i32, i32))>,
}

/// The extent of everything the figure shows, `((x0, x1), (y0, y1))`,
/// over the values its axes can show (positive ones on a log axis).
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

/// Lays out a figure on a canvas of `width` × `height` pixels (taller if
/// the legend has to go below the plot).
pub(crate) fn plan(figure: &Figure<'_>, bands: &[Band], size: (u32, u32)) -> Plan {
    plan_with(figure, bands, size, Options::default())
}

/// How a figure is drawn beyond what [`Figure`] says.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Options {
    /// Series as unjoined points (a scatter plot), not lines.
    pub(crate) dots: bool,
    /// The x axis from high (left) to low (right).
    pub(crate) reverse_x: bool,
}

/// [`plan`] with [`Options`].
pub(crate) fn plan_with(
    figure: &Figure<'_>,
    bands: &[Band],
    (width, height): (u32, u32),
    opts: Options,
) -> Plan {
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
        x_reversed: opts.reverse_x,
    };
    let (layers, legend) = if opts.dots {
        (dot_layers(figure, &frame), dot_legend(figure))
    } else {
        (layers(figure, bands, &frame), legend_entries(figure, bands))
    };
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

/// A scatter's layers: every point of every series as a dot in the
/// series' colour, those the axes cannot show left out.
fn dot_layers(figure: &Figure<'_>, frame: &Frame) -> Vec<Layer> {
    let rect = frame.t_rect();
    let mut out = Vec::new();
    for (i, s) in figure.series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        for &p in &s.points {
            if let Some(t) = frame.t(p).filter(|&t| crate::clip::inside(t, rect)) {
                out.push(Layer::Dot(colour, t));
            }
        }
    }
    out
}

/// Whiskers of a scatter's spreads as error bars, clipped to the frame.
pub(crate) fn spread_layers(frame: &Frame, spreads: &[crate::figure::Spread]) -> Vec<Layer> {
    let rect = frame.t_rect();
    let mut out = Vec::new();
    for s in spreads {
        let colour = COLOURS[s.series % COLOURS.len()];
        let (cx, cy) = s.centre;
        for (a, b) in [((s.x.0, cy), (s.x.1, cy)), ((cx, s.y.0), (cx, s.y.1))] {
            let (Some(a), Some(b)) = (frame.t(a), frame.t(b)) else {
                continue;
            };
            if let Some(piece) = crate::clip::clip_polyline(&[a, b], rect).into_iter().next() {
                out.push(Layer::ErrorBar(colour, piece[0], piece[1]));
            }
        }
    }
    out
}

/// A scatter's legend: a dot per labelled series.
fn dot_legend(figure: &Figure<'_>) -> Vec<(Key, String)> {
    figure
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.label.is_empty())
        .map(|(i, s)| (Key::Dot(COLOURS[i % COLOURS.len()]), s.label.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{sample, Series};
    use crate::ticks::Axis;

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
        let fig = sample(&series, &[(2.0, 5.0)]);
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
    /// A scatter draws dots only, and a reversed x axis puts high values
    /// on the left (Pantheon's delay axis).
    #[test]
    fn a_reversed_scatter_puts_high_x_on_the_left() {
        let series = [Series {
            label: "a".into(),
            points: vec![(10.0, 1.0), (100.0, 1.0)],
        }];
        let fig = sample(&series, &[]);
        let opts = Options {
            dots: true,
            reverse_x: true,
        };
        let p = plan_with(&fig, &[], (820, 440), opts);
        let px: Vec<f64> = p
            .layers
            .iter()
            .map(|l| match l {
                Layer::Dot(_, t) => p.frame.px_t(*t).0,
                other => panic!("a scatter draws dots only: {other:?}"),
            })
            .collect();
        assert_eq!(px.len(), 2);
        assert!(px[1] < px[0], "x = 100 left of x = 10: {px:?}");
        assert!(matches!(p.legend[0].0, Key::Dot(_)));
        let spread = crate::figure::Spread {
            series: 0,
            centre: (30.0, 1.0),
            x: (10.0, 100.0),
            y: (0.5, 1.5),
        };
        let bars = spread_layers(&p.frame, &[spread]);
        assert_eq!(bars.len(), 2, "{bars:?}");
        for b in &bars {
            let Layer::ErrorBar(_, a, z) = b else {
                panic!("{b:?}")
            };
            assert!(p.frame.contains_px(p.frame.px_t(*a)) && p.frame.contains_px(p.frame.px_t(*z)));
        }
        let plain = plan(&fig, &[], (820, 440));
        let lx = plain.frame.px((100.0, 1.0)).unwrap().0;
        assert!(lx > plain.frame.px((10.0, 1.0)).unwrap().0);
    }

    #[test]
    fn a_figure_whose_corners_are_full_puts_the_legend_below_the_plot() {
        let series = [Series {
            label: "everywhere".into(),
            points: (0..=400)
                .map(|i| (f64::from(i) * 0.25, if i % 2 == 0 { 0.0 } else { 10.0 }))
                .collect(),
        }];
        let fig = sample(&series, &[]);
        let p = plan(&fig, &[], (820, 440));
        let ((_, y), (_, h)) = p.legend_box.unwrap();
        assert!(
            y > p.frame.bottom + 40,
            "legend at {y}, axis at {}",
            p.frame.bottom
        );
        assert!(y + h < p.size.1 as i32 && p.size.1 > 440);
    }
}
