//! CUBIC under random loss, held to kernel TCP. The kernel's figure was
//! measured with `bbrlab validate --only 20M-40ms-1bdp-1%loss --algorithms
//! cubic --reps 10 --sim-ack linux` (kernel `cubic` through `bbrlab emu`,
//! ten runs of 10 s, committed as `docs/validate/validate-cubic-loss.json`).

use congestion::{Algorithm, Config, CubicAvoidance, HyStartVariant};
use netsim::{AckPolicy, FlowConfig, NoRecorder, Pacing, SimConfig};
use std::path::Path;

const SEC: u64 = 1_000_000_000;
const MSS: u64 = 1448;

/// Kernel `cubic`'s mean goodput over the ten runs, Mbit/s.
const KERNEL_MBPS: f64 = 3.64;

fn direction(text: &str) -> link::ResolvedDirection {
    let cfg: link::DirectionConfig = toml::from_str(text).expect("valid direction");
    cfg.resolve(Path::new(".")).expect("resolves")
}

/// One kernel-like CUBIC flow (Linux's receiver and HyStart, no pacing,
/// 52-byte headers) on 20 Mbit/s, 40 ms, a 1-BDP drop-tail buffer and 1 %
/// random loss, for 10 s: its goodput, Mbit/s.
fn goodput(avoidance: CubicAvoidance, seed: u64) -> f64 {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.mss_bytes = MSS;
    cc.cubic.hystart_variant = HyStartVariant::Linux;
    cc.cubic.avoidance = avoidance;
    let mut flow = FlowConfig::bulk("cubic", cc);
    flow.ack = AckPolicy::LINUX;
    flow.pacing = Pacing::Off;
    flow.header_bytes = 52;
    let cfg = SimConfig {
        duration_ns: 10 * SEC,
        seed,
        forward: direction(
            "rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"67pkt\" }\nloss = { bernoulli = 0.01 }",
        ),
        reverse: direction("rate = \"20mbit\"\ndelay = \"20ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let s = netsim::run(&cfg, &mut NoRecorder).expect("simulation");
    s.flows[0].goodput_bps / 1e6
}

/// Linux's congestion avoidance (`bictcp_update()`: the Reno-friendly
/// estimate at 8/15 a round trip for good) puts the simulated CUBIC within
/// `bbrlab validate`'s 10 % of the kernel's goodput, as a mean over ten
/// seeds. The bound has the run-to-run spread in it: one 10 s run here
/// spreads by about 12 % (standard deviation) around the mean, so the mean
/// of ten by about 4 %, kernel and simulator alike. RFC 9438's rule, α = 1
/// once the estimate passes the last window, gave the kernel's ten runs'
/// simulations 4.18 Mbit/s, 15 % above them; it must stay visibly above
/// Linux's here, or the switch does nothing.
#[test]
fn cubic_under_random_loss_gets_what_kernel_cubic_gets() {
    let mean = |a: CubicAvoidance| (1..=10).map(|seed| goodput(a, seed)).sum::<f64>() / 10.0;
    let linux = mean(CubicAvoidance::Linux);
    let rfc = mean(CubicAvoidance::Rfc9438);
    eprintln!("mean goodput: linux {linux:.3}, rfc9438 {rfc:.3}, kernel {KERNEL_MBPS}");
    assert!(
        (linux / KERNEL_MBPS - 1.0).abs() <= 0.10,
        "Linux's rules: {linux:.3} Mbit/s against the kernel's {KERNEL_MBPS}"
    );
    assert!(
        rfc > linux * 1.05,
        "RFC 9438's rules ({rfc:.3}) should out-grow Linux's ({linux:.3}) under random loss"
    );
}
