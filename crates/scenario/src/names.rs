//! The names scenario files use for algorithms, receivers, pacers and
//! each algorithm's switches, checked as they are read (an unknown name is
//! an error that lists the known ones).

use super::*;

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
    /// Acknowledge every packet (the default for a QUIC stack's own
    /// controller, and for every flow before 2026-12-02).
    Every,
    /// Linux-like delayed ACKs (every 2nd packet or 40 ms).
    Delayed,
    /// Linux's receiver: quick ACKs, delayed ACKs, SACK compression (the
    /// default for bbrlab's algorithms on the Linux stack).
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

/// How Linux's receiver raises its window's clamp (`rcv_autotuning =
/// "pre-6.16" | "6.16"`): the rule of the kernels before 6.16 (the
/// default) or of 6.16 and later.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum RcvAutotuningName {
    #[serde(rename = "pre-6.16")]
    Pre6_16,
    #[serde(rename = "6.16")]
    Linux6_16,
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

/// How a flow opens its connection (`handshake = "none" | "tcp"`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum HandshakeName {
    /// Data from the start.
    None,
    /// TCP's SYN exchange first ([`netsim::Handshake::Tcp`]).
    Tcp,
}

/// `[flow.bbr]`: switches for BBR's mechanisms. `flavour` picks a whole
/// set first; the other keys then override single switches.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BbrSwitches {
    pub(crate) flavour: Option<FlavourName>,
    pub(crate) lt_bw: Option<bool>,
    pub(crate) extra_acked: Option<bool>,
    pub(crate) probe_rtt: Option<bool>,
    pub(crate) idle_restart: Option<bool>,
    pub(crate) packet_conservation: Option<bool>,
    pub(crate) quantization_budget: Option<bool>,
    pub(crate) min_cwnd: Option<Bytes>,
    pub(crate) ack_aggregation: Option<FlavourName>,
    pub(crate) min_rtt_samples: Option<MinRttName>,
    pub(crate) bw_window_follows_cycle: Option<bool>,
    pub(crate) recovery: Option<RecoveryName>,
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
    pub(crate) alpha: Option<f64>,
    pub(crate) beta: Option<f64>,
    pub(crate) gamma: Option<f64>,
    pub(crate) stats: Option<JitterStatsName>,
    pub(crate) cadence: Option<JitterCadenceName>,
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
    pub(crate) profile: Option<Bbr3ProfileName>,
    pub(crate) signals: Option<Bbr3SignalsName>,
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
    pub(crate) hystart: Option<bool>,
    pub(crate) hystart_variant: Option<HyStartVariantName>,
    pub(crate) avoidance: Option<CubicAvoidanceName>,
    pub(crate) fast_convergence: Option<bool>,
    pub(crate) reno_friendly: Option<bool>,
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
