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

/// Ctrl-C (SIGINT, sent here to the child's PID) ends a long run early,
/// and it still writes fuzz.json, marked interrupted, and exits 0: an
/// interrupted run used to leave its output directory empty.
#[test]
fn an_interrupted_run_still_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(["fuzz", "--cc", "bbr", "--seconds", "600", "--seed", "7"])
        .args(["--jobs", "1", "--quiet", "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bbrlab");
    // Until the handler is installed, a SIGINT would end the process
    // outright: fuzz installs it before it makes the output directory, so
    // wait for that, then a little for some runs.
    let t0 = std::time::Instant::now();
    while !out.exists() && t0.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    // SAFETY: kill(2) with the PID of a child this test spawned and has
    // not reaped, so the PID is still its.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t1 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t1.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            panic!("fuzz did not stop within 300 s of SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains(", interrupted"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fuzz.json")).unwrap()).unwrap();
    assert_eq!(json["interrupted"], true);
}
