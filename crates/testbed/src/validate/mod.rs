//! `bbrlab validate`: is the simulator right about real TCP?
//!
//! A matrix of single-flow paths (rate, RTT, buffer in BDPs, random loss,
//! delay jitter) runs through `bbrlab compare` for each algorithm and
//! repetition: the simulator (matched to each real source's packet and
//! header sizes), kernel TCP through `bbrlab emu`, and, for `bbr`, the UDP
//! transport and s2n-quic with bbrlab's `bbr` through its adapter
//! (`quic-bulk`, when it is built) through `bbrlab emu`. Every figure therefore comes from the
//! one comparison code path, with its normalisations (payload goodput over
//! a common window from the first data packet, srtt, retransmitted
//! packets). Validate adds the matrix, the repetitions, the differences
//! against kernel TCP per path and per figure, the verdict against the
//! bounds, `validate.json` and a Markdown table generated from that JSON.
//!
//! [`multiflow`] (`validate --multiflow`) is the competing-flow
//! counterpart: several kernel TCP flows on one emulated bottleneck
//! against the simulator, its section of `validate.json` and its table.

pub mod multiflow;

// The matrix, the bounds and the tables are claims' (pure); the run
// loops here use them as their own.
pub use claims::validate::*;

use crate::compare;
use crate::compare_report::CompareReport;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The algorithms `--algorithms` takes, each by the name of the Linux
/// control that runs it ([`congestion::Algorithm::kernel_name`]: the
/// kernel's own, or [`BBR3_KERNEL`] for BBRv3). `bbr-jitter` is left
/// out: the matrix's paths and bounds were never set up for seed 001's
/// variant, whose own checks are the claims'.
pub fn algorithms() -> Vec<&'static str> {
    congestion::Algorithm::ALL
        .into_iter()
        .filter(|a| *a != congestion::Algorithm::BbrJitter)
        .map(congestion::Algorithm::kernel_name)
        .collect()
}

/// What `bbrlab validate` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// Output directory.
    pub out: PathBuf,
    /// The quick subset, one repetition.
    pub quick: bool,
    /// Only these paths (names from the matrix).
    pub only: Option<Vec<String>>,
    /// Repetitions per path and algorithm (default 3; 1 with `--quick`).
    pub reps: Option<usize>,
    /// Seconds per transfer (default 10; 6 with `--quick`).
    pub seconds: Option<u64>,
    /// Algorithms (the command's default: bbr and cubic). With
    /// `resimulate`, the rows to judge again (empty: every row).
    pub algorithms: Vec<String>,
    /// quic-bulk for the s2n-quic rows (default: next to this binary).
    pub quic_bulk: Option<PathBuf>,
    /// The receiver of the simulation matched to kernel TCP: `every` (an
    /// ACK per packet) or `linux` (Linux's, the simulator's default).
    pub ack: &'static str,
    /// The sender's pacer in the simulation matched to kernel TCP
    /// (`--sim-pacing`): Linux's (the default) or one packet at a time.
    pub pacer: SimPacer,
    /// The simulation matched to kernel TCP keeps TCP timestamps
    /// (`--sim-timestamps`, [`claims::validate::sim_timestamps`]).
    pub timestamps: bool,
    /// Keep an earlier run's rows that this run does not make
    /// (`merge_rows`).
    pub update: bool,
    /// Rows (path and algorithm) run at once, each on its own emulated
    /// path (1: one after another).
    pub jobs: usize,
    /// Run no real transfers: judge the simulator, run afresh, against
    /// the kernel (and UDP and s2n-quic) runs an earlier single-flow run
    /// left in `out` (`validate --resimulate`). Needs no root.
    pub resimulate: bool,
}

impl Options {
    /// The simulator's scenario of path `p` and `alg` for repetition
    /// `rep` (its seed), as this run simulates it: its pacer, and
    /// timestamps with `--sim-timestamps`.
    fn row_scenario(
        &self,
        p: &PathSpec,
        alg: &str,
        seconds: u64,
        rep: usize,
    ) -> Result<String, String> {
        let text = scenario_toml_paced(p, alg, seconds, 1 + rep as u64, self.pacer);
        if self.timestamps {
            claims::validate::sim_timestamps::apply(&text, 1)
        } else {
            Ok(text)
        }
    }

    /// The receiver (a scenario's `ack`) `ack` names for the
    /// kernel-matched simulation, always written out: the scenario's own
    /// default (Linux's receiver since 2026-12-02) would otherwise decide
    /// for `--sim-ack every`.
    fn kernel_ack(&self) -> Option<&'static str> {
        Some(if self.ack == "linux" {
            "linux"
        } else {
            "every"
        })
    }
}

/// Sets the keys of `fields` (an object) in `out/validate.json`, keeping
/// the sections a run of the other kind wrote there (single-flow `paths`
/// and its figures, competing-flow `multiflow`); returns the whole
/// document.
fn merge_into_validate_json(out: &Path, fields: Value) -> Result<Value, String> {
    let path = out.join("validate.json");
    let mut doc = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    for (k, v) in fields.as_object().into_iter().flatten() {
        doc[k] = v.clone();
    }
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(doc)
}

/// Goodput (Mbit/s) and median srtt (ms) of one source.
type Fig = (f64, Option<f64>);

/// The figures of one compare run: (goodput Mbit/s, median srtt ms) for
/// the kernel, the simulator matched to it, the UDP transport and the
/// simulator matched to that, and s2n-quic's and the simulator matched to it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Figures {
    kernel: Option<Fig>,
    sim_kernel: Option<Fig>,
    udp: Option<Fig>,
    sim_udp: Option<Fig>,
    s2n: Option<Fig>,
    sim_s2n: Option<Fig>,
    /// The s2n-quic run failed (compare.json's `failed_sources`).
    s2n_failed: bool,
    /// Why the kernel TCP run failed, and the UDP transport's
    /// (compare.json's `failed_sources`).
    kernel_failed: Option<String>,
    udp_failed: Option<String>,
    /// Retransmitted packets of the kernel run and of the simulator run
    /// matched to it.
    kernel_retx: Option<f64>,
    sim_kernel_retx: Option<f64>,
    /// Largest share of the run in which any emulated source's forwarder
    /// could not run while packets fell due (`stalled_fraction` of
    /// `bbrlab emu --stats`); `None` without the emulator's figures.
    emulator_stalled: Option<f64>,
}

/// Runs of one repetition at most, while the emulator stalls too long
/// ([`linkem::stall::max_stalled_fraction`]); the last one is kept, marked, if none is
/// clean.
pub const MAX_ATTEMPTS: usize = 3;

/// Wait before running a stalled repetition again.
const RERUN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A compare run's figures ([`CompareReport`], what `bbrlab compare`
/// writes), per source.
fn figures_of(report: &CompareReport) -> Figures {
    let mut f = Figures::default();
    for s in &report.sources {
        let Some(g) = s.goodput_mbps else { continue };
        let r = s.srtt_median_ms;
        let matched = s.matched_to.as_deref().unwrap_or("");
        let retx = s.retransmitted_packets.map(|n| n as f64);
        if let Some(p) = s.emulator_stalled() {
            f.emulator_stalled = Some(f.emulator_stalled.map_or(p, |q: f64| q.max(p)));
        }
        match (s.kind.as_str(), matched) {
            ("kernel", _) => (f.kernel, f.kernel_retx) = (Some((g, r)), retx),
            ("simulator", m) if m.starts_with("kernel") => {
                (f.sim_kernel, f.sim_kernel_retx) = (Some((g, r)), retx)
            }
            ("udp", _) => f.udp = Some((g, r)),
            ("s2n", _) => f.s2n = Some((g, r)),
            ("simulator", m) if m.starts_with("UDP") => f.sim_udp = Some((g, r)),
            ("simulator", m) if m.starts_with("s2n") => f.sim_s2n = Some((g, r)),
            _ => {}
        }
    }
    let failed = |kind: &str| report.failure(kind).map(|s| s.error.clone());
    f.s2n_failed = failed("s2n").is_some();
    f.kernel_failed = failed("kernel");
    f.udp_failed = failed("udp");
    f
}

/// [`figures_of`] a `compare.json` document already parsed as JSON.
#[cfg(test)]
fn read_figures(doc: &Value) -> Result<Figures, String> {
    let report: CompareReport =
        serde_json::from_value(doc.clone()).map_err(|e| format!("compare.json: {e}"))?;
    Ok(figures_of(&report))
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Mean goodput and mean median srtt over repetitions.
fn average(xs: &[(f64, Option<f64>)]) -> Option<(f64, Option<f64>)> {
    let g = mean(&xs.iter().map(|x| x.0).collect::<Vec<_>>())?;
    let r: Vec<f64> = xs.iter().filter_map(|x| x.1).collect();
    Some((g, mean(&r)))
}

/// `--jobs` within what the machine can emulate at once: every job's
/// emulator has a forwarding thread at real-time priority, and one more
/// of those than there are cores stalls them all.
fn check_jobs(jobs: usize) -> Result<(), String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    check_jobs_on(jobs, cores)
}

/// Above this rate two transfers at once were host-limited on a 2-core
/// machine (validate's whole matrix with `--jobs 2`, 2026-11-29: kernel
/// `cubic` 70.5 against 96.4 Mbit/s alone at 100 Mbit/s, the UDP
/// transport and s2n-quic 15–32 % short at 50 and 100 Mbit/s), while at
/// 20 Mbit/s and below the two ways agreed.
pub const JOBS_RATE_LIMIT_MBIT: f64 = 20.0;

