//! One test per published claim (C1–C14): runs `bbrlab reproduce --only Cn`
//! at full size and asserts the verdict, that every tolerance check the
//! report lists is consistent with it, and the claim's headline numbers
//! read back from the runs' own summaries (not from the verdict code).
//!
//! The tolerances and their reasons are stated with each assertion and,
//! in full, as each claim's `Tolerance` in `crates/claims/src/claim/`. Claims the model does
//! not reproduce (C11, C12, C13) are asserted as such, with their
//! analysis present in the report: the test pins the honest result rather
//! than loosening a tolerance until it passes.

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

struct Claim {
    outcome: Value,
    /// One summary per run, in run order.
    runs: Vec<Value>,
}

fn reproduce(id: &str) -> Claim {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = Command::new(env!("CARGO_BIN_EXE_bbrlab"))
        .args(["reproduce", "--only", id, "--quiet", "--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .expect("run bbrlab");
    assert!(
        o.status.success(),
        "{id}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let claims: Value =
        serde_json::from_str(&fs::read_to_string(out.join("claims.json")).unwrap()).unwrap();
    let outcome = claims[0].clone();
    assert_eq!(outcome["id"], id);
    let file = outcome["figures"][0]
        .as_str()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let cdir = out.join(&file);
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(cdir.join("summary.json")).unwrap()).unwrap();
    let runs: Vec<Value> = summary["runs"].as_array().unwrap().clone();
    // The report page exists, names the claim, and its figures exist as
    // SVG and PNG.
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains(&format!("id=\"{id}\"")));
    for f in outcome["figures"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        for ext in ["svg", "png"] {
            let p = out.join(format!("{f}.{ext}"));
            assert!(
                fs::metadata(&p).map(|m| m.len() > 1000).unwrap_or(false),
                "{}",
                p.display()
            );
        }
    }
    assert!(Path::new(&cdir.join("run-0000/flows.csv")).exists());
    Claim { outcome, runs }
}

impl Claim {
    fn reproduced(&self) -> bool {
        self.outcome["reproduced"].as_bool().unwrap()
    }
    /// The verdict is "reproduced" exactly when every check holds.
    fn assert_verdict(&self, expect: bool) {
        let checks = self.outcome["checks"].as_array().unwrap();
        assert!(!checks.is_empty());
        let all_ok = checks.iter().all(|c| c["ok"].as_bool().unwrap());
        assert_eq!(self.reproduced(), all_ok);
        assert_eq!(
            self.reproduced(),
            expect,
            "{}: checks {}",
            self.outcome["id"],
            serde_json::to_string_pretty(checks).unwrap()
        );
        if !expect {
            let notes = self.outcome["notes"].as_array().unwrap();
            assert!(
                notes.iter().any(|n| n.as_str().unwrap().len() > 200),
                "a claim not reproduced carries its analysis"
            );
        }
    }
    /// The run whose sweep parameters include every `(key, value)`.
    fn run(&self, want: &[(&str, &str)]) -> &Value {
        self.runs
            .iter()
            .find(|r| {
                want.iter()
                    .all(|(k, v)| param_of(r, k).as_deref() == Some(v))
            })
            .unwrap_or_else(|| panic!("no run with {want:?}"))
    }
}

fn goodput_mbps(run: &Value, flow: usize) -> f64 {
    run["flows"][flow]["goodput_bps"].as_f64().unwrap() / 1e6
}

fn median_ms(run: &Value, flow: usize) -> f64 {
    run["flows"][flow]["rtt_median_ms"].as_f64().unwrap()
}

#[test]
fn c1_bbr_tolerates_random_loss_that_starves_cubic() {
    let c = reproduce("C1");
    c.assert_verdict(true);
    // BBR ≥ 85 % of link × (1 − p) at 1 % and 5 % (PROBE_RTT 2 %,
    // conservation rounds, STARTUP; "near the maximum" is read off a plot).
    for p in ["0.01", "0.05"] {
        let g = goodput_mbps(
            c.run(&[("flow.algorithm", "bbr"), ("link.forward.loss", p)]),
            0,
        );
        let pf: f64 = p.parse().unwrap();
        assert!(g >= 0.85 * 100.0 * (1.0 - pf), "bbr at {p}: {g}");
    }
    // CUBIC near zero at 1 % (< 5 % of the link), and BBR ≥ 10× it there.
    let cubic = goodput_mbps(
        c.run(&[("flow.algorithm", "cubic"), ("link.forward.loss", "0.01")]),
        0,
    );
    assert!(cubic < 5.0, "cubic at 1 %: {cubic}");
}

#[test]
fn c2_bbr_thousands_of_times_cubic_at_10gbit_with_1_percent_loss() {
    let c = reproduce("C2");
    c.assert_verdict(true);
    let b = goodput_mbps(c.run(&[("flow.algorithm", "bbr")]), 0);
    let cu = goodput_mbps(c.run(&[("flow.algorithm", "cubic")]), 0);
    // ±10 % of the published 9150 Mbit/s (netem testbed, buffer unstated);
    // ratio at least 1000 (published 2798).
    assert!((b / 9150.0 - 1.0).abs() <= 0.10, "bbr {b}");
    assert!(b / cu >= 1000.0, "ratio {}", b / cu);
}

#[test]
fn c3_bbr_median_rtt_is_a_fraction_of_cubics_in_a_deep_buffer() {
    let c = reproduce("C3");
    c.assert_verdict(true);
    let b = c.run(&[("flow.algorithm", "bbr")]);
    let cu = c.run(&[("flow.algorithm", "cubic")]);
    // Both fill the link (≥ 95 %; PROBE_RTT costs 2 %).
    assert!(goodput_mbps(b, 0) >= 9.5 && goodput_mbps(cu, 0) >= 9.5);
    // BBR ≤ 1.3 × 43 ms (Linux's quantization budget stays queued); CUBIC
    // within ±20 % of 1.09 s.
    assert!(median_ms(b, 0) <= 43.0 * 1.3, "bbr {}", median_ms(b, 0));
    assert!(
        (median_ms(cu, 0) / 1090.0 - 1.0).abs() <= 0.2,
        "cubic {}",
        median_ms(cu, 0)
    );
}

#[test]
fn c4_bbr_follows_a_bandwidth_step_up_and_down() {
    let c = reproduce("C4");
    c.assert_verdict(true);
    // Goodput over the whole run is between the low and high rates: it
    // followed the step (the 20 Mbit/s third of the run raises the mean
    // above 10 × 0.95).
    let g = goodput_mbps(&c.runs[0], 0);
    assert!(g > 10.0 * 1.2 && g < 20.0, "mean goodput {g}");
}

#[test]
fn c5_startup_finds_the_rate_and_drain_empties_the_queue() {
    let c = reproduce("C5");
    c.assert_verdict(true);
    // CUBIC's median RTT is far above BBR's on the same 3-BDP buffer.
    let b = median_ms(c.run(&[("flow.algorithm", "bbr")]), 0);
    let cu = median_ms(c.run(&[("flow.algorithm", "cubic")]), 0);
    assert!(cu > 2.0 * b, "cubic {cu} vs bbr {b}");
}

#[test]
fn c6_five_bbr_flows_share_fairly() {
    let c = reproduce("C6");
    c.assert_verdict(true);
    // Jain's index over each flow's active time ≥ 0.9 (the staggered
    // starts give early flows a head start this whole-run figure includes).
    let j = c.runs[0]["jain_fairness"].as_f64().unwrap();
    assert!(j >= 0.9, "jain {j}");
}

/// Sweep parameter `key` of a run in summary.json (`params` is an object;
/// numbers such as a seed are written as numbers).
fn param_of(run: &Value, key: &str) -> Option<String> {
    match &run["params"][key] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The runs whose parameters include every `(key, value)`.
fn runs_with<'a>(runs: &'a [Value], want: &[(&str, &str)]) -> Vec<&'a Value> {
    runs.iter()
        .filter(|r| {
            want.iter()
                .all(|(k, v)| param_of(r, k).as_deref() == Some(v))
        })
        .collect()
}

