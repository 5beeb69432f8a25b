//! `bbrlab sim`: load a scenario, run every sweep point (in parallel), and
//! write each run's outputs.

use crate::output::{write_summary_rows, CsvRecorder, SummaryJson, SUMMARY_CSV_HEADER};
use crate::scenario::{self, Run};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs one simulation into `dir`; returns its summary.
pub fn run_one(name: &str, run: &Run, dir: &Path, plots: bool) -> Result<SummaryJson, String> {
    fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
    let mut rec =
        CsvRecorder::create(dir).map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    let summary = netsim::run(&run.config, &mut rec)
        .map_err(|e| format!("writing time series in {}: {e}", dir.display()))?;
    rec.finish()
        .map_err(|e| format!("writing time series in {}: {e}", dir.display()))?;
    let json = SummaryJson::new(name, &run.params, &summary);
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    fs::write(dir.join("summary.json"), text + "\n")
        .map_err(|e| format!("writing summary.json: {e}"))?;
    let mut csv = Vec::new();
    writeln!(csv, "{SUMMARY_CSV_HEADER}").map_err(|e| e.to_string())?;
    write_summary_rows(&mut csv, "0", &json).map_err(|e| e.to_string())?;
    fs::write(dir.join("summary.csv"), csv).map_err(|e| format!("writing summary.csv: {e}"))?;
    if plots && run.config.sample_interval_ns > 0 {
        crate::plots::plot_run(dir)?;
    }
    Ok(json)
}

/// Runs `f` over `items` on `jobs` worker threads (default: all cores),
/// with a progress bar unless `quiet`; results come back in item order.
/// `f` returns its result and a short label for the progress message.
/// `None` marks an item whose worker died (it cannot, short of a panic).
pub fn run_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: Option<usize>,
    quiet: bool,
    f: impl Fn(&T) -> (R, String) + Sync,
) -> Vec<Option<R>> {
    let n = items.len();
    let workers = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |p| p.get()))
        .clamp(1, n.max(1));
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(n as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg}",
            )
            .expect("static template"),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let (r, label) = f(&items[i]);
                bar.set_message(label);
                results.lock().expect("no panics while holding the lock")[i] = Some(r);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    results.into_inner().expect("workers finished")
}

/// The `sim` command.
pub fn run(
    path: &Path,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    quiet: bool,
    plots: bool,
) -> Result<(), String> {
    let sc = scenario::load(path).map_err(|e| e.to_string())?;
    let out = out
        .or(sc.output.clone())
        .unwrap_or_else(|| PathBuf::from("out").join(&sc.name));
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
    let dir_of = |i: usize| {
        if n == 1 {
            out.clone()
        } else {
            out.join(format!("run-{i:04}"))
        }
    };
    let indices: Vec<usize> = (0..n).collect();
    let results = run_parallel(&indices, jobs, quiet, |&i| {
        (
            run_one(&sc.name, &sc.runs[i], &dir_of(i), plots),
            format!("run {i}"),
        )
    });
    let mut summaries = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(s)) => summaries.push(s),
            Some(Err(e)) => return Err(format!("run {i}: {e}")),
            None => return Err(format!("run {i} did not complete")),
        }
    }
    if n > 1 {
        let f = File::create(out.join("summary.csv"))
            .map_err(|e| format!("writing summary.csv: {e}"))?;
        let mut w = BufWriter::new(f);
        writeln!(w, "{SUMMARY_CSV_HEADER}").map_err(|e| e.to_string())?;
        for (i, s) in summaries.iter().enumerate() {
            write_summary_rows(&mut w, &format!("run-{i:04}"), s).map_err(|e| e.to_string())?;
        }
        w.flush().map_err(|e| e.to_string())?;
        let text = serde_json::to_string_pretty(&summaries).map_err(|e| e.to_string())?;
        fs::write(out.join("summary.json"), text + "\n")
            .map_err(|e| format!("writing summary.json: {e}"))?;
    }
    print_table(&summaries);
    println!("wrote {}", out.display());
    Ok(())
}

fn print_table(summaries: &[SummaryJson]) {
    println!(
        "{:<28} {:<12} {:>12} {:>10} {:>10} {:>8}",
        "run / flow", "algorithm", "goodput Mb/s", "RTT p50 ms", "RTT p95 ms", "retx %"
    );
    for (i, s) in summaries.iter().enumerate() {
        if !s.params.is_empty() {
            let p = s
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ");
            println!("run-{i:04}: {p}");
        }
        for f in &s.flows {
            println!(
                "  {:<26} {:<12} {:>12.3} {:>10.1} {:>10.1} {:>8.3}",
                f.name,
                f.algorithm,
                f.goodput_bps / 1e6,
                f.rtt_median_ms.unwrap_or(f64::NAN),
                f.rtt_p95_ms.unwrap_or(f64::NAN),
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
