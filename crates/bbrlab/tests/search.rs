//! `bbrlab search` end to end: a short search prints its seed and both
//! methods' worst, writes the scenario files (which `bbrlab sim` runs),
//! the history as CSV and a figure, and search.json with the reading;
//! bad arguments are named.

use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

#[test]
fn a_short_search_writes_its_worst_paths_history_and_reading() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let o = bbrlab(&[
        "search",
        "--cc",
        "bbr",
        "--rate",
        "10mbit",
        "--rate-ratio",
        "5",
        "--pieces",
        "2",
        "--duration",
        "10s",
        "--evaluations",
        "30",
        "--seed",
        "7",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("seed 7 (repeat with --seed 7)"), "{stderr}");
    assert!(
        stdout.contains("CMA-ES's worst:") && stdout.contains("random baseline's worst:"),
        "{stdout}"
    );
    assert!(stdout.contains("The worst piece was number"), "{stdout}");
    for f in [
        "worst.toml",
        "baseline-worst.toml",
        "history.csv",
        "history.svg",
        "history.png",
        "worst-rate.svg",
        "worst-rate.png",
        "worst-rtt.svg",
        "worst-rtt.png",
        "search.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // The worst path's figures draw the path beside the flow.
    let rate = std::fs::read_to_string(out.join("worst-rate.svg")).unwrap();
    for label in [
        "the path&apos;s rate (payload)",
        "bbr goodput",
        "bbr bandwidth estimate",
    ] {
        let plain = label.replace("&apos;", "'");
        assert!(rate.contains(label) || rate.contains(&plain), "{label}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("search.json")).unwrap()).unwrap();
    assert_eq!(json["seed"], 7);
    assert_eq!(json["objective"], "utilization");
    let n = json["cmaes"]["history"].as_array().unwrap().len();
    assert!((20..=30).contains(&n), "{n}");
    assert_eq!(json["random"]["history"].as_array().unwrap().len(), n);
    assert!(json["reading"]
        .as_str()
        .unwrap()
        .contains("bandwidth estimate"));
    // The history: a header and one row per evaluation of each method.
    let mut rows = csv::Reader::from_path(out.join("history.csv")).unwrap();
    assert_eq!(
        rows.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "method",
            "evaluation",
            "utilization",
            "worst_so_far",
            "path"
        ]
    );
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * n);
    // Worst so far never improves (utilization: lower is worse).
    let mut last = f64::INFINITY;
    for r in rows.iter().take(n) {
        let w: f64 = r[3].parse().unwrap();
        assert!(w <= last);
        last = w;
    }
    // The file runs in the simulator as it stands.
    let o = bbrlab(&[
        "sim",
        out.join("worst.toml").to_str().unwrap(),
        "--quiet",
        "--no-plots",
        "-o",
        dir.path().join("sim").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_arguments_are_named_and_help_lists_the_objectives() {
    for (args, want) in [
        (&["--objective", "speed"][..], "--objective speed"),
        (&["--rate", "10mbps"][..], "ambiguous"),
        (&["--pieces", "40"][..], "--pieces 40"),
        (&["--objective", "share"][..], "give two controllers"),
        (&["--cc", "bbr9"][..], "--cc bbr9"),
        (
            &["--rate-ratio", "1", "--jitter", "0ms"][..],
            "nothing to search",
        ),
        (&["--aqm", "red"][..], "--aqm red"),
        (&["--stack", "tcp-9"][..], "--stack tcp-9"),
        (&["--cc", "s2n:bbr2", "--confirm"][..], "QUIC stack"),
        (&["--cc", "bbr3", "--confirm"][..], "stock-kernel"),
        (&["--cc", "quinn:bbr", "--tcp-like"][..], "--tcp-like"),
        (&["--packet-jitter", "3s"][..], "at most 2 s"),
        (
            &["--confirm", "--confirm-replays", "0"][..],
            "--confirm-replays",
        ),
        (&["--confirm-replays", "2"][..], "--confirm"),
        (&["--run-timeout", "1e20"][..], "--run-timeout 1"),
        (&["--jobs", "0"][..], "--jobs"),
    ] {
        let mut a = vec!["search", "--quiet", "--evaluations", "10"];
        a.extend_from_slice(args);
        let o = bbrlab(&a);
        // An error exit (1, or clap's 2), never a panic's 101.
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {:?}",
            o.status.code()
        );
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want) && !e.contains("panicked"), "{args:?}: {e}");
    }
    let help = String::from_utf8_lossy(&bbrlab(&["search", "--help"]).stdout).into_owned();
    for want in [
        "--rate-ratio",
        "--jitter",
        "--min-piece",
        "queue-p95",
        "convergence",
        "random",
    ] {
        assert!(help.contains(want), "{want} not in --help");
    }
}

/// One kernel replay at a time: two emulated paths with kernel flows at
/// once would share the machine's two cores.
static KERNEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `bbrlab search ... --confirm` on a small search of `cc` by
/// `objective`; its confirm.json, after checking the run and its report.
fn confirm(cc: &str, objective: &str, replays: &str, out: &std::path::Path) -> serde_json::Value {
    assert_eq!(unsafe { libc::geteuid() }, 0, "run as root");
    let _one = KERNEL.lock().unwrap_or_else(|e| e.into_inner());
    let o = bbrlab(&[
        "search",
        "--cc",
        cc,
        "--objective",
        objective,
        "--tcp-like",
        "--rate",
        "10mbit",
        "--rate-ratio",
        "5",
        "--pieces",
        "2",
        "--duration",
        "10s",
        "--evaluations",
        "20",
        "--seed",
        "3",
        "--quiet",
        "--confirm",
        "--confirm-replays",
        replays,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("confirm: on the path as the kernel's flows met it"),
        "{stdout}"
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("confirm.json")).unwrap()).unwrap()
}

/// `--confirm` as root: the worst path of a small search replayed through
/// the emulator with kernel `bbr`, its utilization measured on the
/// kernel's flows within 0.1 of the simulator's with flows made like the
/// kernel's (validate holds single flows to 5 % of goodput on fixed paths;
/// here the rate steps, and the flows meet the schedule a few hundred ms
/// after the emulator starts it, which both sides are judged on, but which
/// the sampling at 10 ms places only roughly).
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn confirm_replays_the_worst_path_on_kernel_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    // One replay: a single flow's utilization on this path is steady.
    let c = confirm("bbr", "utilization", "1", &out);
    assert_eq!(c["replays"].as_array().unwrap().len(), 1);
    assert_eq!(c["kernel_ccs"][0], "bbr");
    let (k, s) = (
        c["kernel"].as_f64().unwrap(),
        c["simulator"].as_f64().unwrap(),
    );
    assert!((0.2..1.05).contains(&k), "kernel {k}");
    assert!((k - s).abs() <= 0.1, "kernel {k} against simulator {s}");
    let lag = c["lag_s"].as_f64().unwrap();
    assert!((0.0..5.0).contains(&lag), "lag {lag}");
    assert!(out.join("confirm/replay-1/kernel-flow-0.csv").is_file());
}

