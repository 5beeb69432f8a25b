//! `bbrlab conformance` end to end: the quick grid on two controllers,
//! the files it writes, --strict, and bad arguments explained.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

fn cases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/conformance")
}

#[test]
fn the_quick_suite_writes_its_matrix_and_json_and_strict_holds_bbr3_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c");
    let o = bbrlab(&[
        "conformance",
        "--quick",
        "--quiet",
        "--strict",
        "--cc",
        "bbr3,bbr",
        "--only",
        "A01,A10",
        "--cases",
        cases().to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--qlog",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The HTML report: the matrix, a section per case with its checks'
    // reasons and its two figures, which exist.
    let html = std::fs::read_to_string(out.join("conformance.html")).unwrap();
    for want in [
        "<section id=\"A01\">",
        "<section id=\"A10\">",
        "why the bound is what it is",
        "figures/A10-inflight.svg",
        "figures/A10-pacing.svg",
        "<td class=\"fail\"",
    ] {
        assert!(html.contains(want), "{want} not in the report");
    }
    for f in ["A01-inflight", "A01-pacing", "A10-inflight", "A10-pacing"] {
        let svg = std::fs::read_to_string(out.join("figures").join(format!("{f}.svg"))).unwrap();
        assert!(svg.contains("bbr3") && svg.contains("bbr"), "{f}");
        assert!(out.join("figures").join(format!("{f}.png")).exists(), "{f}");
    }
    // Each run's qlog: a JSON-SEQ header, then events of that controller.
    let q = std::fs::read_to_string(out.join("qlog/A10/50M-40ms/bbr3/flow-0.sqlog")).unwrap();
    let records: Vec<serde_json::Value> = q
        .split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .map(|r| serde_json::from_str(r.trim()).unwrap())
        .collect();
    assert_eq!(records[0]["qlog_version"], "0.3");
    assert_eq!(records[0]["title"], "A10 50M-40ms on bbr3");
    assert!(records.iter().any(
        |r| r["name"] == "recovery:congestion_state_updated" && r["data"]["new"] == "probe_rtt"
    ));
    assert!(out.join("qlog/A01/50M-40ms/bbr/flow-0.sqlog").exists());
    let md = std::fs::read_to_string(out.join("conformance.md")).unwrap();
    assert!(md.starts_with("| case | bbr3 | bbr |"), "{md}");
    // bbr3 passes both; v1's PROBE_RTT comes after 10 s, not 5 s.
    assert!(
        md.contains("| A01 Exiting STARTUP on a bandwidth plateau | ✓ |"),
        "{md}"
    );
    assert!(md.contains("- **A10 on bbr**"), "{md}");
    assert!(stdout.contains("A10"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("conformance.json")).unwrap())
            .unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 4);
    assert_eq!(json["cases"][1]["id"], "A10");
    assert!(json["cases"][1]["checks"][0][1]
        .as_str()
        .unwrap()
        .contains("5 s"));
}

#[test]
fn strict_fails_when_bbr3_fails_and_bad_arguments_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // A case bbr3 cannot pass: STARTUP left within a tenth of a round trip.
    let c = dir.path().join("cases");
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(
        c.join("X01-impossible.toml"),
        "duration = \"1s\"\n[link.forward]\nrate = \"10mbit\"\ndelay = \"10ms\"\n[link.reverse]\ndelay = \"10ms\"\n[[flow]]\nalgorithm = \"bbr3\"\n[conformance]\nid = \"X01\"\ntitle = \"t\"\nsection = \"s\"\nbuffer_bdp = 1.0\nrtts = 20\n[[conformance.checks]]\ncheck = \"state_left\"\nstate = \"startup\"\nwithin = \"0.1rtt\"\nwhy = \"no controller can\"\n",
    )
    .unwrap();
    let out = dir.path().join("o");
    let args = |strict: bool| {
        let mut v = vec![
            "conformance",
            "--quick",
            "--quiet",
            "--cc",
            "bbr3",
            "--cases",
            c.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if strict {
            v.push("--strict");
        }
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| bbrlab(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        run(args(false)).status.success(),
        "a failed case is a finding"
    );
    let o = run(args(true));
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("X01"));

    let o = bbrlab(&[
        "conformance",
        "--cc",
        "bbr9",
        "--cases",
        c.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cc bbr9"));
    let o = bbrlab(&[
        "conformance",
        "--only",
        "A77",
        "--cases",
        cases().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("A77"));
    let o = bbrlab(&["conformance", "--cases", "/nonexistent/cases"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/cases"));
}
