//! `bbrlab fuzz`: random but valid paths and workloads ([`path`]) run on
//! each named controller in the simulator and held to invariants any sane
//! controller keeps ([`invariants`]). Generation and shrinking are
//! proptest's: each worker runs proptest's `TestRunner` on the path
//! strategy in chunks, on the controllers in turn, until the time is up;
//! a failing path is shrunk by proptest toward a slow, short, clean,
//! single-flow bulk path, then its numbers are rounded where the failure
//! survives it, and it is kept as the scenario file that `bbrlab sim`
//! reproduces byte for byte (for a deterministic controller).
//!
//! Every worker's random stream derives from one seed, printed, so a run
//! can be repeated; which paths a worker reaches in a time budget still
//! depends on the machine's speed.

pub mod invariants;
pub mod path;

use crate::conformance::grid::Controller;
use crate::sampled;
use invariants::{judge, Kind, Violation};
use path::FuzzPath;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to fuzz.
pub struct Options {
    /// The controllers, by name (or outside ones).
    pub controllers: Vec<Controller>,
    /// Wall-clock time for the whole run.
    pub seconds: f64,
    /// The seed every worker's stream derives from.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Stop after this many distinct failures (controller × invariant).
    pub max_failures: usize,
    /// Stop after this many runs (shrinking included), whatever the time:
    /// with one worker, a seed and this, a run is the same on any machine
    /// however busy (as long as no run meets `run_timeout`).
    pub max_runs: Option<u64>,
    /// Wall-clock time one simulation may take; a run past it is stopped
    /// and counted, not judged (on a busy machine a slow run is no bug).
    pub run_timeout: Duration,
    /// Set from outside (by Ctrl-C, say) to end the run early: the
    /// workers stop drawing, a failure found is still shrunk as far as it
    /// got and judged once more, and the report says it was interrupted,
    /// so what was found is written rather than lost.
    pub stop: Option<std::sync::Arc<AtomicBool>>,
}

/// One distinct failure, shrunk.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    /// The controller's name.
    pub controller: String,
    /// The first invariant the shrunk path breaks (the key for "distinct").
    pub invariant: &'static str,
    /// Every invariant the shrunk path breaks, with the numbers.
    pub violations: Vec<Violation>,
    /// The shrunk path's scenario file.
    pub scenario: String,
    /// The shrunk path, as drawn.
    #[serde(skip)]
    pub path: FuzzPath,
    /// Times this failure was found again before the run ended.
    pub seen: u64,
}

/// A fuzzing run's outcome.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The seed.
    pub seed: u64,
    /// Simulations run, shrinking included.
    pub executions: u64,
    /// Runs stopped at the per-run time limit (not judged).
    pub stopped: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Ended early by [`Options::stop`].
    pub interrupted: bool,
    /// Distinct failures, in the order found.
    pub failures: Vec<Found>,
}

/// What a long run shows while it goes.
pub trait Progress: Sync {
    /// Called about twice a second and at the end.
    fn update(&self, executions: u64, failures: usize, elapsed: Duration, budget: Duration);
}

/// No display.
pub struct Silent;

impl Progress for Silent {
    fn update(&self, _: u64, _: usize, _: Duration, _: Duration) {}
}

/// Paths a worker tries in one proptest run before it moves to the next
/// controller (and to a fresh stream).
const CHUNK: u32 = 32;

/// The outcome of one path on one controller.
pub enum Outcome {
    /// The invariants it broke (none: it passed).
    Judged(Vec<Violation>),
    /// Stopped at the time limit.
    Stopped,
}

