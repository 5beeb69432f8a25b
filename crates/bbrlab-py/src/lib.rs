//! `bbrlab._native`: the Rust half of the Python package `bbrlab`.
//!
//! Nothing here runs a scenario its own way. A scenario is parsed by
//! [`scenario::parse`] (so errors carry the CLI's `file:line:col`
//! message) and run and summarised by [`runner::run::simulate`], the
//! function `bbrlab sim` runs it with; the only difference is the
//! [`Sink`] the samples go to: Arrow columns (bbrlab's typed column tables
//! of `flows.csv` and `link.csv`) handed to pyarrow through the Arrow
//! PyCapsule interface, instead of CSV files.
//! Sweeps are expanded by the same parser (`[sweep]` tables), so a grid
//! given from Python means what it means in a scenario file.
//!
//! The GIL is released while a simulation runs (`Python::detach`), so
//! threads of one Python process simulate in parallel.

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{Field, Schema};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use runner::output::SummaryJson;
use runner::progress::SimClock;
use runner::run::{
    Column, FlowSample, Kind, LinkSample, ModelSample, Recorder, Sink, Value, FLOW_COLUMNS,
    LINK_COLUMNS, MODEL_COLUMNS,
};
use scenario::{Scenario, ScenarioError as Refusal};
use std::io;
use std::path::Path;
use std::sync::Arc;

create_exception!(
    bbrlab,
    ScenarioError,
    PyValueError,
    "A scenario the simulator refuses (a ValueError): the message is the CLI's, `file:line:col: what`; its parts are the attributes `location` (`file:line:col`) and `detail` (what)."
);

/// Where a scenario comes from: its text and the name errors use for it.
struct Source {
    text: String,
    file: String,
    base_dir: String,
}

/// The CLI's message as the exception's text, with its parts as the
/// attributes `location` (`file:line:col`) and `detail`.
fn scenario_error(e: Refusal) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    Python::attach(|py| {
        let v = err.value(py);
        let _ = v.setattr("location", &e.location);
        let _ = v.setattr("detail", &e.message);
    });
    err
}

/// Reads the file when `path` is given (the error for an unreadable file
/// is the CLI's), else takes `text` as the scenario, named `file`.
fn source(
    text: Option<String>,
    path: Option<String>,
    file: &str,
    base_dir: &str,
) -> PyResult<Source> {
    match (text, path) {
        (_, Some(p)) => {
            let text = std::fs::read_to_string(&p).map_err(|e| {
                scenario_error(Refusal {
                    location: p.clone(),
                    message: format!("cannot read the scenario file: {e}"),
                })
            })?;
            let base_dir = Path::new(&p)
                .parent()
                .map(|d| d.to_string_lossy().into_owned())
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| ".".into());
            Ok(Source {
                text,
                file: p,
                base_dir,
            })
        }
        (Some(text), None) => Ok(Source {
            text,
            file: file.to_string(),
            base_dir: base_dir.to_string(),
        }),
        (None, None) => Err(PyValueError::new_err("give a scenario's text or path")),
    }
}

fn parse(src: &Source) -> PyResult<Scenario> {
    scenario::parse(
        &src.text,
        &src.file,
        Path::new(&src.base_dir),
        Path::new(&src.file),
    )
    .map_err(scenario_error)
}

/// A simulation's progress, shared with a Python thread that displays it:
/// the simulated time the run has reached, advanced from the samples it
/// writes (the CLI's progress display reads the same [`SimClock`]).
#[pyclass(frozen)]
#[derive(Clone, Default)]
struct Clock(SimClock);

#[pymethods]
impl Clock {
    #[new]
    fn new() -> Self {
        Clock::default()
    }
    /// Simulated time reached so far, ns.
    fn now_ns(&self) -> u64 {
        self.0.now_ns()
    }
}

/// One column of a time series as it is filled, typed as its
/// [`Column::kind`] says.
enum Builder {
    Float(Float64Builder),
    Int(Int64Builder),
    Text(StringBuilder),
}