#[test]
fn c7_bbr_stays_flat_while_cubic_grows_linearly_with_the_buffer() {
    let c = reproduce("C7");
    c.assert_verdict(true);
    // Read back from the runs' own summaries (whole-run medians, which the
    // report does not use: it takes the second half). Each is the mean of
    // the 8 flows' medians, in seconds.
    let median_s = |alg: &str, buf: &str| {
        let r = runs_with(
            &c.runs,
            &[("flow.algorithm", alg), ("link.forward.queue.limit", buf)],
        );
        assert_eq!(r.len(), 1, "{alg} at {buf}");
        let r = r[0];
        let f = r["flows"].as_array().unwrap();
        assert_eq!(f.len(), 8);
        f.iter()
            .map(|x| x["rtt_median_ms"].as_f64().unwrap())
            .sum::<f64>()
            / f.len() as f64
            / 1000.0
    };
    // The sweep reaches several MB: 4000 packets of 1500 B = 6 MB.
    let largest = "4000pkt";
    // BBR at the largest buffer ≤ a tenth of CUBIC's (the paper's order
    // of magnitude on a log axis; measured ≈ 0.012 over the whole run).
    let (b, cu) = (median_s("bbr", largest), median_s("cubic", largest));
    assert!(b <= 0.1 * cu, "bbr {b} s vs cubic {cu} s");
    // BBR flat above its 32-packet floor: within 1.25× from 50 to 4000
    // packets (80× the buffer), and within 1.5× of the floor's RTT
    // (32 packets × 93.75 ms + one packet + 40 ms = 3.13 s).
    let bufs = [
        "50pkt", "100pkt", "250pkt", "500pkt", "1000pkt", "2000pkt", "4000pkt",
    ];
    let bbr: Vec<f64> = bufs.iter().map(|x| median_s("bbr", x)).collect();
    let (lo, hi) = bbr
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
    assert!(hi <= 1.25 * lo, "bbr medians {bbr:?}");
    assert!(hi <= 1.5 * 3.13, "bbr medians {bbr:?}");
    // CUBIC grows with every step, and linearly: from 100 to 4000 packets
    // (×40) its median grows at least ×20 (it fills a large buffer to
    // 70–100 %; the whole-run median includes the fill at 4000 packets,
    // so the bound is looser than the report's steady-state check).
    let cubic: Vec<f64> = bufs.iter().map(|x| median_s("cubic", x)).collect();
    assert!(cubic.windows(2).all(|w| w[1] > w[0]), "cubic {cubic:?}");
    assert!(
        median_s("cubic", largest) >= 20.0 * median_s("cubic", "100pkt"),
        "cubic {cubic:?}"
    );
    // Every check the report lists held, including the steady-state one
    // (third and fourth quarters agree within 10 %).
    let checks = c.outcome["checks"].as_array().unwrap();
    assert!(checks.len() >= 6, "{checks:?}");
    assert!(checks
        .iter()
        .any(|x| x["what"].as_str().unwrap().starts_with("steady state")));
}

