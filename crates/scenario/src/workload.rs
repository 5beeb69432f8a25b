//! `[[arrivals]]` and `[[cross]]`: flows that arrive as a random process,
//! and unresponsive cross traffic (see `netsim::workload`).
//!
//! An `[[arrivals]]` table is a `[[flow]]` template (algorithm, ack,
//! pacing, extra_rtt, tuning tables) plus the process: `rate` in flows per
//! second, a `start`/`stop` window, and `size` as a distribution. The
//! template goes through exactly the checks a `[[flow]]` does.

use crate::{Bytes, Dur, FlowTable, Rate, ScenarioError};
use netsim::{ArrivalProcess, CrossKind, CrossTraffic, EmpiricalCdf, Periods, SizeDist};
use serde::Deserialize;
use std::path::Path;

/// Most flows one arrival process may be expected to start in a run (rate
/// × window): each live flow holds a sender and a receiver, and an
/// overloaded path keeps them alive, so the bound on flows started is also
/// the bound on memory (a few KB each, so about 1 GB at the limit).
pub const MAX_ARRIVALS_PER_RUN: f64 = 200_000.0;

/// Most points an empirical CDF file may have.
pub const MAX_CDF_POINTS: usize = 100_000;

/// `process`: how arrivals are spaced.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProcessName {
    /// Exponential gaps.
    #[default]
    Poisson,
}

/// `size = { dist = ..., ... }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeTable {
    /// `{ dist = "fixed", bytes = "10kB" }`.
    Fixed {
        /// Every flow's size.
        bytes: Bytes,
    },
    /// `{ dist = "exponential", mean = "50kB" }`.
    Exponential {
        /// Mean size.
        mean: Bytes,
    },
    /// `{ dist = "pareto", shape = 1.2, mean = "50kB" }` or `scale = ".."`
    /// (the smallest size) instead of `mean`.
    Pareto {
        /// Tail index.
        shape: f64,
        /// Mean size (needs shape > 1).
        mean: Option<Bytes>,
        /// Smallest size.
        scale: Option<Bytes>,
    },
    /// `{ dist = "cdf", file = "sizes.csv" }`: rows of `size_bytes,
    /// cumulative_probability`.
    Cdf {
        /// Path, relative to the scenario file.
        file: String,
    },
}

/// One `[[arrivals]]` table.
#[derive(Clone, Debug, Deserialize)]
pub struct ArrivalsTable {
    /// The process (only `"poisson"`).
    #[serde(default)]
    process: ProcessName,
    /// Flows per second.
    rate: f64,
    /// First arrival no earlier than this.
    start: Option<Dur>,
    /// No arrival at or after this (the run's end by default).
    stop: Option<Dur>,
    /// Flow sizes.
    size: SizeTable,
    /// Everything else: a `[[flow]]`'s keys.
    #[serde(flatten)]
    pub(crate) flow: FlowTable,
    /// Keys neither of the above knows (serde's `deny_unknown_fields`
    /// does not work through `flatten`): refused by [`check_template`].
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, toml::Value>,
}

/// `kind` of a `[[cross]]` source.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CrossName {
    /// Constant bit rate.
    Cbr,
    /// On-off.
    Onoff,
}

/// `periods` of an on-off source.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PeriodsName {
    /// Exponentially distributed (the classic on-off model).
    #[default]
    Exponential,
    /// Exactly `on` and `off`.
    Fixed,
}

/// One `[[cross]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossTable {
    name: Option<String>,
    kind: CrossName,
    rate: Rate,
    packet_size: Option<Bytes>,
    start: Option<Dur>,
    stop: Option<Dur>,
    on: Option<Dur>,
    off: Option<Dur>,
    periods: Option<PeriodsName>,
}

