//! `bbrlab plot`: a run directory's (or a sweep's) figures, drawn again
//! from the files the run wrote.

use crate::cli::PlotArgs;

/// Draws the figures and names each file written.
pub fn command(a: PlotArgs) -> Result<(), String> {
    let jain = runner::draw::jain_params(a.jain_window, a.jain_step, a.jain_threshold)?;
    for made in runner::draw::draw_dir(&a.run_dir, jain)? {
        println!("wrote {}.svg and .png", a.run_dir.join(&made).display());
    }
    Ok(())
}
