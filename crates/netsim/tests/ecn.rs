//! ECN end to end in the simulator: a flow's codepoint crosses the
//! forward direction, a marking queue's CE reaches the receiver, the
//! ACKs carry it back (QUIC counts, or TCP's ECE under `ack = "linux"`)
//! and the controller answers; ACKs themselves are never ECN-capable.

use congestion::{Algorithm, Config};
use netsim::{AckPolicy, Ecn, FlowConfig, MemoryRecorder, SimConfig, Summary};

mod common;
use common::direction;

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// One flow for `secs` over 20 Mbit/s and 40 ms, the forward queue given.
fn run(flow: FlowConfig, queue: &str, secs: u64) -> (Summary, MemoryRecorder) {
    let cfg = SimConfig {
        duration_ns: secs * SEC,
        seed: 1,
        forward: direction(&format!(
            "rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = {queue}"
        )),
        reverse: direction("delay = \"20ms\""),
        flows: vec![flow],
        sample_interval_ns: 10 * MS,
        topology: Default::default(),
    };
    let mut rec = MemoryRecorder::default();
    let s = netsim::run(&cfg, &mut rec).expect("simulation");
    (s, rec)
}

fn cubic(ecn: Ecn) -> FlowConfig {
    let mut f = FlowConfig::bulk("cubic", Config::new(Algorithm::Cubic));
    f.ecn = ecn;
    f
}

/// Times the window went down between samples.
fn cwnd_cuts(rec: &MemoryRecorder) -> usize {
    rec.flows
        .windows(2)
        .filter(|w| w[1].cwnd_bytes < w[0].cwnd_bytes)
        .count()
}

/// The plumbing without any marking queue: a flow that sends every
/// packet already CE (as if an earlier hop had marked it) over a
/// drop-tail path. The mark survives the hop (the direction does not
/// count it as its own), reaches the receiver on every packet, comes back
/// in the ACKs, and CUBIC cuts its window for it once per round trip down
/// to its floor, without a single loss. Both feedback forms.
#[test]
fn ce_on_every_packet_reaches_the_sender_and_cubic_backs_off() {
    for ack in [AckPolicy::EveryPacket, AckPolicy::LINUX] {
        let mut f = cubic(Ecn::Ce);
        f.ack = ack;
        let (s, rec) = run(f, "{ limit = \"1000pkt\" }", 5);
        let fl = &s.flows[0];
        assert_eq!(fl.drops, 0, "{ack:?}");
        assert_eq!(
            s.forward_ce_marked, 0,
            "{ack:?}: arrived CE, not marked here"
        );
        assert_eq!(s.reverse_ce_marked, 0, "{ack:?}");
        assert!(fl.ce_received > 150, "{ack:?}: {}", fl.ce_received);
        assert!(fl.ce_received >= fl.ce_packets, "{ack:?}");
        // Every packet acknowledged was CE: QUIC's count rises with each,
        // and under TCP a CWR packet is itself CE, so ECE never clears.
        assert_eq!(fl.ce_packets, fl.delivered_packets, "{ack:?}");
        assert_eq!(fl.ce_fraction(), 1.0, "{ack:?}");
        // flows.csv's delivered_ce is the same count, sampled: the last
        // sample is at most 10 ms (about 20 packets) before the end.
        let last = rec.flows.last().unwrap().delivered_ce;
        assert!(
            last <= fl.ce_packets && last + 100 > fl.ce_packets,
            "{ack:?}"
        );
        // A cut per round trip from the first ACK on: 10 packets, 7, 4.9,
        // 3.4, then the 2-packet floor, where the window stays.
        let cuts = cwnd_cuts(&rec);
        assert!(cuts >= 3, "{ack:?}: {cuts} cuts");
        assert!(
            rec.flows[100..].iter().all(|r| r.cwnd_bytes == 3000),
            "{ack:?}: the window stays at its 2-packet floor after 1 s"
        );
        assert!(fl.goodput_bps < 1e6, "{ack:?}: {}", fl.goodput_bps);
    }
}

/// A flow without ECN on the same path: nothing is marked or counted.
#[test]
fn without_ecn_nothing_is_marked() {
    let (s, rec) = run(cubic(Ecn::NotEct), "{ limit = \"100pkt\" }", 5);
    let fl = &s.flows[0];
    assert_eq!((fl.ce_received, fl.ce_packets), (0, 0));
    assert!(rec.flows.iter().all(|r| r.delivered_ce == 0));
    assert!(rec.links.iter().all(|l| l.ce_marked == 0));
    assert!(fl.drops > 0, "CUBIC fills a 100-packet drop-tail queue");
}

