//! The engine's delayed-ACK timer: a segment left alone is acknowledged
//! exactly `max_delay` after it arrived, even when the timer event the
//! engine queued was for an earlier segment's deadline (that segment's ACK
//! went out with the next one, and the event is queued again for the new
//! deadline when it pops, instead of one event per deadline).

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, PacketKind, PacketMemory, SimConfig};
use sender::{AckPolicy, App};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

/// Chunks of three segments every 50 ms behind a receiver that ACKs every
/// second segment or after 25 ms: the first segment's timer is queued,
/// the second's ACK cancels its deadline, and the third's deadline comes
/// after the queued event. So each chunk's third segment is acknowledged
/// only by the timer, 25 ms after it arrived, through the event queued
/// again. Were it not queued again, the third segment would wait for the
/// next chunk, 50 ms on.
#[test]
fn a_lone_segment_is_acknowledged_at_its_deadline_after_an_earlier_one_was_cancelled() {
    let max_delay_ns = 25 * MS;
    let cc = Config::new(Algorithm::Cubic);
    let mss = cc.mss_bytes;
    let mut flow = FlowConfig::bulk("chunks", cc);
    flow.app = App::Chunks {
        bytes: 3 * mss,
        every_ns: 50 * MS,
    };
    flow.ack = AckPolicy::Delayed {
        max_packets: 2,
        max_delay_ns,
    };
    let forward_delay_ns = 10 * MS;
    let cfg = SimConfig {
        duration_ns: 2_000 * MS,
        seed: 1,
        forward: direction("rate = \"10mbit\"\ndelay = \"10ms\""),
        reverse: direction("delay = \"10ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let mut rec = PacketMemory::default();
    netsim::run(&cfg, &mut rec).unwrap();
    // When each data segment reached the receiver (its last bit left the
    // bottleneck, then the propagation delay), and when each ACK left it.
    let mut arrivals: Vec<u64> = rec
        .packets
        .iter()
        .filter(|r| r.direction == "forward" && r.kind == PacketKind::Data)
        .map(|r| r.dequeue_ns.expect("nothing is dropped") + forward_delay_ns)
        .collect();
    let mut acks: Vec<u64> = rec
        .packets
        .iter()
        .filter(|r| r.direction == "reverse" && r.kind == PacketKind::Ack)
        .map(|r| r.enqueue_ns)
        .collect();
    arrivals.sort_unstable();
    acks.sort_unstable();
    // Chunks that arrived whole before the run's end (the timer of the
    // last one may be cut off).
    let chunks = arrivals.len() / 3 - 1;
    assert!(chunks >= 30, "{} segments arrived", arrivals.len());
    for c in 0..chunks {
        let (second, third) = (arrivals[3 * c + 1], arrivals[3 * c + 2]);
        assert!(
            third - arrivals[3 * c] < max_delay_ns,
            "chunk {c}: its segments arrive together: {:?}",
            &arrivals[3 * c..3 * c + 3]
        );
        // The second segment's ACK at once, the third's by the timer, at
        // its deadline to the nanosecond, and none between.
        let between: Vec<u64> = acks
            .iter()
            .copied()
            .filter(|&t| t >= arrivals[3 * c] && t < arrivals[3 * c + 3])
            .collect();
        assert_eq!(
            between,
            vec![second, third + max_delay_ns],
            "chunk {c}: segments arrived at {:?}",
            &arrivals[3 * c..3 * c + 3]
        );
    }
}