/// The key of `table` (one `[[arrivals]]` table) whose value is of the
/// wrong type, and the parser's error for it. serde loses a key's name
/// inside a flattened table (`ArrivalsTable::flow`), so the whole table's
/// error names only the table; each key is tried here alone, beside valid
/// stand-ins for the keys the table requires. `None` when every key is
/// well typed alone (the fault is elsewhere).
pub(crate) fn blame_key(table: &toml::Table) -> Option<(String, toml::de::Error)> {
    let stand_ins: toml::Table = toml::from_str(
        "algorithm = \"bbr\"\nrate = 1.0\nsize = { dist = \"fixed\", bytes = \"1kB\" }",
    )
    .expect("the stand-ins parse");
    table.iter().find_map(|(key, value)| {
        let mut t = stand_ins.clone();
        t.insert(key.clone(), value.clone());
        toml::Value::Table(t)
            .try_into::<ArrivalsTable>()
            .err()
            .map(|e| (key.clone(), e))
    })
}

/// The template's keys that an arrival process sets itself.
pub(crate) fn check_template(
    i: usize,
    a: &ArrivalsTable,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if let Some(key) = a.unknown.keys().next() {
        return Err(err(
            &format!("arrivals[{i}].{key}"),
            format!("unknown field `{key}`; an `[[arrivals]]` table takes `process`, `rate`, `start`, `stop`, `size` and the keys of a `[[flow]]` (name, algorithm, ack, rcv_buffer, rcv_autotuning, pacing, tso_defer, timestamps, initial_burst, handshake, extra_rtt, mss, header_bytes, ecn, stack and the tuning tables)"),
        ));
    }
    for (key, set) in [
        ("count", a.flow.count.is_some()),
        ("stagger", a.flow.stagger.is_some()),
    ] {
        if set {
            return Err(err(
                &format!("arrivals[{i}].{key}"),
                format!("`{key}` does not apply to arrivals: the process decides how many flows start and when (`rate`, `start`, `stop`)"),
            ));
        }
    }
    if a.flow.mss_change.is_some() {
        return Err(err(
            &format!("arrivals[{i}].mss_change"),
            "`mss_change` does not apply to arrivals: its `at` is a time in the run, and generated flows start at times the process draws; give the flows their `mss`".into(),
        ));
    }
    Ok(())
}

/// Something scheduled at `at_ns` (an arrival process's or a cross-traffic
/// source's or a listed flow's `start`, a flow's `mss_change.at`: `key`)
/// must come before the run ends: one at or after the end never happens,
/// and a run with it would look like a run that had it (the scenario.toml
/// written beside the results lists it), which is a mistake in the file,
/// not a result. `what` says what would (not) happen.
pub(crate) fn check_before_end(
    at_ns: u64,
    duration_ns: u64,
    key: &str,
    what: &str,
    field: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if at_ns < duration_ns {
        return Ok(());
    }
    let secs = |ns: u64| ns as f64 / 1e9;
    Err(err(
        &field(key),
        format!(
            "{} s is not before the run's end ({} s): {what}; allowed 0 s up to (not including) {} s",
            secs(at_ns),
            secs(duration_ns),
            secs(duration_ns)
        ),
    ))
}

