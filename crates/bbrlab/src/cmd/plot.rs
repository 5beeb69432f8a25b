//! `bbrlab plot`: a run directory's (or a sweep's) figures, drawn again
//! from the files the run wrote.

use crate::cli::PlotArgs;

/// Draws the figures and names each file written.
pub fn command(a: PlotArgs) -> Result<(), String> {
    for made in runner::draw::plot_dir(&a.run_dir, a.jain_window, a.jain_step, a.jain_threshold)? {
        println!("wrote {}.svg and .png", a.run_dir.join(&made).display());
    }
    Ok(())
}
