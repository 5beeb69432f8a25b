//! Issue 26: runs C13's grid (`scenarios/c13-cadence-grid.toml`: the
//! variant's statistics cadence × the receiver's ACK frequency × the
//! bandwidth window, bbr beside it, C13's 8 seeds) and writes the summary
//! C13's report section shows.
//!
//! ```sh
//! cargo run --release -p claims --example c13_cadence_grid -- docs/claims/c13-cadence-grid.csv 2
//! ```
//!
//! Arguments: the CSV to write (default `docs/claims/c13-cadence-grid.csv`)
//! and the parallel runs (default: all cores). The runs' time series go to
//! a temporary directory, removed afterwards. Rebuild (`bbrlab reproduce`)
//! to show a new CSV: the report embeds it at compile time.

use claims::claim::c13_square_wave::{run_grid, write_grid_csv, GRID_CSV_FILE};
use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| GRID_CSV_FILE.to_string()));
    let jobs = match args.next().map(|j| j.parse::<usize>()) {
        None => None,
        Some(Ok(j)) if j > 0 => Some(j),
        Some(_) => {
            eprintln!(
                "c13_cadence_grid: the second argument is the parallel runs, a whole number ≥ 1"
            );
            std::process::exit(2);
        }
    };
    let work = std::env::temp_dir().join(format!("c13-cadence-grid-{}", std::process::id()));
    let result = run_grid(&work, jobs);
    let _ = std::fs::remove_dir_all(&work);
    let rows = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("c13_cadence_grid: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = write_grid_csv(&out, &rows) {
        eprintln!("c13_cadence_grid: {e}");
        std::process::exit(1);
    }
    for r in &rows {
        println!(
            "{:<75} bbr {:.2} s, variant {:.2} s ({:.2}x), rises {:.2}/{:.2} s, srtt {:.1} %{}",
            r.label(),
            r.bbr_drop_s,
            r.variant_drop_s,
            r.ratio(),
            r.bbr_rise_s,
            r.variant_rise_s,
            r.variant_srtt_share * 100.0,
            if r.passes() { "  PASSES" } else { "" }
        );
    }
    println!("wrote {}", out.display());
}
