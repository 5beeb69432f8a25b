//! Scenarios written by code: typed values in, a scenario file out.
//!
//! Commands that make scenarios for their own runs (validate's paths, the
//! benchmark's dumbbell, the jitter sweeps' link, the studies) used to
//! assemble the file's text with `format!`, each spelling the tables, keys
//! and units again. Here they are spelled once: a [`ScenarioBuilder`]
//! holds durations as [`Duration`], rates in bit/s and queues in packets,
//! and writes them through the `toml` serializer (which quotes and escapes
//! what a name holds) in units the parser reads back to the same value
//! ([`rate_text`], [`duration_text`]). The text is what the run directory
//! keeps (`scenario.toml`), so a reader sees what ran, and
//! [`ScenarioBuilder::parse`] runs it through the same checks as a file.
//!
//! The builder covers what those commands set; a key it has no method for
//! is set with [`Flow::set`] or [`Direction::set`], still typed as TOML.

use std::path::Path;
use std::time::Duration;
use toml::{Table, Value};

/// A rate as the parser reads it back exactly: in the largest of Gbit,
/// Mbit or kbit that holds it as a whole number, else in bit (Rust prints
/// an `f64` with the fewest digits that read back to the same value).
pub fn rate_text(bps: f64) -> String {
    for (unit, m) in [("Gbit", 1e9), ("Mbit", 1e6), ("kbit", 1e3)] {
        let v = bps / m;
        if v.fract() == 0.0 && v * m == bps {
            return format!("{v}{unit}");
        }
    }
    format!("{bps}bit")
}

/// A duration in the largest of s, ms or us that holds it as a whole
/// number, else in ns: read back to the same nanosecond.
pub fn duration_text(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, m) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns.is_multiple_of(m) {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}

/// Milliseconds given as a float, rounded to the nanosecond as the parser
/// rounds `"{ms}ms"` (`link::units::parse_duration_ns`), so a path
/// described in ms (an RTT of 2.5 ms, half of it each way) gives the
/// durations a file with those numbers would.
pub fn millis(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1e6).round() as u64)
}

/// A queue: a limit in packets, optionally CoDel and ECN marking.
#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    limit_packets: u64,
    codel: bool,
    ecn: bool,
}

impl Queue {
    /// Drop-tail, `limit_packets` long.
    pub fn packets(limit_packets: u64) -> Self {
        Queue {
            limit_packets,
            codel: false,
            ecn: false,
        }
    }

    /// CoDel with its default target and interval (RFC 8289's 5 ms and
    /// 100 ms) in front of the same limit.
    pub fn codel(mut self) -> Self {
        self.codel = true;
        self
    }

    /// Marks ECN-capable packets where it would drop them.
    pub fn ecn(mut self) -> Self {
        self.ecn = true;
        self
    }

    fn value(&self) -> Value {
        let mut t = Table::new();
        t.insert("limit".into(), format!("{}pkt", self.limit_packets).into());
        if self.codel {
            t.insert("aqm".into(), "codel".into());
        }
        if self.ecn {
            t.insert("ecn".into(), true.into());
        }
        Value::Table(t)
    }
}

/// Per-packet delay jitter, normally distributed.
#[derive(Clone, Debug, PartialEq)]
pub struct Jitter {
    /// Mean extra delay.
    pub mean: Duration,
    /// Standard deviation.
    pub sd: Duration,
    /// Least extra delay (the distribution is cut there).
    pub floor: Duration,
    /// Whether a packet may overtake one sent before it.
    pub reorder: bool,
}

impl Jitter {
    /// The direction's `jitter` value (`{ normal = { mean, sd, floor },
    /// reorder }`), also for an edit of a scenario's text
    /// ([`crate::edit::set_keys`]).
    pub fn to_value(&self) -> Value {
        let mut normal = Table::new();
        normal.insert("mean".into(), duration_text(self.mean).into());
        normal.insert("sd".into(), duration_text(self.sd).into());
        normal.insert("floor".into(), duration_text(self.floor).into());
        let mut t = Table::new();
        t.insert("normal".into(), Value::Table(normal));
        t.insert("reorder".into(), self.reorder.into());
        Value::Table(t)
    }
}

/// One direction of the link (`[link.forward]`, `[link.reverse]`, a port
/// rule's `forward`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Direction(Table);