/// What to tell a user who runs `jobs` rows at once over `paths`: the
/// paths faster than [`JOBS_RATE_LIMIT_MBIT`], whose rows are better run
/// one at a time.
fn jobs_note(jobs: usize, paths: &[PathSpec]) -> Option<String> {
    let fast: Vec<&str> = paths
        .iter()
        .filter(|p| p.rate_mbit > JOBS_RATE_LIMIT_MBIT)
        .map(|p| p.name)
        .collect();
    (jobs > 1 && !fast.is_empty()).then(|| {
        format!(
            "validate: note: with --jobs {jobs}, rows above {JOBS_RATE_LIMIT_MBIT} Mbit/s ({}) were host-limited on a 2-core machine; if they miss, run them again one at a time: --update --jobs 1 --only {}",
            fast.join(", "),
            fast.join(",")
        )
    })
}

fn check_jobs_on(jobs: usize, cores: usize) -> Result<(), String> {
    if jobs == 0 || jobs > cores {
        return Err(format!(
            "--jobs {jobs}: between 1 and this machine's {cores} cores (each job's emulator forwards on a core of its own at real-time priority)"
        ));
    }
    Ok(())
}

/// A row of validate.json and the simulator's statistics of its last run.
type RowResult = Result<(Value, Value), String>;

/// A row that could not be measured at all (its repetitions never got as
/// far as a comparison): a miss, with the error, in the row's usual shape
/// so the table shows it ("n run(s) failed ✗").
fn failed_row(p: &PathSpec, alg: &str, reps: usize, error: &str) -> Value {
    let failed = Figures {
        kernel_failed: Some(error.to_string()),
        ..Figures::default()
    };
    let mut row = row_of(p, alg, &vec![failed; reps.max(1)], 0);
    row["error"] = json!(error);
    row
}

/// What every row of a single-flow run shares.
struct RowContext<'a> {
    opts: &'a Options,
    reps: usize,
    seconds: u64,
    quic_bulk: Option<&'a Path>,
    progress: &'a Progress,
}

/// Repetitions done of all, for the progress lines (rows may run at once).
struct Progress {
    total: usize,
    started: Instant,
    /// Repetitions started: each progress line's own index, so two rows
    /// run at once (`--jobs`) never print the same one.
    begun: AtomicUsize,
    done: AtomicUsize,
}

impl Progress {
    /// "ETA …" from the wall clock per repetition done so far.
    fn eta(&self) -> String {
        let done = self.done.load(Ordering::SeqCst);
        if done == 0 {
            return String::from("?");
        }
        let per = self.started.elapsed().as_secs_f64() / done as f64;
        format!("{:.0} s", per * self.total.saturating_sub(done) as f64)
    }
}

/// One path and algorithm: its repetitions through `compare` (each run
/// again while the emulator stalled or the kernel run failed, up to
/// [`MAX_ATTEMPTS`]), averaged and judged. Returns the row and the
/// simulator's statistics of its last run.
fn validate_row(ctx: &RowContext, p: &PathSpec, alg: &str) -> RowResult {
    let (opts, reps, seconds, quic_bulk) = (ctx.opts, ctx.reps, ctx.seconds, ctx.quic_bulk);
    let mut statistics = Value::Null;
    let mut runs: Vec<Figures> = Vec::new();
    let mut reruns = 0usize;
    let max_stalled = linkem::stall::max_stalled_fraction(p.rtt_ms);
    for rep in 0..reps {
        let dir = opts.out.join(p.name).join(alg).join(format!("rep-{rep}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let toml = dir.join("scenario.toml");
        std::fs::write(&toml, opts.row_scenario(p, alg, seconds, rep)?)
            .map_err(|e| format!("cannot write {}: {e}", toml.display()))?;
        eprintln!(
            "validate: [{}/{}] {} {alg} rep {} (ETA {})",
            ctx.progress.begun.fetch_add(1, Ordering::SeqCst) + 1,
            ctx.progress.total,
            p.name,
            rep + 1,
            ctx.progress.eta()
        );
        let mut with = vec![compare::Source::Kernel];
        if alg == "bbr" {
            with.push(compare::Source::Udp);
            if quic_bulk.is_some() {
                with.push(compare::Source::S2n);
            }
        }
        for attempt in 1..=MAX_ATTEMPTS {
            // A repetition that cannot be compared at all is kept as a
            // failed run beside the ones that ran (their figures stay).
            let compared = compare::run_with(
                &toml,
                &with,
                Some(dir.clone()),
                quic_bulk,
                opts.kernel_ack(),
                None,
            )
            .and_then(|_| CompareReport::read(&dir));
            let report = match compared {
                Ok(r) => r,
                Err(e) => {
                    eprintln!(
                        "validate: {} {alg} rep {}: FAILED: {e}; kept as a failed run",
                        p.name,
                        rep + 1
                    );
                    runs.push(Figures {
                        kernel_failed: Some(e),
                        ..Figures::default()
                    });
                    break;
                }
            };
            statistics = serde_json::to_value(&report.statistics).map_err(|e| e.to_string())?;
            let figures = figures_of(&report);
            let stalled = figures.emulator_stalled.unwrap_or(0.0);
            // Without its kernel run a repetition has nothing to
            // compare with: it is run again, as a stalled one is.
            if let Some(why) = &figures.kernel_failed {
                eprintln!(
                    "validate: {} {alg} rep {}: FAILED: the kernel TCP run: {why}{}",
                    p.name,
                    rep + 1,
                    if attempt < MAX_ATTEMPTS {
                        "; running it again"
                    } else {
                        "; kept as a failed run"
                    }
                );
            }
            let clean = stalled <= max_stalled && figures.kernel_failed.is_none();
            if clean || attempt == MAX_ATTEMPTS {
                if stalled > max_stalled {
                    eprintln!(
                        "validate: {} {alg} rep {}: the emulator's forwarder still could not run {:.1} % of the run after {MAX_ATTEMPTS} runs; kept, and marked in the results",
                        p.name,
                        rep + 1,
                        stalled * 100.0
                    );
                }
                runs.push(figures);
                break;
            }
            reruns += 1;
            eprintln!(
                "validate: {} {alg} rep {}: the emulator's forwarder could not run {:.1} % of the run (the machine did not give it the CPU; over {:.1} %), running it again ({}/{MAX_ATTEMPTS})",
                p.name,
                rep + 1,
                stalled * 100.0,
                max_stalled * 100.0,
                attempt + 1
            );
            // A neighbour's burst often passes in seconds.
            std::thread::sleep(RERUN_WAIT);
        }
        ctx.progress.done.fetch_add(1, Ordering::SeqCst);
    }
    Ok((row_of(p, alg, &runs, reruns), statistics))
}

/// A path and algorithm's row of validate.json from its repetitions'
/// figures (`runs`): the sources' means, judged against the kernel's
/// with [`bounds_for`] `alg`; `reruns`: repetitions run again while the
/// emulator stalled.
fn row_of(p: &PathSpec, alg: &str, runs: &[Figures], reruns: usize) -> Value {
    let reps = runs.len();
    let max_stalled = linkem::stall::max_stalled_fraction(p.rtt_ms);
    let stalled_max = runs
        .iter()
        .filter_map(|f| f.emulator_stalled)
        .reduce(f64::max);
    let emulator = json!({
        "stalled_pct_max": stalled_max.map(|p| p * 100.0),
        "reruns": reruns,
        "stalled_pct_limit": max_stalled * 100.0,
        "stalled": stalled_max.is_some_and(|p| p > max_stalled),
    });
    let avg =
        |f: fn(&Figures) -> Option<Fig>| average(&runs.iter().filter_map(f).collect::<Vec<_>>());
    let kernel = avg(|f| f.kernel);
    let sim = avg(|f| f.sim_kernel);
    let udp = avg(|f| f.udp);
    let retx =
        |f: fn(&Figures) -> Option<f64>| mean(&runs.iter().filter_map(f).collect::<Vec<_>>());
    let (kernel_retx, sim_retx) = (retx(|f| f.kernel_retx), retx(|f| f.sim_kernel_retx));
    let b = bounds_for(alg);
    // Failed real runs: the averages are over the repetitions that
    // ran; with none, the comparison misses its bounds and says why.
    let failures = |f: fn(&Figures) -> &Option<String>| -> (usize, Option<String>) {
        let why: Vec<&String> = runs.iter().filter_map(|r| f(r).as_ref()).collect();
        (why.len(), why.last().map(|w| w.to_string()))
    };
    let (kernel_failures, kernel_why) = failures(|f| &f.kernel_failed);
    let (udp_failures, udp_why) = failures(|f| &f.udp_failed);
    let missed =
        |n: usize, why: Option<String>| json!({ "within": false, "failed_runs": n, "error": why });
    let sim_vs = match (sim, kernel) {
        (Some(s), Some(k)) => judge_retx(s, k, sim_retx, kernel_retx, b),
        (_, None) if kernel_failures > 0 => missed(kernel_failures, kernel_why.clone()),
        _ => Value::Null,
    };
    let udp_vs = match (udp, kernel) {
        (Some(u), Some(k)) => judge(u, k, b),
        (None, _) if udp_failures > 0 => missed(udp_failures, udp_why.clone()),
        (_, None) if kernel_failures > 0 => missed(kernel_failures, kernel_why.clone()),
        _ => Value::Null,
    };
    let s2n = avg(|f| f.s2n);
    let s2n_failures = runs.iter().filter(|f| f.s2n_failed).count();
    let s2n_vs = match (s2n, kernel) {
        // A failed run misses the goal whatever the others show.
        _ if s2n_failures > 0 => json!({
            "within": false,
            "failed_runs": s2n_failures,
        }),
        (Some(u), Some(k)) => judge(u, k, b),
        _ => Value::Null,
    };
    json!({
        "path": p.name,
        "rate_mbit": p.rate_mbit,
        "rtt_ms": p.rtt_ms,
        "buffer_bdp": p.buffer_bdp,
        "queue_packets": queue_packets(p),
        "loss": p.loss,
        "jitter_sd_ms": p.jitter_sd_ms,
        "algorithm": alg,
        "repetitions": reps,
        "kernel": pair(kernel),
        "simulator": pair(sim),
        "kernel_retransmitted_packets": kernel_retx,
        "simulator_retransmitted_packets": sim_retx,
        "udp": pair(udp),
        "simulator_udp": pair(avg(|f| f.sim_udp)),
        "simulator_vs_kernel": sim_vs,
        "udp_vs_kernel": udp_vs,
        "s2n": pair(s2n),
        "simulator_s2n": pair(avg(|f| f.sim_s2n)),
        "s2n_vs_kernel": s2n_vs,
        "emulator": emulator,
        "kernel_failed_runs": kernel_failures,
        "udp_failed_runs": udp_failures,
    })
}

/// Runs the matrix. Returns whether every path met its bounds.
pub fn run(opts: &Options) -> Result<bool, String> {
    if opts.resimulate {
        return resimulate(opts);
    }
    if !crate::host::is_root() {
        return Err(
            "validate runs kernel TCP and the UDP transport through `bbrlab emu`, which needs root (network namespaces and TUN devices); run it as root".into(),
        );
    }
    check_jobs(opts.jobs)?;
    let known = algorithms();
    for a in &opts.algorithms {
        if !known.contains(&a.as_str()) {
            return Err(format!(
                "--algorithms: `{a}` has no kernel counterpart to validate against; use {}",
                known.join(", ")
            ));
        }
    }
    // bbrlab_bbr3 must be registered: loaded here if it is not (and
    // unloaded when validate ends, however it ends), else an error that
    // says how to load it.
    let _loaded = if opts.algorithms.iter().any(|a| a == BBR3_KERNEL) {
        ensure_loaded(BBR3_KERNEL)?
    } else {
        None
    };
    // s2n-quic with bbrlab's bbr joins bbr's rows when quic-bulk is built;
    // without it the column stays empty and this says why.
    let quic_bulk = match crate::quic_bulk::locate(opts.quic_bulk.as_deref()) {
        Ok(p) => Some(p),
        Err(e) if opts.quic_bulk.is_some() => return Err(e),
        Err(e) => {
            if opts.algorithms.iter().any(|a| a == "bbr") {
                eprintln!("validate: no s2n-quic rows: {e}");
            }
            None
        }
    };
    let paths: Vec<PathSpec> = match &opts.only {
        Some(names) => paths_named(names)?,
        None if opts.quick => MATRIX
            .iter()
            .filter(|p| QUICK.contains(&p.name))
            .copied()
            .collect(),
        None => MATRIX.to_vec(),
    };
    if let Some(note) = jobs_note(opts.jobs, &paths) {
        eprintln!("{note}");
    }
    let reps = opts.reps.unwrap_or(if opts.quick { 1 } else { 3 }).max(1);
    let seconds = opts
        .seconds
        .unwrap_or(if opts.quick { 6 } else { 10 })
        .max(2);
    // `--update` checks the earlier run before any of this one's: a
    // mismatch found after the runs would waste them.
    let earlier = if opts.update {
        Some(earlier_rows(
            &opts.out.join("validate.json"),
            seconds,
            reps,
            opts.ack,
            opts.pacer,
            opts.timestamps,
        )?)
    } else {
        None
    };
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let work: Vec<(&PathSpec, &str)> = paths
        .iter()
        .flat_map(|p| opts.algorithms.iter().map(move |a| (p, a.as_str())))
        .collect();
    let progress = Progress {
        total: work.len() * reps,
        started: Instant::now(),
        begun: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
    };
    let ctx = RowContext {
        opts,
        reps,
        seconds,
        quic_bulk: quic_bulk.as_deref(),
        progress: &progress,
    };
    // `--jobs`: that many rows at once, each on its own emulated path;
    // the rows keep the matrix's order whichever ends first.
    let jobs = opts.jobs.clamp(1, work.len().max(1));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<RowResult>>> = work.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= work.len() {
                    break;
                }
                let (p, alg) = work[i];
                let row = validate_row(&ctx, p, alg);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(row);
            });
        }
    });
    // A row that fails stays in the table as a miss with its reason, and
    // the others are kept: one broken path must not lose a whole run.
    let mut results = Vec::new();
    let mut statistics = Value::Null;
    let mut row_errors = Vec::new();
    for (slot, (p, alg)) in slots.into_iter().zip(&work) {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok((row, stats))) => {
                results.push(row);
                statistics = stats;
            }
            Some(Err(e)) => {
                eprintln!(
                    "validate: FAILED: {} {alg}: {e}; kept as a failed row",
                    p.name
                );
                results.push(failed_row(p, alg, reps, &e));
                row_errors.push(format!("{} {alg}", p.name));
            }
            None => {}
        }
    }
    if !row_errors.is_empty() {
        eprintln!(
            "validate: {} of {} rows failed ({}); validate.json keeps each with its error",
            row_errors.len(),
            work.len(),
            row_errors.join(", ")
        );
    }
    let total = progress.total;
    let started = progress.started;
    if let Some(earlier) = &earlier {
        results = merge_rows(earlier, results);
    }
    let written = write_results(opts, seconds, reps, statistics, results)?;
    eprintln!(
        "validate: {} runs in {:.0} s",
        total,
        started.elapsed().as_secs_f64()
    );
    Ok(written)
}

