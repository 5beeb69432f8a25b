//! Seed 001's jitter sweep on a real QUIC stack (`bbrlab jitter-sweep
//! --source s2n`): the same CSV and provenance as the Linux-TCP sweep, its
//! own labels in the table and the report ("A real QUIC stack (s2n-quic),
//! measured", beside the Linux-TCP block under C12), and, as root, a short
//! sweep through the emulator with quic-bulk (one sd, one seed, two
//! controls, 150 kB each: a few seconds at the ~0.4 Mbit/s they get at sd
//! 20 ms).

mod common;

use claims::jitter_sweep::{
    markdown, read_csv, report_section, write_csv, Source, SweepRow, CSV_COLUMNS, CSV_FILE,
    PROVENANCE_FILE,
};
use std::fs;
use std::path::Path;
use std::process::Command;

fn row(sd: f64, seed: u64, cc: &str, goodput: Option<f64>, srtt: Option<f64>) -> SweepRow {
    SweepRow {
        sd_ms: sd,
        seed,
        cc: cc.into(),
        goodput_bps: goodput,
        seconds: goodput.map(|_| 20.0),
        retransmitted_fraction: goodput.map(|_| 0.1),
        rtt_median_ms: goodput.map(|_| 70.0),
        using_srtt_fraction: srtt,
        bytes: None,
        duration_s: Some(20.0),
        kernel: "6.18.0-test".into(),
        error: goodput
            .is_none()
            .then(|| "the emulator exited with exit status: 1".into()),
    }
}

/// Two sds × two seeds × the three controls; the variant reports no
/// srtt state in one sweep and does in the other.
fn rows(with_state: bool) -> Vec<SweepRow> {
    let st = |x: f64| with_state.then_some(x);
    let mut v = Vec::new();
    for (sd, g) in [(0.0, [2.8e6, 2.8e6, 2.7e6]), (60.0, [1.0e6, 2.0e6, 1.5e6])] {
        for seed in [1, 2] {
            v.push(row(sd, seed, "bbr", Some(g[0]), None));
            v.push(row(sd, seed, "bbr-jitter", Some(g[1]), st(sd / 60.0)));
            v.push(row(sd, seed, "s2n:bbr2", Some(g[2]), None));
        }
    }
    v
}

fn prov(stack: &str) -> String {
    format!(
        r#"{{"kernel_release": "6.18.0-test", "bbrlab_version": "0.1.0",
        "bbrlab_commit": "abc123", "started_utc": "2026-11-24T15:30:00Z",
        "finished_utc": "2026-11-24T15:55:00Z",
        "command": "bbrlab jitter-sweep --source s2n --out x --sds 0,60 --seeds 1,2 --cc bbr,bbr-jitter,s2n:bbr2 --duration 20s --timeout 140",
        "sds_ms": [0, 60], "seeds": [1, 2], "ccs": ["bbr", "bbr-jitter", "s2n:bbr2"],
        "bytes": null, "duration_s": 20.0, "path": "3mbit, 1000-packet buffer",
        "runs": 12, "failed": 0, "source": "s2n", "stack": "{stack}",
        "loadavg_at_start": 1.5, "loadavg_at_end": 2.0}}"#
    )
}

fn data_dir(rows: &[SweepRow], prov: Option<&str>) -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().join("seed001-20s");
    fs::create_dir_all(&d).unwrap();
    write_csv(&d.join(CSV_FILE), rows).unwrap();
    if let Some(p) = prov {
        fs::write(d.join(PROVENANCE_FILE), p).unwrap();
    }
    data
}

#[test]
fn the_quic_table_names_each_stacks_controls_and_shows_srtt_state_only_when_reported() {
    let t = markdown(Source::S2nQuic, &rows(false));
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines[0],
        "| RTT sd (ms) | bbr Mbit/s | bbr-jitter Mbit/s | s2n:bbr2 Mbit/s | bbr retx | bbr-jitter retx | s2n:bbr2 retx |"
    );
    assert_eq!(
        lines[3],
        "| 60 | 1.00 ± 0.00 (n = 2) | 2.00 ± 0.00 (n = 2) | 1.50 ± 0.00 (n = 2) | 10 % | 10 % | 10 % |"
    );
    // With the variant's state in the log, its column appears (mean over seeds).
    let t = markdown(Source::S2nQuic, &rows(true));
    assert!(
        t.lines()
            .next()
            .unwrap()
            .ends_with("| bbr-jitter BDP on srtt |"),
        "{t}"
    );
    assert!(
        t.lines().nth(3).unwrap().ends_with("| 10 % | 100 % |"),
        "{t}"
    );
    // The same rows as Linux TCP's: its own labels ("(kernel)" on the
    // kernel's controls), the same figures.
    let k = markdown(Source::LinuxTcp, &rows(false));
    assert!(
        k.starts_with("| RTT sd (ms) | bbr (kernel) Mbit/s | bbr-jitter (kernel) Mbit/s |"),
        "{k}"
    );
}

