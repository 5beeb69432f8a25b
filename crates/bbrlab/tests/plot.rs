//! `bbrlab plot` on a run directory and on a sweep's output: the figures
//! it writes, and the errors for a directory it cannot draw.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

/// Two flows (the second from 1 s) over a sweep of two algorithms.
const SWEEP: &str = r#"
name = "plot-test"
duration = "3s"
[link.forward]
rate = "10mbit"
delay = "10ms"
queue = { limit = "60pkt" }
[link.reverse]
delay = "10ms"
[[flow]]
algorithm = "bbr"
[[flow]]
algorithm = "bbr"
start = "1s"
[sweep]
"flow.algorithm" = ["bbr", "cubic"]
"#;

fn non_empty(p: &Path) {
    let len = fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len();
    assert!(len > 1000, "{} has {len} bytes", p.display());
}

fn sweep(dir: &Path) -> std::path::PathBuf {
    let sc = dir.join("s.toml");
    fs::write(&sc, SWEEP).unwrap();
    let out = dir.join("out");
    let o = bbrlab(&[
        "sim",
        sc.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--no-plots",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Jain over 1 s windows"), "{stdout}");
    assert!(stdout.contains("forward queue p50/p90/p99/max"), "{stdout}");
    out
}

#[test]
fn a_sweep_gets_a_pantheon_plot_with_a_point_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(dir.path());
    assert!(
        !out.join("pantheon.svg").exists(),
        "--no-plots draws nothing"
    );
    let o = bbrlab(&["plot", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pantheon.svg"));
    non_empty(&out.join("pantheon.svg"));
    non_empty(&out.join("pantheon.png"));
    let svg = fs::read_to_string(out.join("pantheon.svg")).unwrap();
    // A legend entry per algorithm and one dot per run (plus the legend's).
    assert!(
        svg.contains("\nbbr\n") && svg.contains("\ncubic\n"),
        "labels"
    );
    assert_eq!(svg.matches("<circle").count(), 2 + 2, "{svg}");
}

#[test]
fn a_run_gets_fairness_queue_and_fct_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = sweep(dir.path());
    let run = out.join("run-0001");
    // The FCT file another part of bbrlab writes, by its contract.
    fs::write(
        run.join("fct.csv"),
        "flow,algorithm,size_bytes,start_s,end_s,fct_s,ideal_s,slowdown\n\
         web#0,cubic,10000,0.5,0.56,0.06,0.03,2\n\
         web#1,cubic,100000,0.7,0.9,0.2,0.1,2\n\
         web#2,bbr,1000000,1.0,2.1,1.1,0.82,1.341463\n",
    )
    .unwrap();
    let o = bbrlab(&["plot", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for stem in [
        "throughput",
        "fairness",
        "queue_cdf",
        "fct_cdf",
        "slowdown_cdf",
    ] {
        non_empty(&run.join(format!("{stem}.svg")));
        non_empty(&run.join(format!("{stem}.png")));
    }
    let fct = fs::read_to_string(run.join("fct_cdf.svg")).unwrap();
    assert!(fct.contains("cubic (2 flows)") && fct.contains("bbr (1 flows)"));
    // A broken fct.csv is an error naming the file and what is missing.
    fs::write(run.join("fct.csv"), "flow,fct_s\nx,1\n").unwrap();
    let o = bbrlab(&["plot", run.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fct.csv") && err.contains("missing column"),
        "{err}"
    );
}

/// A run without samples (`sample_interval = "0s"`: flows.csv holds its
/// header only) is refused: it used to get empty figures and exit 0.
#[test]
fn a_run_without_samples_has_nothing_to_draw() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run-0000");
    fs::create_dir(&run).unwrap();
    fs::write(run.join("flows.csv"), "time_s,flow,delivered_bytes\n").unwrap();
    let o = bbrlab(&["plot", run.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("no samples"), "{err}");
    assert!(!run.join("throughput.svg").exists());
}

#[test]
fn a_directory_that_is_no_run_or_sweep_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let o = bbrlab(&["plot", dir.path().to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("neither a run directory (no flows.csv) nor a sweep's output"),
        "{err}"
    );
    fs::write(dir.path().join("summary.json"), "{\"x\": 1}").unwrap();
    let o = bbrlab(&["plot", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("no `runs` list"),
        "{err}"
    );
    let o = bbrlab(&[
        "plot",
        dir.path().to_str().unwrap(),
        "--jain-threshold",
        "1.5",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("(0, 1]"), "{err}");
}

/// A `--jain-window` longer than the 3 s run, or than the 2 s after the
/// second flow joined, holds no window of both flows: fairness.svg was left
/// out and plot exited 0. It is refused with what would fit; a window that
/// fits draws the figure.
#[test]
fn a_jain_window_longer_than_the_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = sweep(dir.path()).join("run-0001");
    for w in ["5", "2.5"] {
        let o = bbrlab(&["plot", run.to_str().unwrap(), "--jain-window", w]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success()
                && err.contains(&format!("--jain-window {w} s is too long for the run"))
                && err.contains("run-0001")
                && err.contains("last flow joined at 1 s")
                && err.contains("give at most 1.99"),
            "{w}: {err}"
        );
        assert!(!run.join("fairness.svg").exists());
    }
    let o = bbrlab(&["plot", run.to_str().unwrap(), "--jain-window", "1.5"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    non_empty(&run.join("fairness.svg"));
}
