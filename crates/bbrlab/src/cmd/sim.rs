//! `bbrlab sim`: load a scenario, run every sweep point (in parallel), and
//! write each run's outputs.
//!
//! Layout (one shape for one run and for a sweep): the output directory
//! holds `scenario.toml` (the file as given), `summary.json` and
//! `summary.csv` for all runs, and one `run-NNNN/` per run with its time
//! series, figures, summary and `scenario.toml` as run (sweep values set).
//! A directory that is not empty is refused unless `--force`, which first
//! removes what an earlier `bbrlab sim` wrote there (and nothing else).

use crate::terminal::TerminalView;
use runner::output::{write_summaries, SummaryJson};
use runner::sweep::{output_dir, prepare_output, run_one_logged, run_parallel, Logs};
use std::fs;
use std::path::{Path, PathBuf};

/// The `sim` command.
pub fn run(
    path: &Path,
    out: Option<PathBuf>,
    jobs: Option<usize>,
    quiet: bool,
    plots: bool,
    force: bool,
    logs: Logs,
) -> Result<(), String> {
    let sc = scenario::load(path).map_err(|e| e.to_string())?;
    let out = output_dir(out.or(sc.output.clone()), &sc.name)?;
    prepare_output(&out, force)?;
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    fs::write(out.join("scenario.toml"), text)
        .map_err(|e| format!("writing scenario.toml in {}: {e}", out.display()))?;
    let n = sc.runs.len();
    if !quiet {
        let about = sc.description.as_ref().map(|d| format!(": {}", d.trim()));
        let s = if n == 1 { "" } else { "s" };
        println!("{}{} ({n} run{s})", sc.name, about.unwrap_or_default());
    }
    let dir_of = |i: usize| out.join(format!("run-{i:04}"));
    let indices: Vec<usize> = (0..n).collect();
    let results = run_parallel(
        &indices,
        jobs,
        &TerminalView::new(quiet),
        |&i| (format!("run-{i:04}"), sc.runs[i].config.duration_ns),
        |&i, clock| {
            let s = run_one_logged(&sc.name, &sc.runs[i], &dir_of(i), clock, logs)?;
            if plots && sc.runs[i].config.sample_interval_ns > 0 {
                runner::draw::run_figures(&dir_of(i), Default::default())?;
            }
            Ok::<_, String>(s)
        },
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
    if plots && n > 1 {
        runner::draw::sweep_figures(&out)?;
    }
    print_table(&summaries);
    for (s, run) in summaries.iter().zip(&sc.runs) {
        let secs = run.config.duration_ns as f64 / 1e9;
        for note in s.flows.iter().filter_map(|f| f.rwnd_limited_note(secs)) {
            eprintln!("note: {}: {note}", s.run);
        }
    }
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
        if let Some(f) = &s.fairness_over_time {
            let at = match (f.converged_at_s, f.time_to_converge_s) {
                (Some(a), Some(t)) => format!("at {a:.1} s, {t:.1} s after the last flow joined"),
                _ => "never".to_string(),
            };
            println!(
                "  Jain over {} s windows: min {}, mean {}; converged to >= {} {at}",
                f.window_s,
                f.jain_min.map_or("-".into(), |v| format!("{v:.3}")),
                f.jain_mean.map_or("-".into(), |v| format!("{v:.3}")),
                f.threshold
            );
        }
        if let Some(q) = &s.queue {
            println!(
                "  forward queue p50/p90/p99/max: {:.1}/{:.1}/{:.1}/{:.1} kB, {:.2}/{:.2}/{:.2}/{:.2} ms",
                q.bytes_p50 / 1e3,
                q.bytes_p90 / 1e3,
                q.bytes_p99 / 1e3,
                q.bytes_max / 1e3,
                q.delay_ms_p50,
                q.delay_ms_p90,
                q.delay_ms_p99,
                q.delay_ms_max
            );
        }
        print_fct(s);
    }
}

/// Flow completion times by size bucket, when the run had finite flows,
/// and what each cross-traffic source got through.
fn print_fct(s: &SummaryJson) {
    if let Some(f) = &s.fct {
        println!(
            "  flow completion: {} of {} finite flows finished (fct.csv)",
            f.flows_completed, f.flows_started
        );
        println!(
            "    {:<12} {:>7} {:>12} {:>12} {:>12} {:>12}",
            "size", "flows", "FCT p50 ms", "FCT p99 ms", "slowdown p50", "slowdown p99"
        );
        for b in f.buckets.iter().filter(|b| b.count > 0) {
            let ms = |v: Option<f64>| v.map_or(f64::NAN, |x| x * 1e3);
            println!(
                "    {:<12} {:>7} {:>12.2} {:>12.2} {:>12.2} {:>12.2}",
                b.label,
                b.count,
                ms(b.fct_p50_s),
                ms(b.fct_p99_s),
                b.slowdown_p50.unwrap_or(f64::NAN),
                b.slowdown_p99.unwrap_or(f64::NAN)
            );
        }
    }
    for c in &s.cross {
        println!(
            "  cross {}: {} packets sent, {} dropped, {} bytes delivered",
            c.name, c.packets_sent, c.drops, c.bytes_delivered
        );
    }
}