#[test]
fn c8_long_flow_spends_98_percent_in_probe_bw_and_2_in_probe_rtt() {
    let c = reproduce("C8");
    c.assert_verdict(true);
    let modes = c.runs[0]["flows"][0]["mode_fractions"].as_array().unwrap();
    let frac = |m: &str| {
        modes
            .iter()
            .find(|x| x[0] == m)
            .map_or(0.0, |x| x[1].as_f64().unwrap())
    };
    // PROBE_BW ≥ 95 % (STARTUP+DRAIN ≈ 0.5 s); PROBE_RTT 1.5–3 %
    // (200 ms + one 40 ms round every 10 s = 2.4 %).
    assert!(frac("probe_bw") >= 0.95);
    assert!((0.015..=0.03).contains(&frac("probe_rtt")));
}

#[test]
fn c9_long_term_bandwidth_model_cuts_policer_losses() {
    let c = reproduce("C9");
    c.assert_verdict(true);
    let r = |v: &str| {
        c.run(&[("flow.bbr.lt_bw", v)])["flows"][0]["retransmission_rate"]
            .as_f64()
            .unwrap()
    };
    // At least a 10 % cut (qualitative claim; beyond seed-to-seed spread).
    assert!(
        r("true") <= 0.9 * r("false"),
        "{} vs {}",
        r("true"),
        r("false")
    );
}