/// Writes the single-flow rows into `out/validate.json` (keeping a
/// competing-flow section) and `out/validate.md`, and prints the table.
/// Returns whether every row met its bounds.
fn write_results(
    opts: &Options,
    seconds: u64,
    reps: usize,
    statistics: Value,
    results: Vec<Value>,
) -> Result<bool, String> {
    let all_within = results.iter().all(|r| {
        r["simulator_vs_kernel"]["within"].as_bool() != Some(false)
            && r["udp_vs_kernel"]["within"].as_bool() != Some(false)
            && r["s2n_vs_kernel"]["within"].as_bool() != Some(false)
    });
    let single = json!({
        "seconds_per_run": seconds,
        "repetitions": reps,
        "simulator_ack": opts.ack,
        "simulator_pacer": opts.pacer.name(),
        "simulator_timestamps": opts.timestamps,
        "simulator_host_noise": host_noise_json(),
        "bounds": bounds_json(),
        "statistics": statistics,
        "all_within": all_within,
        "paths": results,
    });
    // The single-flow figures are the document's top level (as before
    // the competing-flow section); a `multiflow` section stays.
    let json_path = opts.out.join("validate.json");
    let doc = merge_into_validate_json(&opts.out, single)?;
    let md = markdown(&doc)?;
    let md_path = opts.out.join("validate.md");
    std::fs::write(&md_path, &md)
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    println!("{md}");
    eprintln!(
        "validate: wrote {} and {}",
        json_path.display(),
        md_path.display(),
    );
    Ok(all_within)
}

