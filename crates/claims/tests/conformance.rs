//! The conformance suite's cases (`scenarios/conformance/`) against
//! bbrlab's own `bbr3` in the draft's profile, which must pass every one
//! on the quick grid, and against each case's `negative` controller,
//! which must fail it: a case whose checks no controller can fail tests
//! nothing.

use claims::conformance::{self, case, check::Outcome, grid};
use std::path::{Path, PathBuf};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/conformance")
}

fn opts(controllers: &[&str], only: Option<Vec<String>>) -> conformance::Options {
    conformance::Options {
        cases: cases_dir(),
        only,
        controllers: controllers
            .iter()
            .map(|c| grid::Controller::parse(c).unwrap())
            .collect(),
        grid: grid::Grid::Quick,
        jobs: None,
        timeout: conformance::DEFAULT_TIMEOUT,
    }
}

#[test]
fn every_case_loads_with_a_unique_id_a_section_and_reasons() {
    let cases = case::load_dir(&cases_dir()).unwrap();
    assert!(cases.len() >= 10, "{} cases", cases.len());
    for c in &cases {
        assert!(c.section.contains("draft-ietf-ccwg-bbr-06"), "{}", c.id);
        assert!(
            c.checks.iter().all(|k| !k.why.trim().is_empty()),
            "{}",
            c.id
        );
        let file = c.path.file_name().unwrap().to_string_lossy().to_string();
        assert!(file.starts_with(&c.id), "{file} holds {}", c.id);
    }
}

#[test]
fn bbrlab_bbr3_in_the_draft_profile_passes_every_case_and_every_check_is_judged() {
    let results = conformance::run(&opts(&["bbr3"], None), &runner::sweep::Quiet).unwrap();
    assert!(!results.is_empty());
    for r in &results {
        assert!(r.error.is_none(), "{} {}: {:?}", r.case, r.point, r.error);
        for c in &r.checks {
            assert!(
                matches!(c.outcome, Outcome::Pass { .. }),
                "{} at {}: {}: {:?}",
                r.case,
                r.point,
                c.check,
                c.outcome
            );
        }
    }
}

#[test]
fn each_cases_negative_controller_fails_it() {
    let cases = case::load_dir(&cases_dir()).unwrap();
    let mut with_negative = 0;
    for c in &cases {
        let Some(neg) = &c.negative else { continue };
        with_negative += 1;
        let results = conformance::run(
            &opts(&[neg], Some(vec![c.id.clone()])),
            &runner::sweep::Quiet,
        )
        .unwrap();
        assert!(
            results.iter().any(|r| r.failed()),
            "{} passes on its negative controller {neg}: {results:?}",
            c.id
        );
    }
    assert!(
        with_negative >= 5,
        "{with_negative} cases name a negative controller"
    );
}

