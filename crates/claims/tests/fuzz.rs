//! `bbrlab fuzz` finds planted bugs: a small Reno-like controller, sane
//! by itself, with one bug planted at a time, must fail the invariant
//! that bug breaks, and the shrunk path it writes must still fail it.
//! A fuzzer that could not find them would be a defect. Also: bbrlab's
//! own controllers pass a short run, and one seed gives one result.

mod common;

use claims::conformance::grid::Controller;
use claims::fuzz::{self, Outcome};
use common::planted::{planted, Bug};
use std::time::Duration;

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
