//! Plugging your own congestion control into bbrlab.
//!
//! Implement `congestion::CongestionControl`, wrap a constructor in a
//! `netsim::CustomCc`, and put it on a flow: the simulator (and, through
//! `transport::sender::send_with`, the UDP transport) runs it with the same
//! sender, loss detection, RTT estimation and delivery-rate samples as the
//! built-in algorithms. This one is a toy AIMD: +1 packet per window of
//! data acknowledged, halve on a new loss episode, paced at 1.25 × cwnd/srtt.
//!
//! Run: `cargo run --release -p netsim --example custom_algorithm`

use congestion::{AckContext, CongestionControl, DeliveryRateSampler, Instant, Mode, Snapshot};
use netsim::{CustomCc, FlowConfig, MemoryRecorder, SimConfig};
use std::path::Path;

/// A toy additive-increase, multiplicative-decrease controller.
struct Aimd {
    mss: u64,
    cwnd: u64,
    acked_in_window: u64,
    pacing: u64,
}

impl CongestionControl for Aimd {
    fn on_ack(&mut self, ack: &AckContext<'_>, _sampler: &mut DeliveryRateSampler) {
        self.acked_in_window += ack.rate.acked_bytes;
        if self.acked_in_window >= self.cwnd {
            self.acked_in_window -= self.cwnd;
            self.cwnd += self.mss;
        }
        let srtt = ack.rtt.smoothed_ns().unwrap_or(100_000_000).max(1);
        self.pacing = (self.cwnd as u128 * 1_250_000_000 / srtt as u128) as u64;
    }
    fn on_packets_lost(&mut self, _now: Instant, _lost: u64, _inflight: u64, new_episode: bool) {
        if new_episode {
            self.cwnd = (self.cwnd / 2).max(2 * self.mss);
        }
    }
    fn on_retransmission_timeout(&mut self, _now: Instant, _inflight: u64) {
        self.cwnd = self.mss;
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss;
    }
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.pacing.max(1)
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.mss
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.mode = Mode::CongestionAvoidance;
        s.cwnd_bytes = self.cwnd;
        s.pacing_rate_bytes_per_sec = self.pacing;
        s
    }
    fn name(&self) -> &str {
        "toy-aimd"
    }
}

fn direction(text: &str) -> link::ResolvedDirection {
    let cfg: link::DirectionConfig = toml::from_str(text).expect("valid direction");
    cfg.resolve(Path::new(".")).expect("resolves")
}

fn main() {
    let aimd = CustomCc::new("toy-aimd", |cc, _now| {
        Box::new(Aimd {
            mss: cc.mss_bytes,
            cwnd: 10 * cc.mss_bytes,
            acked_in_window: 0,
            pacing: 1_000_000,
        }) as Box<dyn CongestionControl + Send + Sync>
    });
    let mut flow = FlowConfig::bulk("mine", congestion::Config::default());
    flow.custom_cc = Some(aimd);
    let cfg = SimConfig {
        duration_ns: 30_000_000_000,
        seed: 1,
        forward: direction("rate = \"10Mbit\"\ndelay = \"20ms\"\nqueue = { limit = \"100pkt\" }"),
        reverse: direction("delay = \"20ms\""),
        flows: vec![flow],
        sample_interval_ns: 0,
        topology: Default::default(),
    };
    let summary = netsim::run(&cfg, &mut MemoryRecorder::default()).expect("simulation");
    for f in &summary.flows {
        println!(
            "{} ({}): {:.2} Mbit/s, {} retransmissions",
            f.name,
            f.algorithm,
            f.goodput_bps / 1e6,
            f.retransmissions
        );
    }
}
