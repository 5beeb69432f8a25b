//! What one scenario may ask of the simulator: no input file may make
//! `bbrlab sim` run for ever, exhaust memory or fill the disk.
//!
//! Each limit comes from a cost the simulator actually pays:
//! - **time** grows with the packets simulated, about the forward rate ×
//!   duration ÷ packet size (every data packet costs a few events: send,
//!   arrival, its ACK); this machine simulates a few million packets a
//!   second, so [`MAX_PACKETS_PER_RUN`] is about a minute of one core;
//! - **memory** grows with the packets the path can hold at once: the
//!   bandwidth-delay product plus the queues ([`MAX_PATH_PACKETS`]; C2's
//!   path holds 183 thousand and peaks at 86 MiB, under 500 bytes each
//!   across sender, event queue and link, so about 0.5 GB at the limit);
//! - **disk** grows with time-series rows: (duration ÷ sample_interval) ×
//!   (flows + 2 link directions), about 100 bytes each
//!   ([`MAX_ROWS_PER_RUN`], about 0.5 GB).
//!
//! A sweep multiplies all three, so its runs are bounded together too.
//! Every error says which limit was hit, by how much, and what to change.

use link::units::Size;
use link::{JitterDist, RateSchedule, ResolvedDirection};
use netsim::{App, SimConfig};

/// Longest simulated duration: one day.
pub const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;
/// Longest delay, hold, start or stagger anywhere in a scenario: one day
/// (longer ones cannot matter in a run of at most a day, and sums of them
/// stay far from overflowing nanosecond arithmetic).
pub const MAX_TIME_NS: u64 = MAX_DURATION_NS;
/// Lowest link rate the simulator runs: 1 kbit/s (a 1500-byte packet takes
/// 12 s to send).
pub const MIN_LINK_RATE_BPS: f64 = 1e3;
/// Most data packets one run may simulate (C2, 10 Gbit/s for 30 s, is 25
/// million).
pub const MAX_PACKETS_PER_RUN: f64 = 1e8;
/// Most data packets all runs of a sweep may simulate together.
pub const MAX_PACKETS_TOTAL: f64 = 1e9;
/// Most packets the path may hold at once: bandwidth-delay product plus
/// the queues of both directions.
pub const MAX_PATH_PACKETS: f64 = 1e6;
/// Most time-series rows (flows.csv plus link.csv) of one run.
pub const MAX_ROWS_PER_RUN: f64 = 5e6;
/// Most time-series rows of all runs of a sweep together (about 2 GB).
pub const MAX_ROWS_TOTAL: f64 = 2e7;
/// Most flows in one run.
pub const MAX_FLOWS: usize = 1000;
/// Most runs in one sweep.
pub const MAX_RUNS: usize = 10_000;

/// `BBRLAB_LIMIT_SCALE` (a number in (0, 1]) scales the packet, path and
/// row limits down, never up: the property test runs thousands of mutated
/// scenarios, and with the limits scaled down each accepted run is small,
/// while every cost still has to pass through these checks.
fn scale() -> f64 {
    std::env::var("BBRLAB_LIMIT_SCALE")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|x| *x > 0.0 && *x <= 1.0)
        .unwrap_or(1.0)
}

/// A failed check: the field it concerns and the message.
pub type LimitError = (String, String);

fn fail<T>(field: &str, message: String) -> Result<T, LimitError> {
    Err((field.to_string(), message))
}

/// The smallest packet the forward link carries, bytes on the wire.
fn min_wire_bytes(cfg: &SimConfig) -> f64 {
    cfg.flows
        .iter()
        .map(|f| {
            let mss = f
                .mss_change
                .map_or(f.cc.mss_bytes, |c| c.mss.min(f.cc.mss_bytes));
            mss as f64 + f.header_bytes as f64
        })
        .fold(f64::INFINITY, f64::min)
        .max(1.0)
}

