//! Implementations beside algorithms: bbrlab's `bbr` and `bbr3` and the
//! QUIC stacks' own controllers (`s2n:bbr2`, `s2n:cubic`, `quinn:bbr`,
//! `quinn:cubic`, from the `quic-controllers` crate) on C1's, C3's and
//! C10's paths, each on the same simulated sender.
//!
//! `bbrlab stacks` runs it and writes `stack-controllers.csv` and
//! `stack-controllers.md` (the table the book's "Stack controllers" chapter
//! includes). The paths are the claims' own (`scenarios/claims/`):
//! - **C1:** 100 Mbit/s, 100 ms, a one-BDP buffer (833 packets), 1 %
//!   random loss (the middle of C1's loss sweep, where loss-based and
//!   model-based controllers part);
//! - **C3:** 10 Mbit/s, 40 ms, a 1000-packet drop-tail buffer
//!   (bufferbloat: 25 BDP);
//! - **C10:** 50 Mbit/s, 40 ms, a one-BDP buffer (167 packets), shared
//!   with one of bbrlab's `cubic` flows (C10 runs BBR against CUBIC; here
//!   each controller takes BBR's place).

use runner::sweep::{run_one, run_parallel, Quiet};
use scenario::builder::{millis, Flow, Queue, ScenarioBuilder};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// The controllers compared, bbrlab's first.
pub const CONTROLLERS: [&str; 6] = [
    "bbr",
    "bbr3",
    "s2n:bbr2",
    "s2n:cubic",
    "quinn:bbr",
    "quinn:cubic",
];

/// Simulated seconds per path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Durations {
    /// C1's path.
    pub c1_s: u64,
    /// C3's path.
    pub c3_s: u64,
    /// C10's path.
    pub c10_s: u64,
}

impl Durations {
    /// The claims' own durations (C1 60 s, C3 120 s, C10 60 s).
    pub const FULL: Durations = Durations {
        c1_s: 60,
        c3_s: 120,
        c10_s: 60,
    };
    /// Shorter, for CI (`--quick`).
    pub const QUICK: Durations = Durations {
        c1_s: 15,
        c3_s: 30,
        c10_s: 15,
    };
}

/// One controller on one path.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// `C1`, `C3` or `C10`.
    pub path: &'static str,
    /// The controller's name.
    pub controller: String,
    /// Its goodput, Mbit/s.
    pub goodput_mbps: f64,
    /// Its median RTT sample, ms.
    pub rtt_median_ms: Option<f64>,
    /// Median RTT above the path's propagation RTT, ms.
    pub queueing_ms: Option<f64>,
    /// Packets it retransmitted.
    pub retransmissions: u64,
    /// Retransmitted packets per packet sent, %.
    pub retransmission_pct: f64,
    /// C10: the competing `cubic` flow's goodput, Mbit/s.
    pub cubic_goodput_mbps: Option<f64>,
}

struct PathDef {
    id: &'static str,
    rtt_ms: f64,
    text: String,
}

fn paths(d: Durations) -> Vec<PathDef> {
    // One path of a claim: `rate` bit/s, `rtt_ms` split evenly, a
    // `queue`-packet buffer, `flows` (the first swept over the stacks'
    // controllers) for `seconds`.
    let path = |name: &str, rate: f64, rtt_ms: f64, queue: u64, loss: Option<f64>| {
        ScenarioBuilder::bottleneck(rate, millis(rtt_ms / 2.0), Queue::packets(queue), loss)
            .name(name)
            .sample_interval(Duration::ZERO)
            .flow(Flow::new("bbr"))
    };
    vec![
        PathDef {
            id: "C1",
            rtt_ms: 100.0,
            text: path("stacks-c1", 100e6, 100.0, 833, Some(0.01))
                .duration(Duration::from_secs(d.c1_s))
                .sweep("flow.algorithm", CONTROLLERS.iter().copied())
                .to_toml(),
        },
        PathDef {
            id: "C3",
            rtt_ms: 40.0,
            text: path("stacks-c3", 10e6, 40.0, 1000, None)
                .duration(Duration::from_secs(d.c3_s))
                .sweep("flow.algorithm", CONTROLLERS.iter().copied())
                .to_toml(),
        },
        PathDef {
            id: "C10",
            rtt_ms: 40.0,
            text: path("stacks-c10", 50e6, 40.0, 167, None)
                .duration(Duration::from_secs(d.c10_s))
                .flow(Flow::new("cubic").name("competing-cubic"))
                .sweep("flow.0.algorithm", CONTROLLERS.iter().copied())
                .to_toml(),
        },
    ]
}

