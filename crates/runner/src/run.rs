//! Running one run of a scenario: the one implementation every front end
//! goes through.
//!
//! `bbrlab sim` (and `reproduce` and `compare`, through [`crate::sweep`])
//! and the Python package's `simulate()` and `sweep()` differ only in
//! where a run's time series goes: CSV files streamed as the run goes,
//! Arrow columns handed to pandas, or nowhere. So they all call
//! [`simulate`] with a [`Sink`], and the running itself — the simulator,
//! the progress clock, the summary as `summary.json` has it — exists once.
//!
//! A sink that stores typed columns (Python's Arrow) takes its columns from
//! [`FLOW_COLUMNS`] and [`LINK_COLUMNS`]: the names of `flows.csv` and
//! `link.csv` with each cell as a typed value in the data dictionary's
//! units (docs/outputs.md), so the columnar form cannot drift from the
//! files' (a test checks every cell against the CSV text).

use crate::metrics::MetricsRecorder;
use crate::output::{CsvRecorder, SummaryJson};
use crate::progress::{ClockRecorder, SimClock};
/// What a [`Sink`] receives and implements: the simulator's samples and
/// its recorder trait, re-exported so a front end needs only this crate.
pub use netsim::{FlowSample, LinkSample, ModelSample, NoRecorder, Recorder};
use scenario::Run;
use sender::schema;
use std::io;

/// Where a run's time series goes: every sample as the simulator makes it
/// (so a sink that streams, like the CSV files, keeps memory bounded
/// however long the run), then [`Sink::finish`] once after the last.
pub trait Sink: Recorder + Sized {
    /// What the sink yields when the run is over: nothing for files
    /// already written, the filled columns for a columnar sink.
    type Output;

    /// Called once after the run's last sample: flush files, finish
    /// columns.
    fn finish(self) -> io::Result<Self::Output>;
}

/// Summary-only runs (sweeps that keep no time series, benchmarks).
impl Sink for NoRecorder {
    type Output = ();
    fn finish(self) -> io::Result<()> {
        Ok(())
    }
}

/// `flows.csv` and `link.csv` in a run's directory (`bbrlab sim`).
impl Sink for CsvRecorder {
    type Output = ();
    fn finish(self) -> io::Result<()> {
        CsvRecorder::finish(self)
    }
}

/// Runs `run` (of the scenario named `scenario`, as the run named
/// `run_name`, `run-NNNN`), its samples into `sink`, advancing `clock` to
/// each sample's simulated time and to the run's end when it is over (the
/// progress displays read it). Returns the run's summary as
/// `summary.json` has it and what the sink yielded. An error is the
/// sink's (a file that cannot be written); the caller says where.
pub fn simulate<S: Sink>(
    scenario: &str,
    run_name: &str,
    run: &Run,
    sink: S,
    clock: &SimClock,
) -> io::Result<(SummaryJson, S::Output)> {
    let mut rec = ClockRecorder {
        inner: MetricsRecorder::new(sink),
        clock,
    };
    // A QUIC stack's controller arrives by name; build it here.
    let (config, workload) = crate::stacks::attach(&run.config, &run.workload);
    let summary = netsim::run_workload(&config, &workload, &mut rec)?;
    let (sink, fairness, queue) = rec.inner.finish();
    let out = sink.finish()?;
    clock.advance(run.config.duration_ns);
    let mut json = SummaryJson::new(scenario, run_name, &run.params, &summary);
    json.fairness_over_time = fairness;
    json.queue = queue;
    Ok((json, out))
}

/// The type of a column of a run's time series (the schema's).
pub use sender::schema::Kind;

/// One cell of a run's time series: typed, in the data dictionary's unit
/// and unrounded (the CSV files round to fixed precision; a columnar sink
/// keeps the value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A [`Kind::Float`] cell; `None` is a missing value (an empty CSV cell).
    Float(Option<f64>),
    /// A [`Kind::Int`] cell (counts past `i64::MAX` saturate).
    Int(i64),
    /// A [`Kind::Text`] cell.
    Text(&'static str),
}

