//! What a figure draws: its series, bands and published markers as
//! [`Layer`]s in axis space, already clipped to the plotting area.

use crate::clip::{clip_polygon, clip_polyline, inside};
use crate::figure::{Band, Figure};
use crate::frame::Frame;
use plotters::style::RGBColor;

/// The lines' colours in order; bands take the ones after the series.
pub(crate) const COLOURS: [RGBColor; 6] = [
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
    /// An error bar from the first to the second point, with caps across
    /// it (vertical or horizontal).
    ErrorBar(RGBColor, (f64, f64), (f64, f64)),
    /// A published reference value (black triangle).
    Published((f64, f64)),
}

/// The layers of a figure, clipped to `frame`, in drawing order.
pub(crate) fn layers(figure: &Figure<'_>, bands: &[Band], frame: &Frame) -> Vec<Layer> {
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
