//! `bbrlab sim`: load a scenario, run every sweep point (in parallel), and
//! write each run's outputs.
//!
//! Layout (one shape for one run and for a sweep): the output directory
//! holds `scenario.toml` (the file as given), `summary.json` and
//! `summary.csv` for all runs, and one `run-NNNN/` per run with its time
//! series, figures, summary and `scenario.toml` as run (sweep values set).
//! A directory that is not empty is refused unless `--force`, which first
//! removes what an earlier `bbrlab sim` wrote there (and nothing else).

use crate::output::{write_summaries, CsvRecorder, SummaryJson};
use crate::progress::{slowest, Board, SimClock};
use crate::scenario::{self, Run};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The run's name: its directory's if that is `run-NNNN`, else `run-0000`.
fn run_name(dir: &Path) -> String {
    dir.file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.starts_with("run-"))
        .unwrap_or("run-0000")
        .to_string()
}

/// Runs one simulation into `dir` (through [`crate::run::simulate`], as
/// every front end does, with the CSV files as its sink); returns its
/// summary. `dir` gets `flows.csv`, `link.csv`, `summary.json`,
/// `summary.csv` and the scenario as run (`scenario.toml`).
pub fn run_one(name: &str, run: &Run, dir: &Path, plots: bool) -> Result<SummaryJson, String> {
    run_one_with(name, run, dir, plots, &SimClock::default())
}

/// [`run_one`], advancing `clock` to the simulated time of each sample
/// written, for the progress display.
pub fn run_one_with(
    name: &str,
    run: &Run,
    dir: &Path,
    plots: bool,
    clock: &SimClock,
) -> Result<SummaryJson, String> {
    fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    fs::write(dir.join("scenario.toml"), &run.text)
        .map_err(|e| format!("writing scenario.toml in {}: {e}", dir.display()))?;
    let csv =
        CsvRecorder::create(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let (json, ()) = crate::run::simulate(name, &run_name(dir), run, csv, clock)
        .map_err(|e| format!("writing time series in {}: {e}", dir.display()))?;
    write_summaries(dir, name, &[&json])
        .map_err(|e| format!("writing summaries in {}: {e}", dir.display()))?;
    if plots && run.config.sample_interval_ns > 0 {
        crate::plots::plot_run(dir)?;
    }
    Ok(json)
}

/// Whether `name` (an entry of an output directory) is something `bbrlab
/// sim` writes, so `--force` may remove it.
fn ours(name: &str, is_dir: bool) -> bool {
    if is_dir {
        return name.len() == 8
            && name.starts_with("run-")
            && name[4..].bytes().all(|c| c.is_ascii_digit());
    }
    const FILES: [&str; 6] = [
        "flows.csv",
        "link.csv",
        "summary.json",
        "summary.csv",
        "scenario.toml",
        "bbrlab.log",
    ];
    const FIGURES: [&str; 5] = ["throughput", "rtt", "inflight", "bw_estimate", "queue"];
    FILES.contains(&name)
        || FIGURES
            .iter()
            .any(|f| name == format!("{f}.svg") || name == format!("{f}.png"))
}

/// Makes `out` ready for a new set of results: created if missing; if not
/// empty, refused unless `force`, and then emptied of what bbrlab wrote
/// (anything else there is an error, so `--force` never deletes a file
/// bbrlab did not write).
pub fn prepare_output(out: &Path, force: bool) -> Result<(), String> {
    let entries: Vec<(String, bool)> = match fs::read_dir(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(format!(
                "cannot read output directory {}: {e}",
                out.display()
            ))
        }
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.file_type().is_ok_and(|t| t.is_dir()),
                )
            })
            .collect(),
    };
    if !entries.is_empty() {
        let mut names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        names.sort_unstable();
        let shown = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
        if !force {
            return Err(format!(
                "output directory {} is not empty ({} entries: {shown}{}); earlier results would mix with new ones. Use --force to replace bbrlab's earlier results there, or choose another --out",
                out.display(),
                names.len(),
                if names.len() > 5 { ", ..." } else { "" }
            ));
        }
        let foreign: Vec<&str> = entries
            .iter()
            .filter(|(n, d)| !ours(n, *d))
            .map(|e| e.0.as_str())
            .collect();
        if !foreign.is_empty() {
            return Err(format!(
                "output directory {} holds files bbrlab did not write ({}); --force only removes earlier bbrlab results (run-NNNN/, flows.csv, link.csv, summary.*, scenario.toml, figures). Move them or choose another --out",
                out.display(),
                foreign.join(", ")
            ));
        }
        for (n, is_dir) in &entries {
            let p = out.join(n);
            let r = if *is_dir {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            r.map_err(|e| format!("--force: cannot remove {}: {e}", p.display()))?;
        }
    }
    fs::create_dir_all(out)
        .map_err(|e| format!("cannot create output directory {}: {e}", out.display()))
}

/// Most per-run progress lines shown; with more workers, the overall line
/// still names the slowest run.
const MAX_RUN_LINES: usize = 8;

