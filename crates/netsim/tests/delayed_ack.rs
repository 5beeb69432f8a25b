//! The engine's delayed-ACK timer: a segment left alone is acknowledged
//! exactly `max_delay` after it arrived, even when the timer event the
//! engine queued was for an earlier segment's deadline (that segment's ACK
//! went out with the next one, and the event is queued again for the new
//! deadline when it pops, instead of one event per deadline), and that
//! event pops among others at its nanosecond where one queued when the
//! deadline was set would have.

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, PacketKind, PacketMemory, SimConfig};
use sender::{AckPolicy, App};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

/// The receiver's delayed-ACK limit in these runs.
const MAX_DELAY_NS: u64 = 25 * MS;
/// Propagation delay of the forward direction.
const FORWARD_DELAY_NS: u64 = 10 * MS;

/// Chunks of three segments every `every_ns` behind a receiver that ACKs
/// every second segment or after [`MAX_DELAY_NS`]: when each data segment
/// reached the receiver (its last bit left the bottleneck, then the
/// propagation delay) and when each ACK left it, both sorted.
fn chunks_run(every_ns: u64) -> (Vec<u64>, Vec<u64>) {
    let cc = Config::new(Algorithm::Cubic);
    let mss = cc.mss_bytes;
    let mut flow = FlowConfig::bulk("chunks", cc);
    flow.app = App::Chunks {
        bytes: 3 * mss,
        every_ns,
    };
    flow.ack = AckPolicy::Delayed {
        max_packets: 2,
        max_delay_ns: MAX_DELAY_NS,
    };
    let cfg = SimConfig {
        duration_ns: 2_000 * MS,
        seed: 1,
        forward: direction(&format!(
            "rate = \"10mbit\"\ndelay = \"{}ms\"",
            FORWARD_DELAY_NS / MS
        )),
        reverse: direction("delay = \"10ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let mut rec = PacketMemory::default();
    netsim::run(&cfg, &mut rec).unwrap();
    let mut arrivals: Vec<u64> = rec
        .packets
        .iter()
        .filter(|r| r.direction == "forward" && r.kind == PacketKind::Data)
        .map(|r| r.dequeue_ns.expect("nothing is dropped") + FORWARD_DELAY_NS)
        .collect();
    let mut acks: Vec<u64> = rec
        .packets
        .iter()
        .filter(|r| r.direction == "reverse" && r.kind == PacketKind::Ack)
        .map(|r| r.enqueue_ns)
        .collect();
    arrivals.sort_unstable();
    acks.sort_unstable();
    (arrivals, acks)
}

/// The ACKs sent from the arrival of segment `from` until that of
/// segment `to` (excluded).
fn acks_between(acks: &[u64], arrivals: &[u64], from: usize, to: usize) -> Vec<u64> {
    acks.iter()
        .copied()
        .filter(|&t| t >= arrivals[from] && t < arrivals[to])
        .collect()
}

/// Chunks of three segments every 50 ms: the first segment's timer is
/// queued, the second's ACK cancels its deadline, and the third's
/// deadline comes after the queued event. So each chunk's third segment
/// is acknowledged only by the timer, 25 ms after it arrived, through the
/// event queued again. Were it not queued again, the third segment would
/// wait for the next chunk, 50 ms on.
#[test]
fn a_lone_segment_is_acknowledged_at_its_deadline_after_an_earlier_one_was_cancelled() {
    let (arrivals, acks) = chunks_run(50 * MS);
    // Chunks that arrived whole before the run's end (the timer of the
    // last one may be cut off).
    let chunks = (arrivals.len() / 3).saturating_sub(1);
    assert!(chunks >= 30, "{} segments arrived", arrivals.len());
    for c in 0..chunks {
        let (second, third) = (arrivals[3 * c + 1], arrivals[3 * c + 2]);
        assert!(
            third - arrivals[3 * c] < MAX_DELAY_NS,
            "chunk {c}: its segments arrive together: {:?}",
            &arrivals[3 * c..3 * c + 3]
        );
        // The second segment's ACK at once, the third's by the timer, at
        // its deadline to the nanosecond, and none between.
        assert_eq!(
            acks_between(&acks, &arrivals, 3 * c, 3 * c + 3),
            vec![second, third + MAX_DELAY_NS],
            "chunk {c}: segments arrived at {:?}",
            &arrivals[3 * c..3 * c + 3]
        );
    }
}

/// The same chunks, now so often that each chunk's first segment arrives
/// at the very nanosecond the previous chunk's third segment falls due.
/// The timer's deadline was set when that third segment arrived, before
/// the next chunk's first segment was sent, so an event queued then pops
/// first: the timer ACKs the third segment alone, and the first segment
/// starts a new pair (the second's ACK at once, the third by the timer).
/// The engine queues that deadline's event only later (again, when the
/// earlier deadline's event pops), after the arrival's; with the
/// sequence reserved at the deadline's setting it still pops first.
/// Taking a fresh sequence instead lets the arrival pop first: the
/// receiver then holds two segments and ACKs them both at once, and the
/// next chunk's pattern shifts (its second segment waits for the timer).
#[test]
fn a_deadline_queued_late_still_pops_before_an_arrival_at_its_nanosecond() {
    // The chunks' own spread (first to third arrival), in steady state.
    let (arrivals, _) = chunks_run(50 * MS);
    let spread = arrivals[3 * 10 + 2] - arrivals[3 * 10];
    for c in 5..30 {
        assert_eq!(
            arrivals[3 * c + 2] - arrivals[3 * c],
            spread,
            "chunk {c}'s spread differs from chunk 10's"
        );
    }
    let (arrivals, acks) = chunks_run(spread + MAX_DELAY_NS);
    let chunks = (arrivals.len() / 3).saturating_sub(1);
    assert!(chunks >= 30, "{} segments arrived", arrivals.len());
    let mut ties = 0;
    for c in 5..chunks - 1 {
        let due = arrivals[3 * c + 2] + MAX_DELAY_NS;
        if arrivals[3 * c + 3] != due {
            continue;
        }
        ties += 1;
        // The timer's ACK at the tie, then the next chunk's own pair (its
        // third segment's deadline is itself the following chunk's tie).
        let window: Vec<u64> = acks
            .iter()
            .copied()
            .filter(|&t| t >= arrivals[3 * c + 2] && t <= arrivals[3 * c + 5] + MAX_DELAY_NS)
            .collect();
        assert_eq!(
            window,
            vec![due, arrivals[3 * c + 4], arrivals[3 * c + 5] + MAX_DELAY_NS],
            "chunk {c}: segments arrived at {:?}",
            &arrivals[3 * c..3 * c + 6]
        );
    }
    assert!(
        ties >= 20,
        "only {ties} chunks tied with the next one's arrival"
    );
}
