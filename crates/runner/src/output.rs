//! Writing a run's results: streamed time series and end-of-run summaries.
//!
//! Files per run directory:
//! - `flows.csv`: the shared per-flow time series
//!   ([`sender::schema::FLOW_COLUMNS`])
//! - `link.csv`: queue length and drops per link direction
//!   ([`sender::schema::LINK_COLUMNS`])
//! - `summary.json` and `summary.csv`: one entry per flow, plus fairness
//!
//! Every CSV file goes through the `csv` crate, so a flow named
//! `bbr, no lt_bw` is one quoted cell, not two. `summary.json` has one
//! shape whether the scenario is one run or a sweep ([`SummaryFile`]),
//! runs are always named `run-NNNN`, and flows are identified by the same
//! index (`flow`) as in `flows.csv`, with their label in `name`. The
//! columns are documented in `docs/outputs.md`.
//!
//! Everything is formatted with fixed precision and written in a fixed
//! order, so the same scenario and seed give byte-identical files.

use netsim::{FlowSample, LinkSample, Recorder, Summary};
use sender::schema::{FLOW_COLUMNS, LINK_COLUMNS};
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

/// Streams samples to `flows.csv` and `link.csv` as the simulation runs,
/// so memory does not grow with simulated time.
pub struct CsvRecorder {
    flows: csv::Writer<BufWriter<File>>,
    links: csv::Writer<BufWriter<File>>,
}

impl CsvRecorder {
    /// Creates both files in `dir` and writes their headers.
    pub fn create(dir: &Path) -> io::Result<Self> {
        let open = |name: &str| -> io::Result<csv::Writer<BufWriter<File>>> {
            Ok(csv::Writer::from_writer(BufWriter::new(File::create(
                dir.join(name),
            )?)))
        };
        let mut flows = open("flows.csv")?;
        let mut links = open("link.csv")?;
        flows
            .write_record(FLOW_COLUMNS.map(|c| c.name))
            .map_err(io::Error::other)?;
        links
            .write_record(LINK_COLUMNS.map(|c| c.name))
            .map_err(io::Error::other)?;
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
        self.flows
            .write_record(s.fields())
            .map_err(io::Error::other)
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        self.links
            .write_record(s.fields())
            .map_err(io::Error::other)
    }
}

/// One flow in `summary.json`.
#[derive(Serialize)]
pub struct FlowJson {
    /// The flow's index, as in `flows.csv`'s `flow` column.
    pub flow: usize,
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
    /// 99th-percentile RTT, ms.
    pub rtt_p99_ms: Option<f64>,
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
    /// Packets the sender learned were CE-marked (ECN): `flows.csv`'s last
    /// `delivered_ce`, at the end of the run.
    pub ce_packets: u64,
    /// `ce_packets` over the packets the sender saw delivered
    /// (acknowledged); 0 without ECN.
    pub ce_fraction: f64,
}

/// One link direction in `summary.json`.
#[derive(Serialize)]
pub struct LinkJson {
    /// `forward` (data) or `reverse` (ACKs).
    pub direction: &'static str,
    /// Packets dropped, all causes.
    pub drops: u64,
    /// ECN-capable packets marked CE instead of dropped.
    pub ce_marked: u64,
}

/// One run's summary: an element of [`SummaryFile::runs`].
#[derive(Serialize)]
pub struct SummaryJson {
    /// Scenario name.
    pub scenario: String,
    /// The run's name, `run-NNNN` (also its directory).
    pub run: String,
    /// Sweep parameters of this run (an object keyed by the swept path;
    /// empty without a sweep).
    #[serde(serialize_with = "params_as_map")]
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
    /// Per link direction: drops and CE marks.
    pub links: Vec<LinkJson>,
    /// Jain's index over sliding windows and the time to converge to a
    /// fair share ([`crate::metrics`]); absent without samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness_over_time: Option<crate::metrics::FairnessJson>,
    /// The forward queue's distribution over the run's samples
    /// ([`crate::metrics`]); absent without samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<crate::metrics::QueueJson>,
}

/// Rounds to 6 significant decimals so JSON output is stable and readable.
fn r6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl SummaryJson {
    /// Builds the JSON view of a summary.
    pub fn new(scenario: &str, run: &str, params: &[(String, String)], s: &Summary) -> Self {
        let flows = s
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let total: u64 = f.mode_times.entries.iter().map(|e| e.1).sum();
                FlowJson {
                    flow: i,
                    name: f.name.clone(),
                    algorithm: f.algorithm.clone(),
                    delivered_bytes: f.delivered_bytes,
                    goodput_bps: f.goodput_bps.round(),
                    rtt_mean_ms: f.rtt_mean_ms.map(r6),
                    rtt_median_ms: f.rtt_median_ms.map(r6),
                    rtt_p95_ms: f.rtt_p95_ms.map(r6),
                    rtt_p99_ms: f.rtt_p99_ms.map(r6),
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
                    ce_packets: f.ce_packets,
                    ce_fraction: r6(f.ce_fraction()),
                }
            })
            .collect();
        SummaryJson {
            scenario: scenario.to_string(),
            run: run.to_string(),
            params: params.to_vec(),
            flows,
            jain_fairness: s.jain_fairness.map(r6),
            forward_drops: s.forward_drops,
            packets_simulated: s.packets_simulated,
            ack_packets_simulated: s.ack_packets_simulated,
            links: vec![
                LinkJson {
                    direction: "forward",
                    drops: s.forward_drops,
                    ce_marked: s.forward_ce_marked,
                },
                LinkJson {
                    direction: "reverse",
                    drops: s.reverse_drops,
                    ce_marked: s.reverse_ce_marked,
                },
            ],
            fairness_over_time: None,
            queue: None,
        }
    }
}

