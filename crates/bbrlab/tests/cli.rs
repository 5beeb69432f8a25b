//! The `bbrlab` binary, end to end: scenario errors, determinism, sweeps,
//! and the simulator's headline behaviour on the issue's reference paths.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

/// `sim SCENARIO --out OUT --quiet --no-plots` and `extra`.
fn sim_into(scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut a = vec![
        "sim",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ];
    a.extend_from_slice(extra);
    bbrlab(&a)
}

const GOOD: &str = r#"
duration = "5s"
[link.forward]
rate = "10mbit"
delay = "20ms"
queue = { limit = "100pkt" }
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr"
"#;

/// Runs `sim` on `text` and returns (success, stderr).
fn sim_text(text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "s.toml", text);
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "sim",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn malformed_scenarios_get_located_explained_errors() {
    // (edit to GOOD, what the message must contain)
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "algorithm = \"bbr\"",
            "algorithm = \"vegas\"",
            &["s.toml:10:", "vegas", "bbr, bbr-jitter, bbr3, cubic, reno"],
        ),
        (
            "duration = \"5s\"",
            "duration = \"5s\"\ncolour = \"red\"",
            &["s.toml:3:", "unknown field", "colour"],
        ),
        (
            "rate = \"10mbit\"",
            "rate = \"-10mbit\"",
            &["s.toml:4:", "-10mbit"],
        ),
        (
            "rate = \"10mbit\"",
            "rate = \"10parsecs\"",
            &["s.toml:4:", "10parsecs"],
        ),
        ("limit = \"100pkt\"", "limit = \"0pkt\"", &["queue", "0"]),
        (
            "rate = \"10mbit\"",
            "rate = { trace = \"no-such.trace\" }",
            &["no-such.trace"],
        ),
        (
            "duration = \"5s\"",
            "duration = 5",
            &["s.toml:2:", "duration"],
        ),
        (
            "algorithm = \"bbr\"",
            "algorithm = \"bbr\"\necn = \"ce\"",
            &["s.toml:11:", "ecn", "\"ect0\"", "\"ect1\""],
        ),
        (
            "algorithm = \"bbr\"",
            "algorithm = \"bbr\"\n[flow.bbr3]\nprofile = \"draft\"",
            &["flow[0].bbr3", "algorithm = \"bbr3\"", "`bbr`"],
        ),
        (
            "algorithm = \"bbr\"",
            "algorithm = \"s2n:bbr3\"",
            &[
                "s.toml:10:",
                "s2n:bbr3",
                "s2n:bbr2, s2n:cubic, quinn:bbr, quinn:cubic",
            ],
        ),
        (
            "algorithm = \"bbr\"",
            "algorithm = \"bbr3\"\n[flow.bbr3]\nprofile = \"v2\"",
            &["s.toml:12:", "v2", "draft, linux-v3"],
        ),
        (
            "algorithm = \"bbr\"",
            "algorithm = \"bbr3\"\n[flow.bbr3]\nsignals = \"patched\"",
            &["s.toml:12:", "patched", "exact, stock-kernel"],
        ),
        (
            "duration = \"5s\"",
            "duration = \"5s\"\nseed = 18446744073709551615",
            &["s.toml:3:", "too large", "at most 9223372036854775807"],
        ),
    ];
    for (from, to, needles) in cases {
        let text = GOOD.replacen(from, to, 1);
        assert_ne!(text, GOOD, "test edit `{from}` did not apply");
        let (ok, err) = sim_text(&text);
        assert!(!ok, "accepted: {to}");
        assert!(!err.contains("panicked"), "panic on {to}: {err}");
        for n in *needles {
            assert!(err.contains(n), "error for `{to}` lacks `{n}`: {err}");
        }
    }
    // No flows at all.
    let (ok, err) = sim_text(&GOOD.replace("[[flow]]\nalgorithm = \"bbr\"\n", ""));
    assert!(!ok);
    assert!(err.contains("flow"), "{err}");
    // A missing file.
    let o = bbrlab(&["sim", "/nonexistent/x.toml", "--quiet"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
}

#[test]
fn same_scenario_and_seed_give_byte_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let text = GOOD.replace("duration = \"5s\"", "duration = \"8s\"\nseed = 7")
        + "[link.forward.loss]\nbernoulli = 0.01\n";
    let p = write(dir.path(), "s.toml", &text);
    let mut outs = Vec::new();
    for k in 0..2 {
        let out = dir.path().join(format!("out{k}"));
        let o = bbrlab(&[
            "sim",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        outs.push(out);
    }
    for f in [
        "run-0000/flows.csv",
        "run-0000/link.csv",
        "summary.json",
        "summary.csv",
    ] {
        let a = fs::read(outs[0].join(f)).unwrap();
        let b = fs::read(outs[1].join(f)).unwrap();
        assert!(a.len() > 100, "{f} is nearly empty");
        assert!(a == b, "{f} differs between identical runs");
    }
    // A different seed changes the random losses, hence the output.
    let p2 = write(dir.path(), "s2.toml", &text.replace("seed = 7", "seed = 8"));
    let out = dir.path().join("out2");
    assert!(bbrlab(&[
        "sim",
        p2.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet"
    ])
    .status
    .success());
    assert_ne!(
        fs::read(outs[0].join("run-0000/flows.csv")).unwrap(),
        fs::read(out.join("run-0000/flows.csv")).unwrap()
    );
}

#[test]
fn sweeps_run_every_combination_with_one_summary_row_each() {
    let dir = tempfile::tempdir().unwrap();
    let text = GOOD.to_string() + "[sweep]\n\"flow.algorithm\" = [\"bbr\", \"cubic\"]\n\"link.forward.loss.bernoulli\" = [0.0, 0.01]\n";
    let p = write(dir.path(), "s.toml", &text);
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "sim",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--jobs",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for i in 0..4 {
        assert!(out.join(format!("run-{i:04}")).join("flows.csv").exists());
    }
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{summary}");
    assert!(rows.iter().filter(|r| r.contains(",cubic,")).count() == 2);
    // One column per swept parameter (issue 13: they were packed into one
    // quoted string).
    assert!(
        summary.starts_with("run,flow.algorithm,link.forward.loss.bernoulli,flow,name,"),
        "{summary}"
    );
    assert!(rows.iter().any(|r| r.starts_with("run-0003,cubic,0.01,0,")));
}

fn summary_flow(dir: &Path) -> serde_json::Value {
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    s["runs"][0]["flows"][0].clone()
}

#[test]
fn bbr_fills_10mbit_40ms_with_low_delay_and_cubic_bloats_a_deep_buffer() {
    let dir = tempfile::tempdir().unwrap();
    // Steady state only: the flow starts at 0 but the summary covers the
    // whole run, so run long enough (40 s) that STARTUP's few hundred ms
    // do not matter.
    let bbr = GOOD.replace("duration = \"5s\"", "duration = \"40s\"");
    // Issue 3: ≥ 95 % utilisation, median RTT ≤ 1.25 × 40 ms, for a BBR
    // that paces one packet at a time. Linux's pacer, the default since
    // 2026-12-06, sends pairs of segments whose second waits a packet
    // time, and each ACK of Linux's receiver covers a pair: the median
    // RTT sample rises to about 51 ms (48.4 one packet at a time). On
    // this path kernel `bbr` (Linux 6.18, `bbrlab compare --with
    // kernel`, 40 s, 2026-12-06) read a median srtt of 49.0 ms, the
    // simulator matched to it 49.4; so Linux's pacer is held to 1.3 ×
    // 40 ms.
    for (pacing, bound_ms) in [("", 52.0), ("pacing = \"exact\"\n", 50.0)] {
        let p = write(dir.path(), "bbr.toml", &format!("{bbr}{pacing}"));
        let out = dir.path().join("bbr");
        assert!(bbrlab(&[
            "sim",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--force"
        ])
        .status
        .success());
        let f = summary_flow(&out);
        let goodput = f["goodput_bps"].as_f64().unwrap();
        let median = f["rtt_median_ms"].as_f64().unwrap();
        assert!(goodput >= 0.95 * 10e6, "bbr goodput {goodput} ({pacing})");
        assert!(median <= bound_ms, "bbr median RTT {median} ms ({pacing})");
    }

    let cubic = bbr
        .replace("algorithm = \"bbr\"", "algorithm = \"cubic\"")
        .replace("100pkt", "1000pkt");
    let p = write(dir.path(), "cubic.toml", &cubic);
    let out = dir.path().join("cubic");
    assert!(bbrlab(&[
        "sim",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet"
    ])
    .status
    .success());
    let f = summary_flow(&out);
    let median = f["rtt_median_ms"].as_f64().unwrap();
    // Issue 3: CUBIC with a 1000-packet buffer has median RTT > 500 ms.
    assert!(median > 500.0, "cubic median RTT {median} ms");
}

/// Issue 13: reusing an output directory left stale `run-*` folders of an
/// earlier sweep beside the new results. A non-empty directory is refused
/// unless `--force`, which removes bbrlab's earlier results (only those).
#[test]
fn a_used_output_directory_needs_force_and_is_then_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = GOOD.replace("\"5s\"", "\"1s\"")
        + "[sweep]\n\"flow.algorithm\" = [\"bbr\", \"cubic\", \"reno\"]\n";
    let p = write(dir.path(), "sweep.toml", &sweep);
    let one = write(dir.path(), "one.toml", &GOOD.replace("\"5s\"", "\"1s\""));
    let out = dir.path().join("out");
    let run = |p: &Path, force: bool| sim_into(p, &out, if force { &["--force"] } else { &[] });
    assert!(run(&p, false).status.success());
    assert!(out.join("run-0002").exists());
    let o = run(&one, false);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("not empty") && e.contains("--force"), "{e}");
    assert!(out.join("run-0002").exists(), "refusing must not delete");
    let o = run(&one, true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("run-0000/flows.csv").exists());
    assert!(!out.join("run-0001").exists() && !out.join("run-0002").exists());
    // The scenario as run, the version and the commit sit with the results.
    assert_eq!(
        fs::read_to_string(out.join("scenario.toml")).unwrap(),
        fs::read_to_string(&one).unwrap()
    );
    assert!(out.join("run-0000/scenario.toml").exists());
    let s: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["bbrlab_version"], env!("CARGO_PKG_VERSION"));
    assert!(s["git_commit"].as_str().is_some_and(|c| !c.is_empty()));
    assert_eq!(s["runs"].as_array().unwrap().len(), 1);
    assert_eq!(s["runs"][0]["run"], "run-0000");
    // A file bbrlab did not write is never removed.
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run(&one, true);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("notes.txt"));
    assert!(out.join("notes.txt").exists() && out.join("run-0000").exists());
}

