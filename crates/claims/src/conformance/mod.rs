//! `bbrlab conformance`: the example test cases of draft-ietf-ccwg-bbr-06
//! (its appendix "Example Test Cases") as a suite any controller the
//! simulator runs can be put through: bbrlab's own (`bbr3` in both
//! profiles, `bbr` v1 as a reference that lacks v3's rules) and the QUIC
//! stacks' (`s2n:bbr2`, `quinn:bbr`, ...).
//!
//! Each case is a file under `scenarios/conformance/` ([`case`]): a
//! scenario with a `[conformance]` table naming the draft's section, how
//! the path scales over the grid of path sizes ([`grid`]), and the checks
//! with the reason for each bound ([`check`]). Every case runs at every
//! grid point on every controller, in parallel; a panic inside a
//! controller is caught and recorded as that run's failure, and the suite
//! goes on. The result is `conformance.json` and a Markdown matrix of case
//! × controller ([`report`]), an HTML report ([`html`]) with a figure per
//! case ([`figures`]), and, on request, each run's qlog.

pub mod case;
pub mod check;
pub mod figures;
pub mod grid;
pub mod html;
pub mod report;

use case::Case;
use check::{judge, Outcome};
use grid::{Controller, Grid, Point};
use runner::run::FlowSample;
use runner::sweep::{run_parallel, View};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to run.
pub struct Options {
    /// The directory of case files.
    pub cases: PathBuf,
    /// Only these case ids (`A01`), or every case.
    pub only: Option<Vec<String>>,
    /// The controllers, by name.
    pub controllers: Vec<Controller>,
    /// Which grid.
    pub grid: Grid,
    /// Worker threads (default: every core).
    pub jobs: Option<usize>,
    /// Wall-clock time a run may take before it is stopped and recorded
    /// as timed out.
    pub timeout: std::time::Duration,
    /// Write each run's qlog under this directory
    /// (`<case>/<point>/<controller>/flow-0.sqlog`), or none.
    pub qlog: Option<PathBuf>,
}

/// The default [`Options::timeout`]: far above any case's run here (the
/// slowest takes about a second), so only a controller that has slowed
/// the simulation to a crawl meets it.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// One case at one point on one controller.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// The case's id.
    pub case: String,
    /// The path size (`20M-40ms`), or `fixed`.
    pub point: String,
    /// The controller's name.
    pub controller: String,
    /// Each check's outcome, in the case's order.
    pub checks: Vec<CheckResult>,
    /// The run did not complete: the simulator's error or the
    /// controller's panic.
    pub error: Option<String>,
    /// The flow's samples, kept for the run at the case's figure point
    /// ([`figure_point`]) only.
    #[serde(skip)]
    pub samples: Vec<FlowSample>,
}

/// The point whose runs a case's figure draws: the grid's middle point
/// (the quick grid's), or the fixed path.
pub fn figure_point(case: &Case) -> Option<Point> {
    match case.scale {
        case::Scale::Grid { .. } => Grid::Quick.points().first().copied(),
        case::Scale::Fixed => None,
    }
}

/// One check's outcome on one run.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// The check in words.
    pub check: String,
    /// What it found.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl RunResult {
    /// Whether the run failed: an error or a failed check.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.checks.iter().any(|c| c.outcome.failed())
    }
}

/// The cases `opts` selects, checked; an unknown `--only` id lists the
/// known ones.
pub fn select(opts: &Options) -> Result<Vec<Case>, String> {
    let all = case::load_dir(&opts.cases)?;
    let Some(only) = &opts.only else {
        return Ok(all);
    };
    for id in only {
        if !all.iter().any(|c| c.id.eq_ignore_ascii_case(id)) {
            let known: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
            return Err(format!(
                "--only {id}: no such case; the cases are {}",
                known.join(", ")
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|c| only.iter().any(|id| c.id.eq_ignore_ascii_case(id)))
        .collect())
}

/// Runs every selected case at every point on every controller; results
/// in case, point, controller order.
pub fn run(opts: &Options, view: &dyn View) -> Result<Vec<RunResult>, String> {
    if opts.controllers.is_empty() {
        return Err("no controller to run (--cc)".into());
    }
    let cases = select(opts)?;
    let mut jobs: Vec<(&Case, Option<Point>, &Controller)> = Vec::new();
    for c in &cases {
        let points: Vec<Option<Point>> = match c.scale {
            case::Scale::Grid { .. } => opts.grid.points().into_iter().map(Some).collect(),
            case::Scale::Fixed => vec![None],
        };
        for p in points {
            for cc in &opts.controllers {
                jobs.push((c, p, cc));
            }
        }
    }
    let results = run_parallel(
        &jobs,
        opts.jobs,
        view,
        |(c, p, cc)| {
            let label = format!("{} {} {}", c.id, point_label(*p), cc.name);
            // The simulated length, for the progress display's fraction.
            let ns = scenario_of(c, *p, cc).map_or(0, |r| r.config.duration_ns);
            (label, ns)
        },
        |(c, p, cc), clock| {
            let qlog = opts.qlog.as_ref().map(|d| {
                d.join(&c.id)
                    .join(point_label(*p))
                    .join(file_name(&cc.name))
            });
            let keep = *p == figure_point(c);
            run_one_at(c, *p, cc, opts.timeout, clock, qlog.as_deref(), keep)
        },
    );
    Ok(results
        .into_iter()
        .zip(&jobs)
        .map(|(r, (c, p, cc))| {
            r.unwrap_or_else(|| RunResult {
                case: c.id.clone(),
                point: point_label(*p),
                controller: cc.name.clone(),
                checks: Vec::new(),
                error: Some("the worker running it died".into()),
                samples: Vec::new(),
            })
        })
        .collect())
}

fn point_label(p: Option<Point>) -> String {
    p.map_or("fixed".into(), |p| p.to_string())
}

/// A controller's name as a file name: `bbr3:linux-v3` → `bbr3-linux-v3`,
/// spaces and other separators as `-`.
pub fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One case at one point on one controller, judged; stopped and failed
/// when it takes more than `timeout` of wall-clock time.
pub fn run_one(
    case: &Case,
    point: Option<Point>,
    cc: &Controller,
    timeout: std::time::Duration,
) -> RunResult {
    run_one_with(
        case,
        point,
        cc,
        timeout,
        &runner::progress::SimClock::default(),
    )
}

/// [`run_one`], advancing `clock` with the simulated time, for a
/// progress display.
pub fn run_one_with(
    case: &Case,
    point: Option<Point>,
    cc: &Controller,
    timeout: std::time::Duration,
    clock: &runner::progress::SimClock,
) -> RunResult {
    run_one_at(case, point, cc, timeout, clock, None, false)
}

/// [`run_one_with`], writing the run's qlog into `qlog` (a directory) if
/// given, and keeping its samples in the result if `keep`.
fn run_one_at(
    case: &Case,
    point: Option<Point>,
    cc: &Controller,
    timeout: std::time::Duration,
    clock: &runner::progress::SimClock,
    qlog: Option<&Path>,
    keep: bool,
) -> RunResult {
    let mut result = RunResult {
        case: case.id.clone(),
        point: point_label(point),
        controller: cc.name.clone(),
        checks: Vec::new(),
        error: None,
        samples: Vec::new(),
    };
    let samples = match simulate(case, point, cc, timeout, clock, qlog) {
        Ok(s) => s,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let run_path = match path_of(case, point) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e);
            return result;
        }
    };
    let no_state = cc.no_state();
    result.checks = case
        .checks
        .iter()
        .map(|ch| CheckResult {
            check: ch.kind.text(),
            outcome: judge(&ch.kind, &samples, &run_path, no_state.as_deref()),
        })
        .collect();
    if keep {
        result.samples = samples;
    }
    result
}

