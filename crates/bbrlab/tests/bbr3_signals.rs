//! `bbrlab bbr3-signals` end to end on a tiny matrix: two of validate's
//! paths, two seeds, 4 s runs. The files it writes must be complete and
//! consistent (every run, the per-path means and differences computed from
//! them), the figures physically sane for the paths, and bad arguments
//! explained.

use std::path::Path;
use std::process::{Command, Output};

fn bbrlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(args)
        .output()
        .expect("run bbrlab")
}

fn rows(path: &Path) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    let out: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert!(out.iter().all(|x| x.len() == h.len()));
    out
}

fn num(r: &csv::StringRecord, i: usize) -> f64 {
    r[i].parse()
        .unwrap_or_else(|_| panic!("column {i}: `{}`", &r[i]))
}

#[test]
fn a_tiny_matrix_writes_both_modes_per_seed_and_their_differences() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "bbr3-signals",
        "--out",
        out.to_str().unwrap(),
        "--only",
        "10M-40ms-1bdp,20M-40ms-1bdp-1%loss",
        "--seeds",
        "2",
        "--seconds",
        "4",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");

    // Per run: 2 paths × 2 seeds × 2 modes.
    let runs = rows(&out.join("approximation-runs.csv"));
    assert_eq!(runs.len(), 8);
    for (path, rate, rtt) in [
        ("10M-40ms-1bdp", 10.0, 40.0),
        ("20M-40ms-1bdp-1%loss", 20.0, 40.0),
    ] {
        for seed in ["1", "2"] {
            for mode in ["exact", "stock-kernel"] {
                let r = runs
                    .iter()
                    .find(|r| &r[0] == path && &r[1] == seed && &r[2] == mode)
                    .unwrap_or_else(|| panic!("no run {path} {seed} {mode}"));
                let g = num(r, 3);
                // Payload goodput: below the link rate, and a bulk flow
                // uses most of it even with 1 % loss over 4 s.
                assert!(g > 0.5 * rate && g < rate, "{path} {mode}: {g}");
                // Median srtt: at least the propagation RTT, at most that
                // plus a 1-BDP queue's delay.
                let s = num(r, 4);
                assert!(s >= rtt && s <= 2.0 * rtt + 1.0, "{path} {mode}: {s}");
                if path.contains("loss") {
                    assert!(num(r, 5) > 0.0, "1 % random loss costs retransmissions");
                }
            }
        }
    }

    // Per path: the means of those runs and stock − exact.
    let paths = rows(&out.join("approximation.csv"));
    assert_eq!(paths.len(), 2);
    for p in &paths {
        let of = |mode: &str, col: usize| -> f64 {
            let v: Vec<f64> = runs
                .iter()
                .filter(|r| r[0] == p[0] && &r[2] == mode)
                .map(|r| num(r, col))
                .collect();
            assert_eq!(v.len(), 2);
            v.iter().sum::<f64>() / 2.0
        };
        assert_eq!((&p[1], &p[2]), ("2", "4"));
        let (ge, gs) = (of("exact", 3), of("stock-kernel", 3));
        assert!((num(p, 3) - ge).abs() < 0.002 && (num(p, 4) - gs).abs() < 0.002);
        assert!((num(p, 5) - (gs - ge) / ge * 100.0).abs() < 0.01, "{p:?}");
        let (re, rs) = (of("exact", 5), of("stock-kernel", 5));
        assert_eq!((num(p, 9), num(p, 10)), (re, rs));
        assert!((num(p, 11) - (rs - re)).abs() < 0.06);
    }

    let md = std::fs::read_to_string(out.join("approximation.md")).unwrap();
    assert!(md.contains("`bbrlab bbr3-signals --out"), "{md}");
    assert!(md.contains("--only 10M-40ms-1bdp,20M-40ms-1bdp-1%loss --seeds 2 --seconds 4"));
    assert!(md.contains("| 10M-40ms-1bdp |") && md.contains("| 20M-40ms-1bdp-1%loss |"));
    // The table is also what the command prints.
    assert!(String::from_utf8_lossy(&o.stdout).contains(md.trim_end()));
}

#[test]
fn bad_arguments_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = bbrlab(&[
        "bbr3-signals",
        "--out",
        out.to_str().unwrap(),
        "--only",
        "nowhere",
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("`nowhere`") && e.contains("10M-40ms-1bdp"),
        "{e}"
    );
    let o = bbrlab(&[
        "bbr3-signals",
        "--out",
        out.to_str().unwrap(),
        "--seeds",
        "0",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seeds"));
}