/// A swept value as JSON: an integer, a number or a boolean when it
/// reads as one (a seed stays `1`, not `1.0`), else a string.
fn param_value(v: &str) -> serde_json::Value {
    if let Ok(i) = v.parse::<i64>() {
        return i.into();
    }
    if let Ok(b) = v.parse::<bool>() {
        return b.into();
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => {
            serde_json::Number::from_f64(x).map_or_else(|| v.into(), serde_json::Value::Number)
        }
        _ => v.into(),
    }
}

fn params_as_map<S: serde::Serializer>(p: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(p.len()))?;
    for (k, v) in p {
        m.serialize_entry(k, &param_value(v))?;
    }
    m.end()
}

/// The bbrlab version and git commit the results came from.
pub fn provenance() -> (&'static str, &'static str) {
    (
        env!("CARGO_PKG_VERSION"),
        option_env!("BBRLAB_GIT_COMMIT").unwrap_or("unknown"),
    )
}

/// `summary.json`: the same shape for one run and for a sweep.
#[derive(Serialize)]
pub struct SummaryFile<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// bbrlab's version.
    pub bbrlab_version: &'static str,
    /// The git commit bbrlab was built from (`-dirty` with uncommitted
    /// changes; `unknown` outside a checkout).
    pub git_commit: &'static str,
    /// The swept paths, in column order (empty without a sweep).
    pub parameters: Vec<String>,
    /// Every run, in order.
    pub runs: Vec<&'a SummaryJson>,
}

/// Writes `summary.json` and `summary.csv` for `runs` into `dir`.
pub fn write_summaries(dir: &Path, scenario: &str, runs: &[&SummaryJson]) -> io::Result<()> {
    let mut parameters: Vec<String> = Vec::new();
    for r in runs {
        for (k, _) in &r.params {
            if !parameters.contains(k) {
                parameters.push(k.clone());
            }
        }
    }
    let (bbrlab_version, git_commit) = provenance();
    let file = SummaryFile {
        scenario,
        bbrlab_version,
        git_commit,
        parameters: parameters.clone(),
        runs: runs.to_vec(),
    };
    let text = serde_json::to_string_pretty(&file).map_err(io::Error::other)?;
    std::fs::write(dir.join("summary.json"), text + "\n")?;
    let mut w = csv::Writer::from_writer(BufWriter::new(File::create(dir.join("summary.csv"))?));
    let mut head: Vec<&str> = vec!["run"];
    head.extend(parameters.iter().map(String::as_str));
    head.extend(SUMMARY_CSV_COLUMNS);
    w.write_record(&head).map_err(io::Error::other)?;
    for r in runs {
        for row in summary_rows(r, &parameters) {
            w.write_record(&row).map_err(io::Error::other)?;
        }
    }
    w.flush()
}

/// Columns of `summary.csv` after `run` and one column per swept path.
pub const SUMMARY_CSV_COLUMNS: [&str; 18] = [
    "flow",
    "name",
    "algorithm",
    "goodput_bps",
    "rtt_mean_ms",
    "rtt_median_ms",
    "rtt_p95_ms",
    "rtt_p99_ms",
    "retransmission_rate",
    "drops",
    "rtos",
    "jain_fairness",
    "time_in_probe_bw",
    "time_in_probe_rtt",
    "delivered_bytes",
    "packets_sent",
    "ce_packets",
    "ce_fraction",
];

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.3}"))
}

