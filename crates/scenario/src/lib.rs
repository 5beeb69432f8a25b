//! Scenario files: TOML in, [`netsim::SimConfig`]s out (one per sweep
//! point), or an error that says what is wrong, where (`file:line:col`)
//! and what would be accepted.
//!
//! The schema is documented in `docs/scenarios.md`. Values with units are
//! parsed while deserialising (through the `link::units` parsers), so a bad
//! value is reported by the TOML parser with its line and column, exactly
//! like a syntax error or an unknown field. [`limits`] keeps any file from
//! asking for more than the machine can give (packets, rows, memory), and
//! [`path`] reads just a file's `[link]` for the emulator, on the same code.
//! This crate is the boundary every untrusted input crosses, so it is the
//! one the fuzz tests aim at.
//!
//! ```
//! use std::path::Path;
//! let text = r#"
//! duration = "10s"
//! [link.forward]
//! rate = "10mbit"
//! delay = "20ms"
//! [[flow]]
//! algorithm = "bbr"
//! [sweep]
//! seed = [1, 2, 3]
//! "#;
//! let sc = scenario::parse(text, "doc.toml", Path::new("."), Path::new("doc.toml")).unwrap();
//! assert_eq!(sc.runs.len(), 3); // one run per sweep point
//! assert_eq!(sc.runs[0].config.duration_ns, 10_000_000_000);
//!
//! // A bad value is refused with its place and what is allowed.
//! let bad = text.replace("\"20ms\"", "\"20 parsecs\"");
//! let e = scenario::parse(&bad, "doc.toml", Path::new("."), Path::new("doc.toml")).unwrap_err();
//! assert_eq!(e.location, "doc.toml:5:9");
//! ```

use congestion::{Algorithm, Config as CcConfig};
use link::units;
use netsim::{AckPolicy, App, FlowConfig, SimConfig};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::locate::{KeyPath, Located, Seg};

mod build;
pub mod builder;
pub mod edit;
pub mod limits;
pub mod locate;
pub mod path;
pub mod workload;

/// A duration written with a unit ("40ms").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Dur(pub u64);

impl TryFrom<String> for Dur {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        units::parse_duration_ns(&s)
            .map(Dur)
            .map_err(|e| e.to_string())
    }
}

/// A rate written with a unit ("10mbit").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Rate(pub f64);

impl TryFrom<String> for Rate {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        units::parse_rate_bps(&s)
            .map(Rate)
            .map_err(|e| e.to_string())
    }
}

/// A byte count written with a unit ("10MB").
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Bytes(pub u64);

impl TryFrom<String> for Bytes {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        match units::parse_size(&s).map_err(|e| e.to_string())? {
            units::Size::Bytes(b) if b > 0 => Ok(Bytes(b)),
            units::Size::Bytes(_) => Err(format!(
                "`{s}` is zero bytes; expected a positive size like `10MB`"
            )),
            units::Size::Packets(_) => Err(format!(
                "`{s}` is a packet count; expected bytes, like `10MB` or `1500B`"
            )),
        }
    }
}

/// A flow's controller: one of bbrlab's algorithms, or a QUIC stack's own
/// controller run inside bbrlab's sender (`s2n:bbr2`, `s2n:cubic`,
/// `quinn:bbr`, `quinn:cubic`: the `stack-names` crate; the runner builds
/// them from the `quic-controllers` crate).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(try_from = "String")]
pub enum AlgName {
    /// A built-in algorithm, which `congestion::Controller::new` runs.
    Builtin(Algorithm),
    /// A stack's controller, which the flow runs through
    /// `congestion::Controller::custom`.
    Stack(stack_names::StackAlgorithm),
}

impl AlgName {
    /// The name outputs show.
    pub fn name(self) -> &'static str {
        match self {
            AlgName::Builtin(a) => a.name(),
            AlgName::Stack(s) => s.name(),
        }
    }

    /// The built-in algorithm, if it is one.
    pub fn builtin(self) -> Option<Algorithm> {
        match self {
            AlgName::Builtin(a) => Some(a),
            AlgName::Stack(_) => None,
        }
    }
}

impl TryFrom<String> for AlgName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if let Ok(a) = s.parse::<Algorithm>() {
            return Ok(AlgName::Builtin(a));
        }
        if let Ok(q) = s.trim().parse::<stack_names::StackAlgorithm>() {
            return Ok(AlgName::Stack(q));
        }
        let builtin: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
        Err(format!(
            "unknown algorithm `{s}`; expected one of {} (bbrlab's), or {} (a QUIC stack's own controller)",
            builtin.join(", "),
            stack_names::names().join(", ")
        ))
    }
}

/// The receiver's ACK policy.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AckName {
    /// Acknowledge every packet.
    Every,
    /// Linux-like delayed ACKs (every 2nd packet or 40 ms).
    Delayed,
    /// Linux's receiver: quick ACKs, delayed ACKs, SACK compression.
    Linux,
    /// Chromium QUIC's ACK decimation (the `ACKD` option of 2018): after
    /// 100 packets, an ACK per 10 packets or a quarter of min_rtt.
    Decimated,
    /// QUIC 2018's default receiver: every second packet or 25 ms, at once
    /// when out of order (what `stack = "quic-2018"` uses unless `ack` is
    /// given; named so a sweep can set it beside `"decimated"`).
    #[serde(rename = "quic-2018")]
    Quic2018,
}

