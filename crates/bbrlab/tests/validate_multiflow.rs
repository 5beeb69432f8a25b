//! `bbrlab validate --multiflow --quick` for real (root: kernel TCP flows
//! share one `bbrlab emu` bottleneck). This holds the machinery, not the
//! simulator's fidelity: every quick path runs, each side's flows have
//! shares that sum to 1 and a total goodput near the link's, the queueing
//! delay is measured on both sides, every verdict field is there and the
//! table is written. Whether the simulator is within the bounds is what
//! the command reports (issue 31's work in progress), so it is not
//! asserted here. `--resimulate` then judges a new simulation against the
//! same kernel runs.

mod common;

use serde_json::Value;
use std::process::Command;

#[test]
#[ignore = "needs root: scripts/test.sh runs it as root"]
fn validate_multiflow_quick_runs_every_path_and_writes_shares_and_verdicts() {
    common::require_root();
    let _guard = common::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().as_os_str();
    common::bbrlab([
        "validate".as_ref(),
        "--multiflow".as_ref(),
        "--quick".as_ref(),
        "--out".as_ref(),
        d,
    ]);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("validate.json")).unwrap())
            .unwrap();
    let mf = &doc["multiflow"];
    assert_eq!(mf["seconds_per_run"], 20);
    // The simulated ACKs carry the measured host noise by default.
    assert_eq!(
        mf["simulator_host_noise"],
        serde_json::json!({ "mean_us": 50, "sd_us": 20 })
    );
    assert!(mf["bounds"]["share"]["reason"].as_str().is_some(), "{mf}");
    assert!(mf["all_within"].is_boolean());
    let paths = mf["paths"].as_array().unwrap();
    let names: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "bbr-vs-cubic-2bdp",
            "bbr-rtt-10-50ms-1bdp",
            "cubic-vs-cubic-2bdp"
        ]
    );
    for p in paths {
        let name = p["path"].as_str().unwrap();
        assert!(p["failed"].is_null(), "{name}: {}", p["failed"]);
        let n = p["flows"].as_array().unwrap().len();
        for side in ["kernel", "simulator"] {
            let s = &p[side];
            let flows = s["flows"].as_array().unwrap();
            assert_eq!(flows.len(), n, "{name} {side}");
            let shares: Vec<f64> = flows.iter().map(|f| f["share"].as_f64().unwrap()).collect();
            let sum: f64 = shares.iter().sum();
            assert!((sum - 1.0).abs() < 1e-6, "{name} {side}: {shares:?}");
            // Every flow moved data.
            assert!(shares.iter().all(|&x| x > 0.0), "{name} {side}: {shares:?}");
            // 20 Mbit/s of which 1448 of 1500 bytes are payload: the flows
            // together fill most of it on both sides.
            let total = s["total_goodput_mbps"].as_f64().unwrap();
            assert!(total > 15.0 && total < 19.8, "{name} {side}: {total}");
            // A drop-tail buffer of 1–2 BDP holds a queue: some ms of it.
            let q = &s["queue_delay_ms"];
            let (p10, p50, p90) = (
                q["p10"].as_f64().unwrap(),
                q["p50"].as_f64().unwrap(),
                q["p90"].as_f64().unwrap(),
            );
            assert!(p10 <= p50 && p50 <= p90 && p90 > 1.0, "{name} {side}: {q}");
            // Shares in each 5 s window of the 20 s runs: four, each
            // window's adding up to 1 over the flows (these paths have
            // two, so the simulator's medians keep the sum too).
            assert_eq!(s["window_s"].as_f64(), Some(5.0), "{name} {side}");
            let by_window: Vec<Vec<f64>> = flows
                .iter()
                .map(|f| {
                    f["share_by_window"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_f64().unwrap())
                        .collect()
                })
                .collect();
            for j in 0..4 {
                let w: f64 = by_window.iter().map(|f| f[j]).sum();
                assert!(
                    (w - 1.0).abs() < 0.01,
                    "{name} {side} window {j}: {by_window:?}"
                );
            }
            assert!(
                by_window.iter().all(|f| f.len() == 4),
                "{name} {side}: {by_window:?}"
            );
        }
        let v = &p["simulator_vs_kernel"];
        let per_flow = v["flows"].as_array().unwrap();
        assert_eq!(per_flow.len(), n, "{name}: {v}");
        for f in per_flow {
            assert!(f["share_diff"].as_f64().is_some(), "{name}: {v}");
            assert!(f["share_within"].is_boolean(), "{name}: {v}");
        }
        for key in ["shares_within", "queue_delay_within", "within"] {
            assert!(v[key].is_boolean(), "{name}: {key} in {v}");
        }
        assert!(
            v["queue_delay_p50_diff_ms"].as_f64().is_some(),
            "{name}: {v}"
        );
        // The simulator's figure is the median over its seed draws, its
        // spread beside it, every flow started at its kernel flow's SYN
        // (the emulator logs each packet's ports), the earliest at 0.
        assert_eq!(p["simulator"]["draws"].as_f64(), Some(10.0), "{name}");
        let st = &p["simulator_starts_by_rep"][0];
        assert_eq!(st["from"], "kernel SYNs", "{name}: {st}");
        let us: Vec<u64> = st["flow_starts_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!((us.len(), us.iter().min()), (n, Some(&0)), "{name}: {st}");
        // The kernel's flows of these paths start together: their SYNs
        // within a second of each other however busy the machine (here
        // they come within 0.35 ms).
        assert!(us.iter().all(|&t| t < 1_000_000), "{name}: {st}");
        for f in p["simulator"]["flows"].as_array().unwrap() {
            let (lo, mid, hi) = (
                f["share_min"].as_f64().unwrap(),
                f["share"].as_f64().unwrap(),
                f["share_max"].as_f64().unwrap(),
            );
            assert!(lo - 1e-3 <= mid && mid <= hi + 1e-3, "{name}: {f}");
            assert_eq!(f["share_by_draw"].as_array().unwrap().len(), 10);
        }
        // The RTT-unfairness flows really had their extra delay: the
        // +50 ms flow's srtt is about 40 ms above the +10 ms flow's.
        if name == "bbr-rtt-10-50ms-1bdp" {
            let srtt = |k: usize| p["kernel"]["flows"][k]["srtt_median_ms"].as_f64().unwrap();
            let gap = srtt(1) - srtt(0);
            assert!((30.0..50.0).contains(&gap), "kernel srtt gap {gap}");
        }
    }
    let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
    assert!(md.contains("| bbr-vs-cubic-2bdp | bbr, cubic |"), "{md}");
    assert!(
        md.contains("| bbr-rtt-10-50ms-1bdp | bbr +10ms, bbr +50ms |"),
        "{md}"
    );
    // The table rebuilt from the JSON is the one the run wrote.
    let table = Command::new(common::BIN)
        .args(["validate", "--table"])
        .arg(dir.path().join("validate.json"))
        .output()
        .unwrap();
    assert!(table.status.success());
    assert_eq!(String::from_utf8_lossy(&table.stdout).trim(), md.trim());
    // --resimulate runs the simulator again against the same kernel runs:
    // the kernel's side is unchanged, the simulator's has the new draws.
    common::bbrlab(
        [
            "validate",
            "--multiflow",
            "--resimulate",
            "--sim-draws",
            "3",
            "--sim-ack",
            "linux",
            "--sim-host-noise",
            "off",
            "--out",
        ]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([d]),
    );
    let redo: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("validate.json")).unwrap())
            .unwrap();
    assert_eq!(redo["multiflow"]["simulator_ack"], "linux");
    assert!(redo["multiflow"]["simulator_host_noise"].is_null());
    for (a, b) in paths
        .iter()
        .zip(redo["multiflow"]["paths"].as_array().unwrap())
    {
        assert_eq!(a["path"], b["path"]);
        assert_eq!(a["kernel"], b["kernel"], "{}", a["path"]);
        assert_eq!(b["simulator"]["draws"].as_f64(), Some(3.0));
        assert_eq!(a["simulator_starts_by_rep"], b["simulator_starts_by_rep"]);
    }
}