/// The arrival processes, given their templates (built like flows).
pub(crate) fn arrivals(
    tables: &[ArrivalsTable],
    templates: Vec<netsim::FlowConfig>,
    duration_ns: u64,
    base_dir: &Path,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Vec<netsim::Arrivals>, ScenarioError> {
    let mut out = Vec::new();
    for (i, (a, template)) in tables.iter().zip(templates).enumerate() {
        let field = |k: &str| format!("arrivals[{i}].{k}");
        if !(a.rate.is_finite() && a.rate > 0.0) {
            return Err(err(
                &field("rate"),
                format!(
                    "{}; give flows per second, a positive number like 100",
                    a.rate
                ),
            ));
        }
        let start = a.start.map_or(0, |d| d.0);
        check_before_end(
            start,
            duration_ns,
            "start",
            "no flow would arrive",
            &field,
            err,
        )?;
        let stop = a.stop.map_or(duration_ns, |d| d.0).min(duration_ns);
        if let Some(s) = a.stop {
            if s.0 <= start {
                return Err(err(&field("stop"), "must be after `start`".into()));
            }
        }
        let window = stop.saturating_sub(start) as f64 / 1e9;
        let expected = a.rate * window;
        if expected > MAX_ARRIVALS_PER_RUN {
            return Err(err(
                &field("rate"),
                format!(
                    "{} flows/s for {window:.0} s is about {expected:.0} flows; the limit is {MAX_ARRIVALS_PER_RUN:.0} per arrival process in one run: lower `rate` or shorten the window (`start`, `stop`)",
                    a.rate
                ),
            ));
        }
        let size = size_dist(&a.size, base_dir, &|k, m| {
            err(&field(&format!("size.{k}")), m)
        })?;
        let name = a
            .flow
            .name
            .clone()
            .unwrap_or_else(|| format!("arrivals-{i}"));
        out.push(netsim::Arrivals {
            name,
            template,
            process: match a.process {
                ProcessName::Poisson => ArrivalProcess::Poisson { rate_per_s: a.rate },
            },
            start_ns: start,
            stop_ns: Some(stop),
            size,
        });
    }
    Ok(out)
}

/// Largest flow size a distribution may name: 1 TB (far beyond any run's
/// reach, and far from overflowing the sender's chunk arithmetic).
const MAX_FLOW_BYTES: f64 = 1e12;

fn size_dist(
    t: &SizeTable,
    base_dir: &Path,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<SizeDist, ScenarioError> {
    let too_big = |k: &str, v: f64| {
        (v > MAX_FLOW_BYTES).then(|| {
            err(
                k,
                format!("{v:.0} bytes; the largest flow size is {MAX_FLOW_BYTES:.0e} bytes"),
            )
        })
    };
    Ok(match t {
        SizeTable::Fixed { bytes } => {
            if let Some(e) = too_big("bytes", bytes.0 as f64) {
                return Err(e);
            }
            SizeDist::Fixed(bytes.0)
        }
        SizeTable::Exponential { mean } => {
            if let Some(e) = too_big("mean", mean.0 as f64) {
                return Err(e);
            }
            SizeDist::Exponential {
                mean: mean.0 as f64,
            }
        }
        SizeTable::Pareto { shape, mean, scale } => {
            if !(shape.is_finite() && *shape > 0.0) {
                return Err(err(
                    "shape",
                    format!(
                        "{shape}; must be a positive number (1.1 to 2.5 is typical of web flows)"
                    ),
                ));
            }
            let scale = match (mean, scale) {
                (Some(m), None) => {
                    if *shape <= 1.0 {
                        return Err(err("shape", format!("{shape}: a Pareto with shape <= 1 has no mean; give `scale` (the smallest size) instead of `mean`, or a shape above 1")));
                    }
                    m.0 as f64 * (shape - 1.0) / shape
                }
                (None, Some(s)) => s.0 as f64,
                _ => {
                    return Err(err(
                        "mean",
                        "give exactly one of `mean` and `scale` (the smallest size)".into(),
                    ))
                }
            };
            if let Some(e) = too_big("scale", scale) {
                return Err(e);
            }
            SizeDist::Pareto {
                scale: scale.max(1.0),
                shape: *shape,
            }
        }
        SizeTable::Cdf { file } => {
            let path = base_dir.join(file);
            SizeDist::Cdf(read_cdf(&path).map_err(|m| err("file", m))?)
        }
    })
}

/// Reads a CDF file: CSV rows `size_bytes,cumulative_probability`, no
/// header, `#` starts a comment line. Errors name `file:line`.
pub fn read_cdf(path: &Path) -> Result<EmpiricalCdf, String> {
    let shown = path.display();
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        // Comments are skipped below rather than by the reader's
        // `comment` option, whose line numbers leave comment lines out.
        .flexible(true)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| format!("cannot read the CDF file {shown}: {e}"))?;
    let mut points = Vec::new();
    let mut lines = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{shown}: {e}"))?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.get(0).is_some_and(|f| f.starts_with('#')) {
            continue;
        }
        if points.len() >= MAX_CDF_POINTS {
            return Err(format!("{shown}:{line}: more than {MAX_CDF_POINTS} points"));
        }
        if rec.len() != 2 {
            return Err(format!(
                "{shown}:{line}: {} fields; each row is `size_bytes,cumulative_probability`",
                rec.len()
            ));
        }
        let num = |i: usize, what: &str| -> Result<f64, String> {
            rec[i]
                .parse::<f64>()
                .map_err(|_| format!("{shown}:{line}: `{}` is not a number ({what})", &rec[i]))
        };
        points.push((num(0, "size in bytes")?, num(1, "cumulative probability")?));
        lines.push(line);
    }
    EmpiricalCdf::new(points).map_err(|e| {
        let line = e
            .point
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .map_or(String::new(), |l| format!(":{l}"));
        format!("{shown}{line}: {}", e.message)
    })
}