#[test]
fn the_quic_block_is_labelled_and_carries_its_stacks_provenance() {
    let data = data_dir(&rows(false), Some(&prov("s2n-quic 1.91.0")));
    let out = tempfile::tempdir().unwrap();
    let h = report_section(Source::S2nQuic, data.path(), out.path());
    assert!(
        h.starts_with("<h3 id=\"quic-stack\">A real QUIC stack (s2n-quic), measured</h3>"),
        "{h}"
    );
    assert!(h.contains("does not enter C11's or C12's verdict"), "{h}");
    assert!(h.contains("<h4>20 s per run</h4>"), "{h}");
    assert!(h.contains("<td>2.00 ± 0.00 (n = 2)</td>"), "{h}");
    for want in [
        "s2n-quic 1.91.0 on kernel 6.18.0-test",
        "bbrlab jitter-sweep --source s2n --out x",
        "12 runs (0 failed)",
        "load average 1.50 at the start and 2.00 at the end",
        "with <code>quic-bulk</code> built next to <code>bbrlab</code>",
    ] {
        assert!(h.contains(want), "{want} missing from {h}");
    }
    assert!(!h.contains("kernel load"), "{h}");
    let fig = out.path().join("quic/seed001-20s");
    for f in [
        "goodput-vs-sd.svg",
        "goodput-vs-sd.png",
        CSV_FILE,
        PROVENANCE_FILE,
    ] {
        assert!(fig.join(f).is_file(), "{f} not written");
    }
    assert!(
        h.contains("src=\"quic/seed001-20s/goodput-vs-sd.svg\""),
        "{h}"
    );
    let svg = fs::read_to_string(fig.join("goodput-vs-sd.svg")).unwrap();
    assert!(
        svg.contains("bbr-jitter (bbrlab via bbrlab-s2n), s2n-quic (mean, min–max over 2 seeds)")
    );
    assert!(
        svg.contains("s2n:bbr2 (s2n-quic&apos;s own), s2n-quic")
            || svg.contains("s2n:bbr2 (s2n-quic's own), s2n-quic")
    );
    assert!(svg.contains("A real QUIC stack (s2n-quic), measured: goodput vs RTT sd"));
    // No data: how to measure it, with quic-bulk built beside bbrlab.
    let h = report_section(Source::S2nQuic, &data.path().join("absent"), out.path());
    assert!(h.contains("No measurement found"), "{h}");
    assert!(
        h.contains("cargo build --release -p bbrlab -p quic-bulk"),
        "{h}"
    );
    assert!(
        h.contains("jitter-sweep --source s2n --out docs/quic/"),
        "{h}"
    );
}

#[test]
fn a_source_is_named_by_its_key_and_a_wrong_one_lists_both() {
    assert_eq!(Source::parse("s2n"), Ok(Source::S2nQuic));
    assert_eq!(Source::parse("linux-tcp"), Ok(Source::LinuxTcp));
    let e = Source::parse("quinn").unwrap_err();
    assert!(e.contains("unknown source `quinn`"), "{e}");
    assert!(e.contains("`s2n` (a real QUIC stack (s2n-quic))"), "{e}");
    assert!(e.contains("`linux-tcp` (Linux TCP)"), "{e}");
}

/// The committed kernel sweeps still load, and their tables are the ones
/// the book pastes (the generalization changed no cell or heading).
#[test]
fn the_committed_kernel_sweeps_render_the_books_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let book = fs::read_to_string(root.join("docs/src/kernel.md")).unwrap();
    for d in ["seed001-3mb", "seed001-60s"] {
        let rows = read_csv(&root.join("docs/kernel-tcp").join(d).join(CSV_FILE)).unwrap();
        let t = markdown(Source::LinuxTcp, &rows);
        assert!(book.contains(&t), "{d}'s table is not the book's:\n{t}");
    }
}

