//! One scenario run in memory for a judge that reads its samples: the
//! conformance suite's cases and the fuzzer's generated paths. The run
//! keeps the samples of the flows asked for (and writes flow 0's qlog if
//! asked), stops at its next sample once a wall-clock deadline has
//! passed, and turns a panic inside a controller into an error with the
//! panic's message, so one bad run never stops a suite.

use runner::run::{FlowSample, Sink};
use std::io;
use std::time::Instant;

/// What to keep of a run.
pub struct Keep {
    /// Keep only flow 0's samples (else every flow's).
    pub first_flow_only: bool,
    /// Write flow 0's samples as qlog too.
    pub qlog: Option<runner::qlog::QlogWriter>,
}

/// A run's kept samples, and its summary.
pub struct Sampled {
    /// The kept samples, in time order.
    pub samples: Vec<FlowSample>,
    /// The run's summary (per flow: goodput, retransmissions, ...).
    pub summary: runner::output::SummaryJson,
}

/// Why a run did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The controller (or anything in the run) panicked; the message.
    Panicked(String),
    /// Past the deadline: how far the run had got.
    TimedOut(String),
    /// Any other error of the run.
    Error(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panicked(m) => write!(f, "the controller panicked: {m}"),
            Failure::TimedOut(m) => write!(f, "timed out, {m}"),
            Failure::Error(m) => write!(f, "the run failed: {m}"),
        }
    }
}

struct Samples {
    kept: Vec<FlowSample>,
    deadline: Instant,
    keep: Keep,
}

impl Samples {
    fn on_time(&self, t_ns: u64) -> io::Result<()> {
        if Instant::now() > self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{:.3} s of the run simulated", t_ns as f64 / 1e9),
            ));
        }
        Ok(())
    }
}

impl runner::run::Recorder for Samples {
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        self.on_time(s.t_ns)?;
        if s.flow == 0 {
            if let Some(q) = &mut self.keep.qlog {
                q.flow_sample(s)?;
            }
        }
        if s.flow == 0 || !self.keep.first_flow_only {
            self.kept.push(s.clone());
        }
        Ok(())
    }
    fn link_sample(&mut self, s: &runner::run::LinkSample) -> io::Result<()> {
        self.on_time(s.t_ns)
    }
    fn heartbeat(&mut self, t_ns: u64) -> io::Result<()> {
        self.on_time(t_ns)
    }
}

impl Sink for Samples {
    type Output = Vec<FlowSample>;
    fn finish(self) -> io::Result<Vec<FlowSample>> {
        if let Some(q) = self.keep.qlog {
            q.finish()?;
        }
        Ok(self.kept)
    }
}

/// Runs `run` (named `name` in its summary), keeping what `keep` says,
/// until done or, at its next sample, past `deadline`.
pub fn run(
    name: &str,
    run: &scenario::Run,
    keep: Keep,
    deadline: Instant,
    clock: &runner::progress::SimClock,
) -> Result<Sampled, Failure> {
    let sink = Samples {
        kept: Vec::new(),
        deadline,
        keep,
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runner::run::simulate(name, "run-0000", run, sink, clock)
    }));
    match outcome {
        Ok(Ok((summary, samples))) => Ok(Sampled { samples, summary }),
        Ok(Err(e)) if e.kind() == io::ErrorKind::TimedOut => Err(Failure::TimedOut(e.to_string())),
        Ok(Err(e)) => Err(Failure::Error(e.to_string())),
        Err(panic) => Err(Failure::Panicked(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".into()),
        )),
    }
}