/// One run's rows of `summary.csv`: one per flow.
fn summary_rows(s: &SummaryJson, parameters: &[String]) -> Vec<Vec<String>> {
    s.flows
        .iter()
        .map(|f| {
            // A mode's share, with its phases (`probe_bw` sums bbr3's
            // `probe_bw_down` … `probe_bw_up`).
            let frac = |m: &str| {
                f.mode_fractions
                    .iter()
                    .filter(|e| e.0 == m || e.0.strip_prefix(m).is_some_and(|r| r.starts_with('_')))
                    .fold(0.0, |a, e| a + e.1)
            };
            let mut row = vec![s.run.clone()];
            for p in parameters {
                row.push(
                    s.params
                        .iter()
                        .find(|(k, _)| k == p)
                        .map_or(String::new(), |(_, v)| v.clone()),
                );
            }
            row.extend([
                f.flow.to_string(),
                f.name.clone(),
                f.algorithm.clone(),
                format!("{:.0}", f.goodput_bps),
                opt(f.rtt_mean_ms),
                opt(f.rtt_median_ms),
                opt(f.rtt_p95_ms),
                opt(f.rtt_p99_ms),
                format!("{:.6}", f.retransmission_rate),
                f.drops.to_string(),
                f.rtos.to_string(),
                opt(s.jain_fairness),
                format!("{:.4}", frac("probe_bw")),
                format!("{:.4}", frac("probe_rtt")),
                f.delivered_bytes.to_string(),
                f.packets_sent.to_string(),
                f.ce_packets.to_string(),
                format!("{:.6}", f.ce_fraction),
            ]);
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn swept_values_keep_their_json_type() {
        use super::param_value;
        assert_eq!(param_value("1"), serde_json::json!(1));
        assert_eq!(param_value("0.05"), serde_json::json!(0.05));
        assert_eq!(param_value("true"), serde_json::json!(true));
        assert_eq!(param_value("40ms"), serde_json::json!("40ms"));
    }

    use super::*;

    fn flow(name: &str) -> FlowJson {
        FlowJson {
            flow: 0,
            name: name.into(),
            algorithm: "bbr".into(),
            delivered_bytes: 1,
            goodput_bps: 2.0,
            rtt_mean_ms: Some(1.0),
            rtt_median_ms: None,
            rtt_p95_ms: None,
            rtt_p99_ms: Some(9.0),
            packets_sent: 3,
            retransmissions: 0,
            retransmission_rate: 0.0,
            drops: 0,
            rtos: 0,
            mode_fractions: vec![("probe_bw".into(), 0.5)],
            completion_s: None,
            time_using_srtt: None,
            ce_packets: 0,
            ce_fraction: 0.0,
        }
    }

    /// Issue 13: a flow named `bbr, no lt_bw` gave 15 fields under a
    /// 14-column header. Every row now has exactly the header's fields,
    /// and a swept parameter is a column of its own.
    #[test]
    fn summary_csv_quotes_names_and_has_a_column_per_parameter() {
        let dir = tempfile::tempdir().unwrap();
        let mk = |run: &str, loss: &str, name: &str| SummaryJson {
            scenario: "s".into(),
            run: run.into(),
            params: vec![
                ("flow.algorithm".into(), "bbr".into()),
                ("link.forward.loss".into(), loss.into()),
            ],
            flows: vec![flow(name)],
            jain_fairness: None,
            forward_drops: 0,
            packets_simulated: 0,
            ack_packets_simulated: 0,
            links: Vec::new(),
            fairness_over_time: None,
            queue: None,
        };
        let a = mk("run-0000", "0.01", "bbr, no lt_bw");
        let b = mk("run-0001", "0.1", "say \"hi\"");
        write_summaries(dir.path(), "s", &[&a, &b]).unwrap();
        let mut r = csv::Reader::from_path(dir.path().join("summary.csv")).unwrap();
        let head = r.headers().unwrap().clone();
        assert_eq!(&head[0], "run");
        assert_eq!(&head[1], "flow.algorithm");
        assert_eq!(&head[2], "link.forward.loss");
        assert_eq!(&head[3], "flow");
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 2);
        for row in &rows {
            assert_eq!(row.len(), head.len());
        }
        assert_eq!(&rows[0][4], "bbr, no lt_bw");
        assert_eq!(&rows[1][4], "say \"hi\"");
        assert_eq!(&rows[1][2], "0.1");
        let col = |n: &str| head.iter().position(|h| h == n).unwrap();
        assert_eq!(&rows[0][col("rtt_p99_ms")], "9.000");
        // summary.json: one object; runs named run-NNNN; params an object.
        let j: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(j["runs"][1]["run"], "run-0001");
        assert_eq!(j["runs"][1]["params"]["link.forward.loss"], 0.1);
        assert_eq!(j["runs"][0]["flows"][0]["flow"], 0);
        assert_eq!(j["parameters"][0], "flow.algorithm");
        assert_eq!(j["bbrlab_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(j["git_commit"], provenance().1);
    }

    /// The build's commit is a 12-digit abbreviation, with `-dirty` when
    /// the checkout had uncommitted changes to tracked files, or `unknown`
    /// where git could not tell (a tarball, no git); a commit given in
    /// `BBRLAB_GIT_COMMIT` is taken as it is.
    #[test]
    fn the_commit_is_the_builds_with_dirty_marked() {
        let c = provenance().1;
        assert!(!c.is_empty());
        if c == "unknown" || option_env!("BBRLAB_GIT_COMMIT_GIVEN").is_some() {
            return;
        }
        let hash = c.strip_suffix("-dirty").unwrap_or(c);
        assert_eq!(hash.len(), 12, "{c}");
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()), "{c}");
    }
}
