//! The published claims C1–C14 (../shared/CLAIMS.md): their scenarios,
//! the published figures, how each is measured from the simulation, and the
//! tolerance each verdict uses, with the reason for that tolerance written
//! next to it.
//!
//! Where a published figure came from a real network, the checks are about
//! the shape (who wins, by roughly how much, where the curve bends), as
//! CLAIMS.md asks. A claim the model does not reproduce keeps its check and
//! carries an analysis of why.

use crate::plots::{self, Figure, Series, Table};
use crate::reproduce::RunData;
use serde::Serialize;
use std::path::Path;

/// One row of the published-vs-measured table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What is compared.
    pub quantity: String,
    /// The published figure.
    pub published: String,
    /// Ours.
    pub measured: String,
}

/// One tolerance check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The rule, the measured value, and the reason for the tolerance.
    pub what: String,
    /// Whether it held.
    pub ok: bool,
}

/// What evaluating a claim produces.
#[derive(Default)]
pub struct Eval {
    /// Published vs measured.
    pub rows: Vec<Row>,
    /// Tolerance checks; the claim is reproduced when all hold.
    pub checks: Vec<Check>,
    /// Remarks shown whatever the verdict.
    pub notes: Vec<String>,
    /// Figure stems written in the claim directory.
    pub figures: Vec<String>,
}

impl Eval {
    fn row(&mut self, quantity: &str, published: &str, measured: String) {
        self.rows.push(Row {
            quantity: quantity.to_string(),
            published: published.to_string(),
            measured,
        });
    }
    fn check(&mut self, ok: bool, what: String) {
        self.checks.push(Check { what, ok });
    }
}

/// One claim: where it comes from, its scenario, and how it is judged.
pub struct ClaimDef {
    /// `C1` … `C14`.
    pub id: &'static str,
    /// Short title.
    pub title: &'static str,
    /// Seed file and figure.
    pub source: &'static str,
    /// The published result, as CLAIMS.md states it.
    pub published: &'static str,
    /// Scenario file stem in `scenarios/claims/`.
    pub file: &'static str,
    /// The scenario file's text.
    pub toml: &'static str,
    /// Duration for `--quick`, s (None: the full duration, already short).
    pub quick_seconds: Option<u64>,
    /// Measures and judges the runs; writes figures into the directory.
    pub evaluate: fn(&[RunData], &Path) -> Result<Eval, String>,
    /// Why the model misses the claim, shown when it is not reproduced.
    pub analysis: Option<&'static str>,
}

macro_rules! scenario {
    ($f:literal) => {
        include_str!(concat!("../../../scenarios/claims/", $f, ".toml"))
    };
}

/// Every claim, in order.
pub fn all() -> &'static [ClaimDef] {
    &CLAIMS
}

