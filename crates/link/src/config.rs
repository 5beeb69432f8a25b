//! The `[link.forward]` / `[link.reverse]` tables of a scenario, and their
//! checked, resolved form.
//!
//! Deserialisation checks everything it can see (units, ranges, which
//! alternatives are combined), so errors carry the file position;
//! [`DirectionConfig::resolve`] then loads trace files, which needs the
//! scenario's directory.

use crate::units::serde_units::{ByteCount, Dur, Prob, Rate, SizeValue};
use crate::units::Size;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes per mahimahi delivery opportunity.
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

/// A problem found while resolving a direction (after parsing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError {
    /// The field, e.g. `rate.trace`.
    pub field: String,
    /// What was wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for LinkError {}

/// Most steps a rate schedule may have: each packet's service time is
/// integrated across the steps it spans, so this bounds that work.
pub const MAX_STEPS: usize = 100_000;

/// Most delivery opportunities a mahimahi trace may hold (8 bytes each in
/// memory, 80 MB at the limit; a day-long 1 Gbit/s trace has fewer).
pub const MAX_TRACE_OPPORTUNITIES: usize = 10_000_000;

/// One step of a rate schedule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    at: Dur,
    rate: Rate,
}

/// A square wave between two rates.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Square {
    low: Rate,
    high: Rate,
    period: Dur,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RateTable {
    steps: Option<Vec<Step>>,
    square: Option<Square>,
    trace: Option<String>,
}

/// The bottleneck rate, as written.
#[derive(Clone, Debug)]
pub enum RateConfig {
    /// A constant rate, bits/s.
    Constant(f64),
    /// Piecewise-constant: (from time ns, bits/s), ascending times from 0.
    Steps(Vec<(u64, f64)>),
    /// High for the first half of each period, low for the second.
    Square {
        /// Low rate, bits/s.
        low: f64,
        /// High rate, bits/s.
        high: f64,
        /// Period, ns.
        period_ns: u64,
    },
    /// A mahimahi trace file (resolved against the scenario directory).
    Trace(PathBuf),
}