/// Runs every controller on every path, each run's files under
/// `out/<path>/run-NNNN`; returns one row per controller per path, in
/// [`CONTROLLERS`] order within each path.
pub fn run(out: &Path, d: Durations, jobs: Option<usize>) -> Result<Vec<Row>, String> {
    let defs = paths(d);
    let mut items = Vec::new();
    for (pi, p) in defs.iter().enumerate() {
        let sc = scenario::parse(&p.text, p.id, Path::new("."), Path::new("stacks.toml"))
            .map_err(|e| format!("{}: {e}", p.id))?;
        for (ri, r) in sc.runs.into_iter().enumerate() {
            let dir = out.join(p.id.to_lowercase()).join(format!("run-{ri:04}"));
            items.push((pi, r, dir));
        }
    }
    let results = run_parallel(
        &items,
        jobs,
        &Quiet,
        |(pi, r, _)| (defs[*pi].id.to_string(), r.config.duration_ns),
        |(pi, r, dir), _| run_one(defs[*pi].id, r, dir),
    );
    let mut rows = Vec::new();
    for ((pi, _, dir), res) in items.iter().zip(results) {
        let s = res.ok_or_else(|| format!("{}: a worker died", dir.display()))??;
        let p = &defs[*pi];
        let f = s
            .flows
            .first()
            .ok_or_else(|| format!("{}: no flow", dir.display()))?;
        let cubic = (p.id == "C10")
            .then(|| s.flows.get(1).map(|c| c.goodput_bps / 1e6))
            .flatten();
        rows.push(Row {
            path: p.id,
            controller: f.algorithm.clone(),
            goodput_mbps: f.goodput_bps / 1e6,
            rtt_median_ms: f.rtt_median_ms,
            queueing_ms: f.rtt_median_ms.map(|m| (m - p.rtt_ms).max(0.0)),
            retransmissions: f.retransmissions,
            retransmission_pct: 100.0 * f.retransmission_rate,
            cubic_goodput_mbps: cubic,
        });
    }
    Ok(rows)
}

/// Writes `stack-controllers.csv` and `stack-controllers.md` in `out`.
pub fn write(out: &Path, rows: &[Row]) -> Result<(), String> {
    let csv_path = out.join("stack-controllers.csv");
    let mut w = csv::Writer::from_path(&csv_path)
        .map_err(|e| format!("writing {}: {e}", csv_path.display()))?;
    for r in rows {
        w.serialize(r)
            .map_err(|e| format!("writing {}: {e}", csv_path.display()))?;
    }
    w.flush()
        .map_err(|e| format!("writing {}: {e}", csv_path.display()))?;
    let md = out.join("stack-controllers.md");
    std::fs::write(&md, markdown(rows)).map_err(|e| format!("writing {}: {e}", md.display()))
}

/// The comparison as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| path | controller | goodput Mbit/s | median RTT ms | queueing ms | retransmissions | retx % | competing cubic Mbit/s |\n|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let opt = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.1}"));
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.2} | {} | {} | {} | {:.2} | {} |",
            r.path,
            r.controller,
            r.goodput_mbps,
            opt(r.rtt_median_ms),
            opt(r.queueing_ms),
            r.retransmissions,
            r.retransmission_pct,
            r.cubic_goodput_mbps
                .map_or("–".to_string(), |x| format!("{x:.2}")),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short run of the whole comparison: one row per controller per
    /// path, every controller delivered data, C10 has its competitor, and
    /// the files are written.
    #[test]
    fn the_comparison_has_every_controller_on_every_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = Durations {
            c1_s: 3,
            c3_s: 3,
            c10_s: 3,
        };
        let rows = run(dir.path(), d, Some(2)).unwrap();
        assert_eq!(rows.len(), 3 * CONTROLLERS.len());
        for (i, path) in ["C1", "C3", "C10"].iter().enumerate() {
            let got: Vec<_> = rows[i * 6..(i + 1) * 6]
                .iter()
                .map(|r| {
                    assert_eq!(r.path, *path);
                    r.controller.as_str()
                })
                .collect();
            assert_eq!(got, CONTROLLERS, "{path}");
        }
        for r in &rows {
            assert!(
                r.goodput_mbps > 0.1,
                "{} on {}: {r:?}",
                r.controller,
                r.path
            );
            assert!(r.rtt_median_ms.is_some(), "{r:?}");
            assert_eq!(r.cubic_goodput_mbps.is_some(), r.path == "C10", "{r:?}");
        }
        // C1's 1 % loss makes every controller retransmit.
        assert!(rows[..6].iter().all(|r| r.retransmissions > 0));
        write(dir.path(), &rows).unwrap();
        let md = std::fs::read_to_string(dir.path().join("stack-controllers.md")).unwrap();
        assert_eq!(md.lines().count(), 2 + rows.len());
        let csv = std::fs::read_to_string(dir.path().join("stack-controllers.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + rows.len());
    }
}
