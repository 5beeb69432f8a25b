//! The numbers behind the figures that read more than one run's time
//! series: the Pantheon-style throughput against delay points of a sweep
//! (from its `summary.json`), a run's flow completion times (from its
//! `fct.csv`) and empirical CDFs. Reading and checking live here, beside
//! the summaries they come from; drawing is the `figures` crate's.

use serde::Deserialize;
use std::path::Path;

/// One point of a Pantheon-style plot: one algorithm's flows in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct PantheonPoint {
    /// The run (`run-NNNN`).
    pub run: String,
    /// Sweep parameters of the run, `path=value`, in the file's order.
    pub params: Vec<(String, String)>,
    /// The algorithm.
    pub algorithm: String,
    /// How many of the run's flows use it.
    pub flows: usize,
    /// Their goodputs added up, Mbit/s.
    pub throughput_mbps: f64,
    /// The mean over those flows of each flow's 95th-percentile RTT, ms.
    pub delay_p95_ms: f64,
}

/// The Pantheon points of a `summary.json` (one run or a sweep): per run,
/// one point per algorithm, in the order the flows list them. Pantheon
/// (Yan et al., "Pantheon: the training ground for Internet
/// congestion-control research", USENIX ATC 2018, §4) plots each scheme's
/// mean throughput against its 95th-percentile one-way delay; the
/// simulator's summary has each flow's RTT percentiles, so the delay here
/// is the round trip (propagation included). Flows without an RTT sample
/// count for throughput but not for delay; an algorithm with no RTT at all
/// in a run gives no point. `what` names the file for errors.
pub fn pantheon_points(text: &str, what: &str) -> Result<Vec<PantheonPoint>, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{what}: not JSON ({e}); expected a bbrlab summary.json"))?;
    let runs = v.get("runs").and_then(|r| r.as_array()).ok_or_else(|| {
        format!("{what}: no `runs` list; expected the summary.json `bbrlab sim` writes")
    })?;
    let mut out = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let run = r
            .get("run")
            .and_then(|x| x.as_str())
            .map_or_else(|| format!("run {i}"), str::to_string);
        let params: Vec<(String, String)> = r
            .get("params")
            .and_then(|p| p.as_object())
            .map(|m| {
                m.iter()
                    .map(|(k, v)| {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        (k.clone(), v)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let flows = r
            .get("flows")
            .and_then(|f| f.as_array())
            .ok_or_else(|| format!("{what}: {run} has no `flows` list"))?;
        // Per algorithm, in first-seen order: (flows, goodput, RTT p95s).
        let mut groups: Vec<(String, usize, f64, Vec<f64>)> = Vec::new();
        for f in flows {
            let alg = f
                .get("algorithm")
                .and_then(|a| a.as_str())
                .ok_or_else(|| format!("{what}: {run}: a flow without `algorithm`"))?;
            let goodput = f
                .get("goodput_bps")
                .and_then(|g| g.as_f64())
                .ok_or_else(|| format!("{what}: {run}: a flow without `goodput_bps`"))?;
            let i = match groups.iter().position(|g| g.0 == alg) {
                Some(i) => i,
                None => {
                    groups.push((alg.to_string(), 0, 0.0, Vec::new()));
                    groups.len() - 1
                }
            };
            let g = &mut groups[i];
            g.1 += 1;
            g.2 += goodput;
            if let Some(d) = f.get("rtt_p95_ms").and_then(|d| d.as_f64()) {
                g.3.push(d);
            }
        }
        for (algorithm, n, goodput, delays) in groups {
            if delays.is_empty() {
                continue;
            }
            out.push(PantheonPoint {
                run: run.clone(),
                params: params.clone(),
                algorithm,
                flows: n,
                throughput_mbps: goodput / 1e6,
                delay_p95_ms: delays.iter().sum::<f64>() / delays.len() as f64,
            });
        }
    }
    Ok(out)
}

/// The columns of `fct.csv`, in order: the simulator's, which writes it.
pub use netsim::FCT_COLUMNS;

/// One finished flow of `fct.csv`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct FctRow {
    /// The flow's name (`<arrival>#<k>` for generated flows).
    pub flow: String,
    /// Its algorithm.
    pub algorithm: String,
    /// Bytes it transferred.
    pub size_bytes: u64,
    /// When it started, s.
    pub start_s: f64,
    /// When its last byte was delivered, s.
    pub end_s: f64,
    /// Flow completion time, s.
    pub fct_s: f64,
    /// The best possible: min RTT of its path plus size over the
    /// bottleneck rate, s.
    pub ideal_s: f64,
    /// `fct_s / ideal_s`.
    pub slowdown: f64,
}

/// Reads a run's `fct.csv`, checking that it has the contract's columns.
pub fn read_fct(path: &Path) -> Result<Vec<FctRow>, String> {
    let mut r = csv::Reader::from_path(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let head = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let missing: Vec<&str> = FCT_COLUMNS
        .iter()
        .copied()
        .filter(|c| !head.iter().any(|h| h == *c))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: missing column(s) {}; fct.csv has {}",
            path.display(),
            missing.join(", "),
            FCT_COLUMNS.join(",")
        ));
    }
    let mut out = Vec::new();
    for (i, row) in r.deserialize::<FctRow>().enumerate() {
        let row = row.map_err(|e| format!("{}: row {}: {e}", path.display(), i + 2))?;
        if !(row.fct_s.is_finite() && row.fct_s >= 0.0) {
            return Err(format!(
                "{}: row {}: fct_s {} is not a time (a finite number of seconds, 0 or more)",
                path.display(),
                i + 2,
                row.fct_s
            ));
        }
        out.push(row);
    }
    Ok(out)
}