/// `validate --resimulate`: the simulator, run afresh with `opts.ack`,
/// judged against the real runs an earlier single-flow run left in
/// `opts.out` (its rows, or `--only`'s paths; its run length and
/// repetitions). Each repetition's directory keeps its real sources'
/// logs and figures in `compare.json`; [`compare::resimulate`] replaces
/// the simulator rows there. The simulator is deterministic, so this is
/// what a full run would give on the simulator's side, in seconds and
/// without root. With `--only` or `--algorithms`, the other rows are kept
/// as they were.
fn resimulate(opts: &Options) -> Result<bool, String> {
    let json_path = opts.out.join("validate.json");
    let text = std::fs::read_to_string(&json_path).map_err(|e| {
        format!(
            "--resimulate judges the simulator against the real runs an earlier `validate --out {}` left there, but {} cannot be read: {e}",
            opts.out.display(),
            json_path.display()
        )
    })?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", json_path.display()))?;
    let (Some(seconds), Some(reps), Some(rows)) = (
        doc["seconds_per_run"].as_u64(),
        doc["repetitions"].as_u64(),
        doc["paths"].as_array(),
    ) else {
        return Err(format!(
            "{} has no single-flow run (seconds_per_run, repetitions and paths); run `validate --out {}` first",
            json_path.display(),
            opts.out.display()
        ));
    };
    let reps = reps.max(1) as usize;
    let name = |r: &Value| r["path"].as_str().unwrap_or("").to_string();
    let algorithm = |r: &Value| r["algorithm"].as_str().unwrap_or("").to_string();
    if let Some(only) = &opts.only {
        let have: Vec<String> = rows.iter().map(name).collect();
        if let Some(n) = only.iter().find(|n| !have.contains(n)) {
            return Err(format!(
                "--only: the run in {} has no path `{n}`; it has: {}",
                opts.out.display(),
                have.join(", ")
            ));
        }
    }
    if let Some(a) = opts
        .algorithms
        .iter()
        .find(|a| !rows.iter().any(|r| &algorithm(r) == *a))
    {
        let mut have: Vec<String> = rows.iter().map(algorithm).collect();
        have.sort();
        have.dedup();
        return Err(format!(
            "--algorithms: the run in {} has no `{a}` rows; it has: {}",
            opts.out.display(),
            have.join(", ")
        ));
    }
    let partial = opts.only.is_some() || !opts.algorithms.is_empty();
    if partial {
        let what = "--resimulate with --only or --algorithms";
        check_earlier_noise(&doc, what)?;
        check_earlier_pacer(&doc, what, opts.pacer)?;
        check_earlier_timestamps(&doc, what, opts.timestamps)?;
    }
    let had = doc["simulator_ack"].as_str().unwrap_or("every");
    if partial && had != opts.ack {
        return Err(format!(
            "--resimulate with --only or --algorithms keeps the other rows, whose simulator had --sim-ack {had}; this run's has {}: one table would mix two receivers (judge every row, or use --sim-ack {had})",
            opts.ack
        ));
    }
    let wanted = |r: &Value| {
        opts.only.as_ref().is_none_or(|o| o.contains(&name(r)))
            && (opts.algorithms.is_empty() || opts.algorithms.contains(&algorithm(r)))
    };
    let total = rows.iter().filter(|r| wanted(r)).count();
    let mut statistics = Value::Null;
    let mut results = Vec::new();
    for (i, r) in rows.iter().filter(|r| wanted(r)).enumerate() {
        let path = paths_named(&[name(r)])?[0];
        let alg = r["algorithm"].as_str().unwrap_or("");
        if !algorithms().contains(&alg) {
            return Err(format!(
                "{}: row {} has algorithm `{alg}`, which validate does not know",
                json_path.display(),
                path.name
            ));
        }
        eprintln!(
            "validate: [{}/{total}] {} {alg}: simulating again",
            i + 1,
            path.name
        );
        // A row the earlier run could not measure at all has nothing to
        // simulate against: it stays as it was.
        if r.get("error").is_some_and(|e| !e.is_null()) {
            eprintln!(
                "validate: {} {alg}: the earlier run failed ({}); kept as it was",
                path.name, r["error"]
            );
            results.push(r.clone());
            continue;
        }
        let mut runs = Vec::new();
        for rep in 0..reps {
            let dir = opts
                .out
                .join(path.name)
                .join(alg)
                .join(format!("rep-{rep}"));
            let toml = dir.join("scenario.toml");
            if !dir.join(crate::compare_report::FILE).is_file() {
                // The earlier run's repetition failed before it compared
                // anything: still a failed run, the others are judged.
                let why = format!(
                    "{} has no {} (the earlier run's repetition failed; run it again without --resimulate)",
                    dir.display(),
                    crate::compare_report::FILE
                );
                eprintln!("validate: {} {alg} rep {}: {why}", path.name, rep + 1);
                runs.push(Figures {
                    kernel_failed: Some(why),
                    ..Figures::default()
                });
                continue;
            }
            std::fs::write(&toml, opts.row_scenario(&path, alg, seconds, rep)?)
                .map_err(|e| format!("cannot write {}: {e}", toml.display()))?;
            let report = compare::resimulate(&toml, &dir, opts.kernel_ack())?;
            statistics = serde_json::to_value(&report.statistics).map_err(|e| e.to_string())?;
            runs.push(figures_of(&report));
        }
        let reruns = r["emulator"]["reruns"].as_u64().unwrap_or(0) as usize;
        results.push(row_of(&path, alg, &runs, reruns));
    }
    if partial {
        results = merge_rows(rows, results);
    }
    write_results(opts, seconds, reps, statistics, results)
}

/// `--update`: the single-flow rows of the earlier run in `path`. The runs
/// must agree in run length, repetitions and simulated receiver, or the
/// table would mix figures that mean different things.
fn earlier_rows(
    path: &Path,
    seconds: u64,
    reps: usize,
    ack: &str,
    pacer: SimPacer,
    timestamps: bool,
) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "--update: {}: {e} (nothing to update; run without --update first)",
            path.display()
        )
    })?;
    let earlier: Value =
        serde_json::from_str(&text).map_err(|e| format!("--update: {}: {e}", path.display()))?;
    check_earlier(&earlier, seconds, reps, ack, pacer, timestamps)?;
    Ok(earlier["paths"].as_array().cloned().unwrap_or_default())
}

/// The hosts' timing noise on the ACKs of the single-flow simulations
/// matched to kernel TCP, as validate.json records it: none (`compare`'s
/// kernel match answers each ACK at once). `validate --multiflow` has its
/// own (`--sim-host-noise`). A run of 2026-12-04 had 50 ± 20 µs; the
/// Validation chapter says why it was taken out again.
fn host_noise_json() -> Value {
    Value::Null
}

/// Refuses to keep rows of `earlier` (a validate.json) beside new ones
/// when its simulations matched to kernel TCP had another timing noise on
/// their ACKs (the run of 2026-12-04 that had some): one table would mix
/// two simulators. `what` names the option that would mix them.
fn check_earlier_noise(earlier: &Value, what: &str) -> Result<(), String> {
    let had = &earlier["simulator_host_noise"];
    if *had != host_noise_json() {
        return Err(format!(
            "{what} keeps rows whose simulations matched to kernel TCP had the hosts' timing noise on their ACKs ({had}); this one's have none: one table would mix two simulators (judge every row with --resimulate, or run without {what})"
        ));
    }
    Ok(())
}

/// Whether the earlier run in `earlier` (a validate.json) paced its
/// simulations as this one does (`pacer`): `what` keeps its rows, and one
/// table must not mix two pacers.
pub(crate) fn check_earlier_pacer(
    earlier: &Value,
    what: &str,
    pacer: SimPacer,
) -> Result<(), String> {
    let had = SimPacer::of_json(earlier)?;
    if had != pacer {
        return Err(format!(
            "{what} keeps rows whose simulations matched to kernel TCP had --sim-pacing {}; this one's have {}: one table would mix two pacers (judge every row with --resimulate, or use --sim-pacing {})",
            had.name(),
            pacer.name(),
            had.name()
        ));
    }
    Ok(())
}

/// Whether the earlier run in `earlier` (a validate.json) kept TCP
/// timestamps in its simulations as this one does: `what` keeps its rows,
/// and one table must not mix simulations with and without them.
pub(crate) fn check_earlier_timestamps(
    earlier: &Value,
    what: &str,
    timestamps: bool,
) -> Result<(), String> {
    let had = claims::validate::sim_timestamps::of_json(earlier)?;
    if had != timestamps {
        let with = |on: bool| if on { "with" } else { "without" };
        return Err(format!(
            "{what} keeps rows whose simulations matched to kernel TCP ran {} TCP timestamps; this one's run {}: one table would mix the two (judge every row with --resimulate, or run {} --sim-timestamps)",
            with(had),
            with(timestamps),
            with(had)
        ));
    }
    Ok(())
}

/// Whether `earlier` (a validate.json) has single-flow rows of the same
/// run length, repetitions, simulated receiver, pacer and timestamps.
fn check_earlier(
    earlier: &Value,
    seconds: u64,
    reps: usize,
    ack: &str,
    pacer: SimPacer,
    timestamps: bool,
) -> Result<(), String> {
    if earlier["paths"].as_array().is_none() {
        return Err("--update: the earlier validate.json has no single-flow rows (`paths`); run without --update first".into());
    }
    check_earlier_noise(earlier, "--update")?;
    check_earlier_pacer(earlier, "--update", pacer)?;
    check_earlier_timestamps(earlier, "--update", timestamps)?;
    let had = (
        earlier["seconds_per_run"].as_u64(),
        earlier["repetitions"].as_u64(),
        earlier["simulator_ack"].as_str().unwrap_or("every"),
    );
    if had != (Some(seconds), Some(reps as u64), ack) {
        return Err(format!(
            "--update: the earlier run had {} s per run, {} repetition(s) and --sim-ack {}; this one {seconds} s, {reps} and {ack}: run with the same --seconds, --reps and --sim-ack, or without --update",
            had.0.map_or("?".into(), |x| x.to_string()),
            had.1.map_or("?".into(), |x| x.to_string()),
            had.2
        ));
    }
    Ok(())
}

/// The earlier run's rows with those this run made (`fresh`) in their
/// place, in the earlier order, then the fresh rows it did not have.
fn merge_rows(earlier: &[Value], fresh: Vec<Value>) -> Vec<Value> {
    let key = |r: &Value| (r["path"].clone(), r["algorithm"].clone());
    let mut fresh: Vec<Option<Value>> = fresh.into_iter().map(Some).collect();
    let mut merged = Vec::new();
    for r in earlier {
        let replaced = fresh
            .iter_mut()
            .find(|f| f.as_ref().is_some_and(|f| key(f) == key(r)))
            .and_then(Option::take);
        merged.push(replaced.unwrap_or_else(|| r.clone()));
    }
    merged.extend(fresh.into_iter().flatten());
    merged
}

