//! Issue 13: `queue_delay_ms` held the last departed packet's wait while
//! the queue was empty (`0.020000,forward,0,0,11.685,0`), and the reverse
//! direction always reported 0. It is now the wait a packet offered at the
//! sample time would see, in both directions.

use congestion::{Algorithm, Config};
use netsim::{FlowConfig, MemoryRecorder, SimConfig};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

#[test]
fn queue_delay_is_zero_when_empty_and_the_backlog_otherwise_in_both_directions() {
    // CUBIC fills the forward queue; a 200 kbit/s reverse link queues
    // ACKs (one 60-byte ACK per 1500-byte packet at 10 Mbit/s is 400
    // kbit/s of ACKs).
    let cfg = SimConfig {
        duration_ns: 3_000 * MS,
        seed: 1,
        forward: direction("rate = \"10mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"50pkt\" }"),
        reverse: direction("rate = \"200kbit\"\ndelay = \"20ms\"\nqueue = { limit = \"1000pkt\" }"),
        flows: vec![FlowConfig::bulk("c", Config::new(Algorithm::Cubic))],
        sample_interval_ns: 10 * MS,
        topology: Default::default(),
    };
    let mut rec = MemoryRecorder::default();
    netsim::run(&cfg, &mut rec).unwrap();
    let mut busy = [0, 0];
    for s in &rec.links {
        if s.queue_packets == 0 {
            assert_eq!(s.queue_delay_ns, 0, "empty queue with a delay: {s:?}");
            continue;
        }
        let rate = if s.direction == "forward" {
            10e6
        } else {
            200e3
        };
        // Everything queued, less at most the one packet in service.
        let full = s.queue_bytes as f64 * 8.0 / rate * 1e9;
        let pkt = if s.direction == "forward" {
            1500.0
        } else {
            60.0
        } * 8.0
            / rate
            * 1e9;
        let d = s.queue_delay_ns as f64;
        assert!(
            d <= full + 1.0 && d >= full - pkt - 1.0,
            "{s:?}: {d} vs {full}"
        );
        busy[usize::from(s.direction == "reverse")] += 1;
    }
    assert!(busy[0] > 10 && busy[1] > 10, "queues seen busy: {busy:?}");
    // Each flow row carries the forward link's figure of the same instant.
    for f in &rec.flows {
        let l = rec
            .links
            .iter()
            .find(|l| l.t_ns == f.t_ns && l.direction == "forward")
            .unwrap();
        assert_eq!(f.queue_delay_ns, l.queue_delay_ns);
    }
}
