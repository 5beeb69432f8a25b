//! A conformance case as written: a scenario file (the path and the
//! workload, in the simulator's format) with a `[conformance]` table that
//! says what the case is, where the draft states it, how its path scales
//! over the grid, and what a correct BBRv3 must show.
//!
//! ```toml
//! duration = "4s"            # replaced by the grid's run length
//! [link.forward]
//! rate = "10mbit"            # replaced by each grid point's rate
//! delay = "20ms"             # replaced by half each grid point's RTT
//! [[flow]]
//! algorithm = "bbr3"         # replaced by each controller under test
//!
//! [conformance]
//! id = "A01"
//! title = "Exiting STARTUP on a bandwidth plateau"
//! section = "draft-ietf-ccwg-bbr-06, Appendix A.1"
//! buffer_bdp = 3.0           # the bottleneck's queue, in BDPs of each point
//! rtts = 40                  # run length, in the point's round trips
//! negative = "cubic"         # a controller that must fail the case
//!
//! [[conformance.checks]]
//! check = "state_left"
//! state = "startup"
//! within = "20rtt"
//! why = "the plateau is seen in 3 rounds after about log2(BDP / IW) rounds of doubling"
//! ```

use super::check::{Check, CheckKind, When};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One case file, checked.
#[derive(Clone, Debug)]
pub struct Case {
    /// `A01` … `A22`.
    pub id: String,
    /// The draft's title for it.
    pub title: String,
    /// Where the draft states it.
    pub section: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The scenario without its `[conformance]` table.
    pub scenario: toml::Table,
    /// How the path follows the grid.
    pub scale: Scale,
    /// A controller the case must fail, to show its checks can fail.
    pub negative: Option<String>,
    /// What a correct BBRv3 shows.
    pub checks: Vec<Check>,
}

/// How a case's path follows the grid's points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Every grid point: the bottleneck's rate and RTT are the point's,
    /// its queue `buffer_bdp` BDPs, the run `rtts` round trips long (at
    /// least `min_seconds`).
    Grid {
        /// The queue, in BDPs.
        buffer_bdp: f64,
        /// Run length, round trips.
        rtts: f64,
        /// Run length at least, seconds (for cases on a wall-clock rule,
        /// such as PROBE_RTT every 5 s).
        min_seconds: f64,
    },
    /// The path as written, once (the draft names one path, for example
    /// a sub-packet BDP at 64 kbit/s).
    Fixed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    title: String,
    section: String,
    #[serde(default = "yes")]
    grid: bool,
    buffer_bdp: Option<f64>,
    rtts: Option<f64>,
    min_seconds: Option<f64>,
    negative: Option<String>,
    checks: Vec<RawCheck>,
}

/// One state or several (`next = "probe_bw_down"` or `next =
/// ["probe_bw_down", "probe_rtt"]`).
#[derive(Deserialize)]
#[serde(untagged)]
enum Names {
    One(String),
    Many(Vec<String>),
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    check: String,
    why: String,
    state: Option<String>,
    next: Option<Names>,
    within: Option<String>,
    from: Option<String>,
    to: Option<String>,
    bdp: Option<f64>,
    packets: Option<f64>,
    fraction: Option<f64>,
    mbps: Option<f64>,
    rtt: Option<f64>,
}

/// Reads and checks a case file; errors name the file and the key.
pub fn load(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text, path)
}