/// A step-marking queue (`aqm = "step"`, 1 ms, `ecn = true`) and a CUBIC
/// flow with `ecn = true`: the queue marks instead of dropping, the marks
/// reach the sender, CUBIC cuts its window on them, nothing is dropped,
/// and the queue's delay stays near the threshold.
#[test]
fn a_step_marking_queue_holds_an_ecn_cubic_flow_near_its_threshold() {
    let queue = "{ limit = \"1000pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }";
    for ack in [AckPolicy::EveryPacket, AckPolicy::LINUX] {
        let mut f = cubic(Ecn::Ect0);
        f.ack = ack;
        let (s, rec) = run(f, queue, 20);
        let fl = &s.flows[0];
        assert_eq!(fl.drops, 0, "{ack:?}: marked, not dropped");
        assert!(s.forward_ce_marked > 10, "{ack:?}: {}", s.forward_ce_marked);
        // Every mark reached the receiver but those still on the wire
        // at the end (a round trip's worth at most).
        assert!(fl.ce_received <= s.forward_ce_marked, "{ack:?}");
        assert!(fl.ce_received + 100 > s.forward_ce_marked, "{ack:?}");
        assert!(fl.ce_packets > 0, "{ack:?}");
        assert!(cwnd_cuts(&rec) > 10, "{ack:?}: {} cuts", cwnd_cuts(&rec));
        // Under TCP's ECE the sender counts every packet an ECE ACK
        // acknowledges, and ECE lasts until the CWR packet arrives, so it
        // counts more than were marked, but ECE does clear: a small share.
        assert!(
            fl.ce_packets * 20 < fl.delivered_packets,
            "{ack:?}: {} of {}",
            fl.ce_packets,
            fl.delivered_packets
        );
        // The link is still used: each mark cuts by 0.7, not to nothing.
        // Not fully: a 1 ms threshold is a 1.7-packet queue on a 67-packet
        // BDP, so after each cut the window is below the BDP until CUBIC
        // grows back (the reason DCTCP cuts in proportion to the marks).
        assert!(fl.goodput_bps > 10e6, "{ack:?}: {}", fl.goodput_bps);
        // Queueing delay after the first second: the step marks every
        // packet that waited over 1 ms, and CUBIC answers once per round
        // trip, so the queue overshoots the threshold by what one round
        // trip of growth adds (measured: p99 1.6-1.8 ms), then drains below
        // it after the cut (median 0.2 ms); it never builds the standing
        // queue a drop-tail queue of 1000 packets would (600 ms).
        let mut d: Vec<f64> = rec
            .links
            .iter()
            .filter(|l| l.direction == "forward" && l.t_ns >= SEC)
            .map(|l| l.queue_delay_ns as f64 / 1e6)
            .collect();
        d.sort_by(f64::total_cmp);
        let median = d[d.len() / 2];
        let p99 = d[d.len() * 99 / 100];
        assert!(median < 1.0, "{ack:?}: median queue delay {median} ms");
        assert!(p99 < 3.0, "{ack:?}: p99 queue delay {p99} ms");
    }
}

/// The same queue with ECN off on the flow: the step drops what it would
/// have marked, so the flow loses packets and learns no CE.
#[test]
fn the_same_queue_drops_a_flow_without_ecn() {
    let queue = "{ limit = \"1000pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }";
    let (s, rec) = run(cubic(Ecn::NotEct), queue, 20);
    let fl = &s.flows[0];
    assert!(fl.drops > 10, "{}", fl.drops);
    assert!(fl.retransmissions > 10);
    assert_eq!(s.forward_ce_marked, 0);
    assert_eq!(fl.ce_packets, 0);
    assert!(rec.flows.iter().all(|r| r.delivered_ce == 0));
}

/// ACKs are not ECN-capable: a marking queue on the reverse direction,
/// congested by the ACKs of a flow with ECN, drops ACKs and marks none.
#[test]
fn acks_are_never_marked() {
    let cfg = SimConfig {
        duration_ns: 5 * SEC,
        seed: 1,
        forward: direction("rate = \"20mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"1000pkt\" }"),
        // 60-byte ACKs for 20 Mbit/s of data need about 0.8 Mbit/s.
        reverse: direction(
            "rate = \"400kbit\"\ndelay = \"20ms\"\nqueue = { limit = \"50pkt\", aqm = \"step\", threshold = \"1ms\", ecn = true }",
        ),
        flows: vec![cubic(Ecn::Ect0)],
        sample_interval_ns: 100 * MS,
        topology: Default::default(),
    };
    let mut rec = MemoryRecorder::default();
    let s = netsim::run(&cfg, &mut rec).expect("simulation");
    assert_eq!(s.reverse_ce_marked, 0);
    assert!(s.reverse_drops > 100, "{}", s.reverse_drops);
    assert!(rec
        .links
        .iter()
        .filter(|l| l.direction == "reverse")
        .all(|l| l.ce_marked == 0));
}
