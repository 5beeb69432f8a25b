//! `bbrlab kernel jitter-sweep` (seed 001's jitter experiment on real
//! Linux TCP) and its place in the report: the CSV it writes reads back,
//! malformed CSVs are refused with file, line and column, the book's
//! table and the report's "Linux TCP (kernel, measured)" block come from
//! the CSV, and the report says how to measure when there is no data. The
//! root tests run the sweep through the emulator with the kernel's own
//! `bbr` only, so they need no BPF control (and no lock on them).

mod common;

use claims::linux_tcp::{
    markdown, parse_csv, read_csv, report_section, write_csv, Provenance, SweepRow, CSV_FILE,
    PROVENANCE_FILE,
};
use std::fs;
use std::path::Path;
use std::process::Command;

fn row(sd: f64, seed: u64, cc: &str, goodput: Option<f64>, error: Option<&str>) -> SweepRow {
    SweepRow {
        sd_ms: sd,
        seed,
        cc: cc.into(),
        goodput_bps: goodput,
        seconds: goodput.map(|g| 24e6 / g),
        retransmitted_fraction: goodput.map(|_| 0.25),
        rtt_median_ms: goodput.map(|_| 80.5),
        using_srtt_fraction: (cc == "bbrlab_jitter" && goodput.is_some()).then_some(0.5),
        bytes: Some(3_000_000),
        duration_s: None,
        kernel: "6.18.0-test".into(),
        error: error.map(str::to_string),
    }
}

/// Two sds × two seeds × both controls; one run failed.
fn sample_rows() -> Vec<SweepRow> {
    vec![
        row(0.0, 1, "bbr", Some(2.86e6), None),
        row(0.0, 1, "bbrlab_jitter", Some(2.84e6), None),
        row(0.0, 2, "bbr", Some(2.88e6), None),
        row(0.0, 2, "bbrlab_jitter", Some(2.88e6), None),
        row(40.0, 1, "bbr", Some(1.4e6), None),
        row(40.0, 1, "bbrlab_jitter", Some(1.8e6), None),
        row(40.0, 2, "bbr", Some(1.6e6), None),
        row(
            40.0,
            2,
            "bbrlab_jitter",
            None,
            Some("the emulator exited with exit status: 130: emu: timed out, \"stopped\""),
        ),
    ]
}

fn provenance_json() -> &'static str {
    r#"{"kernel_release": "6.18.0-test", "bbrlab_version": "0.1.0",
        "bbrlab_commit": "abc123", "source_tree": "abc123, crates/kernel-cc as committed",
        "started_utc": "2026-11-23T20:51:00Z", "finished_utc": "2026-11-23T21:08:00Z",
        "command": "bbrlab kernel jitter-sweep --out x --sds 0,40 --seeds 1,2 --cc bbr,bbrlab_jitter --bytes 3000000 --timeout 144",
        "sds_ms": [0, 40], "seeds": [1, 2], "ccs": ["bbr", "bbrlab_jitter"],
        "bytes": 3000000, "duration_s": null, "path": "3mbit, 1000-packet buffer",
        "runs": 8, "failed": 1, "loadavg_at_start": 0.1, "loadavg_at_end": 0.25}"#
}

#[test]
fn the_csv_reads_back_as_written_failed_runs_included() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(CSV_FILE);
    let rows = sample_rows();
    write_csv(&p, &rows).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    assert!(text.starts_with(
        "sd_ms,seed,cc,goodput_bps,seconds,retransmitted_fraction,rtt_median_ms,using_srtt_fraction,bytes,duration_s,kernel,error\n"
    ));
    // The error's quotes and commas survive the csv crate's quoting.
    let back = read_csv(&p).unwrap();
    assert_eq!(back.len(), rows.len());
    assert_eq!(back[7].error, rows[7].error);
    assert_eq!(back[7].goodput_bps, None);
    assert_eq!(back[5].using_srtt_fraction, Some(0.5));
    assert_eq!(back[0].using_srtt_fraction, None);
    assert_eq!(back[4].goodput_bps, Some(1.4e6));
    assert_eq!(back[4].kernel, "6.18.0-test");
    assert_eq!(back[4].bytes, Some(3_000_000));
    // Columns are found by name, in any order.
    let swapped = "cc,sd_ms,seed,goodput_bps,seconds,retransmitted_fraction,rtt_median_ms,using_srtt_fraction,bytes,duration_s,kernel,error\n\
                   bbr,10,3,2000000,12,0.1,70,,,60,k,\n";
    let r = parse_csv(swapped, "x.csv").unwrap();
    assert_eq!((r[0].sd_ms, r[0].seed, r[0].cc.as_str()), (10.0, 3, "bbr"));
    assert_eq!(r[0].duration_s, Some(60.0));
}