/// The sender's pacer (`pacing = "exact" | "quantum" | "off"`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PacingName {
    /// One packet at a time at the pacing rate.
    Exact,
    /// Bursts of one send quantum, as Linux fq and the UDP transport send.
    Quantum,
    /// None: what the window allows leaves at once, as Linux TCP sends
    /// CUBIC or Reno without an fq qdisc.
    Off,
}

/// `[flow.bbr]`: switches for BBR's mechanisms. `flavour` picks a whole
/// set first; the other keys then override single switches.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BbrSwitches {
    flavour: Option<FlavourName>,
    lt_bw: Option<bool>,
    extra_acked: Option<bool>,
    probe_rtt: Option<bool>,
    idle_restart: Option<bool>,
    packet_conservation: Option<bool>,
    quantization_budget: Option<bool>,
    min_cwnd: Option<Bytes>,
    ack_aggregation: Option<FlavourName>,
    min_rtt_samples: Option<MinRttName>,
    bw_window_follows_cycle: Option<bool>,
    recovery: Option<RecoveryName>,
}

/// `[flow.bbr] recovery`: BBR's loss-recovery rule.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum RecoveryName {
    /// The rule matching the stack's recovery episodes (the default).
    #[serde(rename = "auto")]
    Auto,
    /// Linux's packet conservation and cwnd restore.
    #[serde(rename = "linux")]
    Linux,
    /// QUIC 2018's separate recovery window.
    #[serde(rename = "quic-2018")]
    Quic2018,
}

/// `"linux"` or `"quic-2018"`: whose stack (or whose version of one
/// mechanism) to model.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum FlavourName {
    /// Linux TCP's.
    #[serde(rename = "linux")]
    Linux,
    /// Chromium QUIC's of 2018 (seed 001's stack).
    #[serde(rename = "quic-2018")]
    Quic2018,
}

/// `[flow.bbr] min_rtt_samples`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MinRttName {
    /// One sample per ACK (Linux).
    Latest,
    /// The smallest RTT of every packet the ACK acknowledges (QUIC 2018).
    AllAcked,
}

/// `[flow.jitter]`: `bbr-jitter` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterParams {
    alpha: Option<f64>,
    beta: Option<f64>,
    gamma: Option<f64>,
    stats: Option<JitterStatsName>,
    cadence: Option<JitterCadenceName>,
}

/// `[flow.jitter] cadence`: how often eqs. (8)–(9) run. `"every-sample"`
/// (the default), `"every-N-samples"` (N ≥ 1, e.g. `"every-10-samples"`),
/// `"per-round"` or `"per-ack-frame"`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct JitterCadenceName(pub congestion::JitterCadence);

impl TryFrom<String> for JitterCadenceName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        use congestion::JitterCadence as C;
        let allowed = "allowed: \"every-sample\", \"every-N-samples\" (N from 1 to 1000000, e.g. \"every-10-samples\"), \"per-round\", \"per-ack-frame\"";
        let c = match s.as_str() {
            "every-sample" => C::EverySample,
            "per-round" => C::PerRound,
            "per-ack-frame" => C::PerAckFrame,
            other => {
                let n = other
                    .strip_prefix("every-")
                    .and_then(|r| r.strip_suffix("-samples"))
                    .ok_or_else(|| format!("unknown cadence `{s}`; {allowed}"))?;
                let n: u32 = n
                    .parse()
                    .ok()
                    .filter(|n| (1..=1_000_000).contains(n))
                    .ok_or_else(|| {
                        format!("`{s}`: N must be a whole number from 1 to 1000000; {allowed}")
                    })?;
                C::EveryNSamples(core::num::NonZeroU32::new(n).expect("n ≥ 1"))
            }
        };
        Ok(JitterCadenceName(c))
    }
}

/// `[flow.jitter] stats`: how `bbr-jitter` keeps srtt and rttvar.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum JitterStatsName {
    /// srtt first, rttvar from 0, raw samples (the default).
    SrttFirst,
    /// QUIC 2018's order, start and ACK-delay handling (the paper's stack).
    #[serde(rename = "quic-2018")]
    Quic2018,
}

/// `[flow.bbr3]`: which BBRv3 `bbr3` runs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bbr3Table {
    profile: Option<Bbr3ProfileName>,
    signals: Option<Bbr3SignalsName>,
}

/// `[flow.bbr3] signals`: `"exact"` (the default) or `"stock-kernel"`,
/// the substitutes a stock Linux kernel gives `bbrlab_bbr3` (the error
/// lists the known values).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Bbr3SignalsName(pub congestion::Bbr3Signals);

impl TryFrom<String> for Bbr3SignalsName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse::<congestion::Bbr3Signals>()
            .map(Bbr3SignalsName)
            .map_err(|e| e.to_string())
    }
}

/// `[flow.bbr3] profile`: `"draft"` or `"linux-v3"`, checked against the
/// known profiles (the error lists them).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct Bbr3ProfileName(pub congestion::Bbr3Profile);

impl TryFrom<String> for Bbr3ProfileName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse::<congestion::Bbr3Profile>()
            .map(Bbr3ProfileName)
            .map_err(|e| e.to_string())
    }
}

/// A flow's `ecn`: `true` (ECT(0)), `false` (the default: not
/// ECN-capable), `"ect0"` or `"ect1"`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "toml::Value")]
pub struct EcnSetting(pub netsim::Ecn);