/// Data packets a run may simulate at most: the forward link's peak rate
/// for the whole duration, in the smallest packets.
pub fn packets(cfg: &SimConfig) -> f64 {
    let peak = cfg.forward.rate.peak_bps();
    let one = peak * cfg.duration_ns as f64 / 1e9 / 8.0 / min_wire_bytes(cfg);
    let t = &cfg.topology;
    let access = cfg
        .flows
        .iter()
        .any(|f| f.access_forward.is_some() || f.access_reverse.is_some());
    if t.hops.is_empty() && !access {
        return one;
    }
    // A parking lot or access links: each packet is simulated once per
    // link it crosses, and the fastest limited hop bounds the rate.
    let fastest = t
        .hops
        .iter()
        .map(|h| h.direction.rate.peak_bps())
        .filter(|r| r.is_finite())
        .fold(peak, f64::max);
    let links = t.hops.len() as f64 + 1.0 + if access { 1.0 } else { 0.0 };
    fastest * cfg.duration_ns as f64 / 1e9 / 8.0 / min_wire_bytes(cfg) * links
}

/// The longest delay a scheduled direction gives (0 for none).
fn schedule_max_ns(s: &Option<link::DelaySchedule>) -> f64 {
    s.as_ref().map_or(0.0, |s| s.max_delay_ns() as f64)
}

/// Checks what `check_run` checks of the shared directions for the hops
/// after the first and the flows' access links: the lowest rate, times,
/// and that every flow's data crosses a link with a rate.
fn check_topology(cfg: &SimConfig) -> Result<(), LimitError> {
    let mut segments: Vec<(String, &netsim::Segment)> = cfg
        .topology
        .hops
        .iter()
        .enumerate()
        .map(|(k, h)| (format!("link.hops[{k}]"), h))
        .collect();
    for (i, f) in cfg.flows.iter().enumerate() {
        for (side, a) in [
            ("forward", &f.access_forward),
            ("reverse", &f.access_reverse),
        ] {
            if let Some(a) = a {
                segments.push((format!("flow[{i}].access.{side}"), a));
            }
        }
    }
    for (name, seg) in &segments {
        let d = &seg.direction;
        if let Some(r) = min_rate_bps(&d.rate) {
            if r < MIN_LINK_RATE_BPS {
                return fail(
                    &format!("{name}.rate"),
                    format!("{r} bit/s; the simulator's lowest link rate is 1 kbit/s (`1kbit`)"),
                );
            }
        }
        for (field, v) in [
            ("delay", d.delay_ns as f64),
            ("jitter", jitter_max_ns(d)),
            ("ack_aggregation", hold_ns(d)),
        ] {
            if v > MAX_TIME_NS as f64 {
                return fail(
                    &format!("{name}.{field}"),
                    format!(
                        "{:.0} s; the limit is {} s (one day, the longest run)",
                        v / 1e9,
                        MAX_TIME_NS / 1_000_000_000
                    ),
                );
            }
        }
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        let (first, last) = f.hops.unwrap_or((0, cfg.topology.hops.len()));
        let limited = (first..=last).any(|k| {
            let d = if k == 0 {
                &cfg.forward
            } else {
                &cfg.topology.hops[k - 1].direction
            };
            d.rate != RateSchedule::Unlimited
        }) || f
            .access_forward
            .as_ref()
            .is_some_and(|a| a.direction.rate != RateSchedule::Unlimited);
        if !limited {
            return fail(
                &format!("flow[{i}].hops"),
                "the flow's data crosses no link with a rate, so its sending rate grows without bound; give its hops or its `[flow.access.forward]` a `rate`".into(),
            );
        }
    }
    Ok(())
}

/// Time-series rows a run writes: one per flow and per link direction at
/// each sample.
pub fn rows(cfg: &SimConfig) -> f64 {
    if cfg.sample_interval_ns == 0 {
        return 0.0;
    }
    let samples = (cfg.duration_ns / cfg.sample_interval_ns) as f64 + 1.0;
    samples * (cfg.flows.len() as f64 + 2.0 + cfg.topology.hops.len() as f64)
}

