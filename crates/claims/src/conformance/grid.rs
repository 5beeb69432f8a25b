//! The grid of path sizes a case runs over, the controllers it runs on,
//! and the scenario of one case at one point with one controller.
//!
//! The draft suggests testing from under 1 ms to 1 s of RTT and from
//! 64 kbit/s to 10 Gbit/s. The full grid takes three rates (10, 50 and
//! 250 Mbit/s) and three RTTs (10, 40 and 200 ms) within those ranges,
//! every point with a BDP of at least 8 packets (so that the initial
//! window of 10 does not by itself decide a case: the draft's sub-packet
//! case, A.14, has a fixed path of its own), and chosen so the whole suite
//! stays fast in the simulator; the quick grid is its middle point.

use super::case::{Case, Scale};
use serde::Serialize;
use std::fmt;

/// One path size: the bottleneck's rate and the base round trip.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Bottleneck rate, bit/s.
    pub rate_bps: f64,
    /// Base round trip, ns.
    pub rtt_ns: u64,
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = if self.rate_bps >= 1e9 {
            format!("{}G", self.rate_bps / 1e9)
        } else if self.rate_bps >= 1e6 {
            format!("{}M", self.rate_bps / 1e6)
        } else {
            format!("{}k", self.rate_bps / 1e3)
        };
        let rtt_ms = self.rtt_ns as f64 / 1e6;
        write!(f, "{rate}-{rtt_ms}ms")
    }
}

/// Which grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// 3 rates × 3 RTTs.
    Full,
    /// The middle point alone (CI).
    Quick,
}

const MS: u64 = 1_000_000;

impl Grid {
    /// The points, rates outer.
    pub fn points(self) -> Vec<Point> {
        match self {
            Grid::Quick => vec![Point {
                rate_bps: 50e6,
                rtt_ns: 40 * MS,
            }],
            Grid::Full => {
                let mut v = Vec::new();
                for rate_bps in [10e6, 50e6, 250e6] {
                    for rtt_ns in [10 * MS, 40 * MS, 200 * MS] {
                        v.push(Point { rate_bps, rtt_ns });
                    }
                }
                v
            }
        }
    }
}

/// A controller under test, by the name `--cc` takes: bbrlab's algorithms
/// (`bbr3` for the draft profile, `bbr3:linux-v3`, `bbr`, ...) or a QUIC
/// stack's (`s2n:bbr2`, `quinn:bbr`, ...).
#[derive(Clone, Serialize)]
pub struct Controller {
    /// As given.
    pub name: String,
    /// The scenario's `algorithm`.
    algorithm: String,
    /// `[flow.bbr3] profile`, for bbrlab's bbr3.
    profile: Option<String>,
    /// A controller from outside bbrlab ([`Controller::custom`]), and
    /// whether it reports BBR's state in its snapshot's mode.
    #[serde(skip)]
    custom: Option<(netsim::CustomCc, bool)>,
    /// A change to the built-in controller's configuration
    /// ([`Controller::configured`]).
    #[serde(skip)]
    tweak: Option<Tweak>,
}

/// A change to a built-in controller's configuration.
pub type Tweak = std::sync::Arc<dyn Fn(&mut congestion::Config) + Send + Sync>;

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("custom", &self.custom.is_some())
            .field("configured", &self.tweak.is_some())
            .finish()
    }
}

impl Controller {
    /// Parses a `--cc` list (the option may be repeated and each value
    /// comma-separated), refusing a name given twice: it would run the
    /// same controller twice and show the same column twice.
    pub fn parse_list(names: &[String]) -> Result<Vec<Controller>, String> {
        let mut out: Vec<Controller> = Vec::with_capacity(names.len());
        for n in names {
            let c = Controller::parse(n.trim())?;
            if out.iter().any(|o| o.name == c.name) {
                return Err(format!("--cc: {} is given twice", c.name));
            }
            out.push(c);
        }
        Ok(out)
    }

