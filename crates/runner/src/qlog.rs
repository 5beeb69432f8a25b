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
//!
//! The records are serde structs that follow the schema's field names
//! (keys in alphabetical order, as the files have always had them). The
//! `qlog` crate has these types, but every version of it switches on
//! serde_json's `preserve_order` feature, which Cargo then turns on for
//! the whole workspace: every other JSON file bbrlab writes from a
//! `serde_json::Map` (summaries, validation reports) would change its key
//! order.

use netsim::FlowSample;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The qlog version and serialization written.
pub const QLOG_VERSION: &str = "0.3";

/// The file's first record (qlog 0.3 `QlogFileSeq`).
#[derive(Serialize)]
struct Header<'a> {
    description: &'a str,
    qlog_format: &'a str,
    qlog_version: &'a str,
    title: &'a str,
    trace: TraceSeq<'a>,
}

/// The trace's metadata (`TraceSeq`).
#[derive(Serialize)]
struct TraceSeq<'a> {
    common_fields: CommonFields,
    title: &'a str,
    vantage_point: VantagePoint<'a>,
}

/// Times relative to the run's start, in ms.
#[derive(Serialize)]
struct CommonFields {
    reference_time: f64,
    time_format: &'static str,
}

/// Who logged: the simulated sender.
#[derive(Serialize)]
struct VantagePoint<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    ty: &'a str,
}

/// One event: `time` in ms, `name` its category:type, `data` its fields.
#[derive(Serialize)]
struct Event<D> {
    data: D,
    name: &'static str,
    time: f64,
}

/// `recovery:metrics_updated`'s fields; each is written only when it
/// changed since the flow's last such event.
#[derive(Serialize, Clone, Copy, Default, PartialEq)]
struct Metrics {
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_in_flight: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    congestion_window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_rtt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pacing_rate: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    smoothed_rtt: Option<f64>,
}

impl Metrics {
    /// The fields of `self` that differ from `last` (a field now absent
    /// is not an update).
    fn changed_from(&self, last: &Metrics) -> Metrics {
        fn keep<T: PartialEq + Copy>(now: Option<T>, last: Option<T>) -> Option<T> {
            now.filter(|v| last != Some(*v))
        }
        Metrics {
            bytes_in_flight: keep(self.bytes_in_flight, last.bytes_in_flight),
            congestion_window: keep(self.congestion_window, last.congestion_window),
            latest_rtt: keep(self.latest_rtt, last.latest_rtt),
            min_rtt: keep(self.min_rtt, last.min_rtt),
            pacing_rate: keep(self.pacing_rate, last.pacing_rate),
            smoothed_rtt: keep(self.smoothed_rtt, last.smoothed_rtt),
        }
    }
}

/// `recovery:congestion_state_updated`'s fields.
#[derive(Serialize)]
struct StateUpdated<'a> {
    new: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    old: Option<&'a str>,
}

/// `recovery:packet_lost`'s fields: none known (the samples carry no
/// packet numbers).
#[derive(Serialize)]
struct PacketLost {}

/// What a flow last logged, so only changes are written.
#[derive(Default)]
struct Last {
    metrics: Metrics,
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
            let header = Header {
                description: "bbrlab's simulator: one flow's sender, from its samples",
                qlog_format: "JSON-SEQ",
                qlog_version: QLOG_VERSION,
                title: &self.title,
                trace: TraceSeq {
                    common_fields: CommonFields {
                        reference_time: 0.0,
                        time_format: "relative",
                    },
                    title: &name,
                    vantage_point: VantagePoint {
                        name: "bbrlab sender",
                        ty: "client",
                    },
                },
            };
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
        let ms = |ns: Option<u64>| ns.map(|n| n as f64 / 1e6);
        let now = Metrics {
            bytes_in_flight: Some(s.inflight_bytes),
            congestion_window: Some(s.cwnd_bytes),
            latest_rtt: ms(s.rtt_ns),
            min_rtt: ms(s.min_rtt_ns),
            pacing_rate: (s.pacing_rate_bps.is_finite() && s.pacing_rate_bps > 0.0)
                .then(|| s.pacing_rate_bps.round() as u64),
            smoothed_rtt: ms(s.srtt_ns),
        };
        let changed = now.changed_from(&t.last.metrics);
        if changed != Metrics::default() {
            record(
                &mut t.out,
                &Event {
                    data: changed,
                    name: "recovery:metrics_updated",
                    time,
                },
            )?;
            t.last.metrics = now;
        }
        let mode = s.mode.name();
        if t.last.mode != Some(mode) {
            record(
                &mut t.out,
                &Event {
                    data: StateUpdated {
                        new: mode,
                        old: t.last.mode,
                    },
                    name: "recovery:congestion_state_updated",
                    time,
                },
            )?;
            t.last.mode = Some(mode);
        }
        for _ in t.last.lost..s.packets_lost {
            record(
                &mut t.out,
                &Event {
                    data: PacketLost {},
                    name: "recovery:packet_lost",
                    time,
                },
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
fn record(out: &mut impl Write, v: &impl Serialize) -> io::Result<()> {
    out.write_all(b"\x1e")?;
    serde_json::to_writer(&mut *out, v).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