#[test]
fn c10_cubic_takes_more_than_its_share_in_deep_buffers() {
    let c = reproduce("C10");
    c.assert_verdict(true);
    let share = |q: &str| {
        let r = c.run(&[("link.forward.queue.limit", q)]);
        let (b, cu) = (goodput_mbps(r, 0), goodput_mbps(r, 1));
        b / (b + cu)
    };
    // Fair (shares 0.35–0.65) at 2 BDP; BBR below 0.4 at 8 BDP.
    assert!(
        (0.35..=0.65).contains(&share("333pkt")),
        "{}",
        share("333pkt")
    );
    assert!(share("1333pkt") < 0.4, "{}", share("1333pkt"));
}

/// Mean of flow 0's `key` over the runs with `want` (one per seed).
fn mean_over_seeds(runs: &[Value], want: &[(&str, &str)], key: &str) -> (f64, usize) {
    let v: Vec<f64> = runs_with(runs, want)
        .iter()
        .filter_map(|r| r["flows"][0][key].as_f64())
        .collect();
    (v.iter().sum::<f64>() / v.len().max(1) as f64, v.len())
}

#[test]
fn c11_on_quic_2018_bbr_collapses_but_the_variant_is_capped_by_spurious_retransmissions() {
    let c = reproduce("C11");
    c.assert_verdict(false);
    // The authors' stack (QUIC 2018) with independently drawn delays, at
    // least 5 seeds per algorithm, judged on the mean (issue 12).
    let at = |alg: &str, stack: &str, key: &str| {
        let (m, n) = mean_over_seeds(
            &c.runs,
            &[
                ("flow.algorithm", alg),
                ("flow.stack", stack),
                ("link.forward.jitter.reorder", "true"),
            ],
            key,
        );
        assert!(n >= 5, "{alg} on {stack}: {n} seeds");
        m
    };
    let (b, v) = (
        at("bbr", "quic-2018", "goodput_bps") / 1e6,
        at("bbr-jitter", "quic-2018", "goodput_bps") / 1e6,
    );
    // bbr falls to the published ≈ 0.5 Mbit/s (at most 1, the claim's
    // tolerance for a value read off a plot) ...
    assert!(b <= 1.0, "bbr {b}");
    // ... the variant is ahead by at least 2× but not near 3 Mbit/s ...
    assert!(v >= 2.0 * b && v < 2.4, "variant {v} vs bbr {b}");
    // ... because a quarter or more of its packets are retransmitted
    // needlessly (no loss is configured), which caps goodput below 2.4.
    let retx = at("bbr-jitter", "quic-2018", "retransmission_rate");
    assert!(retx >= 0.25, "variant retransmitted {retx}");
    assert!(
        v <= 3.0 * (1.0 - retx) + 0.05,
        "variant {v} above the cap {retx}"
    );
    // The second result, Linux TCP on the same jitter, exists for both.
    for alg in ["bbr", "bbr-jitter"] {
        assert!(at(alg, "linux", "goodput_bps") > 0.0);
    }
}