/// The cross-traffic sources.
pub(crate) fn cross(
    tables: &[CrossTable],
    duration_ns: u64,
    err: &dyn Fn(&str, String) -> ScenarioError,
) -> Result<Vec<CrossTraffic>, ScenarioError> {
    let mut out = Vec::new();
    for (i, c) in tables.iter().enumerate() {
        let field = |k: &str| format!("cross[{i}].{k}");
        if !(c.rate.0.is_finite() && c.rate.0 >= 1e3) {
            return Err(err(
                &field("rate"),
                format!("{} bit/s; give at least `1kbit`", c.rate.0),
            ));
        }
        let packet = c.packet_size.map_or(1500, |b| b.0);
        if !(40..=9000).contains(&packet) {
            return Err(err(
                &field("packet_size"),
                format!("{packet} bytes; allowed 40 to 9000"),
            ));
        }
        let start = c.start.map_or(0, |d| d.0);
        check_before_end(
            start,
            duration_ns,
            "start",
            "the source would never send",
            &field,
            err,
        )?;
        if let Some(s) = c.stop {
            if s.0 <= start {
                return Err(err(&field("stop"), "must be after `start`".into()));
            }
        }
        let kind = match c.kind {
            CrossName::Cbr => {
                for (k, set) in [
                    ("on", c.on.is_some()),
                    ("off", c.off.is_some()),
                    ("periods", c.periods.is_some()),
                ] {
                    if set {
                        return Err(err(
                            &field(k),
                            format!("`{k}` applies only to `kind = \"onoff\"`"),
                        ));
                    }
                }
                CrossKind::Cbr
            }
            CrossName::Onoff => {
                let (Some(on), Some(off)) = (c.on, c.off) else {
                    return Err(err(
                        &field("on"),
                        "an on-off source needs both `on` and `off` durations, e.g. `on = \"500ms\"`, `off = \"1s\"`".into(),
                    ));
                };
                for (k, d) in [("on", on), ("off", off)] {
                    if d.0 == 0 {
                        return Err(err(&field(k), "must be positive, e.g. `500ms`".into()));
                    }
                }
                CrossKind::OnOff {
                    on_ns: on.0,
                    off_ns: off.0,
                    periods: match c.periods.unwrap_or_default() {
                        PeriodsName::Exponential => Periods::Exponential,
                        PeriodsName::Fixed => Periods::Fixed,
                    },
                }
            }
        };
        out.push(CrossTraffic {
            name: c.name.clone().unwrap_or_else(|| format!("cross-{i}")),
            rate_bps: c.rate.0,
            packet_bytes: packet as u32,
            start_ns: start,
            stop_ns: c.stop.map(|d| d.0),
            kind,
        });
    }
    Ok(out)
}