/// The longest extra delay jitter can add, for memory estimates (a
/// Normal's draws beyond six standard deviations are negligible).
fn jitter_max_ns(d: &ResolvedDirection) -> f64 {
    match d.jitter.map(|j| j.dist) {
        None => 0.0,
        Some(JitterDist::Normal {
            mean_ns,
            sd_ns,
            floor_ns,
        }) => (mean_ns as f64 + 6.0 * sd_ns as f64).max(floor_ns as f64),
        Some(JitterDist::Uniform { max_ns, .. }) => max_ns as f64,
    }
}

fn hold_ns(d: &ResolvedDirection) -> f64 {
    match d.aggregation {
        None => 0.0,
        Some(link::AggregationConfig::Interval(i)) => i as f64,
        Some(link::AggregationConfig::Count { max_hold_ns, .. }) => max_hold_ns as f64,
    }
}

/// The lowest rate a direction's schedule reaches (None for unlimited
/// and for traces, whose rate is a count of opportunities).
fn min_rate_bps(r: &RateSchedule) -> Option<f64> {
    match r {
        RateSchedule::Constant(x) => Some(*x),
        RateSchedule::Steps(s) => Some(s.iter().map(|x| x.1).fold(f64::INFINITY, f64::min)),
        RateSchedule::Square { low, high, .. } => Some(low.min(*high)),
        RateSchedule::Unlimited | RateSchedule::Trace { .. } => None,
    }
}

fn check_times(name: &str, d: &ResolvedDirection) -> Result<(), LimitError> {
    let mut times = vec![("delay", d.delay_ns as f64)];
    times.push(("jitter", jitter_max_ns(d)));
    times.push(("ack_aggregation", hold_ns(d)));
    if let Some((t, i)) = d.queue.codel {
        times.push(("queue.target", t as f64));
        times.push(("queue.interval", i as f64));
    }
    if let Some(t) = d.queue.step_ns {
        times.push(("queue.threshold", t as f64));
    }
    match d.queue.discipline {
        None => {}
        Some(link::Discipline::FqCodel {
            target_ns,
            interval_ns,
            ..
        }) => {
            times.push(("queue.target", target_ns as f64));
            times.push(("queue.interval", interval_ns as f64));
        }
        Some(link::Discipline::Pie {
            target_ns,
            tupdate_ns,
            max_burst_ns,
            ..
        }) => {
            times.push(("queue.target", target_ns as f64));
            times.push(("queue.tupdate", tupdate_ns as f64));
            times.push(("queue.max_burst", max_burst_ns as f64));
        }
        Some(link::Discipline::DualPi2 {
            target_ns,
            tupdate_ns,
            l4s_threshold_ns,
            ..
        }) => {
            times.push(("queue.target", target_ns as f64));
            times.push(("queue.tupdate", tupdate_ns as f64));
            times.push(("queue.l4s_threshold", l4s_threshold_ns as f64));
        }
    }
    for (field, v) in times {
        if v > MAX_TIME_NS as f64 {
            return fail(
                &format!("link.{name}.{field}"),
                format!(
                    "{:.0} s; the limit is {} s (one day, the longest run)",
                    v / 1e9,
                    MAX_TIME_NS / 1_000_000_000
                ),
            );
        }
    }
    Ok(())
}

