//! `bbrlab search` finds what it is for: a planted failure that only a
//! part of the budget brings about, and a real BBR weakness, with a
//! reading that names it; the worst path's scenario file reproduces the
//! objective reported for it; bad options are refused by name.

mod common;

use claims::conformance::grid::Controller;
use claims::search::{self, budget::Budget, objective::Objective, Options};
use common::planted::{planted, Bug};
use std::time::Duration;

fn budget() -> Budget {
    Budget {
        rate_bps: 10e6,
        rate_ratio: 1.0,
        delay_ns: 20_000_000,
        jitter_ns: 40_000_000,
        loss: 0.0,
        packet_jitter_ns: 0,
        packet_jitter_normal: false,
        pieces: 2,
        min_piece_ns: 2_000_000_000,
        duration_ns: 10_000_000_000,
        buffer_bdp: 1.0,
        aqm: "drop-tail".into(),
    }
}

fn options(
    cc: Vec<Controller>,
    objective: Objective,
    budget: Budget,
    evaluations: usize,
) -> Options {
    let warmup_ns = search::default_warmup_ns(&budget);
    Options {
        flows: if cc.len() == 2 { 2 } else { 1 },
        stack: None,
        tcp_like: false,
        flow_starts_ns: Vec::new(),
        budget,
        objective,
        controllers: cc,
        evaluations,
        seed: 3,
        jobs: 2,
        warmup_ns,
        run_timeout: Duration::from_secs(120),
    }
}

/// The planted controller freezes its window once its round trip passes
/// 70 ms; the budget allows 40 to 80 ms of base round trip, and a buffer
/// of a quarter BDP adds at most 10 ms. The search must find a path
/// that sets it off (utilization collapses), where the sane controller
/// does well, and the file it writes must give the same number again.
#[test]
fn the_search_finds_the_part_of_the_budget_where_a_planted_bug_fires() {
    let shallow = Budget {
        buffer_bdp: 0.25,
        ..budget()
    };
    let o = options(
        vec![planted(Bug::FreezesOnLongRtt)],
        Objective::Utilization,
        shallow.clone(),
        40,
    );
    let r = search::run(&o, &search::Silent).unwrap();
    let w = r.cmaes.worst();
    assert!(
        w.value < 0.3,
        "worst utilization {} on {}",
        w.value,
        w.path.describe()
    );
    assert!(
        (0..w.path.pieces.len()).any(|i| w.path.piece_rtt_ns(i) > 70_000_000),
        "{}",
        w.path.describe()
    );
    // The same path does not hurt the controller without the bug.
    let sane = options(
        vec![planted(Bug::None)],
        Objective::Utilization,
        shallow,
        40,
    );
    let v = sane.evaluate(&w.path).unwrap();
    assert!(v > 0.6, "the sane controller's utilization there: {v}");
    // Short round trips throughout: the bug stays quiet.
    let mut short = w.path.clone();
    for p in &mut short.pieces {
        p.delay_ns = 20_000_000;
    }
    assert!(o.evaluate(&short).unwrap() > 0.6);
    // The history is the budget, and holds the worst.
    assert!(r.cmaes.history.len() <= 40 && r.cmaes.history.len() >= 30);
    assert_eq!(r.random.history.len(), r.cmaes.history.len());
    assert!(r.cmaes.history.iter().all(|e| e.value >= w.value));
}

/// The scenario file a search writes is the path it judged: parsed and
/// run again, it gives the reported objective exactly.
#[test]
fn the_worst_paths_file_reproduces_its_objective() {
    let o = options(
        vec![
            Controller::parse("bbr").unwrap(),
            Controller::parse("cubic").unwrap(),
        ],
        Objective::Share,
        Budget {
            rate_ratio: 4.0,
            ..budget()
        },
        24,
    );
    let r = search::run(&o, &search::Silent).unwrap();
    for m in [&r.cmaes, &r.random] {
        let w = m.worst();
        let text = o.scenario(&w.path, &["a header".into()]);
        let sc = scenario::parse(
            &text,
            "worst.toml",
            std::path::Path::new("."),
            std::path::Path::new("worst.toml"),
        )
        .unwrap();
        let run = &sc.runs[0];
        assert_eq!(run.config.flows.len(), 2);
        let s = claims::sampled::run(
            "again",
            run,
            claims::sampled::Keep {
                first_flow_only: false,
                qlog: None,
            },
            std::time::Instant::now() + Duration::from_secs(120),
            &runner::progress::SimClock::default(),
        )
        .unwrap();
        let again = o
            .objective
            .measure(&w.path, &s.samples, 2, o.warmup_ns, 1.0);
        assert_eq!(again, w.value, "{}", m.method);
        assert!((0.0..=1.0).contains(&again));
    }
}

/// BBR v1 on a link whose rate falls tenfold behind a deep buffer: its
/// windowed max holds the old rate for ten of its own (queue-inflated)
/// round trips, so it overfills the queue. A search for the 95th
/// percentile of queueing delay finds a fall, and the reading says the
/// estimate was above the link's rate.
#[test]
fn the_reading_names_an_overestimate_after_a_rate_fall() {
    let o = options(
        vec![Controller::parse("bbr").unwrap()],
        Objective::QueueP95,
        Budget {
            rate_bps: 20e6,
            rate_ratio: 10.0,
            jitter_ns: 0,
            pieces: 3,
            duration_ns: 20_000_000_000,
            ..budget()
        },
        60,
    );
    let r = search::run(&o, &search::Silent).unwrap();
    let w = r.cmaes.worst();
    // The buffer (1 BDP at 20 Mbit/s, 67 packets) at the lowest rate,
    // 2 Mbit/s, is about 400 ms; a queue near it is the overfill.
    assert!(w.value > 250.0, "{} ms on {}", w.value, w.path.describe());
    let reading = o.reading(&w.path).expect("bbr is read");
    assert!(reading.contains("above the link's rate"), "{reading}");
    assert!(reading.contains("PROBE_BW"), "{reading}");
    // A loss-based controller gets no reading.
    let cubic = options(
        vec![Controller::parse("cubic").unwrap()],
        Objective::QueueP95,
        o.budget.clone(),
        60,
    );
    assert!(cubic.reading(&w.path).is_none());
}

#[test]
fn bad_options_are_refused_by_name() {
    let one = || vec![Controller::parse("bbr").unwrap()];
    let cases: Vec<(Options, &str)> = vec![
        (
            options(one(), Objective::Share, budget(), 20),
            "give two controllers",
        ),
        (options(one(), Objective::Jain, budget(), 20), "--flows 2"),
        (
            options(
                one(),
                Objective::Convergence,
                Budget {
                    pieces: 1,
                    ..budget()
                },
                20,
            ),
            "--pieces 2",
        ),
        (
            Options {
                warmup_ns: 6_000_000_000,
                ..options(one(), Objective::Utilization, budget(), 20)
            },
            "--warmup",
        ),
        (
            options(one(), Objective::Utilization, budget(), 1),
            "--evaluations 1",
        ),
        (
            options(
                vec![
                    Controller::parse("bbr").unwrap(),
                    Controller::parse("cubic").unwrap(),
                    Controller::parse("reno").unwrap(),
                ],
                Objective::Share,
                budget(),
                20,
            ),
            "got 3",
        ),
    ];
    for (o, want) in cases {
        let e = search::run(&o, &search::Silent).expect_err(want);
        assert!(e.contains(want), "{e}");
    }
    let e = Objective::parse("speed").unwrap_err();
    assert!(
        e.contains("utilization, queue-p95, share, jain, retransmissions, convergence"),
        "{e}"
    );
}
