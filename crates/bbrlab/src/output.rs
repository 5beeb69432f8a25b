//! Writing a run's results: streamed time series and end-of-run summaries.
//!
//! Files per run directory:
//! - `flows.csv`: the shared per-flow time series (`netsim::FLOW_CSV_HEADER`,
//!   then `netsim::FLOW_CSV_COUNTER_COLUMNS`)
//! - `link.csv`: queue length and drops per link direction
//! - `summary.json` and `summary.csv`: one entry per flow, plus fairness
//!
//! Everything is formatted with fixed precision and written in a fixed
//! order, so the same scenario and seed give byte-identical files.

use netsim::{
    FlowSample, LinkSample, Recorder, Summary, FLOW_CSV_COUNTER_COLUMNS, FLOW_CSV_HEADER,
    LINK_CSV_HEADER,
};
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Streams samples to `flows.csv` and `link.csv` as the simulation runs,
/// so memory does not grow with simulated time.
pub struct CsvRecorder {
    flows: BufWriter<File>,
    links: BufWriter<File>,
}

impl CsvRecorder {
    /// Creates both files in `dir` and writes their headers.
    pub fn create(dir: &Path) -> io::Result<Self> {
        let mut flows = BufWriter::new(File::create(dir.join("flows.csv"))?);
        let mut links = BufWriter::new(File::create(dir.join("link.csv"))?);
        writeln!(flows, "{FLOW_CSV_HEADER},{FLOW_CSV_COUNTER_COLUMNS}")?;
        writeln!(links, "{LINK_CSV_HEADER}")?;
        Ok(CsvRecorder { flows, links })
    }

    /// Flushes both files.
    pub fn finish(mut self) -> io::Result<()> {
        self.flows.flush()?;
        self.links.flush()
    }
}

impl Recorder for CsvRecorder {
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        s.write_csv(&mut self.flows)
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        s.write_csv(&mut self.links)
    }
}

/// One flow in `summary.json`.
#[derive(Serialize)]
pub struct FlowJson {
    /// Flow label.
    pub name: String,
    /// Algorithm.
    pub algorithm: String,
    /// Unique bytes delivered.
    pub delivered_bytes: u64,
    /// Goodput, bits/s.
    pub goodput_bps: f64,
    /// Mean RTT, ms.
    pub rtt_mean_ms: Option<f64>,
    /// Median RTT, ms.
    pub rtt_median_ms: Option<f64>,
    /// 95th-percentile RTT, ms.
    pub rtt_p95_ms: Option<f64>,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Retransmitted packets.
    pub retransmissions: u64,
    /// Retransmissions / packets sent.
    pub retransmission_rate: f64,
    /// Packets of this flow dropped by the path.
    pub drops: u64,
    /// Retransmission timeouts.
    pub rtos: u64,
    /// Fraction of time in each controller mode.
    pub mode_fractions: Vec<(String, f64)>,
    /// Completion time of a finite flow, s.
    pub completion_s: Option<f64>,
    /// `bbr-jitter` only: fraction of the flow's time during which its BDP
    /// used srtt instead of min_rtt (seed 001, eqs. 10–11); null otherwise.
    pub time_using_srtt: Option<f64>,
}

/// `summary.json`.
#[derive(Serialize)]
pub struct SummaryJson {
    /// Scenario name.
    pub scenario: String,
    /// Sweep parameters of this run.
    pub params: Vec<(String, String)>,
    /// Per flow.
    pub flows: Vec<FlowJson>,
    /// Jain's fairness index over flow goodputs.
    pub jain_fairness: Option<f64>,
    /// Forward-direction drops.
    pub forward_drops: u64,
    /// Data packets simulated.
    pub packets_simulated: u64,
    /// ACK packets simulated.
    pub ack_packets_simulated: u64,
}

/// Rounds to 6 significant decimals so JSON output is stable and readable.
fn r6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl SummaryJson {
    /// Builds the JSON view of a summary.
    pub fn new(scenario: &str, params: &[(String, String)], s: &Summary) -> Self {
        let flows = s
            .flows
            .iter()
            .map(|f| {
                let total: u64 = f.mode_times.entries.iter().map(|e| e.1).sum();
                FlowJson {
                    name: f.name.clone(),
                    algorithm: f.algorithm.clone(),
                    delivered_bytes: f.delivered_bytes,
                    goodput_bps: f.goodput_bps.round(),
                    rtt_mean_ms: f.rtt_mean_ms.map(r6),
                    rtt_median_ms: f.rtt_median_ms.map(r6),
                    rtt_p95_ms: f.rtt_p95_ms.map(r6),
                    packets_sent: f.packets_sent,
                    retransmissions: f.retransmissions,
                    retransmission_rate: r6(f.retransmission_rate),
                    drops: f.drops,
                    rtos: f.rtos,
                    mode_fractions: f
                        .mode_times
                        .entries
                        .iter()
                        .map(|(m, t)| (m.name().to_string(), r6(*t as f64 / total.max(1) as f64)))
                        .collect(),
                    completion_s: f.completion_ns.map(|c| r6(c as f64 / 1e9)),
                    time_using_srtt: f.mode_times.srtt_fraction().map(r6),
                }
            })
            .collect();
        SummaryJson {
            scenario: scenario.to_string(),
            params: params.to_vec(),
            flows,
            jain_fairness: s.jain_fairness.map(r6),
            forward_drops: s.forward_drops,
            packets_simulated: s.packets_simulated,
            ack_packets_simulated: s.ack_packets_simulated,
        }
    }
}

/// Header of the summary CSV (one row per flow per run).
pub const SUMMARY_CSV_HEADER: &str = "run,params,flow,algorithm,goodput_bps,rtt_mean_ms,rtt_median_ms,rtt_p95_ms,retransmission_rate,drops,rtos,jain_fairness,time_in_probe_bw,time_in_probe_rtt";

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

/// Appends this run's rows to a summary CSV.
pub fn write_summary_rows(w: &mut dyn Write, run: &str, s: &SummaryJson) -> io::Result<()> {
    let params = s
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";");
    for f in &s.flows {
        let frac = |m: &str| {
            f.mode_fractions
                .iter()
                .find(|e| e.0 == m)
                .map_or(0.0, |e| e.1)
        };
        writeln!(
            w,
            "{run},\"{params}\",{},{},{:.0},{},{},{},{:.6},{},{},{},{:.4},{:.4}",
            f.name,
            f.algorithm,
            f.goodput_bps,
            opt(f.rtt_mean_ms),
            opt(f.rtt_median_ms),
            opt(f.rtt_p95_ms),
            f.retransmission_rate,
            f.drops,
            f.rtos,
            opt(s.jain_fairness),
            frac("probe_bw"),
            frac("probe_rtt"),
        )?;
    }
    Ok(())
}