impl Direction {
    /// No rate limit, no delay, the default queue.
    pub fn new() -> Self {
        Direction(Table::new())
    }

    /// The bottleneck rate, bit/s.
    pub fn rate_bps(self, bps: f64) -> Self {
        self.set("rate", rate_text(bps))
    }

    /// One-way propagation delay.
    pub fn delay(self, d: Duration) -> Self {
        self.set("delay", duration_text(d))
    }

    /// The queue.
    pub fn queue(self, q: Queue) -> Self {
        self.set("queue", q.value())
    }

    /// Random (Bernoulli) loss with probability `p`.
    pub fn loss(self, p: f64) -> Self {
        let mut t = Table::new();
        t.insert("bernoulli".into(), p.into());
        self.set("loss", t)
    }

    /// Per-packet delay jitter.
    pub fn jitter(self, j: &Jitter) -> Self {
        self.set("jitter", j.to_value())
    }

    /// Any other key of a direction's table.
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }
}

/// One `[[flow]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow(Table);

impl Flow {
    /// A flow of `algorithm` (a name `[[flow]] algorithm` accepts).
    pub fn new(algorithm: &str) -> Self {
        let mut t = Table::new();
        t.insert("algorithm".into(), algorithm.into());
        Flow(t)
    }

    /// The name outputs give it.
    pub fn name(self, name: &str) -> Self {
        self.set("name", name)
    }

    /// When it starts.
    pub fn start(self, at: Duration) -> Self {
        self.set("start", duration_text(at))
    }

    /// Propagation delay it adds to the link's round trip.
    pub fn extra_rtt(self, d: Duration) -> Self {
        self.set("extra_rtt", duration_text(d))
    }

    /// The pacer (`exact`, `quantum` or `off`).
    pub fn pacing(self, pacing: &str) -> Self {
        self.set("pacing", pacing)
    }

    /// Whether the sender waits, as Linux's does, for the ACK that lets
    /// a whole TSO packet out (`pacing` `quantum` or `off` only).
    pub fn tso_defer(self, on: bool) -> Self {
        self.set("tso_defer", on)
    }

    /// How many of its first packets leave back to back before pacing
    /// starts (Linux TCP: 10).
    pub fn initial_burst(self, packets: u32) -> Self {
        self.set("initial_burst", i64::from(packets))
    }

    /// How the flow opens its connection (`none` or `tcp`).
    pub fn handshake(self, handshake: &str) -> Self {
        self.set("handshake", handshake)
    }

    /// The receiver's ACK policy (`every`, `delayed`, `linux`, ...).
    pub fn ack(self, ack: &str) -> Self {
        self.set("ack", ack)
    }

    /// With Linux's receiver: which kernel's rule grows its window's
    /// clamp (`pre-6.16` or `6.16`).
    pub fn rcv_autotuning(self, rule: &str) -> Self {
        self.set("rcv_autotuning", rule)
    }

    /// Payload and header bytes per packet.
    pub fn packet(self, mss: u64, header_bytes: u64) -> Self {
        self.set("mss", mss as i64)
            .set("header_bytes", header_bytes as i64)
    }

    /// ECN-capable (`ecn = true`).
    pub fn ecn(self, on: bool) -> Self {
        self.set("ecn", on)
    }

    /// `key = value` in the flow's sub-table `[flow.<table>]` (`bbr3`,
    /// `cubic`, ...).
    pub fn tune(mut self, table: &str, key: &str, value: impl Into<Value>) -> Self {
        let t = self
            .0
            .entry(table.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(t) = t {
            t.insert(key.into(), value.into());
        }
        self
    }

    /// Any other key of `[[flow]]`.
    pub fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }
}

/// A scenario file in the making.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScenarioBuilder {
    comment: Vec<String>,
    top: Table,
    forward: Direction,
    reverse: Option<Direction>,
    ports: Vec<Value>,
    flows: Vec<Flow>,
    sweep: Table,
}

impl ScenarioBuilder {
    /// A scenario with the link's forward direction; everything else is
    /// optional (the emulator reads only `[link]` and `seed`).
    pub fn new(forward: Direction) -> Self {
        ScenarioBuilder {
            forward,
            ..Default::default()
        }
    }