impl TryFrom<toml::Value> for EcnSetting {
    type Error = String;
    fn try_from(v: toml::Value) -> Result<Self, String> {
        use netsim::Ecn;
        match &v {
            toml::Value::Boolean(true) => Ok(EcnSetting(Ecn::Ect0)),
            toml::Value::Boolean(false) => Ok(EcnSetting(Ecn::NotEct)),
            toml::Value::String(s) if s.eq_ignore_ascii_case("ect0") => Ok(EcnSetting(Ecn::Ect0)),
            toml::Value::String(s) if s.eq_ignore_ascii_case("ect1") => Ok(EcnSetting(Ecn::Ect1)),
            other => Err(format!(
                "`ecn = {other}`; allowed: true (ECT(0)), false (no ECN, the default), \"ect0\" or \"ect1\""
            )),
        }
    }
}

/// `[flow.cubic]`: CUBIC switches.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicSwitches {
    hystart: Option<bool>,
    hystart_variant: Option<HyStartVariantName>,
    avoidance: Option<CubicAvoidanceName>,
    fast_convergence: Option<bool>,
    reno_friendly: Option<bool>,
}

/// `[flow.cubic] avoidance`: `"rfc9438"` (the default) or `"linux"`
/// (kernel CUBIC's congestion-avoidance rules), checked (the error lists
/// them).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct CubicAvoidanceName(pub congestion::CubicAvoidance);

impl TryFrom<String> for CubicAvoidanceName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        congestion::CubicAvoidance::from_name(&s)
            .map(CubicAvoidanceName)
            .ok_or_else(|| {
                format!(
                    "unknown CUBIC avoidance rules `{s}`; known: {}",
                    congestion::CubicAvoidance::NAMES.join(", ")
                )
            })
    }
}

/// `[flow.cubic] hystart_variant`: `"rfc9406"` (HyStart++, the default) or
/// `"linux"` (kernel CUBIC's HyStart), checked (the error lists them).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct HyStartVariantName(pub congestion::HyStartVariant);

impl TryFrom<String> for HyStartVariantName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        congestion::HyStartVariant::from_name(&s)
            .map(HyStartVariantName)
            .ok_or_else(|| {
                format!(
                    "unknown HyStart variant `{s}`; known: {}",
                    congestion::HyStartVariant::NAMES.join(", ")
                )
            })
    }
}

/// One `[[flow]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowTable {
    name: Option<String>,
    algorithm: AlgName,
    start: Option<Dur>,
    stop: Option<Dur>,
    size: Option<Bytes>,
    extra_rtt: Option<Dur>,
    app_rate: Option<Rate>,
    chunk_size: Option<Bytes>,
    chunk_every: Option<Dur>,
    ack: Option<AckName>,
    pacing: Option<PacingName>,
    stack: Option<FlavourName>,
    count: Option<u32>,
    stagger: Option<Dur>,
    mss: Option<u64>,
    header_bytes: Option<u64>,
    bbr: Option<BbrSwitches>,
    bbr3: Option<Bbr3Table>,
    jitter: Option<JitterParams>,
    cubic: Option<CubicSwitches>,
    ecn: Option<EcnSetting>,
    access: Option<AccessTable>,
    hops: Option<Vec<i64>>,
}

/// `[flow.access]`: a flow's own access link, each direction a table with
/// the keys of `[link.forward]` (rate, delay or delay_schedule, queue,
/// loss, jitter, policer, ack_aggregation), each meaning what it means
/// there. Data crosses `forward` before the first bottleneck hop; ACKs
/// cross `reverse` after the shared `[link.reverse]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessTable {
    forward: Option<link::DirectionConfig>,
    reverse: Option<link::DirectionConfig>,
}

/// `[link]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTable {
    forward: link::DirectionConfig,
    #[serde(default)]
    reverse: Option<link::DirectionConfig>,
    /// Bottleneck hops after `[link.forward]` (which is hop 0), in series:
    /// `[[link.hops]]` tables are hops 1, 2, ...
    #[serde(default)]
    hops: Option<Vec<link::DirectionConfig>>,
    /// The emulator's per-port paths; refused here with a pointer to
    /// `[flow.access]`.
    #[serde(default)]
    ports: Option<toml::Value>,
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    name: Option<String>,
    description: Option<String>,
    duration: Dur,
    seed: Option<u64>,
    sample_interval: Option<Dur>,
    output: Option<String>,
    link: LinkTable,
    #[serde(default)]
    flow: Vec<FlowTable>,
    sweep: Option<toml::Table>,
    /// Flow arrival processes.
    #[serde(default)]
    arrivals: Vec<workload::ArrivalsTable>,
    /// Unresponsive cross traffic.
    #[serde(default)]
    cross: Vec<workload::CrossTable>,
}

/// A scenario error for users: where, what, and what is allowed.
#[derive(Debug)]
pub struct ScenarioError {
    /// `file:line:col` or `file`.
    pub location: String,
    /// The problem.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// One simulation to run: a sweep point (or the only run).
#[derive(Clone, Debug)]
pub struct Run {
    /// Sweep parameters of this point, as `key=value` pairs (empty if no sweep).
    pub params: Vec<(String, String)>,
    /// The scenario as run: the file, or for a sweep point the file with
    /// the point's values set and `[sweep]` removed (written next to the
    /// results, so a run can be repeated from its own directory).
    pub text: String,
    /// The simulation.
    pub config: SimConfig,
    /// Flow arrivals and cross traffic besides `config`'s flows (empty
    /// unless the file has `[[arrivals]]` or `[[cross]]`); run with
    /// `netsim::run_workload`.
    pub workload: netsim::Workload,
}

/// A parsed scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Display name (the `name` field, or the file stem).
    pub name: String,
    /// Free text from the file.
    pub description: Option<String>,
    /// Output directory from the file, resolved against its directory.
    pub output: Option<PathBuf>,
    /// The runs: one, or one per sweep point.
    pub runs: Vec<Run>,
}

