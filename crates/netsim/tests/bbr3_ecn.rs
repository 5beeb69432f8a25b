//! BBRv3 with ECN on a shallow step-marking queue must leave room for a
//! co-flow that also answers CE (picoquic issue 2029: a BBR whose response
//! to marks is weaker than its co-flows' keeps the link while they yield).
//! 50 Mbit/s, 40 ms, a queue marking ECN-capable packets that waited more
//! than 1 ms; both flows send ECT(0); the second starts 2 s later.

use congestion::{Algorithm, Bbr3Profile, Config};
use netsim::{Ecn, FlowConfig, NoRecorder, SimConfig, Summary};
use std::path::Path;

const SEC: u64 = 1_000_000_000;

fn direction(text: &str) -> link::ResolvedDirection {
    let cfg: link::DirectionConfig = toml::from_str(text).expect("valid direction");
    cfg.resolve(Path::new(".")).expect("resolves")
}

fn flow(algorithm: Algorithm, start_s: u64) -> FlowConfig {
    let mut cfg = Config::new(algorithm);
    cfg.bbr3 = congestion::Bbr3Config::for_profile(Bbr3Profile::Draft);
    let mut f = FlowConfig::bulk(algorithm.name(), cfg);
    f.ecn = Ecn::Ect0;
    f.start_ns = start_s * SEC;
    f
}

fn run(second: Algorithm) -> Summary {
    let cfg = SimConfig {
        duration_ns: 30 * SEC,
        seed: 1,
        forward: direction(
            "rate = \"50mbit\"\ndelay = \"20ms\"\n\
             queue = { limit = \"500pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }",
        ),
        reverse: direction("delay = \"20ms\""),
        flows: vec![flow(Algorithm::Bbr3, 0), flow(second, 2)],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    netsim::run(&cfg, &mut NoRecorder).expect("simulation")
}

/// Against ECN CUBIC: CUBIC gets at least 15 % of what the two deliver
/// (measured 28 %; with CE floored like loss, `Bbr3Ecn::AsLoss`, it got
/// 6 %: 3.0 of 48 Mbit/s). Nothing is dropped: the queue marks.
#[test]
fn bbr3_leaves_an_ecn_cubic_co_flow_its_room() {
    let s = run(Algorithm::Cubic);
    let (b, c) = (s.flows[0].goodput_bps, s.flows[1].goodput_bps);
    assert!(c / (b + c) >= 0.15, "cubic {c:.0} vs bbr3 {b:.0} bit/s");
    assert!(s.flows.iter().all(|f| f.ce_packets > 0));
    assert_eq!(s.flows.iter().map(|f| f.drops).sum::<u64>(), 0);
}

/// Two bbr3 flows share it fairly: Jain's index ≥ 0.9 over the run
/// (measured 0.985; 0.737 with `AsLoss`).
#[test]
fn two_bbr3_flows_share_a_step_marking_queue() {
    let s = run(Algorithm::Bbr3);
    let (a, b) = (s.flows[0].goodput_bps, s.flows[1].goodput_bps);
    let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
    assert!(
        jain >= 0.9,
        "goodputs {a:.0} and {b:.0} bit/s, Jain {jain:.3}"
    );
}
