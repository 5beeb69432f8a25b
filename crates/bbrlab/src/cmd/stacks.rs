//! `bbrlab stacks`: the QUIC stacks' own controllers in the simulator.

use crate::cli::StacksArgs;
use claims::stacks;

/// Runs the study, writes it, prints its table.
pub fn command(a: StacksArgs) -> Result<(), String> {
    let durations = if a.quick {
        stacks::Durations::QUICK
    } else {
        stacks::Durations::FULL
    };
    let rows = stacks::run(&a.out, durations, a.jobs)?;
    stacks::write(&a.out, &rows)?;
    print!("{}", stacks::markdown(&rows));
    println!("wrote {}", a.out.display());
    Ok(())
}
