//! Header accounting: a flow's `header_bytes` occupy the link but do not
//! count as goodput, and the counter columns every source writes
//! (smoothed RTT, data packets sent, retransmitted) come from the sender.

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, MemoryRecorder, SimConfig};
use sender::schema::FLOW_CSV_HEADER;

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// One CUBIC flow (no PROBE_RTT dips, so the link stays busy once the
/// 200-packet buffer fills) on 10 Mbit/s, 40 ms, for 20 s.
fn one_flow(mss: u64, header_bytes: u32, loss: &str) -> SimConfig {
    let mut cc = Config::new(Algorithm::Cubic);
    cc.mss_bytes = mss;
    let mut f = FlowConfig::bulk("f", cc);
    f.header_bytes = header_bytes;
    SimConfig {
        duration_ns: 20 * SEC,
        seed: 5,
        forward: direction(&format!(
            "rate = \"10mbit\"\ndelay = \"20ms\"\nqueue = {{ limit = \"200pkt\" }}\n{loss}"
        )),
        reverse: direction("delay = \"20ms\""),
        flows: vec![f],
        sample_interval_ns: 100 * MS,
        topology: Default::default(),
    }
}

/// Goodput over the second half of the run, bits/s, from the samples (the
/// first half holds slow start, which differs with the packet size).
fn steady_goodput(rec: &MemoryRecorder) -> f64 {
    let half = rec.flows.len() / 2;
    let (a, b) = (&rec.flows[half], rec.flows.last().unwrap());
    (b.delivered_bytes - a.delivered_bytes) as f64 * 8.0 * 1e9 / (b.t_ns - a.t_ns) as f64
}

#[test]
fn goodput_drops_by_the_header_fraction() {
    let mut bare = MemoryRecorder::default();
    let mut framed = MemoryRecorder::default();
    netsim::run(&one_flow(1448, 0, ""), &mut bare).unwrap();
    netsim::run(&one_flow(1448, 52, ""), &mut framed).unwrap();
    let (g0, g52) = (steady_goodput(&bare), steady_goodput(&framed));
    // A saturated 10 Mbit/s link: all payload without headers; with 52
    // header bytes per 1448-byte segment only 1448/1500 of it is payload
    // (9.653 Mbit/s), as kernel TCP with timestamps gets on a 1500-byte MTU.
    assert!((g0 - 10e6).abs() < 0.005 * 10e6, "no headers: {g0}");
    let want = 10e6 * 1448.0 / 1500.0;
    assert!((g52 - want).abs() < 0.005 * want, "52-byte headers: {g52}");
    assert!(g52 < g0 * 0.975, "{g52} vs {g0}");
}

#[test]
fn zero_header_bytes_changes_nothing() {
    // The default must reproduce runs made before header accounting.
    let mut with_field = one_flow(1500, 0, "");
    with_field.flows[0].header_bytes = 0;
    let built = FlowConfig::bulk("f", with_field.flows[0].cc);
    assert_eq!(built.header_bytes, 0);
    let a = netsim::run(&with_field, &mut netsim::NoRecorder).unwrap();
    let mut plain = one_flow(1500, 0, "");
    plain.flows[0] = FlowConfig::bulk("f", plain.flows[0].cc);
    let b = netsim::run(&plain, &mut netsim::NoRecorder).unwrap();
    assert_eq!(a, b);
}

#[test]
fn samples_carry_the_senders_counters_and_srtt() {
    let mut rec = MemoryRecorder::default();
    let s = netsim::run(&one_flow(1448, 52, "loss = { bernoulli = 0.01 }"), &mut rec).unwrap();
    let last = rec.flows.last().unwrap();
    let f = &s.flows[0];
    // Counters only grow, and the last sample (at most one interval
    // before the end) is close to the summary's totals.
    for w in rec.flows.windows(2) {
        assert!(w[1].packets_sent >= w[0].packets_sent);
        assert!(w[1].retransmissions >= w[0].retransmissions);
    }
    assert!(last.packets_sent <= f.packets_sent);
    assert!(last.packets_sent as f64 >= f.packets_sent as f64 * 0.98);
    assert!(last.retransmissions <= f.retransmissions);
    // 1 % random loss: about 1 % of data packets are retransmitted.
    let frac = last.retransmissions as f64 / last.packets_sent as f64;
    assert!((0.005..0.02).contains(&frac), "{frac}");
    // srtt lies between the propagation delay and what the full
    // 200-packet buffer adds (200 × 1500 B at 10 Mbit/s = 240 ms).
    let srtt = last.srtt_ns.expect("srtt after 20 s") as f64 / 1e6;
    assert!((40.0..=285.0).contains(&srtt), "{srtt}");
    // The CSV row has as many cells as the header has columns.
    let mut row = Vec::new();
    last.write_csv(&mut row).unwrap();
    let cells = String::from_utf8(row)
        .unwrap()
        .trim_end()
        .split(',')
        .count();
    assert_eq!(cells, FLOW_CSV_HEADER.split(',').count());
}