/// The empirical CDF of `values` as `(value, fraction at or below)` points,
/// at most `max_points` of them (evenly spaced ranks, the largest always
/// kept), non-finite values left out.
pub fn cdf(values: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let stride = n.div_ceil(max_points.max(1)).max(1);
    let mut out: Vec<(f64, f64)> = (0..n)
        .step_by(stride)
        .map(|i| (v[i], (i + 1) as f64 / n as f64))
        .collect();
    if out.last().is_some_and(|p| p.1 < 1.0) {
        out.push((v[n - 1], 1.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{write_summaries, FlowJson, SummaryJson};

    fn flow(i: usize, alg: &str, goodput: f64, p95: Option<f64>) -> FlowJson {
        FlowJson {
            flow: i,
            name: format!("f{i}"),
            algorithm: alg.into(),
            delivered_bytes: 1,
            goodput_bps: goodput,
            rtt_mean_ms: None,
            rtt_median_ms: None,
            rtt_p95_ms: p95,
            rtt_p99_ms: None,
            packets_sent: 1,
            retransmissions: 0,
            retransmission_rate: 0.0,
            drops: 0,
            rtos: 0,
            loss_episodes: 0,
            undos: 0,
            mode_fractions: Vec::new(),
            completion_s: None,
            time_using_srtt: None,
            ce_packets: 0,
            ce_fraction: 0.0,
            handshake: None,
            rwnd_limited_s: None,
            rwnd_reach: None,
            timestamps: None,
        }
    }

    fn run(n: usize, buffer: &str, flows: Vec<FlowJson>) -> SummaryJson {
        SummaryJson {
            scenario: "s".into(),
            run: format!("run-{n:04}"),
            params: vec![("link.forward.queue.limit".into(), buffer.into())],
            flows,
            jain_fairness: None,
            forward_drops: 0,
            packets_simulated: 0,
            ack_packets_simulated: 0,
            links: Vec::new(),
            fct: None,
            cross: Vec::new(),
            fairness_over_time: None,
            queue: None,
        }
    }

    /// The points are the summaries' numbers: per run and algorithm, the
    /// goodputs added and the flows' p95 RTTs averaged.
    #[test]
    fn pantheon_points_are_the_summaries_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let a = run(
            0,
            "1bdp",
            vec![
                flow(0, "bbr", 4_000_000.0, Some(50.0)),
                flow(1, "bbr", 3_000_000.0, Some(70.0)),
                flow(2, "cubic", 2_500_000.0, Some(120.0)),
            ],
        );
        let b = run(1, "4bdp", vec![flow(0, "cubic", 9_000_000.0, None)]);
        write_summaries(dir.path(), "s", &[&a, &b]).unwrap();
        let text = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
        let p = pantheon_points(&text, "summary.json").unwrap();
        assert_eq!(p.len(), 2, "run-0001's cubic has no RTT: no point");
        assert_eq!(
            (p[0].run.as_str(), p[0].algorithm.as_str(), p[0].flows),
            ("run-0000", "bbr", 2)
        );
        assert!((p[0].throughput_mbps - 7.0).abs() < 1e-12);
        assert!((p[0].delay_p95_ms - 60.0).abs() < 1e-12);
        assert_eq!(p[1].algorithm, "cubic");
        assert!((p[1].throughput_mbps - 2.5).abs() < 1e-12);
        assert_eq!(p[1].delay_p95_ms, 120.0);
        assert_eq!(
            p[0].params,
            [("link.forward.queue.limit".to_string(), "1bdp".to_string())]
        );
    }

    #[test]
    fn a_file_that_is_not_a_summary_is_refused_with_what_is_expected() {
        let e = pantheon_points("not json", "x/summary.json").unwrap_err();
        assert!(
            e.contains("x/summary.json") && e.contains("not JSON"),
            "{e}"
        );
        let e = pantheon_points("{\"a\": 1}", "y.json").unwrap_err();
        assert!(e.contains("no `runs`"), "{e}");
    }

    /// A hand-written fct.csv with the contract's columns (another part of
    /// issue 25 writes the real one).
    #[test]
    fn fct_csv_is_read_by_its_contract_columns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fct.csv");
        std::fs::write(
            &p,
            "flow,algorithm,size_bytes,start_s,end_s,fct_s,ideal_s,slowdown\n\
             web#0,bbr,10000,0.5,0.62,0.12,0.04,3\n\
             \"web, big#1\",cubic,1000000,1.0,2.5,1.5,0.9,1.666667\n",
        )
        .unwrap();
        let rows = read_fct(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].flow, "web, big#1");
        assert_eq!(rows[1].size_bytes, 1_000_000);
        assert_eq!(rows[0].fct_s, 0.12);
        std::fs::write(&p, "flow,algorithm,size_bytes,fct_s\nx,bbr,1,0.1\n").unwrap();
        let e = read_fct(&p).unwrap_err();
        assert!(
            e.contains("missing column(s) start_s, end_s, ideal_s, slowdown"),
            "{e}"
        );
        std::fs::write(
            &p,
            "flow,algorithm,size_bytes,start_s,end_s,fct_s,ideal_s,slowdown\nx,bbr,-3,0,1,1,1,1\n",
        )
        .unwrap();
        let e = read_fct(&p).unwrap_err();
        assert!(e.contains("row 2"), "{e}");
    }

    #[test]
    fn cdf_points_rise_to_one_and_are_thinned() {
        let c = cdf(&[3.0, 1.0, f64::NAN, 2.0, 4.0], 100);
        assert_eq!(c, [(1.0, 0.25), (2.0, 0.5), (3.0, 0.75), (4.0, 1.0)]);
        let many: Vec<f64> = (0..10_000).map(f64::from).collect();
        let c = cdf(&many, 500);
        assert!(c.len() <= 501, "{}", c.len());
        assert_eq!(*c.last().unwrap(), (9999.0, 1.0));
        assert_eq!(c[0], (0.0, 1e-4));
        assert!(cdf(&[], 10).is_empty());
    }
}