#[test]
fn a_malformed_csv_is_refused_naming_file_line_and_column() {
    let head = "sd_ms,seed,cc,goodput_bps,seconds,retransmitted_fraction,rtt_median_ms,using_srtt_fraction,bytes,duration_s,kernel,error\n";
    let err = |body: &str| parse_csv(&format!("{head}{body}"), "data.csv").unwrap_err();
    let e = err("0,1,bbr,fast,8,0,90,,3000000,,k,\n");
    assert!(
        e.contains("data.csv: line 2, column `goodput_bps`: `fast` is not a number"),
        "{e}"
    );
    let e = err("0,1,bbr,1,8,0,90,,3000000,,k,\n10,x,bbr,1,8,0,90,,3000000,,k,\n");
    assert!(
        e.contains("line 3, column `seed`: `x` is not a seed"),
        "{e}"
    );
    let e = err("-5,1,bbr,1,8,0,90,,3000000,,k,\n");
    assert!(e.contains("column `sd_ms`: `-5`"), "{e}");
    let e = err("0,1,,1,8,0,90,,3000000,,k,\n");
    assert!(e.contains("column `cc`"), "{e}");
    let e = err("0,1,bbr,,,,,,3000000,,k,\n");
    assert!(
        e.contains("line 2: a run with neither a goodput nor an error"),
        "{e}"
    );
    // A short row: the csv crate's own message, with where.
    let e = err("0,1,bbr\n");
    assert!(e.starts_with("data.csv: "), "{e}");
    assert!(e.contains("line 2") || e.contains("line: 2"), "{e}");
    let e = parse_csv("sd_ms,seed,cc\n0,1,bbr\n", "old.csv").unwrap_err();
    assert!(
        e.contains("old.csv: line 1: no column `goodput_bps`; a jitter sweep's CSV has the columns sd_ms,seed,cc,"),
        "{e}"
    );
}

#[test]
fn the_readme_table_is_mean_and_sd_over_seeds_with_failures_counted() {
    let t = markdown(&sample_rows());
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "| RTT sd (ms) | bbr (kernel) Mbit/s | bbrlab_jitter Mbit/s | bbr retx | bbrlab_jitter retx | bbrlab_jitter BDP on srtt |"
    );
    assert_eq!(lines[1], "| --- | --- | --- | --- | --- | --- |");
    // 0 ms: bbr (2.86, 2.88) → 2.87 ± 0.01; the variant (2.84, 2.88).
    assert_eq!(
        lines[2],
        "| 0 | 2.87 ± 0.01 (n = 2) | 2.86 ± 0.03 (n = 2) | 25 % | 25 % | 50 % |"
    );
    // 40 ms: the variant's failed seed is left out and counted.
    assert_eq!(
        lines[3],
        "| 40 | 1.50 ± 0.14 (n = 2) | 1.80 ± 0.00 (n = 1); 1 failed | 25 % | 25 % | 50 % |"
    );
    assert_eq!(lines.len(), 4);
}

fn data_dir_with(sweep: &str, csv: &str, prov: Option<&str>) -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().join(sweep);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join(CSV_FILE), csv).unwrap();
    if let Some(p) = prov {
        fs::write(d.join(PROVENANCE_FILE), p).unwrap();
    }
    data
}

fn csv_text(rows: &[SweepRow]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(CSV_FILE);
    write_csv(&p, rows).unwrap();
    fs::read_to_string(p).unwrap()
}

/// A sweep made since the build's commit carries `-dirty` has no separate
/// `source_tree`: it is not written, and the report names the commit alone.
#[test]
fn a_new_sweeps_provenance_is_the_builds_commit_alone() {
    let mut p: Provenance = serde_json::from_str(provenance_json()).unwrap();
    p.source_tree.clear();
    p.bbrlab_commit = "0123456789ab-dirty".into();
    let json = serde_json::to_string(&p).unwrap();
    assert!(!json.contains("source_tree"), "{json}");
    let data = data_dir_with("s", &csv_text(&sample_rows()), Some(&json));
    let out = tempfile::tempdir().unwrap();
    let h = report_section(data.path(), out.path());
    assert!(h.contains("(git commit 0123456789ab-dirty)"), "{h}");
    assert!(!h.contains("checkout"), "{h}");
    // Old data keeps its checkout line (see the next test).
    let old: Provenance = serde_json::from_str(provenance_json()).unwrap();
    assert_eq!(old.source_tree, "abc123, crates/kernel-cc as committed");
}

