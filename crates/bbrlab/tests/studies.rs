//! The example studies of `scenarios/studies/` (docs/src/studies.md) held
//! against the published shapes they reproduce, each with its tolerance
//! and the reason for it, as the claims are.
//!
//! Each test runs the shipped study file, unchanged, through `bbrlab sim`
//! (the simulator runs each whole sweep in well under a second even in the
//! test profile), so the numbers it holds are the ones the write-up quotes
//! from `scripts/studies.sh`.

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs `scenarios/studies/<name>.toml`; returns its output directory
/// (kept alive by the returned temporary directory) and `summary.json`'s
/// `runs`.
fn run_study(name: &str) -> (tempfile::TempDir, Vec<Value>) {
    let sc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/studies")
        .join(format!("{name}.toml"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .arg("sim")
        .arg(&sc)
        .arg("--out")
        .arg(&out)
        .args(["--quiet", "--no-plots"])
        .output()
        .expect("run bbrlab");
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let runs = s["runs"].as_array().unwrap().clone();
    (dir, runs)
}

/// Goodput of the flow named `flow` in `run`, Mbit/s.
fn goodput(run: &Value, flow: &str) -> f64 {
    run["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == flow)
        .unwrap_or_else(|| panic!("no flow {flow} in {run}"))["goodput_bps"]
        .as_f64()
        .unwrap()
        / 1e6
}

fn param<'a>(run: &'a Value, key: &str) -> &'a str {
    run["params"][key].as_str().unwrap_or("")
}

/// Study 1. Kfoury et al. (2021) and Gomez et al. (2024): under a
/// drop-tail FIFO BBR's flows split unfairly by RTT (BBR sizes its inflight
/// to about 2 × bw × min_rtt, so the long-RTT flow keeps more of the shared
/// queue and gets the larger share; CUBIC favours the short one); FQ-CoDel
/// removes the unfairness for every algorithm.
#[test]
fn rtt_unfairness_goes_away_under_fq_codel() {
    let (_dir, runs) = run_study("rtt-unfairness");
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let alg = param(run, "flow.algorithm");
        let jain = run["jain_fairness"].as_f64().unwrap();
        let (short, long) = (goodput(run, "rtt10"), goodput(run, "rtt100"));
        if param(run, "link.forward.queue").contains("fq_codel") {
            // FQ-CoDel's DRR gives each backlogged flow an equal byte share
            // whatever its RTT: Jain 1 in the limit. 0.95 leaves room for
            // the 100 ms flow's slower start and for PROBE_RTT dips (the
            // study: 1.000 bbr, 0.996 bbr3, 0.991 cubic).
            assert!(
                jain >= 0.95,
                "{alg} fq_codel: Jain {jain} ({short} vs {long} Mbit/s)"
            );
        } else if alg == "cubic" {
            // CUBIC under drop-tail favours the short RTT (the study:
            // 17.3 vs 2.6 Mbit/s): its cubic growth is RTT-independent,
            // but its Reno-friendly region, slow start and recovery
            // advance per round trip (Ha et al., 2008: fairer than Reno,
            // not equal). 1.5x is the direction with room.
            assert!(
                short > 1.5 * long,
                "cubic drop-tail: {short} vs {long} Mbit/s"
            );
        } else {
            // BBR under drop-tail: the 100 ms flow takes most of the link
            // (the study: 17.7 and 17.4 of 20 Mbit/s). Long beats short
            // by 3x and Jain below 0.8 hold the published direction with
            // room for model detail.
            assert!(
                long > 3.0 * short,
                "{alg} drop-tail: {short} vs {long} Mbit/s"
            );
            assert!(jain < 0.8, "{alg} drop-tail: Jain {jain}");
        }
    }
}