/// Checks one run against every limit. `forward_rate_given` says whether
/// the file set `link.forward.rate` (an unset rate means unlimited).
pub fn check_run(cfg: &SimConfig, forward_rate_given: bool) -> Result<(), LimitError> {
    let (max_packets, max_path, max_rows) = (
        MAX_PACKETS_PER_RUN * scale(),
        MAX_PATH_PACKETS * scale(),
        MAX_ROWS_PER_RUN * scale(),
    );
    if cfg.duration_ns > MAX_DURATION_NS {
        return fail(
            "duration",
            format!(
                "{:.0} s; the limit is {} s (one day)",
                cfg.duration_ns as f64 / 1e9,
                MAX_DURATION_NS / 1_000_000_000
            ),
        );
    }
    if !forward_rate_given || cfg.forward.rate == RateSchedule::Unlimited {
        return fail(
            "link.forward.rate",
            "missing: the simulator needs a bottleneck rate for the forward (data) direction, e.g. `rate = \"10mbit\"`; without one the senders' rate grows without bound and the run cannot end (only the reverse direction may be left unlimited)".into(),
        );
    }
    for (name, d) in [("forward", &cfg.forward), ("reverse", &cfg.reverse)] {
        if let Some(r) = min_rate_bps(&d.rate) {
            if r < MIN_LINK_RATE_BPS {
                return fail(
                    &format!("link.{name}.rate"),
                    format!("{r} bit/s; the simulator's lowest link rate is 1 kbit/s (`1kbit`)"),
                );
            }
        }
        check_times(name, d)?;
    }
    check_topology(cfg)?;
    if cfg.flows.len() > MAX_FLOWS {
        return fail(
            "flow",
            format!(
                "{} flows; the limit is {MAX_FLOWS} in one run",
                cfg.flows.len()
            ),
        );
    }
    // A byte-limited queue smaller than a packet drops every packet.
    let largest = crate::packet_fit::largest_data_packet(cfg.flows.iter());
    if let Size::Bytes(b) = cfg.forward.queue.limit {
        if b < largest {
            return fail(
                "link.forward.queue.limit",
                format!("{b} B holds no packet: the largest data packet is {largest} B on the wire (mss, or mss_change's if larger, + header_bytes); give at least `{largest}B`, or a packet count like `100pkt`"),
            );
        }
    }
    let ack = netsim::engine::ACK_BYTES as u64;
    if let Size::Bytes(b) = cfg.reverse.queue.limit {
        if b < ack && cfg.reverse.rate != RateSchedule::Unlimited {
            return fail(
                "link.reverse.queue.limit",
                format!("{b} B holds no ACK ({ack} B); give at least `{ack}B`, or a packet count like `100pkt`"),
            );
        }
    }
    // Time: packets simulated.
    let p = packets(cfg);
    if p > max_packets {
        return fail(
            "link.forward.rate",
            format!(
                "{:.3e} bit/s for {:.0} s is up to {:.3e} packets of {:.0} B; the limit is {:.0e} packets per run (about a minute of simulation): lower the rate or shorten `duration`",
                cfg.forward.rate.peak_bps(),
                cfg.duration_ns as f64 / 1e9,
                p,
                min_wire_bytes(cfg),
                max_packets
            ),
        );
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        if let App::Chunks { every_ns, .. } = f.app {
            let n = cfg.duration_ns as f64 / every_ns.max(1) as f64;
            if n > max_packets {
                return fail(
                    &format!("flow[{i}].chunk_every"),
                    format!("{n:.3e} chunks in the run; the limit is {max_packets:.0e}: make `chunk_every` longer"),
                );
            }
        }
    }
    // Memory: packets the path holds at once.
    let rtt_ns = cfg.forward.delay_ns as f64
        + cfg.reverse.delay_ns as f64
        + jitter_max_ns(&cfg.forward)
        + jitter_max_ns(&cfg.reverse)
        + hold_ns(&cfg.forward)
        + hold_ns(&cfg.reverse)
        + cfg.flows.iter().map(|f| f.extra_rtt_ns).max().unwrap_or(0) as f64
        + path_extra_ns(cfg);
    let wire = min_wire_bytes(cfg);
    let bdp = cfg.forward.rate.peak_bps() * rtt_ns / 1e9 / 8.0 / wire;
    let queue_packets = |limit: Size, size: f64| match limit {
        Size::Packets(n) => n as f64,
        Size::Bytes(b) => b as f64 / size,
    };
    let fq = queue_packets(cfg.forward.queue.limit, wire)
        + cfg
            .topology
            .hops
            .iter()
            .map(|h| queue_packets(h.direction.queue.limit, wire))
            .sum::<f64>();
    let rq = if cfg.reverse.rate == RateSchedule::Unlimited {
        0.0
    } else {
        queue_packets(cfg.reverse.queue.limit, ack as f64)
    };
    if bdp + fq + rq > max_path {
        let (field, what) = if fq >= bdp.max(rq) {
            ("link.forward.queue.limit", "the forward queue")
        } else if rq >= bdp {
            ("link.reverse.queue.limit", "the reverse queue")
        } else {
            ("link.forward.delay", "the bandwidth-delay product")
        };
        return fail(
            field,
            format!(
                "the path can hold {:.3e} packets (bandwidth-delay product {bdp:.3e}, forward queue {fq:.3e}, reverse queue {rq:.3e}), mostly {what}; the limit is {max_path:.0e} packets, to bound memory",
                bdp + fq + rq
            ),
        );
    }
    // Disk: time-series rows.
    let r = rows(cfg);
    if r > max_rows {
        let min_interval_s =
            cfg.duration_ns as f64 / 1e9 * (cfg.flows.len() as f64 + 2.0) / max_rows;
        return fail(
            "sample_interval",
            format!(
                "{:.3e} time-series rows ({:.1} GB); the limit is {max_rows:.0e} rows per run: use a sample_interval of at least {} (or \"0s\" for none)",
                r,
                r * 100.0 / 1e9,
                human_time(min_interval_s)
            ),
        );
    }
    Ok(())
}

