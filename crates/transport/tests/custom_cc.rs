//! A user's congestion control drives the UDP transport on loopback: the
//! transfer completes intact, the summary names the algorithm, and the
//! controller saw the transfer's ACKs.

mod common;

use congestion::{AckContext, CongestionControl, DeliveryRateSampler, Instant, Snapshot};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use transport::sender::send_with;

/// A fixed 64-packet window at a fixed 200 Mbit/s, counting ACKs.
struct Fixed {
    mss: u64,
    acks: Arc<AtomicU64>,
}

impl CongestionControl for Fixed {
    fn on_ack(&mut self, _: &AckContext<'_>, _: &mut DeliveryRateSampler) {
        self.acks.fetch_add(1, Ordering::Relaxed);
    }
    fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss;
    }
    fn cwnd_bytes(&self) -> u64 {
        64 * self.mss
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        25_000_000
    }
    fn send_quantum_bytes(&self) -> u64 {
        4 * self.mss
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.cwnd_bytes = 64 * self.mss;
        s
    }
    fn name(&self) -> &str {
        "fixed-64"
    }
}

#[test]
fn a_custom_controller_moves_every_byte_on_loopback() {
    let acks = Arc::new(AtomicU64::new(0));
    let counter = acks.clone();
    let custom = sender::CustomCc::new("fixed-64", move |cc, _| {
        Box::new(Fixed {
            mss: cc.mss_bytes,
            acks: counter.clone(),
        }) as Box<dyn CongestionControl + Send + Sync>
    });
    let bytes = 4_000_000;
    let (sent, got) = common::with_receiver(47_611, |addr| {
        send_with(
            common::pattern_config(addr, congestion::Config::default(), 3, bytes),
            Some(custom),
        )
        .expect("send")
    });
    let got = got.expect("recv");
    assert_eq!(sent.cc, "fixed-64");
    assert_eq!(sent.bytes, bytes, "bytes verified by the receiver");
    assert_eq!(got.bytes, bytes);
    assert!(acks.load(Ordering::Relaxed) > 10, "the controller saw ACKs");
}
