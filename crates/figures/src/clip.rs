//! Clipping in axis space: every series and band is cut to the plotting
//! area before it is drawn ([`clip_polyline`], [`clip_polygon`]).

/// Whether a point (axis space) lies in the rectangle `(x0, x1, y0, y1)`,
/// edges included (with a rounding allowance).
pub(crate) fn inside((x, y): (f64, f64), (x0, x1, y0, y1): (f64, f64, f64, f64)) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::sample as frame;
    use crate::ticks::Axis;

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
}