/// Study 2. Hock et al. (2017), Cao et al. (2019) and Ware et al. (2019):
/// against CUBIC in a drop-tail FIFO, BBR takes most of the link in a
/// shallow buffer and loses it as the buffer deepens (CUBIC fills the
/// buffer, BBR's inflight cap of about 2 BDPs holds a shrinking part of
/// it); fair queueing gives each its half whatever the depth.
#[test]
fn bbr_share_falls_with_buffer_depth_under_drop_tail_but_not_fq_codel() {
    let (_dir, runs) = run_study("buffer-depth");
    assert_eq!(runs.len(), 12);
    let share: Vec<f64> = runs
        .iter()
        .map(|r| {
            let (b, c) = (goodput(r, "bbr"), goodput(r, "cubic"));
            b / (b + c)
        })
        .collect();
    // Runs 0-5: drop-tail, 0.25 to 8 BDPs; 6-11: FQ-CoDel at the same limits.
    // 0.25 BDP drop-tail: 0.92 in the study; above 0.8 is "BBR dominates".
    assert!(share[0] > 0.8, "shallow drop-tail: BBR share {}", share[0]);
    // 8 BDPs: 0.11; below 0.3 is "CUBIC dominates".
    assert!(share[5] < 0.3, "deep drop-tail: BBR share {}", share[5]);
    // The share falls as the buffer deepens from 1 BDP on (a small rise
    // would be noise, hence 0.02 of slack between neighbours).
    for i in 2..5 {
        assert!(share[i + 1] < share[i] + 0.02, "drop-tail shares {share:?}");
    }
    // FQ-CoDel: 0.52 at every depth in the study; 0.45 to 0.55 is an equal
    // split within the noise of who is in PROBE_RTT or recovery when.
    for (i, s) in share[6..].iter().enumerate() {
        assert!(
            (0.45..=0.55).contains(s),
            "fq_codel point {i}: BBR share {s}"
        );
    }
}

/// Study 3. Hock et al. (2017): several BBR flows together keep the
/// bottleneck queue near full (each caps its inflight at 2 BDPs of its own
/// estimate, and the others' queue inflates the estimate), so short flows
/// beside bulk BBR wait longer than beside bulk CUBIC, whose sawtooth
/// drains the queue after each loss.
#[test]
fn short_flows_wait_longer_beside_bulk_bbr() {
    let (_dir, runs) = run_study("short-flows");
    assert_eq!(runs.len(), 2);
    let small_p50 = |r: &Value| {
        let fct = &r["fct"];
        // Flows arrive until 18 s of a 20 s run with heavy-tailed sizes, so
        // a few large ones that arrive late may still be running at the end
        // (beside bulk bbr, since CUBIC's window follows PRR and its use:
        // 400 of 403, the three unfinished of 207, 151 and 159 kB, started after
        // 14 s); at least 99 % finish.
        let started = fct["flows_started"].as_u64().unwrap();
        let completed = fct["flows_completed"].as_u64().unwrap();
        assert!(completed * 100 >= started * 99, "{fct}");
        fct["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["label"] == "<=10KB")
            .unwrap()["fct_p50_s"]
            .as_f64()
            .unwrap()
    };
    let (bbr, cubic) = (small_p50(&runs[0]), small_p50(&runs[1]));
    let queue_p50 = runs[0]["queue"]["delay_ms_p50"].as_f64().unwrap();
    // The 167-packet buffer is 40 ms at 50 Mbit/s; two bulk BBR flows keep
    // it at 39.5 ms median in the study. Above 30 ms is "near full".
    assert!(queue_p50 > 30.0, "queue p50 beside bbr {queue_p50} ms");
    // Small flows' median FCT: 360 ms beside bbr, 57 ms beside cubic in
    // the study; 2x is the direction with a wide margin.
    assert!(
        bbr > 2.0 * cubic,
        "<=10KB FCT p50: bbr {bbr} s, cubic {cubic} s"
    );
}

/// Study 4. Per-flow fair queueing (round robin) at every hop gives the
/// max-min fair allocation (Hahne, 1991): long 5, a 5, b 7.5, c 7.5
/// Mbit/s here (worked out in docs/src/studies.md). Drop-tail beats the
/// long flow down below its max-min share.
#[test]
fn parking_lot_reaches_max_min_with_fq_codel_at_both_hops() {
    let (_dir, runs) = run_study("parking-lot");
    assert_eq!(runs.len(), 12);
    let max_min = [("long", 5.0), ("a", 5.0), ("b", 7.5), ("c", 7.5)];
    for run in &runs {
        let alg = param(run, "flow.algorithm");
        let fq0 = param(run, "link.forward.queue").contains("fq_codel");
        let fq1 = param(run, "link.hops.0.queue").contains("fq_codel");
        if fq0 && fq1 {
            for (flow, share) in max_min {
                let g = goodput(run, flow);
                // Within 6 %: slow start, PROBE_RTT and retransmissions,
                // which goodput excludes. The farthest is `bbr3`'s b, 7.11
                // against 7.5 with Linux's receiver (5.2 % under; 4.9 %
                // with an ACK per packet): its ProbeRTT every 5 s at half
                // a BDP costs it 2.6 % (BBRv3 results, V4), and it
                // retransmits 0.8 % of what it sends; every other flow is
                // within 3.4 % (`bbr3`'s long flow, 4.83).
                assert!(
                    (g - share).abs() <= 0.06 * share,
                    "{alg}: {flow} {g} Mbit/s, max-min {share}"
                );
            }
        } else if !fq0 && !fq1 {
            // Drop-tail at both hops: the long flow (two queues, a longer
            // RTT) gets well under its max-min 5 Mbit/s (1.85 cubic, 2.61
            // bbr, 2.53 bbr3 in the study).
            let g = goodput(run, "long");
            assert!(g < 3.5, "{alg} drop-tail: long {g} Mbit/s");
        }
    }
}

/// The min_rtt column of `flows.csv` at the first sample at or after `t`.
fn min_rtt_at(flows_csv: &str, t: f64) -> f64 {
    let mut lines = flows_csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (ti, mi) = (
        header.iter().position(|c| *c == "time_s").unwrap(),
        header.iter().position(|c| *c == "min_rtt_ms").unwrap(),
    );
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        if cells[ti].parse::<f64>().unwrap() >= t - 1e-9 {
            return cells[mi].parse().unwrap();
        }
    }
    panic!("no sample at {t} s");
}

