//! A controller can be copied with its state (a stack that clones a
//! connection's controller keeps what it learned), and is `Send + Sync`.

mod support;

use congestion::{Algorithm, Config, CongestionControl, Controller};
use support::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn a_controller_is_send_and_sync() {
    assert_send_sync::<Controller>();
}

/// For every built-in algorithm: a copy taken mid-run is the same
/// controller (the same snapshot after the same events), and the two are
/// independent (events fed to one only move that one).
#[test]
fn a_copy_carries_the_state_and_then_goes_its_own_way() {
    for alg in Algorithm::ALL {
        let mut d = RoundDriver::new(&Config::new(alg));
        for _ in 0..6 {
            d.round(1.25e6, 40 * MS, 60_000, false);
        }
        let mut e = d.try_clone().expect("a built-in algorithm copies");
        assert_eq!(e.cc.snapshot(), d.cc.snapshot(), "{alg:?}: the copy");
        assert_eq!(e.cc.cwnd_bytes(), d.cc.cwnd_bytes(), "{alg:?}");
        assert_eq!(e.cc.rtt().smoothed(), d.cc.rtt().smoothed(), "{alg:?}");
        // The same next rounds to both: still equal.
        for _ in 0..4 {
            let (a, b) = (
                d.round(2.5e6, 30 * MS, 80_000, false),
                e.round(2.5e6, 30 * MS, 80_000, false),
            );
            assert_eq!(a, b, "{alg:?}: the same events, the same controller");
        }
        // A round for the original only: the copy stays where it was.
        let kept = e.cc.snapshot();
        d.round(0.5e6, 90 * MS, 10_000, false);
        assert_eq!(e.cc.snapshot(), kept, "{alg:?}: the copy is its own");
    }
}

/// A user's algorithm that does not implement `clone_box` cannot be
/// copied, and says so with `None` rather than a half copy.
#[test]
fn a_users_algorithm_copies_only_if_it_says_how() {
    struct Fixed;
    impl CongestionControl for Fixed {
        fn on_ack(
            &mut self,
            _: &congestion::AckContext<'_>,
            _: &mut congestion::DeliveryRateSampler,
        ) {
        }
        fn on_packets_lost(&mut self, _: congestion::Instant, _: u64, _: u64, _: bool) {}
        fn on_retransmission_timeout(&mut self, _: congestion::Instant, _: u64) {}
        fn on_mss_change(&mut self, _: u64) {}
        fn cwnd_bytes(&self) -> u64 {
            15_000
        }
        fn pacing_rate_bytes_per_sec(&self) -> u64 {
            1_000_000
        }
        fn send_quantum_bytes(&self) -> u64 {
            3000
        }
        fn snapshot(&self) -> congestion::Snapshot {
            congestion::Snapshot::default()
        }
    }
    let c = Controller::custom(&Config::default(), Box::new(Fixed));
    assert!(c.try_clone().is_none());
}