    /// The commonest path: one bottleneck of `rate_bps` with `queue` and
    /// optional random `loss` forward, `one_way` delay each way and no
    /// rate limit on the ACKs' way back.
    pub fn bottleneck(rate_bps: f64, one_way: Duration, queue: Queue, loss: Option<f64>) -> Self {
        let mut forward = Direction::new()
            .rate_bps(rate_bps)
            .delay(one_way)
            .queue(queue);
        if let Some(p) = loss {
            forward = forward.loss(p);
        }
        ScenarioBuilder::new(forward).reverse(Direction::new().delay(one_way))
    }

    /// A comment line at the top of the file (who wrote it, for what).
    pub fn comment(mut self, line: &str) -> Self {
        self.comment.push(line.to_string());
        self
    }

    /// `name`.
    pub fn name(self, name: &str) -> Self {
        self.top("name", name)
    }

    /// `duration`: how long the simulation runs.
    pub fn duration(self, d: Duration) -> Self {
        self.top("duration", duration_text(d))
    }

    /// `sample_interval` of the time series (zero: none).
    pub fn sample_interval(self, d: Duration) -> Self {
        self.top("sample_interval", duration_text(d))
    }

    /// `seed` of the link's random processes.
    pub fn seed(self, seed: u64) -> Self {
        self.top("seed", seed as i64)
    }

    /// `[link.reverse]` (without it, the parser's default).
    pub fn reverse(mut self, d: Direction) -> Self {
        self.reverse = Some(d);
        self
    }

    /// A `[[link.ports]]` rule (the emulator's per-port path): what
    /// traffic to and from `port` crosses in addition to the link.
    pub fn port(mut self, port: u16, forward: Direction, reverse: Direction) -> Self {
        let mut t = Table::new();
        t.insert("port".into(), i64::from(port).into());
        t.insert("forward".into(), Value::Table(forward.0));
        t.insert("reverse".into(), Value::Table(reverse.0));
        self.ports.push(Value::Table(t));
        self
    }

    /// A `[[flow]]`, after those added before it.
    pub fn flow(mut self, f: Flow) -> Self {
        self.flows.push(f);
        self
    }

    /// A `[sweep]` key: a run per value (`"flow.algorithm"`,
    /// `"flow.0.algorithm"`, `"link.forward.rate"`, ...).
    pub fn sweep<V: Into<Value>>(mut self, key: &str, values: impl IntoIterator<Item = V>) -> Self {
        let values = values.into_iter().map(Into::into).collect();
        self.sweep.insert(key.into(), Value::Array(values));
        self
    }

    fn top(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.top.insert(key.into(), value.into());
        self
    }

    /// The file's text: the comment lines, the top-level keys, `[link]`,
    /// the flows in order, then `[sweep]`.
    pub fn to_toml(&self) -> String {
        let mut doc = self.top.clone();
        let mut link = Table::new();
        link.insert("forward".into(), Value::Table(self.forward.0.clone()));
        if let Some(r) = &self.reverse {
            link.insert("reverse".into(), Value::Table(r.0.clone()));
        }
        if !self.ports.is_empty() {
            link.insert("ports".into(), Value::Array(self.ports.clone()));
        }
        doc.insert("link".into(), Value::Table(link));
        if !self.flows.is_empty() {
            let flows = self.flows.iter().map(|f| Value::Table(f.0.clone()));
            doc.insert("flow".into(), Value::Array(flows.collect()));
        }
        if !self.sweep.is_empty() {
            doc.insert("sweep".into(), Value::Table(self.sweep.clone()));
        }
        let mut text: String = self.comment.iter().map(|c| format!("# {c}\n")).collect();
        // A table of strings, numbers, booleans and tables always
        // serialises; the fallback only keeps this total.
        text.push_str(&toml::to_string(&doc).unwrap_or_else(|e| format!("# not written: {e}\n")));
        text
    }