impl Builder {
    fn new(kind: Kind) -> Self {
        match kind {
            Kind::Float => Builder::Float(Float64Builder::new()),
            Kind::Int => Builder::Int(Int64Builder::new()),
            Kind::Text => Builder::Text(StringBuilder::new()),
        }
    }

    fn append(&mut self, v: Value) {
        match (self, v) {
            (Builder::Float(b), Value::Float(x)) => b.append_option(x),
            (Builder::Int(b), Value::Int(i)) => b.append_value(i),
            (Builder::Text(b), Value::Text(t)) => b.append_value(t),
            // The tables' kinds and values agree (bbrlab's run tests).
            (_, v) => unreachable!("a column of another kind gave {v:?}"),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Float(b) => Arc::new(b.finish()),
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// A time series as Arrow columns: the columns of `flows.csv`,
/// `link.csv` or `model.csv` ([`runner::run::FLOW_COLUMNS`],
/// [`runner::run::LINK_COLUMNS`], [`runner::run::MODEL_COLUMNS`]) with
/// their typed, unrounded values.
struct Columns<S: 'static> {
    table: &'static [Column<S>],
    builders: Vec<Builder>,
}

impl<S> Columns<S> {
    fn new(table: &'static [Column<S>]) -> Self {
        let builders = table.iter().map(|c| Builder::new(c.kind)).collect();
        Columns { table, builders }
    }

    fn push(&mut self, s: &S) {
        for (c, b) in self.table.iter().zip(&mut self.builders) {
            b.append((c.get)(s));
        }
    }

    fn batch(mut self) -> PyResult<RecordBatch> {
        batch(
            self.table
                .iter()
                .zip(&mut self.builders)
                .map(|(c, b)| (c.name, b.finish()))
                .collect(),
        )
    }
}

/// The [`Sink`] of `simulate()`: the run's samples kept as Arrow columns,
/// in the units and under the names of `flows.csv` and `link.csv`
/// (docs/outputs.md), unrounded, a missing value as null.
struct ArrowSink {
    flows: Columns<FlowSample>,
    link: Columns<LinkSample>,
    /// BBR flows' models (`model.csv`'s rows): empty without a BBR flow.
    model: Columns<ModelSample>,
    /// Finished finite flows (`fct.csv`'s rows), kept with or without
    /// time series: one row per flow, not per sample.
    fct: FctColumns,
    /// Whether the time series are kept (`timeseries=False` drops them).
    samples: bool,
}

impl Default for ArrowSink {
    fn default() -> Self {
        ArrowSink {
            flows: Columns::new(&FLOW_COLUMNS),
            link: Columns::new(&LINK_COLUMNS),
            model: Columns::new(&MODEL_COLUMNS),
            fct: FctColumns::default(),
            samples: true,
        }
    }
}

impl Recorder for ArrowSink {
    fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        if self.samples {
            self.flows.push(s);
        }
        Ok(())
    }
    fn link_sample(&mut self, s: &LinkSample) -> io::Result<()> {
        if self.samples {
            self.link.push(s);
        }
        Ok(())
    }
    fn flow_completed(&mut self, r: &netsim::FctRecord) -> io::Result<()> {
        self.fct.push(r);
        Ok(())
    }
    fn model_sample(&mut self, s: &ModelSample) -> io::Result<()> {
        if self.samples {
            self.model.push(s);
        }
        Ok(())
    }
}

/// `fct.csv`'s columns ([`netsim::FCT_COLUMNS`]) as Arrow builders, the
/// values unrounded (seconds as f64, sizes as Int64).
#[derive(Default)]
struct FctColumns {
    flow: StringBuilder,
    algorithm: StringBuilder,
    size_bytes: Int64Builder,
    secs: [Float64Builder; 4],
    slowdown: Float64Builder,
}

impl FctColumns {
    fn push(&mut self, r: &netsim::FctRecord) {
        self.flow.append_value(&r.name);
        self.algorithm.append_value(&r.algorithm);
        self.size_bytes.append_value(int(r.size_bytes));
        let s = |ns: u64| ns as f64 / 1e9;
        for (b, v) in self
            .secs
            .iter_mut()
            .zip([r.start_ns, r.end_ns, r.fct_ns(), r.ideal_ns])
        {
            b.append_value(s(v));
        }
        self.slowdown.append_value(r.slowdown());
    }

