//! Workloads: Poisson arrivals, cross traffic, flow completion times, and
//! the engine's reuse of finished flows' slots.

use congestion::{Algorithm, Config};
use link::{QueueConfig, RateSchedule, ResolvedDirection};
use netsim::{
    ArrivalProcess, Arrivals, CrossKind, CrossTraffic, FlowConfig, MemoryRecorder, NoRecorder,
    Periods, SimConfig, SizeDist, Workload,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn path(rate_bps: f64, one_way_ns: u64, buffer_pkts: u64) -> SimConfig {
    let forward = ResolvedDirection {
        rate: RateSchedule::Constant(rate_bps),
        delay_ns: one_way_ns,
        queue: QueueConfig::drop_tail(link::units::Size::Packets(buffer_pkts)),
        loss: None,
        jitter: None,
        policer: None,
        aggregation: None,
    };
    let reverse = ResolvedDirection {
        rate: RateSchedule::Unlimited,
        ..forward.clone()
    };
    SimConfig {
        duration_ns: 10 * S,
        seed: 3,
        forward,
        reverse,
        flows: Vec::new(),
        sample_interval_ns: 0,
        topology: Default::default(),
    }
}

fn poisson(name: &str, rate_per_s: f64, stop_ns: u64, size: SizeDist) -> Arrivals {
    Arrivals {
        name: name.into(),
        template: FlowConfig::bulk("t", Config::new(Algorithm::Cubic)),
        process: ArrivalProcess::Poisson { rate_per_s },
        start_ns: 0,
        stop_ns: Some(stop_ns),
        size,
    }
}

/// 200 flows/s for 50 s: N = 10,000 expected. A Poisson count's standard
/// deviation is sqrt(N) = 100; the test allows N ± 4·sqrt(N).
#[test]
fn poisson_arrivals_come_at_their_rate() {
    let mut cfg = path(1e9, MS, 1000);
    cfg.duration_ns = 51 * S;
    let work = Workload {
        arrivals: vec![poisson("web", 200.0, 50 * S, SizeDist::Fixed(1000))],
        cross: vec![],
    };
    let s = netsim::run_workload(&cfg, &work, &mut NoRecorder).unwrap();
    let fct = s.fct.unwrap();
    let n = 10_000.0;
    let got = fct.flows_started as f64;
    assert!(
        (got - n).abs() <= 4.0 * f64::sqrt(n),
        "{got} arrivals, expected {n} ± 400"
    );
    assert_eq!(
        fct.flows_completed, fct.flows_started,
        "an idle 1 Gbit/s path finishes them all"
    );
    assert!(s.flows.is_empty(), "generated flows are not summary rows");
}

/// One 1000-byte packet over 10 Mbit/s, 10 ms each way, ACKs back over an
/// unlimited 10 ms: serialisation 1000·8/10^7 = 0.8 ms, so the ACK is in
/// at 10.8 + 10 = 20.8 ms, which is the ideal (RTT 20 ms + size/rate
/// 0.8 ms). Allowed: 1 µs.
#[test]
fn a_lone_one_packet_flow_takes_the_ideal_time() {
    let mut cfg = path(10e6, 10 * MS, 1000);
    let mut f = FlowConfig::bulk("one", Config::new(Algorithm::Cubic));
    f.size_bytes = Some(1000);
    f.start_ns = 100 * MS;
    cfg.flows.push(f);
    let mut rec = MemoryRecorder::default();
    let s = netsim::run(&cfg, &mut rec).unwrap();
    assert_eq!(rec.fct.len(), 1);
    let r = &rec.fct[0];
    assert_eq!(r.name, "one");
    assert_eq!(r.size_bytes, 1000);
    assert_eq!(r.ideal_ns, 20_800_000);
    assert!(
        r.fct_ns().abs_diff(20_800_000) <= 1_000,
        "FCT {} ns",
        r.fct_ns()
    );
    assert!((r.slowdown() - 1.0).abs() < 1e-4);
    let fct = s.fct.unwrap();
    assert_eq!((fct.flows_started, fct.flows_completed), (1, 1));
    assert_eq!(fct.buckets[0].count, 1);
    let p50 = fct.buckets[0].fct_p50_s.unwrap();
    assert!(
        (p50 - 0.0208).abs() / 0.0208 < 0.005,
        "p50 {p50} s (histogram: 0.4 %)"
    );
}

/// 20,000 short flows (3 packets each) at 600 flows/s over 20 Mbit/s with
/// a 20-packet buffer: 72 % load, so there is queueing and loss (stale
/// events for finished flows: late ACKs, spurious retransmissions) but the
/// flows alive at once stay few. The slots the engine holds must stay far
/// below the flows started: at most 2,000 for 20,000.
#[test]
fn twenty_thousand_short_flows_reuse_a_few_slots() {
    let mut cfg = path(20e6, 5 * MS, 20);
    cfg.duration_ns = 40 * S;
    let stop = (20_000.0 / 600.0 * 1e9) as u64;
    let work = Workload {
        arrivals: vec![poisson("short", 600.0, stop, SizeDist::Fixed(3000))],
        cross: vec![],
    };
    let mut rec = MemoryRecorder::default();
    let s = netsim::run_workload(&cfg, &work, &mut rec).unwrap();
    let fct = s.fct.unwrap();
    assert!(fct.flows_started > 19_000, "{} started", fct.flows_started);
    assert_eq!(
        fct.flows_completed, fct.flows_started,
        "all finish in the 6 s after the last arrival"
    );
    assert_eq!(rec.fct.len() as u64, fct.flows_completed);
    eprintln!(
        "{} flows started, {} slots, {} forward drops",
        fct.flows_started, s.flow_slots, s.forward_drops
    );
    assert!(s.forward_drops > 0, "the small buffer drops some packets");
    assert!(
        s.flow_slots <= 2_000,
        "{} slots for {} flows",
        s.flow_slots,
        fct.flows_started
    );
    assert_eq!(
        s.flow_slots, s.peak_live_flows,
        "slots grow only when all are alive"
    );
    // Every record is a real completion: at least its ideal (less the
    // ideal's nanosecond rounding), names unique.
    let mut names = std::collections::HashSet::new();
    for r in &rec.fct {
        assert!(r.fct_ns() + 1 >= r.ideal_ns, "{r:?}");
        assert!(names.insert(r.name.clone()), "{} twice", r.name);
    }
}

fn cross_run(kind: CrossKind, duration_ns: u64) -> netsim::CrossSummary {
    let mut cfg = path(100e6, 10 * MS, 1000);
    cfg.duration_ns = duration_ns;
    let work = Workload {
        arrivals: vec![],
        cross: vec![CrossTraffic {
            name: "x".into(),
            rate_bps: 10e6,
            packet_bytes: 1000,
            start_ns: 0,
            stop_ns: None,
            kind,
        }],
    };
    netsim::run_workload(&cfg, &work, &mut NoRecorder)
        .unwrap()
        .cross
        .remove(0)
}

/// 10 Mbit/s of CBR over an uncongested 100 Mbit/s link for 10 s: what
/// arrives within the run (all but the last 10.08 ms in flight) is
/// 10 Mbit/s within 1 %.
#[test]
fn cbr_is_delivered_at_its_rate() {
    let c = cross_run(CrossKind::Cbr, 10 * S);
    assert_eq!(c.drops, 0);
    let secs = 10.0 - 0.010_08;
    let rate = c.bytes_delivered as f64 * 8.0 / secs;
    assert!((rate - 10e6).abs() / 10e6 < 0.01, "{rate} bit/s");
}

/// On-off with fixed 1 s periods for 10 s: on half the time, 5 Mbit/s on
/// average within 1 %. With exponential 10 ms periods for 100 s (about
/// 5,000 of each), the fraction on has a standard deviation near 1 %;
/// allowed 5 %.
#[test]
fn on_off_sends_only_while_on() {
    let fixed = cross_run(
        CrossKind::OnOff {
            on_ns: S,
            off_ns: S,
            periods: Periods::Fixed,
        },
        10 * S,
    );
    let rate = fixed.bytes_sent as f64 * 8.0 / 10.0;
    assert!((rate - 5e6).abs() / 5e6 < 0.01, "{rate} bit/s");
    let exp = cross_run(
        CrossKind::OnOff {
            on_ns: 10 * MS,
            off_ns: 10 * MS,
            periods: Periods::Exponential,
        },
        100 * S,
    );
    let rate = exp.bytes_sent as f64 * 8.0 / 100.0;
    assert!((rate - 5e6).abs() / 5e6 < 0.05, "{rate} bit/s");
}

/// The same configuration and seed give the same completions, bit for bit;
/// another seed gives other arrivals.
#[test]
fn workloads_are_deterministic_from_the_seed() {
    let mut cfg = path(20e6, 5 * MS, 50);
    cfg.duration_ns = 3 * S;
    cfg.flows
        .push(FlowConfig::bulk("bulk", Config::new(Algorithm::Bbr)));
    let work = Workload {
        arrivals: vec![poisson(
            "web",
            50.0,
            2 * S,
            SizeDist::Pareto {
                scale: 5000.0,
                shape: 1.2,
            },
        )],
        cross: vec![],
    };
    let go = |seed| {
        let mut c = cfg.clone();
        c.seed = seed;
        let mut rec = MemoryRecorder::default();
        let s = netsim::run_workload(&c, &work, &mut rec).unwrap();
        (s, rec.fct)
    };
    let (a, fa) = go(3);
    let (b, fb) = go(3);
    assert_eq!(a, b);
    assert_eq!(fa, fb);
    assert!(!fa.is_empty());
    let (_, fc) = go(4);
    assert_ne!(fa, fc);
}

/// Stale events in every form a finished flow can leave behind: 2 %
/// random loss (retransmissions and timers outstanding), delayed ACKs
/// (their timers), and ACK aggregation on the reverse path (ACKs held in
/// the link and released after their flow is gone). 5,000 flows of 20 kB
/// at 100/s: every one finishes, and no event of a finished flow reaches
/// the flow that took over its slot (a record per flow, each at least its
/// ideal, names unique).
#[test]
fn stale_events_of_finished_flows_are_ignored() {
    let mut cfg = path(50e6, 10 * MS, 100);
    cfg.forward.loss = Some(link::LossConfig::Bernoulli(0.02));
    cfg.reverse.aggregation = Some(link::AggregationConfig::Count {
        every: 4,
        max_hold_ns: 2 * MS,
    });
    cfg.duration_ns = 70 * S;
    let mut arr = poisson("lossy", 100.0, 50 * S, SizeDist::Fixed(20_000));
    arr.template.ack = netsim::AckPolicy::Delayed {
        max_packets: 2,
        max_delay_ns: 40 * MS,
    };
    let work = Workload {
        arrivals: vec![arr],
        cross: vec![],
    };
    let mut rec = MemoryRecorder::default();
    let s = netsim::run_workload(&cfg, &work, &mut rec).unwrap();
    let fct = s.fct.unwrap();
    assert!((fct.flows_started as f64 - 5000.0).abs() < 4.0 * 5000f64.sqrt());
    assert_eq!(fct.flows_completed, fct.flows_started);
    eprintln!(
        "{} flows, {} forward drops, {} slots",
        fct.flows_started, s.forward_drops, s.flow_slots
    );
    assert!(s.forward_drops > 1000, "{} drops", s.forward_drops);
    assert!(s.flow_slots < 500, "{} slots", s.flow_slots);
    let mut names = std::collections::HashSet::new();
    for r in &rec.fct {
        assert_eq!(r.size_bytes, 20_000);
        assert!(r.fct_ns() + 1 >= r.ideal_ns, "{r:?}");
        assert!(names.insert(r.name.clone()), "{} twice", r.name);
    }
}