    /// Parses a `--cc` name, refusing what the simulator cannot run.
    pub fn parse(name: &str) -> Result<Controller, String> {
        let (algorithm, profile) = match name.split_once(':') {
            Some(("bbr3", p)) if p == "draft" || p == "linux-v3" => {
                ("bbr3".to_string(), Some(p.to_string()))
            }
            Some(("bbr3", _)) => {
                return Err(format!(
                    "--cc {name}: bbr3's profiles are `draft` and `linux-v3`"
                ))
            }
            _ => (name.to_string(), None),
        };
        // The scenario files' names: bbrlab's algorithms and the stacks'
        // controllers, the error listing both.
        scenario::AlgName::try_from(algorithm.clone()).map_err(|e| {
            format!(
                "--cc {name}: not a controller the simulator runs: {e} (bbr3 also as bbr3:draft or bbr3:linux-v3)"
            )
        })?;
        Ok(Controller {
            name: name.to_string(),
            algorithm,
            profile,
            custom: None,
            tweak: None,
        })
    }

    /// A built-in controller (`base`, a `--cc` name) with its
    /// configuration changed by `tweak` after the case's scenario has set
    /// it, named `name`: a BBRv3 with one rule switched off, say, to show
    /// that a case's checks catch what that rule is for. Not the
    /// reference for `--strict`.
    pub fn configured(
        name: &str,
        base: &str,
        tweak: impl Fn(&mut congestion::Config) + Send + Sync + 'static,
    ) -> Result<Controller, String> {
        let mut c = Controller::parse(base)?;
        if c.algorithm.parse::<congestion::Algorithm>().is_err() {
            return Err(format!(
                "{name}: only bbrlab's own controllers can be configured (not {base})"
            ));
        }
        c.name = name.to_string();
        c.tweak = Some(std::sync::Arc::new(tweak));
        Ok(c)
    }

    /// Makes `flow` run this controller where the scenario's `algorithm`
    /// alone cannot say so: an outside controller's constructor, or the
    /// configuration change of a configured one (applied after the
    /// scenario has set the configuration).
    pub(crate) fn apply_to(&self, flow: &mut netsim::FlowConfig) {
        if let Some((custom, _)) = &self.custom {
            flow.custom_cc = Some(custom.clone());
        }
        if let Some(tweak) = &self.tweak {
            tweak(&mut flow.cc);
        }
    }

    /// A controller from outside bbrlab, through the `congestion` crate's
    /// [`congestion::CongestionControl`] trait: `build` makes one per run
    /// from the flow's configuration (its MSS and initial window are the
    /// scenario's) and the start time. `reports_state` says whether its
    /// snapshot's `mode` is BBR's state (STARTUP, DRAIN, PROBE_BW's
    /// phases, PROBE_RTT); if not, the state checks are skipped for it.
    /// The suite runs it on the same simulated sender as every other
    /// controller.
    pub fn custom(
        name: &str,
        reports_state: bool,
        build: impl Fn(
                &congestion::Config,
                congestion::Instant,
            ) -> Box<dyn congestion::CongestionControl + Send + Sync>
            + Send
            + Sync
            + 'static,
    ) -> Controller {
        Controller {
            name: name.to_string(),
            // The sender's configuration (MSS, initial window) comes from
            // the scenario's flow, as for bbr3.
            algorithm: "bbr3".into(),
            profile: None,
            custom: Some((netsim::CustomCc::new(name, build), reports_state)),
            tweak: None,
        }
    }

    /// The scenario's `algorithm` for it (an outside controller runs as
    /// `bbr3`'s sender with its own constructor).
    pub fn scenario_algorithm(&self) -> &str {
        &self.algorithm
    }

