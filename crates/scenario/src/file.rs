//! The tables of a scenario file as written (`[[flow]]`, `[link]`,
//! `[access]`, the top level), before they are checked and built into a
//! simulation configuration (`build`).

use super::*;

/// One `[[flow]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowTable {
    pub(crate) name: Option<String>,
    pub(crate) algorithm: AlgName,
    pub(crate) start: Option<Dur>,
    pub(crate) stop: Option<Dur>,
    pub(crate) size: Option<Bytes>,
    pub(crate) extra_rtt: Option<Dur>,
    pub(crate) app_rate: Option<Rate>,
    pub(crate) app_rate_from: Option<Dur>,
    pub(crate) chunk_size: Option<Bytes>,
    pub(crate) chunk_every: Option<Dur>,
    pub(crate) ack: Option<AckName>,
    pub(crate) rcv_buffer: Option<Bytes>,
    pub(crate) rcv_autotuning: Option<RcvAutotuningName>,
    pub(crate) pacing: Option<PacingName>,
    pub(crate) tso_defer: Option<bool>,
    pub(crate) timestamps: Option<bool>,
    pub(crate) initial_burst: Option<i64>,
    pub(crate) handshake: Option<HandshakeName>,
    pub(crate) stack: Option<FlavourName>,
    pub(crate) count: Option<u32>,
    pub(crate) stagger: Option<Dur>,
    pub(crate) mss: Option<u64>,
    pub(crate) mss_change: Option<MssChangeTable>,
    pub(crate) header_bytes: Option<u64>,
    pub(crate) bbr: Option<BbrSwitches>,
    pub(crate) bbr3: Option<Bbr3Table>,
    pub(crate) jitter: Option<JitterParams>,
    pub(crate) cubic: Option<CubicSwitches>,
    pub(crate) ecn: Option<EcnSetting>,
    pub(crate) access: Option<AccessTable>,
    pub(crate) hops: Option<Vec<i64>>,
}

/// `mss_change = { at = "5s", mss = 1200 }`: the flow's segment size
/// changes while it runs.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MssChangeTable {
    pub(crate) at: Dur,
    pub(crate) mss: u64,
}

/// `[flow.access]`: a flow's own access link, each direction a table with
/// the keys of `[link.forward]` (rate, delay or delay_schedule, queue,
/// loss, jitter, policer, ack_aggregation), each meaning what it means
/// there. Data crosses `forward` before the first bottleneck hop; ACKs
/// cross `reverse` after the shared `[link.reverse]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessTable {
    pub(crate) forward: Option<link::DirectionConfig>,
    pub(crate) reverse: Option<link::DirectionConfig>,
}

/// `[link]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTable {
    pub(crate) forward: link::DirectionConfig,
    #[serde(default)]
    pub(crate) reverse: Option<link::DirectionConfig>,
    /// Bottleneck hops after `[link.forward]` (which is hop 0), in series:
    /// `[[link.hops]]` tables are hops 1, 2, ...
    #[serde(default)]
    pub(crate) hops: Option<Vec<link::DirectionConfig>>,
    /// The emulator's per-port paths; refused here with a pointer to
    /// `[flow.access]`.
    #[serde(default)]
    pub(crate) ports: Option<toml::Value>,
}

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) duration: Dur,
    pub(crate) seed: Option<u64>,
    pub(crate) sample_interval: Option<Dur>,
    pub(crate) output: Option<String>,
    pub(crate) link: LinkTable,
    #[serde(default)]
    pub(crate) flow: Vec<FlowTable>,
    pub(crate) sweep: Option<toml::Table>,
    /// Flow arrival processes.
    #[serde(default)]
    pub(crate) arrivals: Vec<workload::ArrivalsTable>,
    /// Unresponsive cross traffic.
    #[serde(default)]
    pub(crate) cross: Vec<workload::CrossTable>,
    /// A conformance case's expectations (`bbrlab conformance` reads
    /// them); the simulator runs the case's path and workload as they
    /// are, with the flow's own algorithm, so a case file is a scenario
    /// `bbrlab sim` takes too (with `--qlog`, say).
    #[serde(default, rename = "conformance")]
    pub(crate) _conformance: Option<ConformanceTable>,
}

/// `[conformance]`, keys only: `bbrlab conformance` reads the values and
/// checks them (`claims::conformance::case`), but a misspelt key would be
/// passed over by every other command that loads the file (`bbrlab sim`,
/// say), and a case run there would seem to carry an expectation it does
/// not. So the keys are checked wherever the file is loaded; the values'
/// types are left to the suite (a test there keeps the two lists alike).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // the values are the suite's to read
pub struct ConformanceTable {
    id: Option<toml::Value>,
    title: Option<toml::Value>,
    section: Option<toml::Value>,
    grid: Option<toml::Value>,
    buffer_bdp: Option<toml::Value>,
    rtts: Option<toml::Value>,
    min_seconds: Option<toml::Value>,
    negative: Option<toml::Value>,
    checks: Option<Vec<ConformanceCheckTable>>,
}

/// One `[[conformance.checks]]`, keys only (see [`ConformanceTable`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // the values are the suite's to read
pub struct ConformanceCheckTable {
    check: Option<toml::Value>,
    why: Option<toml::Value>,
    state: Option<toml::Value>,
    next: Option<toml::Value>,
    within: Option<toml::Value>,
    from: Option<toml::Value>,
    to: Option<toml::Value>,
    bdp: Option<toml::Value>,
    packets: Option<toml::Value>,
    fraction: Option<toml::Value>,
    mbps: Option<toml::Value>,
    rtt: Option<toml::Value>,
}
