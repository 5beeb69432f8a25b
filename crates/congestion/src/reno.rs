//! Reno (stub; being written).
use crate::config::Config;
use crate::controller::{AckContext, CongestionControl};
use crate::delivery_rate::DeliveryRateSampler;
use crate::snapshot::Snapshot;
use crate::time::Instant;

/// Reno.
#[derive(Clone, Debug)]
pub struct Reno { cwnd: u64 }
impl Reno {
    /// New.
    pub fn new(c: &Config) -> Self { Reno { cwnd: c.mss_bytes * c.initial_cwnd_packets } }
}
impl CongestionControl for Reno {
    fn on_ack(&mut self, _a: &AckContext<'_>, _s: &mut DeliveryRateSampler) {}
    fn on_packets_lost(&mut self, _n: Instant, _l: u64, _f: u64, _e: bool) {}
    fn on_retransmission_timeout(&mut self, _n: Instant, _f: u64) {}
    fn on_mss_change(&mut self, _m: u64) {}
    fn cwnd_bytes(&self) -> u64 { self.cwnd }
    fn pacing_rate_bytes_per_sec(&self) -> u64 { 1 }
    fn send_quantum_bytes(&self) -> u64 { 1 }
    fn snapshot(&self) -> Snapshot { Snapshot::default() }
}