/// Checks a sweep's runs together, given their configurations (only the
/// configurations: this module knows nothing of scenario files).
pub fn check_total(configs: &[&SimConfig]) -> Result<(), String> {
    let runs = configs;
    let (max_packets, max_rows) = (MAX_PACKETS_TOTAL * scale(), MAX_ROWS_TOTAL * scale());
    let p: f64 = runs.iter().map(|c| packets(c)).sum();
    if p > max_packets {
        return Err(format!(
            "{} runs simulate up to {p:.3e} packets together; the limit is {max_packets:.0e} for a sweep: fewer points, shorter runs or lower rates",
            runs.len()
        ));
    }
    let r: f64 = runs.iter().map(|c| rows(c)).sum();
    if r > max_rows {
        return Err(format!(
            "{} runs write {r:.3e} time-series rows together ({:.1} GB); the limit is {max_rows:.0e} for a sweep: raise sample_interval, or fewer points",
            runs.len(),
            r * 100.0 / 1e9
        ));
    }
    Ok(())
}

/// A duration in seconds written as a scenario value, rounded up.
fn human_time(s: f64) -> String {
    if s >= 1.0 {
        format!("\"{}s\"", (s * 1000.0).ceil() / 1000.0)
    } else if s >= 1e-3 {
        format!("\"{}ms\"", (s * 1e6).ceil() / 1000.0)
    } else if s >= 1e-6 {
        format!("\"{}us\"", (s * 1e9).ceil() / 1000.0)
    } else {
        format!("\"{}ns\"", (s * 1e9).ceil())
    }
}

/// What hops after the first, delay schedules and access links add to
/// the round trip, for the memory estimate.
fn path_extra_ns(cfg: &SimConfig) -> f64 {
    let t = &cfg.topology;
    let seg = |s: &netsim::Segment| {
        s.direction.delay_ns as f64
            + schedule_max_ns(&s.delay_schedule)
            + jitter_max_ns(&s.direction)
            + hold_ns(&s.direction)
    };
    let access = cfg
        .flows
        .iter()
        .map(|f| {
            f.access_forward.as_ref().map_or(0.0, seg) + f.access_reverse.as_ref().map_or(0.0, seg)
        })
        .fold(0.0, f64::max);
    t.hops.iter().map(seg).sum::<f64>()
        + schedule_max_ns(&t.forward_delay_schedule)
        + schedule_max_ns(&t.reverse_delay_schedule)
        + access
}

#[cfg(test)]
mod tests {
    use crate::{parse, Scenario, ScenarioError};
    use std::path::Path;

    fn parse_src(src: &str) -> Result<Scenario, ScenarioError> {
        parse(src, "s.toml", Path::new("."), Path::new("s.toml"))
    }

    fn err(src: &str) -> String {
        match parse_src(src) {
            Ok(_) => panic!("accepted:\n{src}"),
            Err(e) => e.to_string(),
        }
    }

    const BASE: &str = "duration = \"5s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[[flow]]\nalgorithm = \"bbr\"\n";

