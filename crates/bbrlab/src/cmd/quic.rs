//! `bbrlab quic`: bulk transfers over real QUIC stacks, their own
//! controllers and bbrlab's through the adapters.

use crate::cli::QuicArgs;
use testbed::quic;

/// Runs the transfers and writes the table.
pub fn command(a: QuicArgs) -> Result<(), String> {
    quic::run(&quic::Options {
        stacks: a.stack,
        ccs: a.cc,
        seconds: a.seconds,
        scenario: a.scenario,
        out: a.out,
        quic_bulk: a.quic_bulk,
        interval: a.interval,
        no_kernel: a.no_kernel,
        rounds: a.rounds,
    })
}