/// `sim --packets` writes every packet the links took in to each run's
/// `packets.csv`, as the emulator's log names its columns where they
/// mean the same; without the flag there is no such file.
#[test]
fn sim_packets_writes_a_row_per_packet_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let shallow = GOOD
        .replace("\"5s\"", "\"2s\"")
        .replace("\"100pkt\"", "\"10pkt\"");
    let p = write(dir.path(), "s.toml", &shallow);
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        let o = sim_into(&p, &out, extra);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(&["--packets"]);
    let csv = fs::read_to_string(out.join("run-0000/packets.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("enqueue_s,dequeue_s,direction,kind,flow,bytes,dropped,ce")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(
        rows.iter().all(|r| r.len() == 8),
        "every row as wide as the header"
    );
    let summary = summary_flow(&out);
    let sent = summary["packets_sent"].as_u64().unwrap();
    let data = rows
        .iter()
        .filter(|r| r[2] == "forward" && r[3] == "data")
        .count() as u64;
    assert_eq!(data, sent, "one forward row per data packet sent");
    let drops = rows.iter().filter(|r| r[6] == "queue").count() as u64;
    assert_eq!(drops, summary["drops"].as_u64().unwrap());
    assert!(drops > 0, "a 10-packet queue overflows in BBR's STARTUP");
    assert!(rows.iter().any(|r| r[2] == "reverse" && r[3] == "ack"));
    run(&["--force"]);
    assert!(out.join("run-0000/flows.csv").exists());
    assert!(!out.join("run-0000/packets.csv").exists());
}