/// Runs `path` on `cc` and judges it.
pub fn evaluate(p: &FuzzPath, cc: &Controller, run_timeout: Duration) -> Outcome {
    let text = p.scenario(cc.scenario_algorithm(), cc.scenario_profile());
    let fail = |invariant: &'static str, measured: String| {
        Outcome::Judged(vec![Violation {
            invariant,
            measured,
            bound: String::new(),
        }])
    };
    let sc = match scenario::parse(
        &text,
        "fuzz.toml",
        std::path::Path::new("."),
        std::path::Path::new("fuzz.toml"),
    ) {
        Ok(sc) => sc,
        // The generator made a file the simulator refuses: a fuzzer bug,
        // reported as such rather than passed over.
        Err(e) => return fail("valid_scenario", e.to_string()),
    };
    let Some(mut run) = sc.runs.into_iter().next() else {
        return fail("valid_scenario", "no run".into());
    };
    for f in &mut run.config.flows {
        cc.apply_to(f);
    }
    let keep = sampled::Keep {
        first_flow_only: false,
        qlog: None,
    };
    let clock = runner::progress::SimClock::default();
    match sampled::run("fuzz", &run, keep, Instant::now() + run_timeout, &clock) {
        Ok(s) => Outcome::Judged(judge(
            p,
            &p.sizes(),
            Kind {
                bbr: cc.name.contains("bbr"),
            },
            &s.samples,
        )),
        Err(sampled::Failure::Panicked(m)) => fail("no_panic", m),
        Err(sampled::Failure::TimedOut(_)) => Outcome::Stopped,
        Err(sampled::Failure::Error(m)) => fail("run_completes", m),
    }
}

