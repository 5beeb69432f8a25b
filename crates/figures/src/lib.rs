//! bbrlab's chart layer on plotters: the standard figures of any run
//! directory ([`plot_run`]: throughput, RTT, inflight and cwnd, bandwidth
//! estimate, bottleneck queue) and the reproduction report's comparison
//! figures ([`figure`], [`figure_with_bands`]), each as SVG and PNG.
//!
//! The run figures read the run's `flows.csv` and `link.csv` (the shared
//! time-series schema, through [`Table`]), so they work for any source that
//! writes that schema. Text is drawn with a bundled DejaVu Sans, so no
//! system fonts are needed.
//!
//! Plotters draws the shapes and the text; this crate lays the figure out
//! itself (frame, ticks, grid, legend) in pixels, because plotters'
//! defaults made figures hard to read:
//!
//! * **Ticks** ([`scale`]): a log axis gets decades plus 1-2-5 (or finer)
//!   ticks and a range snapped out to a labelled value, so every value lies
//!   between two labels; labels are unique and carry no needless ".0".
//! * **Clipping** ([`clip_polyline`], [`clip_polygon`]): every series and
//!   band is cut to the plotting area ([`Frame`]), and then drawn where
//!   nothing can leave it (a separate SVG group with a clip path; a
//!   separate bitmap the size of the plotting area for the PNG), so wide
//!   strokes cannot cross the axes either.
//! * **Legend** ([`place_legend`]): put where it covers no data
//!   ([`Occupancy`]), or below the plot when every place inside would cover
//!   some.
//! * **PNG text**: plotters' bitmap text drops each glyph's left side
//!   bearing, which squeezes spaces away ("RTTbehind"); the PNG's glyphs
//!   are placed one by one at their true positions, from the font's metrics
//!   as the `ab_glyph` crate (plotters' own font reader) gives them.
//!
//! # Example
//!
//! ```
//! use figures::{figure, Figure, Series};
//!
//! let dir = tempfile::tempdir()?;
//! let stem = dir.path().join("goodput");
//! let series = [Series {
//!     label: "bbr".into(),
//!     points: vec![(0.0, 9.6), (1.0, 9.9), (2.0, 9.8)],
//! }];
//! figure(&Figure {
//!     stem: &stem,
//!     title: "Goodput on a 10 Mbit/s path",
//!     x_label: "time (s)",
//!     y_label: "Mbit/s",
//!     log_x: false,
//!     log_y: false,
//!     series: &series,
//!     published: &[(1.0, 10.0)],
//!     published_label: None,
//! })?;
//!
//! let svg = std::fs::read_to_string(stem.with_extension("svg"))?;
//! assert!(svg.contains("Goodput on a 10 Mbit/s path"));
//! assert!(stem.with_extension("png").exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Parts
//!
//! From the bottom up: `csv_table` (the CSV reader), `ticks` (axis ranges
//! and labels), `frame` (data to pixels), `clip`, `text` (font and glyph
//! placement), `figure` (what a figure shows), `layer` (what it draws),
//! `legend`, `layout` (all of it in pixels), `render` (SVG and PNG with
//! plotters) and `run_figures` (which columns of a run are drawn).

mod clip;
mod csv_table;
mod figure;
mod frame;
mod layer;
mod layout;
mod legend;
mod render;
mod run_figures;
mod text;
mod ticks;

pub use clip::{clip_polygon, clip_polyline};
pub use csv_table::Table;
pub use figure::{Band, Figure, Series, Spread};
pub use frame::Frame;
pub use layer::Layer;
pub use legend::{place_legend, Occupancy};
pub use render::{figure, figure_with_bands, scatter};
pub use run_figures::{plot_run, time_chart};
pub use ticks::{scale, Axis, Scale, Tick};