    fn batch(mut self) -> PyResult<RecordBatch> {
        let [start, end, fct, ideal] = &mut self.secs;
        let cols: [ArrayRef; 8] = [
            Arc::new(self.flow.finish()),
            Arc::new(self.algorithm.finish()),
            Arc::new(self.size_bytes.finish()),
            Arc::new(start.finish()),
            Arc::new(end.finish()),
            Arc::new(fct.finish()),
            Arc::new(ideal.finish()),
            Arc::new(self.slowdown.finish()),
        ];
        batch(netsim::FCT_COLUMNS.into_iter().zip(cols).collect())
    }
}

impl Sink for ArrowSink {
    type Output = Self;
    fn finish(self) -> io::Result<Self> {
        Ok(self)
    }
}

/// A record batch from named columns (all nullable: a missing value is null).
fn batch(columns: Vec<(&str, ArrayRef)>) -> PyResult<RecordBatch> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .map_err(|e| PyRuntimeError::new_err(format!("building an Arrow batch: {e}")))
}

/// A count as Arrow's Int64 (past `i64::MAX` it saturates).
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The run's summary as one row per flow: the columns of `summary.csv`
/// after `run` and the swept parameters (docs/outputs.md), from the same
/// [`SummaryJson`] the CLI writes, plus `retransmissions`, `completion_s`
/// and `time_using_srtt` from `summary.json`.
fn summary_batch(s: &SummaryJson) -> PyResult<RecordBatch> {
    let mut flow = Int64Builder::new();
    let mut name = StringBuilder::new();
    let mut algorithm = StringBuilder::new();
    let mut f64s: Vec<(&str, Float64Builder)> = [
        "goodput_bps",
        "rtt_mean_ms",
        "rtt_median_ms",
        "rtt_p95_ms",
        "rtt_p99_ms",
        "retransmission_rate",
    ]
    .into_iter()
    .map(|n| (n, Float64Builder::new()))
    .collect();
    let mut drops = Int64Builder::new();
    let mut rtos = Int64Builder::new();
    let mut jain = Float64Builder::new();
    let mut probe_bw = Float64Builder::new();
    let mut probe_rtt = Float64Builder::new();
    let mut delivered = Int64Builder::new();
    let mut sent = Int64Builder::new();
    let mut ce_packets = Int64Builder::new();
    let mut ce_fraction = Float64Builder::new();
    let mut retx = Int64Builder::new();
    let mut completion = Float64Builder::new();
    let mut srtt = Float64Builder::new();
    for f in &s.flows {
        // A mode's share, with its phases (`probe_bw` sums bbr3's
        // `probe_bw_down` … `probe_bw_up`).
        let frac = |m: &str| {
            f.mode_fractions
                .iter()
                .filter(|e| e.0 == m || e.0.strip_prefix(m).is_some_and(|r| r.starts_with('_')))
                .fold(0.0, |a, e| a + e.1)
        };
        flow.append_value(f.flow as i64);
        name.append_value(&f.name);
        algorithm.append_value(&f.algorithm);
        let vals = [
            Some(f.goodput_bps),
            f.rtt_mean_ms,
            f.rtt_median_ms,
            f.rtt_p95_ms,
            f.rtt_p99_ms,
            Some(f.retransmission_rate),
        ];
        for ((_, b), v) in f64s.iter_mut().zip(vals) {
            b.append_option(v);
        }
        drops.append_value(int(f.drops));
        rtos.append_value(int(f.rtos));
        jain.append_option(s.jain_fairness);
        probe_bw.append_value(frac("probe_bw"));
        probe_rtt.append_value(frac("probe_rtt"));
        delivered.append_value(int(f.delivered_bytes));
        sent.append_value(int(f.packets_sent));
        ce_packets.append_value(int(f.ce_packets));
        ce_fraction.append_value(f.ce_fraction);
        retx.append_value(int(f.retransmissions));
        completion.append_option(f.completion_s);
        srtt.append_option(f.time_using_srtt);
    }
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("flow", Arc::new(flow.finish())),
        ("name", Arc::new(name.finish())),
        ("algorithm", Arc::new(algorithm.finish())),
    ];
    for (n, mut b) in f64s {
        cols.push((n, Arc::new(b.finish())));
    }
    cols.extend([
        ("drops", Arc::new(drops.finish()) as ArrayRef),
        ("rtos", Arc::new(rtos.finish())),
        ("jain_fairness", Arc::new(jain.finish())),
        ("time_in_probe_bw", Arc::new(probe_bw.finish())),
        ("time_in_probe_rtt", Arc::new(probe_rtt.finish())),
        ("delivered_bytes", Arc::new(delivered.finish())),
        ("packets_sent", Arc::new(sent.finish())),
        ("ce_packets", Arc::new(ce_packets.finish())),
        ("ce_fraction", Arc::new(ce_fraction.finish())),
        ("retransmissions", Arc::new(retx.finish())),
        ("completion_s", Arc::new(completion.finish())),
        ("time_using_srtt", Arc::new(srtt.finish())),
    ]);
    batch(cols)
}

