//! The plotting area ([`Frame`]): where it lies in pixels, what it shows,
//! and the one mapping from data to pixels that every element goes through.

use crate::ticks::Axis;

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
    /// The horizontal axis runs from high values on the left to low ones
    /// on the right (Pantheon's delay axis, so that better is up and right).
    pub x_reversed: bool,
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
        let fx = if self.x_reversed { 1.0 - fx } else { fx };
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

/// A plotting area for tests: 700 × 340 pixels at (80, 40).
#[cfg(test)]
pub(crate) fn sample(x: Axis, y: Axis) -> Frame {
    Frame {
        left: 80,
        top: 40,
        right: 780,
        bottom: 380,
        x,
        y,
        x_reversed: false,
    }
}