#[test]
fn a_controller_without_state_has_its_state_checks_skipped_and_said_why() {
    let results = conformance::run(
        &opts(&["cubic"], Some(vec!["A10".into()])),
        &runner::sweep::Quiet,
    )
    .unwrap();
    let skipped: Vec<&str> = results
        .iter()
        .flat_map(|r| &r.checks)
        .filter_map(|c| match &c.outcome {
            Outcome::Skipped { why } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !skipped.is_empty() && skipped.iter().all(|w| w.contains("no BBR state")),
        "{skipped:?}"
    );
}

#[test]
fn bad_names_and_bad_case_files_are_clear_errors() {
    let e = grid::Controller::parse("bbr4").unwrap_err();
    assert!(e.contains("--cc bbr4"), "{e}");
    let e = grid::Controller::parse("bbr3:v2").unwrap_err();
    assert!(e.contains("draft") && e.contains("linux-v3"), "{e}");
    let e = conformance::select(&opts(&["bbr3"], Some(vec!["A99".into()]))).unwrap_err();
    assert!(e.contains("A99") && e.contains("A01"), "{e}");

    let p = Path::new("bad.toml");
    let base =
        "duration = \"1s\"\n[link.forward]\nrate = \"1mbit\"\n[[flow]]\nalgorithm = \"bbr3\"\n";
    let e = case::parse(base, p).unwrap_err();
    assert!(e.contains("bad.toml") && e.contains("[conformance]"), "{e}");
    let with = |extra: &str| {
        format!("{base}[conformance]\nid = \"X\"\ntitle = \"t\"\nsection = \"s\"\nbuffer_bdp = 1.0\nrtts = 10\n{extra}")
    };
    let e = case::parse(&with(""), p).unwrap_err();
    assert!(
        e.contains("missing field `checks`") || e.contains("no checks"),
        "{e}"
    );
    let e = case::parse(
        &with("[[conformance.checks]]\ncheck = \"state_left\"\nstate = \"startup\"\nwithin = \"ten\"\nwhy = \"w\"\n"),
        p,
    )
    .unwrap_err();
    assert!(e.contains("within") && e.contains("ten"), "{e}");
    let e = case::parse(
        &with("[[conformance.checks]]\ncheck = \"state_left\"\nstate = \"cruise\"\nwithin = \"1s\"\nwhy = \"w\"\n"),
        p,
    )
    .unwrap_err();
    assert!(e.contains("probe_bw_cruise"), "{e}");
    let e = case::parse(
        &with(
            "[[conformance.checks]]\ncheck = \"goodput_at_least\"\nfraction = 0.9\nwhy = \" \"\n",
        ),
        p,
    )
    .unwrap_err();
    assert!(e.contains("why"), "{e}");
    let e = case::parse(
        &with("[[conformance.checks]]\ncheck = \"loss_at_most\"\nwhy = \"w\"\n"),
        p,
    )
    .unwrap_err();
    assert!(e.contains("loss_at_most") && e.contains("allowed"), "{e}");
}

#[test]
fn a_case_scales_with_the_grid_point_and_takes_the_controller() {
    let cases = case::load_dir(&cases_dir()).unwrap();
    let a01 = cases.iter().find(|c| c.id == "A01").unwrap();
    let p = grid::Point {
        rate_bps: 10e6,
        rtt_ns: 200_000_000,
    };
    let cc = grid::Controller::parse("bbr3:linux-v3").unwrap();
    let run = conformance::scenario_of(a01, Some(p), &cc).unwrap();
    let cfg = &run.config;
    assert_eq!(cfg.forward.delay_ns + cfg.reverse.delay_ns, 200_000_000);
    // 3 BDPs of 10 Mbit/s × 200 ms: 3 × 166.7 packets of 1500 B, 500.
    assert!(run.text.contains("limit = \"500pkt\""), "{}", run.text);
    // 60 round trips of 200 ms.
    assert_eq!(cfg.duration_ns, 12_000_000_000);
    assert_eq!(
        cfg.flows[0].cc.bbr3.profile(),
        congestion::Bbr3Profile::LinuxV3
    );
}

/// A controller from outside bbrlab, through `Controller::custom`: one
/// that is BBRv3 inside passes as bbr3 does, one that is CUBIC inside
/// fails A01's queue check, and one that panics fails its runs with the
/// panic's message while the suite goes on.
#[test]
fn an_outside_controller_runs_through_the_trait_and_its_panic_is_a_failed_run() {
    use congestion::{Algorithm, Config, CongestionControl, Instant};
    let wrap = |alg: Algorithm| {
        move |cfg: &Config, now: Instant| -> Box<dyn CongestionControl + Send + Sync> {
            let mut c = *cfg;
            c.algorithm = alg;
            congestion::builtin(&c, now)
        }
    };
    struct Panics;
    impl CongestionControl for Panics {
        fn on_ack(
            &mut self,
            _: &congestion::AckContext<'_>,
            _: &mut congestion::DeliveryRateSampler,
        ) {
            panic!("an overflow in the outside controller");
        }
        fn on_packets_lost(&mut self, _: Instant, _: u64, _: u64, _: bool) {}
        fn on_retransmission_timeout(&mut self, _: Instant, _: u64) {}
        fn on_mss_change(&mut self, _: u64) {}
        fn cwnd_bytes(&self) -> u64 {
            15_000
        }
        fn pacing_rate_bytes_per_sec(&self) -> u64 {
            1_000_000
        }
        fn send_quantum_bytes(&self) -> u64 {
            1500
        }
        fn snapshot(&self) -> congestion::Snapshot {
            congestion::Snapshot::default()
        }
    }
    let mut o = opts(&[], Some(vec!["A01".into(), "A10".into()]));
    o.controllers = vec![
        grid::Controller::custom("outside-v3", true, wrap(Algorithm::Bbr3)),
        grid::Controller::custom("outside-cubic", false, wrap(Algorithm::Cubic)),
        grid::Controller::custom("outside-panics", true, |_: &Config, _: Instant| {
            Box::new(Panics) as Box<dyn CongestionControl + Send + Sync>
        }),
    ];
    let results = conformance::run(&o, &runner::sweep::Quiet).unwrap();
    let of = |name: &'static str| results.iter().filter(move |r| r.controller == name);
    assert!(of("outside-v3").all(|r| !r.failed()), "{results:?}");
    assert!(of("outside-cubic").any(|r| r.case == "A01" && r.failed()));
    assert_eq!(of("outside-panics").count(), 2);
    for r in of("outside-panics") {
        let e = r.error.as_deref().unwrap_or_default();
        assert!(
            e.contains("panicked") && e.contains("an overflow in the outside controller"),
            "{e}"
        );
    }
}

/// A run that takes longer than the timeout is stopped and recorded as a
/// timed-out failure, and the suite goes on: here a controller slowed to
/// half a millisecond per ACK, against a timeout of a third of a second.
#[test]
fn a_run_past_its_timeout_is_stopped_and_recorded() {
    use congestion::{
        AckContext, Algorithm, Config, CongestionControl, DeliveryRateSampler, Instant,
    };
    struct Slow(Box<dyn CongestionControl + Send + Sync>);
    impl CongestionControl for Slow {
        fn on_ack(&mut self, a: &AckContext<'_>, s: &mut DeliveryRateSampler) {
            std::thread::sleep(std::time::Duration::from_micros(500));
            self.0.on_ack(a, s)
        }
        fn on_packets_lost(&mut self, t: Instant, l: u64, i: u64, n: bool) {
            self.0.on_packets_lost(t, l, i, n)
        }
        fn on_retransmission_timeout(&mut self, t: Instant, i: u64) {
            self.0.on_retransmission_timeout(t, i)
        }
        fn on_mss_change(&mut self, m: u64) {
            self.0.on_mss_change(m)
        }
        fn cwnd_bytes(&self) -> u64 {
            self.0.cwnd_bytes()
        }
        fn pacing_rate_bytes_per_sec(&self) -> u64 {
            self.0.pacing_rate_bytes_per_sec()
        }
        fn send_quantum_bytes(&self) -> u64 {
            self.0.send_quantum_bytes()
        }
        fn snapshot(&self) -> congestion::Snapshot {
            self.0.snapshot()
        }
    }
    let mut o = opts(&["bbr3"], Some(vec!["A01".into()]));
    o.controllers.push(grid::Controller::custom(
        "slow",
        true,
        |cfg: &Config, now: Instant| {
            let mut c = *cfg;
            c.algorithm = Algorithm::Bbr3;
            Box::new(Slow(congestion::builtin(&c, now))) as Box<dyn CongestionControl + Send + Sync>
        },
    ));
    o.timeout = std::time::Duration::from_millis(300);
    let started = std::time::Instant::now();
    let results = conformance::run(&o, &runner::sweep::Quiet).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let slow = results.iter().find(|r| r.controller == "slow").unwrap();
    let e = slow.error.as_deref().unwrap_or_default();
    assert!(e.starts_with("timed out") && e.contains("simulated"), "{e}");
    let fast = results.iter().find(|r| r.controller == "bbr3").unwrap();
    assert!(!fast.failed(), "{fast:?}");
}