/// One Arrow record batch, exported to Python through the Arrow PyCapsule
/// interface (`__arrow_c_array__`): `pyarrow.record_batch(b)` takes the
/// columns over without copying them or going through text.
#[pyclass(frozen)]
struct ArrowBatch(RecordBatch);

/// The FFI structs own their buffers through raw pointers; moving them to
/// another thread (a capsule may be freed on any) is what the Arrow C data
/// interface allows.
struct Exported<T>(T);
// SAFETY: the C data interface's structs may be released from any thread.
unsafe impl<T> Send for Exported<T> {}

#[pymethods]
impl ArrowBatch {
    /// Rows in the batch.
    fn __len__(&self) -> usize {
        self.0.num_rows()
    }

    /// The Arrow PyCapsule interface: (schema capsule, array capsule) of
    /// the batch as a struct array. A requested schema is ignored (the
    /// consumer casts if it wants other types).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let array = StructArray::from(self.0.clone());
        let data = array.into_data();
        let schema = FFI_ArrowSchema::try_from(data.data_type())
            .map_err(|e| PyRuntimeError::new_err(format!("exporting an Arrow schema: {e}")))?;
        let array = FFI_ArrowArray::new(&data);
        // `Exported<T>` is a one-field struct; `#[repr(transparent)]` is not
        // needed because the capsule points at its first field, the value.
        let s = PyCapsule::new_with_value(py, Exported(schema), c"arrow_schema")?;
        let a = PyCapsule::new_with_value(py, Exported(array), c"arrow_array")?;
        PyTuple::new(py, [s.into_any(), a.into_any()])
    }
}

