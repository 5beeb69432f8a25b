//! `bbrlab compare`: one single-flow scenario three ways — the simulator,
//! bbrlab's UDP transport through the emulator, and kernel TCP through the
//! emulator — overlaid on the same axes, with a table of the headline
//! figures. All three write the shared time-series schema, so one reader
//! serves them.

use crate::plots::{self, Figure, Series, Table};
use crate::tcp::quantile;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which real sources to add to the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Kernel TCP through the emulator (`bbrlab tcp`).
    Kernel,
    /// bbrlab's UDP transport through the emulator (`bbrlab send`).
    Udp,
}

/// Parses `--with kernel,udp`.
pub fn parse_sources(list: &[String]) -> Result<Vec<Source>, String> {
    list.iter()
        .map(|s| match s.trim() {
            "kernel" => Ok(Source::Kernel),
            "udp" => Ok(Source::Udp),
            other => Err(format!("--with {other}: allowed `kernel` and `udp`")),
        })
        .collect()
}

struct Measured {
    label: String,
    goodput_mbps: f64,
    rtt_median_ms: f64,
    rtt_p95_ms: f64,
    retransmitted_pct: Option<f64>,
    bw_mbps: Option<f64>,
    min_rtt_ms: Option<f64>,
    goodput: Vec<(f64, f64)>,
    rtt: Vec<(f64, f64)>,
    bw: Vec<(f64, f64)>,
    min_rtt: Vec<(f64, f64)>,
}

/// Width of the goodput overlay's averaging window. Kernel TCP's
/// `bytes_acked` jumps when a SACK hole fills, so 10 ms goodput spikes to
/// many times the link rate; 100 ms (2.5 RTTs on the default path) shows
/// the rate the eye wants while keeping PROBE_RTT dips visible.
const GOODPUT_WINDOW_S: f64 = 0.1;

/// Goodput in Mbit/s over consecutive windows of `window` seconds, from a
/// cumulative delivered-bytes series.
fn windowed_goodput(delivered: &[(f64, f64)], window: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let Some(&(mut t0, mut b0)) = delivered.first() else {
        return out;
    };
    for &(t, b) in delivered {
        if t - t0 >= window {
            out.push((t, (b - b0) * 8.0 / (t - t0) / 1e6));
            (t0, b0) = (t, b);
        }
    }
    out
}

/// Reads a flows.csv; `packet_bytes` converts its `drops` column (lost or
/// retransmitted packets) into a share of the delivered bytes.
fn measure(label: &str, csv: &Path, packet_bytes: f64) -> Result<Measured, String> {
    let t = Table::read(csv)?;
    let rtt = t.points(csv, "time_s", "rtt_ms", Some(("flow", "0")))?;
    let delivered = t.points(csv, "time_s", "delivered_bytes", Some(("flow", "0")))?;
    let drops = t.points(csv, "time_s", "drops", Some(("flow", "0")))?;
    let bw = t.points(csv, "time_s", "bw_estimate_bps", Some(("flow", "0")))?;
    let min_rtt = t.points(csv, "time_s", "min_rtt_ms", Some(("flow", "0")))?;
    let (t_end, bytes) = delivered.last().copied().unwrap_or((1.0, 0.0));
    let mut r: Vec<f64> = rtt.iter().map(|p| p.1).collect();
    let half = t_end / 2.0;
    let mut bws: Vec<f64> = bw
        .iter()
        .filter(|p| p.0 >= half)
        .map(|p| p.1 / 1e6)
        .collect();
    Ok(Measured {
        label: label.to_string(),
        goodput_mbps: bytes * 8.0 / t_end.max(1e-9) / 1e6,
        rtt_median_ms: quantile(&mut r, 0.5).unwrap_or(f64::NAN),
        rtt_p95_ms: quantile(&mut r, 0.95).unwrap_or(f64::NAN),
        retransmitted_pct: drops
            .last()
            .filter(|_| bytes > 0.0)
            .map(|d| d.1 * packet_bytes / bytes * 100.0),
        bw_mbps: quantile(&mut bws, 0.5),
        min_rtt_ms: min_rtt.last().map(|p| p.1),
        goodput: windowed_goodput(&delivered, GOODPUT_WINDOW_S),
        rtt,
        bw: bw.iter().map(|&(t, b)| (t, b / 1e6)).collect(),
        min_rtt,
    })
}