/// Study 5. BBR's min_rtt is a windowed minimum over 10 s (Cardwell et
/// al. 2016; draft-ietf-ccwg-bbr's MinRTTFilterLen; bbr3 keeps it, its
/// 5 s PROBE_RTT refreshing only the shorter probe_rtt_min filter). After
/// the round trip rises from 40 to 80 ms at 11 s, min_rtt keeps the old
/// value until 10 s after its last refresh: stale for up to 10 s.
#[test]
fn min_rtt_stays_stale_for_the_filter_window_after_a_route_change() {
    let (dir, runs) = run_study("route-change");
    assert_eq!(runs.len(), 2);
    for (i, alg) in ["bbr", "bbr3"].into_iter().enumerate() {
        assert_eq!(param(&runs[i], "flow.algorithm"), alg);
        let csv = fs::read_to_string(dir.path().join(format!("out/run-000{i}/flows.csv"))).unwrap();
        // 41.2 ms before the change (40 ms propagation + one packet's
        // 1.2 ms serialisation), 81.2 ms after. The last refresh before
        // the change was at about 10.2 s (bbr's PROBE_RTT) or 10.3 s
        // (bbr3's), so at 19 s, 8 s after the change, the old value must
        // still hold; 2 ms is one serialisation and a little of slack.
        let stale = min_rtt_at(&csv, 19.0);
        assert!(
            (stale - 41.2).abs() < 2.0,
            "{alg}: min_rtt {stale} ms at 19 s"
        );
        // By 22 s, 11 s after the change, the window has expired.
        let fresh = min_rtt_at(&csv, 22.0);
        assert!(
            (fresh - 81.2).abs() < 2.0,
            "{alg}: min_rtt {fresh} ms at 22 s"
        );
    }
}

/// Study 6. RFC 9332's aim: an L4S (ECT(1)) flow in DualPI2 sees the L4S
/// queue's shallow delay (marked from a 1 ms sojourn) while a classic flow
/// sees the Classic queue's PI2 target (15 ms). There is no published
/// figure for BBRv3 here yet (picoquic issue 2029 asks): the test holds
/// the queue separation the RFC promises, for both bbr3 profiles.
#[test]
fn dualpi2_keeps_the_ect1_bbr3_flow_in_the_shallow_queue() {
    let (_dir, runs) = run_study("dualpi2-ecn");
    assert_eq!(runs.len(), 4);
    let field = |run: &Value, name: &str, key: &str| {
        run["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap()[key]
            .as_f64()
            .unwrap()
    };
    for run in runs.iter().filter(|r| param(r, "flow.0.ecn") == "ect1") {
        let profile = param(run, "flow.0.bbr3.profile");
        // Base RTT 4 ms. The L4S flow's p95: 5.5 ms (draft) and 8.7 ms
        // (linux-v3) in the study. Under 10 ms is the shallow queue: no
        // more than the 1 ms threshold plus a few milliseconds of
        // serialisation and Classic packets served between.
        let l4s = field(run, "bbr3", "rtt_p95_ms");
        assert!(l4s < 10.0, "{profile}: ECT(1) bbr3 RTT p95 {l4s} ms");
        // The classic flow's packets wait in the Classic queue when it
        // has some queued: its p95 (23.3 ms with draft, 50.5 ms with
        // linux-v3) above base + 8 ms, well clear of the L4S one. Not its
        // median: beside linux-v3 CUBIC gets 2.8 of 50 Mbit/s and its
        // median packet finds the Classic queue empty (6.2 ms).
        let classic = field(run, "cubic", "rtt_p95_ms");
        assert!(classic > 12.0, "{profile}: cubic RTT p95 {classic} ms");
        assert!(
            field(run, "bbr3", "ce_packets") > 0.0,
            "{profile}: no CE marks"
        );
    }
}
