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
use netsim::{AckPolicy, App, FlowConfig, SimConfig};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::locate::{KeyPath, Located, Seg};

pub use file::*;
pub use names::*;
use sweep::*;
pub use values::*;

mod build;
pub mod builder;
pub mod edit;
mod file;
pub mod limits;
pub mod locate;
mod names;
mod packet_fit;
pub mod path;
mod sweep;
mod values;
pub mod workload;

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
    if message.contains("number too large to fit") {
        // The TOML reader refuses it before any field sees it, so the
        // message would not say what is allowed.
        message.push_str(" (TOML's integers are 64-bit signed: at most 9223372036854775807)");
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

/// [`toml_error`] for a scenario file, naming the key of a wrongly typed
/// value in an `[[arrivals]]` table, which the parser cannot
/// ([`workload::blame_key`]).
fn scenario_toml_error(file: &str, src: &str, e: &toml::de::Error) -> ScenarioError {
    let loc = Located::new(src);
    let at = loc.path_at(e.span().map_or(0, |s| s.start));
    if let Some(KeyPath(p)) = &at {
        if let [Seg::Key(k), Seg::Index(i)] = p.as_slice() {
            let table =
                toml::from_str::<toml::Table>(src)
                    .ok()
                    .and_then(|mut d| match d.remove(k)? {
                        toml::Value::Array(mut a) if k == "arrivals" && *i < a.len() => {
                            a.swap_remove(*i).try_into::<toml::Table>().ok()
                        }
                        _ => None,
                    });
            if let Some((key, inner)) = table.as_ref().and_then(workload::blame_key) {
                let path = KeyPath(vec![Seg::Key(k.clone()), Seg::Index(*i), Seg::Key(key)]);
                return ScenarioError {
                    location: position(file, &loc, &path),
                    message: toml_message(&inner, Some(&path)),
                };
            }
        }
    }
    toml_error(file, src, e)
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
    let base: ScenarioFile = toml::from_str(src).map_err(|e| scenario_toml_error(file, src, &e))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(flow_extra: &str) -> Result<Scenario, ScenarioError> {
        let src = format!(
            "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n{flow_extra}\n"
        );
        parse(&src, "t.toml", Path::new("."), Path::new("t.toml"))
    }

    /// An interval as long as the run would leave one sample, at 0 s, and
    /// an empty time series; "0s" (none) and anything shorter pass.
    #[test]
    fn a_sample_interval_not_shorter_than_the_run_is_refused() {
        let with = |si: &str| {
            let src = format!(
                "duration = \"1s\"\nsample_interval = \"{si}\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n"
            );
            parse(&src, "t.toml", Path::new("."), Path::new("t.toml"))
        };
        for si in ["1s", "5s"] {
            let e = with(si).unwrap_err().to_string();
            assert!(
                e.contains("t.toml:2") && e.contains("not shorter than the run"),
                "{si}: {e}"
            );
        }
        for si in ["0s", "999ms"] {
            assert!(with(si).is_ok(), "{si}");
        }
    }

    /// A sweep of `cross.NAME.…` where two sources share the name is
    /// refused (it set the first alone).
    #[test]
    fn a_sweep_of_a_name_two_entries_share_is_refused() {
        let src = "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr\"\n[[cross]]\nname = \"x\"\nkind = \"cbr\"\nrate = \"1mbit\"\n[[cross]]\nname = \"x\"\nkind = \"cbr\"\nrate = \"1mbit\"\n[sweep]\n\"cross.x.rate\" = [\"3mbit\"]\n";
        let e = parse(src, "t.toml", Path::new("."), Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("two `[[cross]]` entries are named `x`"), "{e}");
    }

    /// A misspelt `[conformance]` key was passed over by every loader
    /// but the suite's; it is refused at its line, with the keys allowed.
    #[test]
    fn an_unknown_conformance_key_is_refused_where_the_file_is_loaded() {
        let ok = "[conformance]\nid = \"A01\"\nrtts = 40\n[[conformance.checks]]\ncheck = \"state_left\"\nstate = \"startup\"\nwithin = \"20rtt\"\nwhy = \"w\"";
        assert!(parse_text(ok).is_ok());
        let e = parse_text("[conformance]\nid = \"A01\"\nrrts = 40")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.toml:8") && e.contains("unknown field `rrts`") && e.contains("`rtts`"),
            "{e}"
        );
        let e =
            parse_text("[conformance]\n[[conformance.checks]]\ncheck = \"x\"\nwihtin = \"2rtt\"")
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("unknown field `wihtin`") && e.contains("`within`"),
            "{e}"
        );
    }

    /// A sweep key must name a part of a run.
    #[test]
    fn a_sweep_of_what_is_not_a_run_is_refused() {
        for key in ["sweep.x", "name", "conformance.foo"] {
            let e = parse_text(&format!("[sweep]\n\"{key}\" = [1, 2]"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("is not part of a run"), "{key}: {e}");
        }
        let s = parse_text("[sweep]\n\"seed\" = [1, 2]").unwrap();
        assert_eq!(s.runs.len(), 2);
    }

    /// A listed flow, or the last of its copies, that would start at or
    /// after the end of the 1 s run is refused at its line.
    #[test]
    fn a_flow_that_would_never_start_is_refused() {
        let e = parse_text("start = \"2s\"").unwrap_err().to_string();
        assert!(e.contains("t.toml:6") && e.contains("never send"), "{e}");
        let e = parse_text("count = 3\nstagger = \"500ms\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("stagger") && e.contains("1 s"), "{e}");
        assert!(parse_text("count = 3\nstagger = \"400ms\"").is_ok());
        assert!(parse_text("start = \"999ms\"").is_ok());
    }

    #[test]
    fn header_bytes_reaches_the_flow_and_defaults_to_zero() {
        let s = parse_text("header_bytes = 52").unwrap();
        assert_eq!(s.runs[0].config.flows[0].header_bytes, 52);
        let s = parse_text("").unwrap();
        assert_eq!(s.runs[0].config.flows[0].header_bytes, 0);
    }

    #[test]
    fn handshake_reaches_the_flow_and_a_bad_one_is_named() {
        let hs = |extra| parse_text(extra).unwrap().runs[0].config.flows[0].handshake;
        assert_eq!(hs("handshake = \"tcp\""), netsim::Handshake::Tcp);
        assert_eq!(hs("handshake = \"none\""), netsim::Handshake::None);
        assert_eq!(hs(""), netsim::Handshake::None);
        let e = parse_text("handshake = \"quic\"").unwrap_err().to_string();
        assert!(
            e.contains("t.toml:6") && e.contains("`none`") && e.contains("`tcp`"),
            "{e}"
        );
    }

    #[test]
    fn initial_burst_reaches_the_flow_and_a_bad_one_is_named() {
        let ib = |extra| parse_text(extra).unwrap().runs[0].config.flows[0].initial_burst_packets;
        assert_eq!(ib("initial_burst = 10"), 10);
        assert_eq!(ib(""), 0);
        for bad in ["initial_burst = -1", "initial_burst = 100001"] {
            let e = parse_text(bad).unwrap_err().to_string();
            assert!(
                e.contains("flow[0].initial_burst") && e.contains("allowed 0 to 100000"),
                "{bad}: {e}"
            );
        }
        let e = parse_text("initial_burst = \"ten\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("initial_burst"), "{e}");
    }

    #[test]
    fn mss_change_reaches_the_flow_and_a_bad_one_is_named() {
        let mc = |extra| parse_text(extra).unwrap().runs[0].config.flows[0].mss_change;
        assert_eq!(
            mc("mss_change = { at = \"500ms\", mss = 1200 }"),
            Some(netsim::MssChange {
                at_ns: 500_000_000,
                mss: 1200
            })
        );
        assert_eq!(mc(""), None);
        for (bad, want) in [
            (
                "mss_change = { at = \"1s\", mss = 100 }",
                "flow[0].mss_change.mss",
            ),
            (
                "mss_change = { at = \"2d\", mss = 1200 }",
                "flow[0].mss_change.at",
            ),
            ("mss_change = { at = \"1s\" }", "mss"),
            ("mss_change = { at = \"1s\", mss = 1200, size = 3 }", "size"),
        ] {
            let e = parse_text(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        // A byte-limited queue must hold the larger segment.
        let src = "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\nqueue = { limit = \"1600B\" }\n[[flow]]\nalgorithm = \"bbr\"\nmss_change = { at = \"500ms\", mss = 9000 }\n";
        let e = parse(src, "t.toml", Path::new("."), Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("9000 B on the wire"), "{e}");
    }

    /// A change at or after the run's end never happens; it was accepted
    /// silently before.
    #[test]
    fn an_mss_change_at_or_after_the_end_is_refused() {
        for at in ["1s", "3s"] {
            let e = parse_text(&format!("mss_change = {{ at = \"{at}\", mss = 1200 }}"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("flow[0].mss_change.at")
                    && e.contains("not before the run's end (1 s)")
                    && e.contains("up to (not including) 1 s"),
                "{at}: {e}"
            );
        }
        assert!(parse_text("mss_change = { at = \"999ms\", mss = 1200 }").is_ok());
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
    fn a_tcp_like_flow_gets_linuxs_receiver_unless_it_names_another() {
        let ack =
            |alg: &str, extra: &str| parse_alg(alg, extra).unwrap().runs[0].config.flows[0].ack;
        for alg in ["bbr", "bbr3", "cubic", "reno", "bbr-jitter"] {
            assert_eq!(ack(alg, ""), netsim::AckPolicy::LINUX, "{alg}");
            assert_eq!(ack(alg, "ack = \"every\""), netsim::AckPolicy::EveryPacket);
        }
        // QUIC 2018's stack keeps its own receiver, a QUIC stack's own
        // controller an ACK per packet.
        assert!(matches!(
            ack("bbr", "stack = \"quic-2018\""),
            netsim::AckPolicy::Delayed { max_packets: 2, .. }
        ));
        assert_eq!(ack("quinn:bbr", ""), netsim::AckPolicy::EveryPacket);
        assert_eq!(
            ack("quinn:bbr", "ack = \"linux\""),
            netsim::AckPolicy::LINUX
        );
    }

    /// Linux's pacer is the default on the Linux stack: BBR's family in
    /// TSO-sized bursts, CUBIC and Reno unpaced. QUIC's stack and a
    /// stack's own controller pace one packet at a time, and a named
    /// `pacing` wins everywhere.
    #[test]
    fn a_tcp_like_flow_gets_linuxs_pacer_unless_it_names_another() {
        let pacing =
            |alg: &str, extra: &str| parse_alg(alg, extra).unwrap().runs[0].config.flows[0].pacing;
        for (alg, want) in [
            ("bbr", netsim::Pacing::Quantum),
            ("bbr-jitter", netsim::Pacing::Quantum),
            ("bbr3", netsim::Pacing::Quantum),
            ("cubic", netsim::Pacing::Off),
            ("reno", netsim::Pacing::Off),
        ] {
            assert_eq!(pacing(alg, ""), want, "{alg}");
            for (name, named) in [
                ("exact", netsim::Pacing::Exact),
                ("quantum", netsim::Pacing::Quantum),
                ("off", netsim::Pacing::Off),
            ] {
                assert_eq!(pacing(alg, &format!("pacing = \"{name}\"")), named);
            }
            assert_eq!(
                pacing(alg, "stack = \"quic-2018\""),
                netsim::Pacing::Exact,
                "{alg}"
            );
        }
        assert_eq!(pacing("quinn:bbr", ""), netsim::Pacing::Exact);
        assert_eq!(
            pacing("quinn:bbr", "pacing = \"quantum\""),
            netsim::Pacing::Quantum
        );
        // TSO deferral needs TSO packets: refused one packet at a time,
        // accepted by default now that BBR's default pacer sends them.
        assert!(parse_alg("bbr", "tso_defer = true").is_ok());
        let e = parse_alg("bbr", "pacing = \"exact\"\ntso_defer = true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs TSO packets"), "{e}");
    }

    #[test]
    fn rcv_buffer_raises_linuxs_window_and_is_refused_where_it_means_nothing() {
        // Linux's window bounds under `rcv_buffer = size`.
        let window = |size: &str| {
            let s = parse_text(&format!("rcv_buffer = \"{size}\"")).unwrap();
            match s.runs[0].config.flows[0].ack {
                netsim::AckPolicy::Linux {
                    rcv_window_init,
                    rcv_window_max,
                    ..
                } => (rcv_window_init, rcv_window_max),
                other => panic!("not Linux's receiver: {other:?}"),
            }
        };
        assert_eq!(window("512MiB"), (81_920, 335_544_320));
        // The default's 32 MiB gives the default's window.
        let s = parse_text("rcv_buffer = \"32MiB\"").unwrap();
        assert_eq!(s.runs[0].config.flows[0].ack, netsim::AckPolicy::LINUX);
        // A buffer smaller than the first clamp caps it too.
        assert_eq!(window("64KiB"), (40_960, 40_960));
        for (extra, want) in [
            ("rcv_buffer = \"1KiB\"", "allowed 65536 to 2147483647"),
            ("rcv_buffer = \"4GiB\"", "allowed 65536 to 2147483647"),
            ("ack = \"every\"\nrcv_buffer = \"64MiB\"", "not Linux's"),
            (
                "stack = \"quic-2018\"\nrcv_buffer = \"64MiB\"",
                "not Linux's",
            ),
        ] {
            let e = parse_text(extra).unwrap_err().to_string();
            assert!(e.contains("rcv_buffer") && e.contains(want), "{extra}: {e}");
        }
    }

    #[test]
    fn rcv_autotuning_picks_the_kernels_rule_and_is_refused_where_it_means_nothing() {
        let rule = |extra: &str| match parse_text(extra).unwrap().runs[0].config.flows[0].ack {
            netsim::AckPolicy::Linux { autotuning, .. } => autotuning,
            other => panic!("not Linux's receiver: {other:?}"),
        };
        assert_eq!(rule(""), netsim::sender::RcvAutotuning::Cushioned);
        assert_eq!(
            rule("rcv_autotuning = \"pre-6.16\""),
            netsim::sender::RcvAutotuning::Cushioned
        );
        assert_eq!(
            rule("rcv_autotuning = \"6.16\"\nrcv_buffer = \"64MiB\""),
            netsim::sender::RcvAutotuning::Linux6_16
        );
        for (extra, want) in [
            ("rcv_autotuning = \"6.18\"", "pre-6.16"),
            ("rcv_autotuning = 6", "rcv_autotuning"),
            ("ack = \"every\"\nrcv_autotuning = \"6.16\"", "not Linux's"),
        ] {
            let e = parse_text(extra).unwrap_err().to_string();
            assert!(
                e.contains("rcv_autotuning") && e.contains(want),
                "{extra}: {e}"
            );
        }
    }

    #[test]
    fn tso_defer_reaches_the_flow_and_is_refused_where_no_tso_packet_exists() {
        let defer = |extra: &str| parse_text(extra).unwrap().runs[0].config.flows[0].tso_defer;
        assert!(!defer(""));
        assert!(!defer("pacing = \"quantum\""));
        assert!(defer("pacing = \"quantum\"\ntso_defer = true"));
        assert!(defer("pacing = \"off\"\ntso_defer = true"));
        assert!(!defer("tso_defer = false"));
        let sender = parse_text("pacing = \"off\"\ntso_defer = true")
            .unwrap()
            .runs[0]
            .config
            .flows[0]
            .sender_config();
        assert!(sender.tso_defer);
        // parse_text's flow is `bbr`, whose default pacer (Linux's TSO
        // bursts) has packets to defer.
        assert!(parse_text("tso_defer = true").unwrap().runs[0].config.flows[0].tso_defer);
        for (extra, want) in [
            ("pacing = \"exact\"\ntso_defer = true", "\"exact\""),
            ("pacing = \"exact\"\ntso_defer = true", "\"quantum\""),
            (
                "pacing = \"quantum\"\nstack = \"quic-2018\"\ntso_defer = true",
                "QUIC",
            ),
            ("pacing = \"quantum\"\ntso_defer = \"yes\"", "tso_defer"),
        ] {
            let e = parse_text(extra).unwrap_err().to_string();
            assert!(e.contains("tso_defer") && e.contains(want), "{extra}: {e}");
        }
    }

    #[test]
    fn timestamps_reach_the_flow_and_are_refused_on_quic() {
        let on = |extra: &str| parse_text(extra).unwrap().runs[0].config.flows[0].timestamps;
        assert!(!on(""));
        assert!(on("timestamps = true"));
        assert!(!on("timestamps = false"));
        let sender = parse_text("timestamps = true").unwrap().runs[0]
            .config
            .flows[0]
            .sender_config();
        assert!(sender.timestamps);
        for (extra, want) in [
            ("stack = \"quic-2018\"\ntimestamps = true", "QUIC"),
            ("timestamps = \"yes\"", "timestamps"),
        ] {
            let e = parse_text(extra).unwrap_err().to_string();
            assert!(e.contains("timestamps") && e.contains(want), "{extra}: {e}");
        }
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

    /// The file's jitter constants are held to `congestion::Config::check`'s
    /// ranges, and a refusal names the key's line and the crate's range.
    #[test]
    fn jitter_constants_outside_the_crates_ranges_are_refused_where_written() {
        for (extra, key, allowed) in [
            ("alpha = 0.0", "jitter.alpha", "above 0 and at most 1"),
            ("beta = 1.5", "jitter.beta", "above 0 and at most 1"),
            ("gamma = -2.0", "jitter.gamma", "a finite number above 0"),
            ("gamma = nan", "jitter.gamma", "a finite number above 0"),
        ] {
            let e = parse_text(&format!("[flow.jitter]\n{extra}"))
                .unwrap_err()
                .to_string();
            // The key is on line 7: five lines of header, then the table.
            assert!(
                e.contains("t.toml:7:") && e.contains(key) && e.contains(allowed),
                "{extra}: {e}"
            );
        }
        // The ends of the ranges that are defined pass.
        let s = parse_text("[flow.jitter]\nalpha = 1.0\nbeta = 1.0\ngamma = 1e-9").unwrap();
        let j = &s.runs[0].config.flows[0].cc.jitter;
        assert_eq!((j.alpha, j.beta, j.gamma), (1.0, 1.0, 1e-9));
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
        // Under Linux's receiver (a TCP-like flow's default) the feedback
        // is TCP's ECE, else QUIC's counts.
        let feedback = |extra: &str| {
            parse_text(extra).unwrap().runs[0].config.flows[0]
                .sender_config()
                .ecn_feedback
        };
        assert_eq!(
            feedback("ecn = true\nack = \"linux\""),
            netsim::EcnFeedback::Ece
        );
        assert_eq!(feedback("ecn = true"), netsim::EcnFeedback::Ece);
        assert_eq!(
            feedback("ecn = true\nack = \"every\""),
            netsim::EcnFeedback::Counts
        );
        assert_eq!(
            feedback("ecn = true\nstack = \"quic-2018\""),
            netsim::EcnFeedback::Counts
        );
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
        assert_eq!(cc.bbr3.profile(), congestion::Bbr3Profile::Draft);
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
        assert_eq!(cc.bbr3.profile(), congestion::Bbr3Profile::LinuxV3);
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
                (b.profile(), b.signals)
            })
            .collect();
        use congestion::Bbr3Profile::LinuxV3;
        assert_eq!(got, [(LinuxV3, Exact), (LinuxV3, StockKernel)]);
    }

    #[test]
    fn app_rate_from_makes_a_bulk_flow_turn_app_limited_and_needs_a_rate() {
        let sc = parse_alg("bbr3", "app_rate = \"5mbit\"\napp_rate_from = \"2s\"").unwrap();
        assert!(matches!(
            sc.runs[0].config.flows[0].app,
            App::BulkThenRate { after_ns: 2_000_000_000, bytes_per_sec } if bytes_per_sec == 625_000.0
        ));
        let e = parse_alg("bbr3", "app_rate_from = \"2s\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("app_rate_from") && e.contains("needs `app_rate`"),
            "{e}"
        );
        let e = parse_alg("bbr3", "app_rate = \"5mbit\"\napp_rate_from = \"2d\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("app_rate_from"), "{e}");
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
                (f.cc.bbr3.profile(), f.ecn)
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