/// Issue 13: a flow named `bbr, no lt_bw` shifted every column of
/// summary.csv; each sweep point's scenario is written as run.
#[test]
fn summary_csv_survives_commas_in_flow_names() {
    let dir = tempfile::tempdir().unwrap();
    let text = GOOD.replace("\"5s\"", "\"1s\"").replace(
        "algorithm = \"bbr\"",
        "algorithm = \"bbr\"\nname = \"bbr, no lt_bw\"",
    );
    let p = write(dir.path(), "s.toml", &text);
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "sim",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let head = lines.next().unwrap();
    let row = lines.next().unwrap();
    assert!(row.contains(",\"bbr, no lt_bw\","), "{row}");
    // Split respecting the quotes: as many fields as the header.
    let mut fields = 1;
    let mut quoted = false;
    for c in row.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields += 1,
            _ => {}
        }
    }
    assert_eq!(fields, head.split(',').count(), "{head}\n{row}");
    assert!(head.contains("rtt_p99_ms"));
}

/// Issue 13: `reproduce` exits 0 when a claim is not reproduced (the
/// report says so); `--strict` exits 1 then and names the claim, for CI.
/// C11 is quick and does not reproduce; the assertions follow whatever
/// claims.json records, so they stay true if C11 ever does.
#[test]
fn reproduce_strict_fails_on_a_claim_not_reproduced() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path, strict: bool| {
        let mut args = vec!["reproduce", "--only", "C11", "--quiet", "-o"];
        args.push(out.to_str().unwrap());
        if strict {
            args.push("--strict");
        }
        bbrlab(&args)
    };
    let lax = dir.path().join("lax");
    let o = run(&lax, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let claims: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(lax.join("claims.json")).unwrap()).unwrap();
    let reproduced = claims[0]["reproduced"].as_bool().unwrap();
    let strict = dir.path().join("strict");
    let o = run(&strict, true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.success(), reproduced, "{err}");
    // The report is written either way.
    assert!(strict.join("index.html").exists() && strict.join("claims.json").exists());
    if !reproduced {
        assert!(err.contains("not reproduced: C11"), "{err}");
    }
    // --help documents the exit status.
    let help = String::from_utf8_lossy(&bbrlab(&["reproduce", "--help"]).stdout).into_owned();
    assert!(
        help.contains("Exit status") && help.contains("--strict"),
        "{help}"
    );
}

