//! `bbrlab reproduce`: every claim and BBRv3 result, or the table of an
//! earlier run's `claims.json`.

use crate::cli::ReproduceArgs;
use crate::terminal::TerminalView;
use claims::reproduce;

/// Runs the claims (or prints an earlier run's table); with `--strict`, an
/// error when a claim that ran is not reproduced.
pub fn command(a: ReproduceArgs) -> Result<(), String> {
    if let Some(json) = a.table {
        let text =
            std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
        let table =
            reproduce::table_from_json(&text).map_err(|e| format!("{}: {e}", json.display()))?;
        print!("{table}");
        return Ok(());
    }
    let outcomes = reproduce::run(
        &reproduce::Options {
            out: a.out,
            quick: a.quick,
            only: a.only,
            jobs: a.jobs,
            quiet: a.quiet,
            qlog: a.qlog,
        },
        &TerminalView::new(a.quiet),
    )?;
    if a.strict {
        reproduce::require_all(&outcomes)?;
    }
    Ok(())
}
