//! The example's transfer, in process over loopback, with `bbr` and
//! `cubic` through the adapter: every byte arrives intact and the
//! observer shows the sender's controller took ACKs. Nothing is timed
//! beyond a generous bound against a hung transfer.

#[path = "../examples/bulk.rs"]
#[allow(dead_code)] // the example's `main` and CLI are not used here
mod bulk;

use bbrlab_s2n::Endpoint;
use congestion::{Algorithm, Config};
use std::time::Duration;

const BYTES: u64 = 8_000_000;

async fn run(algorithm: Algorithm) -> bulk::Report {
    let transfer = bulk::transfer(Endpoint::new(Config::new(algorithm)), BYTES);
    tokio::time::timeout(Duration::from_secs(120), transfer)
        .await
        .unwrap_or_else(|_| panic!("{algorithm}: transfer did not finish within 120 s"))
        .unwrap_or_else(|e| panic!("{algorithm}: transfer failed: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bbr_transfers_every_byte_and_its_controller_takes_acks() {
    let report = run(Algorithm::Bbr).await;
    assert_eq!(report.bytes, BYTES);
    let o = report.observed.expect("the sender's controller published");
    assert_eq!(o.snapshot.algorithm, Some(Algorithm::Bbr));
    assert!(
        o.snapshot.round_count > 0,
        "rounds: {}",
        o.snapshot.round_count
    );
    assert!(
        o.snapshot
            .bw_estimate_bytes_per_sec
            .is_some_and(|b| b > 0.0),
        "bw estimate: {:?}",
        o.snapshot.bw_estimate_bytes_per_sec
    );
    assert!(o.snapshot.min_rtt.is_some());
    // Every byte of the stream was sent in counted packets at least once.
    assert!(o.bytes_sent >= BYTES, "sent {} B", o.bytes_sent);
    assert!(o.bytes_acked > 0 && o.acks > 0);
    assert!(o.srtt.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cubic_transfers_every_byte_and_its_controller_takes_acks() {
    let report = run(Algorithm::Cubic).await;
    assert_eq!(report.bytes, BYTES);
    let o = report.observed.expect("the sender's controller published");
    assert_eq!(o.snapshot.algorithm, Some(Algorithm::Cubic));
    assert!(o.delivered_bytes > 0, "the sampler counted deliveries");
    assert!(o.bytes_sent >= BYTES, "sent {} B", o.bytes_sent);
    assert!(o.acks > 0);
    // The window grew from the initial 10 packets: ACKs reached CUBIC.
    assert!(o.snapshot.cwnd_bytes > 10 * 1200 || o.packets_lost > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_algorithms_transfer_every_byte_too() {
    for algorithm in [Algorithm::BbrJitter, Algorithm::Bbr3, Algorithm::Reno] {
        let report = run(algorithm).await;
        assert_eq!(report.bytes, BYTES, "{algorithm}");
        let o = report.observed.expect("the sender's controller published");
        assert_eq!(o.snapshot.algorithm, Some(algorithm));
        assert!(o.acks > 0 && o.bytes_sent >= BYTES, "{algorithm}: {o:?}");
    }
}
