//! A run's flows as qlog, so a simulated run opens in qvis beside a real
//! QUIC stack's trace: one file per listed flow, `flow-<i>.sqlog`, in the
//! JSON-SEQ serialization of qlog 0.3 (draft-ietf-quic-qlog-main-schema:
//! each record is RS, a JSON text and a newline; the first record is the
//! header).
//!
//! The events come from the sender's samples (every `sample_interval`),
//! with the names and fields of the qlog QUIC event definitions
//! (draft-ietf-quic-qlog-quic-events, "recovery" category):
//! - `recovery:metrics_updated`: `congestion_window` and
//!   `bytes_in_flight` (bytes), `smoothed_rtt`, `latest_rtt` and `min_rtt`
//!   (ms), `pacing_rate` (bits/s); only the fields that changed since the
//!   flow's last event, as the schema asks;
//! - `recovery:congestion_state_updated`: the controller's mode (`old`,
//!   `new`) whenever it changes;
//! - `recovery:packet_lost`: one per packet the sender declared lost
//!   since the previous sample, at the sample's time. The samples carry
//!   no packet numbers, so these events have no header.
//!
//! Times are milliseconds from the run's start (`time_format`
//! "relative", `reference_time` 0).

use netsim::FlowSample;
use serde_json::{json, Map, Value};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The qlog version and serialization written.
pub const QLOG_VERSION: &str = "0.3";

/// What a flow last logged, so only changes are written.
#[derive(Default)]
struct Last {
    metrics: Map<String, Value>,
    mode: Option<&'static str>,
    lost: u64,
}

/// One open trace file.
struct Trace {
    out: BufWriter<File>,
    last: Last,
}

/// The qlog files of one run.
pub struct QlogWriter {
    dir: PathBuf,
    title: String,
    names: Vec<String>,
    traces: Vec<Option<Trace>>,
}

impl QlogWriter {
    /// A writer for a run titled `title` into `dir`; `names` are the
    /// listed flows' names (the traces' titles). Files are created at
    /// each flow's first sample.
    pub fn new(dir: &Path, title: &str, names: Vec<String>) -> QlogWriter {
        QlogWriter {
            dir: dir.to_path_buf(),
            title: title.to_string(),
            traces: names.iter().map(|_| None).collect(),
            names,
        }
    }

    /// The file of flow `i`.
    pub fn path(dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("flow-{i}.sqlog"))
    }

    fn trace(&mut self, i: usize) -> io::Result<&mut Trace> {
        if i >= self.traces.len() {
            self.traces.resize_with(i + 1, || None);
        }
        if self.traces[i].is_none() {
            let mut out = BufWriter::new(File::create(Self::path(&self.dir, i))?);
            let name = self
                .names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("flow {i}"));
            let header = json!({
                "qlog_version": QLOG_VERSION,
                "qlog_format": "JSON-SEQ",
                "title": self.title,
                "description": "bbrlab's simulator: one flow's sender, from its samples",
                "trace": {
                    "title": name,
                    "vantage_point": {"name": "bbrlab sender", "type": "client"},
                    "common_fields": {"time_format": "relative", "reference_time": 0.0},
                },
            });
            record(&mut out, &header)?;
            self.traces[i] = Some(Trace {
                out,
                last: Last::default(),
            });
        }
        Ok(self.traces[i].as_mut().expect("created above"))
    }

    /// The events one sample gives.
    pub fn flow_sample(&mut self, s: &FlowSample) -> io::Result<()> {
        let t = self.trace(s.flow)?;
        let time = s.t_ns as f64 / 1e6;
        let ms = |ns: Option<u64>| ns.map(|n| json!(n as f64 / 1e6));
        let mut now = Map::new();
        now.insert("congestion_window".into(), json!(s.cwnd_bytes));
        now.insert("bytes_in_flight".into(), json!(s.inflight_bytes));
        for (k, v) in [
            ("smoothed_rtt", ms(s.srtt_ns)),
            ("latest_rtt", ms(s.rtt_ns)),
            ("min_rtt", ms(s.min_rtt_ns)),
        ] {
            if let Some(v) = v {
                now.insert(k.into(), v);
            }
        }
        if s.pacing_rate_bps.is_finite() && s.pacing_rate_bps > 0.0 {
            now.insert(
                "pacing_rate".into(),
                json!(s.pacing_rate_bps.round() as u64),
            );
        }
        let changed: Map<String, Value> = now
            .iter()
            .filter(|(k, v)| t.last.metrics.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !changed.is_empty() {
            record(
                &mut t.out,
                &json!({"time": time, "name": "recovery:metrics_updated", "data": changed}),
            )?;
            t.last.metrics = now;
        }
        let mode = s.mode.name();
        if t.last.mode != Some(mode) {
            let mut data = Map::new();
            if let Some(old) = t.last.mode {
                data.insert("old".into(), json!(old));
            }
            data.insert("new".into(), json!(mode));
            record(
                &mut t.out,
                &json!({"time": time, "name": "recovery:congestion_state_updated", "data": data}),
            )?;
            t.last.mode = Some(mode);
        }
        for _ in t.last.lost..s.packets_lost {
            record(
                &mut t.out,
                &json!({"time": time, "name": "recovery:packet_lost", "data": {}}),
            )?;
        }
        t.last.lost = t.last.lost.max(s.packets_lost);
        Ok(())
    }

    /// Flushes every file.
    pub fn finish(self) -> io::Result<()> {
        for mut t in self.traces.into_iter().flatten() {
            t.out.flush()?;
        }
        Ok(())
    }
}

/// One JSON-SEQ record: RS, the JSON text, a newline (RFC 7464).
fn record(out: &mut impl Write, v: &Value) -> io::Result<()> {
    out.write_all(b"\x1e")?;
    serde_json::to_writer(&mut *out, v).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