fn run_emu(
    exe: &Path,
    scenario: &Path,
    server: &str,
    client: &str,
    timeout: u64,
) -> Result<(), String> {
    let out = Command::new(exe)
        .args(["emu", "--scenario"])
        .arg(scenario)
        .args([
            "--timeout",
            &timeout.to_string(),
            "--server",
            server,
            "--client",
            client,
        ])
        .output()
        .map_err(|e| format!("cannot run the emulator: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "the emulator run failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The `compare` command.
pub fn run(scenario: &Path, with: &[Source], out: Option<PathBuf>) -> Result<(), String> {
    let sc = crate::scenario::load(scenario).map_err(|e| e.to_string())?;
    let flows = sc.runs.first().map_or(0, |r| r.config.flows.len());
    if sc.runs.len() != 1 || flows != 1 {
        return Err(format!(
            "{}: compare needs a scenario with one flow and no sweep ({} runs, {flows} flows)",
            scenario.display(),
            sc.runs.len(),
        ));
    }
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(format!("compare-{}", sc.name)));
    let mut run = sc.runs[0].clone();
    if run.config.sample_interval_ns == 0 {
        run.config.sample_interval_ns = 10_000_000;
    }
    let alg = run.config.flows[0].cc.algorithm.name().to_string();
    let secs = (run.config.duration_ns / 1_000_000_000).max(1);
    let mut rows = Vec::new();
    let sim_dir = out.join("sim");
    crate::sim::run_one(&sc.name, &run, &sim_dir, false)?;
    rows.push(measure(
        &format!("simulator ({alg})"),
        &sim_dir.join("flows.csv"),
        1500.0,
    )?);
    let exe_path = std::env::current_exe().map_err(|e| e.to_string())?;
    let exe = exe_path.display();
    for s in with {
        // (directory, label, receiver, sender prefix, bytes per counted
        // retransmission: TCP's MSS, the transport's chunk)
        let (name, label, recv, send, packet_bytes) = match s {
            Source::Kernel => {
                if !["bbr", "cubic", "reno"].contains(&alg.as_str()) {
                    eprintln!("compare: the kernel has no `{alg}`; skipping the kernel run");
                    continue;
                }
                ("kernel", "kernel TCP", "tcp recv", "tcp send", 1448.0)
            }
            Source::Udp => ("udp", "UDP transport", "recv", "send --quiet", 1400.0),
        };
        let dir = out.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let csv = std::fs::canonicalize(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .join("flows.csv");
        eprintln!("compare: {label} ({alg}) through the emulator for {secs} s …");
        run_emu(
            &exe_path,
            scenario,
            &format!("{exe} {recv} --listen {{server}}:5201"),
            &format!(
                "{exe} {send} --to {{server}}:5201 --cc {alg} --duration {secs}s --log {}",
                csv.display()
            ),
            secs + 60,
        )?;
        rows.push(measure(&format!("{label} ({alg})"), &csv, packet_bytes)?);
    }
    println!(
        "{:<26} {:>12} {:>11} {:>11} {:>10} {:>12} {:>12}",
        "source", "goodput Mb/s", "RTT p50 ms", "RTT p95 ms", "retx %", "bw est Mb/s", "min_rtt ms"
    );
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
    for r in &rows {
        println!(
            "{:<26} {:>12.2} {:>11.1} {:>11.1} {:>10} {:>12} {:>12}",
            r.label,
            r.goodput_mbps,
            r.rtt_median_ms,
            r.rtt_p95_ms,
            opt(r.retransmitted_pct, 3),
            opt(r.bw_mbps, 2),
            opt(r.min_rtt_ms, 1)
        );
    }
    // Each real source minus the simulator (goodput as a ratio), which is
    // what a user checks.
    if let Some((sim, real)) = rows.split_first() {
        for r in real {
            let d = |a: Option<f64>, b: Option<f64>, p: usize| match (a, b) {
                (Some(a), Some(b)) => format!("{:+.p$}", a - b),
                _ => "-".to_string(),
            };
            println!(
                "{:<26} {:>+11.1}% {:>11.1} {:>11.1} {:>10} {:>12} {:>12}",
                format!("Δ {}", r.label),
                (r.goodput_mbps / sim.goodput_mbps - 1.0) * 100.0,
                r.rtt_median_ms - sim.rtt_median_ms,
                r.rtt_p95_ms - sim.rtt_p95_ms,
                d(r.retransmitted_pct, sim.retransmitted_pct, 3),
                d(r.bw_mbps, sim.bw_mbps, 2),
                d(r.min_rtt_ms, sim.min_rtt_ms, 1)
            );
        }
    }
    let summary: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "source": r.label,
                "goodput_mbps": r.goodput_mbps,
                "rtt_median_ms": r.rtt_median_ms,
                "rtt_p95_ms": r.rtt_p95_ms,
                "retransmitted_pct": r.retransmitted_pct,
                "bw_estimate_mbps": r.bw_mbps,
                "min_rtt_ms": r.min_rtt_ms,
            })
        })
        .collect();
    let json = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    std::fs::write(out.join("compare.json"), json + "\n")
        .map_err(|e| format!("cannot write {}: {e}", out.join("compare.json").display()))?;
    let series = |f: &dyn Fn(&Measured) -> Vec<(f64, f64)>| -> Vec<Series> {
        rows.iter()
            .map(|r| Series {
                label: r.label.clone(),
                points: f(r),
            })
            .collect()
    };
    for (stem, title, y, s) in [
        (
            "goodput",
            "Goodput: simulator vs real sockets",
            "Mbit/s",
            series(&|r| r.goodput.clone()),
        ),
        (
            "rtt",
            "RTT: simulator vs real sockets",
            "ms",
            series(&|r| r.rtt.clone()),
        ),
        (
            "bw_estimate",
            "Bandwidth estimate: simulator vs real sockets",
            "Mbit/s",
            series(&|r| r.bw.clone()),
        ),
        (
            "min_rtt",
            "min_rtt estimate: simulator vs real sockets",
            "ms",
            series(&|r| r.min_rtt.clone()),
        ),
    ] {
        plots::figure(&Figure {
            stem: &out.join(stem),
            title,
            x_label: "time (s)",
            y_label: y,
            log_x: false,
            log_y: false,
            series: &s,
            published: &[],
        })?;
    }
    println!(
        "wrote {} (compare.json; goodput, rtt, bw_estimate and min_rtt figures; each source's flows.csv)",
        out.display()
    );
    Ok(())
}
