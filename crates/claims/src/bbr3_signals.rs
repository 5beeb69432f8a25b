//! `bbrlab bbr3-signals`: what `bbr3` (profile linux-v3) loses when it is
//! fed the stock Linux kernel's signals instead of those Google's v3
//! patches add (`[flow.bbr3] signals = "stock-kernel"`, the substitutes
//! `bbrlab_bbr3` must use as a BPF control). Both modes run in the
//! simulator on `bbrlab validate`'s path matrix (the same scenarios,
//! packet sizes matched to kernel TCP's), over a few seeds; the figures
//! are those `compare` and `validate` report (payload goodput, median
//! srtt, retransmitted data packets), so the differences read on the same
//! scale as the validation bounds. Writes `approximation.csv` (per path),
//! `approximation-runs.csv` (per run) and `approximation.md`.

use crate::validate::{self, PathSpec};
use congestion::Bbr3Signals;
use std::path::{Path, PathBuf};

/// What to run.
pub struct Options {
    /// Output directory.
    pub out: PathBuf,
    /// Only these paths of the matrix (default: all).
    pub only: Option<Vec<String>>,
    /// Seeds 1..=seeds per path and mode.
    pub seeds: u64,
    /// Simulated seconds per run.
    pub seconds: u64,
}

/// One run's figures.
#[derive(Clone, Copy, Debug)]
struct Run {
    goodput_mbps: f64,
    srtt_median_ms: Option<f64>,
    retransmitted: u64,
    retransmitted_pct: Option<f64>,
}

/// One path's means over its seeds, per mode.
struct PathRow {
    path: &'static str,
    exact: Mean,
    stock: Mean,
}

#[derive(Clone, Copy, Debug, Default)]
struct Mean {
    goodput_mbps: f64,
    srtt_median_ms: Option<f64>,
    retransmitted: f64,
    retransmitted_pct: Option<f64>,
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = xs.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn mean_of(runs: &[Run]) -> Mean {
    // A figure missing from any run is missing from the mean, rather than
    // averaged over fewer seeds than the table says.
    let all = |f: fn(&Run) -> Option<f64>| -> Option<f64> {
        let v: Option<Vec<f64>> = runs.iter().map(f).collect();
        v.and_then(|v| mean(v.into_iter()))
    };
    Mean {
        goodput_mbps: mean(runs.iter().map(|r| r.goodput_mbps)).unwrap_or(0.0),
        srtt_median_ms: all(|r| r.srtt_median_ms),
        retransmitted: mean(runs.iter().map(|r| r.retransmitted as f64)).unwrap_or(0.0),
        retransmitted_pct: all(|r| r.retransmitted_pct),
    }
}

/// (stock − exact) / exact in percent.
fn rel_pct(exact: f64, stock: f64) -> Option<f64> {
    (exact > 0.0).then(|| (stock - exact) / exact * 100.0)
}

/// Runs one mode on one path with one seed in `dir`.
fn run_one(
    p: &PathSpec,
    signals: Bbr3Signals,
    seed: u64,
    seconds: u64,
    dir: &Path,
) -> Result<Run, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Kernel TCP's packet sizes, as `validate` matches the simulator to
    // them (the comparison `bbrlab_bbr3` is validated by), written into the
    // scenario so that the scenario.toml beside the run is the run.
    let size = validate::KERNEL_DEFAULT;
    let flow = scenario::builder::Flow::new("bbr3")
        .pacing(validate::sim_pacing("bbr3"))
        .packet(size.payload, u64::from(size.header))
        .tune("bbr3", "profile", "linux-v3")
        .tune("bbr3", "signals", signals.to_string());
    let text = validate::path_scenario(p, flow, seconds, seed).to_toml();
    let toml = dir.join("scenario.toml");
    std::fs::write(&toml, &text).map_err(|e| format!("cannot write {}: {e}", toml.display()))?;
    let sc = scenario::parse(&text, &toml.display().to_string(), dir, &toml)
        .map_err(|e| e.to_string())?;
    let run = sc
        .runs
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: the scenario has no run", toml.display()))?;
    runner::sweep::run_one(p.name, &run, dir)?;
    let origin_s = run.config.flows[0].start_ns as f64 / 1e9;
    let window_s = run
        .config
        .duration_ns
        .saturating_sub(run.config.flows[0].start_ns) as f64
        / 1e9;
    let m = runner::measure::measure(&dir.join("flows.csv"), origin_s, window_s)?;
    Ok(Run {
        goodput_mbps: m.goodput_mbps,
        srtt_median_ms: m.rtt_median_ms,
        retransmitted: m.retransmitted.unwrap_or(0),
        retransmitted_pct: m.retransmitted_fraction().map(|f| f * 100.0),
    })
}