    /// `[flow.bbr3] profile` for it, if it names one.
    pub fn scenario_profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Why its BBR state cannot be read, if it cannot: loss-based
    /// controllers have none, and quinn's BBR keeps its own private.
    pub fn no_state(&self) -> Option<String> {
        if let Some((_, reports_state)) = &self.custom {
            return (!reports_state).then(|| format!("{} reports no BBR state", self.name));
        }
        let a = self.algorithm.as_str();
        if a.ends_with("cubic") || a.ends_with("reno") {
            Some(format!("{} has no BBR state", self.name))
        } else if a == "quinn:bbr" || a == "noq:bbr3" {
            Some(format!("{a} does not expose its state"))
        } else {
            None
        }
    }

    /// Why two runs of one scenario may differ with this controller, if
    /// they may: a search's worst path or a fuzz failure found with it may
    /// then not reproduce its figure under `bbrlab sim`. Two stacks draw
    /// from a generator seeded by the operating system, with no setter for
    /// the seed: noq-proto 1.4.0's BBRv3 its random wait before probing
    /// (`Bbr3::new`, `Bbr3Config::probe_rng_seed` private), and
    /// quinn-proto 0.11.19's BBR its gain cycle's starting phase on
    /// entering PROBE_BW (`Bbr::new`, its private `random_number_generator`).
    /// Every other controller is deterministic for a scenario's seed.
    pub fn not_repeatable(&self) -> Option<String> {
        if self.custom.is_some() {
            return None;
        }
        let (stack, what) = match self.algorithm.as_str() {
            "noq:bbr3" => ("noq", "its BBRv3's wait before probing"),
            "quinn:bbr" => ("quinn", "its BBR's starting phase of the gain cycle"),
            _ => return None,
        };
        Some(format!(
            "{}: runs do not repeat ({stack} seeds {what} from the OS's entropy and offers no way to set it), so a path found with it may not reproduce its figure under `bbrlab sim`",
            self.name
        ))
    }

    /// Whether it is bbrlab's own BBRv3 in the draft's profile, the
    /// implementation the suite is held to (`--strict`).
    pub fn is_reference(&self) -> bool {
        self.custom.is_none()
            && self.tweak.is_none()
            && self.algorithm == "bbr3"
            && self.profile.as_deref().is_none_or(|p| p == "draft")
    }
}