static CLAIMS: [ClaimDef; 14] = [
    ClaimDef {
        id: "C1",
        title: "Goodput under random loss",
        source: "seed 000 fig. 8; seed 003",
        published: "100 Mbit/s, 100 ms, 60 s flows, loss 0.001–50 %: BBR stays near link × (1 − p) up to 5 % loss, about 75 % of the link at 15 %, and collapses beyond that. CUBIC is at 30 % at 0.01 % loss, 10 % at 0.1 %, and near zero at 1 %.",
        file: "c01-random-loss",
        toml: scenario!("c01-random-loss"),
        quick_seconds: Some(30),
        evaluate: c01,
        analysis: None,
    },
    ClaimDef {
        id: "C2",
        title: "10 Gbit/s with 1 % loss",
        source: "seed 002 (Linux commit adding tcp_bbr)",
        published: "10 Gbit/s, 100 ms RTT, 1 % random loss, 30 s: CUBIC 3.27 Mbit/s; BBR 9150 Mbit/s (about 2800×).",
        file: "c02-10g-loss",
        toml: scenario!("c02-10g-loss"),
        quick_seconds: Some(10),
        evaluate: c02,
        analysis: None,
    },
    ClaimDef {
        id: "C3",
        title: "Bufferbloat: median RTT in a 1000-packet buffer",
        source: "seed 002",
        published: "10 Mbit/s, 40 ms RTT, 1000-packet drop-tail buffer, 120 s: both fill the link; BBR's median RTT is 43 ms, CUBIC's 1.09 s (25× lower for BBR).",
        file: "c03-bufferbloat",
        toml: scenario!("c03-bufferbloat"),
        quick_seconds: Some(40),
        evaluate: c03,
        analysis: None,
    },
    ClaimDef {
        id: "C4",
        title: "Following a bandwidth step up and down",
        source: "seed 000 fig. 3; seed 003",
        published: "40 ms path; the bottleneck steps 10 → 20 Mbit/s, then back to 10 Mbit/s after 20 s. BBR follows the rise exponentially (about 1.25× per gain cycle, converged in about 1.5 s) and the drop within about 4 s, as the old maximum ages out of the filter.",
        file: "c04-bandwidth-step",
        toml: scenario!("c04-bandwidth-step"),
        quick_seconds: None,
        evaluate: c04,
        analysis: None,
    },
    ClaimDef {
        id: "C5",
        title: "STARTUP and DRAIN",
        source: "seed 000 figs. 4–5",
        published: "10 Mbit/s, 40 ms, one flow, first 1 s and 8 s: STARTUP finds the bandwidth in about log2(BDP) rounds; DRAIN removes the startup queue so RTT returns to about RTprop; CUBIC fills the buffer and keeps it 70–100 % full.",
        file: "c05-startup",
        toml: scenario!("c05-startup"),
        quick_seconds: None,
        evaluate: c05,
        analysis: None,
    },
    ClaimDef {
        id: "C6",
        title: "Five BBR flows converge to a fair share",
        source: "seed 000 fig. 6",
        published: "5 BBR flows, staggered starts, sharing 100 Mbit/s / 10 ms: all converge to a fair share within a few PROBE_BW cycles; their PROBE_RTT episodes synchronise.",
        file: "c06-five-flows",
        toml: scenario!("c06-five-flows"),
        quick_seconds: Some(30),
        evaluate: c06,
        analysis: None,
    },
    ClaimDef {
        id: "C7",
        title: "Median RTT against buffer size at 128 kbit/s",
        source: "seed 000 fig. 10",
        published: "128 kbit/s, 40 ms, 8 flows, bottleneck buffer swept: BBR's median RTT stays near the minimum whatever the buffer size; CUBIC's grows linearly with the buffer.",
        file: "c07-buffer-sweep",
        toml: scenario!("c07-buffer-sweep"),
        quick_seconds: Some(120),
        evaluate: c07,
        analysis: Some("At 128 kbit/s a 1500-byte packet takes 94 ms to serialise, so the path's BDP (≈ 2 kB) is about one packet for all 8 flows together, while Linux BBR never lets a flow's cwnd fall below 4 packets (PROBE_RTT included). Eight flows therefore keep at least 32 packets (≈ 3 s) in flight: once the buffer holds more than that, no flow ever sees the propagation delay, every flow's min_rtt filter is inflated by the standing queue, and cwnd = 2 × bw × min_rtt grows with the buffer. CUBIC's linear growth is reproduced; BBR's flat curve is not. The paper's figure was itself a simulation whose packet size and minimum window are not stated; with Linux's 4-packet floor and 1500-byte packets the model cannot produce it."),
    },
    ClaimDef {
        id: "C8",
        title: "Time in PROBE_BW and PROBE_RTT",
        source: "seed 000 appendix",
        published: "A long bulk flow spends about 98 % of the time in PROBE_BW and about 2 % in PROBE_RTT: 200 ms every 10 s, cwnd 4 packets.",
        file: "c08-probe-rtt",
        toml: scenario!("c08-probe-rtt"),
        quick_seconds: Some(40),
        evaluate: c08,
        analysis: None,
    },
    ClaimDef {
        id: "C9",
        title: "Token-bucket policer and the long-term bandwidth model",
        source: "seed 000 §6.3",
        published: "Against a token-bucket policer below the link rate, the policer model (long-term bandwidth sampling) cuts the continuous losses that gain cycling causes.",
        file: "c09-policer",
        toml: scenario!("c09-policer"),
        quick_seconds: Some(30),
        evaluate: c09,
        analysis: None,
    },
    ClaimDef {
        id: "C10",
        title: "BBR and CUBIC sharing a bottleneck",
        source: "seed 000 §6.4",
        published: "BBR and CUBIC sharing a bottleneck, buffer 0.5–8 BDP: BBR gets a fair share at BDP-sized buffers; loss-based flows take more than their share when buffers are many BDPs.",
        file: "c10-bbr-vs-cubic",
        toml: scenario!("c10-bbr-vs-cubic"),
        quick_seconds: Some(30),
        evaluate: c10,
        analysis: None,
    },
    ClaimDef {
        id: "C11",
        title: "Per-packet RTT jitter: bbr vs bbr-jitter",
        source: "seed 001 fig. 4",
        published: "3 Mbit/s; RTT drawn per packet from Normal(60 ms, 40 ms) floored at 1 ms; no loss: BBR falls to about 0.5 Mbit/s because a too-small min_rtt makes cwnd the limit; the jitter-robust variant holds near 3 Mbit/s.",
        file: "c11-jitter",
        toml: scenario!("c11-jitter"),
        quick_seconds: Some(30),
        evaluate: c11,
        analysis: Some(JITTER_ANALYSIS),
    },
    ClaimDef {
        id: "C12",
        title: "Jitter sweep: bbr vs bbr-jitter",
        source: "seed 001 fig. 5",
        published: "As C11, with the RTT standard deviation swept from 0 to 60 ms: BBR degrades from 20 ms and sits near 0.5 Mbit/s beyond 30 ms; the variant stays around 2.55 Mbit/s on average.",
        file: "c12-jitter-sweep",
        toml: scenario!("c12-jitter-sweep"),
        quick_seconds: Some(30),
        evaluate: c12,
        analysis: Some(JITTER_ANALYSIS),
    },
    ClaimDef {
        id: "C13",
        title: "Square-wave bandwidth: bbr vs bbr-jitter",
        source: "seed 001 fig. 6",
        published: "60 ms path; bandwidth a square wave between 5 and 10 Mbit/s with a 20 s period: both follow rises quickly; on each drop the variant converges in about half BBR's time.",
        file: "c13-square-wave",
        toml: scenario!("c13-square-wave"),
        quick_seconds: None,
        evaluate: c13,
        analysis: Some("The variant departs from BBR only while its RTT variance exceeds γ·srtt (seed 001 eqs. 10–11, γ = 0.3). On this path the only RTT variation is the queue BBR itself builds after each drop; rttvar (a β = 0.25 EWMA of |RTT − srtt|) stays below 0.3 × srtt, so the variant never switches to its srtt-based BDP and shorter cycle and behaves bit for bit like bbr. The seed does not state a jitter source for this experiment; if its testbed had per-packet RTT noise (as in C11), the variant would switch there, which our clean-path scenario does not model."),
    },
    ClaimDef {
        id: "C14",
        title: "ACK aggregation and extra_acked",
        source: "seed 004 (Linux commit adding extra_acked)",
        published: "ACKs released in bursts (Wi-Fi style aggregation): without extra_acked BBR is cwnd-limited, 73 Mbit/s against 102 with it at 2.4 GHz (and 362 against 593 at 5 GHz); with it BBR matches CUBIC (100 and 601).",
        file: "c14-ack-aggregation",
        toml: scenario!("c14-ack-aggregation"),
        quick_seconds: Some(15),
        evaluate: c14,
        analysis: None,
    },
];

const JITTER_ANALYSIS: &str = "The direction is reproduced (bbr-jitter keeps more throughput than bbr once the standard deviation reaches 30 ms, and bbr degrades from 20–30 ms), but not the magnitudes. Per-packet delays drawn independently reorder packets. Our TCP-like sender adapts to reordering as Linux RACK does (after reordering or a DSACK it judges loss by time, with a window of min_rtt/4 per DSACK, capped at srtt), and with reordering jitter bbr then follows the published curve closely (0.48 Mbit/s at 30 ms, 0.35 at 40 ms, ≈ 0.3 beyond); but the variant collapses with it, because delays spread over ±2 standard deviations outrun the srtt-capped reordering window and 25–45 % of packets are retransmitted needlessly, which no BDP rule can fix. The scenario therefore uses the link model's reorder-free jitter (each packet waits for its predecessor), which couples consecutive delays and lets fewer tiny RTT samples through than the seed's model, and turns extra_acked off, since the seed's BBR predates ACK-aggregation compensation (with it, jitter reads as aggregation and bbr keeps ≈ 2.8 Mbit/s). The seed does not say how its testbed kept reordering from triggering retransmissions.";

// ----- helpers -------------------------------------------------------------

fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

fn goodput(d: &RunData, flow: usize) -> f64 {
    d.summary
        .flows
        .get(flow)
        .map_or(0.0, |f| mbps(f.goodput_bps))
}

fn median_rtt(d: &RunData, flow: usize) -> f64 {
    d.summary
        .flows
        .get(flow)
        .and_then(|f| f.rtt_median_ms)
        .unwrap_or(f64::NAN)
}