/// Runs the scenario's single run (a scenario with a `[sweep]` is refused:
/// `bbrlab.sweep` runs those), with `seed` in place of the file's if
/// given, and returns a dict: `name`, `params`, `text` (the scenario as
/// run), `seed`, `duration_s`, `summary_json` (the run's object of the
/// CLI's `summary.json`, as JSON text), and the Arrow batches `summary`,
/// `flows` and `link` (empty unless `timeseries`). The GIL is released
/// while simulating; `clock` follows the run's simulated time.
#[pyfunction]
#[pyo3(signature = (text=None, path=None, file="<string>", base_dir=".", seed=None, timeseries=true, clock=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    text: Option<String>,
    path: Option<String>,
    file: &str,
    base_dir: &str,
    seed: Option<u64>,
    timeseries: bool,
    clock: Option<PyRef<'py, Clock>>,
) -> PyResult<Bound<'py, PyDict>> {
    let src = source(text, path, file, base_dir)?;
    let sc = parse(&src)?;
    if sc.runs.len() != 1 {
        return Err(PyValueError::new_err(format!(
            "{}: the scenario has a [sweep] of {} runs; simulate() runs one: use bbrlab.sweep() for a sweep",
            src.file,
            sc.runs.len()
        )));
    }
    let mut run = sc.runs.into_iter().next().expect("one run");
    if let Some(s) = seed {
        run.config.seed = s;
        run.text = with_seed(&run.text, s, &src.file)?;
        // A one-point `[sweep]` of `seed` names the seed among the run's
        // parameters too (and so in `summary_json`): that must be the
        // seed that ran, not the one replaced.
        for (k, v) in &mut run.params {
            if k == "seed" {
                *v = s.to_string();
            }
        }
    }
    let clock: Clock = clock.map(|c| c.clone()).unwrap_or_default();
    let name = sc.name.clone();
    // The run itself is bbrlab's (as for `bbrlab sim`); only the sink differs.
    let result = py.detach(|| -> std::io::Result<_> {
        if timeseries {
            let (json, sink) =
                runner::run::simulate(&name, "run-0000", &run, ArrowSink::default(), &clock.0)?;
            Ok((json, sink))
        } else {
            let sink = ArrowSink {
                samples: false,
                ..ArrowSink::default()
            };
            Ok(runner::run::simulate(
                &name, "run-0000", &run, sink, &clock.0,
            )?)
        }
    });
    let (json, sink) = result.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("name", &sc.name)?;
    d.set_item("params", run.params.clone())?;
    d.set_item("text", &run.text)?;
    d.set_item("seed", run.config.seed)?;
    d.set_item("duration_s", run.config.duration_ns as f64 / 1e9)?;
    d.set_item(
        "summary_json",
        serde_json::to_string(&json).map_err(|e| PyRuntimeError::new_err(e.to_string()))?,
    )?;
    d.set_item("summary", ArrowBatch(summary_batch(&json)?))?;
    d.set_item("flows", ArrowBatch(sink.flows.batch()?))?;
    d.set_item("link", ArrowBatch(sink.link.batch()?))?;
    d.set_item("model", ArrowBatch(sink.model.batch()?))?;
    d.set_item("fct", ArrowBatch(sink.fct.batch()?))?;
    Ok(d)
}

/// The scenario text with its top-level `seed` set to `seed`: `Run.text`
/// is "the scenario as run", and a seed given to `simulate()` that the
/// text did not say would make the text (saved, or run by `bbrlab sim`)
/// a different run. A seed a TOML integer cannot hold is refused, as a
/// scenario file would refuse it.
fn with_seed(text: &str, seed: u64, file: &str) -> PyResult<String> {
    let seed = i64::try_from(seed).map_err(|_| {
        PyValueError::new_err(format!(
            "seed: a whole number from 0 to 2^63 - 1 (a scenario file's seed), not {seed}"
        ))
    })?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| PyValueError::new_err(format!("{file}: {e}")))?;
    doc["seed"] = toml_edit::value(seed);
    Ok(doc.to_string())
}