/// The command: runs both modes on every path and seed, writes the files
/// and returns the Markdown table.
pub fn run(opts: &Options) -> Result<String, String> {
    if opts.seeds == 0 {
        return Err("--seeds: at least 1".into());
    }
    if opts.seconds < 2 {
        return Err("--seconds: at least 2".into());
    }
    let paths = match &opts.only {
        Some(names) => validate::paths_named(names)?,
        None => validate::MATRIX.to_vec(),
    };
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let runs_path = opts.out.join("approximation-runs.csv");
    let mut runs_csv = csv::Writer::from_path(&runs_path)
        .map_err(|e| format!("cannot write {}: {e}", runs_path.display()))?;
    let csv_err = |e: csv::Error| format!("{}: {e}", runs_path.display());
    runs_csv
        .write_record([
            "path",
            "seed",
            "signals",
            "goodput_mbps",
            "srtt_median_ms",
            "retransmitted_packets",
            "retransmitted_pct",
        ])
        .map_err(csv_err)?;
    let total = paths.len() as u64 * opts.seeds * 2;
    let mut done = 0;
    let mut rows = Vec::new();
    for p in &paths {
        let mut by_mode: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for seed in 1..=opts.seeds {
            for (i, signals) in Bbr3Signals::ALL.into_iter().enumerate() {
                done += 1;
                eprintln!(
                    "bbr3-signals: [{done}/{total}] {} {signals} seed {seed}",
                    p.name
                );
                let dir = opts
                    .out
                    .join("runs")
                    .join(p.name)
                    .join(signals.name())
                    .join(format!("seed-{seed}"));
                let r = run_one(p, signals, seed, opts.seconds, &dir)
                    .map_err(|e| format!("{} {signals} seed {seed}: {e}", p.name))?;
                let opt = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.4}"));
                runs_csv
                    .write_record([
                        p.name.to_string(),
                        seed.to_string(),
                        signals.to_string(),
                        format!("{:.4}", r.goodput_mbps),
                        opt(r.srtt_median_ms),
                        r.retransmitted.to_string(),
                        opt(r.retransmitted_pct),
                    ])
                    .map_err(csv_err)?;
                by_mode[i].push(r);
            }
        }
        rows.push(PathRow {
            path: p.name,
            exact: mean_of(&by_mode[0]),
            stock: mean_of(&by_mode[1]),
        });
    }
    runs_csv.flush().map_err(|e| e.to_string())?;
    write_csv(&opts.out.join("approximation.csv"), &rows, opts)?;
    let md = markdown(&rows, opts);
    let md_path = opts.out.join("approximation.md");
    std::fs::write(&md_path, &md)
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    Ok(md)
}

fn write_csv(path: &Path, rows: &[PathRow], opts: &Options) -> Result<(), String> {
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    w.write_record([
        "path",
        "seeds",
        "seconds",
        "goodput_exact_mbps",
        "goodput_stock_mbps",
        "goodput_diff_pct",
        "srtt_median_exact_ms",
        "srtt_median_stock_ms",
        "srtt_diff_pct",
        "retransmitted_exact_packets",
        "retransmitted_stock_packets",
        "retransmitted_diff_packets",
        "retransmitted_exact_pct",
        "retransmitted_stock_pct",
    ])
    .map_err(err)?;
    let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.3}"));
    for r in rows {
        let (e, s) = (r.exact, r.stock);
        let srtt_diff = match (e.srtt_median_ms, s.srtt_median_ms) {
            (Some(a), Some(b)) => rel_pct(a, b),
            _ => None,
        };
        w.write_record([
            r.path.to_string(),
            opts.seeds.to_string(),
            opts.seconds.to_string(),
            format!("{:.3}", e.goodput_mbps),
            format!("{:.3}", s.goodput_mbps),
            f(rel_pct(e.goodput_mbps, s.goodput_mbps)),
            f(e.srtt_median_ms),
            f(s.srtt_median_ms),
            f(srtt_diff),
            format!("{:.1}", e.retransmitted),
            format!("{:.1}", s.retransmitted),
            format!("{:.1}", s.retransmitted - e.retransmitted),
            f(e.retransmitted_pct),
            f(s.retransmitted_pct),
        ])
        .map_err(err)?;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))
}