#[test]
fn the_report_block_shows_table_figure_and_provenance_from_the_data() {
    let data = data_dir_with(
        "seed001-3mb",
        &csv_text(&sample_rows()),
        Some(provenance_json()),
    );
    let out = tempfile::tempdir().unwrap();
    let h = report_section(data.path(), out.path());
    assert!(h.contains("Linux TCP (kernel, measured)"), "{h}");
    assert!(h.contains("does not enter C11's or C12's verdict"), "{h}");
    assert!(h.contains("<h4>3.0 MB per run</h4>"), "{h}");
    assert!(h.contains("<td>1.50 ± 0.14 (n = 2)</td>"), "{h}");
    assert!(h.contains("1.80 ± 0.00 (n = 1); 1 failed"), "{h}");
    // The failed run is listed with its reason, escaped.
    assert!(h.contains("sd 40 ms, seed 2, bbrlab_jitter: the emulator exited with exit status: 130: emu: timed out, &quot;stopped&quot;"), "{h}");
    // Provenance: kernel, dates, commit, command.
    for want in [
        "kernel 6.18.0-test",
        "2026-11-23T20:51:00Z",
        "git commit abc123",
        "crates/kernel-cc as committed",
        "bbrlab kernel jitter-sweep --out x --sds 0,40",
        "8 runs (1 failed)",
        "load average 0.10 at the start and 0.25 at the end",
    ] {
        assert!(h.contains(want), "{want} missing from {h}");
    }
    // The figure and the data are in the report directory, linked.
    let fig = out.path().join("kernel-tcp/seed001-3mb");
    for f in [
        "goodput-vs-sd.svg",
        "goodput-vs-sd.png",
        CSV_FILE,
        PROVENANCE_FILE,
    ] {
        assert!(fig.join(f).is_file(), "{f} not written");
    }
    assert!(
        h.contains("src=\"kernel-tcp/seed001-3mb/goodput-vs-sd.svg\""),
        "{h}"
    );
    let svg = fs::read_to_string(fig.join("goodput-vs-sd.svg")).unwrap();
    assert!(svg.contains("bbr (kernel), Linux TCP (mean, min–max over 2 seeds)"));
    assert!(svg.contains("bbrlab_jitter (BPF), Linux TCP"));
}

#[test]
fn without_data_the_report_says_how_to_measure_and_bad_data_shows_its_error() {
    let empty = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let h = report_section(&empty.path().join("absent"), out.path());
    assert!(h.contains("No measurement found"), "{h}");
    assert!(
        h.contains("bbrlab kernel jitter-sweep --out docs/kernel-tcp/seed001-3mb"),
        "{h}"
    );
    assert!(h.contains("flock /tmp/bbrlab-kernel-cc.lock"), "{h}");
    let bad = data_dir_with("broken", "sd_ms,seed\n1,2\n", None);
    let h = report_section(bad.path(), out.path());
    assert!(h.contains("Cannot show broken:"), "{h}");
    assert!(h.contains("no column `cc`"), "{h}");
}

fn bbrlab(args: &[&str], env: Option<(&str, &Path)>) -> std::process::Output {
    let mut c = Command::new(common::BIN);
    c.args(args);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn reproduce_puts_the_measured_block_under_c12_and_leaves_the_verdicts_alone() {
    let data = data_dir_with(
        "seed001-3mb",
        &csv_text(&sample_rows()),
        Some(provenance_json()),
    );
    let out = tempfile::tempdir().unwrap();
    let o = bbrlab(
        &[
            "reproduce",
            "--only",
            "C11,C12",
            "--quick",
            "--quiet",
            "--out",
            out.path().to_str().unwrap(),
        ],
        Some(("BBRLAB_KERNEL_TCP_DIR", data.path())),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = fs::read_to_string(out.path().join("index.html")).unwrap();
    let c12 = html.find("<section id=\"C12\">").unwrap();
    let block = html.find("<h3 id=\"linux-tcp\">").unwrap();
    assert!(block > c12, "the block is not in C12's section");
    assert!(html[c12..].contains("<td>1.50 ± 0.14 (n = 2)</td>"));
    // C11 points to it.
    let c11 = html.find("<section id=\"C11\">").unwrap();
    assert!(html[c11..c12].contains("href=\"#linux-tcp\""));
    // The verdicts and claims.json know nothing of it.
    let claims = fs::read_to_string(out.path().join("claims.json")).unwrap();
    assert!(!claims.contains("kernel, measured") && !claims.contains("bbrlab_jitter"));
    assert!(out
        .path()
        .join("kernel-tcp/seed001-3mb/goodput-vs-sd.svg")
        .is_file());
}

#[test]
fn the_table_command_prints_the_markdown_or_says_what_is_wrong() {
    let data = data_dir_with("s", &csv_text(&sample_rows()), None);
    let csv = data.path().join("s").join(CSV_FILE);
    let o = bbrlab(
        &["kernel", "jitter-sweep", "--table", csv.to_str().unwrap()],
        None,
    );
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), markdown(&sample_rows()));
    let bad = data_dir_with("s", "sd_ms,seed,cc\n", None);
    let csv = bad.path().join("s").join(CSV_FILE);
    let o = bbrlab(
        &["kernel", "jitter-sweep", "--table", csv.to_str().unwrap()],
        None,
    );
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no column `goodput_bps`"), "{e}");
    assert!(e.contains(csv.to_str().unwrap()), "{e}");
}