/// The parser's message for `e`, with the field's path in front unless the
/// message already names it, and a hint for the commonest mistake.
fn toml_message(e: &toml::de::Error, path: Option<&KeyPath>) -> String {
    let mut message = e.message().trim().to_string();
    if message.contains("expected a string") {
        message.push_str(
            " (values with units are strings, e.g. \"40ms\", \"10mbit\", \"100pkt\", \"150kB\")",
        );
    }
    if let Some(p) = path {
        let k = p.to_string();
        if !message.contains(&format!("`{k}`")) {
            message = format!("`{k}`: {message}");
        }
    }
    message
}

fn toml_error(file: &str, src: &str, e: &toml::de::Error) -> ScenarioError {
    let loc = Located::new(src);
    let offset = e.span().map_or(0, |s| s.start);
    let (l, c) = loc.line_col(offset);
    ScenarioError {
        location: format!("{file}:{l}:{c}"),
        message: toml_message(e, loc.path_at(offset).as_ref()),
    }
}

/// `file:line:col` of `path` in the scenario text: its value, or the
/// deepest part of it the file has (a missing key points at its table),
/// or the first line when none of it is in the file.
fn position(file: &str, loc: &Located<'_>, path: &KeyPath) -> String {
    let offset = loc.span_of(path).map_or(0, |(r, _)| r.start);
    let (l, c) = loc.line_col(offset);
    format!("{file}:{l}:{c}")
}

/// Reads and checks a scenario file, expanding any sweep.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        location: file.clone(),
        message: format!("cannot read the scenario file: {e}"),
    })?;
    parse(&src, &file, path.parent().unwrap_or(Path::new(".")), path)
}

/// Whether the error at `path` (in a sweep point's document) comes from
/// the sweep key `key`: `flow.x` stands for `flow[i].x` of every flow,
/// `flow.1.x` for the second's. A path above or below the key counts.
fn sweep_key_covers(key: &str, path: &KeyPath) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    let (mut i, mut j) = (0, 0);
    while i < parts.len() && j < path.0.len() {
        match &path.0[j] {
            Seg::Index(n) => {
                if parts[i].parse::<usize>() == Ok(*n) {
                    i += 1;
                }
                j += 1;
            }
            Seg::Key(k) => {
                if parts[i] != k {
                    return false;
                }
                i += 1;
                j += 1;
            }
        }
    }
    true
}

/// Parses scenario text. `base_dir` resolves relative paths (traces, output).
pub fn parse(
    src: &str,
    file: &str,
    base_dir: &Path,
    path: &Path,
) -> Result<Scenario, ScenarioError> {
    // Typed parse first: it reports syntax, unknown fields, wrong types and
    // bad units with line and column.
    let base: ScenarioFile = toml::from_str(src).map_err(|e| toml_error(file, src, &e))?;
    let loc = Located::new(src);
    let name = base.name.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(
            || "scenario".to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    });
    let output = base.output.as_ref().map(|o| base_dir.join(o));
    let mut runs = Vec::new();
    let sweep_at = |key: Option<&str>| {
        let mut p = KeyPath(vec![Seg::Key("sweep".into())]);
        if let Some(k) = key {
            p.0.push(Seg::Key(k.to_string()));
        }
        position(file, &loc, &p)
    };
    match &base.sweep {
        None => {
            let at = |field: &str, message: String| ScenarioError {
                location: position(file, &loc, &KeyPath::parse(field)),
                message: format!("`{field}`: {message}"),
            };
            let (config, workload) = build::build(&base, base_dir, &at)?;
            runs.push(Run {
                params: Vec::new(),
                text: src.to_string(),
                config,
                workload,
            })
        }
        Some(sweep) => {
            let doc: toml::Table = toml::from_str(src).map_err(|e| toml_error(file, src, &e))?;
            for point in sweep_points(sweep, &sweep_at)? {
                let mut d = doc.clone();
                d.remove("sweep");
                for (key, value, _) in &point {
                    set_path(&mut d, key, value.clone()).map_err(|m| ScenarioError {
                        location: sweep_at(Some(key)),
                        message: format!("[sweep] `{key}`: {m}"),
                    })?;
                }
                let label = point
                    .iter()
                    .map(|(k, v, _)| format!("{k}={}", show(v)))
                    .collect::<Vec<_>>()
                    .join(", ");
                // An error in the point names the sweep value that caused
                // it, or else the same key in the file.
                let locate = |p: &KeyPath| -> String {
                    for (key, _, j) in &point {
                        if sweep_key_covers(key, p) {
                            let mut sp =
                                KeyPath(vec![Seg::Key("sweep".into()), Seg::Key(key.clone())]);
                            sp.0.push(Seg::Index(*j));
                            return position(file, &loc, &sp);
                        }
                    }
                    position(file, &loc, p)
                };
                let text = toml::to_string(&d).map_err(|e| ScenarioError {
                    location: sweep_at(None),
                    message: format!("in sweep point {label}: {e}"),
                })?;
                let sf: ScenarioFile = toml::from_str(&text).map_err(|e| {
                    let ploc = Located::new(&text);
                    let p = ploc.path_at(e.span().map_or(0, |s| s.start));
                    ScenarioError {
                        location: p.as_ref().map_or_else(|| sweep_at(None), &locate),
                        message: format!(
                            "in sweep point {label}: {}",
                            toml_message(&e, p.as_ref())
                        ),
                    }
                })?;
                let at = |field: &str, message: String| ScenarioError {
                    location: locate(&KeyPath::parse(field)),
                    message: format!("in sweep point {label}: `{field}`: {message}"),
                };
                let (config, workload) = build::build(&sf, base_dir, &at)?;
                runs.push(Run {
                    params: point.iter().map(|(k, v, _)| (k.clone(), show(v))).collect(),
                    text,
                    config,
                    workload,
                });
            }
            crate::limits::check_total(&runs.iter().map(|r| &r.config).collect::<Vec<_>>())
                .map_err(|m| ScenarioError {
                    location: sweep_at(None),
                    message: format!("[sweep]: {m}"),
                })?;
        }
    }
    Ok(Scenario {
        name,
        description: base.description.clone(),
        output,
        runs,
    })
}

fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A sweep point: (key, value, index of the value in the key's array).
type Point = Vec<(String, toml::Value, usize)>;

/// The cartesian product of the sweep's arrays, keys in sorted order.
/// `at(key)` locates a sweep key (or the `[sweep]` table) for errors.
fn sweep_points(
    sweep: &toml::Table,
    at: &dyn Fn(Option<&str>) -> String,
) -> Result<Vec<Point>, ScenarioError> {
    let axes: BTreeMap<&String, &toml::Value> = sweep.iter().collect();
    let mut count: usize = 1;
    for (key, values) in &axes {
        let toml::Value::Array(values) = values else {
            return Err(ScenarioError {
                location: at(Some(key)),
                message: format!("[sweep] `{key}`: a sweep parameter must be an array of values, e.g. `\"link.forward.loss.bernoulli\" = [0.001, 0.01]`"),
            });
        };
        if values.is_empty() {
            return Err(ScenarioError {
                location: at(Some(key)),
                message: format!("[sweep] `{key}`: the array is empty; give at least one value"),
            });
        }
        // Counted before expanding, so a huge product is refused without
        // building it.
        count = count.saturating_mul(values.len());
    }
    if count > crate::limits::MAX_RUNS {
        return Err(ScenarioError {
            location: at(None),
            message: format!(
                "[sweep]: {count} runs; the limit is {}",
                crate::limits::MAX_RUNS
            ),
        });
    }
    let mut points: Vec<Point> = vec![Vec::new()];
    for (key, values) in axes {
        let toml::Value::Array(values) = values else {
            unreachable!("checked above");
        };
        let mut next = Vec::with_capacity(points.len() * values.len());
        for p in &points {
            for (j, v) in values.iter().enumerate() {
                let mut q = p.clone();
                q.push((key.clone(), v.clone(), j));
                next.push(q);
            }
        }
        points = next;
    }
    Ok(points)
}

/// Sets a dotted path in a TOML document. `flow.x` sets `x` in every
/// `[[flow]]`; `flow.N.x` only in the N-th (from 0). Missing tables are
/// created, so a sweep can switch on a feature the base file leaves out.
fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err("empty path segment; use dotted keys like `link.forward.rate`".into());
    }
    set_in(doc, &parts, value)
}

