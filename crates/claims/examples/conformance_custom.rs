//! Putting your own BBR through the draft's test cases.
//!
//! An implementation outside bbrlab runs the suite through the
//! `congestion` crate's `CongestionControl` trait: wrap your controller in
//! it, name it with `Controller::custom`, and run. Here the "outside"
//! controller is congestion's own BBRv3 behind a wrapper, so the example
//! is self-contained; replace `MyBbr`'s body with calls into yours.
//!
//! `cargo run -p claims --example conformance_custom [CASES_DIR]`

use claims::conformance::{self, grid, report};
use congestion::{
    AckContext, AckedPacket, Config, CongestionControl, DeliveryRateSampler, Instant, LossContext,
    Mode, RttEstimator, Snapshot,
};
use std::path::PathBuf;

/// Your controller. Each method is one event the sender tells it of
/// (the `congestion` crate's guide, "Driving it from RFC 9002 loss
/// recovery", says when); the wrapper here hands each to the controller
/// inside.
struct MyBbr {
    inner: Box<dyn CongestionControl + Send + Sync>,
}

impl CongestionControl for MyBbr {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        self.inner.on_packet_sent(now, bytes, in_flight_before)
    }
    fn on_restart_from_idle(&mut self, now: Instant, rtt: &RttEstimator) {
        self.inner.on_restart_from_idle(now, rtt)
    }
    fn on_handshake_rtt(&mut self, now: Instant, rtt: &RttEstimator) {
        self.inner.on_handshake_rtt(now, rtt)
    }
    fn on_packets_acked(&mut self, now: Instant, acked: &[AckedPacket]) {
        self.inner.on_packets_acked(now, acked)
    }
    fn on_ack(&mut self, ack: &AckContext<'_>, sampler: &mut DeliveryRateSampler) {
        self.inner.on_ack(ack, sampler)
    }
    fn on_packets_lost(&mut self, now: Instant, lost: u64, in_flight: u64, new_episode: bool) {
        self.inner
            .on_packets_lost(now, lost, in_flight, new_episode)
    }
    fn on_loss(&mut self, loss: &LossContext<'_>) {
        self.inner.on_loss(loss)
    }
    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        ce: u64,
        in_flight: u64,
        new: bool,
    ) -> bool {
        self.inner
            .on_congestion_experienced(now, ce, in_flight, new)
    }
    fn on_retransmission_timeout(&mut self, now: Instant, bytes_in_flight: u64) {
        self.inner.on_retransmission_timeout(now, bytes_in_flight)
    }
    fn on_spurious_loss(&mut self, now: Instant) {
        self.inner.on_spurious_loss(now)
    }
    fn on_ack_begin(&mut self) {
        self.inner.on_ack_begin()
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.inner.on_mss_change(mss)
    }
    fn cwnd_bytes(&self) -> u64 {
        self.inner.cwnd_bytes()
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.inner.pacing_rate_bytes_per_sec()
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.inner.send_quantum_bytes()
    }
    fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }
    fn mode(&self) -> Mode {
        self.inner.mode()
    }
    fn name(&self) -> &str {
        "my-bbr"
    }
}

fn main() -> Result<(), String> {
    let cases = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/conformance")
        });
    let mine = grid::Controller::custom("my-bbr", true, |cfg: &Config, now: Instant| {
        let mut v3 = *cfg;
        v3.algorithm = congestion::Algorithm::Bbr3;
        Box::new(MyBbr {
            inner: congestion::builtin(&v3, now),
        })
    });
    let opts = conformance::Options {
        cases,
        only: None,
        controllers: vec![mine, grid::Controller::parse("bbr3")?],
        grid: grid::Grid::Quick,
        jobs: None,
        timeout: conformance::DEFAULT_TIMEOUT,
        qlog: None,
    };
    let cases = conformance::select(&opts)?;
    let results = conformance::run(&opts, &runner::sweep::Quiet)?;
    let names: Vec<String> = opts.controllers.iter().map(|c| c.name.clone()).collect();
    print!("{}", report::markdown(&cases, &names, &results));
    Ok(())
}
