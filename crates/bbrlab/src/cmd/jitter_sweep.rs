//! `bbrlab jitter-sweep` and `bbrlab kernel jitter-sweep`: the command
//! line's defaults per source, then [`testbed::jitter_sweep::run`].

use claims::jitter_sweep::Source;
use std::path::PathBuf;
use testbed::jitter_sweep::{defaults, run, Options};

/// Runs a jitter sweep on `source` (or prints its `--table`).
pub fn command(
    source: Source,
    quic_bulk: Option<PathBuf>,
    a: crate::cli::JitterSweepArgs,
) -> Result<(), String> {
    if let Some(csv) = a.table {
        return claims::jitter_sweep::table_from(source, &csv).map(|t| print!("{t}"));
    }
    let d = defaults(source);
    let duration_s = match &a.duration {
        Some(d) => Some(crate::cli::duration_arg("--duration", d)?.as_secs_f64()),
        None => None,
    };
    let (bytes, duration_s) = match (a.bytes, duration_s) {
        (None, None) => (d.bytes, d.duration_s),
        given => given,
    };
    run(&Options {
        source,
        quic_bulk,
        out: a.out.unwrap_or_else(|| d.out.into()),
        sds_ms: a.sds.unwrap_or_else(|| d.sds_ms.to_vec()),
        seeds: a.seeds.unwrap_or_else(|| d.seeds.to_vec()),
        ccs: a
            .cc
            .unwrap_or_else(|| d.ccs.iter().map(|c| c.to_string()).collect()),
        bytes,
        duration_s,
        timeout_s: a
            .timeout
            .unwrap_or_else(|| Options::default_timeout_s(bytes, duration_s)),
        quiet: a.quiet,
    })
}
