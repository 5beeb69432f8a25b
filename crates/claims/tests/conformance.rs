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
        qlog: None,
    }
}

#[test]
fn every_case_loads_with_a_unique_id_a_section_and_reasons() {
    let cases = case::load_dir(&cases_dir()).unwrap();
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let all: Vec<String> = (1..=22).map(|i| format!("A{i:02}")).collect();
    assert_eq!(ids, all, "the draft's 22 cases, one file each");
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

/// The linux-v3 profile passes every case but the three whose rule Linux
/// v3 lacks: DRAIN's three-round limit (A04) and the draft's return to
/// the interrupted probe after a spurious recovery or timeout (A18, A19;
/// `bbr_undo_cwnd()` restores cwnd and the model only).
#[test]
fn bbrlab_bbr3_in_the_linux_v3_profile_fails_only_where_linux_lacks_the_rule() {
    let results = conformance::run(&opts(&["bbr3:linux-v3"], None), &runner::sweep::Quiet).unwrap();
    let mut failed: Vec<&str> = results
        .iter()
        .filter(|r| r.failed())
        .map(|r| r.case.as_str())
        .collect();
    failed.dedup();
    assert_eq!(failed, ["A04", "A18", "A19"], "{results:?}");
}

/// For a case whose file names no negative controller (no built-in
/// controller breaks its rule as it stands), a bbrlab controller with the
/// rule the case is about switched off, or its effect undone, through its
/// configuration.
fn configured_negative(id: &str) -> Option<grid::Controller> {
    let c = |name: &str, base: &str, f: fn(&mut congestion::Config)| {
        Some(grid::Controller::configured(name, base, f).unwrap())
    };
    match id {
        // DRAIN that does not drain and has no round limit never ends.
        "A03" => c("bbr3 without draining", "bbr3", |k| {
            k.bbr3.drain_pacing_gain = 1.0;
            k.bbr3.drain_max_rounds = None;
        }),
        // Pacing STARTUP at half its estimate, the flow measures less and
        // less: the estimate and the flow collapse.
        "A07" => c("bbr3 pacing at half its estimate", "bbr3", |k| {
            k.bbr3.startup_pacing_gain = 1.0;
            k.bbr3.pacing_margin = 0.5;
        }),
        // Without the idle restart's skip, PROBE_RTT comes after the idle.
        "A11" => c("bbr3 without idle restart", "bbr3", |k| {
            k.bbr3.idle_restart = false;
        }),
        // Without the aggregation allowance, a window of one BDP cannot
        // bridge 20 ms of ACK aggregation.
        "A12" | "A13" => c("bbr3 without the aggregation allowance", "bbr3", |k| {
            k.bbr3.extra_acked = congestion::Bbr3ExtraAcked::Off;
            k.bbr3.startup_cwnd_gain = 1.0;
            k.bbr3.cwnd_gain = 1.0;
            k.bbr3.probe_up_cwnd_gain = 1.0;
        }),
        // Below MinPipeCwnd the sub-packet path is left idle.
        "A14" => c("bbr3 with a one-packet floor", "bbr3", |k| {
            k.bbr3.min_pipe_cwnd_packets = 1;
            k.bbr3.pacing_margin = 0.3;
        }),
        // A BBR whose probes send no faster than its estimate never sees
        // a higher rate.
        "A15" => c("bbr3 probing at its estimate", "bbr3", |k| {
            k.bbr3.probe_up_pacing_gain = 1.0;
        }),
        // A transport that flags every sample app-limited: the max filter
        // neither takes the slower samples nor ages, and keeps the old rate.
        "A16" => Some(grid::Controller::custom(
            "bbr3 fed only app-limited samples",
            true,
            |cfg: &congestion::Config, now: congestion::Instant| {
                Box::new(Hooked(congestion::builtin(cfg, now), |cc, ack, s| {
                    let mut rate = *ack.rate;
                    rate.is_app_limited = true;
                    let mut ack = *ack;
                    ack.rate = &rate;
                    cc.on_ack(&ack, s)
                })) as Box<dyn congestion::CongestionControl + Send + Sync>
            },
        )),
        _ => None,
    }
}

/// What a [`Hooked`] controller does with each ACK, given the controller
/// inside.
type AckHook = fn(
    &mut (dyn congestion::CongestionControl + Send + Sync),
    &congestion::AckContext<'_>,
    &mut congestion::DeliveryRateSampler,
);

/// A built-in controller whose ACKs pass through a hook first, every
/// other event straight to it: a deliberately wrong controller made from
/// a right one (a transport that flags every sample app-limited, one that
/// slows each ACK).
struct Hooked(
    Box<dyn congestion::CongestionControl + Send + Sync>,
    AckHook,
);

impl congestion::CongestionControl for Hooked {
    fn on_packet_sent(&mut self, now: congestion::Instant, bytes: u64, before: u64) {
        self.0.on_packet_sent(now, bytes, before)
    }
    fn on_restart_from_idle(&mut self, now: congestion::Instant, rtt: &congestion::RttEstimator) {
        self.0.on_restart_from_idle(now, rtt)
    }
    fn on_handshake_rtt(&mut self, now: congestion::Instant, rtt: &congestion::RttEstimator) {
        self.0.on_handshake_rtt(now, rtt)
    }
    fn on_packets_acked(&mut self, now: congestion::Instant, acked: &[congestion::AckedPacket]) {
        self.0.on_packets_acked(now, acked)
    }
    fn on_ack(
        &mut self,
        ack: &congestion::AckContext<'_>,
        s: &mut congestion::DeliveryRateSampler,
    ) {
        (self.1)(&mut *self.0, ack, s)
    }
    fn on_packets_lost(&mut self, now: congestion::Instant, lost: u64, inflight: u64, new: bool) {
        self.0.on_packets_lost(now, lost, inflight, new)
    }
    fn on_loss(&mut self, loss: &congestion::LossContext<'_>) {
        self.0.on_loss(loss)
    }
    fn on_congestion_experienced(
        &mut self,
        now: congestion::Instant,
        ce: u64,
        inflight: u64,
        new: bool,
    ) -> bool {
        self.0.on_congestion_experienced(now, ce, inflight, new)
    }
    fn on_retransmission_timeout(&mut self, now: congestion::Instant, inflight: u64) {
        self.0.on_retransmission_timeout(now, inflight)
    }
    fn on_spurious_loss(&mut self, now: congestion::Instant) {
        self.0.on_spurious_loss(now)
    }
    fn on_ack_begin(&mut self) {
        self.0.on_ack_begin()
    }
    fn on_mss_change(&mut self, mss: u64) {
        self.0.on_mss_change(mss)
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
    fn using_srtt(&self) -> Option<bool> {
        self.0.using_srtt()
    }
}

#[test]
fn each_case_fails_on_its_negative_controller() {
    let cases = case::load_dir(&cases_dir()).unwrap();
    let mut missing = Vec::new();
    for c in &cases {
        let neg = match (&c.negative, configured_negative(&c.id)) {
            (Some(name), None) => grid::Controller::parse(name).unwrap(),
            (None, Some(cc)) => cc,
            (Some(_), Some(_)) => panic!("{}: a negative in the file and here", c.id),
            (None, None) => {
                missing.push(c.id.clone());
                continue;
            }
        };
        let mut o = opts(&[], Some(vec![c.id.clone()]));
        o.controllers = vec![neg.clone()];
        let results = conformance::run(&o, &runner::sweep::Quiet).unwrap();
        assert!(
            results.iter().any(|r| r.failed()),
            "{} passes on its negative controller {}: {results:?}",
            c.id,
            neg.name
        );
    }
    assert!(missing.is_empty(), "cases without a negative: {missing:?}");
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
    // The message names the bad name and lists both kinds of controller,
    // with no fragment of a scenario parser's message around it.
    for want in [
        "unknown algorithm `bbr4`",
        "bbr, ",
        "s2n:bbr2",
        "bbr3:linux-v3",
    ] {
        assert!(e.contains(want), "{want} missing: {e}");
    }
    assert!(!e.contains("(`") && !e.contains("flow[0]"), "{e}");
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
    // A transition's `next` is a state or a non-empty list of states.
    let transition = |next: &str| {
        case::parse(
            &with(&format!(
                "[[conformance.checks]]\ncheck = \"state_followed_by\"\nstate = \"probe_bw_up\"\n{next}why = \"w\"\n"
            )),
            p,
        )
    };
    assert!(transition("next = [\"probe_bw_down\", \"probe_rtt\"]\n").is_ok());
    let e = transition("next = \"down\"\n").unwrap_err();
    assert!(
        e.contains("next `down`") && e.contains("probe_bw_down"),
        "{e}"
    );
    let e = transition("next = []\n").unwrap_err();
    assert!(e.contains("empty"), "{e}");
    let e = transition("").unwrap_err();
    assert!(e.contains("needs `next`"), "{e}");
    // A key the check does not read is an error, not a bound that
    // silently does not apply.
    let e = case::parse(
        &with("[[conformance.checks]]\ncheck = \"state_left\"\nstate = \"startup\"\nwithin = \"1s\"\nfrom = \"2s\"\nwhy = \"w\"\n"),
        p,
    )
    .unwrap_err();
    assert!(
        e.contains("does not take `from`") && e.contains("state, within"),
        "{e}"
    );
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
    use congestion::{Algorithm, Config, CongestionControl, Instant};
    let mut o = opts(&["bbr3"], Some(vec!["A01".into()]));
    o.controllers.push(grid::Controller::custom(
        "slow",
        true,
        |cfg: &Config, now: Instant| {
            let mut c = *cfg;
            c.algorithm = Algorithm::Bbr3;
            Box::new(Hooked(congestion::builtin(&c, now), |cc, a, s| {
                std::thread::sleep(std::time::Duration::from_micros(500));
                cc.on_ack(a, s)
            })) as Box<dyn CongestionControl + Send + Sync>
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

/// The findings' scenarios (`scenarios/conformance/findings/`) still show
/// what their files say of the stacks at the versions bbrlab depends on;
/// a stack upgrade that fixes one fails this test, and the file and the
/// book's findings are then updated.
#[test]
fn the_findings_still_show_what_their_files_say() {
    let dir = tempfile::tempdir().unwrap();
    let run = |file: &str| {
        let p = if file.contains("window-grows") || file.contains("packet-jitter") {
            cases_dir().join("../findings").join(file)
        } else {
            cases_dir().join("findings").join(file)
        };
        let text = std::fs::read_to_string(&p).unwrap();
        let sc = scenario::parse(&text, file, p.parent().unwrap(), &p).unwrap();
        let out = dir.path().join(file);
        let json = runner::sweep::run_one(&sc.name, &sc.runs[0], &out).unwrap();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(out.join("flows.csv"))
            .unwrap()
            .records()
            .map(|r| r.unwrap())
            .collect();
        let header = csv::Reader::from_path(out.join("flows.csv"))
            .unwrap()
            .headers()
            .unwrap()
            .clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        (
            json,
            rows,
            col("time_s"),
            col("mode"),
            col("bw_estimate_bps"),
            col("cwnd_bytes"),
        )
    };
    // scenarios/findings/ (bbrlab fuzz): the stacks' BBR windows grow past
    // a megabyte while at most a packet is in flight.
    for f in [
        "quinn-bbr-window-grows-when-app-limited.toml",
        "s2n-bbr2-window-grows-when-app-limited.toml",
    ] {
        let (_, rows, _, _, _, cwnd) = run(f);
        let last: u64 = rows.last().unwrap()[cwnd].parse().unwrap();
        assert!(last > 1_000_000, "{f}: cwnd {last} at the end");
    }
    let (json, ..) = run("quinn-bbr-policer-retransmits-half.toml");
    let retx = json.flows[0].retransmission_rate;
    assert!(retx > 0.4, "quinn's BBR behind the policer: {retx}");

    let (_, rows, t, _, bw, _) = run("quinn-bbr-estimate-after-rate-fall.toml");
    let late_min = rows
        .iter()
        .filter(|r| r[t].parse::<f64>().unwrap() >= 12.0)
        .filter_map(|r| r[bw].parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min);
    assert!(
        late_min > 50e6,
        "quinn's estimate after the fall: {late_min}"
    );

    // scenarios/findings/ (bbrlab search): s2n's BBRv2 lives in PROBE_RTT
    // under per-packet jitter.
    let (json, rows, _, mode, _, _) = run("s2n-bbr2-probe-rtt-under-packet-jitter.toml");
    let in_probe_rtt =
        rows.iter().filter(|r| r[mode] == *"probe_rtt").count() as f64 / rows.len() as f64;
    assert!(
        in_probe_rtt > 0.5,
        "s2n's BBRv2 in PROBE_RTT: {in_probe_rtt}"
    );
    assert!(
        json.flows[0].goodput_bps < 0.2 * 3e6,
        "{}",
        json.flows[0].goodput_bps
    );

    let (_, rows, t, mode, _, _) = run("s2n-bbr2-probe-rtt-after-idle.toml");
    let probe_rtt_after_idle = rows
        .iter()
        .any(|r| r[mode] == *"probe_rtt" && (7.0..7.5).contains(&r[t].parse::<f64>().unwrap()));
    assert!(probe_rtt_after_idle, "s2n's BBRv2 after the 7 s idle");
}