#[test]
fn c12_on_quic_2018_bbr_follows_the_published_curve_and_the_variant_does_not() {
    let c = reproduce("C12");
    c.assert_verdict(false);
    let at = |alg: &str, sd: &str| {
        let (m, n) = mean_over_seeds(
            &c.runs,
            &[
                ("flow.algorithm", alg),
                ("flow.stack", "quic-2018"),
                ("link.forward.jitter.normal.sd", sd),
            ],
            "goodput_bps",
        );
        assert!(n >= 5, "{alg} at {sd}: {n} seeds");
        m / 1e6
    };
    // bbr: near the link without jitter, at most 1 Mbit/s (published
    // ≈ 0.5, ×2 for a plot reading) at every sd beyond 30 ms.
    assert!(at("bbr", "0ms") > 2.7, "{}", at("bbr", "0ms"));
    for sd in ["40ms", "50ms", "60ms"] {
        assert!(at("bbr", sd) <= 1.0, "bbr at {sd}: {}", at("bbr", sd));
        // The variant keeps more than bbr, but not the published 2.55.
        assert!(at("bbr-jitter", sd) > at("bbr", sd), "at {sd}");
        assert!(at("bbr-jitter", sd) < 2.55 * 0.85, "at {sd}");
    }
    simulated_linux_tcp_keeps_the_kernels_share_under_jitter(&c.runs);
}

/// C12's second result, the simulated Linux TCP stack, against the
/// kernel's own 60 s sweep of the same path (`docs/kernel-tcp/seed001-60s`:
/// Linux 6.18, `bbr` and the BPF `bbrlab_jitter`, 2 seeds per point,
/// through the emulator). Compared as the share of each side's own
/// goodput without jitter that it keeps at each sd, so that what the two
/// count as payload (the kernel's 1,448-byte segments, about 3.5 % less
/// at sd 0) does not enter. Within 10 %: the kernel's two seeds lie
/// within 0.2-3.3 % of each other, the simulation's 8 seeds have an sd of
/// 1-5.5 %, and on 2026-12-07 the two sides were within 6.6 % at every
/// point (furthest: `bbr` at 60 ms, 0.405 against 0.433), while trials
/// of Linux's undo rules that the simulated sender lacks (Notes on
/// fidelity) put `bbr`'s shares at 40-60 ms 12-21 % below the kernel's.
fn simulated_linux_tcp_keeps_the_kernels_share_under_jitter(runs: &[Value]) {
    let csv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/kernel-tcp/seed001-60s")
        .join(claims::linux_tcp::CSV_FILE);
    let rows = claims::linux_tcp::read_csv(&csv).unwrap();
    let kernel_mean = |cc: &str, sd: f64| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.cc == cc && r.sd_ms == sd)
            .filter_map(|r| r.goodput_bps)
            .collect();
        assert!(v.len() >= 2, "{cc} at {sd} ms: {} kernel runs", v.len());
        v.iter().sum::<f64>() / v.len() as f64
    };
    let sim_mean = |alg: &str, sd: f64| {
        let (m, n) = mean_over_seeds(
            runs,
            &[
                ("flow.algorithm", alg),
                ("flow.stack", "linux"),
                ("link.forward.jitter.normal.sd", &format!("{sd}ms")),
            ],
            "goodput_bps",
        );
        assert!(n >= 5, "{alg} on linux at {sd} ms: {n} seeds");
        m
    };
    for (alg, cc) in [("bbr", "bbr"), ("bbr-jitter", "bbrlab_jitter")] {
        for sd in [20.0, 40.0, 60.0] {
            let kernel = kernel_mean(cc, sd) / kernel_mean(cc, 0.0);
            let sim = sim_mean(alg, sd) / sim_mean(alg, 0.0);
            assert!(
                (sim / kernel - 1.0).abs() <= 0.10,
                "{alg} at {sd} ms keeps {sim:.3} of its goodput without jitter, the kernel's {cc} {kernel:.3}"
            );
        }
    }
}

