//! The engine stops a run that cannot go on, with `RunStopped` inside the
//! error: here a controller whose window and pacing rate are wrapped
//! counters (2^40 bytes, 10^15 bytes/s), which would otherwise fill memory
//! with the records of packets in flight.

use congestion::{AckContext, CongestionControl, DeliveryRateSampler, Instant, Snapshot};
use netsim::{CustomCc, FlowConfig, MemoryRecorder, RunStopped, SimConfig};

mod common;
use common::direction;

struct Runaway;

impl CongestionControl for Runaway {
    fn on_ack(&mut self, _: &AckContext<'_>, _: &mut DeliveryRateSampler) {}
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        1 << 40
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        1_000_000_000_000_000
    }
    fn send_quantum_bytes(&self) -> u64 {
        1500
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot::default()
    }
}

#[test]
fn a_runaway_window_stops_the_run_with_run_stopped_before_memory_fills() {
    let mut flow = FlowConfig::bulk("runaway", congestion::Config::default());
    flow.custom_cc = Some(CustomCc::new("runaway", |_, _| {
        Box::new(Runaway) as Box<dyn CongestionControl + Send + Sync>
    }));
    let cfg = SimConfig {
        duration_ns: 10_000_000_000,
        seed: 1,
        forward: direction("rate = \"10Gbit\"\ndelay = \"10ms\"\nqueue = { limit = \"1000pkt\" }"),
        reverse: direction("delay = \"10ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let e = netsim::run(&cfg, &mut MemoryRecorder::default()).expect_err("must stop");
    let inner = e.get_ref().expect("an error with a cause");
    assert!(inner.is::<RunStopped>(), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("ran away") || m.contains("made no progress"),
        "{m}"
    );
}