    /// The scenario, through the parser's checks as if read from `file`
    /// (the name its errors give).
    pub fn parse(&self, file: &str) -> Result<crate::Scenario, crate::ScenarioError> {
        crate::parse(&self.to_toml(), file, Path::new("."), Path::new(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_durations_read_back_to_the_same_value() {
        for bps in [
            64e3,
            1.5e6,
            2e7,
            2.5e9,
            1e10,
            33_333_333.333_333_332,
            1.0,
            999.0,
        ] {
            let t = rate_text(bps);
            assert_eq!(link::units::parse_rate_bps(&t).unwrap(), bps, "{t}");
        }
        assert_eq!(rate_text(2e7), "20Mbit");
        assert_eq!(rate_text(2_500_000.0), "2500kbit");
        for ns in [
            0,
            1,
            999,
            1_000,
            2_500_000,
            20_000_000,
            10_013_333_000,
            3_000_000_000,
        ] {
            let t = duration_text(Duration::from_nanos(ns));
            assert_eq!(link::units::parse_duration_ns(&t).unwrap(), ns, "{t}");
        }
        assert_eq!(duration_text(Duration::from_millis(20)), "20ms");
        assert_eq!(duration_text(Duration::from_secs(30)), "30s");
        // As the parser rounds "2.5ms" and "10013.333ms".
        for ms in [2.5, 10013.333, 0.1, 20.0] {
            let want = link::units::parse_duration_ns(&format!("{ms}ms")).unwrap();
            assert_eq!(millis(ms).as_nanos() as u64, want, "{ms}");
        }
    }

    #[test]
    fn a_built_scenario_parses_to_what_it_says() {
        let b = ScenarioBuilder::new(
            Direction::new()
                .rate_bps(2e7)
                .delay(Duration::from_millis(20))
                .queue(Queue::packets(67).codel().ecn())
                .loss(0.01)
                .jitter(&Jitter {
                    mean: Duration::from_millis(4),
                    sd: Duration::from_millis(2),
                    floor: Duration::ZERO,
                    reorder: false,
                }),
        )
        .comment("Written by a test.")
        .name("a \"quoted\" name")
        .duration(Duration::from_secs(3))
        .sample_interval(Duration::from_millis(10))
        .seed(7)
        .reverse(Direction::new().delay(Duration::from_millis(20)))
        .flow(
            Flow::new("bbr3")
                .start(millis(1.5))
                .pacing("quantum")
                .ack("linux")
                .tune("bbr3", "profile", "linux-v3"),
        )
        .flow(
            Flow::new("cubic")
                .name("second")
                .extra_rtt(Duration::from_millis(10)),
        );
        let text = b.to_toml();
        assert!(text.starts_with("# Written by a test.\n"), "{text}");
        let sc = b.parse("<built>").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(sc.name, "a \"quoted\" name");
        let c = &sc.runs[0].config;
        assert_eq!(c.duration_ns, 3_000_000_000);
        assert_eq!(c.seed, 7);
        assert_eq!(c.sample_interval_ns, 10_000_000);
        assert_eq!(c.forward.rate, link::RateSchedule::Constant(2e7));
        assert_eq!(c.forward.delay_ns, 20_000_000);
        assert_eq!(c.reverse.delay_ns, 20_000_000);
        assert_eq!(c.flows.len(), 2);
        assert_eq!(c.flows[0].start_ns, 1_500_000);
        assert_eq!(c.flows[1].name, "second");
        assert_eq!(c.flows[1].extra_rtt_ns, 10_000_000);
    }

    #[test]
    fn a_sweep_gives_a_run_per_value() {
        let sc = ScenarioBuilder::new(Direction::new().rate_bps(1e7))
            .duration(Duration::from_secs(1))
            .flow(Flow::new("bbr"))
            .flow(Flow::new("cubic"))
            .sweep("flow.0.algorithm", ["bbr", "bbr3", "reno"])
            .parse("<sweep>")
            .unwrap();
        let algs: Vec<_> = sc
            .runs
            .iter()
            .map(|r| r.config.flows[0].cc.algorithm.name())
            .collect();
        assert_eq!(algs, ["bbr", "bbr3", "reno"]);
        assert!(sc
            .runs
            .iter()
            .all(|r| r.config.flows[1].cc.algorithm.name() == "cubic"));
    }

    #[test]
    fn a_port_rule_reaches_the_emulators_path() {
        let text = ScenarioBuilder::new(Direction::new().rate_bps(1e7))
            .port(
                5201,
                Direction::new().delay(Duration::from_millis(5)),
                Direction::new().delay(Duration::from_millis(5)),
            )
            .to_toml();
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.toml");
        std::fs::write(&f, &text).unwrap();
        let path = crate::path::load_link(&f).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(path.ports.len(), 1);
        assert_eq!(path.ports[0].port, 5201);
    }
}