/// One column of a time series: its name in the CSV header, its type, and
/// how a sample gives its cell.
pub struct Column<S> {
    /// The column's name, as in the CSV file's header.
    pub name: &'static str,
    /// Its unit, as the data dictionary writes it ([`schema::Column::unit`]).
    pub unit: &'static str,
    /// The type of its cells.
    pub kind: Kind,
    /// The cell of a sample.
    pub get: fn(&S) -> Value,
}

fn secs(ns: u64) -> Value {
    Value::Float(Some(ns as f64 / 1e9))
}

fn ms(ns: Option<u64>) -> Value {
    Value::Float(ns.map(|v| v as f64 / 1e6))
}

fn int(v: u64) -> Value {
    Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

/// A [`Column`]: the schema's column and how a sample gives its cell,
/// short enough that the tables below read as tables.
const fn col<S>(c: schema::Column, get: fn(&S) -> Value) -> Column<S> {
    Column {
        name: c.name,
        unit: c.unit,
        kind: c.kind,
        get,
    }
}

/// The columns of `flows.csv` ([`schema::FLOW_COLUMNS`]), in order.
pub static FLOW_COLUMNS: [Column<FlowSample>; schema::FLOW_COLUMNS.len()] = {
    use schema::*;
    [
        col(TIME_S, |s| secs(s.t_ns)),
        col(FLOW, |s| int(s.flow as u64)),
        col(DELIVERED_BYTES, |s| int(s.delivered_bytes)),
        col(GOODPUT_BPS, |s| Value::Float(Some(s.goodput_bps))),
        col(RTT_MS, |s| ms(s.rtt_ns)),
        col(CWND_BYTES, |s| int(s.cwnd_bytes)),
        col(PACING_RATE_BPS, |s| Value::Float(Some(s.pacing_rate_bps))),
        col(INFLIGHT_BYTES, |s| int(s.inflight_bytes)),
        col(MODE, |s| Value::Text(s.mode.name())),
        col(BW_ESTIMATE_BPS, |s| Value::Float(s.bw_estimate_bps)),
        col(MIN_RTT_MS, |s| ms(s.min_rtt_ns)),
        col(QUEUE_DELAY_MS, |s| ms(Some(s.queue_delay_ns))),
        col(DROPS, |s| int(s.drops)),
        col(SRTT_MS, |s| ms(s.srtt_ns)),
        col(DATA_PACKETS_SENT, |s| int(s.packets_sent)),
        col(RETRANSMITTED_PACKETS, |s| int(s.retransmissions)),
        col(DELIVERED_CE, |s| int(s.delivered_ce)),
    ]
};

/// The columns of `link.csv` ([`schema::LINK_COLUMNS`]), in order.
pub static LINK_COLUMNS: [Column<LinkSample>; schema::LINK_COLUMNS.len()] = {
    use schema::*;
    [
        col(TIME_S, |s| secs(s.t_ns)),
        col(DIRECTION, |s| Value::Text(s.direction)),
        col(QUEUE_PACKETS, |s| int(s.queue_packets)),
        col(QUEUE_BYTES, |s| int(s.queue_bytes)),
        col(QUEUE_DELAY_MS, |s| ms(Some(s.queue_delay_ns))),
        col(DROPS, |s| int(s.drops)),
        col(CE_MARKED, |s| int(s.ce_marked)),
    ]
};

/// A BBRv3 volume or rate that may be unset, as a float cell (missing
/// while unset): an integer cell cannot be missing.
fn opt_f(v: Option<f64>) -> Value {
    Value::Float(v)
}

/// The columns of `model.csv` ([`schema::MODEL_COLUMNS`]: names, units
/// and kinds), in order, typed:
/// rates in bit/s, volumes in bytes; a volume, flag or rate the
/// controller does not have (v1's inflight bounds) or has not set is a
/// missing float.
pub static MODEL_COLUMNS: [Column<ModelSample>; netsim::MODEL_COLUMNS.len()] = {
    [
        col(schema::TIME_S, |s| secs(s.t_ns)),
        col(schema::FLOW, |s| int(s.flow as u64)),
        col(schema::MODE, |s| Value::Text(s.snapshot.mode.name())),
        col(schema::BW_ESTIMATE_BPS, |s| {
            opt_f(s.snapshot.bw_estimate_bytes_per_sec.map(|b| b * 8.0))
        }),
        col(schema::BW_BPS, |s| {
            opt_f(s.snapshot.bbr3.map(|b| b.bw_bytes_per_sec * 8.0))
        }),
        col(schema::MIN_RTT_MS, |s| {
            opt_f(s.snapshot.min_rtt.map(|d| d.as_secs_f64() * 1e3))
        }),
        col(schema::PACING_GAIN, |s| {
            Value::Float(Some(s.snapshot.pacing_gain))
        }),
        col(schema::CWND_GAIN, |s| {
            Value::Float(Some(s.snapshot.cwnd_gain))
        }),
        col(schema::CWND_BYTES, |s| int(s.snapshot.cwnd_bytes)),
        col(schema::ROUND_COUNT, |s| int(s.snapshot.round_count)),
        col(schema::FULL_BW_REACHED, |s| {
            int(u64::from(s.snapshot.full_bw_reached))
        }),
        col(schema::EXTRA_ACKED_BYTES, |s| {
            int(s.snapshot.extra_acked_bytes)
        }),
        col(schema::LT_BW_BPS, |s| {
            opt_f(
                s.snapshot
                    .lt_bw
                    .filter(|l| l.in_use)
                    .map(|l| l.bw_bytes_per_sec * 8.0),
            )
        }),
        col(schema::INFLIGHT_LONGTERM_BYTES, |s| {
            opt_f(
                s.snapshot
                    .bbr3
                    .and_then(|b| b.inflight_longterm_bytes)
                    .map(|v| v as f64),
            )
        }),
        col(schema::INFLIGHT_SHORTTERM_BYTES, |s| {
            opt_f(
                s.snapshot
                    .bbr3
                    .and_then(|b| b.inflight_shortterm_bytes)
                    .map(|v| v as f64),
            )
        }),
        col(schema::BW_SHORTTERM_BPS, |s| {
            opt_f(
                s.snapshot
                    .bbr3
                    .and_then(|b| b.bw_shortterm_bytes_per_sec)
                    .map(|b| b * 8.0),
            )
        }),
        col(schema::LOSS_IN_ROUND, |s| {
            opt_f(
                s.snapshot
                    .bbr3
                    .map(|b| f64::from(u8::from(b.loss_in_round))),
            )
        }),
        col(schema::ECN_IN_ROUND, |s| {
            opt_f(s.snapshot.bbr3.map(|b| f64::from(u8::from(b.ecn_in_round))))
        }),
        col(schema::ECN_ALPHA, |s| {
            opt_f(s.snapshot.bbr3.and_then(|b| b.ecn_alpha))
        }),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::MemoryRecorder;

    /// A sink that keeps the samples, to compare the columns against.
    #[derive(Default)]
    struct Keep(MemoryRecorder);
    impl Recorder for Keep {
        fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
            self.0.flow_sample(s)
        }
        fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
            self.0.link_sample(s)
        }
        fn model_sample(&mut self, s: &ModelSample) -> io::Result<()> {
            self.0.model_sample(s)
        }
    }
    impl Sink for Keep {
        type Output = MemoryRecorder;
        fn finish(self) -> io::Result<MemoryRecorder> {
            Ok(self.0)
        }
    }

    fn lossy_run() -> (scenario::Scenario, MemoryRecorder, SummaryJson, SimClock) {
        let text = r#"
name = "cols"
duration = "2s"
sample_interval = "50ms"
[link.forward]
rate = "10mbit"
delay = "10ms"
queue = { limit = "50pkt" }
loss = { bernoulli = 0.02 }
[link.reverse]
delay = "10ms"
[[flow]]
algorithm = "bbr"
"#;
        let sc = scenario::parse(
            text,
            "cols.toml",
            std::path::Path::new("."),
            std::path::Path::new("cols.toml"),
        )
        .unwrap();
        let clock = SimClock::default();
        let (json, mem) =
            simulate(&sc.name, "run-0007", &sc.runs[0], Keep::default(), &clock).unwrap();
        (sc, mem, json, clock)
    }

    #[test]
    fn simulate_runs_the_scenario_into_the_sink_and_summarises_it() {
        let (sc, mem, json, clock) = lossy_run();
        // 2 s every 50 ms: 40 samples of the one flow, both link directions.
        assert_eq!(mem.flows.len(), 40);
        assert_eq!(mem.links.len(), 80);
        assert_eq!(clock.now_ns(), sc.runs[0].config.duration_ns);
        assert_eq!(json.run, "run-0007");
        assert_eq!(json.scenario, "cols");
        // The summary is the run's end; the last sample a little before it.
        let last = mem.flows.last().unwrap();
        assert!(json.flows[0].delivered_bytes >= last.delivered_bytes);
        assert!(
            json.flows[0].delivered_bytes > 2_000_000,
            "about 10 Mbit/s for 2 s"
        );
        assert!(json.flows[0].retransmissions > 0, "2 % loss retransmits");
        // The same run without a time series has the same summary.
        let (again, ()) = simulate(
            &sc.name,
            "run-0007",
            &sc.runs[0],
            NoRecorder,
            &SimClock::default(),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&json).unwrap()
        );
    }

    /// The typed columns are the CSV files' columns: `flows.csv`,
    /// `link.csv` and `model.csv` as [`CsvRecorder`] writes them have the
    /// same names in the same order, and every cell is the typed value,
    /// rounded.
    #[test]
    fn typed_columns_are_the_csv_columns() {
        let (_, mem, _, _) = lossy_run();
        let dir = tempfile::tempdir().unwrap();
        let mut files = CsvRecorder::create(dir.path()).unwrap();
        for s in &mem.flows {
            files.flow_sample(s).unwrap();
        }
        for s in &mem.links {
            files.link_sample(s).unwrap();
        }
        for s in &mem.models {
            files.model_sample(s).unwrap();
        }
        files.finish().unwrap();
        let read = |name: &str| {
            let mut r = csv::Reader::from_path(dir.path().join(name)).unwrap();
            let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
            let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
            (head, rows)
        };
        let (flow_head, flow_rows) = read("flows.csv");
        let (link_head, link_rows) = read("link.csv");
        fn names<S>(cols: &[Column<S>]) -> Vec<&'static str> {
            cols.iter().map(|c| c.name).collect()
        }
        let (model_head, model_rows) = read("model.csv");
        assert_eq!(flow_head, names(&FLOW_COLUMNS));
        assert_eq!(link_head, names(&LINK_COLUMNS));
        assert_eq!(model_head, names(&MODEL_COLUMNS));
        assert_eq!(model_rows.len(), mem.models.len());
        assert_eq!(mem.models.len(), 40, "the bbr flow's model at every sample");
        assert_eq!(flow_rows.len(), mem.flows.len());
        assert_eq!(link_rows.len(), mem.links.len());

        let check = |kind: Kind, v: Value, text: &str, what: &str| match (kind, v) {
            (Kind::Float, Value::Float(None)) => assert_eq!(text, "", "{what}"),
            (Kind::Float, Value::Float(Some(x))) => {
                let decimals = text.split('.').nth(1).map_or(0, str::len);
                let rounded = format!("{x:.decimals$}");
                assert_eq!(rounded, text, "{what}");
            }
            (Kind::Int, Value::Int(i)) => assert_eq!(i.to_string(), text, "{what}"),
            (Kind::Text, Value::Text(t)) => assert_eq!(t, text, "{what}"),
            (k, v) => panic!("{what}: a {k:?} column gave {v:?}"),
        };
        let mut some_missing = false;
        for (s, row) in mem.flows.iter().zip(&flow_rows) {
            assert_eq!(row.len(), FLOW_COLUMNS.len(), "{row:?}");
            for (c, text) in FLOW_COLUMNS.iter().zip(row) {
                let v = (c.get)(s);
                some_missing |= v == Value::Float(None);
                check(c.kind, v, text, c.name);
            }
        }
        for (s, row) in mem.links.iter().zip(&link_rows) {
            assert_eq!(row.len(), LINK_COLUMNS.len(), "{row:?}");
            for (c, text) in LINK_COLUMNS.iter().zip(row) {
                check(c.kind, (c.get)(s), text, c.name);
            }
        }
        for (s, row) in mem.models.iter().zip(&model_rows) {
            assert_eq!(row.len(), MODEL_COLUMNS.len(), "{row:?}");
            for (c, text) in MODEL_COLUMNS.iter().zip(row) {
                check(c.kind, (c.get)(s), text, c.name);
            }
        }
        assert!(some_missing, "the first samples have no RTT yet: a null");
    }
}