/// The scenario text of `case` at `point` (ignored for a fixed path) with
/// `cc` as its first flow's controller.
pub fn scenario_text(case: &Case, point: Option<Point>, cc: &Controller) -> Result<String, String> {
    let mut t = case.scenario.clone();
    let err = |what: &str| format!("{}: {what}", case.path.display());
    if let (
        Scale::Grid {
            buffer_bdp,
            rtts,
            min_seconds,
        },
        Some(p),
    ) = (case.scale, point)
    {
        let link = t
            .entry("link")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| err("`link` is not a table"))?;
        let one_way_us = p.rtt_ns / 2_000;
        for dir in ["forward", "reverse"] {
            let d = link
                .entry(dir)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| err(&format!("`link.{dir}` is not a table")))?;
            d.insert("delay".into(), format!("{one_way_us}us").into());
        }
        let fwd = link["forward"].as_table_mut().expect("inserted above");
        fwd.insert(
            "rate".into(),
            format!("{}kbit", (p.rate_bps / 1e3).round()).into(),
        );
        let bdp_packets = p.rate_bps / 8.0 * p.rtt_ns as f64 / 1e9 / 1500.0;
        let limit = (buffer_bdp * bdp_packets).ceil().max(2.0) as u64;
        let q = fwd
            .entry("queue")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| err("`link.forward.queue` is not a table"))?;
        q.insert("limit".into(), format!("{limit}pkt").into());
        let secs = (rtts * p.rtt_ns as f64 / 1e9).max(min_seconds);
        t.insert(
            "duration".into(),
            format!("{}ms", (secs * 1e3).ceil() as u64).into(),
        );
        // An eighth of a round trip, 0.1 ms to 10 ms.
        let sample_us = (p.rtt_ns / 8_000).clamp(100, 10_000);
        t.insert("sample_interval".into(), format!("{sample_us}us").into());
    }
    let flows = t
        .get_mut("flow")
        .and_then(|f| f.as_array_mut())
        .filter(|f| !f.is_empty())
        .ok_or_else(|| err("no [[flow]]: the first flow is the controller under test"))?;
    let f = flows[0]
        .as_table_mut()
        .ok_or_else(|| err("[[flow]] is not a table"))?;
    f.insert("algorithm".into(), cc.algorithm.clone().into());
    // Every controller meets the same receiver and pacer: the case's
    // `ack` and `pacing`, or an ACK per packet and one packet at a time,
    // which a QUIC stack's own controller gets by default and which the
    // cases' bounds were set with. (bbrlab's algorithms alone would get
    // Linux's receiver and pacer, a TCP-like flow's defaults.)
    f.entry("ack").or_insert_with(|| "every".into());
    f.entry("pacing").or_insert_with(|| "exact".into());
    if let Some(p) = &cc.profile {
        let b3 = f
            .entry("bbr3")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| err("[flow.bbr3] is not a table"))?;
        b3.insert("profile".into(), p.clone().into());
    } else if cc.algorithm != "bbr3" {
        // A case's bbr3 tuning does not apply to another controller.
        f.remove("bbr3");
    }
    toml::to_string(&t).map_err(|e| err(&format!("cannot write the scenario: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case that names no receiver or pacer runs every controller with
    /// an ACK per packet and one packet at a time (what the bounds were
    /// set with), not the TCP-like defaults bbrlab's own algorithms would
    /// get; a case's own choice stays.
    #[test]
    fn every_controller_meets_the_cases_receiver_and_pacer() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/conformance");
        let file = dir.join("A01-startup-exit-on-plateau.toml");
        let full = std::fs::read_to_string(&file).unwrap();
        let bare = full
            .replace("ack = \"every\"\n", "")
            .replace("pacing = \"exact\"\n", "");
        assert_ne!(bare, full);
        let named = full.replace("pacing = \"exact\"", "pacing = \"quantum\"");
        for (text, pacing) in [(&bare, "exact"), (&named, "quantum")] {
            let case = crate::conformance::case::parse(text, &file).unwrap();
            for cc in ["bbr3", "cubic", "quinn:bbr"] {
                let out = scenario_text(&case, None, &Controller::parse(cc).unwrap()).unwrap();
                let sc = scenario::parse(&out, "c.toml", &dir, &file).unwrap();
                let f = &sc.runs[0].config.flows[0];
                assert_eq!(f.ack, netsim::AckPolicy::EveryPacket, "{cc}");
                let want = if pacing == "exact" {
                    netsim::Pacing::Exact
                } else {
                    netsim::Pacing::Quantum
                };
                assert_eq!(f.pacing, want, "{cc}: {out}");
            }
        }
    }

    #[test]
    fn a_cc_list_refuses_a_name_given_twice() {
        let list = |v: &[&str]| {
            Controller::parse_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(list(&["bbr", " cubic"]).unwrap().len(), 2);
        let e = list(&["bbr", "cubic", "bbr"]).unwrap_err();
        assert_eq!(e, "--cc: bbr is given twice");
        assert!(list(&["bbr", "nope"]).is_err());
    }

    #[test]
    fn only_the_stacks_randomised_bbrs_are_named_as_not_repeatable() {
        for cc in ["noq:bbr3", "quinn:bbr"] {
            let note = Controller::parse(cc).unwrap().not_repeatable();
            assert!(
                note.as_deref()
                    .is_some_and(|n| n.starts_with(&format!("{cc}: runs do not repeat"))),
                "{cc}: {note:?}"
            );
        }
        for cc in [
            "bbr",
            "bbr3",
            "bbr3:linux-v3",
            "cubic",
            "reno",
            "s2n:bbr2",
            "quinn:cubic",
            "noq:cubic",
        ] {
            assert_eq!(
                Controller::parse(cc).unwrap().not_repeatable(),
                None,
                "{cc}"
            );
        }
    }
}
