//! Issue 13's rule: no input file can make `bbrlab sim` hang, exhaust
//! memory or fill the disk. Proptest mutates scenario files (values
//! swapped for hostile ones, lines dropped or added, sweeps) and runs
//! `bbrlab sim` on each as a subprocess under resource limits: CPU time
//! (RLIMIT_CPU), address space (RLIMIT_AS) and file size (RLIMIT_FSIZE),
//! plus a generous wall-clock timeout as the hang detector. Every run
//! must exit by itself (no signal), without a panic, and a refusal must
//! name `file:line:col`.
//!
//! `BBRLAB_LIMIT_SCALE=0.001` scales the simulator's packet, memory and
//! row limits down a thousandfold, so every accepted run is small and the
//! test is quick on a loaded machine; what it checks is that every path to
//! a large cost goes through the limits. No assertion is on wall time
//! except the hang detector, which is minutes.

use proptest::prelude::*;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BASE: &str = r#"duration = "2s"
seed = 3
sample_interval = "10ms"
[link.forward]
rate = "10mbit"
delay = "20ms"
queue = { limit = "100pkt" }
loss = 0.01
jitter = { uniform = { min = "0ms", max = "2ms" }, reorder = false }
[link.reverse]
delay = "20ms"
[[flow]]
algorithm = "bbr"
name = "a"
[[flow]]
algorithm = "cubic"
start = "0.5s"
size = "1MB"
"#;

/// Values a user (or a typo) might put anywhere.
const VALUES: &[&str] = &[
    "\"1ns\"",
    "\"0s\"",
    "\"1e300ms\"",
    "\"86400s\"",
    "\"99999999999999999999999mbit\"",
    "\"1Tbit\"",
    "\"100Gbit\"",
    "\"1bit\"",
    "\"10MBps\"",
    "\"10MB/s\"",
    "\"18446744073709551616pkt\"",
    "\"1000000000pkt\"",
    "\"1B\"",
    "\"0pkt\"",
    "\"1GiB\"",
    "\"-1ms\"",
    "\"\"",
    "0",
    "-1",
    "1.0",
    "1e308",
    "18446744073709551615",
    "9000",
    "true",
    "\"bbr\"",
    "\"vegas\"",
    "{ square = { low = \"1kbit\", high = \"1Tbit\", period = \"2ns\" } }",
    "{ steps = [ { at = \"0s\", rate = \"1Tbit\" } ] }",
    "{ limit = \"1000000000000pkt\" }",
    "{ normal = { mean = \"100000s\", sd = \"100000s\" } }",
    "{ every = 4294967295, max_hold = \"86400s\" }",
    "{ interval = \"1ns\" }",
];

/// Lines that can be added anywhere.
const LINES: &[&str] = &[
    "sample_interval = \"1ns\"",
    "duration = \"86400s\"",
    "count = 1000",
    "stagger = \"86400s\"",
    "chunk_size = \"1B\"\nchunk_every = \"1ns\"",
    "app_rate = \"1Tbit\"",
    "[sweep]\n\"flow.algorithm\" = [\"bbr\", \"cubic\", \"reno\"]\n\"seed\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
    "[sweep]\n\"link.forward.rate\" = [\"1Tbit\", \"10mbit\"]",
    "[sweep]\n\"flow.mss\" = [500, 9000, 20000]",
    "[[flow]]\nalgorithm = \"reno\"\ncount = 1000",
    "[link.forward.ack_aggregation]\nevery = 1000000\nmax_hold = \"1000s\"",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the value on line `line` with `VALUES[v]`.
    Value { line: usize, v: usize },
    /// Drop line `line`.
    Drop { line: usize },
    /// Insert `LINES[l]` before line `line`.
    Insert { line: usize, l: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (0..40usize, 0..VALUES.len()).prop_map(|(line, v)| Mutation::Value { line, v }),
        1 => (0..40usize).prop_map(|line| Mutation::Drop { line }),
        2 => (0..40usize, 0..LINES.len()).prop_map(|(line, l)| Mutation::Insert { line, l }),
    ]
}