/// [`load`] on text already read (`path` names it in errors).
pub fn parse(text: &str, path: &Path) -> Result<Case, String> {
    let at = |what: &str| format!("{}: {what}", path.display());
    let mut scenario: toml::Table = text.parse().map_err(|e| at(&format!("not TOML: {e}")))?;
    let raw = scenario
        .remove("conformance")
        .ok_or_else(|| at("no [conformance] table (a case file is a scenario with one)"))?;
    let raw: RawCase = raw
        .try_into()
        .map_err(|e| at(&format!("[conformance]: {e}")))?;
    let scale = if raw.grid {
        let buffer_bdp = raw
            .buffer_bdp
            .ok_or_else(|| at("[conformance] buffer_bdp is needed with the grid"))?;
        if !(buffer_bdp.is_finite() && (0.05..=1000.0).contains(&buffer_bdp)) {
            return Err(at(&format!(
                "[conformance] buffer_bdp = {buffer_bdp}; allowed 0.05 to 1000"
            )));
        }
        let rtts = raw
            .rtts
            .ok_or_else(|| at("[conformance] rtts is needed with the grid"))?;
        if !(rtts.is_finite() && (1.0..=100_000.0).contains(&rtts)) {
            return Err(at(&format!(
                "[conformance] rtts = {rtts}; allowed 1 to 100000"
            )));
        }
        let min_seconds = raw.min_seconds.unwrap_or(0.0);
        if !(min_seconds.is_finite() && (0.0..=600.0).contains(&min_seconds)) {
            return Err(at(&format!(
                "[conformance] min_seconds = {min_seconds}; allowed 0 to 600"
            )));
        }
        Scale::Grid {
            buffer_bdp,
            rtts,
            min_seconds,
        }
    } else {
        for (key, set) in [
            ("buffer_bdp", raw.buffer_bdp.is_some()),
            ("rtts", raw.rtts.is_some()),
            ("min_seconds", raw.min_seconds.is_some()),
        ] {
            if set {
                return Err(at(&format!(
                    "[conformance] {key} applies to the grid; this case has grid = false"
                )));
            }
        }
        Scale::Fixed
    };
    if raw.checks.is_empty() {
        return Err(at("[conformance] has no checks"));
    }
    let checks = raw
        .checks
        .into_iter()
        .enumerate()
        .map(|(i, c)| check(c).map_err(|e| at(&format!("[[conformance.checks]] #{}: {e}", i + 1))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Case {
        id: raw.id,
        title: raw.title,
        section: raw.section,
        path: path.to_path_buf(),
        scenario,
        scale,
        negative: raw.negative,
        checks,
    })
}

/// The states a check may name: BBRv3's (draft §4.1) and v1's PROBE_BW.
const STATES: [&str; 8] = [
    "startup",
    "drain",
    "probe_bw",
    "probe_bw_down",
    "probe_bw_cruise",
    "probe_bw_refill",
    "probe_bw_up",
    "probe_rtt",
];

fn check(c: RawCheck) -> Result<Check, String> {
    let when = |s: &Option<String>, key: &str| -> Result<Option<When>, String> {
        s.as_deref()
            .map(|t| When::parse(t).map_err(|e| format!("{key}: {e}")))
            .transpose()
    };
    let need_when = |s: &Option<String>, key: &str| -> Result<When, String> {
        when(s, key)?.ok_or_else(|| format!("`{}` needs `{key}`", c.check))
    };
    let named = |s: &Option<String>, key: &str| -> Result<String, String> {
        let s = s
            .clone()
            .ok_or_else(|| format!("`{}` needs `{key}`", c.check))?;
        if STATES.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(format!("{key} `{s}`; allowed {}", STATES.join(", ")))
        }
    };
    let state = || named(&c.state, "state");
    let next = || -> Result<Vec<String>, String> {
        let names = match &c.next {
            None => return Err(format!("`{}` needs `next`", c.check)),
            Some(Names::One(n)) => vec![n.clone()],
            Some(Names::Many(v)) if v.is_empty() => return Err("`next` is an empty list".into()),
            Some(Names::Many(v)) => v.clone(),
        };
        names
            .iter()
            .map(|n| named(&Some(n.clone()), "next"))
            .collect()
    };
    let positive = |v: Option<f64>, key: &str| -> Result<f64, String> {
        match v {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
            Some(x) => Err(format!("{key} = {x}; must be a finite number ≥ 0")),
            None => Err(format!("`{}` needs `{key}`", c.check)),
        }
    };
    let from = when(&c.from, "from")?.unwrap_or(When::Rtts(0.0));
    let to = when(&c.to, "to")?;
    let kind = match c.check.as_str() {
        "state_left" => CheckKind::StateLeft {
            state: state()?,
            within: need_when(&c.within, "within")?,
        },
        "state_entered" => CheckKind::StateEntered {
            state: state()?,
            from,
            within: need_when(&c.within, "within")?,
        },
        "state_absent" => CheckKind::StateAbsent {
            state: state()?,
            from,
            to,
        },
        "state_duration_at_most" => CheckKind::StateDurationAtMost {
            state: state()?,
            within: need_when(&c.within, "within")?,
        },
        "state_followed_by" => CheckKind::StateFollowedBy {
            state: state()?,
            next: next()?,
            from,
            to,
        },
        "inflight_at_most" => CheckKind::InflightAtMost {
            bdp: positive(c.bdp, "bdp")?,
            packets: c.packets.map_or(Ok(0.0), |p| positive(Some(p), "packets"))?,
            from,
            to,
        },
        "goodput_at_least" => {
            let fraction = positive(c.fraction, "fraction")?;
            if fraction > 1.0 {
                return Err(format!("fraction = {fraction}; at most 1"));
            }
            CheckKind::GoodputAtLeast {
                fraction,
                mbps: c.mbps.map(|m| positive(Some(m), "mbps")).transpose()?,
                from,
                to,
            }
        }
        "queue_delay_at_most" => CheckKind::QueueDelayAtMost {
            rtt: positive(c.rtt, "rtt")?,
            packets: c.packets.map_or(Ok(0.0), |p| positive(Some(p), "packets"))?,
            from,
            to,
        },
        "bw_estimate_at_most" => CheckKind::BwEstimateAtMost {
            mbps: positive(c.mbps, "mbps")?,
            from,
            to,
        },
        "bw_estimate_at_least" => CheckKind::BwEstimateAtLeast {
            mbps: positive(c.mbps, "mbps")?,
            from,
            to,
        },
        "retransmitted_at_most" => {
            let fraction = positive(c.fraction, "fraction")?;
            CheckKind::RetransmittedAtMost { fraction, from, to }
        }
        other => {
            return Err(format!(
                "check `{other}`; allowed state_left, state_entered, state_absent, state_duration_at_most, state_followed_by, inflight_at_most, goodput_at_least, queue_delay_at_most, retransmitted_at_most, bw_estimate_at_most, bw_estimate_at_least"
            ))
        }
    };
    // A key the check does not read is a mistake in the file (a bound
    // that would silently not apply), not something to ignore.
    let takes: &[&str] = match &kind {
        CheckKind::StateLeft { .. } | CheckKind::StateDurationAtMost { .. } => &["state", "within"],
        CheckKind::StateEntered { .. } => &["state", "from", "within"],
        CheckKind::StateAbsent { .. } => &["state", "from", "to"],
        CheckKind::StateFollowedBy { .. } => &["state", "next", "from", "to"],
        CheckKind::InflightAtMost { .. } => &["bdp", "packets", "from", "to"],
        CheckKind::GoodputAtLeast { .. } => &["fraction", "mbps", "from", "to"],
        CheckKind::QueueDelayAtMost { .. } => &["rtt", "packets", "from", "to"],
        CheckKind::RetransmittedAtMost { .. } => &["fraction", "from", "to"],
        CheckKind::BwEstimateAtMost { .. } | CheckKind::BwEstimateAtLeast { .. } => {
            &["mbps", "from", "to"]
        }
    };
    let given = [
        ("state", c.state.is_some()),
        ("next", c.next.is_some()),
        ("within", c.within.is_some()),
        ("from", c.from.is_some()),
        ("to", c.to.is_some()),
        ("bdp", c.bdp.is_some()),
        ("packets", c.packets.is_some()),
        ("fraction", c.fraction.is_some()),
        ("mbps", c.mbps.is_some()),
        ("rtt", c.rtt.is_some()),
    ];
    if let Some((key, _)) = given.iter().find(|(k, set)| *set && !takes.contains(k)) {
        return Err(format!(
            "`{}` does not take `{key}` (it takes {})",
            c.check,
            takes.join(", ")
        ));
    }
    if c.why.trim().is_empty() {
        return Err("`why` is empty: every check says why its bound is what it is".into());
    }
    Ok(Check { kind, why: c.why })
}