/// Unloads, when dropped, a control `ensure_loaded` loaded.
pub struct LoadedHere(#[cfg_attr(not(feature = "kernel"), allow(dead_code))] &'static str);

impl Drop for LoadedHere {
    fn drop(&mut self) {
        #[cfg(feature = "kernel")]
        {
            // --force: the last runs' sockets may still hold it for a
            // while after they closed (they keep it until released).
            match kernel_cc::unload(self.0, true) {
                Ok(_) => eprintln!("validate: unloaded {} (loaded for this run)", self.0),
                Err(e) => eprintln!("validate: could not unload {}: {e}", self.0),
            }
        }
    }
}

/// Makes sure the BPF control `name` is registered: `None` when it
/// already was (someone else's, left alone), a guard that unloads it
/// when this loaded it, or an error saying how to load it.
fn ensure_loaded(name: &'static str) -> Result<Option<LoadedHere>, String> {
    if crate::host::available_congestion_controls()
        .iter()
        .any(|a| a == name)
    {
        return Ok(None);
    }
    #[cfg(feature = "kernel")]
    {
        kernel_cc::load(name).map_err(|e| {
            format!("--algorithms {name}: {name} is not registered and loading it failed: {e}")
        })?;
        eprintln!("validate: loaded {name}; it is unloaded when validate ends");
        Ok(Some(LoadedHere(name)))
    }
    #[cfg(not(feature = "kernel"))]
    {
        Err(format!(
            "--algorithms {name}: {name} is not registered, and this bbrlab cannot load it: {}. \
             Or load it with a bbrlab that has it: `sudo bbrlab kernel load {name}`",
            crate::kernel::missing("kernel load")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row whose repetitions could not run is kept as a miss with its
    /// error, and the table shows it as failed runs, beside the rows
    /// that ran.
    #[test]
    fn a_failed_row_is_kept_as_a_miss_with_its_error() {
        let p = paths_named(&["10M-40ms-1bdp".into()]).unwrap()[0];
        let row = failed_row(&p, "bbr", 3, "cannot write scenario.toml: disk full");
        assert_eq!(row["simulator_vs_kernel"]["within"], false);
        assert_eq!(row["error"], "cannot write scenario.toml: disk full");
        let doc = json!({"seconds_per_run": 10, "repetitions": 3, "paths": [row]});
        let md = markdown(&doc).unwrap();
        assert!(
            md.contains("| 10M-40ms-1bdp | bbr |") && md.contains("3 run(s) failed ✗"),
            "{md}"
        );
    }

    /// `--algorithms` takes each algorithm's Linux control but the
    /// variant's, and each maps back to the simulator's algorithm that
    /// validate runs against it.
    #[test]
    fn the_algorithms_are_the_kernel_controls_and_map_back() {
        let mut a = algorithms();
        a.sort();
        assert_eq!(a, ["bbr", "bbrlab_bbr3", "cubic", "reno"]);
        let sim: Vec<&str> = a.iter().map(|k| sim_counterpart(k)).collect();
        assert_eq!(sim, ["bbr", "bbr3", "cubic", "reno"]);
    }
    use crate::compare_report::SourceRow;

    #[test]
    fn two_jobs_on_a_fast_path_get_a_note_naming_it() {
        let paths = paths_named(&["10M-40ms-1bdp".into(), "100M-5ms-1bdp".into()]).unwrap();
        let note = jobs_note(2, &paths).unwrap();
        assert!(
            note.contains("(100M-5ms-1bdp)") && note.contains("--only 100M-5ms-1bdp"),
            "{note}"
        );
        assert_eq!(jobs_note(1, &paths), None);
        assert_eq!(jobs_note(2, &paths[..1]), None);
    }

    #[test]
    fn jobs_are_refused_beyond_the_cores() {
        assert!(check_jobs_on(2, 2).is_ok());
        assert!(check_jobs_on(1, 1).is_ok());
        let e = check_jobs_on(3, 2).unwrap_err();
        assert!(e.contains("--jobs 3") && e.contains("2 cores"), "{e}");
        assert!(check_jobs_on(0, 2).is_err());
    }

    #[test]
    fn the_matrix_covers_the_ranges_it_promises() {
        let rates: Vec<f64> = MATRIX.iter().map(|p| p.rate_mbit).collect();
        let rtts: Vec<f64> = MATRIX.iter().map(|p| p.rtt_ms).collect();
        let bufs: Vec<f64> = MATRIX.iter().map(|p| p.buffer_bdp).collect();
        let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
        assert!(MATRIX.len() >= 10);
        assert_eq!((min(&rates), max(&rates)), (2.0, 100.0));
        assert_eq!((min(&rtts), max(&rtts)), (5.0, 200.0));
        assert_eq!((min(&bufs), max(&bufs)), (0.25, 10.0));
        assert!(
            MATRIX.iter().any(|p| p.loss == 0.05) && MATRIX.iter().any(|p| p.jitter_sd_ms > 0.0)
        );
        for q in QUICK {
            assert!(MATRIX.iter().any(|p| p.name == *q), "{q}");
        }
    }

    #[test]
    fn scenarios_parse_with_the_paths_figures() {
        let dir = tempfile::tempdir().unwrap();
        for p in MATRIX {
            let f = dir
                .path()
                .join(format!("{}.toml", p.name.replace('%', "pc")));
            std::fs::write(&f, scenario_toml_paced(p, "cubic", 5, 1, SimPacer::Linux)).unwrap();
            let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(sc.runs.len(), 1);
            assert_eq!(sc.runs[0].config.flows.len(), 1);
            assert_eq!(sc.runs[0].config.duration_ns, 5_000_000_000);
            // No pacer: Linux paces CUBIC only under an fq qdisc.
            assert_eq!(sc.runs[0].config.flows[0].pacing, sender::Pacing::Off);
            // Kernel-sized bursts for BBR, as Linux's TSO and the UDP
            // transport's GSO.
            std::fs::write(&f, scenario_toml_paced(p, "bbr", 5, 1, SimPacer::Linux)).unwrap();
            let sc = scenario::load(&f).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(sc.runs[0].config.flows[0].pacing, sender::Pacing::Quantum);
        }
        // 10 Mbit/s × 40 ms = 33.3 packets of 1500 bytes.
        assert_eq!(queue_packets(&MATRIX[0]), 33);
        assert_eq!(queue_packets(&MATRIX[2]), 8);
    }

    /// `--update` keeps an earlier run's rows and puts this run's in their
    /// place; a run of another length, repetitions or receiver is refused
    /// rather than mixed in.
    #[test]
    fn update_replaces_only_the_rows_it_ran() {
        let row = |path: &str, alg: &str, g: f64| json!({"path": path, "algorithm": alg, "kernel": {"goodput_mbps": g}});
        let earlier = json!({
            "seconds_per_run": 10, "repetitions": 3, "simulator_ack": "every",
            "simulator_host_noise": host_noise_json(),
            "paths": [row("a", "bbr", 1.0), row("a", "cubic", 2.0), row("b", "bbr", 3.0), row("b", "cubic", 4.0)],
        });
        let fresh = vec![
            row("b", "cubic", 40.0),
            row("a", "cubic", 20.0),
            row("c", "cubic", 50.0),
        ];
        let rows = earlier["paths"].as_array().unwrap();
        let merged = merge_rows(rows, fresh);
        let got: Vec<(String, String, f64)> = merged
            .iter()
            .map(|r| {
                (
                    r["path"].as_str().unwrap().into(),
                    r["algorithm"].as_str().unwrap().into(),
                    r["kernel"]["goodput_mbps"].as_f64().unwrap(),
                )
            })
            .collect();
        let want = [
            ("a", "bbr", 1.0),
            ("a", "cubic", 20.0),
            ("b", "bbr", 3.0),
            ("b", "cubic", 40.0),
            ("c", "cubic", 50.0),
        ];
        assert_eq!(got, want.map(|(p, a, g)| (p.to_string(), a.to_string(), g)));
        assert!(check_earlier(&earlier, 10, 3, "every", SimPacer::Linux, false).is_ok());
        // An older validate.json without simulator_ack had an ACK per packet.
        let mut old = earlier.clone();
        old.as_object_mut().unwrap().remove("simulator_ack");
        assert!(check_earlier(&old, 10, 3, "every", SimPacer::Linux, false).is_ok());
        for (secs, reps, ack) in [(6, 3, "every"), (10, 1, "every"), (10, 3, "linux")] {
            let e = check_earlier(&earlier, secs, reps, ack, SimPacer::Linux, false).unwrap_err();
            assert!(
                e.contains("10 s per run, 3 repetition(s) and --sim-ack every"),
                "{e}"
            );
        }
        let e = check_earlier(
            &json!({"multiflow": {}}),
            10,
            3,
            "every",
            SimPacer::Linux,
            false,
        )
        .unwrap_err();
        assert!(e.contains("no single-flow rows"), "{e}");
        // Rows whose kernel matches had the hosts' timing noise (the run
        // of 2026-12-04 that had it) are not mixed with new ones; older
        // runs, which record none, are.
        let mut noisy = earlier.clone();
        noisy["simulator_host_noise"] = json!({"mean_us": 50, "sd_us": 20});
        let e = check_earlier(&noisy, 10, 3, "every", SimPacer::Linux, false).unwrap_err();
        assert!(
            e.contains("hosts' timing noise") && e.contains("--update"),
            "{e}"
        );
        let e = check_earlier_noise(&noisy, "--resimulate with --only").unwrap_err();
        assert!(e.contains("--resimulate with --only"), "{e}");
        assert!(check_earlier_noise(&earlier, "--update").is_ok());
        // Rows simulated with one pacer are not mixed with another's; a
        // file from before `--sim-pacing` ran Linux's.
        let e = check_earlier(&earlier, 10, 3, "every", SimPacer::Exact, false).unwrap_err();
        assert!(
            e.contains("--sim-pacing linux") && e.contains("this one's have exact"),
            "{e}"
        );
        let mut exact = earlier.clone();
        exact["simulator_pacer"] = json!("exact");
        assert!(check_earlier(&exact, 10, 3, "every", SimPacer::Exact, false).is_ok());
        let e = check_earlier(&exact, 10, 3, "every", SimPacer::Linux, false).unwrap_err();
        assert!(e.contains("--sim-pacing exact"), "{e}");
        exact["simulator_pacer"] = json!("fq");
        let e = check_earlier(&exact, 10, 3, "every", SimPacer::Linux, false).unwrap_err();
        assert!(e.contains("`fq`") && e.contains("linux or exact"), "{e}");
        // Nor rows simulated with TCP timestamps with rows without; a file
        // from before `--sim-timestamps` ran without.
        let e = check_earlier(&earlier, 10, 3, "every", SimPacer::Linux, true).unwrap_err();
        assert!(
            e.contains("ran without TCP timestamps; this one's run with"),
            "{e}"
        );
        let mut stamped = earlier.clone();
        stamped["simulator_timestamps"] = json!(true);
        assert!(check_earlier(&stamped, 10, 3, "every", SimPacer::Linux, true).is_ok());
        let e = check_earlier(&stamped, 10, 3, "every", SimPacer::Linux, false).unwrap_err();
        assert!(e.contains("run with --sim-timestamps"), "{e}");
        let mut older = earlier.clone();
        older
            .as_object_mut()
            .unwrap()
            .remove("simulator_host_noise");
        assert!(check_earlier_noise(&older, "--update").is_ok());
        let e = earlier_rows(
            Path::new("/nonexistent/validate.json"),
            10,
            3,
            "every",
            SimPacer::Linux,
            false,
        )
        .unwrap_err();
        assert!(e.contains("nothing to update"), "{e}");
    }

    #[test]
    fn differences_are_judged_against_the_bounds() {
        let b = bounds_for("bbr");
        // 4 % less goodput, 1.5 ms more RTT on 40 ms: within.
        let v = judge((9.6, Some(41.5)), (10.0, Some(40.0)), b);
        assert_eq!(v["within"], true);
        assert_eq!(v["goodput_diff_pct"].as_f64(), Some(-4.0));
        // 6 % less goodput: outside for bbr, inside for cubic.
        assert_eq!(
            judge((9.4, Some(40.0)), (10.0, Some(40.0)), b)["within"],
            false
        );
        assert_eq!(
            judge((9.4, Some(40.0)), (10.0, Some(40.0)), bounds_for("cubic"))["within"],
            true
        );
        // 3 ms on 20 ms is 15 %: outside bbr's 10 % and its 2 ms.
        assert_eq!(
            judge((10.0, Some(23.0)), (10.0, Some(20.0)), b)["srtt_within"],
            false
        );
        // 1.9 ms on 5 ms is 38 % but within 2 ms.
        assert_eq!(
            judge((10.0, Some(6.9)), (10.0, Some(5.0)), b)["srtt_within"],
            true
        );
    }

    #[test]
    fn bbrlab_bbr3_runs_the_simulators_stock_kernel_bbr3_and_maps_back() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b3.toml");
        std::fs::write(
            &f,
            scenario_toml_paced(&MATRIX[2], BBR3_KERNEL, 6, 1, SimPacer::Linux),
        )
        .unwrap();
        let sc = scenario::load(&f).unwrap();
        let cc = &sc.runs[0].config.flows[0].cc;
        assert_eq!(cc.algorithm, congestion::Algorithm::Bbr3);
        assert_eq!(cc.bbr3.profile(), congestion::Bbr3Profile::LinuxV3);
        assert_eq!(cc.bbr3.signals, congestion::Bbr3Signals::StockKernel);
        // compare runs kernel TCP with the BPF control for it.
        assert_eq!(crate::compare::kernel_counterpart(cc).unwrap(), BBR3_KERNEL);
        let b = bounds_for(BBR3_KERNEL);
        assert_eq!(
            (b.goodput, b.srtt_pct, b.srtt_ms),
            (&BBR_GOODPUT, &BBR_SRTT_PCT, &SRTT_MS)
        );
        assert_eq!(b.retx, Some(&RETX_SEGMENTS));
        assert_eq!(bounds_for("bbr").retx, None);
    }

    /// validate.json states every bound as its tolerance's rule and
    /// reason, read from the tolerances themselves.
    #[test]
    fn the_bounds_are_written_from_the_tolerances() {
        let b = bounds_json();
        assert_eq!(b["bbr"]["goodput"]["reason"], BBR_GOODPUT.reason);
        assert_eq!(
            b["loss_based"]["srtt_pct"]["reason"],
            LOSS_BASED_SRTT_PCT.reason
        );
        assert_eq!(
            b[BBR3_KERNEL]["retransmissions"]["reason"],
            RETX_SEGMENTS.reason
        );
        assert!(b["bbr"].get("retransmissions").is_none(), "{b}");
        let rule = b["bbr"]["srtt_ms"]["rule"].as_str().unwrap();
        assert!(
            rule.contains("whichever is larger") && rule.contains("2 ms"),
            "{rule}"
        );
    }

    #[test]
    fn retransmissions_are_judged_within_15_percent_plus_10_segments() {
        let b = bounds_for(BBR3_KERNEL);
        let (g, k) = ((10.0, Some(40.0)), (10.0, Some(40.0)));
        // 100 against the kernel's 200: 100 > 0.15 × 200 + 10 = 40.
        let v = judge_retx(g, k, Some(100.0), Some(200.0), b);
        assert_eq!(
            (v["retx_within"].as_bool(), v["within"].as_bool()),
            (Some(false), Some(false))
        );
        // 239 against 200: within 40; 241: not.
        assert_eq!(
            judge_retx(g, k, Some(239.0), Some(200.0), b)["within"],
            true
        );
        assert_eq!(
            judge_retx(g, k, Some(241.0), Some(200.0), b)["within"],
            false
        );
        // Few retransmissions: 10 segments of slack.
        assert_eq!(judge_retx(g, k, Some(9.0), Some(0.0), b)["within"], true);
        // A missing count misses.
        assert_eq!(judge_retx(g, k, None, Some(0.0), b)["within"], false);
        // Goodput still counts.
        assert_eq!(
            judge_retx((9.0, Some(40.0)), k, Some(5.0), Some(5.0), b)["within"],
            false
        );
        // Not judged for bbr: no retx keys.
        let v = judge_retx(g, k, Some(100.0), Some(0.0), bounds_for("bbr"));
        assert!(v.get("retx_within").is_none() && v["within"] == true);
        assert_eq!(
            diff_cell(&judge_retx(g, k, Some(12.0), Some(10.0), b)),
            "0.0 % / 0.0 ms / retx 12 vs 10 ✓"
        );
        // compare.json's retransmitted_packets are read per source.
        let f = read_figures(&json!({"sources": [
            {"kind": "simulator", "matched_to": "kernel TCP (bbrlab_bbr3)", "goodput_mbps": 9.5, "srtt_median_ms": 41.0, "retransmitted_packets": 12},
            {"kind": "kernel", "matched_to": null, "goodput_mbps": 9.4, "srtt_median_ms": 42.0, "retransmitted_packets": 15},
        ]}))
        .unwrap();
        assert_eq!((f.sim_kernel_retx, f.kernel_retx), (Some(12.0), Some(15.0)));
    }

    #[test]
    fn a_failed_s2n_run_is_read_and_shown_as_a_miss() {
        let doc = json!({"sources": [
            {"kind": "kernel", "matched_to": null, "goodput_mbps": 9.4, "srtt_median_ms": 42.0},
        ], "failed_sources": [{"kind": "s2n", "source": "s2n-quic + bbrlab (bbr)", "error": "x"}]});
        let f = read_figures(&doc).unwrap();
        assert!(f.s2n_failed && f.s2n.is_none());
        assert!(!read_figures(&json!({"sources": []})).unwrap().s2n_failed);
        let cell = diff_cell(&json!({"within": false, "failed_runs": 1}));
        assert_eq!(cell, "1 run(s) failed ✗");
    }

    /// A failed kernel or UDP run is read with its reason, and a row whose
    /// repetitions had failures says so under the table.
    #[test]
    fn failed_kernel_and_udp_runs_are_read_and_noted() {
        let doc = json!({"sources": [], "failed_sources": [
            {"kind": "kernel", "source": "kernel TCP (bbr)", "error": "the emulator timed out"},
            {"kind": "udp", "source": "UDP transport (bbr)", "error": "no summary"},
        ]});
        let f = read_figures(&doc).unwrap();
        assert_eq!(f.kernel_failed.as_deref(), Some("the emulator timed out"));
        assert_eq!(f.udp_failed.as_deref(), Some("no summary"));
        assert!(f.kernel.is_none() && !f.s2n_failed);
        let row = json!({"path": "p", "algorithm": "bbr", "kernel_failed_runs": 2,
            "simulator_vs_kernel": {"within": false, "failed_runs": 2, "error": "the emulator timed out"},
            "udp_failed_runs": 0, "emulator": {}});
        let notes = emulator_notes(&[row]);
        assert!(
            notes
                .contains("- p bbr: 2 kernel TCP run(s) failed (the last: the emulator timed out)"),
            "{notes}"
        );
        assert!(!notes.contains("UDP"), "{notes}");
    }

    #[test]
    fn figures_are_read_per_source_and_the_table_is_built_from_json() {
        let doc = json!({"sources": [
            {"kind": "simulator", "matched_to": "kernel TCP (bbr)", "goodput_mbps": 9.5, "srtt_median_ms": 41.0},
            {"kind": "kernel", "matched_to": null, "goodput_mbps": 9.4, "srtt_median_ms": 42.0},
            {"kind": "simulator", "matched_to": "UDP transport (bbr)", "goodput_mbps": 9.6, "srtt_median_ms": 40.5},
            {"kind": "udp", "matched_to": null, "goodput_mbps": 9.3, "srtt_median_ms": null},
            {"kind": "simulator", "matched_to": "s2n-quic + bbrlab (bbr)", "goodput_mbps": 9.55, "srtt_median_ms": 40.2},
            {"kind": "s2n", "matched_to": null, "goodput_mbps": 8.0, "srtt_median_ms": 43.0},
        ]});
        let f = read_figures(&doc).unwrap();
        assert_eq!(f.kernel, Some((9.4, Some(42.0))));
        assert_eq!(f.sim_kernel, Some((9.5, Some(41.0))));
        assert_eq!(f.udp, Some((9.3, None)));
        assert_eq!(f.sim_udp, Some((9.6, Some(40.5))));
        assert_eq!(f.s2n, Some((8.0, Some(43.0))));
        assert_eq!(f.sim_s2n, Some((9.55, Some(40.2))));
        let v = json!({"seconds_per_run": 6, "repetitions": 1, "paths": [{
            "path": "p", "algorithm": "bbr",
            "kernel": pair(f.kernel), "simulator": pair(f.sim_kernel), "udp": pair(f.udp),
            "simulator_vs_kernel": judge(f.sim_kernel.unwrap(), f.kernel.unwrap(), bounds_for("bbr")),
            "udp_vs_kernel": Value::Null,
            "s2n": pair(f.s2n),
            "s2n_vs_kernel": judge(f.s2n.unwrap(), f.kernel.unwrap(), bounds_for("bbr")),
        }]});
        let md = markdown(&v).unwrap();
        assert!(
            md.contains(
                "| p | bbr | 9.40 / 42.0 | 9.50 / 41.0 | 1.1 % / -1.0 ms ✓ | 9.30 / – | – | 8.00 / 43.0 | -14.9 % / 1.0 ms ✗ |"
            ),
            "{md}"
        );
        assert!(markdown(&json!({})).is_err());
        // Which receiver the kernel-matched simulation had: said only
        // when it was Linux's.
        assert!(!md.contains("receiver"), "{md}");
        let mut linux = v.clone();
        linux["simulator_ack"] = json!("linux");
        assert!(markdown(&linux).unwrap().contains(
            "the simulation matched to kernel TCP has Linux's receiver (`--sim-ack linux`)"
        ));
        // And its ACKs' timing noise, where the run recorded one.
        assert!(!md.contains("timing noise"), "{md}");
        linux["simulator_host_noise"] = json!({"mean_us": 50, "sd_us": 20});
        assert!(markdown(&linux).unwrap().contains(
            "each ACK of the simulation matched to kernel TCP comes back 50 µs ± 20 µs later"
        ));
        // No emulator figures: nothing said under the table.
        assert_eq!(f.emulator_stalled, None);
        assert!(!md.contains("forwarder"), "{md}");
    }

    /// The worst emulated source of a run decides whether it is clean,
    /// and the table says which rows were run again or are marked.
    #[test]
    fn the_emulators_stalls_are_read_and_reported_under_the_table() {
        let doc = json!({"sources": [
            {"kind": "simulator", "matched_to": "kernel TCP (bbr)", "goodput_mbps": 9.5, "srtt_median_ms": 41.0},
            {"kind": "kernel", "goodput_mbps": 9.4, "srtt_median_ms": 42.0,
             "emulator": {"stalled_fraction": 0.002}},
            {"kind": "udp", "goodput_mbps": 9.3, "srtt_median_ms": 43.0,
             "emulator": {"stalled_fraction": 0.031}},
        ]});
        let f = read_figures(&doc).unwrap();
        assert_eq!(f.emulator_stalled, Some(0.031));
        // 3.1 % is over the limit of a 40 ms path, not of a 100 ms one.
        assert!(f.emulator_stalled.unwrap() > linkem::stall::max_stalled_fraction(40.0));
        assert!(f.emulator_stalled.unwrap() <= linkem::stall::max_stalled_fraction(100.0));
        let row = |path: &str, e: Value| json!({"path": path, "algorithm": "bbr", "emulator": e});
        let notes = emulator_notes(&[
            row(
                "clean",
                json!({"stalled_pct_max": 0.1, "reruns": 0, "stalled": false}),
            ),
            row(
                "rerun",
                json!({"stalled_pct_max": 0.2, "stalled_pct_limit": 0.5, "reruns": 1, "stalled": false}),
            ),
            row(
                "bad",
                json!({"stalled_pct_max": 3.1, "stalled_pct_limit": 2.0, "reruns": 2, "stalled": true}),
            ),
        ]);
        assert!(!notes.contains("clean"), "{notes}");
        assert!(
            notes.contains("- rerun bbr: 1 run(s) repeated because the emulator's forwarder could not run over 0.5 %"),
            "{notes}"
        );
        assert!(
            notes
                .contains("- bad bbr: the emulator's forwarder could not run up to 3.1 % of a run")
                && notes.contains("2 run(s) repeated"),
            "{notes}"
        );
        assert_eq!(emulator_notes(&[row("clean", Value::Null)]), "");
    }

    /// validate's options with `out` and `ack`, everything else default.
    fn options(out: &Path, ack: &'static str) -> Options {
        Options {
            out: out.to_path_buf(),
            quick: false,
            only: None,
            reps: None,
            seconds: None,
            algorithms: vec![],
            quic_bulk: None,
            ack,
            pacer: SimPacer::Linux,
            timestamps: false,
            update: false,
            jobs: 1,
            resimulate: false,
        }
    }

    #[test]
    fn sim_ack_linux_gives_the_kernel_matched_simulation_linuxs_receiver() {
        let o = |ack| options(Path::new(""), ack);
        assert_eq!(o("linux").kernel_ack(), Some("linux"));
        assert_eq!(o("every").kernel_ack(), Some("every"));
    }

    /// An earlier single-flow run's directory (4 s, one repetition, one
    /// row: `bbr` on 10M-40ms-1bdp) as its real side left it: the kernel
    /// row's figures and packet size in compare.json, beside a stale
    /// simulator row matched to it (1 Mbit/s, which no run gives).
    fn earlier_single_flow_run(out: &Path) {
        let rep = out.join("10M-40ms-1bdp/bbr/rep-0");
        std::fs::create_dir_all(&rep).unwrap();
        let row = |kind: &str, label: &str, matched: Option<&str>, goodput: f64| SourceRow {
            source: label.into(),
            kind: kind.into(),
            matched_to: matched.map(String::from),
            payload_bytes_per_packet: Some(1448),
            header_bytes_per_packet: Some(52),
            goodput_mbps: Some(goodput),
            srtt_median_ms: Some(47.0),
            retransmitted_packets: Some(3),
            ..SourceRow::default()
        };
        CompareReport {
            scenario: "validate-10M-40ms-1bdp".into(),
            window_s: 4.0,
            sources: vec![
                row(
                    "simulator",
                    "simulator as kernel (bbr)",
                    Some("kernel TCP (bbr)"),
                    1.0,
                ),
                row("kernel", "kernel TCP (bbr)", None, 9.5),
            ],
            ..CompareReport::default()
        }
        .write(&rep)
        .unwrap();
        std::fs::write(
            out.join("validate.json"),
            json!({"seconds_per_run": 4, "repetitions": 1, "simulator_ack": "every", "simulator_host_noise": host_noise_json(),
                   "paths": [{"path": "10M-40ms-1bdp", "algorithm": "bbr",
                              "emulator": {"reruns": 2}}]})
            .to_string(),
        )
        .unwrap();
    }

    fn resimulate_in(out: &Path, ack: &'static str, only: Option<&str>) -> Result<Value, String> {
        run(&Options {
            only: only.map(|o| vec![o.to_string()]),
            resimulate: true,
            ..options(out, ack)
        })?;
        let text = std::fs::read_to_string(out.join("validate.json")).unwrap();
        Ok(serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn resimulate_judges_a_new_single_flow_simulation_against_the_kept_runs() {
        let dir = tempfile::tempdir().unwrap();
        earlier_single_flow_run(dir.path());
        let doc = resimulate_in(dir.path(), "linux", None).unwrap();
        assert_eq!(doc["simulator_ack"], "linux");
        assert_eq!(
            (doc["seconds_per_run"].as_u64(), doc["repetitions"].as_u64()),
            (Some(4), Some(1))
        );
        let row = &doc["paths"][0];
        assert_eq!(row["path"], "10M-40ms-1bdp");
        // The kernel's figures are the kept ones; the simulator's are new
        // (a 10 Mbit/s path delivers well above the stale 1 Mbit/s).
        assert_eq!(row["kernel"]["goodput_mbps"].as_f64(), Some(9.5));
        assert_eq!(row["kernel_retransmitted_packets"].as_f64(), Some(3.0));
        let linux = row["simulator"]["goodput_mbps"].as_f64().unwrap();
        assert!((8.0..10.0).contains(&linux), "{row}");
        assert!(row["simulator_vs_kernel"]["within"].is_boolean());
        assert_eq!(row["emulator"]["reruns"], 2);
        let rep = dir.path().join("10M-40ms-1bdp/bbr/rep-0");
        assert!(rep.join("sim-kernel/flows.csv").exists());
        // The scenario written beside the matched run is the one that ran
        // (the kernel's packet size and, here, Linux's receiver): run
        // again from the file alone, it gives the same bytes.
        let written = rep.join("sim-kernel/scenario.toml");
        let text = std::fs::read_to_string(&written).unwrap();
        assert!(
            text.contains("mss = 1448") && text.contains("ack = \"linux\""),
            "{text}"
        );
        let again = dir.path().join("again");
        let sc = scenario::load(&written).unwrap();
        runner::sweep::run_one(&sc.name, &sc.runs[0], &again).unwrap();
        assert_eq!(
            std::fs::read(again.join("flows.csv")).unwrap(),
            std::fs::read(rep.join("sim-kernel/flows.csv")).unwrap(),
            "bbrlab sim on the written scenario.toml reproduces the matched run"
        );
        let report = CompareReport::read(&rep).unwrap();
        assert_eq!(report.sources[1].goodput_mbps, Some(9.5));
        assert_eq!(report.sources[0].payload_bytes_per_packet, Some(1448));
        assert!(std::fs::read_to_string(dir.path().join("validate.md"))
            .unwrap()
            .contains("10M-40ms-1bdp"));
        // The receiver is the one asked for: an ACK per packet gives
        // another srtt on the same kept run.
        let srtt = |d: &Value| {
            d["paths"][0]["simulator"]["srtt_median_ms"]
                .as_f64()
                .unwrap()
        };
        let every = resimulate_in(dir.path(), "every", None).unwrap();
        assert_eq!(every["simulator_ack"], "every");
        assert_ne!(srtt(&every), srtt(&doc));
        // And it is deterministic: the same receiver again, the same figure.
        let again = resimulate_in(dir.path(), "linux", None).unwrap();
        assert_eq!(srtt(&again), srtt(&doc));
        assert_eq!(again["simulator_pacer"], "linux");
        // The pacer is the one asked for: one packet at a time, written
        // into the matched scenario and recorded; BBR's pairs no longer
        // queue behind each other, so the srtt differs on the same run.
        let exact = run(&Options {
            resimulate: true,
            pacer: SimPacer::Exact,
            ..options(dir.path(), "linux")
        })
        .map(|_| {
            let text = std::fs::read_to_string(dir.path().join("validate.json")).unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        })
        .unwrap();
        assert_eq!(exact["simulator_pacer"], "exact");
        assert_eq!(
            CompareReport::read(&rep).unwrap().sources[0].paws_discarded_fraction,
            None
        );
        let text = std::fs::read_to_string(rep.join("sim-kernel/scenario.toml")).unwrap();
        assert!(text.contains("pacing = \"exact\""), "{text}");
        assert_ne!(srtt(&exact), srtt(&doc));
        // TCP timestamps likewise: in the kernel-matched scenario and in
        // validate.json and the table's caption, and not in the UDP
        // transport's match, which has none.
        let stamped = run(&Options {
            resimulate: true,
            timestamps: true,
            ..options(dir.path(), "linux")
        })
        .map(|_| {
            let text = std::fs::read_to_string(dir.path().join("validate.json")).unwrap();
            serde_json::from_str::<Value>(&text).unwrap()
        })
        .unwrap();
        assert_eq!(stamped["simulator_timestamps"], true);
        assert_eq!(doc["simulator_timestamps"], false);
        let text = std::fs::read_to_string(rep.join("sim-kernel/scenario.toml")).unwrap();
        assert!(text.contains("timestamps = true"), "{text}");
        let summary = std::fs::read_to_string(rep.join("sim-kernel/summary.json")).unwrap();
        assert!(summary.contains("\"paws_discards\""), "{summary}");
        // compare.json then gives the simulated receiver's PAWS share (0
        // on this path, which does not reorder); without timestamps none.
        let sim_paws = |r: &CompareReport| r.sources[0].paws_discarded_fraction;
        assert_eq!(sim_paws(&CompareReport::read(&rep).unwrap()), Some(0.0));
        assert!(std::fs::read_to_string(dir.path().join("validate.md"))
            .unwrap()
            .contains("--sim-timestamps"));
    }

    /// `--algorithms` judges only those rows again and keeps the others as
    /// they were (here a `cubic` row whose runs are not in the directory,
    /// as after `--algorithms bbr --update`); an algorithm the run does not
    /// have is an error that lists those it has.
    #[test]
    fn resimulate_algorithms_judges_only_those_rows() {
        let dir = tempfile::tempdir().unwrap();
        earlier_single_flow_run(dir.path());
        let cubic_row = json!({"path": "10M-40ms-1bdp", "algorithm": "cubic",
                               "kernel": {"goodput_mbps": 7.0}, "emulator": {"reruns": 0}});
        let mut doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        doc["paths"].as_array_mut().unwrap().push(cubic_row.clone());
        std::fs::write(dir.path().join("validate.json"), doc.to_string()).unwrap();
        let with = |algs: &[&str]| {
            run(&Options {
                resimulate: true,
                algorithms: algs.iter().map(|a| a.to_string()).collect(),
                ..options(dir.path(), "every")
            })
        };
        with(&["bbr"]).unwrap();
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        let rows = doc["paths"].as_array().unwrap();
        assert_eq!(rows.len(), 2, "{doc}");
        let bbr = rows.iter().find(|r| r["algorithm"] == "bbr").unwrap();
        assert!(
            bbr["simulator"]["goodput_mbps"].as_f64().unwrap() > 8.0,
            "{bbr}"
        );
        let cubic = rows.iter().find(|r| r["algorithm"] == "cubic").unwrap();
        assert_eq!(cubic["kernel"], cubic_row["kernel"], "kept as it was");
        let e = with(&["reno"]).unwrap_err();
        assert!(e.contains("`reno`") && e.contains("bbr, cubic"), "{e}");
        // Keeping rows, the receiver must stay the earlier run's.
        let e = run(&Options {
            resimulate: true,
            algorithms: vec!["bbr".into()],
            ..options(dir.path(), "linux")
        })
        .unwrap_err();
        assert!(e.contains("--sim-ack every"), "{e}");
        // And so must the pacer (the earlier run, before the option,
        // paced as Linux does).
        let e = run(&Options {
            resimulate: true,
            algorithms: vec!["bbr".into()],
            pacer: SimPacer::Exact,
            ..options(dir.path(), "every")
        })
        .unwrap_err();
        assert!(
            e.contains("--sim-pacing linux") && e.contains("two pacers"),
            "{e}"
        );
        // Every row, the default: the cubic row has no runs to simulate
        // against, so it becomes a failed run; the bbr row is judged.
        with(&[]).unwrap();
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        let cubic = doc["paths"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["algorithm"] == "cubic")
            .unwrap();
        assert_eq!(cubic["kernel_failed_runs"], 1, "{cubic}");
    }

    #[test]
    fn resimulate_says_what_is_missing_or_would_mix() {
        let dir = tempfile::tempdir().unwrap();
        let e = resimulate_in(dir.path(), "every", None).unwrap_err();
        assert!(
            e.contains("--resimulate") && e.contains("validate.json"),
            "{e}"
        );
        earlier_single_flow_run(dir.path());
        let e = resimulate_in(dir.path(), "every", Some("2M-100ms-2bdp")).unwrap_err();
        assert!(
            e.contains("`2M-100ms-2bdp`") && e.contains("10M-40ms-1bdp"),
            "{e}"
        );
        // --only keeps the other rows, so it must not change the receiver,
        // nor mix rows whose kernel matches had timing noise with rows
        // without.
        let e = resimulate_in(dir.path(), "linux", Some("10M-40ms-1bdp")).unwrap_err();
        assert!(e.contains("--sim-ack every"), "{e}");
        let path = dir.path().join("validate.json");
        let kept = std::fs::read_to_string(&path).unwrap();
        let mut noisy: Value = serde_json::from_str(&kept).unwrap();
        noisy["simulator_host_noise"] = json!({"mean_us": 50, "sd_us": 20});
        std::fs::write(&path, noisy.to_string()).unwrap();
        let e = resimulate_in(dir.path(), "every", Some("10M-40ms-1bdp")).unwrap_err();
        assert!(e.contains("hosts' timing noise"), "{e}");
        std::fs::write(&path, kept).unwrap();
        // A repetition the earlier run could not compare is a failed run,
        // not the end of the table.
        std::fs::remove_file(dir.path().join("10M-40ms-1bdp/bbr/rep-0/compare.json")).unwrap();
        let v = resimulate_in(dir.path(), "every", None).unwrap();
        let row = &v["paths"][0];
        assert_eq!(row["kernel_failed_runs"], 1, "{row}");
        let why = row["simulator_vs_kernel"]["error"].as_str().unwrap();
        assert!(why.contains("compare.json"), "{why}");
    }

    /// A row the earlier run could not measure at all (validate kept it
    /// with its error) is carried over by --resimulate as it was.
    #[test]
    fn resimulate_keeps_a_failed_row_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        earlier_single_flow_run(dir.path());
        let p = paths_named(&["10M-40ms-1bdp".into()]).unwrap()[0];
        let failed = failed_row(&p, "cubic", 1, "the emulator could not start");
        let json = dir.path().join("validate.json");
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        doc["paths"].as_array_mut().unwrap().push(failed.clone());
        std::fs::write(&json, doc.to_string()).unwrap();
        let v = resimulate_in(dir.path(), "every", None).unwrap();
        assert_eq!(v["paths"].as_array().unwrap().len(), 2);
        assert_eq!(v["paths"][1], failed);
        assert!(v["paths"][0]["simulator_vs_kernel"]["within"].is_boolean());
    }
}