fn find<'a>(data: &'a [RunData], want: &[(&str, &str)]) -> Result<&'a RunData, String> {
    data.iter()
        .find(|d| want.iter().all(|(k, v)| d.param(k) == Some(v)))
        .ok_or_else(|| format!("no run with {want:?}"))
}

fn param_f64(d: &RunData, key: &str) -> f64 {
    d.param(key)
        .and_then(|v| {
            v.trim_matches('"')
                .trim_end_matches("pkt")
                .trim_end_matches("ms")
                .parse()
                .ok()
        })
        .unwrap_or(f64::NAN)
}

fn flows_table(d: &RunData) -> Result<(Table, std::path::PathBuf), String> {
    let p = d.dir.join("flows.csv");
    Ok((Table::read(&p)?, p))
}

/// Column `col` of flow `flow` over time, scaled.
fn series(d: &RunData, flow: usize, col: &str, scale: f64) -> Result<Vec<(f64, f64)>, String> {
    let (t, p) = flows_table(d)?;
    let f = flow.to_string();
    Ok(t.points(&p, "time_s", col, Some(("flow", &f)))?
        .into_iter()
        .map(|(x, y)| (x, y * scale))
        .collect())
}

fn mean_in(points: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = points
        .iter()
        .filter(|p| p.0 >= from && p.0 < to)
        .map(|p| p.1)
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[allow(clippy::too_many_arguments)]
fn figure(
    dir: &Path,
    eval: &mut Eval,
    stem: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    (log_x, log_y): (bool, bool),
    series: &[Series],
    published: &[(f64, f64)],
) -> Result<(), String> {
    plots::figure(&Figure {
        stem: &dir.join(stem),
        title,
        x_label,
        y_label,
        log_x,
        log_y,
        series,
        published,
    })?;
    eval.figures.push(stem.to_string());
    Ok(())
}

fn line(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: label.to_string(),
        points,
    }
}

// ----- the claims ----------------------------------------------------------

const C1_LINK: f64 = 100.0;

