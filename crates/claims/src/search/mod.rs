//! `bbrlab search`: the path inside a budget ([`budget`]) on which a
//! controller, or a pair, does worst by an objective ([`objective`]),
//! found by CMA-ES and held against uniform random sampling in the same
//! number of evaluations ([`engine`]), with a reading of why for the BBR
//! family ([`reading`]) and the worst path's figures ([`figure`]).
//!
//! Every evaluation is one deterministic simulation of the path with the
//! same scenario seed, so a search repeats for its seed and the worst
//! path's scenario file reproduces its objective under `bbrlab sim`.

pub mod budget;
pub mod engine;
pub mod figure;
pub mod objective;
pub mod reading;
pub mod spec;

use crate::conformance::grid::Controller;
use crate::sampled;
use budget::{Budget, SearchPath};
use objective::Objective;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to search.
#[derive(Clone, Debug)]
pub struct Options {
    /// The path budget.
    pub budget: Budget,
    /// What to make worse.
    pub objective: Objective,
    /// One controller (every flow runs it) or two (one flow each).
    pub controllers: Vec<Controller>,
    /// Flows (with two controllers, 2).
    pub flows: usize,
    /// The flows' transport (`[[flow]] stack`: `linux`, `quic-2018`, ...);
    /// none: each algorithm's default.
    pub stack: Option<String>,
    /// Flows made to run as kernel TCP's do, as `validate` makes its
    /// competing flows ([`crate::validate::tcp_like_flow`]): the kernel's
    /// packet size, TCP's SYN exchange, Linux's first burst, receiver and
    /// pacing; `bbr3` then runs the linux-v3 profile with the stock
    /// kernel's signals (the BPF control's counterpart).
    pub tcp_like: bool,
    /// When each flow starts (sends its first packet), ns from the run's
    /// start, by flow; empty, or a flow past the list's end: at 0. A
    /// kernel replay's flows connect a few microseconds apart, and which
    /// flow's first window reaches the bottleneck first decides much of a
    /// short run of competing flows, so `--confirm` starts the
    /// simulator's flows in the order and at the offsets the kernel's met
    /// the emulator.
    pub flow_starts_ns: Vec<u64>,
    /// Evaluations for each method (CMA-ES, then the random baseline).
    pub evaluations: usize,
    /// The optimizer's and the baseline's seed, and the scenarios'.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// The start of the window the objective is measured over, ns.
    pub warmup_ns: u64,
    /// Wall-clock time one simulation may take; past it the run counts
    /// as failed (at the objective's worst) and is listed.
    pub run_timeout: Duration,
}

/// The default warm-up: 2 s, or 10 of the budget's longest round trips
/// if longer, STARTUP's time on any path the budget allows.
pub fn default_warmup_ns(b: &Budget) -> u64 {
    (10 * (2 * b.delay_ns + b.jitter_ns)).max(2_000_000_000)
}

/// One evaluated path.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Evaluated {
    /// The point, in the unit cube.
    pub x: Vec<f64>,
    /// The path.
    pub path: SearchPath,
    /// The objective's value.
    pub value: f64,
}

/// One method's search.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MethodResult {
    /// `cmaes` or `random`.
    pub method: &'static str,
    /// Every evaluation, in order.
    pub history: Vec<Evaluated>,
    /// The index of the worst in `history`.
    pub worst: usize,
}

impl MethodResult {
    /// The worst evaluation.
    pub fn worst(&self) -> &Evaluated {
        &self.history[self.worst]
    }
}

/// A run that did not complete.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Failed {
    /// The path.
    pub path: SearchPath,
    /// What happened.
    pub message: String,
}

