//! `bbrlab fuzz`: random paths on each named controller, held to the
//! invariants of `claims::fuzz`; writes fuzz.json and each failure's
//! shrunk scenario.

use crate::cli::FuzzArgs;
use claims::conformance::grid;
use claims::fuzz::{self, invariants::INVARIANTS, Progress};
use claims::seconds::positive_seconds;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs;
use std::time::Duration;

/// The progress line: elapsed of the budget, runs, runs per second,
/// failures so far.
struct Line(ProgressBar);

impl Progress for Line {
    fn update(&self, executions: u64, failures: usize, elapsed: Duration, budget: Duration) {
        self.0.set_length(budget.as_secs().max(1));
        self.0.set_position(elapsed.as_secs().min(budget.as_secs()));
        let rate = executions as f64 / elapsed.as_secs_f64().max(1e-3);
        self.0.set_message(format!(
            "{executions} runs, {rate:.0}/s, {failures} failure(s)"
        ));
    }
}

/// Runs the fuzzer and reports.
pub fn command(a: FuzzArgs) -> Result<(), String> {
    let controllers = grid::Controller::parse_list(&a.cc)?;
    // Checked before the output directory is made; `fuzz::run` checks
    // --seconds again for the library's callers.
    positive_seconds("--seconds", a.seconds)?;
    let run_timeout = positive_seconds("--run-timeout", a.run_timeout)?;
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Ctrl-C ends the run and still writes what it found (installed before
    // the output directory exists, which a caller may wait for).
    let stop = testbed::signals::stop_flag()?;
    fuzz::clear_earlier_output(&a.out)?;
    fs::create_dir_all(&a.out).map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    eprintln!(
        "fuzz: seed {seed} (repeat with --seed {seed}), {} controller(s), {jobs} worker(s), {} s",
        controllers.len(),
        a.seconds
    );
    // By controller name: the failures name theirs.
    let notes: Vec<(String, String)> = controllers
        .iter()
        .filter_map(|c| c.not_repeatable().map(|why| (c.name.clone(), why)))
        .collect();
    for (_, why) in &notes {
        eprintln!("fuzz: note: {why}");
    }
    let bar = ProgressBar::with_draw_target(
        Some(1),
        if a.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} s  {msg}")
            .expect("static template"),
    );
    let report = fuzz::run(
        &fuzz::Options {
            controllers,
            seconds: a.seconds,
            seed,
            jobs,
            max_failures: a.max_failures as usize,
            max_runs: a.runs,
            run_timeout,
            stop: Some(stop),
        },
        &Line(bar.clone()),
    )?;
    bar.finish_and_clear();
    let mut written = Vec::new();
    for f in &report.failures {
        let file = a.out.join(format!(
            "{}-{}.toml",
            claims::conformance::file_name(&f.controller),
            f.invariant
        ));
        let why = INVARIANTS
            .iter()
            .find(|(n, _)| *n == f.invariant)
            .map_or("", |(_, w)| w);
        let mut text = format!(
            "# bbrlab fuzz (seed {seed}) found {} failing `{}` on this path (shrunk):\n",
            f.controller, f.invariant
        );
        for v in &f.violations {
            text.push_str(&format!(
                "#   {}: {}{}\n",
                v.invariant,
                v.measured,
                if v.bound.is_empty() {
                    String::new()
                } else {
                    format!(", allowed {}", v.bound)
                }
            ));
        }
        text.push_str(&format!(
            "# Why the bound: {why}\n# Reproduce: bbrlab sim {}\n",
            file.display()
        ));
        if let Some((_, why)) = notes.iter().find(|(name, _)| *name == f.controller) {
            text.push_str(&format!("# Note: {why}.\n"));
        }
        text.push_str(&f.scenario);
        fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        written.push(file);
    }
    let json = serde_json::to_string_pretty(&report).map_err(|e| format!("fuzz.json: {e}"))?;
    let jp = a.out.join("fuzz.json");
    fs::write(&jp, json).map_err(|e| format!("cannot write {}: {e}", jp.display()))?;
    println!(
        "fuzz: seed {seed}: {} runs in {:.1} s{} ({:.0}/s, {:.0}/s per worker), {} stopped at the run time limit, {} distinct failure(s)",
        report.executions,
        report.seconds,
        if report.interrupted { ", interrupted" } else { "" },
        report.executions as f64 / report.seconds.max(1e-3),
        report.executions as f64 / report.seconds.max(1e-3) / jobs as f64,
        report.stopped,
        report.failures.len()
    );
    for (f, file) in report.failures.iter().zip(&written) {
        println!(
            "  {} {}: {} (found {} more time(s)) -> {}",
            f.controller,
            f.invariant,
            f.violations[0].measured,
            f.seen,
            file.display()
        );
    }
    println!("wrote {}", jp.display());
    if a.strict && !report.failures.is_empty() {
        return Err(format!("--strict: {} failure(s)", report.failures.len()));
    }
    Ok(())
}
