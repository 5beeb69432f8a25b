//! A user's own congestion control (`congestion::CongestionControl` behind
//! `netsim::CustomCc`) runs in the simulator like a built-in one: the
//! sender drives it and obeys its window, and outputs carry its name.

use congestion::{
    AckContext, Config, CongestionControl, Controller, DeliveryRateSampler, Instant, Snapshot,
};
use netsim::{CustomCc, FlowConfig, MemoryRecorder, SimConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;

/// A fixed window of `packets`, paced far faster than any link here, that
/// counts the ACKs it is given.
struct FixedWindow {
    cwnd: u64,
    acks: Arc<AtomicU64>,
}

impl CongestionControl for FixedWindow {
    fn on_ack(&mut self, _ack: &AckContext<'_>, _sampler: &mut DeliveryRateSampler) {
        self.acks.fetch_add(1, Ordering::Relaxed);
    }
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, _: u64) {}
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        10_000_000_000
    }
    fn send_quantum_bytes(&self) -> u64 {
        1500
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.cwnd_bytes = self.cwnd;
        s
    }
    fn name(&self) -> &str {
        "fixed-20"
    }
}

fn fixed(acks: &Arc<AtomicU64>) -> CustomCc {
    let acks = acks.clone();
    CustomCc::new("fixed-20", move |cc, _| {
        Box::new(FixedWindow {
            cwnd: 20 * cc.mss_bytes,
            acks: acks.clone(),
        }) as Box<dyn CongestionControl + Send + Sync>
    })
}

#[test]
fn a_custom_window_limits_goodput_to_window_over_rtt() {
    let acks = Arc::new(AtomicU64::new(0));
    let mut flow = FlowConfig::bulk("mine", Config::default());
    flow.custom_cc = Some(fixed(&acks));
    let cfg = SimConfig {
        duration_ns: 20 * SEC,
        seed: 1,
        // 100 Mbit/s, 40 ms: a BDP of 333 packets, far above the window.
        forward: direction("rate = \"100Mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"1000pkt\" }"),
        reverse: direction("delay = \"20ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let mut rec = MemoryRecorder::default();
    let summary = netsim::run(&cfg, &mut rec).expect("simulation");
    let f = &summary.flows[0];
    assert_eq!(f.algorithm, "fixed-20");
    // 20 packets of 1500 B per 40 ms round trip (plus 0.12 ms of
    // serialisation per packet at most): 6.0 Mbit/s, within 3 %.
    let want = 20.0 * 1500.0 * 8.0 / 0.040;
    assert!(
        (f.goodput_bps - want).abs() <= 0.03 * want,
        "goodput {} vs {want}",
        f.goodput_bps
    );
    // The sender fed it every ACK: one per packet delivered, as the
    // default receiver acknowledges each packet.
    let packets = f.delivered_bytes / 1500;
    let n = acks.load(Ordering::Relaxed);
    assert!(
        n + 1 >= packets && n <= packets + 1,
        "{n} ACKs for {packets} packets"
    );
}

#[test]
fn a_custom_controller_reports_its_name_and_no_builtin_algorithm() {
    let acks = Arc::new(AtomicU64::new(0));
    let c = Controller::custom(
        &Config::default(),
        fixed(&acks)
            .build(&Config::default(), Instant::ZERO)
            .expect("built with a constructor"),
    );
    assert_eq!(c.name(), "fixed-20");
    assert_eq!(c.algorithm(), None);
    assert_eq!(c.snapshot().algorithm, None);
    assert_eq!(c.cwnd_bytes(), 20 * 1500);
    let b = Controller::new(&Config::default(), Instant::ZERO);
    assert_eq!(b.name(), "bbr");
    assert_eq!(b.algorithm(), Some(congestion::Algorithm::Bbr));
}