/// The committed s2n-quic sweep: the book pastes its table, and the
/// report's findings, written for it, quote its means (so a re-measured
/// sweep that changes them fails here until the text is rewritten).
#[test]
fn the_committed_quic_sweep_is_the_books_table_and_its_findings_quote_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = root.join("docs/quic");
    let rows = read_csv(&data.join("seed001-750kb").join(CSV_FILE)).unwrap();
    assert_eq!(rows.len(), 60);
    assert!(rows.iter().all(|r| r.error.is_none()));
    let book = fs::read_to_string(root.join("docs/src/quic-jitter.md")).unwrap();
    let t = markdown(Source::S2nQuic, &rows);
    assert!(book.contains(&t), "the book's table is not the CSV's:\n{t}");
    let out = tempfile::tempdir().unwrap();
    let h = report_section(Source::S2nQuic, &data, out.path());
    let at = h
        .find("<b>What it shows</b>")
        .expect("findings after the sweep");
    let findings = &h[at..];
    let mean = |sd: f64, cc: &str| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.sd_ms == sd && r.cc == cc)
            .map(|r| r.goodput_bps.unwrap() / 1e6)
            .collect();
        format!("{:.2}", v.iter().sum::<f64>() / v.len() as f64)
    };
    let quoted = [
        format!(
            "from {} Mbit/s at sd 0 to {} at 20 ms",
            mean(0.0, "bbr"),
            mean(20.0, "bbr")
        ),
        format!(
            "({}, {}, {} Mbit/s at 20, 40, 60 ms)",
            mean(20.0, "bbr-jitter"),
            mean(40.0, "bbr-jitter"),
            mean(60.0, "bbr-jitter")
        ),
        format!(
            "({}, {}, {})",
            mean(20.0, "s2n:bbr2"),
            mean(40.0, "s2n:bbr2"),
            mean(60.0, "s2n:bbr2")
        ),
    ];
    for q in &quoted {
        assert!(
            findings.contains(q.as_str()),
            "{q} not in the findings: {findings}"
        );
    }
    assert!(h.contains("<h4>750 kB per run</h4>"), "{h}");
    // Another sweep (here, test data) gets no findings written for this one.
    let other = data_dir(&rows, None);
    let h = report_section(Source::S2nQuic, other.path(), out.path());
    assert!(!h.contains("What it shows"), "{h}");
}

fn bbrlab(args: &[&str], env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = Command::new(common::BIN);
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn reproduce_shows_both_real_stacks_under_c12_and_c11_links_to_both() {
    let quic = data_dir(&rows(false), Some(&prov("s2n-quic 1.91.0")));
    let kernel = tempfile::tempdir().unwrap();
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
        &[
            ("BBRLAB_QUIC_DIR", quic.path()),
            ("BBRLAB_KERNEL_TCP_DIR", kernel.path()),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = fs::read_to_string(out.path().join("index.html")).unwrap();
    let c11 = html.find("<section id=\"C11\">").unwrap();
    let c12 = html.find("<section id=\"C12\">").unwrap();
    let linux = html.find("<h3 id=\"linux-tcp\">").unwrap();
    let quic_at = html.find("<h3 id=\"quic-stack\">").unwrap();
    assert!(
        c12 < linux && linux < quic_at,
        "the blocks are not in C12's section, Linux TCP first"
    );
    assert!(html[quic_at..].contains("<td>1.50 ± 0.00 (n = 2)</td>"));
    assert!(html[c11..c12].contains("href=\"#quic-stack\""));
    assert!(html[c11..c12].contains("href=\"#linux-tcp\""));
    let claims = fs::read_to_string(out.path().join("claims.json")).unwrap();
    assert!(
        !claims.contains("s2n"),
        "the verdicts know nothing of the measurement"
    );
}

#[test]
fn the_table_command_takes_the_source_or_reads_it_from_the_provenance() {
    let data = data_dir(&rows(false), None);
    let csv = data.path().join("seed001-20s").join(CSV_FILE);
    let o = bbrlab(
        &[
            "jitter-sweep",
            "--source",
            "s2n",
            "--table",
            csv.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        markdown(Source::S2nQuic, &rows(false))
    );
    // Without --source, the provenance beside the CSV says which stack.
    let table = |data: &tempfile::TempDir| {
        let csv = data.path().join("seed001-20s").join(CSV_FILE);
        bbrlab(&["jitter-sweep", "--table", csv.to_str().unwrap()], &[])
    };
    let o = table(&data_dir(&rows(false), Some(&prov("s2n-quic 1.91.0"))));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        markdown(Source::S2nQuic, &rows(false))
    );
    // With no provenance, the error asks for --source; so does a sweep
    // without --table.
    let o = table(&data);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("give --source"), "{e}");
    let o = bbrlab(&["jitter-sweep", "--cc", "bbr"], &[]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("--source"), "{e}");
    let o = bbrlab(
        &["jitter-sweep", "--source", "s2n", "--cc", "bbrlab_jitter"],
        &[],
    );
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("`bbrlab_jitter` is not a control quic-bulk runs in s2n-quic"),
        "{e}"
    );
}