/// The scenario of the run, parsed.
pub fn scenario_of(
    case: &Case,
    point: Option<Point>,
    cc: &Controller,
) -> Result<scenario::Run, String> {
    let text = grid::scenario_text(case, point, cc)?;
    let dir = case.path.parent().unwrap_or(Path::new("."));
    let label = case.path.display().to_string();
    let sc = scenario::parse(&text, &label, dir, &case.path).map_err(|e| e.to_string())?;
    match sc.runs.len() {
        1 => {
            let mut run = sc.runs.into_iter().next().expect("one run");
            cc.apply_to(&mut run.config.flows[0]);
            Ok(run)
        }
        n => Err(format!(
            "{label}: a case is one run, this one makes {n} (no [sweep] in a case)"
        )),
    }
}

fn simulate(
    case: &Case,
    point: Option<Point>,
    cc: &Controller,
    timeout: std::time::Duration,
    clock: &runner::progress::SimClock,
    qlog: Option<&Path>,
) -> Result<Vec<FlowSample>, String> {
    let run = scenario_of(case, point, cc)?;
    let qlog = match qlog {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let title = format!("{} {} on {}", case.id, point_label(point), cc.name);
            Some(runner::qlog::QlogWriter::new(
                dir,
                &title,
                vec![cc.name.clone()],
            ))
        }
        None => None,
    };
    let keep = crate::sampled::Keep {
        first_flow_only: true,
        qlog,
    };
    crate::sampled::run(
        &case.id,
        &run,
        keep,
        std::time::Instant::now() + timeout,
        clock,
    )
    .map(|s| s.samples)
    .map_err(|f| match f {
        crate::sampled::Failure::TimedOut(m) => format!(
            "timed out: stopped after {:.0} s of wall-clock time, {m}",
            timeout.as_secs_f64()
        ),
        other => other.to_string(),
    })
}

/// The path's size for the checks' units at `point` (none: the fixed
/// path's own).
pub fn path_at(case: &Case, point: Option<Point>) -> Result<check::Path, String> {
    path_of(case, point)
}

fn path_of(case: &Case, point: Option<Point>) -> Result<check::Path, String> {
    let mss = case
        .scenario
        .get("flow")
        .and_then(|f| f.as_array())
        .and_then(|f| f.first())
        .and_then(|f| f.get("mss"))
        .and_then(|m| m.as_integer())
        .map_or(1500, |m| m.max(1) as u64);
    if let Some(p) = point {
        return Ok(check::Path {
            rtt_ns: p.rtt_ns,
            rate_bps: p.rate_bps,
            mss,
        });
    }
    let run = scenario_of(
        case,
        None,
        &Controller::parse("bbr3").expect("bbr3 is built in"),
    )?;
    let cfg = &run.config;
    let rate_bps = match &cfg.forward.rate {
        link::RateSchedule::Constant(r) => *r,
        link::RateSchedule::Steps(v) if !v.is_empty() => v[0].1,
        link::RateSchedule::Square { high, .. } => *high,
        _ => {
            return Err(format!(
            "{}: a fixed-path case needs a forward rate (constant, steps or square) to judge by",
            case.path.display()
        ))
        }
    };
    Ok(check::Path {
        rtt_ns: cfg.forward.delay_ns + cfg.reverse.delay_ns,
        rate_bps,
        mss,
    })
}