#[test]
fn an_unknown_competing_flow_path_is_refused_with_the_list() {
    // No root needed: the names are checked first.
    let out = Command::new(common::BIN)
        .args(["validate", "--multiflow", "--only", "bbr-vs-reno", "--out"])
        .arg(std::env::temp_dir().join("bbrlab-mf-unknown"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("`bbr-vs-reno`") && e.contains("bbr-vs-cubic-0.5bdp"),
        "{e}"
    );
}

/// Why one simulator run cannot stand for a competing-flow path, and
/// `--multiflow` starts the simulated flows at the kernel's SYN times
/// (docs/src/validation.md): on the RTT-unfairness path in a 1 BDP buffer,
/// moving the long flow's start by up to 50 ms or the short flow's extra
/// RTT by up to 1 ms splits the link anywhere from about even to 0.88 for
/// the short flow, because which flow leaves STARTUP first decides the
/// run. One deterministic run is one draw from that. The figures the book
/// quotes (55 runs, 0.52–0.84, median 0.78; 0.54–0.86, median 0.80,
/// before the TCP sender pushed; 0.51–0.88 before TCP's repairs left in
/// bursts of their own, 0.30–0.87 before Linux's receiver offered its
/// window) come from this sweep; if a
/// change to the simulator makes the outcome stable, this fails and the
/// book's account is stale.
#[test]
fn rtt_unfairness_in_a_shallow_buffer_turns_on_the_start_phase() {
    let sc = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validate/rtt-unfairness-sensitivity.toml");
    let dir = tempfile::tempdir().unwrap();
    common::bbrlab([
        "sim".as_ref(),
        sc.as_os_str(),
        "--out".as_ref(),
        dir.path().as_os_str(),
        "--quiet".as_ref(),
        "--no-plots".as_ref(),
    ]);
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let mut shares: Vec<f64> = s["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let b = |k: usize| r["flows"][k]["delivered_bytes"].as_f64().unwrap();
            b(0) / (b(0) + b(1))
        })
        .collect();
    shares.sort_by(f64::total_cmp);
    assert_eq!(shares.len(), 55);
    let (lo, hi, mid) = (shares[0], shares[54], shares[27]);
    // Both outcomes occur: the short flow near an even split (the
    // kernel's 0.52–0.57) in some runs (9 of 55 on 2026-12-02, since
    // the TCP sender pushes) and well above it in at least a fifth
    // (35).
    let near_even = shares.iter().filter(|&&x| x <= 0.60).count();
    let skewed = shares.iter().filter(|&&x| x >= 0.70).count();
    assert!(near_even >= 4 && skewed >= 11, "{shares:?}");
    assert!(hi - lo > 0.25, "{lo}..{hi}");
    // The book's figures, within 0.02 (a rule change that moves them a
    // little leaves the account true; more, and it must be rewritten).
    assert!(
        (lo - 0.52).abs() <= 0.02 && (hi - 0.84).abs() <= 0.02,
        "{lo}..{hi}"
    );
    assert!((mid - 0.78).abs() <= 0.02, "median {mid}");
}