    /// Every scenario the project ships stays within the limits.
    #[test]
    fn every_shipped_scenario_is_within_the_limits() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut n = 0;
        for dir in [
            root.clone(),
            root.join("claims"),
            root.join("bbr3"),
            root.join("studies"),
            root.join("validate"),
        ] {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "toml") {
                    crate::load(&p).unwrap_or_else(|e| panic!("{e}"));
                    n += 1;
                }
            }
        }
        assert!(n >= 20, "found only {n} scenarios");
    }

    /// Issue 13: no forward rate ("unlimited") ran for ever at 5.7 GB.
    #[test]
    fn a_forward_direction_without_a_rate_is_rejected_at_its_table() {
        let e = err(&BASE.replace("rate = \"10mbit\"\n", ""));
        assert!(
            e.starts_with("s.toml:2:1: `link.forward.rate`: missing") && e.contains("e.g. `rate"),
            "{e}"
        );
        // The reverse direction may stay unlimited.
        parse_src(BASE).unwrap();
    }

    /// Issue 13: `sample_interval = "1ns"` wrote 6 GB of CSV in 60 s.
    #[test]
    fn tiny_sample_intervals_are_rejected_with_the_smallest_allowed() {
        let e = err(&BASE.replace(
            "duration = \"5s\"",
            "duration = \"0.1s\"\nsample_interval = \"1ns\"",
        ));
        assert!(
            e.contains("s.toml:2:19")
                && e.contains("rows")
                && e.contains("limit is 5e6")
                && e.contains("at least \"61ns\""),
            "{e}"
        );
        parse_src(&BASE.replace(
            "duration = \"5s\"",
            "duration = \"5s\"\nsample_interval = \"0s\"",
        ))
        .unwrap();
    }

    /// Rate × duration bounds the packets simulated (time).
    #[test]
    fn runs_that_would_take_hours_are_rejected_with_the_packet_limit() {
        let e = err(&BASE
            .replace("\"10mbit\"", "\"1Tbit\"")
            .replace("\"5s\"", "\"86400s\""));
        assert!(
            e.contains("`link.forward.rate`") && e.contains("limit is 1e8 packets"),
            "{e}"
        );
        let e = err(&BASE.replace("\"5s\"", "\"86401s\""));
        assert!(
            e.contains("s.toml:1:12: `duration`") && e.contains("one day"),
            "{e}"
        );
    }

    /// Bandwidth-delay product plus queues bound memory.
    #[test]
    fn paths_holding_too_many_packets_are_rejected_with_the_memory_limit() {
        let e = err(&BASE.replace("delay = \"20ms\"", "queue = { limit = \"100000000pkt\" }"));
        assert!(
            e.contains("`link.forward.queue.limit`") && e.contains("limit is 1e6 packets"),
            "{e}"
        );
        let e = err(&BASE
            .replace("\"10mbit\"", "\"100Gbit\"")
            .replace("\"5s\"", "\"1s\"")
            .replace("\"20ms\"", "\"1000s\""));
        assert!(
            e.contains("`link.forward.delay`") && e.contains("bandwidth-delay product"),
            "{e}"
        );
    }

    /// Issue 13: a `"1B"` queue was accepted and gave zero goodput, while
    /// `"0pkt"` was rejected.
    #[test]
    fn byte_queues_smaller_than_a_packet_are_rejected() {
        let e = err(&BASE.replace("delay = \"20ms\"", "queue = { limit = \"1B\" }"));
        assert!(
            e.contains("s.toml:4:19") && e.contains("holds no packet") && e.contains("1500B"),
            "{e}"
        );
        parse_src(&BASE.replace("delay = \"20ms\"", "queue = { limit = \"1500B\" }")).unwrap();
        let e = err(&BASE.replace(
            "delay = \"20ms\"",
            "queue = { limit = \"18446744073709551616pkt\" }",
        ));
        assert!(e.contains("s.toml:4:19") && e.contains("too large"), "{e}");
    }

    /// A step marker's threshold is a time like CoDel's target: at most a
    /// day, with the field named.
    #[test]
    fn a_step_threshold_is_bounded_like_the_other_queue_times() {
        let q = |t: &str| {
            format!(
                "duration = \"5s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
                 queue = {{ limit = \"100pkt\", aqm = \"step\", threshold = \"{t}\", ecn = true }}\n\
                 [[flow]]\nalgorithm = \"bbr\"\n"
            )
        };
        let e = err(&q("1e6s"));
        assert!(
            e.contains("link.forward.queue.threshold") && e.contains("one day"),
            "{e}"
        );
        assert!(parse_src(&q("1ms")).is_ok());
    }

    /// The dequeue-time disciplines' times are bounded like CoDel's, with
    /// the field named; a key of another aqm is an error with its place
    /// in the file and the keys this aqm takes.
    #[test]
    fn dequeue_discipline_times_are_bounded_and_keys_checked() {
        let q = |queue: &str| {
            format!(
                "duration = \"5s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
                 queue = {{ limit = \"100pkt\", {queue} }}\n\
                 [[flow]]\nalgorithm = \"bbr\"\n"
            )
        };
        for (queue, field) in [
            (
                "aqm = \"fq_codel\", interval = \"1e6s\"",
                "link.forward.queue.interval",
            ),
            (
                "aqm = \"pie\", tupdate = \"1e6s\"",
                "link.forward.queue.tupdate",
            ),
            (
                "aqm = \"pie\", max_burst = \"1e6s\"",
                "link.forward.queue.max_burst",
            ),
            (
                "aqm = \"dualpi2\", l4s_threshold = \"1e6s\"",
                "link.forward.queue.l4s_threshold",
            ),
        ] {
            let e = err(&q(queue));
            assert!(e.contains(field) && e.contains("one day"), "{queue}: {e}");
        }
        for ok in [
            "aqm = \"fq_codel\"",
            "aqm = \"pie\"",
            "aqm = \"dualpi2\", ecn = true",
        ] {
            parse_src(&q(ok)).unwrap();
        }
        let e = err(&q("aqm = \"pie\", flows = 10"));
        assert!(
            e.contains("s.toml:5")
                && e.contains("`flows` does not apply to `aqm = \"pie\"`")
                && e.contains("`tupdate`"),
            "{e}"
        );
    }

    /// Flows and sweeps are bounded too; huge start times cannot overflow.
    #[test]
    fn flows_sweeps_and_times_are_bounded() {
        let many = BASE.to_string() + &"[[flow]]\nalgorithm = \"bbr\"\ncount = 1000\n".repeat(2);
        assert!(err(&many).contains("limit is 1000"));
        let e = err(&(BASE.to_string() + "start = \"1e8s\"\nstagger = \"1s\"\ncount = 3\n"));
        // Refused as a start after the run's end, before the limits see it.
        assert!(
            e.contains("`flow[0].start`") && e.contains("never send"),
            "{e}"
        );
        let sweep = BASE.to_string()
            + "[sweep]\n\"flow.mss\" = [500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510]\n\"seed\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n\"duration\" = [\"1s\", \"2s\", \"3s\", \"4s\", \"5s\", \"6s\", \"7s\", \"8s\", \"9s\", \"10s\", \"11s\", \"12s\", \"13s\", \"14s\", \"15s\", \"16s\", \"17s\", \"18s\", \"19s\", \"20s\", \"21s\", \"22s\", \"23s\", \"24s\", \"25s\", \"26s\", \"27s\", \"28s\", \"29s\", \"30s\", \"31s\", \"32s\", \"33s\", \"34s\", \"35s\", \"36s\", \"37s\", \"38s\", \"39s\", \"40s\", \"41s\", \"42s\", \"43s\", \"44s\", \"45s\", \"46s\", \"47s\", \"48s\", \"49s\", \"50s\", \"51s\", \"52s\", \"53s\", \"54s\", \"55s\", \"56s\", \"57s\", \"58s\", \"59s\", \"60s\", \"61s\", \"62s\", \"63s\", \"64s\", \"65s\", \"66s\", \"67s\", \"68s\", \"69s\", \"70s\", \"71s\", \"72s\", \"73s\", \"74s\", \"75s\", \"76s\", \"77s\", \"78s\", \"79s\", \"80s\", \"81s\", \"82s\", \"83s\"]\n";
        let e = err(&sweep);
        assert!(e.contains("[sweep]") && e.contains("limit is 10000"), "{e}");
    }
}