fn apply(text: &str, ms: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in ms {
        let n = lines.len().max(1);
        match *m {
            Mutation::Value { line, v } => {
                let i = line % n;
                if let Some(eq) = lines[i].find(" = ") {
                    lines[i] = format!("{} = {}", &lines[i][..eq], VALUES[v]);
                }
            }
            Mutation::Drop { line } => {
                if !lines.is_empty() {
                    lines.remove(line % n);
                }
            }
            Mutation::Insert { line, l } => {
                let i = line % (lines.len() + 1);
                lines.insert(i, LINES[l].to_string());
            }
        }
    }
    lines.join("\n") + "\n"
}

/// Runs `bbrlab sim` on `path` under the resource limits; returns the
/// exit code (None: killed by a signal) and stderr.
fn sim_bounded(path: &Path, out: &Path) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bbrlab"));
    cmd.args(["sim", path.to_str().unwrap(), "--out"])
        .arg(out)
        .args(["--quiet", "--no-plots", "--jobs", "1"])
        .env("BBRLAB_LIMIT_SCALE", "0.001")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe setrlimit calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let set = |res, v: u64| {
                let l = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                libc::setrlimit(res, &l);
            };
            set(libc::RLIMIT_CPU, 120); // seconds of CPU
            set(libc::RLIMIT_AS, 2 << 30); // 2 GiB of address space
            set(libc::RLIMIT_FSIZE, 256 << 20); // no file over 256 MiB
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn bbrlab");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        // The hang detector: far above any bounded run, even on a busy
        // machine (CPU time is capped at 120 s above).
        if t0.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = reader.join().unwrap();
    (status.and_then(|s| s.code()), err)
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p).map_or(0, |rd| {
        rd.filter_map(|e| e.ok())
            .map(|e| {
                let m = e.metadata().unwrap();
                if m.is_dir() {
                    dir_bytes(&e.path())
                } else {
                    m.len()
                }
            })
            .sum()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_scenario_makes_sim_hang_exhaust_memory_or_fill_the_disk(
        ms in proptest::collection::vec(mutation(), 1..4)
    ) {
        let text = apply(BASE, &ms);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, &text).unwrap();
        let out = dir.path().join("out");
        let (code, err) = sim_bounded(&path, &out);
        prop_assert!(code.is_some(), "killed (time, memory or file size limit) on:\n{text}\n{err}");
        prop_assert!(!err.contains("panicked"), "panic on:\n{text}\n{err}");
        if code != Some(0) {
            // Every refusal names the file, line and column.
            let loc = err
                .strip_prefix("error: ")
                .and_then(|e| e.strip_prefix(path.to_str().unwrap()))
                .and_then(|e| e.strip_prefix(':'))
                .map(|e| e.split(':').take(2).all(|n| n.parse::<usize>().is_ok()));
            prop_assert_eq!(loc, Some(true), "no file:line:col in the error for:\n{}\n{}", text, err);
        }
        // Scaled limits: 5000 rows per run, 20000 per sweep, ~100 B each.
        prop_assert!(dir_bytes(&out) < 64 << 20, "{} bytes written for:\n{}", dir_bytes(&out), text);
    }
}

/// The issue's own examples finish quickly under the same bounds, with
/// the real limits (not scaled).
#[test]
fn the_issues_examples_are_refused_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        BASE.replace("rate = \"10mbit\"\n", ""),
        BASE.replace("\"10mbit\"", "\"99999999999999999999999mbit\""),
        BASE.replace("\"10ms\"", "\"1ns\""),
    ];
    for (i, text) in cases.iter().enumerate() {
        let path = dir.path().join(format!("s{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_bbrlab"));
        let o = cmd
            .args(["sim", path.to_str().unwrap(), "--quiet", "--out"])
            .arg(dir.path().join(format!("out{i}")))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text}\n{err}");
        assert!(
            err.contains("limit") || err.contains("missing") || err.contains("1 Tbit/s"),
            "{err}"
        );
    }
}