impl<'de> Deserialize<'de> for RateConfig {
    /// A string is a constant rate; a table holds exactly one of `steps`,
    /// `square` or `trace`. (Hand-written so each form keeps its own error
    /// message, which an untagged enum would lose.)
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RateConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a rate like \"10mbit\", or a table with one of `steps`, `square`, `trace`",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RateConfig, E> {
                crate::units::parse_rate_bps(s)
                    .map(RateConfig::Constant)
                    .map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RateConfig, A::Error> {
                let t = RateTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match (t.steps, t.square, t.trace) {
                    (Some(steps), None, None) => {
                        if steps.is_empty() {
                            return Err(de::Error::custom(
                                "`steps` is empty; give at least one { at, rate }",
                            ));
                        }
                        if steps[0].at.0 != 0 {
                            return Err(de::Error::custom("the first step must be `at = \"0s\"`"));
                        }
                        if steps.windows(2).any(|w| w[1].at.0 <= w[0].at.0) {
                            return Err(de::Error::custom("step times must increase"));
                        }
                        if steps.len() > MAX_STEPS {
                            return Err(de::Error::custom(format!(
                                "{} steps; the limit is {MAX_STEPS}",
                                steps.len()
                            )));
                        }
                        Ok(RateConfig::Steps(
                            steps.iter().map(|s| (s.at.0, s.rate.0)).collect(),
                        ))
                    }
                    (None, Some(sq), None) => {
                        if sq.period.0 < 2 {
                            return Err(de::Error::custom(
                                "`square.period` must be positive, e.g. \"20s\"",
                            ));
                        }
                        Ok(RateConfig::Square {
                            low: sq.low.0,
                            high: sq.high.0,
                            period_ns: sq.period.0,
                        })
                    }
                    (None, None, Some(p)) => Ok(RateConfig::Trace(PathBuf::from(p))),
                    _ => Err(de::Error::custom(
                        "give exactly one of `steps`, `square` or `trace`",
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Active queue management.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aqm {
    /// Drop-tail only.
    None,
    /// CoDel (RFC 8289).
    Codel,
    /// A step on the packet's sojourn time (from its arrival until its own
    /// transmission starts): above `threshold` a packet is dropped, or with
    /// `ecn = true` an ECN-capable one is marked CE. This is RED with
    /// min_th = max_th = threshold and a marking probability of 1 above it,
    /// run on sojourn time rather than queue length, with RFC 3168 §5's
    /// ECN rule: mark what is ECN-capable, drop what is not.
    Step,
    /// FQ-CoDel (RFC 8290): per-flow queues served by deficit round robin,
    /// each with its own CoDel. Decides at dequeue time.
    #[serde(rename = "fq_codel")]
    FqCodel,
    /// PIE (RFC 8033): a PI controller on the queue delay sets an
    /// early-drop probability applied at enqueue.
    Pie,
    /// DualPI2 (RFC 9332): an L4S queue for ECT(1)/CE with a shallow step
    /// marker and a Classic queue under a PI2 controller, coupled.
    #[serde(rename = "dualpi2")]
    DualPi2,
}

impl Aqm {
    fn name(self) -> &'static str {
        match self {
            Aqm::None => "none",
            Aqm::Codel => "codel",
            Aqm::Step => "step",
            Aqm::FqCodel => "fq_codel",
            Aqm::Pie => "pie",
            Aqm::DualPi2 => "dualpi2",
        }
    }

    /// The optional parameter keys each AQM takes (besides `limit`, `aqm`, `ecn`).
    fn keys(self) -> &'static [&'static str] {
        match self {
            Aqm::None => &[],
            Aqm::Codel => &["target", "interval"],
            Aqm::Step => &["threshold"],
            Aqm::FqCodel => &["target", "interval", "flows", "quantum"],
            Aqm::Pie => &["target", "tupdate", "alpha", "beta", "max_burst"],
            Aqm::DualPi2 => &[
                "target",
                "tupdate",
                "alpha",
                "beta",
                "coupling",
                "l4s_threshold",
                "overload",
            ],
        }
    }
}

/// A discipline that decides at dequeue time (the packet's departure is
/// chosen when the link becomes free, not when the packet arrives).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Discipline {
    /// FQ-CoDel (RFC 8290).
    FqCodel {
        /// CoDel target per queue, ns (RFC 8290 §4.3: 5 ms).
        target_ns: u64,
        /// CoDel interval per queue, ns (100 ms).
        interval_ns: u64,
        /// Number of flow queues (1024).
        flows: u32,
        /// DRR quantum, bytes (1514).
        quantum: u32,
    },
    /// PIE (RFC 8033).
    Pie {
        /// QDELAY_REF, ns (15 ms).
        target_ns: u64,
        /// T_UPDATE, ns (15 ms).
        tupdate_ns: u64,
        /// alpha, Hz (0.125).
        alpha: f64,
        /// beta, Hz (1.25).
        beta: f64,
        /// MAX_BURST, ns (150 ms).
        max_burst_ns: u64,
    },
    /// DualPI2 (RFC 9332).
    DualPi2 {
        /// The Classic PI target, ns (15 ms).
        target_ns: u64,
        /// Tupdate, ns (16 ms).
        tupdate_ns: u64,
        /// alpha, Hz (0.16).
        alpha: f64,
        /// beta, Hz (3.2).
        beta: f64,
        /// Coupling factor k (2).
        coupling: f64,
        /// The L4S queue's step threshold on sojourn, ns (1 ms).
        l4s_threshold_ns: u64,
        /// Once k·p' passes 1, drop L4S packets at p'² (true, Linux's
        /// `drop_on_overload` default) or mark them all and let the L4S
        /// queue fill (false, `overflow`).
        drop_on_overload: bool,
    },
}

/// DualPI2's answer to overload (`overload` in a queue table), by
/// Linux's names: `drop_on_overload` keeps both queues' delay by dropping
/// L4S packets too, `overflow` keeps ECN's no-loss promise at the cost of
/// the L4S queue's delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Overload {
    Drop,
    Overflow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueTable {
    limit: SizeValue,
    aqm: Option<Aqm>,
    target: Option<Dur>,
    interval: Option<Dur>,
    threshold: Option<Dur>,
    ecn: Option<bool>,
    flows: Option<u64>,
    quantum: Option<u64>,
    tupdate: Option<Dur>,
    alpha: Option<f64>,
    beta: Option<f64>,
    max_burst: Option<Dur>,
    coupling: Option<f64>,
    l4s_threshold: Option<Dur>,
    overload: Option<Overload>,
}

/// The step marker's default threshold: 1 ms, a shallow threshold of the
/// kind DCTCP and L4S queues mark at (a fraction of a typical RTT).
pub const DEFAULT_STEP_THRESHOLD_NS: u64 = 1_000_000;

/// The bottleneck queue.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "QueueTable")]
pub struct QueueConfig {
    /// Capacity.
    pub limit: Size,
    /// CoDel (target ns, interval ns), if enabled.
    pub codel: Option<(u64, u64)>,
    /// The step marker's sojourn threshold, ns, if enabled (at most one
    /// of `codel` and `step_ns` is set).
    pub step_ns: Option<u64>,
    /// Mark ECN-capable packets CE where the AQM would drop them. Only
    /// with an AQM (`codel` or `step_ns`); a full queue drops regardless.
    pub ecn: bool,
    /// A dequeue-time discipline (FQ-CoDel, PIE, DualPI2), if chosen; then
    /// `codel` and `step_ns` are None.
    pub discipline: Option<Discipline>,
}

impl QueueConfig {
    /// A drop-tail queue of `limit`, without AQM or ECN.
    pub const fn drop_tail(limit: Size) -> QueueConfig {
        QueueConfig {
            limit,
            codel: None,
            step_ns: None,
            ecn: false,
            discipline: None,
        }
    }

    /// The queueing delay the AQM steers to, ns: CoDel's and FQ-CoDel's
    /// target, PIE's QDELAY_REF, DualPI2's Classic target, the step
    /// marker's threshold; `None` for drop-tail, whose queue stands up to
    /// its limit. Read from the resolved configuration, so that a reader
    /// (the fuzzer's bounds) keeps each AQM's default without restating it.
    pub fn delay_target_ns(&self) -> Option<u64> {
        match self.discipline {
            Some(
                Discipline::FqCodel { target_ns, .. }
                | Discipline::Pie { target_ns, .. }
                | Discipline::DualPi2 { target_ns, .. },
            ) => Some(target_ns),
            None => self.codel.map(|(target, _)| target).or(self.step_ns),
        }
    }
}

impl TryFrom<QueueTable> for QueueConfig {
    type Error = String;
    fn try_from(t: QueueTable) -> Result<Self, String> {
        match t.limit.0 {
            Size::Packets(0) => {
                return Err("limit is 0 packets; the queue must hold at least one packet".into())
            }
            Size::Bytes(0) => {
                return Err("limit is 0 bytes; the queue must hold at least one packet".into())
            }
            _ => {}
        }
        let aqm = t.aqm.unwrap_or(Aqm::None);
        let given: [(&str, bool); 12] = [
            ("target", t.target.is_some()),
            ("interval", t.interval.is_some()),
            ("threshold", t.threshold.is_some()),
            ("flows", t.flows.is_some()),
            ("quantum", t.quantum.is_some()),
            ("tupdate", t.tupdate.is_some()),
            ("alpha", t.alpha.is_some()),
            ("beta", t.beta.is_some()),
            ("max_burst", t.max_burst.is_some()),
            ("coupling", t.coupling.is_some()),
            ("l4s_threshold", t.l4s_threshold.is_some()),
            ("overload", t.overload.is_some()),
        ];
        let old_aqm = matches!(aqm, Aqm::None | Aqm::Codel | Aqm::Step);
        for (key, present) in given {
            let old_key = matches!(key, "target" | "interval" | "threshold");
            if present && !aqm.keys().contains(&key) && !(old_aqm && old_key) {
                let takes = if aqm.keys().is_empty() {
                    "no parameters".to_string()
                } else {
                    aqm.keys()
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let with: Vec<String> =
                    [Aqm::Codel, Aqm::Step, Aqm::FqCodel, Aqm::Pie, Aqm::DualPi2]
                        .iter()
                        .filter(|a| a.keys().contains(&key))
                        .map(|a| format!("\"{}\"", a.name()))
                        .collect();
                return Err(format!(
                    "queue `{key}` does not apply to `aqm = \"{}\"` (it takes {takes}); `{key}` belongs to aqm {}",
                    aqm.name(),
                    with.join(" or ")
                ));
            }
        }
        let codel_keys = t.target.is_some() || t.interval.is_some();
        if codel_keys && old_aqm && aqm != Aqm::Codel {
            return Err(
                "queue `target` and `interval` apply only with `aqm = \"codel\"` (or \"fq_codel\"; \
                 `target` also with \"pie\" and \"dualpi2\")"
                    .to_string() + if aqm == Aqm::Step {
                    "; the step marker takes `threshold`"
                } else {
                    ""
                },
            );
        }
        if t.threshold.is_some() && old_aqm && aqm != Aqm::Step {
            return Err(
                "queue `threshold` applies only with `aqm = \"step\"`".to_string()
                    + if aqm == Aqm::Codel {
                        "; CoDel takes `target` and `interval`"
                    } else {
                        ""
                    },
            );
        }
        let ecn = t.ecn.unwrap_or(false);
        let (codel, step_ns) = match aqm {
            Aqm::None => {
                if ecn {
                    return Err(
                        "queue `ecn = true` needs an AQM to decide where to mark: add \
                         `aqm = \"codel\"`, `aqm = \"step\"`, \"fq_codel\", \"pie\" or \"dualpi2\" (a drop-tail queue only \
                         drops when full, and a full queue drops even ECN-capable packets)"
                            .into(),
                    );
                }
                (None, None)
            }
            Aqm::Codel => {
                // RFC 8289 §4.2–4.3 defaults: target 5 ms, interval 100 ms.
                let target = t.target.map_or(5_000_000, |d| d.0);
                let interval = t.interval.map_or(100_000_000, |d| d.0);
                if target == 0 || interval == 0 {
                    return Err("CoDel `target` and `interval` must be positive".into());
                }
                (Some((target, interval)), None)
            }
            Aqm::Step => {
                let threshold = t.threshold.map_or(DEFAULT_STEP_THRESHOLD_NS, |d| d.0);
                if threshold == 0 {
                    return Err(
                        "queue `threshold` must be positive, e.g. \"1ms\" (the default)".into(),
                    );
                }
                (None, Some(threshold))
            }
            Aqm::FqCodel | Aqm::Pie | Aqm::DualPi2 => (None, None),
        };
        let discipline = discipline(aqm, &t)?;
        Ok(QueueConfig {
            limit: t.limit.0,
            codel,
            step_ns,
            ecn,
            discipline,
        })
    }
}

/// A positive duration key, or its default.
fn pos_dur(v: Option<Dur>, key: &str, default_ns: u64, aqm: Aqm) -> Result<u64, String> {
    match v {
        None => Ok(default_ns),
        Some(Dur(0)) => Err(format!(
            "queue `{key}` must be positive for `aqm = \"{}\"` (default {} ms)",
            aqm.name(),
            default_ns as f64 / 1e6
        )),
        Some(Dur(d)) => Ok(d),
    }
}

/// A finite number within `lo..=hi`, or its default.
fn num(v: Option<f64>, key: &str, default: f64, lo: f64, hi: f64, aqm: Aqm) -> Result<f64, String> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x >= lo && x <= hi && x > 0.0 => Ok(x),
        Some(x) => Err(format!(
            "queue `{key}` = {x} for `aqm = \"{}\"`: it must be a number above 0 and at most {hi} (default {default})",
            aqm.name()
        )),
    }
}

/// The dequeue-time discipline's parameters, RFC defaults where a key is absent.
fn discipline(aqm: Aqm, t: &QueueTable) -> Result<Option<Discipline>, String> {
    Ok(Some(match aqm {
        Aqm::None | Aqm::Codel | Aqm::Step => return Ok(None),
        // RFC 8290 §4.1-4.3 (and §5.1 of RFC 8289 for CoDel's defaults).
        Aqm::FqCodel => {
            let flows = t.flows.unwrap_or(1024);
            if !(1..=65536).contains(&flows) {
                return Err(format!(
                    "queue `flows` = {flows} for `aqm = \"fq_codel\"`: it must be 1 to 65536 (default 1024)"
                ));
            }
            let quantum = t.quantum.unwrap_or(1514);
            if !(64..=1_000_000).contains(&quantum) {
                return Err(format!(
                    "queue `quantum` = {quantum} bytes for `aqm = \"fq_codel\"`: it must be 64 to 1000000 (default 1514)"
                ));
            }
            Discipline::FqCodel {
                target_ns: pos_dur(t.target, "target", 5_000_000, aqm)?,
                interval_ns: pos_dur(t.interval, "interval", 100_000_000, aqm)?,
                flows: flows as u32,
                quantum: quantum as u32,
            }
        }
        // RFC 8033 §5.1 and §4.2: QDELAY_REF 15 ms, T_UPDATE 15 ms,
        // alpha 0.125 Hz, beta 1.25 Hz, MAX_BURST 150 ms.
        Aqm::Pie => Discipline::Pie {
            target_ns: pos_dur(t.target, "target", 15_000_000, aqm)?,
            tupdate_ns: pos_dur(t.tupdate, "tupdate", 15_000_000, aqm)?,
            alpha: num(t.alpha, "alpha", 0.125, 0.0, 100.0, aqm)?,
            beta: num(t.beta, "beta", 1.25, 0.0, 100.0, aqm)?,
            max_burst_ns: match t.max_burst {
                // A zero burst allowance is meaningful: no burst tolerance.
                Some(d) => d.0,
                None => 150_000_000,
            },
        },
        // RFC 9332 Appendix A.1: target 15 ms, Tupdate 16 ms, alpha 0.16 Hz,
        // beta 3.2 Hz, k = 2; §A.2's step at 1 ms for the L4S queue.
        Aqm::DualPi2 => Discipline::DualPi2 {
            target_ns: pos_dur(t.target, "target", 15_000_000, aqm)?,
            tupdate_ns: pos_dur(t.tupdate, "tupdate", 16_000_000, aqm)?,
            alpha: num(t.alpha, "alpha", 0.16, 0.0, 100.0, aqm)?,
            beta: num(t.beta, "beta", 3.2, 0.0, 100.0, aqm)?,
            coupling: num(t.coupling, "coupling", 2.0, 0.0, 100.0, aqm)?,
            l4s_threshold_ns: pos_dur(t.l4s_threshold, "l4s_threshold", 1_000_000, aqm)?,
            drop_on_overload: t.overload != Some(Overload::Overflow),
        },
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GilbertElliottTable {
    p: Prob,
    r: Prob,
    loss_good: Option<Prob>,
    loss_bad: Option<Prob>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LossTable {
    bernoulli: Option<Prob>,
    gilbert_elliott: Option<GilbertElliottTable>,
}

/// Random loss. In a scenario: a bare probability (`0.01` or `"1%"`) is
/// Bernoulli loss, the common case; a table picks the model explicitly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossConfig {
    /// Each packet lost independently with probability p.
    Bernoulli(f64),
    /// Two-state bursty loss: p = P(good→bad), r = P(bad→good) per packet.
    GilbertElliott {
        /// Good → bad transition probability.
        p: f64,
        /// Bad → good transition probability.
        r: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

impl<'de> Deserialize<'de> for LossConfig {
    /// Hand-written so the shorthand and the table each keep their own
    /// error message, which an untagged enum would lose.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LossConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a probability like 0.01 or \"1%\", or a table with one of `bernoulli`, `gilbert_elliott`",
                )
            }
            fn visit_f64<E: de::Error>(self, p: f64) -> Result<LossConfig, E> {
                Prob::try_from(p)
                    .map(|p| LossConfig::Bernoulli(p.0))
                    .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, p: i64) -> Result<LossConfig, E> {
                self.visit_f64(p as f64)
            }
            fn visit_u64<E: de::Error>(self, p: u64) -> Result<LossConfig, E> {
                self.visit_f64(p as f64)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<LossConfig, E> {
                crate::units::parse_probability(s)
                    .map(LossConfig::Bernoulli)
                    .map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LossConfig, A::Error> {
                let t = LossTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                LossConfig::try_from(t).map_err(de::Error::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl TryFrom<LossTable> for LossConfig {
    type Error = String;
    fn try_from(t: LossTable) -> Result<Self, String> {
        match (t.bernoulli, t.gilbert_elliott) {
            (Some(p), None) => Ok(LossConfig::Bernoulli(p.0)),
            (None, Some(g)) => {
                if g.r.0 == 0.0 {
                    return Err("gilbert_elliott.r is 0: the bad state would never end".into());
                }
                Ok(LossConfig::GilbertElliott {
                    p: g.p.0,
                    r: g.r.0,
                    loss_good: g.loss_good.map_or(0.0, |x| x.0),
                    loss_bad: g.loss_bad.map_or(1.0, |x| x.0),
                })
            }
            _ => Err("give exactly one of `bernoulli` or `gilbert_elliott`".into()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NormalTable {
    mean: Dur,
    sd: Dur,
    floor: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UniformTable {
    min: Dur,
    max: Dur,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JitterTable {
    normal: Option<NormalTable>,
    uniform: Option<UniformTable>,
    reorder: Option<bool>,
}

/// The distribution of extra per-packet delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JitterDist {
    /// max(floor, Normal(mean, sd)), ns.
    Normal {
        /// Mean, ns.
        mean_ns: u64,
        /// Standard deviation, ns.
        sd_ns: u64,
        /// Lower bound, ns.
        floor_ns: u64,
    },
    /// Uniform in [min, max], ns.
    Uniform {
        /// Lower bound.
        min_ns: u64,
        /// Upper bound.
        max_ns: u64,
    },
}

/// Per-packet delay jitter.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "JitterTable")]
pub struct JitterConfig {
    /// The distribution.
    pub dist: JitterDist,
    /// Whether a packet may overtake its predecessor.
    pub reorder: bool,
}

impl TryFrom<JitterTable> for JitterConfig {
    type Error = String;
    fn try_from(t: JitterTable) -> Result<Self, String> {
        let dist = match (t.normal, t.uniform) {
            (Some(n), None) => JitterDist::Normal {
                mean_ns: n.mean.0,
                sd_ns: n.sd.0,
                floor_ns: n.floor.map_or(0, |f| f.0),
            },
            (None, Some(u)) => {
                if u.max.0 < u.min.0 {
                    return Err("uniform.max is below uniform.min".into());
                }
                JitterDist::Uniform {
                    min_ns: u.min.0,
                    max_ns: u.max.0,
                }
            }
            _ => return Err("give exactly one of `normal` or `uniform`".into()),
        };
        Ok(JitterConfig {
            dist,
            reorder: t.reorder.unwrap_or(false),
        })
    }
}

/// A token-bucket policer.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicerConfig {
    /// Token rate.
    pub rate: Rate,
    /// Bucket depth (starts full). It must hold one packet, or no packet
    /// ever conforms; what "one packet" is depends on who sends over the
    /// link, which this crate does not know, so the loaders check it: the
    /// simulator against the largest packet its flows send (segment plus
    /// headers; ACKs on a reverse direction), the emulator against the
    /// MTU of its interfaces (1500 B), since real stacks fill it.
    pub bucket: ByteCount,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AggregationTable {
    interval: Option<Dur>,
    every: Option<u32>,
    max_hold: Option<Dur>,
}

/// Holding packets and releasing them in bursts.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "AggregationTable")]
pub enum AggregationConfig {
    /// Release at every multiple of the interval (ns).
    Interval(u64),
    /// Release when `every` are held, or when the oldest has waited `max_hold_ns`.
    Count {
        /// Batch size.
        every: u32,
        /// Longest hold.
        max_hold_ns: u64,
    },
}

impl TryFrom<AggregationTable> for AggregationConfig {
    type Error = String;
    fn try_from(t: AggregationTable) -> Result<Self, String> {
        match (t.interval, t.every, t.max_hold) {
            (Some(i), None, None) if i.0 > 0 => Ok(AggregationConfig::Interval(i.0)),
            (Some(_), None, None) => Err("interval must be positive, e.g. \"20ms\"".into()),
            (None, Some(every), Some(h)) if every >= 1 && h.0 > 0 => Ok(AggregationConfig::Count {
                every,
                max_hold_ns: h.0,
            }),
            (None, Some(_), Some(_)) => {
                Err("`every` must be at least 1 and `max_hold` positive".into())
            }
            _ => Err("give either `interval`, or both `every` and `max_hold`".into()),
        }
    }
}

/// One direction of a link, as written in a scenario.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionConfig {
    /// Bottleneck rate; none means unlimited.
    pub rate: Option<RateConfig>,
    /// One-way propagation delay.
    pub delay: Option<Dur>,
    /// Queue; default 1000 packets drop-tail.
    pub queue: Option<QueueConfig>,
    /// Random loss.
    pub loss: Option<LossConfig>,
    /// Per-packet delay jitter.
    pub jitter: Option<JitterConfig>,
    /// Token-bucket policer.
    pub policer: Option<PolicerConfig>,
    /// Release in bursts.
    pub ack_aggregation: Option<AggregationConfig>,
    /// Propagation delay that changes over time, in place of `delay`
    /// (see [`crate::delay_schedule`]). [`DirectionConfig::resolve`]
    /// leaves it out (its `delay_ns` is then 0): a user of the direction
    /// applies it with [`crate::ScheduledDelay`] to what leaves the queue.
    pub delay_schedule: Option<crate::DelaySchedule>,
}

/// The resolved rate: a constant, a schedule, or a loaded trace.
#[derive(Clone, Debug, PartialEq)]
pub enum RateSchedule {
    /// No bottleneck: packets pass without serialisation or queueing.
    Unlimited,
    /// Bits per second.
    Constant(f64),
    /// (from ns, bits/s), first at 0.
    Steps(Vec<(u64, f64)>),
    /// Square wave.
    Square {
        /// Low rate, bits/s.
        low: f64,
        /// High rate, bits/s.
        high: f64,
        /// Period, ns.
        period_ns: u64,
    },
    /// Delivery-opportunity times in ns within one period, and the period.
    Trace {
        /// Opportunity times, ascending, ns.
        opportunities_ns: Arc<Vec<u64>>,
        /// The trace repeats with this period, ns.
        period_ns: u64,
    },
}

impl RateSchedule {
    /// The highest rate the schedule reaches, bits/s: what a run's cost
    /// scales with. A trace counts its average rate; unlimited is infinite.
    pub fn peak_bps(&self) -> f64 {
        match self {
            RateSchedule::Unlimited => f64::INFINITY,
            RateSchedule::Constant(r) => *r,
            RateSchedule::Steps(s) => s.iter().map(|x| x.1).fold(0.0, f64::max),
            RateSchedule::Square { low, high, .. } => low.max(*high),
            RateSchedule::Trace {
                opportunities_ns,
                period_ns,
            } => {
                opportunities_ns.len() as f64 * TRACE_OPPORTUNITY_BYTES as f64 * 8.0 * 1e9
                    / (*period_ns).max(1) as f64
            }
        }
    }
}

/// A direction ready to run: every field checked and every file loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedDirection {
    /// Rate schedule.
    pub rate: RateSchedule,
    /// One-way propagation delay, ns.
    pub delay_ns: u64,
    /// Queue.
    pub queue: QueueConfig,
    /// Random loss.
    pub loss: Option<LossConfig>,
    /// Jitter.
    pub jitter: Option<JitterConfig>,
    /// Policer: (bytes/s, bucket bytes).
    pub policer: Option<(f64, u64)>,
    /// Aggregation.
    pub aggregation: Option<AggregationConfig>,
}

/// Reads a mahimahi trace: one integer millisecond timestamp per line, each
/// an opportunity to deliver 1500 bytes; blank lines are not allowed.
pub fn load_trace(path: &Path) -> Result<(Vec<u64>, u64), LinkError> {
    let field = "rate.trace".to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LinkError {
        field: field.clone(),
        message: format!(
            "cannot read `{}`: {e} (a relative path resolves against the scenario \
             file's directory, or the working directory for one given as text or a Python dict)",
            path.display()
        ),
    })?;
    let mut ops = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if ops.len() == MAX_TRACE_OPPORTUNITIES {
            return Err(LinkError {
                field,
                message: format!(
                    "{}: more than {MAX_TRACE_OPPORTUNITIES} delivery opportunities; the limit is {MAX_TRACE_OPPORTUNITIES} lines",
                    path.display()
                ),
            });
        }
        let t: u64 = line.trim().parse().map_err(|_| LinkError {
            field: field.clone(),
            message: format!(
                "{}:{}: `{line}` is not a whole number of milliseconds",
                path.display(),
                i + 1
            ),
        })?;
        // Timestamps past 10^12 ms (about 31 years) would overflow in ns.
        let t = t
            .checked_mul(1_000_000)
            .filter(|&ns| ns <= 1_000_000_000_000_000_000)
            .ok_or_else(|| LinkError {
                field: field.clone(),
                message: format!(
                    "{}:{}: `{line}` ms is too large; the limit is 1000000000000 ms",
                    path.display(),
                    i + 1
                ),
            })?;
        if ops.last().is_some_and(|&l| t < l) {
            return Err(LinkError {
                field,
                message: format!("{}:{}: timestamps must not decrease", path.display(), i + 1),
            });
        }
        ops.push(t);
    }
    let Some(&last) = ops.last() else {
        return Err(LinkError {
            field,
            message: format!("`{}` has no delivery opportunities", path.display()),
        });
    };
    if last == 0 {
        return Err(LinkError {
            field,
            message: format!(
                "`{}`: the last timestamp must be positive (it is the period)",
                path.display()
            ),
        });
    }
    Ok((ops, last))
}

impl DirectionConfig {
    /// Checks and loads everything; `base_dir` resolves relative trace paths.
    pub fn resolve(&self, base_dir: &Path) -> Result<ResolvedDirection, LinkError> {
        if self.delay.is_some() && self.delay_schedule.is_some() {
            return Err(LinkError {
                field: "delay_schedule".into(),
                message: "give either `delay` or `delay_schedule`, not both".into(),
            });
        }
        let rate = match &self.rate {
            None => RateSchedule::Unlimited,
            Some(RateConfig::Constant(r)) => RateSchedule::Constant(*r),
            Some(RateConfig::Steps(s)) => RateSchedule::Steps(s.clone()),
            Some(RateConfig::Square {
                low,
                high,
                period_ns,
            }) => RateSchedule::Square {
                low: *low,
                high: *high,
                period_ns: *period_ns,
            },
            Some(RateConfig::Trace(p)) => {
                let path = if p.is_absolute() {
                    p.clone()
                } else {
                    base_dir.join(p)
                };
                let (ops, period) = load_trace(&path)?;
                RateSchedule::Trace {
                    opportunities_ns: Arc::new(ops),
                    period_ns: period,
                }
            }
        };
        Ok(ResolvedDirection {
            rate,
            delay_ns: self.delay.map_or(0, |d| d.0),
            queue: self
                .queue
                .unwrap_or(QueueConfig::drop_tail(Size::Packets(1000))),
            loss: self.loss,
            jitter: self.jitter,
            policer: self.policer.map(|p| (p.rate.0 / 8.0, p.bucket.0)),
            aggregation: self.ack_aggregation,
        })
    }
}
