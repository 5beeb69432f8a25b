//! A search as its user writes it: the options by name, with units in
//! text (`20mbit`, `2s`), read by the scenario files' own unit parser.
//! The command line fills one from its flags, Python from keywords (as
//! JSON); both get the same defaults ([`Spec::default`]), the same checks
//! and the same errors, which name the option as the command line spells
//! it (`--rate-ratio`).

use super::budget::Budget;
use super::objective::Objective;
use super::{default_warmup_ns, Options};
use crate::conformance::grid::Controller;

/// The defaults, for `--help` and Python's signature alike.
pub mod defaults {
    /// The controller.
    pub const CC: &str = "bbr";
    /// The objective.
    pub const OBJECTIVE: &str = "utilization";
    /// The top rate.
    pub const RATE: &str = "20mbit";
    /// The rate range's ratio.
    pub const RATE_RATIO: f64 = 10.0;
    /// The shortest one-way delay.
    pub const DELAY: &str = "20ms";
    /// The delay's range.
    pub const JITTER: &str = "0ms";
    /// The most loss.
    pub const LOSS: f64 = 0.0;
    /// The most per-packet jitter.
    pub const PACKET_JITTER: &str = "0ms";
    /// The per-packet jitter's distribution.
    pub const PACKET_JITTER_DIST: &str = "uniform";
    /// The most pieces.
    pub const PIECES: usize = 4;
    /// The shortest piece.
    pub const MIN_PIECE: &str = "2s";
    /// A run.
    pub const DURATION: &str = "30s";
    /// The buffer, BDPs.
    pub const BUFFER: f64 = 1.0;
    /// The queue discipline.
    pub const AQM: &str = "drop-tail";
    /// Evaluations per method.
    pub const EVALUATIONS: usize = 200;
    /// Wall-clock seconds a run may take.
    pub const RUN_TIMEOUT_S: f64 = 60.0;
}

/// A search by name.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Spec {
    /// One controller, or two to set against each other.
    pub cc: Vec<String>,
    /// The objective's name.
    pub objective: String,
    /// The top rate (R).
    pub rate: String,
    /// Rates from R / this to R.
    pub rate_ratio: f64,
    /// The shortest forward one-way delay, and the reverse one.
    pub delay: String,
    /// How far the forward delay may rise.
    pub jitter: String,
    /// The most random loss, a fraction.
    pub loss: f64,
    /// The most per-packet jitter.
    pub packet_jitter: String,
    /// Its distribution: `uniform` or `normal`.
    pub packet_jitter_dist: String,
    /// The most pieces.
    pub pieces: usize,
    /// The shortest piece.
    pub min_piece: String,
    /// Each run's length.
    pub duration: String,
    /// The buffer, in BDPs.
    pub buffer: f64,
    /// The queue discipline.
    pub aqm: String,
    /// Flows of the one controller.
    pub flows: Option<usize>,
    /// The flows' transport, as `[[flow]] stack` names it.
    pub stack: Option<String>,
    /// Flows made like kernel TCP's.
    pub tcp_like: bool,
    /// Evaluations per method.
    pub evaluations: usize,
    /// The objective is measured from this time on.
    pub warmup: Option<String>,
    /// The seed.
    pub seed: u64,
    /// Wall-clock seconds one run may take.
    pub run_timeout_s: f64,
}

impl Default for Spec {
    fn default() -> Spec {
        use defaults::*;
        Spec {
            cc: vec![CC.into()],
            objective: OBJECTIVE.into(),
            rate: RATE.into(),
            rate_ratio: RATE_RATIO,
            delay: DELAY.into(),
            jitter: JITTER.into(),
            loss: LOSS,
            packet_jitter: PACKET_JITTER.into(),
            packet_jitter_dist: PACKET_JITTER_DIST.into(),
            pieces: PIECES,
            min_piece: MIN_PIECE.into(),
            duration: DURATION.into(),
            buffer: BUFFER,
            aqm: AQM.into(),
            flows: None,
            stack: None,
            tcp_like: false,
            evaluations: EVALUATIONS,
            warmup: None,
            seed: 1,
            run_timeout_s: RUN_TIMEOUT_S,
        }
    }
}

impl Spec {
    /// Reads a spec from JSON, naming a key it does not know.
    pub fn from_json(text: &str) -> Result<Spec, String> {
        serde_json::from_str(text).map_err(|e| format!("search options: {e}"))
    }

    /// The checked options, with `jobs` worker threads.
    pub fn options(&self, jobs: usize) -> Result<Options, String> {
        let dur = |flag: &str, v: &str| {
            link::units::parse_duration_ns(v).map_err(|e| format!("--{flag} {e}"))
        };
        let rate_bps =
            link::units::parse_rate_bps(&self.rate).map_err(|e| format!("--rate {e}"))?;
        let controllers = self
            .cc
            .iter()
            .map(|n| Controller::parse(n.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        let run_timeout = crate::seconds::positive_seconds("--run-timeout", self.run_timeout_s)?;
        let budget = Budget {
            rate_bps,
            rate_ratio: self.rate_ratio,
            delay_ns: dur("delay", &self.delay)?,
            jitter_ns: dur("jitter", &self.jitter)?,
            loss: self.loss,
            packet_jitter_ns: dur("packet-jitter", &self.packet_jitter)?,
            packet_jitter_normal: match self.packet_jitter_dist.as_str() {
                "uniform" => false,
                "normal" => true,
                other => {
                    return Err(format!(
                        "--packet-jitter-dist {other}: allowed `uniform` (0 to a level) or `normal` (max(0, Normal(mean, sd)), each up to --packet-jitter)"
                    ))
                }
            },
            pieces: self.pieces,
            min_piece_ns: dur("min-piece", &self.min_piece)?,
            duration_ns: dur("duration", &self.duration)?,
            buffer_bdp: self.buffer,
            aqm: self.aqm.clone(),
        };
        let warmup_ns = match &self.warmup {
            Some(w) => dur("warmup", w)?,
            None => default_warmup_ns(&budget),
        };
        let o = Options {
            flows: self
                .flows
                .unwrap_or(if controllers.len() == 2 { 2 } else { 1 }),
            stack: self.stack.clone(),
            tcp_like: self.tcp_like,
            flow_starts_ns: Vec::new(),
            budget,
            objective: Objective::parse(&self.objective)?,
            controllers,
            evaluations: self.evaluations,
            seed: self.seed,
            jobs: jobs.max(1),
            warmup_ns,
            run_timeout,
        };
        o.check()?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_make_a_valid_search() {
        let o = Spec::default().options(1).unwrap();
        assert_eq!(o.budget.rate_bps, 20e6);
        assert_eq!(o.budget.dimensions().len(), 4 * 2);
        assert_eq!(o.warmup_ns, 2_000_000_000);
    }

    #[test]
    fn bad_values_and_unknown_keys_are_named() {
        let e = Spec::from_json(r#"{"rate": "1mbit", "speed": 3}"#).unwrap_err();
        assert!(e.contains("speed"), "{e}");
        for (json, want) in [
            (r#"{"rate": "10mbps"}"#, "--rate `10mbps`"),
            (r#"{"delay": "20"}"#, "--delay `20`"),
            (r#"{"cc": ["bbr", "nope"]}"#, "--cc nope"),
            (r#"{"objective": "speed"}"#, "--objective speed"),
            (r#"{"warmup": "29s"}"#, "--warmup"),
        ] {
            let e = Spec::from_json(json).unwrap().options(1).unwrap_err();
            assert!(e.contains(want), "{json}: {e}");
        }
    }
}