/// Issue 22: `reproduce --only` selects a BBRv3 result by its id (V4,
/// ProbeRTT's cost, is the cheapest), runs it with --quick, and writes it
/// into the same claims.json and report as the claims, in the report's
/// BBRv3 section, with its figure; `--table` gives it a table of its own.
#[test]
fn reproduce_runs_a_bbr3_result_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = bbrlab(&[
        "reproduce",
        "--quick",
        "--only",
        "V4",
        "--quiet",
        "--qlog",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // --qlog: every run of the result has its flows' qlog beside its CSV.
    let mut csvs = 0;
    for e in fs::read_dir(out.join("v4-probe-rtt")).unwrap() {
        let run = e.unwrap().path();
        if run.join("flows.csv").exists() {
            csvs += 1;
            let q = fs::read_to_string(run.join("flow-0.sqlog")).unwrap();
            assert!(
                q.starts_with('\u{1e}') && q.contains("\"qlog_version\":\"0.3\""),
                "{q:.200}"
            );
        }
    }
    assert!(csvs >= 2, "{csvs} runs");
    let json = fs::read_to_string(out.join("claims.json")).unwrap();
    let claims: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(claims.as_array().unwrap().len(), 1);
    let v4 = &claims[0];
    assert_eq!(v4["id"], "V4");
    assert_eq!(v4["suite"], "bbr3");
    assert!(v4["checks"].as_array().unwrap().len() >= 3);
    // Both algorithms ran, on the quick duration.
    let runs = v4["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<section id=\"bbr3\">") && html.contains("id=\"V4\""));
    assert!(html.contains("[D06]"), "the cited draft in full");
    let fig = v4["figures"][0].as_str().unwrap();
    assert!(out.join(format!("{fig}.svg")).exists());
    let t = bbrlab(&[
        "reproduce",
        "--table",
        out.join("claims.json").to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&t.stdout);
    assert!(
        table.starts_with("| result |") && table.contains("| V4 "),
        "{table}"
    );
    // An unknown id names what exists.
    let o = bbrlab(&["reproduce", "--only", "V99", "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("V1"));
}

/// A QUIC stack's controller named in a scenario runs under `bbrlab sim`:
/// the summary names it and flows.csv's `mode` column shows the state the
/// stack publishes (s2n's BBRv2 leaves Startup on this path).
#[test]
fn sim_runs_a_stack_controller_and_shows_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let text = GOOD.replace("algorithm = \"bbr\"", "algorithm = \"s2n:bbr2\"");
    let p = write(dir.path(), "s.toml", &text);
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "sim",
        p.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.contains("s2n:bbr2"), "{summary}");
    let mut rdr = csv::Reader::from_path(out.join("run-0000/flows.csv")).unwrap();
    let mode = rdr
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "mode")
        .expect("a mode column");
    let modes: std::collections::BTreeSet<String> = rdr
        .records()
        .map(|r| r.unwrap()[mode].to_string())
        .collect();
    assert!(modes.contains("startup"), "{modes:?}");
    assert!(
        modes.iter().any(|m| m.starts_with("probe_bw_")),
        "never left startup: {modes:?}"
    );
    // compare refuses it with the reason (it would run kernel TCP too).
    let o = bbrlab(&["compare", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("s2n:bbr2") && err.contains("only in the simulator"),
        "{err}"
    );
}

/// `bbrlab bench` repeats bbr, cubic and bbr3 round by round and reports
/// each rate's median and range and the per-round ratios; bad counts are
/// refused with the allowed range.
#[test]
fn bench_repeats_alternating_rounds_and_reports_medians_and_ranges() {
    let out = bbrlab(&["bench", "--seconds", "1", "--reps", "2", "--min-wall", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rounds: Vec<&str> = text.lines().filter(|l| l.starts_with("round ")).collect();
    let order: Vec<&str> = rounds
        .iter()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(
        order,
        ["bbr", "cubic", "bbr3", "bbr", "cubic", "bbr3"],
        "{text}"
    );
    for alg in ["bbr ", "cubic ", "bbr3 "] {
        let line = text
            .lines()
            .find(|l| l.starts_with(alg) && l.contains("median"))
            .unwrap_or_else(|| panic!("no median for {alg}: {text}"));
        assert!(line.contains("range") && line.contains("2 runs"), "{line}");
    }
    assert!(text.contains("bbr/cubic speed ratio: median"), "{text}");
    assert!(text.contains("bbr3/cubic speed ratio: median"), "{text}");

    let bad = bbrlab(&["bench", "--reps", "0"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("--reps 0: allowed 1 to 50"), "{err}");
}

/// Since Linux's receiver became a TCP-like flow's default, its window
/// can decide a flow's goodput on a long fat path; `sim` says so, and
/// what to raise, instead of leaving a silently low goodput. 20 Mbit/s at
/// 100 ms is a 250 kB BDP; a 256 KiB buffer offers a 160 kB window.
#[test]
fn a_flow_held_back_by_linuxs_receive_window_gets_a_note() {
    let path = |buffer: &str| {
        format!(
            "duration = \"5s\"\n[link.forward]\nrate = \"20mbit\"\ndelay = \"50ms\"\n[link.reverse]\ndelay = \"50ms\"\n[[flow]]\nalgorithm = \"bbr\"\nrcv_buffer = \"{buffer}\"\n"
        )
    };
    let (ok, err) = sim_text(&path("256KiB"));
    assert!(ok, "{err}");
    assert!(
        err.contains("note: run-0000: flow `bbr` waited on the receiver's window")
            && err.contains("rcv_buffer"),
        "{err}"
    );
    let (ok, err) = sim_text(&path("4MiB"));
    assert!(ok && !err.contains("receiver's window"), "{err}");
}

/// Zero or too-small spans, windows and counts are refused by name before
/// anything runs, where before they were raised in silence (`recv
/// --window`, `validate --seconds`), run to no purpose (`send --duration
/// 0s`, `emu --timeout 0`) or divided by (`fuzz --jobs 0`). None of these
/// opens a socket or a namespace: each fails while its arguments are read.
#[test]
fn zero_spans_windows_and_counts_are_refused_by_name() {
    for (args, want) in [
        (
            &["recv", "--listen", "127.0.0.1:0", "--window", "1000"][..],
            "--window 1000: at least 22400 bytes",
        ),
        (
            &["send", "--to", "127.0.0.1:9", "--duration", "0s"][..],
            "--duration 0s: nothing to send",
        ),
        (&["validate", "--seconds", "1"][..], "--seconds <SECONDS>"),
        (
            &["emu", "--timeout", "0", "--server", "true"][..],
            "--timeout <TIMEOUT>",
        ),
        (&["sim", "--jobs", "0", "x.toml"][..], "--jobs <JOBS>"),
    ] {
        refused_naming(args, want);
    }
}

/// `-j 0` said only "0 is not in 1..18446744073709551615" (or `1..=64`
/// for validate); every command's `-j` now says what it is and what to
/// give, from one parser.
#[test]
fn jobs_zero_says_what_jobs_means_in_every_command() {
    for args in [
        &["sim", "-j", "0", "x.toml"][..],
        &["search", "-j", "0"][..],
        &["fuzz", "-j", "0"][..],
        &["validate", "-j", "0"][..],
        &["reproduce", "-j", "0"][..],
        &["conformance", "-j", "0"][..],
    ] {
        let err = refused_naming(args, "-j/--jobs is how many runs go at once");
        assert!(
            err.contains("at least 1") && !err.contains("is not in 1.."),
            "{args:?}: {err}"
        );
    }
}

/// A negative number given to a numeric flag is that flag's bad value, named
/// with the flag, not "unexpected argument '-1'" (which clap says unless
/// told to take negative numbers as values).
#[test]
fn negative_numbers_are_refused_as_the_flags_values() {
    for (args, want) in [
        (
            &["validate", "--seconds", "-1"][..],
            "invalid value '-1' for '--seconds",
        ),
        (
            &["fuzz", "--seconds", "-1"][..],
            "--seconds -1: must be a positive",
        ),
        (
            &["sim", "--jobs", "-2", "x.toml"][..],
            "invalid value '-2' for '--jobs",
        ),
        (
            &["search", "--run-timeout", "-0.5"][..],
            "--run-timeout -0.5: must be a positive",
        ),
        // With a unit, the value is no number to clap: joined to its flag.
        (
            &["send", "--to", "127.0.0.1:9", "--duration", "-1s"][..],
            "--duration: `-1s`: the duration is negative",
        ),
        (
            &["sim", "-j", "-2x", "x.toml"][..],
            "invalid value '-2x' for '--jobs",
        ),
    ] {
        let err = refused_naming(args, want);
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// Runs `bbrlab args`, asserts it fails as a usage or run error (exit 1 or
/// 2) whose message contains `want`, and returns that message.
fn refused_naming(args: &[&str], want: &str) -> String {
    let o = bbrlab(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        matches!(o.status.code(), Some(1 | 2)) && err.contains(want),
        "{args:?}: {:?} {err}",
        o.status.code()
    );
    err
}

/// `bbrlab --help` opens with what the tool does for its user, not with
/// the package's description of how the crates are laid out.
#[test]
fn top_level_help_says_what_bbrlab_is_for() {
    let o = bbrlab(&["--help"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.starts_with("BBR congestion control: simulate, measure and compare"),
        "{out}"
    );
}

/// `send --bytes` reads the byte units scenario files use (it said
/// "invalid digit found in string" for `5MB`), and an ambiguous one is
/// named; both are decided before any packet is sent.
#[test]
fn send_bytes_takes_byte_units() {
    let o = bbrlab(&["send", "--to", "127.0.0.1:9", "--bytes", "5mb"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("`mb` is ambiguous"),
        "{e}"
    );
    let o = bbrlab(&["send", "--to", "127.0.0.1:9", "--bytes", "3pkt"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("not packets"), "{e}");
}

/// `validate --sim-pacing` takes Linux's pacer or one packet at a time,
/// and refuses anything else naming both, before any run (no root).
#[test]
fn validate_sim_pacing_refuses_an_unknown_pacer_naming_both() {
    let o = bbrlab(&["validate", "--sim-pacing", "fq", "--resimulate"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("'fq'") && e.contains("linux") && e.contains("exact"),
        "{e}"
    );
    let help = bbrlab(&["validate", "--help"]);
    let h = String::from_utf8_lossy(&help.stdout);
    assert!(
        h.contains("--sim-pacing") && h.contains("[default: linux]"),
        "{h}"
    );
}
