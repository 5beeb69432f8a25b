//! `bbrlab fuzz` end to end: a short run on two controllers prints its
//! seed and rate and writes fuzz.json; bad arguments are named.

use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

#[test]
fn a_short_run_prints_its_seed_and_rate_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    let o = bbrlab(&[
        "fuzz",
        "--cc",
        "bbr3,cubic",
        "--seconds",
        "600",
        "--runs",
        "200",
        "--seed",
        "42",
        "--jobs",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("seed 42 (repeat with --seed 42)"),
        "{stderr}"
    );
    assert!(
        stdout.contains("fuzz: seed 42:") && stdout.contains("/s per worker"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fuzz.json")).unwrap()).unwrap();
    assert_eq!(json["seed"], 42);
    assert_eq!(json["executions"].as_u64().unwrap(), 200, "{json}");
    // Each failure, if any, is a scenario file beside it that sim takes.
    for f in json["failures"].as_array().unwrap() {
        let name = format!(
            "{}-{}.toml",
            f["controller"].as_str().unwrap(),
            f["invariant"].as_str().unwrap()
        );
        let o = bbrlab(&[
            "sim",
            out.join(&name).to_str().unwrap(),
            "--quiet",
            "--no-plots",
            "-o",
            dir.path().join("sim").to_str().unwrap(),
            "--force",
        ]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn bad_arguments_are_named_and_help_lists_the_invariants() {
    let o = bbrlab(&["fuzz", "--cc", "bbr9", "--seconds", "1", "--quiet"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cc bbr9"));
    let o = bbrlab(&["fuzz", "--cc", "bbr3", "--seconds", "0", "--quiet"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seconds 0"));
    // Spans past what a Duration holds, and counts of zero workers or
    // runs, are refused by name: no panic (exit 101), nothing run.
    for (args, want) in [
        (&["--seconds", "1e20"][..], "--seconds 1"),
        (
            &["--seconds", "1", "--run-timeout", "1e20"],
            "--run-timeout 1",
        ),
        (&["--seconds", "1", "--jobs", "0"], "--jobs"),
        (&["--seconds", "1", "--runs", "0"], "--runs"),
    ] {
        let o = bbrlab(&[&["fuzz", "--cc", "bbr", "--quiet"][..], args].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1 | 2))
                && err.contains(want)
                && !err.contains("panicked"),
            "{args:?}: {:?} {err}",
            o.status.code()
        );
    }
    let help = String::from_utf8_lossy(&bbrlab(&["fuzz", "--help"]).stdout).into_owned();
    for want in [
        "--seed",
        "--seconds",
        "no panic",
        "standing queue",
        "--profile fuzz",
    ] {
        assert!(help.contains(want), "{want} not in --help");
    }
}
