//! `bbrlab fuzz` finds planted bugs: a small Reno-like controller, sane
//! by itself, with one bug planted at a time, must fail the invariant
//! that bug breaks, and the shrunk path it writes must still fail it.
//! A fuzzer that could not find them would be a defect. Also: bbrlab's
//! own controllers pass a short run, and one seed gives one result.

use claims::conformance::grid::Controller;
use claims::fuzz::{self, Outcome};
use congestion::{AckContext, Config, CongestionControl, DeliveryRateSampler, Instant, Snapshot};
use std::time::Duration;

#[derive(Clone, Copy, PartialEq)]
enum Bug {
    /// None: the controller is sane.
    None,
    /// `cwnd -= 10 × lost`, unchecked: a u64 underflow on loss.
    UnderflowOnLoss,
    /// The window grows with every ACK, used or not.
    GrowsWhenAppLimited,
    /// Once the delivery rate has stayed below half its best for ten
    /// samples (a rate drop), the window freezes at two packets.
    StallsAfterRateDrop,
}

/// Reno, growing only while it uses at least half its window.
struct Planted {
    bug: Bug,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    rate: u64,
    best: f64,
    low: u32,
    frozen: bool,
}

impl Planted {
    fn new(bug: Bug) -> Planted {
        Planted {
            bug,
            mss: 1500,
            cwnd: 15_000,
            ssthresh: u64::MAX,
            rate: 1_000_000_000,
            best: 0.0,
            low: 0,
            frozen: false,
        }
    }
}

impl CongestionControl for Planted {
    fn on_ack(&mut self, a: &AckContext<'_>, _: &mut DeliveryRateSampler) {
        let rs = a.rate;
        if let (Some(iv), false) = (rs.interval_ns, rs.is_app_limited) {
            let r = rs.delivered_bytes as f64 / iv.max(1) as f64;
            self.best = self.best.max(r);
            self.low = if r < 0.5 * self.best { self.low + 1 } else { 0 };
            if self.bug == Bug::StallsAfterRateDrop && self.low >= 10 {
                self.frozen = true;
            }
        }
        let used = 2 * a.bytes_in_flight + rs.acked_bytes >= self.cwnd;
        if self.bug == Bug::GrowsWhenAppLimited || used {
            if self.cwnd < self.ssthresh {
                self.cwnd += rs.acked_bytes;
            } else {
                self.cwnd += (self.mss * rs.acked_bytes / self.cwnd).max(1);
            }
        }
        if self.frozen {
            self.cwnd = 2 * self.mss;
        }
        if let Some(srtt) = a.rtt.smoothed() {
            self.rate = (2 * self.cwnd as u128 * 1_000_000_000 / srtt.as_nanos().max(1)) as u64;
        }
    }
    fn on_packets_lost(&mut self, _: Instant, lost: u64, _: u64, new_episode: bool) {
        if self.bug == Bug::UnderflowOnLoss {
            // Wraps (or, with overflow checks, panics) once 10 × lost
            // exceeds the window.
            self.cwnd = self.cwnd.wrapping_sub(10 * lost);
            if cfg!(debug_assertions) && self.cwnd > 1 << 50 {
                panic!("attempt to subtract with overflow");
            }
            return;
        }
        if new_episode {
            self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
            self.cwnd = self.ssthresh;
        }
    }
    fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.mss;
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.mss = mss;
    }
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.rate
    }
    fn send_quantum_bytes(&self) -> u64 {
        self.mss
    }
    fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        s.cwnd_bytes = self.cwnd;
        s.pacing_rate_bytes_per_sec = self.rate;
        s
    }
}

fn planted(bug: Bug) -> Controller {
    let name = match bug {
        Bug::None => "sane",
        Bug::UnderflowOnLoss => "underflow-on-loss",
        Bug::GrowsWhenAppLimited => "grows-when-app-limited",
        Bug::StallsAfterRateDrop => "stalls-after-rate-drop",
    };
    Controller::custom(name, false, move |_: &Config, _: Instant| {
        Box::new(Planted::new(bug)) as Box<dyn CongestionControl + Send + Sync>
    })
}

/// `runs` runs of `cc` from `seed` on one worker: the same runs on any
/// machine, however busy (the time limits are far above a run's).
fn fuzz_it(cc: Controller, runs: u64, seed: u64) -> fuzz::Report {
    fuzz::run(
        &fuzz::Options {
            controllers: vec![cc],
            seconds: 1800.0,
            seed,
            jobs: 1,
            max_failures: 1,
            max_runs: Some(runs),
            run_timeout: Duration::from_secs(120),
        },
        &fuzz::Silent,
    )
    .unwrap()
}

#[test]
fn each_planted_bug_fails_its_invariant_and_its_shrunk_path_still_fails() {
    for (bug, want) in [
        // A wrapped window: a panic with overflow checks, else a window
        // past 2^40 B, or the engine's stop when it floods the path.
        (
            Bug::UnderflowOnLoss,
            &["no_panic", "window_ceiling", "run_completes"][..],
        ),
        (Bug::GrowsWhenAppLimited, &["app_limited_growth"][..]),
        (
            Bug::StallsAfterRateDrop,
            &["rate_step_recovery", "no_stall"][..],
        ),
    ] {
        let cc = planted(bug);
        let report = fuzz_it(cc.clone(), 3000, 11);
        let found = report
            .failures
            .first()
            .unwrap_or_else(|| panic!("{}: nothing found in {} runs", cc.name, report.executions));
        assert!(
            want.contains(&found.invariant),
            "{}: found {} ({:?}), wanted {want:?}",
            cc.name,
            found.invariant,
            found.violations
        );
        // The written path, run again, still breaks it.
        match fuzz::evaluate(&found.path, &cc, Duration::from_secs(20)) {
            Outcome::Judged(v) => assert!(
                v.iter().any(|x| x.invariant == found.invariant),
                "{}: the shrunk path no longer fails: {v:?}\n{}",
                cc.name,
                found.scenario
            ),
            Outcome::Stopped => panic!("{}: the shrunk path timed out", cc.name),
        }
        // Shrunk toward the simple path: one flow, no impairment it does
        // not need.
        assert_eq!(found.path.flows, 1, "{}: {}", cc.name, found.scenario);
        assert!(
            found.path.jitter.is_none() && found.path.policer.is_none(),
            "{}",
            found.scenario
        );
    }
}

#[test]
fn the_sane_controller_and_bbrlabs_own_pass_a_short_run_and_a_seed_repeats() {
    for cc in [
        planted(Bug::None),
        Controller::parse("bbr3").unwrap(),
        Controller::parse("cubic").unwrap(),
    ] {
        let report = fuzz_it(cc.clone(), 300, 5);
        assert_eq!(report.executions, 300, "{}", cc.name);
        assert!(
            report.failures.is_empty(),
            "{}: {:?}",
            cc.name,
            report
                .failures
                .iter()
                .map(|f| (&f.invariant, &f.violations, &f.scenario))
                .collect::<Vec<_>>()
        );
    }
    // The same seed and run count give the same failure, shrunk the same
    // way, its scenario file byte for byte.
    let a = fuzz_it(planted(Bug::UnderflowOnLoss), 3000, 3);
    let b = fuzz_it(planted(Bug::UnderflowOnLoss), 3000, 3);
    assert!(
        !a.failures.is_empty(),
        "{} runs found nothing",
        a.executions
    );
    assert_eq!(a.failures[0].scenario, b.failures[0].scenario);
    assert_eq!(a.executions, b.executions);
}