/// Runs `f` over `items` on `jobs` worker threads (default: all cores);
/// results come back in item order. Unless `quiet`, shows progress: one
/// line per running run with its simulated time and ETA, and an overall
/// line with the runs finished and the slowest run under way (see
/// [`crate::progress`]). `describe` gives an item's label and simulated
/// duration (ns); `f` advances the [`SimClock`] it is given (through
/// [`run_one_with`]). `None` marks an item whose worker died (it cannot,
/// short of a panic).
pub fn run_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: Option<usize>,
    quiet: bool,
    describe: impl Fn(&T) -> (String, u64) + Sync,
    f: impl Fn(&T, &SimClock) -> R + Sync,
) -> Vec<Option<R>> {
    let n = items.len();
    let workers = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |p| p.get()))
        .clamp(1, n.max(1));
    let multi = MultiProgress::with_draw_target(if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    });
    let bar = multi.add(ProgressBar::new(n as u64));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs  {msg}",
        )
        .expect("static template"),
    );
    let line_style = ProgressStyle::with_template("    {msg}").expect("static template");
    let lines: Vec<ProgressBar> = (0..workers.min(MAX_RUN_LINES))
        .map(|_| {
            let l = multi.add(ProgressBar::new_spinner());
            l.set_style(line_style.clone());
            l
        })
        .collect();
    if !quiet {
        bar.enable_steady_tick(Duration::from_millis(200));
    }
    let board = Board::new(workers);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        if !quiet {
            let (board, bar, lines) = (&board, &bar, &lines);
            s.spawn(move || loop {
                let now: Vec<_> = board.snapshot(Instant::now());
                let running: Vec<_> = now.iter().flatten().cloned().collect();
                match slowest(&running) {
                    Some(i) if running.len() > 1 => {
                        bar.set_message(format!("slowest: {}", running[i].describe()))
                    }
                    _ => bar.set_message(""),
                }
                for (l, st) in lines.iter().zip(&now) {
                    l.set_message(st.as_ref().map_or(String::new(), |s| s.describe()));
                }
                // Until every worker is done (the sender is dropped).
                if let Err(mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(Duration::from_millis(250))
                {
                    continue;
                }
                break;
            });
        }
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (board, next, results, bar) = (&board, &next, &results, &bar);
                let (describe, f) = (&describe, &f);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let (label, duration_ns) = describe(&items[i]);
                    let clock = board.start(w, label, duration_ns, Instant::now());
                    let r = f(&items[i], &clock);
                    board.finish(w);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    bar.inc(1);
                })
            })
            .collect();
        for h in handles {
            // A worker that panicked leaves its item `None`.
            let _ = h.join();
        }
        drop(stop);
    });
    for l in &lines {
        l.finish_and_clear();
    }
    bar.finish_and_clear();
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The `sim` command.
pub fn run(
    path: &Path,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    quiet: bool,
    plots: bool,
    force: bool,
) -> Result<(), String> {
    let sc = scenario::load(path).map_err(|e| e.to_string())?;
    let out = out
        .or(sc.output.clone())
        .unwrap_or_else(|| PathBuf::from("out").join(&sc.name));
    prepare_output(&out, force)?;
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    fs::write(out.join("scenario.toml"), text)
        .map_err(|e| format!("writing scenario.toml in {}: {e}", out.display()))?;
    let n = sc.runs.len();
    if !quiet {
        match &sc.description {
            Some(d) => println!(
                "{}: {} ({n} run{})",
                sc.name,
                d.trim(),
                if n == 1 { "" } else { "s" }
            ),
            None => println!("{} ({n} run{})", sc.name, if n == 1 { "" } else { "s" }),
        }
    }
    let dir_of = |i: usize| out.join(format!("run-{i:04}"));
    let indices: Vec<usize> = (0..n).collect();
    let results = run_parallel(
        &indices,
        jobs,
        quiet,
        |&i| (format!("run-{i:04}"), sc.runs[i].config.duration_ns),
        |&i, clock| run_one_with(&sc.name, &sc.runs[i], &dir_of(i), plots, clock),
    );
    let mut summaries = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(s)) => summaries.push(s),
            Some(Err(e)) => return Err(format!("run-{i:04}: {e}")),
            None => return Err(format!("run-{i:04} did not complete")),
        }
    }
    let refs: Vec<&SummaryJson> = summaries.iter().collect();
    write_summaries(&out, &sc.name, &refs)
        .map_err(|e| format!("writing summaries in {}: {e}", out.display()))?;
    print_table(&summaries);
    println!("wrote {}", out.display());
    Ok(())
}

fn print_table(summaries: &[SummaryJson]) {
    println!(
        "{:<28} {:<12} {:>12} {:>10} {:>10} {:>10} {:>8}",
        "run / flow",
        "algorithm",
        "goodput Mb/s",
        "RTT p50 ms",
        "RTT p95 ms",
        "RTT p99 ms",
        "retx %"
    );
    for s in summaries {
        if !s.params.is_empty() {
            let p = s
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ");
            println!("{}: {p}", s.run);
        }
        for f in &s.flows {
            println!(
                "  {:<26} {:<12} {:>12.3} {:>10.1} {:>10.1} {:>10.1} {:>8.3}",
                f.name,
                f.algorithm,
                f.goodput_bps / 1e6,
                f.rtt_median_ms.unwrap_or(f64::NAN),
                f.rtt_p95_ms.unwrap_or(f64::NAN),
                f.rtt_p99_ms.unwrap_or(f64::NAN),
                100.0 * f.retransmission_rate
            );
        }
        if s.flows.len() > 1 {
            if let Some(j) = s.jain_fairness {
                println!("  Jain's fairness index: {j:.3}");
            }
        }
    }
}
