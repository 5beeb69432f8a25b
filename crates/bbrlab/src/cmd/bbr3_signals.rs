//! `bbrlab bbr3-signals`: the simulator's bbr3 with v3's exact signals
//! against the stock kernel's substitutes, on validate's paths.

use crate::cli::Bbr3SignalsArgs;
use claims::bbr3_signals;

/// Runs the study, prints its table and where it was written.
pub fn command(a: Bbr3SignalsArgs) -> Result<(), String> {
    let md = bbr3_signals::run(&bbr3_signals::Options {
        out: a.out.clone(),
        only: a.only,
        seeds: a.seeds,
        seconds: a.seconds,
    })?;
    print!("{md}");
    println!("wrote {}", a.out.display());
    Ok(())
}
