//! What the tests of this crate share.

use congestion::{
    AckContext, AckedPacket, CongestionControl, DeliveryRateSampler, Instant, LossContext, Mode,
    Snapshot,
};
use std::sync::{Arc, Mutex};

/// Shares a wrapper with the test, which reads it after the run.
pub struct Shared<C>(pub Arc<Mutex<C>>);

impl<C: CongestionControl + Send> CongestionControl for Shared<C> {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, before: u64) {
        self.0.lock().unwrap().on_packet_sent(now, bytes, before)
    }
    fn on_packets_acked(&mut self, now: Instant, acked: &[AckedPacket]) {
        self.0.lock().unwrap().on_packets_acked(now, acked)
    }
    fn on_ack(&mut self, ack: &AckContext<'_>, s: &mut DeliveryRateSampler) {
        self.0.lock().unwrap().on_ack(ack, s)
    }
    fn on_packets_lost(&mut self, now: Instant, l: u64, b: u64, n: bool) {
        self.0.lock().unwrap().on_packets_lost(now, l, b, n)
    }
    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.0.lock().unwrap().on_loss(loss)
    }
    fn on_congestion_experienced(&mut self, now: Instant, ce: u64, b: u64, n: bool) -> bool {
        self.0
            .lock()
            .unwrap()
            .on_congestion_experienced(now, ce, b, n)
    }
    fn on_retransmission_timeout(&mut self, now: Instant, b: u64) {
        self.0.lock().unwrap().on_retransmission_timeout(now, b)
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.0.lock().unwrap().on_mss_change(mss)
    }
    fn cwnd_bytes(&self) -> u64 {
        self.0.lock().unwrap().cwnd_bytes()
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.0.lock().unwrap().pacing_rate_bytes_per_sec()
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.0.lock().unwrap().send_quantum_bytes()
    }
    fn snapshot(&self) -> Snapshot {
        self.0.lock().unwrap().snapshot()
    }
    fn mode(&self) -> Mode {
        self.0.lock().unwrap().mode()
    }
}
