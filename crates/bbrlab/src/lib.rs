//! bbrlab as a library: the code behind the `bbrlab` command line.
//!
//! The modules live here, not in the binary, so that every front end runs a
//! scenario through the same code: the CLI (`src/main.rs`) and the Python
//! package (`crates/bbrlab-py`) both parse a scenario with [`scenario`]
//! and run it with [`run::simulate`], which summarises it as [`output`]
//! has it; they differ only in the [`run::Sink`] its time series goes to
//! (CSV files for the CLI, Arrow columns for Python). There is one
//! implementation of running a scenario, not one per front end.

pub mod bench;
pub mod claims;
pub mod compare;
pub mod emu;
pub mod kernel_jitter;
pub mod limits;
pub mod locate;
pub mod output;
pub mod plots;
pub mod progress;
pub mod reproduce;
pub mod run;
pub mod scenario;
pub mod signals;
pub mod sim;
pub mod tcp;
pub mod validate;
