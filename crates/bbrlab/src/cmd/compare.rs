//! `bbrlab compare`: one scenario in the simulator, over the UDP transport
//! and over kernel TCP (and QUIC stacks) through the emulator.

use crate::cli::CompareArgs;
use testbed::compare;

/// Runs the comparison and writes its report.
pub fn command(a: CompareArgs) -> Result<(), String> {
    let with = compare::parse_sources(&a.with)?;
    compare::run(&a.scenario, &with, a.out, a.quic_bulk.as_deref(), a.seed)
}
