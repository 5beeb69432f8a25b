//! Running bbrlab scenarios in the simulator, the one way every front end
//! does it.
//!
//! The command line (`bbrlab sim`, `reproduce`, `compare`) and the Python
//! package differ only in where a run's time series goes and how progress
//! is shown. So a run goes through [`run::simulate`] with a [`run::Sink`]
//! (CSV files, Arrow columns, or nothing), a sweep through
//! [`sweep::run_parallel`] with a [`sweep::View`] of its progress, and the
//! results are written by [`output`] with the [`provenance`] of the build;
//! [`draw`] draws a run directory's or a sweep's figures from those files.
//!
//! ```
//! use std::path::Path;
//! // One run of a scenario, summarised without writing any file.
//! let text = r#"
//! name = "doc"
//! duration = "2s"
//! [link.forward]
//! rate = "10mbit"
//! delay = "20ms"
//! [[flow]]
//! algorithm = "bbr"
//! "#;
//! let sc = scenario::parse(text, "doc.toml", Path::new("."), Path::new("doc.toml")).unwrap();
//! let (summary, ()) = runner::run::simulate(
//!     &sc.name,
//!     "run-0000",
//!     &sc.runs[0],
//!     netsim::NoRecorder,
//!     &runner::progress::SimClock::default(),
//! )
//! .unwrap();
//! // BBR fills most of a 10 Mbit/s link within two seconds.
//! assert!(summary.flows[0].goodput_bps > 5e6);
//! ```

pub mod draw;
pub mod measure;
pub mod metrics;
pub mod output;
pub mod plots;
pub mod progress;
pub mod qlog;
pub mod run;
pub mod stacks;
/// The statistics crate, where these figures' rules live.
pub use stats;
pub mod sweep;

pub use output::provenance;