/// A search's outcome.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    /// The objective's name.
    pub objective: &'static str,
    /// Its unit ("" for a ratio).
    pub unit: &'static str,
    /// Whether lower is worse.
    pub lower_is_worse: bool,
    /// The budget.
    pub budget: Budget,
    /// The controllers, by flow.
    pub flows: Vec<String>,
    /// The seed.
    pub seed: u64,
    /// The warm-up, s.
    pub warmup_s: f64,
    /// CMA-ES's search.
    pub cmaes: MethodResult,
    /// The baseline's, with as many evaluations.
    pub random: MethodResult,
    /// Whether CMA-ES found a strictly worse path than the baseline.
    pub beat_baseline: bool,
    /// Runs that did not complete, each once.
    pub failures: Vec<Failed>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// What a long search shows while it goes.
pub trait Progress: Sync {
    /// After each evaluation: the method, evaluations done of `of`.
    fn update(&self, method: &'static str, done: usize, of: usize);
}

/// No display.
pub struct Silent;

impl Progress for Silent {
    fn update(&self, _: &'static str, _: usize, _: usize) {}
}

/// The search's flows: (the controller, its scenario algorithm and
/// profile).
fn flow_controllers(o: &Options) -> Vec<&Controller> {
    if o.controllers.len() == 2 {
        o.controllers.iter().collect()
    } else {
        vec![&o.controllers[0]; o.flows]
    }
}

impl Options {
    /// Checks everything but the controllers' names (parsed already).
    pub fn check(&self) -> Result<(), String> {
        self.budget.check()?;
        match self.controllers.len() {
            1 => {}
            2 if self.flows == 2 => {}
            2 => {
                return Err(format!(
                    "--flows {}: two controllers run one flow each (leave --flows out)",
                    self.flows
                ))
            }
            n => {
                return Err(format!(
                    "--cc: one controller, or two to set against each other; got {n}"
                ))
            }
        }
        if !(1..=8).contains(&self.flows) {
            return Err(format!("--flows {}: from 1 to 8", self.flows));
        }
        if self.flows < self.objective.min_flows() {
            return Err(format!(
                "--objective {} compares flows: give two controllers (--cc bbr,cubic) or --flows 2",
                self.objective.name()
            ));
        }
        if self.objective == Objective::Convergence && self.budget.pieces < 2 {
            return Err(
                "--objective convergence measures after a change of the schedule: give --pieces 2 or more"
                    .into(),
            );
        }
        if !(2..=100_000).contains(&self.evaluations) {
            return Err(format!(
                "--evaluations {}: from 2 to 100000",
                self.evaluations
            ));
        }
        if self.tcp_like {
            if self.stack.is_some() {
                return Err("--tcp-like makes the flows kernel TCP's; leave --stack out".into());
            }
            for c in &self.controllers {
                kernel_name(c)?;
            }
        }
        if let Some(stack) = &self.stack {
            // The simulator's parser knows the stacks and which algorithm
            // each takes.
            let text = self.scenario(&self.budget.path(&[]), &[]);
            scenario::parse(
                &text,
                "--stack",
                std::path::Path::new("."),
                std::path::Path::new("--stack"),
            )
            .map_err(|e| format!("--stack {stack}: {e}"))?;
        }
        if self.warmup_ns.saturating_mul(2) > self.budget.duration_ns {
            return Err(format!(
                "--warmup {} s{}: the objective is measured after it, and it may take at most half of --duration {} s; give a longer --duration or a shorter --warmup",
                self.warmup_ns as f64 / 1e9,
                if self.warmup_ns == default_warmup_ns(&self.budget) {
                    " (the default: 2 s, or 10 of the budget's longest round trips if longer)"
                } else {
                    ""
                },
                self.budget.duration_ns as f64 / 1e9
            ));
        }
        Ok(())
    }