/// A JSON value as TOML, for grids and dict scenarios given from Python.
fn toml_value(v: &serde_json::Value) -> Result<toml_edit::Value, String> {
    Ok(match v {
        serde_json::Value::Null => return Err("None has no TOML form".into()),
        serde_json::Value::Bool(b) => (*b).into(),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().ok_or("number out of range")?.into(),
        },
        serde_json::Value::String(s) => s.as_str().into(),
        serde_json::Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for x in a {
                arr.push(toml_value(x)?);
            }
            toml_edit::Value::Array(arr)
        }
        serde_json::Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, x) in o {
                t.insert(k, toml_value(x)?);
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

/// A scenario given as a dict (its JSON text) written as a scenario file,
/// so it goes through the same parser and checks as a file.
#[pyfunction]
fn dict_to_toml(json: &str) -> PyResult<String> {
    let v: toml::Value = serde_json::from_str(json)
        .map_err(|e| PyValueError::new_err(format!("scenario dict: {e}")))?;
    toml::to_string(&v).map_err(|e| PyValueError::new_err(format!("scenario dict: {e}")))
}

/// One run of a sweep: its swept `(path, value)` pairs, the scenario as
/// run (TOML), its seed and its simulated duration in ns.
type SweepPoint = (Vec<(String, String)>, String, u64, u64);

/// Expands a sweep: the scenario's own `[sweep]`, with the keys of `grid`
/// (JSON: an object from dotted path to a list of values) added to it or
/// replacing its keys. Returns `(name, text, points)` ([`SweepPoint`]): the
/// scenario text with the grid (what errors point into; the file's own
/// lines keep their numbers when it had no `[sweep]`) and one entry per
/// run in the CLI's order (keys sorted, the last varying fastest), each
/// checked by the parser as `bbrlab sim` checks it.
#[pyfunction]
#[pyo3(signature = (text=None, path=None, file="<string>", base_dir=".", grid="{}"))]
fn sweep_points(
    text: Option<String>,
    path: Option<String>,
    file: &str,
    base_dir: &str,
    grid: &str,
) -> PyResult<(String, String, Vec<SweepPoint>)> {
    let mut src = source(text, path, file, base_dir)?;
    let grid: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(grid).map_err(|e| PyValueError::new_err(format!("grid: {e}")))?;
    if !grid.is_empty() {
        // The file as given must stand on its own, as for `bbrlab sim`:
        // its errors point at its own lines, before the grid is added.
        parse(&src)?;
        let mut doc: toml_edit::DocumentMut = src
            .text
            .parse()
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", src.file)))?;
        if !doc.contains_key("sweep") {
            let mut t = toml_edit::Table::new();
            t.set_implicit(false);
            doc.insert("sweep", toml_edit::Item::Table(t));
        }
        let sweep = doc["sweep"].as_table_mut().ok_or_else(|| {
            PyValueError::new_err(format!("{}: `sweep` is not a table", src.file))
        })?;
        for (k, v) in &grid {
            let serde_json::Value::Array(values) = v else {
                return Err(PyValueError::new_err(format!(
                    "grid[{k:?}]: a list of values, not {v}"
                )));
            };
            if values.is_empty() {
                return Err(PyValueError::new_err(format!(
                    "grid[{k:?}]: no values (a sweep point needs at least one)"
                )));
            }
            let arr =
                toml_value(v).map_err(|e| PyValueError::new_err(format!("grid[{k:?}]: {e}")))?;
            sweep.insert(k, toml_edit::Item::Value(arr));
        }
        src.text = doc.to_string();
    }
    let sc = parse(&src)?;
    let points = sc
        .runs
        .into_iter()
        .map(|r| (r.params, r.text, r.config.seed, r.config.duration_ns))
        .collect();
    Ok((sc.name, src.text, points))
}

/// Runs the published claims `ids` (e.g. `["C3"]`) as `bbrlab reproduce
/// --only` does, writing the report into `out`, and returns the outcomes
/// as the JSON text of `claims.json`. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (ids, out, quick=false, jobs=None))]
fn reproduce(
    py: Python<'_>,
    ids: Vec<String>,
    out: String,
    quick: bool,
    jobs: Option<usize>,
) -> PyResult<String> {
    claims::reproduce::check_only(&ids).map_err(PyValueError::new_err)?;
    let opts = claims::reproduce::Options {
        out: out.into(),
        quick,
        only: Some(ids),
        jobs,
        quiet: true,
        qlog: false,
    };
    let outcomes = py
        .detach(|| claims::reproduce::run(&opts, &runner::sweep::Quiet))
        .map_err(PyRuntimeError::new_err)?;
    serde_json::to_string(&outcomes).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Jain's index over sliding windows of a run's `flows` frame (its
/// `time_s`, `flow` and `delivered_bytes` columns, in the frame's order),
/// by `runner::metrics`' rule, the one `summary.json` and `bbrlab plot`
/// use. Returns `(end_s, flows, jain, converged_at_s, time_to_converge_s,
/// last_join_s)`: the windows' ends, flow counts and indices, then the
/// convergence (None if the flows never settle).
#[pyfunction]
#[pyo3(signature = (time_s, flow, delivered_bytes, window_s=1.0, step_s=0.1, threshold=0.9))]
#[allow(clippy::type_complexity)]
fn sliding_jain(
    time_s: Vec<f64>,
    flow: Vec<i64>,
    delivered_bytes: Vec<i64>,
    window_s: f64,
    step_s: f64,
    threshold: f64,
) -> PyResult<(
    Vec<f64>,
    Vec<usize>,
    Vec<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
)> {
    if time_s.len() != flow.len() || flow.len() != delivered_bytes.len() {
        return Err(PyValueError::new_err(format!(
            "sliding_jain: columns of different lengths (time_s {}, flow {}, delivered_bytes {})",
            time_s.len(),
            flow.len(),
            delivered_bytes.len()
        )));
    }
    let ns = |v: f64, what: &str| -> PyResult<u64> {
        if v.is_finite() && v > 0.0 && v <= 86_400.0 {
            Ok((v * 1e9).round() as u64)
        } else {
            Err(PyValueError::new_err(format!(
                "{what} = {v}: a number of seconds above 0 (at most 86400)"
            )))
        }
    };
    let params = runner::metrics::JainParams {
        window_ns: ns(window_s, "window")?,
        step_ns: ns(step_s, "step")?,
        threshold,
    };
    let mut samples = Vec::with_capacity(time_s.len());
    for (i, ((&t, &f), &d)) in time_s.iter().zip(&flow).zip(&delivered_bytes).enumerate() {
        if !(t.is_finite() && t >= 0.0) || f < 0 || d < 0 {
            return Err(PyValueError::new_err(format!(
                "sliding_jain: row {i}: time_s {t}, flow {f}, delivered_bytes {d} (times and counts are 0 or more)"
            )));
        }
        samples.push(((t * 1e9).round() as u64, f as usize, d as u64));
    }
    let s = runner::metrics::sliding_jain(samples, params).map_err(PyValueError::new_err)?;
    Ok((
        s.windows.iter().map(|w| w.end_s).collect(),
        s.windows.iter().map(|w| w.flows).collect(),
        s.windows.iter().map(|w| w.jain).collect(),
        s.converged_at_s(),
        s.time_to_converge_s(),
        s.last_join_s,
    ))
}

/// Draws the figures of a run directory or of a sweep's output directory
/// (what `bbrlab plot` draws, through the same code) and returns the stems
/// written, each as `.svg` and `.png` in `path`.
///
/// `jain_window_s` defaults to 1 s; one given that no window of the run
/// can hold (longer than the time after the last flow joined) is refused,
/// as `bbrlab plot --jain-window` refuses it, rather than leaving the
/// fairness figure out without a word.
#[pyfunction]
#[pyo3(signature = (path, jain_window_s=None, jain_step_s=0.1, jain_threshold=0.9))]
fn plot_dir(
    py: Python<'_>,
    path: std::path::PathBuf,
    jain_window_s: Option<f64>,
    jain_step_s: f64,
    jain_threshold: f64,
) -> PyResult<Vec<String>> {
    py.detach(|| runner::draw::plot_dir(&path, jain_window_s, jain_step_s, jain_threshold))
        .map_err(|e| PyValueError::new_err(keyword_names(&e)))
}

/// `bbrlab plot`'s messages name its flags; from Python the same values
/// are this function's keywords, which are what the caller has to fix.
fn keyword_names(message: &str) -> String {
    message
        .replace("--jain-window", "jain_window_s")
        .replace("--jain-step", "jain_step_s")
        .replace("--jain-*", "jain_*")
}

/// bbrlab's version and the git commit it was built from.
#[pyfunction]
fn provenance() -> (&'static str, &'static str) {
    runner::provenance()
}

/// The units of the time series' columns, from the schema every source
/// writes (`sender::schema`): `{"flows": {name: unit}, "link": ...,
/// "model": ...}` in the tables' column order, so the Python package
/// does not spell them again.
#[pyfunction]
fn column_units() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    fn units<S>(table: &[Column<S>]) -> Vec<(&'static str, &'static str)> {
        table.iter().map(|c| (c.name, c.unit)).collect()
    }
    vec![
        ("flows", units(&FLOW_COLUMNS)),
        ("link", units(&LINK_COLUMNS)),
        ("model", units(&MODEL_COLUMNS)),
    ]
}

/// A search's options (the JSON of `claims::search::spec::Spec`),
/// checked, on `jobs` threads.
fn search_options(spec: &str, jobs: usize) -> PyResult<claims::search::Options> {
    claims::search::spec::Spec::from_json(spec)
        .and_then(|s| s.options(jobs))
        .map_err(PyValueError::new_err)
}

/// Checks a search's options and returns what the driver needs:
/// `(dimensions, evaluations, seed, lower_is_worse, warmup_s, objective,
/// unit, flows)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn search_plan(
    spec: &str,
) -> PyResult<(
    usize,
    usize,
    u64,
    bool,
    f64,
    &'static str,
    &'static str,
    Vec<String>,
)> {
    let o = search_options(spec, 1)?;
    let flows = (0..o.flows)
        .map(|i| o.controllers[i.min(o.controllers.len() - 1)].name.clone())
        .collect();
    Ok((
        o.budget.dimensions().len(),
        o.evaluations,
        o.seed,
        o.objective.lower_is_worse(),
        o.warmup_ns as f64 / 1e9,
        o.objective.name(),
        o.objective.unit(),
        flows,
    ))
}

/// The objective at each point (coordinates in [0, 1]), on `jobs`
/// threads with the GIL released: `[(value, error or None)]`, a run that
/// did not complete at the objective's worst with why.
#[pyfunction]
#[pyo3(signature = (spec, points, jobs=1))]
fn search_evaluate(
    py: Python<'_>,
    spec: &str,
    points: Vec<Vec<f64>>,
    jobs: usize,
) -> PyResult<Vec<(f64, Option<String>)>> {
    let o = search_options(spec, jobs)?;
    py.detach(|| o.evaluate_points(&points))
        .map_err(PyRuntimeError::new_err)
}

/// A point's path: `(description, scenario file text)`, the file headed
/// by `header` as comment lines.
#[pyfunction]
fn search_path(spec: &str, point: Vec<f64>, header: Vec<String>) -> PyResult<(String, String)> {
    let o = search_options(spec, 1)?;
    let p = o.budget.path(&point);
    Ok((p.describe(), o.scenario(&p, &header)))
}

/// The reading of why the first flow's BBR did badly at `point`; None
/// for a controller outside the BBR family.
#[pyfunction]
fn search_reading(py: Python<'_>, spec: &str, point: Vec<f64>) -> PyResult<Option<String>> {
    let o = search_options(spec, 1)?;
    Ok(py.detach(|| o.reading(&o.budget.path(&point))))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_class::<Clock>()?;
    m.add_class::<ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(dict_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(provenance, m)?)?;
    m.add_function(wrap_pyfunction!(column_units, m)?)?;
    m.add_function(wrap_pyfunction!(plot_dir, m)?)?;
    m.add_function(wrap_pyfunction!(sliding_jain, m)?)?;
    m.add_function(wrap_pyfunction!(search_plan, m)?)?;
    m.add_function(wrap_pyfunction!(search_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(search_path, m)?)?;
    m.add_function(wrap_pyfunction!(search_reading, m)?)?;
    Ok(())
}