/// Removes what an earlier `bbrlab fuzz` wrote in `dir` (its `fuzz.json`,
/// and the failures' files, which begin with `# bbrlab fuzz`), so that a
/// new run's directory holds only its own: an earlier failure's file left
/// beside a report of none reads as a failure of this run. Anything else
/// is left alone. Returns how many files were removed.
pub fn clear_earlier_output(dir: &std::path::Path) -> Result<usize, String> {
    let rd = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        r => r.map_err(|e| format!("cannot read {}: {e}", dir.display()))?,
    };
    let mut removed = 0;
    for e in rd.flatten() {
        let p = e.path();
        let ours = if p.file_name().is_some_and(|n| n == "fuzz.json") {
            true
        } else if p.extension().is_some_and(|x| x == "toml") {
            std::fs::read_to_string(&p).is_ok_and(|t| t.starts_with("# bbrlab fuzz"))
        } else {
            false
        };
        if ours && p.is_file() {
            std::fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Fuzzes until `opts.seconds` have passed or `opts.max_failures`
/// distinct failures are found.
pub fn run(opts: &Options, progress: &dyn Progress) -> Result<Report, String> {
    if opts.controllers.is_empty() {
        return Err("no controller to fuzz (--cc)".into());
    }
    let budget = crate::seconds::positive_seconds("--seconds", opts.seconds)?;
    let start = Instant::now();
    let executions = AtomicU64::new(0);
    let stopped = AtomicU64::new(0);
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let done = AtomicBool::new(false);
    let interrupted = || {
        opts.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    // Done, or stopped from outside: the workers' and the display's test.
    let finished = || done.load(Ordering::Relaxed) || interrupted();
    let jobs = opts.jobs.max(1);
    std::thread::scope(|scope| {
        for worker in 0..jobs {
            let (executions, stopped, found, done, finished) =
                (&executions, &stopped, &found, &done, &finished);
            scope.spawn(move || {
                let mut chunk: u64 = 0;
                while !finished() && start.elapsed() < budget {
                    let cc = &opts.controllers
                        [(worker + chunk as usize * jobs) % opts.controllers.len()];
                    let left = budget.saturating_sub(start.elapsed());
                    // With --runs, the run count bounds shrinking too (each
                    // step is a run), so no wall-clock cap of its own: where
                    // a shrink stopped would then depend on how busy the
                    // machine was, and --runs promises one result per seed.
                    let shrink_ms = if opts.max_runs.is_some() {
                        left.as_millis()
                    } else {
                        left.as_millis().min(60_000)
                    };
                    let config = Config {
                        cases: CHUNK,
                        failure_persistence: None,
                        max_shrink_iters: 400,
                        max_shrink_time: u32::try_from(shrink_ms).unwrap_or(u32::MAX),
                        ..Config::default()
                    };
                    let mut rng_seed = [0u8; 32];
                    rng_seed[..8].copy_from_slice(&opts.seed.to_le_bytes());
                    rng_seed[8..16].copy_from_slice(&(worker as u64).to_le_bytes());
                    rng_seed[16..24].copy_from_slice(&chunk.to_le_bytes());
                    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &rng_seed);
                    let mut runner = TestRunner::new_with_rng(config, rng);
                    let result = runner.run(&path::strategy(), |p| {
                        // Past the budget, the rest of the chunk (or of a
                        // shrink) passes untried, so the run ends on time.
                        if start.elapsed() >= budget || finished() {
                            return Ok(());
                        }
                        let n = executions.fetch_add(1, Ordering::Relaxed) + 1;
                        if opts.max_runs.is_some_and(|m| n > m) {
                            done.store(true, Ordering::Relaxed);
                            return Ok(());
                        }
                        match evaluate(&p, cc, opts.run_timeout) {
                            Outcome::Judged(v) if v.is_empty() => Ok(()),
                            Outcome::Judged(v) => Err(TestCaseError::fail(v[0].invariant)),
                            Outcome::Stopped => {
                                stopped.fetch_add(1, Ordering::Relaxed);
                                Ok(())
                            }
                        }
                    });
                    let over = opts
                        .max_runs
                        .is_some_and(|m| executions.load(Ordering::Relaxed) > m);
                    if let (Err(TestError::Fail(_, minimal)), false) =
                        (result, start.elapsed() >= budget || over)
                    {
                        if let Some(f) = settle(minimal, cc, opts.run_timeout) {
                            let mut all = found.lock().expect("no worker panics holding it");
                            match all.iter_mut().find(|x| {
                                x.controller == f.controller && x.invariant == f.invariant
                            }) {
                                Some(x) => x.seen += 1,
                                None => all.push(f),
                            }
                            if all.len() >= opts.max_failures {
                                done.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    chunk += 1;
                }
            });
        }
        // The display, from this thread, until the workers are done.
        while start.elapsed() < budget && !finished() {
            std::thread::sleep(
                Duration::from_millis(500).min(budget.saturating_sub(start.elapsed())),
            );
            let n = found.lock().map(|f| f.len()).unwrap_or(0);
            progress.update(
                executions.load(Ordering::Relaxed),
                n,
                start.elapsed(),
                budget,
            );
        }
    });
    let failures = found.into_inner().unwrap_or_default();
    // The counter passes `max_runs` by the runs turned away at the limit.
    let runs = executions.load(Ordering::Relaxed);
    let runs = opts.max_runs.map_or(runs, |m| runs.min(m));
    progress.update(runs, failures.len(), start.elapsed(), budget);
    Ok(Report {
        seed: opts.seed,
        executions: runs,
        stopped: stopped.load(Ordering::Relaxed),
        seconds: start.elapsed().as_secs_f64(),
        interrupted: interrupted(),
        failures,
    })
}

/// The shrunk path, rounded if it still fails the same way, judged once
/// more for the record; `None` if it no longer fails (a run past the time
/// limit, say).
fn settle(minimal: FuzzPath, cc: &Controller, run_timeout: Duration) -> Option<Found> {
    let first = |p: &FuzzPath| match evaluate(p, cc, run_timeout) {
        Outcome::Judged(v) if !v.is_empty() => Some(v),
        _ => None,
    };
    let v = first(&minimal)?;
    let rounded = minimal.rounded();
    let (path, v) = match first(&rounded) {
        Some(r) if r[0].invariant == v[0].invariant => (rounded, r),
        _ => (minimal, v),
    };
    Some(Found {
        controller: cc.name.clone(),
        invariant: v[0].invariant,
        scenario: path.scenario(cc.scenario_algorithm(), cc.scenario_profile()),
        violations: v,
        path,
        seen: 0,
    })
}
