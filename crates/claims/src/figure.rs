//! Drawing a claim's figures into its directory and listing them in its
//! findings.

use crate::findings::Eval;
use figures::{Band, Figure, Series};
use std::path::Path;

/// A series of `points` named `label`.
pub(crate) fn line(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: label.to_string(),
        points,
    }
}

/// Draws figure `stem` (SVG and PNG in `dir`) and lists it in `eval`;
/// `published` values are drawn as black triangles.
#[allow(clippy::too_many_arguments)]
pub(crate) fn figure(
    dir: &Path,
    eval: &mut Eval,
    stem: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    (log_x, log_y): (bool, bool),
    series: &[Series],
    published: &[(f64, f64)],
) -> Result<(), String> {
    figure_bands(
        dir,
        eval,
        stem,
        title,
        (x_label, y_label),
        (log_x, log_y),
        series,
        &[],
        published,
    )
}

/// Like [`figure`], with spread bands drawn after the series.
#[allow(clippy::too_many_arguments)]
pub(crate) fn figure_bands(
    dir: &Path,
    eval: &mut Eval,
    stem: &str,
    title: &str,
    (x_label, y_label): (&str, &str),
    (log_x, log_y): (bool, bool),
    series: &[Series],
    bands: &[Band],
    published: &[(f64, f64)],
) -> Result<(), String> {
    figures::figure_with_bands(
        &Figure {
            stem: &dir.join(stem),
            title,
            x_label,
            y_label,
            log_x,
            log_y,
            series,
            published,
            published_label: None,
        },
        bands,
    )?;
    eval.figures.push(stem.to_string());
    Ok(())
}