fn markdown(rows: &[PathRow], opts: &Options) -> String {
    // Differences that round to zero print as 0.0, not -0.0.
    let signed = |v: Option<f64>| {
        v.map_or("–".to_string(), |x| {
            let x = if x.abs() < 0.05 { 0.0 } else { x };
            format!("{x:+.1} %")
        })
    };
    let only = opts
        .only
        .as_ref()
        .map_or(String::new(), |o| format!(" --only {}", o.join(",")));
    let num = |v: Option<f64>, p: usize| v.map_or("–".to_string(), |x| format!("{x:.p$}"));
    // With --only, runs/ may still hold other paths' runs from an earlier
    // invocation; they look as current as these, so the table says whose
    // they are not.
    let rerun = if opts.only.is_some() {
        " Only the paths below were run this time; any other path under \
         `runs/` is from an earlier run and not in this table."
    } else {
        ""
    };
    let mut out = format!(
        "Generated by `bbrlab bbr3-signals --out {}{only} --seeds {} --seconds {}`: \
         the simulator's `bbr3` (profile linux-v3) with v3's exact signals \
         and with the stock kernel's substitutes, on `bbrlab validate`'s \
         paths, means over seeds 1–{}; packet sizes as kernel TCP's. Δ is \
         stock-kernel against exact.{rerun}\n\n\
         | path | goodput exact, Mbit/s | stock | Δ | median srtt exact, ms | stock | Δ | retransmitted exact, pkts (%) | stock | Δ pkts |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        opts.out.display(),
        opts.seeds,
        opts.seconds,
        opts.seeds
    );
    for r in rows {
        let (e, s) = (r.exact, r.stock);
        let srtt_diff = match (e.srtt_median_ms, s.srtt_median_ms) {
            (Some(a), Some(b)) => rel_pct(a, b),
            _ => None,
        };
        out += &format!(
            "| {} | {:.2} | {:.2} | {} | {} | {} | {} | {:.1} ({} %) | {:.1} ({} %) | {:+.1} |\n",
            r.path,
            e.goodput_mbps,
            s.goodput_mbps,
            signed(rel_pct(e.goodput_mbps, s.goodput_mbps)),
            num(e.srtt_median_ms, 1),
            num(s.srtt_median_ms, 1),
            signed(srtt_diff),
            e.retransmitted,
            num(e.retransmitted_pct, 2),
            s.retransmitted,
            num(s.retransmitted_pct, 2),
            s.retransmitted - e.retransmitted,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With --only, the table said nothing of runs/'s other paths, which an
    /// earlier run left there and which look as current; it now says whose
    /// they are. A full run's table (the book's) is unchanged.
    #[test]
    fn an_only_table_says_other_paths_runs_are_earlier() {
        let opts = |only: Option<Vec<String>>| Options {
            out: PathBuf::from("o"),
            only,
            seeds: 1,
            seconds: 2,
        };
        let md = markdown(&[], &opts(Some(vec!["p".into()])));
        assert!(
            md.contains("--only p")
                && md.contains("any other path under `runs/` is from an earlier run"),
            "{md}"
        );
        assert!(!markdown(&[], &opts(None)).contains("earlier run"));
    }

    #[test]
    fn differences_are_stock_against_exact() {
        assert_eq!(rel_pct(10.0, 9.5), Some(-5.0));
        assert_eq!(rel_pct(0.0, 1.0), None);
        let runs = [
            Run {
                goodput_mbps: 9.0,
                srtt_median_ms: Some(40.0),
                retransmitted: 2,
                retransmitted_pct: Some(0.1),
            },
            Run {
                goodput_mbps: 11.0,
                srtt_median_ms: None,
                retransmitted: 4,
                retransmitted_pct: Some(0.3),
            },
        ];
        let m = mean_of(&runs);
        assert_eq!(m.goodput_mbps, 10.0);
        assert_eq!(m.srtt_median_ms, None, "a seed without srtt: no mean");
        assert_eq!(m.retransmitted, 3.0);
        assert!((m.retransmitted_pct.unwrap() - 0.2).abs() < 1e-12);
    }
}