/// Runs the sweep with the kernel's `bbr` only (no BPF control needed;
/// the command itself needs the binary's `kernel` feature).
#[cfg(feature = "kernel")]
fn sweep(out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "kernel",
        "jitter-sweep",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--cc",
        "bbr",
        "--seeds",
        "1",
    ];
    args.extend_from_slice(extra);
    bbrlab(&args, None)
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
#[cfg(feature = "kernel")]
fn root_a_sweep_measures_each_point_and_writes_its_provenance() {
    common::require_root();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // 300 kB: under a second at 3 Mbit/s on a clean path.
    let o = sweep(dir.path(), &["--sds", "0,30", "--bytes", "300000"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("sd 0 ms, seed 1, bbr: "), "{stderr}");
    let rows = read_csv(&dir.path().join(CSV_FILE)).unwrap();
    assert_eq!(rows.len(), 2);
    let (clean, jittery) = (&rows[0], &rows[1]);
    assert_eq!((clean.sd_ms, jittery.sd_ms), (0.0, 30.0));
    for r in &rows {
        assert_eq!(r.error, None);
        assert_eq!(r.bytes, Some(300_000));
        assert!(
            r.using_srtt_fraction.is_none(),
            "the kernel's bbr has no srtt state"
        );
        assert!(!r.kernel.is_empty());
    }
    // A clean 3 Mbit/s path: a short transfer with STARTUP gets most of it.
    let g = clean.goodput_bps.unwrap();
    assert!((1.5e6..3.0e6).contains(&g), "goodput {g}");
    assert_eq!(clean.retransmitted_fraction, Some(0.0));
    // The link's own delay is 0: all of the RTT is the jitter's 60 ms
    // mean (plus the queue), with sd 0 as with sd 30.
    for r in &rows {
        let rtt = r.rtt_median_ms.unwrap();
        assert!(rtt > 45.0, "{} ms: median RTT {rtt} ms", r.sd_ms);
    }
    let p: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join(PROVENANCE_FILE)).unwrap())
            .unwrap();
    assert_eq!(p["runs"], 2);
    assert_eq!(p["failed"], 0);
    assert_eq!(p["ccs"], serde_json::json!(["bbr"]));
    assert_eq!(p["kernel_release"].as_str(), Some(rows[0].kernel.as_str()));
    assert!(p["command"]
        .as_str()
        .unwrap()
        .starts_with("bbrlab kernel jitter-sweep --out "));
    // Each run kept its path and logs.
    let run = dir.path().join("runs/sd30-seed1-bbr");
    assert!(fs::read_to_string(run.join("link.toml"))
        .unwrap()
        .contains("sd = \"30ms\""));
    assert!(run.join("flows.csv").is_file());
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
#[cfg(feature = "kernel")]
fn root_a_run_that_fails_is_a_row_with_its_error_and_the_command_exits_1() {
    common::require_root();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // 3 MB cannot cross 3 Mbit/s in 2 s: the emulator stops the sender.
    let o = sweep(
        dir.path(),
        &["--sds", "0", "--bytes", "3000000", "--timeout", "2"],
    );
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("1 of 1 runs failed"), "{stderr}");
    let rows = read_csv(&dir.path().join(CSV_FILE)).unwrap();
    assert_eq!(rows.len(), 1);
    let e = rows[0].error.as_deref().unwrap();
    assert!(e.contains("timed out"), "{e}");
    assert!(e.contains("emu.err"), "{e}");
    assert_eq!(rows[0].goodput_bps, None);
}
