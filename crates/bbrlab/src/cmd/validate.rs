//! `bbrlab validate`: the simulator held to kernel TCP, single-flow or
//! with competing flows, or the table of an earlier run.

use crate::cli::ValidateArgs;
use testbed::validate;

/// Runs the chosen validation (or prints a table); with `--strict`, an
/// error when a path misses its bounds.
pub fn command(a: ValidateArgs) -> Result<(), String> {
    if let Some(files) = a.receivers {
        println!("{}", validate::receivers::table_from(&files[0], &files[1])?);
        return Ok(());
    }
    if let Some(json) = a.table {
        println!("{}", validate::table_from(&json)?);
        return Ok(());
    }
    let all_within = if a.multiflow {
        validate::multiflow::run(&validate::multiflow::Options {
            out: a.out,
            quick: a.quick,
            only: a.only,
            reps: a.reps.map(|r| r as usize),
            seconds: a.seconds,
            ack: a.sim_ack.name(),
            pacer: a.sim_pacing,
            timestamps: a.sim_timestamps,
            draws: a.sim_draws as usize,
            noise: a.sim_host_noise.0,
            resimulate: a.resimulate,
        })?
    } else {
        validate::run(&validate::Options {
            out: a.out,
            quick: a.quick,
            only: a.only,
            reps: a.reps.map(|r| r as usize),
            seconds: a.seconds,
            // Resimulating, no list means every row the earlier run has.
            algorithms: a.algorithms.unwrap_or_else(|| {
                if a.resimulate {
                    Vec::new()
                } else {
                    vec!["bbr".into(), "cubic".into()]
                }
            }),
            quic_bulk: a.quic_bulk,
            ack: a.sim_ack.name(),
            pacer: a.sim_pacing,
            timestamps: a.sim_timestamps,
            update: a.update,
            jobs: a.jobs,
            resimulate: a.resimulate,
        })?
    };
    if a.strict && !all_within {
        let what = if a.multiflow {
            "some competing-flow paths miss their bounds"
        } else {
            "some paths miss their bounds"
        };
        return Err(format!("validate: {what} (see validate.md)"));
    }
    Ok(())
}