#[test]
fn c13_with_per_round_statistics_the_variant_follows_drops_faster_and_the_grid_says_why() {
    // The report's conclusion (issue 26): with the variant's statistics
    // updated once per round (C13's stated assumption) the claim is
    // reproduced; on every sample it is not; the grid shows both.
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/claims/c13-square-wave.toml"),
    )
    .unwrap();
    assert!(
        text.contains("jitter = { cadence = \"per-round\" }"),
        "the stated setup"
    );
    let c = reproduce("C13");
    c.assert_verdict(true);
    // At least 8 seeds per algorithm.
    let seeds = |alg: &str| runs_with(&c.runs, &[("flow.algorithm", alg)]);
    let (bbr, var) = (seeds("bbr"), seeds("bbr-jitter"));
    let distinct = |rs: &[&Value]| {
        let mut s: Vec<String> = rs.iter().filter_map(|r| param_of(r, "seed")).collect();
        s.sort();
        s.dedup();
        s.len()
    };
    assert_eq!(distinct(&bbr), bbr.len(), "one run per seed");
    assert!(bbr.len() >= 8 && var.len() == bbr.len());
    // Only the variant reports its time on srtt, and per round it is on
    // srtt after the drops: more than 5 % in every seed (mean ≈ 24 %,
    // against 1.4 % when updated on every sample).
    for r in &bbr {
        assert!(r["flows"][0]["time_using_srtt"].is_null());
    }
    for r in &var {
        let f = r["flows"][0]["time_using_srtt"].as_f64().unwrap();
        assert!((0.05..0.6).contains(&f), "time on srtt {f}");
    }
    // Both checks hold: rises, and drops within 0.7 × bbr's time.
    let checks = c.outcome["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2);
    assert!(
        checks.iter().all(|c| c["ok"].as_bool().unwrap()),
        "{checks:?}"
    );
    // The grid is in the table, one row per combination, and says which
    // pass: the stated setup does, the per-sample reading does not.
    let rows = c.outcome["rows"].as_array().unwrap();
    let grid: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["quantity"].as_str().unwrap(),
                r["measured"].as_str().unwrap(),
            )
        })
        .filter(|r| r.0.starts_with("grid (issue 26)"))
        .collect();
    assert_eq!(grid.len(), 16, "2 ACK policies × 2 windows × 4 cadences");
    let row = |cadence: &str, ack: &str, window: &str| {
        grid.iter()
            .find(|r| {
                r.0.contains(&format!(
                    "statistics {cadence}, ACKs {ack}, bandwidth window {window}"
                ))
            })
            .unwrap_or_else(|| panic!("{cadence} {ack} {window}"))
            .1
    };
    let passes = |m: &str| m.contains("passes C13's checks");
    assert!(passes(row("per-round", "quic-2018", "cycle + 2")));
    assert!(!passes(row("every-sample", "quic-2018", "cycle + 2")));
    assert!(!passes(row("every-sample", "decimated", "cycle + 2")));
    assert!(!passes(row("per-round", "quic-2018", "10 rounds")));
    // The committed grid's row for the stated setup is this run's result
    // (the same runs), so a stale CSV fails here.
    let g = claims::claim::c13_square_wave::committed_grid().unwrap();
    let stated = g
        .iter()
        .find(|r| r.cadence == "per-round" && r.ack == "quic-2018" && r.bw_window_follows_cycle)
        .unwrap();
    let drop_row = rows
        .iter()
        .find(|r| {
            r["quantity"]
                .as_str()
                .unwrap()
                .starts_with("time to follow a drop")
        })
        .unwrap()["measured"]
        .as_str()
        .unwrap();
    assert!(
        drop_row.starts_with(&format!("{:.2} (", stated.bbr_drop_s))
            && drop_row.contains(&format!(" s / {:.2} (", stated.variant_drop_s)),
        "{drop_row} vs grid {stated:?}"
    );
    // Both figures: the bandwidth estimate and the spread over seeds.
    let figs = c.outcome["figures"].as_array().unwrap();
    assert!(figs
        .iter()
        .any(|f| f.as_str().unwrap().ends_with("convergence")));
}

/// Mean over a run's drops (10, 30, 50, 70 s) of the time the bandwidth
/// estimate takes to come within 10 % of 5 Mbit/s (10 s if never), read
/// from its flows.csv.
fn c13_drop_time(flows_csv: &Path, duration: f64) -> f64 {
    let mut r = csv::Reader::from_path(flows_csv).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (ti, bi) = (col("time_s"), col("bw_estimate_bps"));
    let bw: Vec<(f64, f64)> = r
        .records()
        .map(|x| x.unwrap())
        .filter_map(|x| Some((x[ti].parse().ok()?, x[bi].parse::<f64>().ok()? / 1e6)))
        .collect();
    let mut drops = Vec::new();
    let mut t = 10.0;
    while t + 10.0 <= duration {
        drops.push(
            bw.iter()
                .find(|p| p.0 >= t && p.1 <= 5.5)
                .map_or(10.0, |p| p.0 - t),
        );
        t += 20.0;
    }
    drops.iter().sum::<f64>() / drops.len() as f64
}

