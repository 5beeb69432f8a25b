//! The TCP handshake (`handshake = "tcp"`): the SYN exchange's RTT seeds
//! the controller, data waits for the SYN-ACK, and a lost SYN is sent
//! again on Linux's schedule (1 s, then doubling).

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, Handshake, MemoryRecorder, SimConfig};

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// One kernel-sized BBR flow (1448 + 52 bytes) on 2 Mbit/s with 50 ms
/// each way, where one data packet takes 6 ms to serialize.
fn slow_path(handshake: Handshake, loss: &str, seed: u64, seconds: u64) -> SimConfig {
    let mut cc = Config::new(Algorithm::Bbr);
    cc.mss_bytes = 1448;
    let mut f = FlowConfig::bulk("bbr", cc);
    f.header_bytes = 52;
    f.handshake = handshake;
    SimConfig {
        duration_ns: seconds * SEC,
        seed,
        forward: direction(&format!(
            "rate = \"2mbit\"\ndelay = \"50ms\"\nqueue = {{ limit = \"100pkt\" }}\n{loss}"
        )),
        reverse: direction("delay = \"50ms\""),
        flows: vec![f],
        sample_interval_ns: MS,
        topology: Default::default(),
    }
}

/// When the flow sent its first data packet, from the 1 ms samples.
fn first_send_ns(rec: &MemoryRecorder) -> Option<u64> {
    rec.flows
        .iter()
        .find(|s| s.packets_sent > 0)
        .map(|s| s.t_ns)
}

/// Linux's BBR takes min_rtt from the SYN exchange (`bbr_init()` reads
/// `tcp_min_rtt()`), which carries no payload: 100 ms of propagation and
/// the 60-byte SYN's serialization (the ACK path has no rate limit here),
/// 100.24 ms. Without a handshake the
/// first sample is a data packet's, 6 ms of serialization longer, and BBR
/// keeps it for its ten-second window; a kernel BBR flow on this path
/// reported 100.5 ms.
#[test]
fn bbr_takes_min_rtt_from_the_syn_exchange() {
    let min_rtt_at_2s = |h| {
        let mut rec = MemoryRecorder::default();
        netsim::run(&slow_path(h, "", 1, 3), &mut rec).unwrap();
        let s = rec.flows.iter().find(|s| s.t_ns >= 2 * SEC).unwrap();
        s.min_rtt_ns.expect("an RTT by 2 s") as f64 / 1e6
    };
    let with = min_rtt_at_2s(Handshake::Tcp);
    assert!(
        (with - 100.24).abs() < 0.05,
        "with the handshake: {with} ms"
    );
    let without = min_rtt_at_2s(Handshake::None);
    assert!(without > 105.5, "without: {without} ms");
}

/// Data waits for the SYN-ACK: the first packet leaves one handshake RTT
/// after the start, and the first flight is paced at 2.89 × 10 packets
/// per handshake RTT (`bbr_init_pacing_rate_from_rtt()`), not per 1 ms.
#[test]
fn data_starts_when_the_syn_ack_arrives_and_is_paced_from_its_rtt() {
    let mut rec = MemoryRecorder::default();
    netsim::run(&slow_path(Handshake::Tcp, "", 1, 1), &mut rec).unwrap();
    let first = first_send_ns(&rec).unwrap();
    assert!(
        (100 * MS..=102 * MS).contains(&first),
        "first data at {first} ns"
    );
    let s = rec.flows.iter().find(|s| s.t_ns >= first).unwrap();
    // 2.885 × 10 × 1448 B / 100.24 ms, less BBR's 1 % pacing margin.
    let want = 2.885 * 10.0 * 1448.0 * 8.0 / 0.10024 * 0.99;
    assert!(
        (s.pacing_rate_bps - want).abs() < 0.02 * want,
        "initial pacing {} bit/s, want {want}",
        s.pacing_rate_bps
    );
    // Without a handshake the first flight is paced per 1 ms, 100 times
    // faster, and data leaves at once.
    let mut rec = MemoryRecorder::default();
    netsim::run(&slow_path(Handshake::None, "", 1, 1), &mut rec).unwrap();
    assert_eq!(first_send_ns(&rec), Some(0));
}

/// A SYN lost on a 50 %-loss path is sent again after 1 s, then 2 s, 4 s:
/// every flow starts one handshake RTT after 0, 1, 3, 7 or 15 s, and
/// some seeds need a retry. Each flow starts within the run.
#[test]
fn a_lost_syn_is_sent_again_after_one_second_then_doubling() {
    let starts = [0, 1, 3, 7, 15].map(|s| s * SEC + 100 * MS);
    let mut retried = 0;
    for seed in 1..=16 {
        let mut rec = MemoryRecorder::default();
        let cfg = slow_path(Handshake::Tcp, "loss = { bernoulli = 0.5 }", seed, 20);
        netsim::run(&cfg, &mut rec).unwrap();
        let first = first_send_ns(&rec).unwrap_or_else(|| panic!("seed {seed}: never started"));
        assert!(
            starts.iter().any(|&s| (s..=s + 2 * MS).contains(&first)),
            "seed {seed}: first data at {first} ns, not one RTT after a SYN"
        );
        retried += usize::from(first > SEC);
    }
    assert!((2..=14).contains(&retried), "{retried} of 16 seeds retried");
}

/// A finite flow's completion time counts its SYN exchange, and so does
/// its ideal: one more round trip, so a slowdown of 1 stays the best a
/// flow can do, with or without a handshake.
#[test]
fn a_finite_flows_ideal_counts_its_handshake() {
    let record = |h| {
        let mut cfg = slow_path(h, "", 1, 5);
        cfg.flows[0].size_bytes = Some(14_480);
        let mut rec = MemoryRecorder::default();
        netsim::run(&cfg, &mut rec).unwrap();
        rec.fct.into_iter().next().expect("the flow finished")
    };
    let (with, without) = (record(Handshake::Tcp), record(Handshake::None));
    assert_eq!(with.ideal_ns - without.ideal_ns, 100 * MS);
    // It also took about one round trip longer (100 ms and the SYN's
    // 0.24 ms, give or take the first flight's pacing).
    let longer = (with.end_ns - with.start_ns) as i64 - (without.end_ns - without.start_ns) as i64;
    assert!(
        (95 * MS as i64..=160 * MS as i64).contains(&longer),
        "{longer} ns"
    );
    assert!(with.end_ns - with.start_ns >= with.ideal_ns);
}
