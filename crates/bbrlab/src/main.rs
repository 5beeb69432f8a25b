//! `bbrlab`: BBR congestion control, done properly, as software people can use.
//!
//! Subcommands:
//! - `sim`: run a scenario file in the packet-level simulator
//! - `bench`: measure the simulator's speed on the standard dumbbell

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod bench;
mod output;
mod plots;
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