fn set_in(table: &mut toml::Table, parts: &[&str], value: toml::Value) -> Result<(), String> {
    let (head, rest) = (parts[0], &parts[1..]);
    if rest.is_empty() {
        table.insert(head.to_string(), value);
        return Ok(());
    }
    let entry = table
        .entry(head.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match entry {
        toml::Value::Table(t) => set_in(t, rest, value),
        toml::Value::Array(items) => {
            // `arrivals.web.rate` / `cross.bg.rate`: the entry named `web`
            // (only these tables: a flow may be named like a `[flow]` key).
            if matches!(head, "arrivals" | "cross") && rest.len() > 1 {
                let named =
                    |t: &toml::Value| t.get("name").and_then(toml::Value::as_str) == Some(rest[0]);
                if let Some(toml::Value::Table(t)) = items.iter_mut().find(|t| named(t)) {
                    return set_in(t, &rest[1..], value);
                }
            }
            if let Ok(i) = rest[0].parse::<usize>() {
                let n = items.len();
                let item = items.get_mut(i).ok_or(format!(
                    "`{head}` has {n} entries; index {i} is out of range"
                ))?;
                match item {
                    toml::Value::Table(t) if rest.len() > 1 => set_in(t, &rest[1..], value),
                    _ => Err(format!("`{head}.{i}` is not a table with fields")),
                }
            } else {
                for item in items.iter_mut() {
                    match item {
                        toml::Value::Table(t) => set_in(t, rest, value.clone())?,
                        _ => return Err(format!("`{head}` is not an array of tables")),
                    }
                }
                Ok(())
            }
        }
        _ => Err(format!("`{head}` is a value, not a table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(flow_extra: &str) -> Result<Scenario, ScenarioError> {
        let src = format!(
            "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n{flow_extra}\n"
        );
        parse(&src, "t.toml", Path::new("."), Path::new("t.toml"))
    }

    #[test]
    fn header_bytes_reaches_the_flow_and_defaults_to_zero() {
        let s = parse_text("header_bytes = 52").unwrap();
        assert_eq!(s.runs[0].config.flows[0].header_bytes, 52);
        let s = parse_text("").unwrap();
        assert_eq!(s.runs[0].config.flows[0].header_bytes, 0);
    }

    #[test]
    fn bad_header_bytes_are_clear_errors() {
        let e = parse_text("header_bytes = 5000").unwrap_err().to_string();
        assert!(
            e.contains("flow[0].header_bytes") && e.contains("allowed 0 to 1000"),
            "{e}"
        );
        let e = parse_text("header_bytes = -1").unwrap_err().to_string();
        assert!(e.contains("t.toml:6") && e.contains("header_bytes"), "{e}");
        let e = parse_text("header_bytes = \"52B\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("header_bytes"), "{e}");
    }

    #[test]
    fn the_quic_2018_stack_sets_bbr_statistics_loss_detection_acks_and_timeout() {
        let s = parse_text("stack = \"quic-2018\"").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.cc.bbr, congestion::BbrConfig::quic_2018());
        assert_eq!(f.cc.jitter.stats, congestion::JitterStats::Quic2018);
        assert_eq!(f.loss_detection, netsim::LossDetection::Quic2018);
        assert!(matches!(
            f.timeout,
            netsim::Timeout::Pto {
                max_ack_delay_ns: 25_000_000
            }
        ));
        assert!(matches!(
            f.ack,
            netsim::AckPolicy::Delayed { max_packets: 2, .. }
        ));
        // The default stays Linux's.
        let s = parse_text("").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.cc.bbr, congestion::BbrConfig::default());
        assert_eq!(f.loss_detection, netsim::LossDetection::Linux);
        assert_eq!(f.timeout, netsim::Timeout::Rto);
        // Single switches override the flavour.
        let s = parse_text(
            "[flow.bbr]\nflavour = \"quic-2018\"\nquantization_budget = true\nmin_cwnd = \"6000B\"\nmin_rtt_samples = \"latest\"",
        )
        .unwrap();
        let b = s.runs[0].config.flows[0].cc.bbr;
        assert!(b.quantization_budget);
        assert_eq!(b.min_cwnd_bytes, Some(6000));
        assert_eq!(b.min_rtt_samples, congestion::MinRttSamples::Latest);
        assert_eq!(b.ack_aggregation, congestion::AckAggregation::Quic2018);
        let e = parse_text("stack = \"quic\"").unwrap_err().to_string();
        assert!(e.contains("linux") && e.contains("quic-2018"), "{e}");
    }

    #[test]
    fn jitter_stats_and_linux_acks_are_read() {
        let s = parse_text("ack = \"linux\"\n[flow.jitter]\nstats = \"quic-2018\"").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.cc.jitter.stats, congestion::JitterStats::Quic2018);
        assert_eq!(f.ack, netsim::AckPolicy::LINUX);
        let s = parse_text("").unwrap();
        assert_eq!(
            s.runs[0].config.flows[0].cc.jitter.stats,
            congestion::JitterStats::SrttFirst
        );
        let e = parse_text("[flow.jitter]\nstats = \"quic\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("srtt-first") && e.contains("quic-2018"), "{e}");
    }

    #[test]
    fn jitter_cadence_and_decimated_acks_are_read_and_bad_cadences_refused() {
        use congestion::JitterCadence as C;
        let cadence = |c: &str| {
            parse_text(&format!("[flow.jitter]\ncadence = \"{c}\""))
                .map(|s| s.runs[0].config.flows[0].cc.jitter.cadence)
                .map_err(|e| e.to_string())
        };
        assert_eq!(cadence("every-sample").unwrap(), C::EverySample);
        assert_eq!(cadence("per-round").unwrap(), C::PerRound);
        assert_eq!(cadence("per-ack-frame").unwrap(), C::PerAckFrame);
        assert_eq!(
            cadence("every-10-samples").unwrap(),
            C::EveryNSamples(core::num::NonZeroU32::new(10).unwrap())
        );
        // Unset: today's every-sample.
        let s = parse_text("").unwrap();
        assert_eq!(s.runs[0].config.flows[0].cc.jitter.cadence, C::EverySample);
        for bad in [
            "every-0-samples",
            "every-x-samples",
            "per-rtt",
            "every--1-samples",
        ] {
            let e = cadence(bad).unwrap_err();
            assert!(
                e.contains("t.toml:") && e.contains("every-N-samples") && e.contains("per-round"),
                "{bad}: {e}"
            );
        }
        // The QUIC stack's ACKs are every second packet unless decimated.
        let s = parse_text("stack = \"quic-2018\"\nack = \"decimated\"").unwrap();
        assert_eq!(
            s.runs[0].config.flows[0].ack,
            netsim::AckPolicy::CHROMIUM_ACK_DECIMATION
        );
        let s = parse_text("ack = \"quic-2018\"").unwrap();
        assert_eq!(
            s.runs[0].config.flows[0].ack,
            netsim::AckPolicy::Delayed {
                max_packets: 2,
                max_delay_ns: 25_000_000
            }
        );
        let e = parse_text("ack = \"decimate\"").unwrap_err().to_string();
        assert!(e.contains("decimated") && e.contains("linux"), "{e}");
    }

    fn parse_alg(algorithm: &str, flow_extra: &str) -> Result<Scenario, ScenarioError> {
        let src = format!(
            "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"{algorithm}\"\n{flow_extra}\n"
        );
        parse(&src, "t.toml", Path::new("."), Path::new("t.toml"))
    }

    #[test]
    fn stack_controller_names_become_custom_controllers_in_flows_and_sweeps() {
        for name in ["s2n:bbr2", "s2n:cubic", "quinn:bbr", "quinn:cubic"] {
            let sc = parse_alg(name, "").unwrap();
            let f = &sc.runs[0].config.flows[0];
            assert_eq!(f.name, name);
            let c = f
                .custom_cc
                .as_ref()
                .expect("a stack controller runs as custom");
            assert_eq!(c.name, name);
            // By name only: the runner builds the stack's controller.
            assert!(!c.is_built());
            assert!(c.build(&f.cc, congestion::Instant::ZERO).is_none());
        }
        // Built-in names keep the built-in path.
        let sc = parse_alg("bbr", "").unwrap();
        assert!(sc.runs[0].config.flows[0].custom_cc.is_none());
        // A sweep over both kinds.
        let sc = parse_alg(
            "bbr",
            "[sweep]\n\"flow.algorithm\" = [\"bbr\", \"s2n:bbr2\", \"quinn:cubic\"]",
        )
        .unwrap();
        let names: Vec<_> = sc
            .runs
            .iter()
            .map(|r| {
                let f = &r.config.flows[0];
                f.custom_cc
                    .as_ref()
                    .map_or(f.cc.algorithm.name(), |c| c.name.as_str())
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["bbr", "s2n:bbr2", "quinn:cubic"]);
    }

    #[test]
    fn a_bad_algorithm_name_is_located_and_lists_every_allowed_name() {
        for bad in ["s2n:bbr3", "quinn", "vegas"] {
            let e = parse_alg(bad, "").unwrap_err();
            assert!(e.location.starts_with("t.toml:5:"), "{bad}: {e}");
            let m = e.to_string();
            assert!(m.contains(&format!("`{bad}`")), "{m}");
            for ok in [
                "bbr",
                "bbr-jitter",
                "bbr3",
                "cubic",
                "reno",
                "s2n:bbr2",
                "s2n:cubic",
                "quinn:bbr",
                "quinn:cubic",
            ] {
                assert!(m.contains(ok), "{m} lacks {ok}");
            }
        }
    }

    #[test]
    fn bbrlab_tuning_tables_are_refused_for_a_stack_controller() {
        let e = parse_alg("s2n:cubic", "[flow.cubic]\nhystart = false").unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("flow[0].cubic") || e.location.contains("t.toml"),
            "{e}"
        );
        assert!(m.contains("s2n:cubic") && m.contains("[flow.cubic]"), "{m}");
    }

    #[test]
    fn ecn_is_off_by_default_and_true_means_ect0() {
        let ecn = |extra: &str| parse_text(extra).unwrap().runs[0].config.flows[0].ecn;
        assert_eq!(ecn(""), netsim::Ecn::NotEct);
        assert_eq!(ecn("ecn = false"), netsim::Ecn::NotEct);
        assert_eq!(ecn("ecn = true"), netsim::Ecn::Ect0);
        assert_eq!(ecn("ecn = \"ect0\""), netsim::Ecn::Ect0);
        assert_eq!(ecn("ecn = \"ECT1\""), netsim::Ecn::Ect1);
        // Under ack = "linux" the feedback is TCP's ECE, else QUIC's counts.
        let s = parse_text("ecn = true\nack = \"linux\"").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.sender_config().ecn_feedback, netsim::EcnFeedback::Ece);
        let s = parse_text("ecn = true").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.sender_config().ecn_feedback, netsim::EcnFeedback::Counts);
    }

    #[test]
    fn bad_ecn_values_are_located_and_list_what_is_allowed() {
        for bad in ["ecn = \"ce\"", "ecn = 1", "ecn = \"yes\""] {
            let e = parse_text(bad).unwrap_err();
            assert!(e.location.starts_with("t.toml:6:"), "{bad}: {e}");
            let m = e.to_string();
            assert!(
                m.contains("true") && m.contains("\"ect0\"") && m.contains("\"ect1\""),
                "{bad}: {m}"
            );
        }
    }

    #[test]
    fn bbr3_takes_a_profile_and_refuses_unknown_ones() {
        let s = parse_alg("bbr3", "").unwrap();
        let cc = s.runs[0].config.flows[0].cc;
        assert_eq!(cc.algorithm, Algorithm::Bbr3);
        assert_eq!(cc.bbr3.profile, congestion::Bbr3Profile::Draft);
        let s = parse_alg("bbr3", "ecn = true\n[flow.bbr3]\nprofile = \"linux-v3\"").unwrap();
        let f = &s.runs[0].config.flows[0];
        assert_eq!(f.cc.bbr3, congestion::Bbr3Config::linux_v3());
        assert_eq!(f.ecn, netsim::Ecn::Ect0);
        let e = parse_alg("bbr3", "[flow.bbr3]\nprofile = \"v2\"").unwrap_err();
        assert!(e.location.starts_with("t.toml:7:"), "{e}");
        let m = e.to_string();
        assert!(m.contains("`v2`") && m.contains("draft, linux-v3"), "{m}");
        let e = parse_alg("bbr3", "[flow.bbr3]\nflavour = \"draft\"").unwrap_err();
        assert!(e.to_string().contains("flavour"), "{e}");
    }

    #[test]
    fn cubic_avoidance_key_picks_linuxs_rules_or_rejects_with_the_list() {
        use congestion::CubicAvoidance::{Linux, Rfc9438};
        let s = parse_alg("cubic", "").unwrap();
        assert_eq!(s.runs[0].config.flows[0].cc.cubic.avoidance, Rfc9438);
        let s = parse_alg("cubic", "[flow.cubic]\navoidance = \"linux\"").unwrap();
        assert_eq!(s.runs[0].config.flows[0].cc.cubic.avoidance, Linux);
        let e = parse_alg("cubic", "[flow.cubic]\navoidance = \"kernel\"").unwrap_err();
        assert!(e.location.starts_with("t.toml:7:"), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("`kernel`") && m.contains("rfc9438, linux"),
            "{m}"
        );
    }

    #[test]
    fn cubic_hystart_variant_key_picks_linuxs_hystart_or_rejects_with_the_list() {
        use congestion::HyStartVariant::{Linux, Rfc9406};
        let s = parse_alg("cubic", "").unwrap();
        assert_eq!(s.runs[0].config.flows[0].cc.cubic.hystart_variant, Rfc9406);
        let s = parse_alg("cubic", "[flow.cubic]\nhystart_variant = \"linux\"").unwrap();
        let cubic = s.runs[0].config.flows[0].cc.cubic;
        assert_eq!(cubic.hystart_variant, Linux);
        assert!(cubic.hystart);
        let e = parse_alg("cubic", "[flow.cubic]\nhystart_variant = \"kernel\"").unwrap_err();
        assert!(e.location.starts_with("t.toml:7:"), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("`kernel`") && m.contains("rfc9406, linux"),
            "{m}"
        );
    }

    #[test]
    fn bbr3_signals_key_sets_the_mode_with_either_profile_and_sweeps() {
        use congestion::Bbr3Signals::{Exact, StockKernel};
        let s = parse_alg("bbr3", "").unwrap();
        assert_eq!(s.runs[0].config.flows[0].cc.bbr3.signals, Exact);
        // Written before or after the profile, the profile keeps it.
        let s = parse_alg(
            "bbr3",
            "[flow.bbr3]\nsignals = \"stock-kernel\"\nprofile = \"linux-v3\"",
        )
        .unwrap();
        let cc = s.runs[0].config.flows[0].cc;
        assert_eq!(cc.bbr3.signals, StockKernel);
        assert_eq!(cc.bbr3.profile, congestion::Bbr3Profile::LinuxV3);
        let mut want = congestion::Bbr3Config::linux_v3();
        want.signals = StockKernel;
        assert_eq!(cc.bbr3, want);
        let s = parse_alg("bbr3", "[flow.bbr3]\nsignals = \"exact\"").unwrap();
        assert_eq!(
            s.runs[0].config.flows[0].cc.bbr3,
            congestion::Bbr3Config::draft()
        );
        // Unknown values: located, and the allowed ones listed.
        let e = parse_alg("bbr3", "[flow.bbr3]\nsignals = \"stock\"").unwrap_err();
        assert!(e.location.starts_with("t.toml:7:"), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("`stock`") && m.contains("exact, stock-kernel"),
            "{m}"
        );
        // A sweep over the dotted path: one run per value, profile kept.
        let s = parse_alg(
            "bbr3",
            "[flow.bbr3]\nprofile = \"linux-v3\"\n[sweep]\n\"flow.bbr3.signals\" = [\"exact\", \"stock-kernel\"]",
        )
        .unwrap();
        let got: Vec<_> = s
            .runs
            .iter()
            .map(|r| {
                let b = r.config.flows[0].cc.bbr3;
                (b.profile, b.signals)
            })
            .collect();
        use congestion::Bbr3Profile::LinuxV3;
        assert_eq!(got, [(LinuxV3, Exact), (LinuxV3, StockKernel)]);
    }

    #[test]
    fn a_bbr3_table_for_another_algorithm_is_an_error() {
        for alg in ["bbr", "cubic", "reno", "bbr-jitter"] {
            let e = parse_alg(alg, "[flow.bbr3]\nprofile = \"draft\"").unwrap_err();
            let m = e.to_string();
            assert!(m.contains("flow[0].bbr3"), "{alg}: {m}");
            assert!(
                m.contains("algorithm = \"bbr3\"") && m.contains(&format!("`{alg}`")),
                "{alg}: {m}"
            );
            assert!(e.location.starts_with("t.toml:6"), "{alg}: {e}");
        }
        // A sweep over profiles and over ecn: one run per point.
        let s = parse_alg(
            "bbr3",
            "[sweep]\n\"flow.bbr3.profile\" = [\"draft\", \"linux-v3\"]\n\"flow.ecn\" = [false, true]",
        )
        .unwrap();
        let got: Vec<_> = s
            .runs
            .iter()
            .map(|r| {
                let f = &r.config.flows[0];
                (f.cc.bbr3.profile, f.ecn)
            })
            .collect();
        use congestion::Bbr3Profile::{Draft, LinuxV3};
        use netsim::Ecn::{Ect0, NotEct};
        assert_eq!(
            got,
            [
                (Draft, NotEct),
                (Draft, Ect0),
                (LinuxV3, NotEct),
                (LinuxV3, Ect0)
            ]
        );
        // Swept into another algorithm, the point that does is refused.
        let e = parse_alg(
            "bbr3",
            "[flow.bbr3]\nprofile = \"draft\"\n[sweep]\n\"flow.algorithm\" = [\"bbr3\", \"cubic\"]",
        )
        .unwrap_err();
        assert!(e.to_string().contains("flow.algorithm=cubic"), "{e}");
    }
}
