//! The simulated counterpart of kernel `cubic` (Linux's HyStart and
//! congestion-avoidance rules, Linux's receiver, no pacer), held to kernel
//! TCP where a rule of Linux's decides the outcome. The kernel's figures
//! were measured through `bbrlab emu`, as each test says.

use congestion::{Algorithm, Config, CubicAvoidance, HyStartVariant, Mode};
use netsim::{AckPolicy, FlowConfig, Handshake, MemoryRecorder, NoRecorder, Pacing, SimConfig};

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;
const MSS: u64 = 1448;

/// Kernel `cubic`'s mean goodput on 20 Mbit/s / 40 ms / 1 BDP with 1 %
/// loss, Mbit/s: `bbrlab validate --only 20M-40ms-1bdp-1%loss --algorithms
/// cubic --reps 10 --sim-ack linux`, ten runs of 10 s: 3.64 on
/// 2026-11-29 and 3.63 on 2026-12-01 (committed as
/// `docs/validate/validate-cubic-loss.json`).
const KERNEL_MBPS: f64 = 3.63;

/// One kernel-like CUBIC flow (Linux's receiver and HyStart, no pacing,
/// Linux's TSO deferral, 52-byte headers) with `avoidance`, on a path whose forward direction is
/// `forward` and whose reverse has the same rate and one-way delay.
fn kernel_like(
    avoidance: CubicAvoidance,
    forward: &str,
    reverse: &str,
    seconds: u64,
    seed: u64,
) -> SimConfig {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.mss_bytes = MSS;
    cc.cubic.hystart_variant = HyStartVariant::Linux;
    cc.cubic.avoidance = avoidance;
    let mut flow = FlowConfig::bulk("cubic", cc);
    flow.ack = AckPolicy::LINUX;
    flow.pacing = Pacing::Off;
    flow.tso_defer = true;
    flow.header_bytes = 52;
    SimConfig {
        duration_ns: seconds * SEC,
        seed,
        forward: direction(forward),
        reverse: direction(reverse),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    }
}

/// 20 Mbit/s, 40 ms, a 1-BDP drop-tail buffer and 1 % random loss, 10 s:
/// the flow's goodput, Mbit/s.
fn goodput(avoidance: CubicAvoidance, seed: u64) -> f64 {
    let cfg = kernel_like(
        avoidance,
        "rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"67pkt\" }\nloss = { bernoulli = 0.01 }",
        "rate = \"20mbit\"\ndelay = \"20ms\"",
        10,
        seed,
    );
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

/// Linux's HyStart counts its rounds from the first ACK, below its low
/// window of 16 packets too (`hystart_update()` resets the round before it
/// checks the window), so its rounds follow the flights. On 5 Mbit/s, 60
/// ms and a 100-packet buffer, kernel `cubic` left slow start at 88
/// packets, 0.30 s after its first data, in 10 of 11 runs (`bbrlab emu
/// --rate 5mbit --rtt 60ms --up-queue 100`, `bbrlab tcp send --cc cubic`;
/// the eleventh, at 70, met a random loss in the ten runs of `validate
/// --only 5M-60ms-4bdp-0.1%loss --algorithms cubic --reps 10`). Starting
/// the first round at 16 packets put the simulator's rounds a part-flight
/// off the kernel's and its exit a round early, at 71 packets. Six packets
/// of tolerance: the delayed-ACK receiver grows the window two packets at
/// a time, and one ACK more or less in the exiting round moves it by two.
#[test]
fn cubic_leaves_slow_start_where_kernel_cubic_does() {
    let mut cfg = kernel_like(
        CubicAvoidance::Linux,
        "rate = \"5mbit\"\ndelay = \"30ms\"\nqueue = { limit = \"100pkt\" }",
        "rate = \"5mbit\"\ndelay = \"30ms\"",
        1,
        1,
    );
    cfg.sample_interval_ns = 10_000_000;
    let mut rec = MemoryRecorder::default();
    netsim::run(&cfg, &mut rec).expect("simulation");
    let exit = rec
        .flows
        .iter()
        .find(|f| f.mode != Mode::SlowStart)
        .expect("slow start ends within a second");
    let packets = exit.cwnd_bytes as f64 / MSS as f64;
    eprintln!(
        "slow start left at {packets:.1} packets, {:.3} s",
        exit.t_ns as f64 / 1e9
    );
    assert!(
        (packets - 88.0).abs() <= 6.0,
        "slow start left at {packets:.1} packets; kernel cubic: 88"
    );
}

/// The median smoothed RTT of one kernel-like `cubic` flow with receiver
/// `ack` on `bbrlab validate`'s 2 Mbit/s, 100 ms, 2-BDP path (a 33-packet
/// drop-tail buffer, the SYN exchange, ten unpaced first segments), 10 s,
/// ms.
fn srtt_median_2mbit(ack: AckPolicy) -> f64 {
    let mut cfg = kernel_like(
        CubicAvoidance::Linux,
        "rate = \"2mbit\"\ndelay = \"50ms\"\nqueue = { limit = \"33pkt\" }",
        "rate = \"2mbit\"\ndelay = \"50ms\"",
        10,
        1,
    );
    cfg.flows[0].ack = ack;
    cfg.flows[0].handshake = Handshake::Tcp;
    cfg.flows[0].initial_burst_packets = 10;
    cfg.sample_interval_ns = 10_000_000;
    let mut rec = MemoryRecorder::default();
    netsim::run(&cfg, &mut rec).expect("simulation");
    let mut srtt: Vec<u64> = rec.flows.iter().filter_map(|f| f.srtt_ns).collect();
    srtt.sort_unstable();
    srtt[srtt.len() / 2] as f64 / 1e6
}

/// Kernel `cubic`'s delayed ACKs each cover one of its send bursts,
/// because its sender pushes the last segment of each whole burst and
/// Linux's receiver acknowledges a pushed segment at once, alone if need
/// be; without PSH the simulated receiver's pairs, once a burst of three
/// has shifted them, straddle two bursts, and each pair's oldest segment
/// is a burst older than its newest. On this path kernel `cubic`'s median
/// srtt was 258.8 ms (`validate`, 2026-12-02, three runs of 10 s); the
/// simulator read 264.0 with Linux's receiver before PSH, 259.0 with it
/// and 258.0 with an ACK per packet. The bound, 2 ms, is a
/// third of the serialisation the straddling pairs added, and the
/// simulator is deterministic.
#[test]
fn cubic_at_2mbit_keeps_its_delayed_acks_on_its_bursts() {
    const KERNEL_MS: f64 = 258.8;
    let linux = srtt_median_2mbit(AckPolicy::LINUX);
    eprintln!("median srtt: Linux's receiver {linux:.1} ms, kernel {KERNEL_MS}");
    assert!(
        (linux - KERNEL_MS).abs() <= 2.0,
        "Linux's receiver: {linux:.1} ms against the kernel's {KERNEL_MS}"
    );
}