fn c01(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let curve = |alg: &str| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = data
            .iter()
            .filter(|d| d.param("flow.algorithm") == Some(alg))
            .map(|d| (param_f64(d, "link.forward.loss") * 100.0, goodput(d, 0)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let (bbr, cubic) = (curve("bbr"), curve("cubic"));
    let at = |c: &[(f64, f64)], pct: f64| {
        c.iter()
            .find(|p| (p.0 - pct).abs() < 1e-9 * pct.max(1.0))
            .map_or(f64::NAN, |p| p.1)
    };
    // BBR up to 5 %: at least 85 % of link × (1 − p). Tolerance: PROBE_RTT
    // costs 2 %, each recovery episode conserves packets for a round, and
    // STARTUP on a 100 ms path takes ~1.5 s of the run; "near" in the paper
    // is read off a plot.
    let worst = bbr
        .iter()
        .filter(|p| p.0 <= 5.0 + 1e-9)
        .map(|p| p.1 / (C1_LINK * (1.0 - p.0 / 100.0)))
        .fold(f64::INFINITY, f64::min);
    e.row(
        "BBR goodput for loss ≤ 5 %, worst ratio to link × (1 − p)",
        "≈ 1 (near the maximum)",
        format!("{worst:.3}"),
    );
    e.check(
        worst >= 0.85,
        format!("BBR ≥ 0.85 × link × (1 − p) for every p ≤ 5 %: worst {worst:.3} (tolerance: 2 % PROBE_RTT, conservation rounds, STARTUP, and a value read off a plot)"),
    );
    let b15 = at(&bbr, 15.0) / C1_LINK;
    e.row(
        "BBR at 15 % loss, fraction of link",
        "≈ 0.75",
        format!("{b15:.2}"),
    );
    // ±20 points: the exact knee depends on the testbed's loss recovery
    // (SACK scoreboard, RACK timers), which the paper does not give.
    e.check(
        (0.55..=0.95).contains(&b15),
        format!("BBR at 15 % within 0.55–0.95 of the link (published ≈ 0.75, ±0.2 for the knee's dependence on loss-recovery details): {b15:.2}"),
    );
    let b50 = at(&bbr, 50.0) / C1_LINK;
    e.row(
        "BBR at 50 % loss, fraction of link",
        "collapsed",
        format!("{b50:.4}"),
    );
    e.check(
        b50 < 0.1,
        format!("BBR collapsed at 50 %: {b50:.4} < 0.1 of the link"),
    );
    let c001 = at(&cubic, 0.01) / C1_LINK;
    let c01 = at(&cubic, 0.1) / C1_LINK;
    let c1 = at(&cubic, 1.0) / C1_LINK;
    e.row(
        "CUBIC at 0.01 % / 0.1 % / 1 % loss, fraction of link",
        "0.30 / 0.10 / ≈ 0",
        format!("{c001:.2} / {c01:.3} / {c1:.3}"),
    );
    // CUBIC's throughput under random loss scales as p^-0.75 (RFC 9438
    // §5.1), so a factor-of-2 band around a value read off a log plot is
    // the tolerance; "near zero" is taken as < 5 % of the link.
    e.check(
        (0.15..=0.6).contains(&c001),
        format!("CUBIC at 0.01 % within 0.15–0.6 of the link (published 0.30, ×/÷ 2): {c001:.2}"),
    );
    e.check(
        (0.05..=0.2).contains(&c01),
        format!("CUBIC at 0.1 % within 0.05–0.2 of the link (published 0.10, ×/÷ 2): {c01:.3}"),
    );
    e.check(
        c1 < 0.05,
        format!("CUBIC near zero at 1 %: {c1:.3} < 0.05 of the link"),
    );
    let ideal: Vec<(f64, f64)> = bbr
        .iter()
        .map(|p| (p.0, C1_LINK * (1.0 - p.0 / 100.0)))
        .collect();
    figure(
        dir,
        &mut e,
        "goodput-vs-loss",
        "C1: goodput vs random loss, 100 Mbit/s, 100 ms (cf. seed 000 fig. 8)",
        "loss rate (%)",
        "goodput (Mbit/s)",
        (true, false),
        &[
            line("bbr", bbr.clone()),
            line("cubic", cubic.clone()),
            line("link × (1 − p)", ideal),
        ],
        &[
            (5.0, 95.0),
            (15.0, 75.0),
            (0.01, 30.0),
            (0.1, 10.0),
            (1.0, 0.0),
        ],
    )?;
    Ok(e)
}

fn c02(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let bs = series(bbr, 0, "goodput_bps", 1e-6)?;
    let dur = bbr.duration_s;
    // The published figure is netperf's average over 30 s, so the full run
    // compares its whole-run average. A shortened (--quick) run compares
    // its second half instead: STARTUP at 10 Gbit/s and 100 ms takes
    // ~2.5 s, a quarter of a 10 s run but under a tenth of 30 s.
    let (b, how) = if dur >= 29.0 {
        (goodput(bbr, 0), "whole 30 s run")
    } else {
        (
            mean_in(&bs, dur / 2.0, dur + 1.0),
            "second half of a shortened run",
        )
    };
    let c = goodput(cubic, 0);
    e.row(
        "BBR goodput",
        "9150 Mbit/s",
        format!("{b:.0} Mbit/s ({how})"),
    );
    e.row("CUBIC goodput", "3.27 Mbit/s", format!("{c:.2} Mbit/s"));
    e.row("BBR / CUBIC", "≈ 2800×", format!("{:.0}×", b / c));
    // ±10 %: netperf goodput on an emulated path with an unstated buffer.
    e.check(
        (b / 9150.0 - 1.0).abs() <= 0.10,
        format!("BBR within ±10 % of 9150 Mbit/s (netem testbed, buffer not stated): {b:.0}"),
    );
    // ×/÷ 3: at 1 % loss CUBIC runs with a window of a few packets, where
    // the details of timeouts and HyStart decide the exact figure.
    e.check(
        (3.27 / 3.0..=3.27 * 3.0).contains(&c),
        format!("CUBIC within ×/÷ 3 of 3.27 Mbit/s (a few-packet window, dominated by timeout details): {c:.2}"),
    );
    e.check(
        b / c >= 1000.0,
        format!("BBR at least 1000× CUBIC (published 2798×): {:.0}×", b / c),
    );
    let cs = series(cubic, 0, "goodput_bps", 1e-6)?;
    figure(
        dir,
        &mut e,
        "goodput",
        "C2: 10 Gbit/s, 100 ms, 1 % loss: goodput over time (log scale)",
        "time (s)",
        "goodput (Mbit/s)",
        (false, true),
        &[line("bbr", bs), line("cubic", cs)],
        &[(dur, 9150.0), (dur, 3.27)],
    )?;
    Ok(e)
}

fn c03(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (gb, gc) = (goodput(bbr, 0), goodput(cubic, 0));
    let (rb, rc) = (median_rtt(bbr, 0), median_rtt(cubic, 0));
    e.row(
        "goodput (BBR / CUBIC)",
        "both fill the 10 Mbit/s link",
        format!("{gb:.2} / {gc:.2} Mbit/s"),
    );
    e.row("median RTT, BBR", "43 ms", format!("{rb:.1} ms"));
    e.row(
        "median RTT, CUBIC",
        "1.09 s",
        format!("{:.2} s", rc / 1000.0),
    );
    e.row("ratio", "25×", format!("{:.1}×", rc / rb));
    // "Fill" = 95 %: PROBE_RTT alone costs 2 %.
    e.check(
        gb >= 9.5 && gc >= 9.5,
        format!("both ≥ 95 % of 10 Mbit/s (PROBE_RTT costs 2 %): {gb:.2}, {gc:.2}"),
    );
    // 30 %: our BBR keeps Linux's quantization budget (3 send quanta, ≈ 6
    // packets ≈ 7 ms at 10 Mbit/s) queued; the published run's TSO/fq
    // details are not given.
    e.check(
        rb <= 43.0 * 1.3,
        format!("BBR median RTT ≤ 1.3 × 43 ms (Linux's 3-quanta quantization budget keeps ≈ 6 packets queued): {rb:.1} ms"),
    );
    // ±20 %: a drop-tail sawtooth's median depends on CUBIC's β and the
    // exact buffer accounting (bytes or packets) of the testbed.
    e.check(
        (rc / 1090.0 - 1.0).abs() <= 0.2,
        format!("CUBIC median RTT within ±20 % of 1.09 s (sawtooth median depends on β and buffer accounting): {:.2} s", rc / 1000.0),
    );
    e.check(
        rc / rb >= 15.0,
        format!(
            "BBR's median at least 15× lower (published 25×): {:.1}×",
            rc / rb
        ),
    );
    let (sb, sc) = (
        series(bbr, 0, "rtt_ms", 1.0)?,
        series(cubic, 0, "rtt_ms", 1.0)?,
    );
    let mid = bbr.duration_s / 2.0;
    figure(
        dir,
        &mut e,
        "rtt",
        "C3: 10 Mbit/s, 40 ms, 1000-packet buffer: RTT (log scale)",
        "time (s)",
        "RTT (ms)",
        (false, true),
        &[line("bbr", sb), line("cubic", sc)],
        &[(mid, 43.0), (mid, 1090.0)],
    )?;
    Ok(e)
}

fn c04(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let d = &data[0];
    let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
    let gp = series(d, 0, "goodput_bps", 1e-6)?;
    let rise = bw
        .iter()
        .find(|p| p.0 >= 20.0 && p.1 >= 18.0)
        .map(|p| p.0 - 20.0);
    let fall = bw
        .iter()
        .find(|p| p.0 >= 40.0 && p.1 <= 11.0)
        .map(|p| p.0 - 40.0);
    let fmt = |v: Option<f64>| v.map_or("never".to_string(), |s| format!("{s:.2} s"));
    e.row(
        "rise 10 → 20 Mbit/s: bw estimate reaches 90 % of the new rate",
        "≈ 1.5 s",
        fmt(rise),
    );
    e.row(
        "drop 20 → 10 Mbit/s: bw estimate back within 10 % of the new rate",
        "≈ 4 s",
        fmt(fall),
    );
    // ×2 on the rise: the step can land anywhere in the 8-phase gain cycle
    // (up to 8 RTTs of waiting for the next 1.25 phase), and the published
    // time is read off a plot.
    e.check(
        rise.is_some_and(|s| s <= 3.0),
        format!("rise converges within 3 s (published ≈ 1.5 s; ×2 for where in the gain cycle the step lands): {}", fmt(rise)),
    );
    // 1.5×: the filter is 10 rounds long, and rounds stretch while the
    // queue built by the old rate drains.
    e.check(
        fall.is_some_and(|s| s <= 6.0),
        format!("drop followed within 6 s (published ≈ 4 s; ×1.5 since rounds stretch while the old queue drains): {}", fmt(fall)),
    );
    e.notes.push("Both times are shorter than the published ones. We time the bandwidth estimate (the max filter), which jumps as soon as one 1.25-gain phase delivers at the new rate; the paper's figure shows the sending rate, which also needs the cycle to reach its cruising phases.".to_string());
    let rate: Vec<(f64, f64)> = vec![
        (0.0, 10.0),
        (20.0, 10.0),
        (20.0, 20.0),
        (40.0, 20.0),
        (40.0, 10.0),
        (d.duration_s, 10.0),
    ];
    figure(
        dir,
        &mut e,
        "bandwidth",
        "C4: bottleneck 10 → 20 → 10 Mbit/s, 40 ms (cf. seed 000 fig. 3)",
        "time (s)",
        "Mbit/s",
        (false, false),
        &[
            line("bottleneck rate", rate),
            line("bbr bw estimate", bw),
            line("bbr goodput", gp),
        ],
        &[(21.5, 20.0), (44.0, 10.0)],
    )?;
    Ok(e)
}

fn link_queue(d: &RunData) -> Result<Vec<(f64, f64)>, String> {
    let p = d.dir.join("link.csv");
    Table::read(&p)?.points(
        &p,
        "time_s",
        "queue_packets",
        Some(("direction", "forward")),
    )
}

fn c05(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (t, p) = flows_table(bbr)?;
    let modes = t.labels(&p, "mode", Some(("flow", "0")))?;
    let rtt = series(bbr, 0, "rtt_ms", 1.0)?;
    let drain_at = modes.iter().find(|m| m.1 == "drain").map(|m| m.0);
    let bw_at = modes.iter().find(|m| m.1 == "probe_bw").map(|m| m.0);
    // Rounds until DRAIN: ∫ dt / RTT over STARTUP.
    let mut rounds = 0.0;
    if let Some(td) = drain_at {
        for w in rtt.windows(2) {
            if w[1].0 <= td && w[0].1 > 0.0 {
                rounds += (w[1].0 - w[0].0) / (w[0].1 / 1000.0);
            }
        }
    }
    let bdp_pkts: f64 = 10e6 * 0.040 / 8.0 / 1500.0;
    let expect = bdp_pkts.log2();
    e.row(
        "STARTUP length",
        "≈ log2(BDP) rounds",
        format!("{rounds:.1} rounds (log2 BDP = {expect:.1})"),
    );
    // log2(BDP) rounds to find the rate, plus the 3 plateau rounds the
    // full-pipe rule needs and one in flight: +4.
    e.check(
        drain_at.is_some() && rounds <= expect + 4.0,
        format!("STARTUP ends within log2(BDP) + 4 rounds (3 plateau rounds for full-pipe detection, 1 in flight): {rounds:.1}"),
    );
    let after = bw_at.unwrap_or(f64::INFINITY);
    let rtt_after = {
        let mut v: Vec<f64> = rtt
            .iter()
            .filter(|p| p.0 >= after + 0.2)
            .map(|p| p.1)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    e.row(
        "BBR RTT after DRAIN (median)",
        "≈ RTprop (40 ms)",
        format!("{rtt_after:.1} ms"),
    );
    // Same 30 % as C3: the quantization budget stays queued.
    e.check(
        rtt_after <= 40.0 * 1.3,
        format!("after DRAIN the median RTT is ≤ 1.3 × RTprop (quantization budget, as in C3): {rtt_after:.1} ms"),
    );
    let q = link_queue(cubic)?;
    let occ = mean_in(&q, 2.0, 8.0) / 100.0;
    e.row(
        "CUBIC buffer occupancy, 2–8 s (mean)",
        "70–100 %",
        format!("{:.0} %", occ * 100.0),
    );
    // β = 0.7: after a loss the window falls to 0.7 × (BDP + buffer), so
    // the occupancy sawtooth's floor on a 3-BDP buffer is ≈ 60 %; the mean
    // must sit inside the published band's lower edge minus that dip.
    e.check(
        occ >= 0.6,
        format!("CUBIC keeps the buffer ≥ 60 % full on average (published 70–100 %; CUBIC's β = 0.7 dips to ≈ 60 % of a 3-BDP buffer): {:.0} %", occ * 100.0),
    );
    let qb = link_queue(bbr)?;
    let first = |v: Vec<(f64, f64)>| v.into_iter().filter(|p| p.0 <= 1.0).collect::<Vec<_>>();
    let inflight_b = series(bbr, 0, "inflight_bytes", 1.0 / 1500.0)?;
    let inflight_c = series(cubic, 0, "inflight_bytes", 1.0 / 1500.0)?;
    figure(
        dir,
        &mut e,
        "first-second",
        "C5: first second, 10 Mbit/s, 40 ms: packets in flight (cf. seed 000 fig. 4)",
        "time (s)",
        "packets in flight",
        (false, false),
        &[
            line("bbr", first(inflight_b)),
            line("cubic", first(inflight_c)),
        ],
        &[],
    )?;
    figure(
        dir,
        &mut e,
        "first-8-seconds",
        "C5: first 8 s: bottleneck queue (cf. seed 000 fig. 5)",
        "time (s)",
        "queue (packets)",
        (false, false),
        &[line("bbr", qb), line("cubic", q)],
        &[],
    )?;
    Ok(e)
}

fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let q: f64 = xs.iter().map(|x| x * x).sum();
    if q == 0.0 {
        0.0
    } else {
        s * s / (xs.len() as f64 * q)
    }
}

fn c06(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let d = &data[0];
    let n = d.summary.flows.len();
    let dur = d.duration_s;
    let last_start = 2.0 * (n as f64 - 1.0);
    let mut gps = Vec::new();
    let mut lines = Vec::new();
    let (t, p) = flows_table(d)?;
    let mut episodes: Vec<Vec<f64>> = Vec::new();
    for f in 0..n {
        let s = series(d, f, "goodput_bps", 1e-6)?;
        gps.push(mean_in(&s, last_start + 10.0, dur + 1.0));
        lines.push(line(&format!("flow {f}"), s));
        let modes = t.labels(&p, "mode", Some(("flow", &f.to_string())))?;
        let mut starts = Vec::new();
        for w in modes.windows(2) {
            if w[1].1 == "probe_rtt" && w[0].1 != "probe_rtt" {
                starts.push(w[1].0);
            }
        }
        episodes.push(starts);
    }
    let j = jain(&gps);
    e.row(
        "Jain's index, from 10 s after the last start",
        "≈ 1 (fair share)",
        format!(
            "{j:.3} (goodputs {} Mbit/s)",
            gps.iter()
                .map(|g| format!("{g:.1}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    // 0.95: five equal shares give 1.0; 0.95 allows one flow ±25 % of its
    // share, the size of one 1.25 probing phase.
    e.check(j >= 0.95, format!("Jain's index ≥ 0.95 once all flows have run 10 s (one flow may be off by a 1.25 probe phase): {j:.3}"));
    // Synchronised PROBE_RTT: after convergence, each episode start of a
    // flow has episodes of at least 3 other flows starting within 300 ms
    // (a little more than one 200 ms PROBE_RTT plus a round).
    let mut total = 0;
    let mut synced = 0;
    for (i, es) in episodes.iter().enumerate() {
        for &s in es.iter().filter(|&&s| s >= last_start + 10.0) {
            total += 1;
            let others = episodes
                .iter()
                .enumerate()
                .filter(|(k, o)| *k != i && o.iter().any(|&x| (x - s).abs() <= 0.3))
                .count();
            if others >= 3 {
                synced += 1;
            }
        }
    }
    let frac = if total == 0 {
        0.0
    } else {
        synced as f64 / total as f64
    };
    e.row(
        "PROBE_RTT episodes shared by ≥ 4 of 5 flows (within 300 ms)",
        "synchronised",
        format!("{synced} of {total}"),
    );
    e.check(
        total > 0 && frac >= 0.75,
        format!("≥ 75 % of PROBE_RTT episodes after convergence shared by at least 4 flows within 300 ms (200 ms PROBE_RTT plus a round): {synced}/{total}"),
    );
    figure(
        dir,
        &mut e,
        "throughput",
        "C6: 5 BBR flows, 100 Mbit/s, 10 ms (cf. seed 000 fig. 6)",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &lines,
        &[],
    )?;
    Ok(e)
}

fn c07(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let curve = |alg: &str| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = data
            .iter()
            .filter(|d| d.param("flow.algorithm") == Some(alg))
            .map(|d| {
                let m: Vec<f64> = (0..d.summary.flows.len())
                    .map(|f| median_rtt(d, f))
                    .collect();
                (
                    param_f64(d, "link.forward.queue.limit"),
                    m.iter().sum::<f64>() / m.len() as f64 / 1000.0,
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let (bbr, cubic) = (curve("bbr"), curve("cubic"));
    let show = |c: &[(f64, f64)]| {
        c.iter()
            .map(|p| format!("{:.0}: {:.2} s", p.0, p.1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    e.row(
        "BBR median RTT by buffer (packets)",
        "near the minimum at every size",
        show(&bbr),
    );
    e.row(
        "CUBIC median RTT by buffer (packets)",
        "grows linearly",
        show(&cubic),
    );
    // Minimum RTT: 40 ms plus one 1500-byte packet at 128 kbit/s (94 ms).
    let min_rtt = 0.040 + 1500.0 * 8.0 / 128e3;
    let worst = bbr.iter().map(|p| p.1).fold(0.0, f64::max);
    // "Near the minimum": within 3× the minimum RTT, the band the paper's
    // BBR curve stays in while CUBIC's spans an order of magnitude.
    e.check(
        worst <= 3.0 * min_rtt,
        format!(
            "BBR's median RTT ≤ 3 × the minimum ({:.2} s) at every buffer size: worst {worst:.2} s",
            3.0 * min_rtt
        ),
    );
    let growth = cubic.last().map_or(0.0, |l| l.1) / cubic.first().map_or(1.0, |f| f.1);
    let size_growth = cubic.last().map_or(0.0, |l| l.0) / cubic.first().map_or(1.0, |f| f.0);
    // Linear: the RTT grows by at least half the buffer's growth factor.
    e.check(
        growth >= 0.5 * size_growth,
        format!("CUBIC's median RTT grows at least half as fast as the buffer (linear): ×{growth:.1} for ×{size_growth:.0}"),
    );
    figure(
        dir,
        &mut e,
        "rtt-vs-buffer",
        "C7: 8 flows, 128 kbit/s, 40 ms: median RTT vs buffer (cf. seed 000 fig. 10)",
        "buffer (packets)",
        "median RTT (s)",
        (true, true),
        &[line("bbr", bbr), line("cubic", cubic)],
        &[],
    )?;
    Ok(e)
}

fn mode_fraction(d: &RunData, mode: &str) -> f64 {
    d.summary.flows[0]
        .mode_fractions
        .iter()
        .find(|m| m.0 == mode)
        .map_or(0.0, |m| m.1)
}

fn c08(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let d = &data[0];
    let bw = mode_fraction(d, "probe_bw");
    let rtt = mode_fraction(d, "probe_rtt");
    let (t, p) = flows_table(d)?;
    let modes = t.labels(&p, "mode", Some(("flow", "0")))?;
    let cwnd = t.points(&p, "time_s", "cwnd_bytes", Some(("flow", "0")))?;
    let max_probe_rtt_cwnd = modes
        .iter()
        .zip(&cwnd)
        .filter(|(m, _)| m.1 == "probe_rtt")
        .map(|(_, c)| c.1 / 1500.0)
        .fold(0.0, f64::max);
    e.row("time in PROBE_BW", "≈ 98 %", format!("{:.1} %", bw * 100.0));
    e.row(
        "time in PROBE_RTT",
        "≈ 2 % (200 ms every 10 s)",
        format!("{:.2} %", rtt * 100.0),
    );
    e.row(
        "cwnd in PROBE_RTT",
        "4 packets",
        format!("{max_probe_rtt_cwnd:.1} packets (largest sample)"),
    );
    // PROBE_BW ≥ 95 %: STARTUP and DRAIN take ≈ 0.5 s of the run.
    e.check(
        bw >= 0.95,
        format!(
            "PROBE_BW ≥ 95 % (STARTUP and DRAIN take ≈ 0.5 s): {:.1} %",
            bw * 100.0
        ),
    );
    // PROBE_RTT 1.5–3 %: 200 ms plus one round (40 ms) every 10 s is
    // 2.4 %; a short run may end just before an episode.
    e.check(
        (0.015..=0.03).contains(&rtt),
        format!(
            "PROBE_RTT within 1.5–3 % (200 ms + one 40 ms round per 10 s = 2.4 %): {:.2} %",
            rtt * 100.0
        ),
    );
    e.check(
        max_probe_rtt_cwnd > 0.0 && max_probe_rtt_cwnd <= 4.0 + 1e-9,
        format!("cwnd ≤ 4 packets whenever sampled in PROBE_RTT: {max_probe_rtt_cwnd:.1}"),
    );
    figure(
        dir,
        &mut e,
        "cwnd",
        "C8: a long BBR flow: cwnd and inflight (PROBE_RTT dips every 10 s)",
        "time (s)",
        "packets",
        (false, false),
        &[
            line("cwnd", cwnd.iter().map(|c| (c.0, c.1 / 1500.0)).collect()),
            line("inflight", series(d, 0, "inflight_bytes", 1.0 / 1500.0)?),
        ],
        &[],
    )?;
    Ok(e)
}

fn c09(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let on = find(data, &[("flow.bbr.lt_bw", "true")])?;
    let off = find(data, &[("flow.bbr.lt_bw", "false")])?;
    let r = |d: &RunData| d.summary.flows[0].retransmission_rate * 100.0;
    let (ron, roff) = (r(on), r(off));
    let (gon, goff) = (goodput(on, 0), goodput(off, 0));
    e.row(
        "retransmission rate, with / without lt_bw",
        "lower with the policer model",
        format!("{ron:.2} % / {roff:.2} %"),
    );
    e.row(
        "goodput, with / without lt_bw (policer 5 Mbit/s)",
        "—",
        format!("{gon:.2} / {goff:.2} Mbit/s"),
    );
    // The claim is qualitative. A cut of at least 10 % is required: more
    // than the few-percent spread between seeds of the same scenario.
    e.check(
        ron <= 0.9 * roff,
        format!("lt_bw cuts the retransmission rate by ≥ 10 % (qualitative claim; 10 % exceeds seed-to-seed spread): {ron:.2} % vs {roff:.2} %"),
    );
    // And does not cost goodput: within 5 %.
    e.check(
        gon >= 0.95 * goff,
        format!("goodput with lt_bw ≥ 95 % of without: {gon:.2} vs {goff:.2}"),
    );
    e.notes.push("The cut is modest: after each 48-round lt_bw period BBR re-probes, and the bucket lets short bursts through at the link rate, which refills the bandwidth max filter until the next lossy intervals re-engage the model.".to_string());
    let gs = |d: &RunData| series(d, 0, "goodput_bps", 1e-6);
    let dr = |d: &RunData| -> Result<Vec<(f64, f64)>, String> {
        let s = series(d, 0, "drops", 1.0)?;
        Ok(s.windows(2)
            .map(|w| (w[1].0, (w[1].1 - w[0].1) / (w[1].0 - w[0].0)))
            .collect())
    };
    figure(
        dir,
        &mut e,
        "drops",
        "C9: policer drops per second, with and without the long-term bandwidth model",
        "time (s)",
        "drops per second",
        (false, false),
        &[
            line("bbr with lt_bw", dr(on)?),
            line("bbr without lt_bw", dr(off)?),
        ],
        &[],
    )?;
    figure(
        dir,
        &mut e,
        "goodput",
        "C9: goodput through a 5 Mbit/s policer",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &[
            line("bbr with lt_bw", gs(on)?),
            line("bbr without lt_bw", gs(off)?),
        ],
        &[],
    )?;
    Ok(e)
}

fn c10(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    const BDP: f64 = 50e6 * 0.040 / 8.0 / 1500.0;
    let mut share = Vec::new();
    let mut fair = Vec::new();
    for d in data {
        let b = param_f64(d, "link.forward.queue.limit") / BDP;
        let (gb, gc) = (goodput(d, 0), goodput(d, 1));
        share.push((b, gb / (gb + gc)));
        fair.push((b, jain(&[gb, gc])));
    }
    share.sort_by(|a, b| a.0.total_cmp(&b.0));
    fair.sort_by(|a, b| a.0.total_cmp(&b.0));
    let show = share
        .iter()
        .map(|p| format!("{:.1} BDP: {:.2}", p.0, p.1))
        .collect::<Vec<_>>()
        .join(", ");
    e.row(
        "BBR's share of goodput by buffer size",
        "fair (≈ 0.5) at BDP-sized buffers; below 0.5 at many BDPs",
        show,
    );
    // "BDP-sized": 1–2 BDP. Fair = Jain ≥ 0.9 for the two flows (shares
    // within about 0.35–0.65).
    let best = fair
        .iter()
        .filter(|p| (0.99..=2.01).contains(&p.0))
        .map(|p| p.1)
        .fold(0.0, f64::max);
    e.check(
        best >= 0.9,
        format!(
            "Jain's index ≥ 0.9 at a buffer of 1–2 BDP (shares within ≈ 0.35–0.65): best {best:.3}"
        ),
    );
    let deep = share.last().map_or(f64::NAN, |p| p.1);
    e.check(
        deep < 0.4,
        format!("at 8 BDP CUBIC takes more than its share: BBR's share {deep:.2} < 0.4 (clearly below 0.5, beyond the ±0.1 a single probing cycle moves it)"),
    );
    let at1 = share
        .iter()
        .find(|p| (p.0 - 1.0).abs() < 0.05)
        .map_or(f64::NAN, |p| p.1);
    e.notes.push(format!("At 0.5–1 BDP BBR takes most of the link (share {at1:.2} at 1 BDP): BBR v1 ignores the losses its 2-BDP cwnd causes in a shallow buffer, while CUBIC backs off; the fair point is at 1.5–2 BDP here."));
    figure(
        dir,
        &mut e,
        "share-vs-buffer",
        "C10: BBR vs CUBIC, 50 Mbit/s, 40 ms: BBR's share vs buffer",
        "buffer (BDP)",
        "BBR share of goodput",
        (true, false),
        &[
            line("bbr share", share),
            line("fair share", vec![(0.5, 0.5), (8.0, 0.5)]),
        ],
        &[],
    )?;
    Ok(e)
}

fn c11(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let var = find(data, &[("flow.algorithm", "bbr-jitter")])?;
    let (gb, gv) = (goodput(bbr, 0), goodput(var, 0));
    e.row("bbr goodput", "≈ 0.5 Mbit/s", format!("{gb:.2} Mbit/s"));
    e.row(
        "bbr-jitter goodput",
        "near 3 Mbit/s",
        format!("{gv:.2} Mbit/s"),
    );
    // bbr "falls to about 0.5": at most 1 Mbit/s (a third of the link;
    // ×2 on a value read off a plot). Variant "near 3": ≥ 2.4 (80 %).
    e.check(
        gb <= 1.0,
        format!("bbr ≤ 1 Mbit/s (published ≈ 0.5, ×2 for a plot reading): {gb:.2}"),
    );
    e.check(
        gv >= 2.4,
        format!("bbr-jitter ≥ 2.4 Mbit/s (80 % of the 3 Mbit/s link): {gv:.2}"),
    );
    e.check(
        gv >= 1.1 * gb,
        format!(
            "bbr-jitter ≥ 1.1 × bbr (the direction of the claim): {:.2}×",
            gv / gb
        ),
    );
    figure(
        dir,
        &mut e,
        "goodput",
        "C11: 3 Mbit/s, RTT ~ Normal(60 ms, 40 ms): goodput (cf. seed 001 fig. 4)",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &[
            line("bbr", series(bbr, 0, "goodput_bps", 1e-6)?),
            line("bbr-jitter", series(var, 0, "goodput_bps", 1e-6)?),
        ],
        &[(bbr.duration_s / 2.0, 0.5), (bbr.duration_s / 2.0, 3.0)],
    )?;
    Ok(e)
}

fn c12(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let curve = |alg: &str| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = data
            .iter()
            .filter(|d| d.param("flow.algorithm") == Some(alg))
            .map(|d| (param_f64(d, "link.forward.jitter.normal.sd"), goodput(d, 0)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let (bbr, var) = (curve("bbr"), curve("bbr-jitter"));
    let show = |c: &[(f64, f64)]| {
        c.iter()
            .map(|p| format!("{:.0} ms: {:.2}", p.0, p.1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    e.row(
        "bbr goodput by RTT sd (Mbit/s)",
        "degrades from 20 ms; ≈ 0.5 beyond 30 ms",
        show(&bbr),
    );
    e.row(
        "bbr-jitter goodput by RTT sd (Mbit/s)",
        "≈ 2.55 on average",
        show(&var),
    );
    let beyond: Vec<f64> = bbr.iter().filter(|p| p.0 > 30.0).map(|p| p.1).collect();
    let bbr_beyond = beyond.iter().sum::<f64>() / beyond.len().max(1) as f64;
    let var_mean = var.iter().map(|p| p.1).sum::<f64>() / var.len().max(1) as f64;
    e.check(bbr_beyond <= 1.0, format!("bbr ≤ 1 Mbit/s on average beyond 30 ms (published ≈ 0.5, ×2 for a plot reading): {bbr_beyond:.2}"));
    // ±15 % around the published 2.55 average.
    e.check(
        (var_mean / 2.55 - 1.0).abs() <= 0.15,
        format!("bbr-jitter averages 2.55 Mbit/s ± 15 % over the sweep: {var_mean:.2}"),
    );
    figure(
        dir,
        &mut e,
        "goodput-vs-sd",
        "C12: 3 Mbit/s, 60 ms mean RTT: goodput vs RTT standard deviation (cf. seed 001 fig. 5)",
        "RTT standard deviation (ms)",
        "goodput (Mbit/s)",
        (false, false),
        &[line("bbr", bbr), line("bbr-jitter", var)],
        &[(40.0, 0.5), (50.0, 0.5), (60.0, 0.5)],
    )?;
    Ok(e)
}

fn c13(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let var = find(data, &[("flow.algorithm", "bbr-jitter")])?;
    // The wave starts high (10 Mbit/s) for 10 s, then low for 10 s.
    let converge = |d: &RunData| -> Result<(f64, f64), String> {
        let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
        let mut drops = Vec::new();
        let mut rises = Vec::new();
        let mut t = 10.0;
        while t + 10.0 <= d.duration_s {
            let low = bw
                .iter()
                .find(|p| p.0 >= t && p.1 <= 5.5)
                .map_or(10.0, |p| p.0 - t);
            drops.push(low);
            if t + 20.0 <= d.duration_s {
                let high = bw
                    .iter()
                    .find(|p| p.0 >= t + 10.0 && p.1 >= 9.0)
                    .map_or(10.0, |p| p.0 - t - 10.0);
                rises.push(high);
            }
            t += 20.0;
        }
        let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        Ok((avg(&drops), avg(&rises)))
    };
    let (db, rb) = converge(bbr)?;
    let (dv, rv) = converge(var)?;
    e.row(
        "time to follow a drop (bw estimate within 10 % of 5 Mbit/s), bbr / variant",
        "variant ≈ half of bbr",
        format!("{db:.2} s / {dv:.2} s"),
    );
    e.row(
        "time to follow a rise (bw estimate ≥ 90 % of 10 Mbit/s), bbr / variant",
        "both quick",
        format!("{rb:.2} s / {rv:.2} s"),
    );
    // Both quick on rises: within 3 s, as in C4.
    e.check(
        rb <= 3.0 && rv <= 3.0,
        format!("both follow rises within 3 s (as C4): {rb:.2}, {rv:.2}"),
    );
    // "About half": the variant at most 0.7 × bbr's drop time.
    e.check(
        dv <= 0.7 * db,
        format!(
            "the variant follows drops in ≤ 0.7 × bbr's time (published ≈ 0.5×): {:.2}×",
            dv / db
        ),
    );
    figure(
        dir,
        &mut e,
        "bandwidth",
        "C13: square wave 5 ↔ 10 Mbit/s, 60 ms: bw estimate (cf. seed 001 fig. 6)",
        "time (s)",
        "Mbit/s",
        (false, false),
        &[
            line("bbr bw estimate", series(bbr, 0, "bw_estimate_bps", 1e-6)?),
            line(
                "bbr-jitter bw estimate",
                series(var, 0, "bw_estimate_bps", 1e-6)?,
            ),
        ],
        &[],
    )?;
    Ok(e)
}

fn c14(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let with = find(
        data,
        &[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "true")],
    )?;
    let without = find(
        data,
        &[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "false")],
    )?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (gw, go, gc) = (goodput(with, 0), goodput(without, 0), goodput(cubic, 0));
    e.row(
        "bbr without / with extra_acked",
        "73 / 102 Mbit/s (0.72); 362 / 593 (0.61)",
        format!("{go:.1} / {gw:.1} Mbit/s ({:.2})", go / gw),
    );
    e.row(
        "bbr with extra_acked / cubic",
        "102 / 100 (1.02); 593 / 601 (0.99)",
        format!("{gw:.1} / {gc:.1} Mbit/s ({:.2})", gw / gc),
    );
    // Without extra_acked clearly cwnd-limited: ≤ 0.9 × with (published
    // 0.61–0.72 on real Wi-Fi, whose aggregation pattern we only model as
    // a fixed 20 ms release interval).
    e.check(go <= 0.9 * gw, format!("without extra_acked ≤ 0.9 × with (published 0.61–0.72; our aggregation is a fixed 20 ms interval): {:.2}", go / gw));
    // With it, BBR matches CUBIC: within 10 %.
    e.check(
        gw >= 0.9 * gc,
        format!(
            "with extra_acked ≥ 0.9 × CUBIC (published 0.99–1.02): {:.2}",
            gw / gc
        ),
    );
    figure(
        dir,
        &mut e,
        "goodput",
        "C14: ACKs released every 20 ms, 100 Mbit/s, 10 ms: goodput",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &[
            line(
                "bbr with extra_acked",
                series(with, 0, "goodput_bps", 1e-6)?,
            ),
            line(
                "bbr without extra_acked",
                series(without, 0, "goodput_bps", 1e-6)?,
            ),
            line("cubic", series(cubic, 0, "goodput_bps", 1e-6)?),
        ],
        &[],
    )?;
    Ok(e)
}
