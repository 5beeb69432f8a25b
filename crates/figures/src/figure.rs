//! What a figure shows: its lines ([`Series`]), spreads ([`Band`]) and
//! how it is titled and scaled ([`Figure`]).

use std::path::Path;

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
/// Draw bands with [`figure_with_bands`](crate::figure_with_bands).
/// `claims::band` builds one from runs grouped by sweep point over their
/// seeds.
pub struct Band {
    /// Legend text (empty: no legend entry).
    pub label: String,
    /// `(x, centre, lo, hi)` per point, in x order.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A scatter's spread of one group of points (say one algorithm's runs
/// over seeds): whiskers from `x.0` to `x.1` and from `y.0` to `y.1`,
/// crossing at `centre`, in the colour of series number `series`.
pub struct Spread {
    /// The index of the series whose colour the whiskers take.
    pub series: usize,
    /// Where the whiskers cross (a mean, say).
    pub centre: (f64, f64),
    /// The horizontal whisker's ends.
    pub x: (f64, f64),
    /// The vertical whisker's ends.
    pub y: (f64, f64),
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
    /// The markers' legend text (none: "published"), for reference
    /// values of another kind, such as a test's expected bound.
    pub published_label: Option<&'a str>,
}

/// A linear figure titled "t" over `series` and `published`, for tests
/// (its stem is never written to).
#[cfg(test)]
pub(crate) fn sample<'a>(series: &'a [Series], published: &'a [(f64, f64)]) -> Figure<'a> {
    Figure {
        stem: Path::new("unused"),
        title: "t",
        x_label: "x",
        y_label: "y",
        log_x: false,
        log_y: false,
        series,
        published,
        published_label: None,
    }
}
