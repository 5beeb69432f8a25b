//! An application write that is not a whole number of segments ends in a
//! short segment, and that segment leaves when the stack lets it: at once
//! for QUIC, and for TCP unless an earlier short segment is still
//! unacknowledged (Nagle's test with Minshall's change). Before, the tail
//! waited for the next write to fill a segment, a whole write period.

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, PacketKind, PacketMemory, PacketRecord, SimConfig, Summary};
use sender::{AckPolicy, App, Pacing, Timeout};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

/// One `cubic` flow writing `bytes` every `every_ns` for `duration_ns`
/// over 10 Mbit/s and 40 ms, unpaced (so only the window and the write
/// decide when a segment leaves), with TCP's timer or QUIC's: the summary
/// and the data segments the bottleneck took, in order.
fn writes(bytes: u64, every_ns: u64, duration_ns: u64, quic: bool) -> (Summary, Vec<PacketRecord>) {
    writes_with(bytes, every_ns, duration_ns, |flow| {
        if quic {
            flow.timeout = Timeout::Pto {
                max_ack_delay_ns: 25 * MS,
            };
        }
    })
}

/// [`writes`] with the flow as `adjust` leaves it (algorithm, pacer,
/// receiver, timer).
fn writes_with(
    bytes: u64,
    every_ns: u64,
    duration_ns: u64,
    adjust: impl FnOnce(&mut FlowConfig),
) -> (Summary, Vec<PacketRecord>) {
    let mut flow = FlowConfig::bulk("writer", Config::new(Algorithm::Cubic));
    flow.app = App::Chunks { bytes, every_ns };
    flow.pacing = Pacing::Off;
    adjust(&mut flow);
    let cfg = SimConfig {
        duration_ns,
        seed: 1,
        forward: direction("rate = \"10mbit\"\ndelay = \"20ms\""),
        reverse: direction("delay = \"20ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let mut rec = PacketMemory::default();
    let summary = netsim::run(&cfg, &mut rec).unwrap();
    let data = rec
        .packets
        .into_iter()
        .filter(|r| r.direction == "forward" && r.kind == PacketKind::Data)
        .collect();
    (summary, data)
}

/// The sizes of the segments sent in the `k`th 500 ms write period.
fn write_sizes(data: &[PacketRecord], k: u64) -> Vec<u32> {
    let (from, to) = (k * 500 * MS, (k + 1) * 500 * MS);
    data.iter()
        .filter(|r| (from..to).contains(&r.enqueue_ns))
        .map(|r| r.bytes)
        .collect()
}

/// 8,000-byte writes every 500 ms (five 1,500-byte segments and 500
/// bytes): each write leaves whole, its tail a 500-byte segment, before
/// the next write; and everything written is delivered.
#[test]
fn each_write_leaves_whole_with_its_tail_as_a_short_segment() {
    for quic in [false, true] {
        let (summary, data) = writes(8_000, 500 * MS, 3_200 * MS, quic);
        for k in 0..7u64 {
            let sizes = write_sizes(&data, k);
            assert_eq!(
                sizes,
                [1500, 1500, 1500, 1500, 1500, 500],
                "write {k} (quic {quic})"
            );
        }
        // Seven writes (0 to 3 s), each acknowledged by 3.2 s.
        assert_eq!(summary.flows[0].delivered_bytes, 7 * 8_000, "quic {quic}");
    }
}

/// 2,000-byte writes every 5 ms, faster than the 40 ms round trip: QUIC
/// sends each write's 500-byte tail at once; TCP sends the first and
/// holds the later ones while it is unacknowledged (Minshall), so they
/// join the writes that follow, and the tail left when its ACK arrives
/// goes then.
#[test]
fn tcp_holds_a_short_segment_while_an_earlier_one_is_out_and_quic_does_not() {
    // (send time, bytes) of each data segment before `to_ns`.
    let sends = |data: &[PacketRecord], to_ns: u64| -> Vec<(u64, u32)> {
        data.iter()
            .filter(|r| r.enqueue_ns < to_ns)
            .map(|r| (r.enqueue_ns, r.bytes))
            .collect()
    };
    // Seven writes (0-30 ms), 14,000 bytes: inside the initial window,
    // and no ACK back before 40 ms.
    let (_, quic) = writes(2_000, 5 * MS, 33 * MS, true);
    let quic = sends(&quic, 33 * MS);
    let sizes: Vec<u32> = quic.iter().map(|s| s.1).collect();
    assert_eq!(sizes, [1500, 500].repeat(7));
    let (_, tcp) = writes(2_000, 5 * MS, 60 * MS, false);
    let early: Vec<u32> = sends(&tcp, 33 * MS).iter().map(|s| s.1).collect();
    // 0 ms: 1,500 + 500. 5 and 10 ms: 1,500 each, tails held (500, then
    // 1,000). 15 ms: 3,000, two whole segments. 20, 25, 30 ms: as 5-15.
    assert_eq!(
        early,
        [1500, 500, 1500, 1500, 1500, 1500, 1500, 1500, 1500, 1500]
    );
    // The ACK of the first tail arrives at 41.6 ms; the 1,000 bytes held
    // then (from the writes of 35 and 40 ms, after two whole segments
    // left on the ACK before) go at once, not at the next write (45 ms).
    let short: Vec<(u64, u32)> = sends(&tcp, 60 * MS)
        .into_iter()
        .filter(|s| s.1 < 1500)
        .collect();
    assert_eq!(short.len(), 2, "{short:?}");
    assert_eq!(short[0], (0, 500));
    assert_eq!(short[1].1, 1_000);
    assert!(
        (41 * MS..45 * MS).contains(&short[1].0),
        "the held tail left at {} ns",
        short[1].0
    );
}

/// The same 8,000-byte writes from a paced BBR sender, from a TCP sender
/// that defers TSO packets (kernel-sized bursts, Linux's receiver) and
/// from BBR behind Linux's receiver: each write's tail still leaves
/// within its period, as one short segment, and all is delivered.
#[test]
fn paced_and_deferring_senders_send_each_tail_too() {
    type Adjust = fn(&mut FlowConfig);
    let cases: [(&str, Adjust); 3] = [
        ("bbr, exact pacing", |f| {
            f.cc = Config::new(Algorithm::Bbr);
            f.pacing = Pacing::Exact;
        }),
        ("cubic, quantum pacing, TSO deferral", |f| {
            f.pacing = Pacing::Quantum;
            f.tso_defer = true;
            f.ack = AckPolicy::LINUX;
        }),
        ("bbr, Linux's receiver", |f| {
            f.cc = Config::new(Algorithm::Bbr);
            f.pacing = Pacing::Exact;
            f.ack = AckPolicy::LINUX;
        }),
    ];
    for (label, adjust) in cases {
        let (summary, data) = writes_with(8_000, 500 * MS, 3_200 * MS, adjust);
        for k in 0..7u64 {
            let sizes = write_sizes(&data, k);
            assert_eq!(
                sizes.iter().sum::<u32>(),
                8_000,
                "{label}, write {k}: {sizes:?}"
            );
            assert_eq!(
                sizes.iter().filter(|&&b| b < 1500).collect::<Vec<_>>(),
                [&500],
                "{label}, write {k}: {sizes:?}"
            );
        }
        assert_eq!(summary.flows[0].delivered_bytes, 7 * 8_000, "{label}");
    }
}