    /// The scenario file of `path`, with `header` comment lines, each
    /// flow starting when `flow_starts_ns` says.
    pub fn scenario(&self, path: &SearchPath, header: &[String]) -> String {
        let flows: Vec<(&str, Option<&str>)> = flow_controllers(self)
            .iter()
            .map(|c| (c.scenario_algorithm(), c.scenario_profile()))
            .collect();
        let text = path.scenario(
            &self.budget,
            &flows,
            &self.flow_starts_ns,
            self.stack.as_deref(),
            self.seed,
            header,
        );
        if !self.tcp_like {
            return text;
        }
        // The same file with kernel-TCP-like flows in place of the plain
        // ones (check() has made sure each controller has a kernel name).
        let mut b = scenario::builder::ScenarioBuilder::new(scenario::builder::Direction::new());
        for (i, c) in flow_controllers(self).iter().enumerate() {
            if let Ok(k) = kernel_name(c) {
                let mut flow = crate::validate::tcp_like_flow(k);
                if let Some(us) = budget::start_us(&self.flow_starts_ns, i) {
                    flow = flow.start(Duration::from_micros(us));
                }
                b = b.flow(flow);
            }
        }
        // The builder's `[[flow]]` tables and their sub-tables, wherever
        // in its file it puts them.
        let mut out = text.split("\n[[flow]]").next().unwrap_or(&text).to_string();
        let mut inside = false;
        for line in b.to_toml().lines() {
            if line.starts_with('[') {
                inside = line.starts_with("[[flow]]") || line.starts_with("[flow.");
                if line.starts_with("[[flow]]") {
                    out.push('\n');
                }
            }
            if inside {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// Runs `path` and returns its samples and the share of a packet's
    /// wire bytes that is payload.
    pub fn simulate(
        &self,
        path: &SearchPath,
    ) -> Result<(Vec<runner::run::FlowSample>, f64), String> {
        let text = self.scenario(path, &[]);
        let sc = scenario::parse(
            &text,
            "search.toml",
            std::path::Path::new("."),
            std::path::Path::new("search.toml"),
        )
        .map_err(|e| format!("the search made a scenario the simulator refuses (a bug): {e}"))?;
        let mut run = sc
            .runs
            .into_iter()
            .next()
            .ok_or("the search's scenario has no run (a bug)")?;
        for (f, cc) in run.config.flows.iter_mut().zip(flow_controllers(self)) {
            cc.apply_to(f);
        }
        let payload = run.config.flows.first().map_or(1.0, |f| {
            let mss = f.cc.mss_bytes as f64;
            mss / (mss + f64::from(f.header_bytes))
        });
        let keep = sampled::Keep {
            first_flow_only: false,
            qlog: None,
        };
        let clock = runner::progress::SimClock::default();
        sampled::run(
            "search",
            &run,
            keep,
            Instant::now() + self.run_timeout,
            &clock,
        )
        .map(|s| (s.samples, payload))
        .map_err(|e| e.to_string())
    }

    /// The objective on `path`, or the failure.
    pub fn evaluate(&self, path: &SearchPath) -> Result<f64, String> {
        let (samples, payload) = self.simulate(path)?;
        Ok(self
            .objective
            .measure(path, &samples, self.flows, self.warmup_ns, payload))
    }

    /// The objective on `path`; for a run that did not complete, the
    /// objective's worst value and why.
    pub fn value_or_worst(&self, path: &SearchPath) -> (f64, Option<String>) {
        match self.evaluate(path) {
            Ok(v) => (v, None),
            Err(e) => (self.objective.worst_value(path), Some(e)),
        }
    }

    /// [`Options::value_or_worst`] for the paths of points `xs`, on
    /// `self.jobs` threads, in the order given: for an outside driver
    /// (Python's, which hands a generation to a Dask worker).
    pub fn evaluate_points(&self, xs: &[Vec<f64>]) -> Result<Vec<(f64, Option<String>)>, String> {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.jobs.max(1))
            .build()
            .map_err(|e| format!("cannot start {} worker threads: {e}", self.jobs))?;
        Ok(pool.install(|| {
            xs.par_iter()
                .map(|x| self.value_or_worst(&self.budget.path(x)))
                .collect()
        }))
    }

    /// The reading of the worst path, for the BBR family (the first
    /// flow's controller); `None` for another, or if the path no longer
    /// runs.
    pub fn reading(&self, path: &SearchPath) -> Option<String> {
        if !self.reads_worst_path() {
            return None;
        }
        let (samples, payload) = self.simulate(path).ok()?;
        self.reading_of(path, &samples, payload)
    }

    /// Whether [`Self::reading_of`] reads a path for this search's
    /// controller: BBR's model only (a loss-based controller has no
    /// estimates to read).
    pub fn reads_worst_path(&self) -> bool {
        self.controllers[0].name.contains("bbr")
    }

    /// [`Self::reading`] from a run of `path` already made (`samples`,
    /// `payload` as [`Self::simulate`] returns them), so that the
    /// command simulates the worst path once for its reading and its
    /// figures.
    pub fn reading_of(
        &self,
        path: &SearchPath,
        samples: &[runner::run::FlowSample],
        payload: f64,
    ) -> Option<String> {
        if !self.reads_worst_path() {
            return None;
        }
        let cc = &self.controllers[0];
        Some(reading::read(
            &reading::Context {
                path,
                objective: self.objective,
                flows: self.flows,
                warmup_ns: self.warmup_ns,
                payload,
                controller: &cc.name,
                reports_state: cc.no_state().is_none(),
            },
            samples,
        ))
    }
}

/// The kernel's name for `c`'s algorithm, for flows made like kernel
/// TCP's (`tcp_like`); a QUIC stack's controller has none.
pub fn kernel_name(c: &Controller) -> Result<&'static str, String> {
    c.scenario_algorithm()
        .parse::<congestion::Algorithm>()
        .map(|a| a.kernel_name())
        .map_err(|_| {
            format!(
                "--tcp-like: {} is a QUIC stack's controller, not one kernel TCP runs",
                c.name
            )
        })
}

/// Runs the search: CMA-ES, then the baseline with as many evaluations.
pub fn run(o: &Options, progress: &dyn Progress) -> Result<Report, String> {
    o.check()?;
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start {} worker threads: {e}", o.jobs))?;
    let dim = o.budget.dimensions().len();
    let failures: Mutex<Vec<Failed>> = Mutex::new(Vec::new());
    let f = |x: &[f64]| -> f64 {
        let path = o.budget.path(x);
        let (value, failed) = o.value_or_worst(&path);
        if let Some(message) = failed {
            let mut all = failures.lock().expect("no evaluation panics holding it");
            if !all.iter().any(|x| x.path == path) {
                all.push(Failed { path, message });
            }
        }
        o.objective.badness(value)
    };
    let c = engine::cmaes(dim, o.evaluations, o.seed, &pool, &f, &|n| {
        progress.update("cmaes", n, o.evaluations)
    });
    let r = engine::random(dim, c.len(), o.seed, &pool, &f, &|n| {
        progress.update("random", n, c.len())
    });
    let result = |method: &'static str, h: Vec<engine::Point>| -> MethodResult {
        let worst = engine::worst(&h)
            .and_then(|w| h.iter().position(|p| std::ptr::eq(p, w)))
            .unwrap_or(0);
        MethodResult {
            method,
            history: h
                .into_iter()
                .map(|p| Evaluated {
                    path: o.budget.path(&p.x),
                    value: o.objective.badness(p.badness),
                    x: p.x,
                })
                .collect(),
            worst,
        }
    };
    let (cmaes, random) = (result("cmaes", c), result("random", r));
    if cmaes.history.is_empty() {
        return Err(format!(
            "--evaluations {}: fewer than one CMA-ES generation ({} points for {dim} free numbers)",
            o.evaluations,
            4 + (3.0 * (dim as f64).ln()).floor() as usize
        ));
    }
    let beat_baseline = random.history.is_empty()
        || o.objective.badness(cmaes.worst().value) > o.objective.badness(random.worst().value);
    Ok(Report {
        objective: o.objective.name(),
        unit: o.objective.unit(),
        lower_is_worse: o.objective.lower_is_worse(),
        budget: o.budget.clone(),
        flows: flow_controllers(o).iter().map(|c| c.name.clone()).collect(),
        seed: o.seed,
        warmup_s: o.warmup_ns as f64 / 1e9,
        cmaes,
        random,
        beat_baseline,
        failures: failures.into_inner().unwrap_or_default(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_like_flows_are_validates_and_refuse_a_stack_controller() {
        let spec = |cc: &str| spec::Spec {
            cc: cc.split(',').map(String::from).collect(),
            tcp_like: true,
            ..Default::default()
        };
        let o = spec("bbr,cubic").options(1).unwrap();
        let text = o.scenario(&o.budget.path(&[]), &[]);
        for want in [
            "handshake = \"tcp\"",
            "ack = \"linux\"",
            "mss = 1448",
            "header_bytes = 52",
            "initial_burst = 10",
            "hystart_variant = \"linux\"",
        ] {
            assert!(text.contains(want), "{want}:\n{text}");
        }
        let sc = scenario::parse(
            &text,
            "s.toml",
            std::path::Path::new("."),
            std::path::Path::new("s.toml"),
        )
        .unwrap();
        assert_eq!(sc.runs[0].config.flows.len(), 2);
        assert_eq!(sc.runs[0].config.flows[0].header_bytes, 52);
        let e = spec("s2n:bbr2").options(1).unwrap_err();
        assert!(e.contains("QUIC stack"), "{e}");
    }

    /// `flow_starts_ns` starts each flow when told, plain or kernel-like,
    /// to the microsecond (rounded up, so a flow a few hundred ns behind
    /// is still behind); flows past the list's end start at 0.
    #[test]
    fn flows_start_when_told_in_either_kind_of_scenario() {
        for tcp_like in [false, true] {
            let mut o = spec::Spec {
                cc: vec!["bbr".into(), "cubic".into()],
                tcp_like,
                ..Default::default()
            }
            .options(1)
            .unwrap();
            let path = o.budget.path(&[]);
            let all_at_zero = o.scenario(&path, &[]);
            assert!(!all_at_zero.contains("start ="), "{all_at_zero}");
            o.flow_starts_ns = vec![6_400, 0];
            let text = o.scenario(&path, &[]);
            let sc = scenario::parse(
                &text,
                "s.toml",
                std::path::Path::new("."),
                std::path::Path::new("s.toml"),
            )
            .unwrap_or_else(|e| panic!("{e}:\n{text}"));
            let starts: Vec<u64> = sc.runs[0].config.flows.iter().map(|f| f.start_ns).collect();
            assert_eq!(starts, [7_000, 0], "tcp_like {tcp_like}:\n{text}");
            // A list shorter than the flows starts the rest at 0.
            o.flow_starts_ns = vec![250_000_000];
            let sc = scenario::parse(
                &o.scenario(&path, &[]),
                "s.toml",
                std::path::Path::new("."),
                std::path::Path::new("s.toml"),
            )
            .unwrap();
            let starts: Vec<u64> = sc.runs[0].config.flows.iter().map(|f| f.start_ns).collect();
            assert_eq!(starts, [250_000_000, 0]);
        }
    }

    /// The worst path is read (and so simulated once more for it) only for
    /// a BBR controller; a loss-based one has no model to read, and
    /// `reading` answers without a simulation.
    #[test]
    fn only_a_bbr_controllers_worst_path_is_read() {
        let spec = |cc: &str| spec::Spec {
            cc: cc.split(',').map(String::from).collect(),
            ..Default::default()
        };
        for (cc, reads) in [
            ("bbr", true),
            ("bbr3", true),
            ("cubic", false),
            ("reno,bbr", false),
        ] {
            let o = spec(cc).options(1).unwrap();
            assert_eq!(o.reads_worst_path(), reads, "{cc}");
        }
        let o = spec("cubic").options(1).unwrap();
        assert_eq!(o.reading(&o.budget.path(&[])), None);
        let o = spec("bbr").options(1).unwrap();
        assert!(o.reading(&o.budget.path(&[])).is_some());
    }
}