/// quic-bulk where `cargo build`/`cargo test --workspace` puts it, beside bbrlab.
fn quic_bulk() -> std::path::PathBuf {
    let p = Path::new(common::BIN).with_file_name("quic-bulk");
    assert!(
        p.is_file(),
        "{} is missing: build it beside bbrlab (`cargo build -p quic-bulk`; `cargo test --workspace` does)",
        p.display()
    );
    p
}

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn root_a_short_s2n_sweep_writes_rows_of_the_sweeps_schema() {
    common::require_root();
    let qb = quic_bulk();
    let _serial = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let o = bbrlab(
        &[
            "jitter-sweep",
            "--source",
            "s2n",
            "--quiet",
            "--out",
            dir.path().to_str().unwrap(),
            "--quic-bulk",
            qb.to_str().unwrap(),
            "--sds",
            "20",
            "--seeds",
            "1",
            "--cc",
            "bbr,s2n:bbr2",
            "--bytes",
            "150000",
            "--timeout",
            "90",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("sd 20 ms, seed 1, s2n:bbr2: "), "{stderr}");
    let csv = dir.path().join(CSV_FILE);
    let header = fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(header, CSV_COLUMNS.join(","));
    let rows = read_csv(&csv).unwrap();
    assert_eq!(rows.len(), 2);
    for (r, cc) in rows.iter().zip(["bbr", "s2n:bbr2"]) {
        assert_eq!((r.cc.as_str(), r.sd_ms, r.seed), (cc, 20.0, 1));
        assert_eq!(r.error, None, "{cc}");
        assert_eq!(r.bytes, Some(150_000));
        let (g, s) = (r.goodput_bps.unwrap(), r.seconds.unwrap());
        assert!(g > 0.0 && s > 0.0, "{cc}: {g} bit/s over {s} s");
        // Nothing moves faster than the 3 Mbit/s link.
        assert!(g < 3.2e6, "{cc}: {g} bit/s");
        // The path's 60 ms mean delay is in every RTT.
        assert!(
            r.rtt_median_ms.unwrap() > 30.0,
            "{cc}: {:?}",
            r.rtt_median_ms
        );
        // The run's time series: the shared schema first, bytes delivered.
        let log = dir
            .path()
            .join("runs")
            .join(format!("sd20-seed1-{}", cc.replace(':', "-")))
            .join("flows.csv");
        let t = fs::read_to_string(&log).unwrap();
        let head: Vec<&str> = t.lines().next().unwrap().split(',').collect();
        let schema: Vec<&str> = sender::schema::FLOW_COLUMNS
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(&head[..schema.len()], &schema[..], "{}", log.display());
        let i = head.iter().position(|h| *h == "delivered_bytes").unwrap();
        let last: u64 = t
            .lines()
            .filter_map(|l| l.split(',').nth(i)?.parse().ok())
            .max()
            .unwrap_or(0);
        assert!(last > 0, "{cc}: no bytes delivered in {}", log.display());
    }
    let p: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join(PROVENANCE_FILE)).unwrap())
            .unwrap();
    assert_eq!(p["source"], "s2n");
    assert!(p["stack"].as_str().unwrap().starts_with("s2n-quic"), "{p}");
    assert!(p["command"]
        .as_str()
        .unwrap()
        .starts_with("bbrlab jitter-sweep --source s2n "));
    assert!(p["loadavg_at_start"].as_f64().is_some());
}
