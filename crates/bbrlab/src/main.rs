//! `bbrlab`: BBR congestion control, done properly, as software people can use.
//!
//! Subcommands:
//! - `reproduce`: run every published claim (C1–C14) and write the report
//! - `sim`: run a scenario file in the packet-level simulator
//! - `plot`: draw the standard figures for a run directory
//! - `bench`: measure the simulator's speed on the standard dumbbell

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod bench;
mod claims;
mod output;
mod plots;
mod reproduce;
mod scenario;
mod sim;

/// BBR congestion control: simulate, measure and compare.
#[derive(Parser)]
#[command(name = "bbrlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce every published claim (C1–C14) in the simulator and write
    /// an HTML report with the paper-style figures and a verdict per claim.
    Reproduce {
        /// Report directory.
        #[arg(long, short, default_value = "report")]
        out: PathBuf,
        /// Shorter durations (for CI); every claim's checks still apply.
        #[arg(long)]
        quick: bool,
        /// Only these claims, comma-separated (e.g. `C1,C3` or `1,3`).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Parallel runs (default: all cores).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// No progress bar or per-claim lines.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a scenario file in the simulator; writes time series and summaries.
    Sim {
        /// The scenario (TOML; schema in docs/scenarios.md).
        scenario: PathBuf,
        /// Output directory (default: the scenario's `output`, else `out/<name>`).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Parallel runs for sweeps (default: all cores).
        #[arg(long, short)]
        jobs: Option<usize>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// Skip drawing figures (faster for large sweeps).
        #[arg(long)]
        no_plots: bool,
    },
    /// Draw the standard figures (SVG and PNG) for a run directory.
    Plot {
        /// A directory holding `flows.csv` (and optionally `link.csv`).
        run_dir: PathBuf,
    },
    /// Simulator speed: one BBR flow, 100 Mbit/s, 40 ms, 60 s simulated.
    Bench {
        /// Simulated seconds.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Also run C2's 10 Gbit/s, 100 ms, 1 % loss path for 30 s and
        /// report its wall time and the peak memory (RSS) of this process.
        #[arg(long)]
        large: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sim {
            scenario,
            out,
            jobs,
            quiet,
            no_plots,
        } => sim::run(&scenario, out, jobs, quiet, !no_plots),
        Command::Plot { run_dir } => plots::plot_run(&run_dir).map(|made| {
            for m in made {
                println!("wrote {}", run_dir.join(format!("{m}.svg")).display());
            }
        }),
        Command::Reproduce {
            out,
            quick,
            only,
            jobs,
            quiet,
        } => reproduce::run(&reproduce::Options {
            out,
            quick,
            only,
            jobs,
            quiet,
        })
        .map(|_| ()),
        Command::Bench { seconds, large } => bench::run(seconds, large),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