/// Every case file in `dir` (`*.toml`, sorted by name), each checked.
pub fn load_dir(dir: &Path) -> Result<Vec<Case>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| {
            format!(
                "cannot read the cases in {}: {e} (the suite's case files are scenarios/conformance in a bbrlab checkout, relative to where you run; give --cases DIR)",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no case files (*.toml) in {}", dir.display()));
    }
    let cases = files
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, c) in cases.iter().enumerate() {
        if let Some(d) = cases[..i].iter().find(|d| d.id == c.id) {
            return Err(format!(
                "{} and {} both have id {}",
                d.path.display(),
                c.path.display(),
                c.id
            ));
        }
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The keys serde's error for `key` lists after "expected one of".
    fn keys_allowed(text: &str) -> Vec<String> {
        let e = super::parse(text, Path::new("c.toml")).unwrap_err();
        let list = e
            .split("expected one of ")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"));
        list.split(", ")
            .map(|k| k.trim().trim_matches('`').to_string())
            .take_while(|k| !k.contains(char::is_whitespace))
            .collect()
    }

    /// The scenario loader checks `[conformance]`'s keys for every
    /// command (`scenario::ConformanceTable`); it must take every key the
    /// suite takes, here in a file `bbrlab sim` runs.
    #[test]
    fn the_scenario_loader_takes_every_key_the_suite_takes() {
        const PATH: &str = "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\n[[flow]]\nalgorithm = \"bbr3\"\n";
        let case = keys_allowed(&format!("{PATH}[conformance]\nzzz = 1\n"));
        let check = keys_allowed(&format!(
            "{PATH}[conformance]\nid = \"A01\"\ntitle = \"t\"\nsection = \"s\"\nbuffer_bdp = 1.0\nrtts = 10\n[[conformance.checks]]\nzzz = 1\n"
        ));
        assert!(case.contains(&"rtts".to_string()), "{case:?}");
        assert!(check.contains(&"within".to_string()), "{check:?}");
        let mut text = format!("{PATH}[conformance]\n");
        for k in case.iter().filter(|k| *k != "checks") {
            text += &format!("{k} = 1\n");
        }
        text += "[[conformance.checks]]\n";
        for k in &check {
            text += &format!("{k} = 1\n");
        }
        scenario::parse(&text, "c.toml", Path::new("."), Path::new("c.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}