/// Two controllers set against each other: both run as kernel TCP on the
/// worst path at once, each its own flow, three replays, and the kernel's
/// median share for the first within 0.1 of the simulator's with flows
/// made like the kernel's. One kernel run is one draw: on 2026-12-01 five
/// single replays here gave the kernel 0.44-0.59 against the simulator's
/// 0.50-0.53, and one under CI's load 0.61 against 0.48.
#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn confirm_replays_two_controllers_against_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let c = confirm("bbr,cubic", "share", "3", &out);
    assert_eq!(c["kernel_ccs"], serde_json::json!(["bbr", "cubic"]));
    let (k, s) = (
        c["kernel"].as_f64().unwrap(),
        c["simulator"].as_f64().unwrap(),
    );
    assert!((0.0..=1.0).contains(&k), "kernel share {k}");
    assert!(
        (k - s).abs() <= 0.1,
        "kernel {k} against simulator {s}: {c}"
    );
    let replays = c["replays"].as_array().unwrap();
    assert_eq!(replays.len(), 3);
    let range = (
        c["kernel_range"][0].as_f64().unwrap(),
        c["kernel_range"][1].as_f64().unwrap(),
    );
    assert!(range.0 <= k && k <= range.1, "{range:?} {k}");
    for (r, replay) in replays.iter().enumerate() {
        let kr = replay["kernel"].as_f64().unwrap();
        assert!(range.0 <= kr && kr <= range.1, "replay {r}: {kr}");
        for f in 0..2 {
            assert!(
                out.join(format!("confirm/replay-{}/kernel-flow-{f}.csv", r + 1))
                    .is_file(),
                "replay {r} flow {f}"
            );
        }
    }
}

/// `--no-plots` into a directory an earlier search drew figures in: they
/// stayed beside the new history.csv and seemed to show it. They are
/// removed (and said so); a file of another name stays.
#[test]
fn no_plots_removes_an_earlier_searchs_figures_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    std::fs::create_dir(&out).unwrap();
    for f in [
        "history.svg",
        "history.png",
        "worst-rate.svg",
        "worst-rtt.png",
        "notes.svg",
    ] {
        std::fs::write(out.join(f), "earlier").unwrap();
    }
    let o = bbrlab(&[
        "search",
        "--cc",
        "bbr",
        "--pieces",
        "1",
        "--duration",
        "4s",
        "--evaluations",
        "10",
        "--seed",
        "3",
        "--quiet",
        "--no-plots",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("--no-plots: removed the figures an earlier search drew"),
        "{err}"
    );
    for f in [
        "history.svg",
        "history.png",
        "worst-rate.svg",
        "worst-rtt.png",
    ] {
        assert!(!out.join(f).exists(), "{f} stayed");
    }
    assert!(out.join("notes.svg").is_file() && out.join("history.csv").is_file());
}