#[test]
fn c13_variant_forced_onto_srtt_does_not_halve_drop_convergence() {
    // The counterfactual behind C13's analysis: with γ forced to 1e-6 the
    // variant builds its BDP on srtt and runs its 5-phase cycle all the
    // time, the most eqs. 10–11 can do. Even then it follows drops in no
    // less than 0.8 × bbr's time, mean over 8 seeds, on either stack
    // (measured 1.1× on QUIC 2018's, 1.4× on Linux's; published 0.5×).
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/claims/c13-square-wave.toml"),
    )
    .unwrap();
    let stack = "stack = \"quic-2018\"";
    assert!(text.contains(stack), "C13 runs the authors' QUIC stack");
    // C13 now updates the statistics once per round (issue 26); this
    // counterfactual is about the per-sample cadence, the default.
    let cadence = "jitter = { cadence = \"per-round\" }";
    assert!(text.contains(cadence));
    let text = text.replace(cadence, "");
    for (name, line) in [
        (
            "quic-2018",
            format!("{stack}\njitter = {{ gamma = 0.000001 }}"),
        ),
        ("linux", "jitter = { gamma = 0.000001 }".to_string()),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c13-forced.toml");
        fs::write(&file, text.replace(stack, &line)).unwrap();
        let out = dir.path().join("out");
        let o = Command::new(env!("CARGO_BIN_EXE_bbrlab"))
            .args(["sim", "--no-plots", "--quiet", "--jobs", "2", "--out"])
            .arg(&out)
            .arg(&file)
            .output()
            .expect("run bbrlab");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (mut b, mut v) = (Vec::new(), Vec::new());
        for e in fs::read_dir(&out).unwrap() {
            let run = e.unwrap().path();
            if !run.join("summary.json").exists() {
                continue;
            }
            let s: Value =
                serde_json::from_str(&fs::read_to_string(run.join("summary.json")).unwrap())
                    .unwrap();
            let s = &s["runs"][0];
            let alg = param_of(s, "flow.algorithm").unwrap();
            let t = c13_drop_time(&run.join("flows.csv"), 80.0);
            if alg == "bbr-jitter" {
                let f = s["flows"][0]["time_using_srtt"].as_f64().unwrap();
                // On srtt nearly all the time (with the Linux stack's
                // srtt-first statistics rttvar starts at 0 and stays below
                // any γ·srtt while the first samples are equal: ≈ 3 %).
                assert!(f >= 0.95, "{name}: forced variant on srtt {f}");
                v.push(t);
            } else {
                b.push(t);
            }
        }
        assert_eq!((b.len(), v.len()), (8, 8), "{name}");
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        assert!(
            mean(&v) >= 0.8 * mean(&b),
            "{name}: forced variant {:.2} s vs bbr {:.2} s",
            mean(&v),
            mean(&b)
        );
    }
}

#[test]
fn c14_extra_acked_keeps_bbr_level_with_cubic_under_ack_aggregation() {
    let c = reproduce("C14");
    c.assert_verdict(true);
    let with = goodput_mbps(
        c.run(&[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "true")]),
        0,
    );
    let without = goodput_mbps(
        c.run(&[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "false")]),
        0,
    );
    let cubic = goodput_mbps(c.run(&[("flow.algorithm", "cubic")]), 0);
    // Without ≤ 0.9 × with (published 0.61–0.72); with ≥ 0.9 × CUBIC.
    assert!(without <= 0.9 * with, "{without} vs {with}");
    assert!(with >= 0.9 * cubic, "{with} vs {cubic}");
}
