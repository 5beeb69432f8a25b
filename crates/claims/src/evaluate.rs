//! The published claims C1–C14 (../shared/CLAIMS.md): their scenarios,
//! the published figures, how each is measured from the simulation, and the
//! tolerance each verdict uses, with the reason for that tolerance written
//! next to it.
//!
//! Where a published figure came from a real network, the checks are about
//! the shape (who wins, by roughly how much, where the curve bends), as
//! CLAIMS.md asks. A claim the model does not reproduce keeps its check and
//! carries an analysis of why.

use crate::reproduce::RunData;
use figures::{self as plots, Band, Figure, Series, Table};
use runner::stats::{self, Stats};
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
        // The full 3600 s: the steady state needs it, and the 18 runs at
        // 128 kbit/s simulate in about a second.
        quick_seconds: None,
        evaluate: c07,
        analysis: None,
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
        analysis: Some(C13_ANALYSIS),
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

const C13_ANALYSIS: &str = "Not reproduced over 8 seeds on the authors' stack (QUIC 2018's BBR and its RTT statistics): the variant follows drops in about the same time as bbr (see the table and the per-seed note). The variant departs from bbr only while rttvar > γ·srtt (seed 001 eqs. 10–11, γ = 0.3). On this path the only RTT variation is the queue BBR itself builds after a drop and drains after a rise; srtt and rttvar are updated on every ACK, hundreds a second, so a queue that grows over a few hundred milliseconds moves srtt in small steps and rttvar exceeds 0.3·srtt only briefly (the share of time on srtt above, about 1.4 %). Nor would the rule halve the drop time if it held throughout: bbr follows a drop when the old 10 Mbit/s maximum ages out of its bandwidth filter, which spans the gain cycle + 2 rounds; the variant's 5-phase cycle shortens that from 10 to 7 rounds (QUIC's window follows the cycle), at best 0.7× in rounds, while its srtt-based BDP keeps a longer queue, which lengthens every round. With γ forced to 10⁻⁶ (srtt all the time; pinned by the test c13_variant_forced_onto_srtt_does_not_halve_drop_convergence) the variant follows drops no faster than bbr, mean over 8 seeds: 2.1 s against 1.9 s on the QUIC stack, 2.4 s against 1.7 s on the Linux stack. The seed states no RTT noise for this experiment; the published halving needs either noise that keeps rttvar above 0.3·srtt or a mechanism beyond eqs. 10–11.";

const JITTER_ANALYSIS: &str = "Half reproduced, on the authors' own stack. With QUIC 2018's BBR, RTT statistics and loss detection (`stack = \"quic-2018\"`) and each packet's delay drawn independently, bbr behaves as published: it degrades from 20 ms of standard deviation and sits near 0.4 Mbit/s beyond 30 ms (C12), 0.44 Mbit/s at 40 ms (C11), because its min_rtt collapses to the few-millisecond floor and the 4-packet window bounds it. The variant does switch to srtt (95 % of the time at 40 ms) and beats bbr by about 3×, but stays near 1.3 Mbit/s, not near 3: independently drawn delays reorder packets by ~10 packets at 3 Mbit/s, and QUIC 2018's loss detection (a fixed 3-packet threshold from the largest newly acknowledged packet, no undo) retransmits about 39 % of packets needlessly, which caps goodput at 0.61 × 3 = 1.8 Mbit/s whatever the BDP rule; and its srtt, fed only by the largest-acknowledged packets, which under reordering are the ones that overtook others, sits near 26 ms rather than the 60 ms mean. No other setup the seed leaves open gives both halves (rows above, 8 seeds each): reorder-free delays keep min_rtt near 40 ms, so bbr does not collapse (2.3 Mbit/s on QUIC 2018, 2.8 on Linux TCP); delay on the ACK path instead leaves both near 2.9 Mbit/s (measured with this model, 8 seeds); and Linux TCP with independent delays spends 34–42 % of its packets on spurious retransmissions despite RACK and undo (bbr 1.4, variant 1.8 Mbit/s: what an operator running Linux would see). The published variant needs a stack that neither retransmits reordered packets nor underestimates srtt under reordering, which the seed does not describe.";

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
    figure_bands(
        dir,
        eval,
        stem,
        title,
        (x_label, y_label),
        (log_x, log_y),
        series,
        &[],
        published,
    )
}

fn line(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        label: label.to_string(),
        points,
    }
}

/// [`runner::stats::quantile`], NaN for no samples: a missing measurement
/// drops out of a mean instead of failing the claim's arithmetic.
fn quantile(v: &mut [f64], q: f64) -> f64 {
    stats::quantile(v, q).unwrap_or(f64::NAN)
}

// ----- several seeds -------------------------------------------------------

/// Which spread a band shows around the mean.
#[allow(dead_code)] // StdDev is for C11/C12's sweeps (issue 12, item 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spread {
    /// From the smallest to the largest seed's value.
    MinMax,
    /// ± one sample standard deviation.
    StdDev,
}

/// The runs of one sweep point, over its seeds.
struct Point<'a> {
    /// The point's sweep parameters, `seed` left out.
    params: Vec<(String, String)>,
    /// Its runs, one per seed, in run order.
    runs: Vec<&'a RunData>,
}

impl Point<'_> {
    /// The value of sweep parameter `key` at this point.
    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `f` of each run, over the seeds.
    fn stats(&self, f: impl Fn(&RunData) -> f64) -> Stats {
        Stats::of(&self.runs.iter().map(|d| f(d)).collect::<Vec<_>>())
    }
}

/// Groups runs by every sweep parameter except `seed` (a sweep key
/// `seed = [1, 2, …]` gives one run per seed), in order of first
/// appearance, so a claim can judge each point by its mean over seeds.
fn by_point(data: &[RunData]) -> Vec<Point<'_>> {
    group_except_seed(data, |d| &d.params)
        .into_iter()
        .map(|(params, runs)| Point { params, runs })
        .collect()
}

/// [`by_point`]'s grouping for anything with sweep parameters.
#[allow(clippy::type_complexity)]
fn group_except_seed<T>(
    items: &[T],
    params: impl Fn(&T) -> &[(String, String)],
) -> Vec<(Vec<(String, String)>, Vec<&T>)> {
    let mut groups: Vec<(Vec<(String, String)>, Vec<&T>)> = Vec::new();
    for item in items {
        let key: Vec<(String, String)> = params(item)
            .iter()
            .filter(|(k, _)| k != "seed")
            .cloned()
            .collect();
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(item),
            None => groups.push((key, vec![item])),
        }
    }
    groups
}

/// A band of the mean at each x with the chosen spread around it; points
/// without a finite mean are left out.
pub(crate) fn band(label: &str, points: &[(f64, Stats)], spread: Spread) -> Band {
    let mut pts: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .filter(|(x, s)| x.is_finite() && s.n > 0)
        .map(|&(x, s)| match spread {
            Spread::MinMax => (x, s.mean, s.min, s.max),
            Spread::StdDev => (x, s.mean, s.mean - s.sd, s.mean + s.sd),
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    Band {
        label: label.to_string(),
        points: pts,
    }
}

/// Like [`figure`], with spread bands drawn after the series.
#[allow(clippy::too_many_arguments)]
fn figure_bands(
    dir: &Path,
    eval: &mut Eval,
    stem: &str,
    title: &str,
    (x_label, y_label): (&str, &str),
    (log_x, log_y): (bool, bool),
    series: &[Series],
    bands: &[Band],
    published: &[(f64, f64)],
) -> Result<(), String> {
    plots::figure_with_bands(
        &Figure {
            stem: &dir.join(stem),
            title,
            x_label,
            y_label,
            log_x,
            log_y,
            series,
            published,
        },
        bands,
    )?;
    eval.figures.push(stem.to_string());
    Ok(())
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

/// C7's path: one 1500-byte packet takes 93.75 ms at 128 kbit/s.
const C7_PACKET_S: f64 = 1500.0 * 8.0 / 128e3;
/// C7's propagation RTT.
const C7_PROP_S: f64 = 0.040;
/// C7's flows.
const C7_FLOWS: f64 = 8.0;

/// One C7 run's steady state: RTT samples (every flow's latest RTT, at each
/// sample time) from the second half of the run.
struct C7Point {
    /// Buffer, packets.
    buffer: f64,
    /// Median RTT over the second half, s.
    median: f64,
    /// 25th and 75th percentiles over the second half, s.
    p25: f64,
    p75: f64,
    /// Medians of the third and the fourth quarter, s: equal when the
    /// second half is past the start-up transient.
    q3: f64,
    q4: f64,
}

fn c07_point(d: &RunData) -> Result<C7Point, String> {
    let (t, p) = flows_table(d)?;
    let rtt = t.points(&p, "time_s", "rtt_ms", None)?;
    let half = d.duration_s / 2.0;
    let window = |from: f64, to: f64| -> Vec<f64> {
        rtt.iter()
            .filter(|s| s.0 >= from && s.0 < to)
            .map(|s| s.1 / 1000.0)
            .collect()
    };
    let mut second = window(half, f64::INFINITY);
    if second.is_empty() {
        return Err(format!(
            "{}: no RTT samples in the second half (is sample_interval 0?)",
            d.dir.display()
        ));
    }
    Ok(C7Point {
        buffer: param_f64(d, "link.forward.queue.limit"),
        median: quantile(&mut second, 0.5),
        p25: quantile(&mut second, 0.25),
        p75: quantile(&mut second, 0.75),
        q3: quantile(&mut window(half, 1.5 * half), 0.5),
        q4: quantile(&mut window(1.5 * half, f64::INFINITY), 0.5),
    })
}

fn c07(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let curve = |alg: &str| -> Result<Vec<C7Point>, String> {
        let mut v = data
            .iter()
            .filter(|d| d.param("flow.algorithm") == Some(alg))
            .map(c07_point)
            .collect::<Result<Vec<_>, _>>()?;
        v.sort_by(|a, b| a.buffer.total_cmp(&b.buffer));
        Ok(v)
    };
    let (bbr, cubic) = (curve("bbr")?, curve("cubic")?);
    if bbr.is_empty() || bbr.len() != cubic.len() {
        return Err(format!(
            "C7 needs the same buffers for bbr and cubic: {} and {} runs",
            bbr.len(),
            cubic.len()
        ));
    }
    let duration = data.first().map_or(0.0, |d| d.duration_s);
    let show = |c: &[C7Point]| {
        c.iter()
            .map(|p| format!("{:.0}: {}", p.buffer, secs(p.median)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    e.row(
        &format!("BBR median RTT by buffer (packets), second half of a {duration:.0} s run"),
        "near the minimum at every size",
        show(&bbr),
    );
    e.row(
        &format!("CUBIC median RTT by buffer (packets), second half of a {duration:.0} s run"),
        "grows linearly",
        show(&cubic),
    );
    // The RTT of a packet behind a full buffer of b packets: b packets
    // ahead of it, its own serialisation, and the propagation RTT.
    let full = |b: f64| (b + 1.0) * C7_PACKET_S + C7_PROP_S;
    // BBR's floor: 8 flows × Linux's 4-packet minimum cwnd always queued.
    let floor_pkts = C7_FLOWS * 4.0;
    let floor = full(floor_pkts);
    e.row(
        "BBR's least possible RTT with 8 flows (4-packet minimum cwnd each, 32 packets queued)",
        "—",
        secs(floor),
    );

    // Steady state: the medians of the third and fourth quarters agree
    // within 10 %. Tolerance: with 8 unsynchronised flows CUBIC's sawtooth
    // and BBR's PROBE_RTT episodes move a quarter's median by a few per
    // cent; the start-up transient moves it by 2× or more (CUBIC needs
    // ≈ 900 s to fill 4000 packets).
    let worst_q = bbr
        .iter()
        .chain(&cubic)
        .map(|p| (p.q4 / p.q3).max(p.q3 / p.q4))
        .fold(1.0, f64::max);
    e.check(
        worst_q <= 1.10,
        format!("steady state: in every run the medians of the third and fourth quarters agree within 10 % (sawtooth and PROBE_RTT move a quarter's median by a few %, the start-up transient by 2× or more): worst ratio {worst_q:.3}"),
    );

    // BBR flat: over the buffers that can hold its floor (more than 32
    // packets), the largest median is at most 1.25 × the smallest.
    // Tolerance: "flat" is read off a log-log plot over two decades of
    // buffer where CUBIC's curve spans 80×; 25 % is a hair on that scale,
    // and it leaves room for BBR's PROBE_RTT episodes, which shift with the
    // buffer's drops at the smaller sizes.
    let above: Vec<&C7Point> = bbr.iter().filter(|p| p.buffer > floor_pkts).collect();
    let (lo, hi) = above.iter().fold((f64::INFINITY, 0.0f64), |(l, h), p| {
        (l.min(p.median), h.max(p.median))
    });
    let flat = hi / lo;
    e.check(
        above.len() >= 3 && flat <= 1.25,
        format!(
            "BBR flat: over the {} buffers above its 32-packet floor ({:.0}–{:.0} packets) its largest median RTT ≤ 1.25 × its smallest (\"flat\" on the paper's log-log axes, where CUBIC spans two decades): {} / {} = {flat:.2}",
            above.len(),
            above.first().map_or(f64::NAN, |p| p.buffer),
            above.last().map_or(f64::NAN, |p| p.buffer),
            secs(hi),
            secs(lo),
        ),
    );
    // Near the minimum: within 1.5 × the least RTT 8 BBR flows can have.
    // Tolerance: the floor's queue inflates every flow's min_rtt, so
    // 2 × bw × min_rtt exceeds 4 packets and the 1.25-gain probing phases
    // add to the queue; a buffer-filling sender is 100× above the floor at
    // 4000 packets.
    e.check(
        hi <= 1.5 * floor,
        format!(
            "BBR near its least possible RTT: every median above the floor ≤ 1.5 × {} (the floor's queue inflates min_rtt and so cwnd; probing adds a little): worst {} ({:.2}×)",
            secs(floor),
            secs(hi),
            hi / floor
        ),
    );
    // At the largest buffer BBR's RTT is at most a tenth of CUBIC's: the
    // order of magnitude the paper's log axis shows, stated by the issue.
    let (lb, lc) = (bbr[bbr.len() - 1].median, cubic[cubic.len() - 1].median);
    e.row(
        &format!(
            "at the largest buffer ({:.0} packets), BBR / CUBIC",
            bbr[bbr.len() - 1].buffer
        ),
        "≪ 1 (an order of magnitude or more)",
        format!("{} / {} = {:.3}", secs(lb), secs(lc), lb / lc),
    );
    e.check(
        lb <= 0.1 * lc,
        format!(
            "BBR ≤ 0.1 × CUBIC at the largest buffer (an order of magnitude, as the paper's log axis shows): {:.3}",
            lb / lc
        ),
    );
    // CUBIC grows with the buffer: strictly, from each size to the next.
    let monotone = cubic.windows(2).all(|w| w[1].median > w[0].median);
    e.check(
        monotone,
        format!(
            "CUBIC's median RTT grows with every step of the buffer: {}",
            show(&cubic)
        ),
    );
    // Linearly: at every size the median is 0.7–1.01 × the RTT behind a
    // full buffer. Tolerance: CUBIC fills the buffer until a drop and then
    // cuts cwnd to β = 0.7, so even a cut of all flows at once leaves the
    // queue ≥ 70 % full (the path's BDP, 2 kB, is nothing next to the
    // buffer); no packet waits behind more than a full buffer (1 % for
    // sampling and rounding).
    let ratios: Vec<f64> = cubic.iter().map(|p| p.median / full(p.buffer)).collect();
    let (rlo, rhi) = ratios
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
    e.check(
        (0.7..=1.01).contains(&rlo) && (0.7..=1.01).contains(&rhi),
        format!(
            "CUBIC linear in the buffer: at every size its median is 0.7–1.01 × the RTT behind a full buffer ((b + 1) × 93.75 ms + 40 ms; CUBIC's β = 0.7 cut leaves the buffer ≥ 70 % full): {rlo:.2}–{rhi:.2}"
        ),
    );
    let identical = bbr
        .windows(2)
        .filter(|w| w[0].buffer > floor_pkts && w[0].median == w[1].median && w[0].p75 == w[1].p75)
        .count();
    e.notes.push(format!(
        "Each median is taken over the second half of a {duration:.0} s run, from every flow's latest RTT sample every {} (flows.csv), after the start-up transient; the band is the 25–75 % range of those samples. Below 32 packets (8 flows × Linux's 4-packet minimum cwnd) no sender can keep the buffer from filling, so BBR and CUBIC coincide there. Above it BBR's level is set by that floor, {}, not by the path's 134 ms minimum: at 128 kbit/s a 1500-byte packet takes 94 ms to send, so the path's BDP (2 kB) is far below one packet per flow. The paper does not state its packet size or minimum window.{}",
        data.first()
            .and_then(sample_interval)
            .map_or("sample".to_string(), |s| format!("{s} s")),
        secs(floor),
        if identical > 0 {
            " BBR's runs with the largest buffers are identical to each other: its queue never reaches them, so the buffer size makes no difference at all."
        } else {
            ""
        }
    ));
    let to_band = |label: &str, c: &[C7Point]| Band {
        label: label.to_string(),
        points: c
            .iter()
            .map(|p| (p.buffer, p.median, p.p25, p.p75))
            .collect(),
    };
    figure_bands(
        dir,
        &mut e,
        "rtt-vs-buffer",
        "C7: 8 flows, 128 kbit/s, 40 ms: steady-state median RTT vs buffer (cf. seed 000 fig. 10)",
        ("buffer (1500-byte packets)", "RTT (s), median and 25–75 %"),
        (true, true),
        &[line(
            "RTT behind a full buffer",
            cubic.iter().map(|p| (p.buffer, full(p.buffer))).collect(),
        )],
        &[
            to_band("bbr (median, 25–75 % of samples)", &bbr),
            to_band("cubic (median, 25–75 % of samples)", &cubic),
        ],
        &[],
    )?;
    Ok(e)
}

/// Seconds with precision that suits RTTs from 0.1 s to minutes.
fn secs(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.2} s")
    }
}

/// The run's time-series interval in s, read from its first two samples.
fn sample_interval(d: &RunData) -> Option<f64> {
    let (t, p) = flows_table(d).ok()?;
    let ts = t.points(&p, "time_s", "flow", Some(("flow", "0"))).ok()?;
    Some(ts.get(1)?.0 - ts.first()?.0)
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

/// C11 and C12's primary setup, the authors' (seed 001): QUIC's stack of
/// 2018 (`stack = "quic-2018"`) with per-packet delays drawn independently,
/// so packets reorder, as a netem-style impairment emulator does.
const JITTER_PRIMARY_STACK: &str = "quic-2018";

/// The goodput, retransmission and srtt-use statistics of one C11/C12
/// point over its seeds.
struct JitterPoint {
    goodput: Stats,
    retx_pct: Stats,
    srtt_pct: Stats,
}

impl JitterPoint {
    fn of(p: &Point<'_>) -> JitterPoint {
        JitterPoint {
            goodput: p.stats(|d| goodput(d, 0)),
            retx_pct: p.stats(|d| {
                d.summary
                    .flows
                    .first()
                    .map_or(f64::NAN, |f| 100.0 * f.retransmission_rate)
            }),
            srtt_pct: p.stats(|d| {
                d.summary
                    .flows
                    .first()
                    .and_then(|f| f.time_using_srtt)
                    .map_or(f64::NAN, |x| 100.0 * x)
            }),
        }
    }

    /// "goodput Mbit/s; retransmitted %; on srtt %" for a table cell.
    fn show(&self) -> String {
        let mut s = format!(
            "{} Mbit/s; {:.0} % retransmitted",
            self.goodput.show(2),
            self.retx_pct.mean
        );
        if self.srtt_pct.n > 0 {
            s.push_str(&format!(
                "; BDP on srtt {:.0} % of the time",
                self.srtt_pct.mean
            ));
        }
        s
    }
}

/// The point of `alg` on `stack` (and, if given, the reordering setting).
fn jitter_point<'a, 'b>(
    points: &'b [Point<'a>],
    alg: &str,
    stack: &str,
    reorder: Option<&str>,
) -> Result<&'b Point<'a>, String> {
    points
        .iter()
        .find(|p| {
            p.param("flow.algorithm") == Some(alg)
                && p.param("flow.stack") == Some(stack)
                && reorder.is_none_or(|r| p.param("link.forward.jitter.reorder") == Some(r))
        })
        .ok_or_else(|| format!("no runs of {alg} on the {stack} stack (reorder {reorder:?})"))
}

/// Mean and spread over the runs' time series `col` (×`scale`), sample by
/// sample; the runs share a sample interval, so samples align by index.
fn series_stats(runs: &[&RunData], col: &str, scale: f64) -> Result<Vec<(f64, Stats)>, String> {
    let all: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|d| series(d, 0, col, scale))
        .collect::<Result<_, _>>()?;
    let n = all.iter().map(Vec::len).min().unwrap_or(0);
    Ok((0..n)
        .map(|i| {
            let v: Vec<f64> = all.iter().map(|s| s[i].1).collect();
            (all[0][i].0, Stats::of(&v))
        })
        .collect())
}

fn c11(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let points = by_point(data);
    let seeds = points.first().map_or(0, |p| p.runs.len());
    let primary = |alg| jitter_point(&points, alg, JITTER_PRIMARY_STACK, Some("true"));
    let (b, v) = (primary("bbr")?, primary("bbr-jitter")?);
    let (jb, jv) = (JitterPoint::of(b), JitterPoint::of(v));
    e.row(
        &format!("bbr, QUIC 2018 stack, independent delays ({seeds} seeds)"),
        "≈ 0.5 Mbit/s",
        jb.show(),
    );
    e.row(
        &format!("bbr-jitter, QUIC 2018 stack, independent delays ({seeds} seeds)"),
        "near 3 Mbit/s",
        jv.show(),
    );
    // The verdict uses the means over the seeds. bbr "falls to about 0.5":
    // at most 1 Mbit/s (a third of the link; ×2 on a value read off a
    // plot). Variant "near 3": ≥ 2.4 (80 %).
    let (gb, gv) = (jb.goodput.mean, jv.goodput.mean);
    e.check(
        gb <= 1.0,
        format!("bbr mean ≤ 1 Mbit/s (published ≈ 0.5, ×2 for a plot reading): {gb:.2}"),
    );
    e.check(
        gv >= 2.4,
        format!("bbr-jitter mean ≥ 2.4 Mbit/s (80 % of the 3 Mbit/s link): {gv:.2}"),
    );
    e.check(
        gv >= 1.1 * gb,
        format!(
            "bbr-jitter mean ≥ 1.1 × bbr's (the direction of the claim): {:.2}×",
            gv / gb
        ),
    );
    // The second, clearly labelled result: Linux TCP on the same jitter,
    // and each stack without reordering, which the seed does not exclude.
    for (stack, reorder, label) in [
        (
            "linux",
            "true",
            "Linux TCP stack, independent delays (what an operator running Linux would see)",
        ),
        ("quic-2018", "false", "QUIC 2018 stack, reorder-free delays"),
        ("linux", "false", "Linux TCP stack, reorder-free delays"),
    ] {
        let b = JitterPoint::of(jitter_point(&points, "bbr", stack, Some(reorder))?);
        let v = JitterPoint::of(jitter_point(&points, "bbr-jitter", stack, Some(reorder))?);
        e.row(
            &format!("{label}: bbr | bbr-jitter"),
            "not in the seed",
            format!("{} | {}", b.show(), v.show()),
        );
    }
    let linux = |alg| jitter_point(&points, alg, "linux", Some("true"));
    let bands = [
        band(
            "bbr, QUIC 2018 (mean, min–max over seeds)",
            &series_stats(&b.runs, "goodput_bps", 1e-6)?,
            Spread::MinMax,
        ),
        band(
            "bbr-jitter, QUIC 2018 (mean, min–max)",
            &series_stats(&v.runs, "goodput_bps", 1e-6)?,
            Spread::MinMax,
        ),
        band(
            "bbr, Linux TCP (mean, min–max)",
            &series_stats(&linux("bbr")?.runs, "goodput_bps", 1e-6)?,
            Spread::MinMax,
        ),
        band(
            "bbr-jitter, Linux TCP (mean, min–max)",
            &series_stats(&linux("bbr-jitter")?.runs, "goodput_bps", 1e-6)?,
            Spread::MinMax,
        ),
    ];
    let half = b.runs.first().map_or(30.0, |d| d.duration_s / 2.0);
    figure_bands(
        dir,
        &mut e,
        "goodput",
        "C11: 3 Mbit/s, RTT ~ Normal(60 ms, 40 ms) per packet: goodput (cf. seed 001 fig. 4)",
        ("time (s)", "goodput (Mbit/s)"),
        (false, false),
        &[],
        &bands,
        &[(half, 0.5), (half, 3.0)],
    )?;
    Ok(e)
}

/// Seed 001 fig. 5 as CLAIMS.md reads it: bbr near 0.5 Mbit/s beyond
/// 30 ms of RTT sd, (sd ms, Mbit/s); C12's figure and the Linux TCP
/// measurement's draw it.
pub(crate) const C12_PUBLISHED_BBR: [(f64, f64); 3] = [(40.0, 0.5), (50.0, 0.5), (60.0, 0.5)];

fn c12(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let points = by_point(data);
    let seeds = points.first().map_or(0, |p| p.runs.len());
    // (sd, statistics) along the sweep for `alg` on `stack`.
    let curve = |alg: &str, stack: &str| -> Vec<(f64, JitterPoint)> {
        let mut v: Vec<(f64, JitterPoint)> = points
            .iter()
            .filter(|p| {
                p.param("flow.algorithm") == Some(alg) && p.param("flow.stack") == Some(stack)
            })
            .map(|p| {
                (
                    p.runs
                        .first()
                        .map_or(f64::NAN, |d| param_f64(d, "link.forward.jitter.normal.sd")),
                    JitterPoint::of(p),
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let show = |c: &[(f64, JitterPoint)]| {
        c.iter()
            .map(|(sd, p)| format!("{sd:.0} ms: {:.2} ± {:.2}", p.goodput.mean, p.goodput.sd))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (bbr, var) = (
        curve("bbr", JITTER_PRIMARY_STACK),
        curve("bbr-jitter", JITTER_PRIMARY_STACK),
    );
    if bbr.is_empty() || var.is_empty() {
        return Err("C12: no runs on the QUIC 2018 stack".into());
    }
    e.row(
        &format!("bbr, QUIC 2018 stack, by RTT sd (Mbit/s, mean ± sd over {seeds} seeds)"),
        "degrades from 20 ms; ≈ 0.5 beyond 30 ms",
        show(&bbr),
    );
    e.row(
        &format!("bbr-jitter, QUIC 2018 stack, by RTT sd (Mbit/s, mean ± sd over {seeds} seeds)"),
        "≈ 2.55 on average",
        show(&var),
    );
    let (lb, lv) = (curve("bbr", "linux"), curve("bbr-jitter", "linux"));
    e.row(
        "bbr, Linux TCP stack (what an operator running Linux would see)",
        "not in the seed",
        show(&lb),
    );
    e.row("bbr-jitter, Linux TCP stack", "not in the seed", show(&lv));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let beyond: Vec<f64> = bbr
        .iter()
        .filter(|p| p.0 > 30.0)
        .map(|p| p.1.goodput.mean)
        .collect();
    let bbr_beyond = mean(&beyond);
    let var_mean = mean(&var.iter().map(|p| p.1.goodput.mean).collect::<Vec<_>>());
    let retx = mean(
        &var.iter()
            .filter(|p| p.0 > 0.0)
            .map(|p| p.1.retx_pct.mean)
            .collect::<Vec<_>>(),
    );
    e.row(
        "bbr-jitter retransmitted, QUIC 2018 stack, sd > 0 (mean)",
        "not in the seed",
        format!("{retx:.0} %"),
    );
    // The verdict uses the means over the seeds.
    e.check(bbr_beyond <= 1.0, format!("bbr ≤ 1 Mbit/s on average beyond 30 ms (published ≈ 0.5, ×2 for a plot reading): {bbr_beyond:.2}"));
    // ±15 % around the published 2.55 average: a value read off a plot,
    // and the seed's runs were single runs.
    e.check(
        (var_mean / 2.55 - 1.0).abs() <= 0.15,
        format!("bbr-jitter averages 2.55 Mbit/s ± 15 % over the sweep: {var_mean:.2}"),
    );
    let pts = |c: &[(f64, JitterPoint)]| c.iter().map(|(x, p)| (*x, p.goodput)).collect::<Vec<_>>();
    figure_bands(
        dir,
        &mut e,
        "goodput-vs-sd",
        "C12: 3 Mbit/s, 60 ms mean RTT: goodput vs RTT standard deviation (cf. seed 001 fig. 5)",
        ("RTT standard deviation (ms)", "goodput (Mbit/s)"),
        (false, false),
        &[],
        &[
            band("bbr, QUIC 2018 (mean ± sd)", &pts(&bbr), Spread::StdDev),
            band(
                "bbr-jitter, QUIC 2018 (mean ± sd)",
                &pts(&var),
                Spread::StdDev,
            ),
            band("bbr, Linux TCP (mean ± sd)", &pts(&lb), Spread::StdDev),
            band(
                "bbr-jitter, Linux TCP (mean ± sd)",
                &pts(&lv),
                Spread::StdDev,
            ),
        ],
        &C12_PUBLISHED_BBR,
    )?;
    Ok(e)
}

/// C13's square wave: high (10 Mbit/s) for the first half of each 20 s
/// period, then low (5 Mbit/s).
const C13_HALF_PERIOD_S: f64 = 10.0;

/// How long one C13 run's bandwidth estimate takes to follow each change of
/// the square wave, s (10 s, the rest of the half period, if it never does).
struct C13Times {
    /// After each drop to 5 Mbit/s (at 10, 30, 50 … s): until the estimate
    /// is within 10 % of 5 Mbit/s.
    drops: Vec<f64>,
    /// After each rise to 10 Mbit/s (at 20, 40 … s): until it reaches 90 %.
    rises: Vec<f64>,
}

impl C13Times {
    fn of(bw: &[(f64, f64)], duration: f64) -> C13Times {
        let first = |from: f64, ok: &dyn Fn(f64) -> bool| {
            bw.iter()
                .find(|p| p.0 >= from && ok(p.1))
                .map_or(C13_HALF_PERIOD_S, |p| p.0 - from)
        };
        let mut t = C13_HALF_PERIOD_S;
        let (mut drops, mut rises) = (Vec::new(), Vec::new());
        while t + C13_HALF_PERIOD_S <= duration {
            drops.push(first(t, &|b| b <= 5.5));
            if t + 2.0 * C13_HALF_PERIOD_S <= duration {
                rises.push(first(t + C13_HALF_PERIOD_S, &|b| b >= 9.0));
            }
            t += 2.0 * C13_HALF_PERIOD_S;
        }
        C13Times { drops, rises }
    }
    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }
}

/// Each run of a C13 point: its seed, the run, its bandwidth estimate
/// (Mbit/s over time) and its convergence times.
type C13Runs<'a> = Vec<(String, &'a RunData, Vec<(f64, f64)>, C13Times)>;

fn c13_measure<'a>(p: &Point<'a>) -> Result<C13Runs<'a>, String> {
    p.runs
        .iter()
        .map(|&d| {
            let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
            let times = C13Times::of(&bw, d.duration_s);
            Ok((d.param("seed").unwrap_or("1").to_string(), d, bw, times))
        })
        .collect()
}

fn c13(data: &[RunData], dir: &Path) -> Result<Eval, String> {
    let mut e = Eval::default();
    let points = by_point(data);
    let point = |alg: &str| {
        points
            .iter()
            .find(|p| p.param("flow.algorithm") == Some(alg))
            .ok_or_else(|| format!("C13: no {alg} runs"))
    };
    let (bbr, var) = (point("bbr")?, point("bbr-jitter")?);
    let (mb, mv) = (c13_measure(bbr)?, c13_measure(var)?);
    let per_run = |m: &C13Runs<'_>, f: &dyn Fn(&C13Times) -> &Vec<f64>| {
        Stats::of(
            &m.iter()
                .map(|r| C13Times::mean(f(&r.3)))
                .collect::<Vec<_>>(),
        )
    };
    let (db, dv) = (per_run(&mb, &|t| &t.drops), per_run(&mv, &|t| &t.drops));
    let (rb, rv) = (per_run(&mb, &|t| &t.rises), per_run(&mv, &|t| &t.rises));
    let srtt = var.stats(|d| {
        d.summary
            .flows
            .first()
            .and_then(|f| f.time_using_srtt)
            .unwrap_or(f64::NAN)
    });
    e.row(
        "time to follow a drop (bw estimate within 10 % of 5 Mbit/s), mean over seeds (min–max): bbr / variant",
        "variant ≈ half of bbr",
        format!("{} s / {} s ({:.2}×)", db.show(2), dv.show(2), dv.mean / db.mean),
    );
    e.row(
        "time to follow a rise (bw estimate ≥ 90 % of 10 Mbit/s), mean over seeds (min–max): bbr / variant",
        "both quick",
        format!("{} s / {} s", rb.show(2), rv.show(2)),
    );
    e.row(
        "share of the variant's time with its BDP on srtt (rttvar > γ·srtt, eqs. 10–11), over seeds",
        "— (not reported)",
        format!(
            "{:.2} % ({:.2}–{:.2} %, n = {})",
            srtt.mean * 100.0,
            srtt.min * 100.0,
            srtt.max * 100.0,
            srtt.n
        ),
    );
    // Both quick on rises: the seed mean within 3 s, as in C4 (about 1.5 s
    // published there; a few gain cycles of 60–240 ms).
    e.check(
        rb.mean <= 3.0 && rv.mean <= 3.0,
        format!(
            "both follow rises within 3 s on the mean over seeds (as C4): {:.2} s, {:.2} s",
            rb.mean, rv.mean
        ),
    );
    // "About half": the variant's seed mean at most 0.7 × bbr's. 0.7 leaves
    // room for a published "half" read off one run's curves, while a
    // ratio near 1 (no effect) fails.
    e.check(
        dv.mean <= 0.7 * db.mean,
        format!(
            "the variant follows drops in ≤ 0.7 × bbr's time, mean over {} seeds (published ≈ 0.5× from one run; 0.7 still excludes \"no effect\"): {:.2}×",
            dv.n,
            dv.mean / db.mean
        ),
    );
    // Evidence per seed, and whether the variant ever differed from bbr.
    let mut identical = 0;
    let mut per_seed = Vec::new();
    for (s, _, bw_b, tb) in &mb {
        let Some((_, dvar, bw_v, tv)) = mv.iter().find(|r| &r.0 == s) else {
            continue;
        };
        if bw_b == bw_v {
            identical += 1;
        }
        per_seed.push(format!(
            "seed {s}: {:.2} / {:.2} s (srtt {:.2} %)",
            C13Times::mean(&tb.drops),
            C13Times::mean(&tv.drops),
            dvar.summary
                .flows
                .first()
                .and_then(|f| f.time_using_srtt)
                .map_or(f64::NAN, |x| x * 100.0)
        ));
    }
    e.notes.push(format!(
        "Drop convergence per seed, bbr / variant (mean over the run's drops), with the variant's time on srtt: {}.",
        per_seed.join("; ")
    ));
    let same = if identical == mb.len() && !mb.is_empty() {
        format!(
            "In all {identical} seeds the two bandwidth estimates are identical sample for sample: the variant never left bbr's rules, so the two lines coincide."
        )
    } else {
        format!(
            "The two bandwidth estimates are identical sample for sample in {identical} of {} seeds; in the others the variant's brief spells on srtt ({:.1} % of its time on the mean) set the two runs on different paths, without making either faster.",
            mb.len(),
            srtt.mean * 100.0
        )
    };
    e.notes.push(same.clone());
    let Some((s1, d1, bw1, _)) = mb.first() else {
        return Err("C13: no runs".into());
    };
    let bwv1 = mv
        .iter()
        .find(|r| &r.0 == s1)
        .map_or_else(Vec::new, |r| r.2.clone());
    let rate: Vec<(f64, f64)> = {
        let mut v = Vec::new();
        let mut t = 0.0;
        while t < d1.duration_s {
            let high = ((t / C13_HALF_PERIOD_S) as u64) % 2 == 0;
            let r = if high { 10.0 } else { 5.0 };
            v.push((t, r));
            v.push(((t + C13_HALF_PERIOD_S).min(d1.duration_s), r));
            t += C13_HALF_PERIOD_S;
        }
        v
    };
    let identical_1 = bw1 == &bwv1;
    figure(
        dir,
        &mut e,
        "bandwidth",
        &format!(
            "C13: square wave 5 ↔ 10 Mbit/s, 60 ms, seed {s1}: bw estimate (cf. seed 001 fig. 6){}",
            if identical_1 {
                " — bbr and variant identical"
            } else {
                ""
            }
        ),
        "time (s)",
        "Mbit/s",
        (false, false),
        &[
            line("link rate", rate),
            line(
                if identical_1 {
                    "bbr bw estimate (= bbr-jitter's)"
                } else {
                    "bbr bw estimate"
                },
                bw1.clone(),
            ),
            line("bbr-jitter bw estimate", bwv1),
        ],
        &[],
    )?;
    // Each change of the wave: mean time over seeds with its min–max.
    let events = |m: &C13Runs<'_>, f: &dyn Fn(&C13Times) -> &Vec<f64>, first: f64| {
        let k = m.iter().map(|r| f(&r.3).len()).min().unwrap_or(0);
        (0..k)
            .map(|i| {
                let x = first + 2.0 * C13_HALF_PERIOD_S * i as f64;
                (
                    x,
                    Stats::of(&m.iter().map(|r| f(&r.3)[i]).collect::<Vec<_>>()),
                )
            })
            .collect::<Vec<_>>()
    };
    let n = mb.len();
    figure_bands(
        dir,
        &mut e,
        "convergence",
        &format!("C13: time to follow each change, mean and min–max over {n} seeds"),
        ("time of the change (s)", "time to follow (s)"),
        (false, false),
        &[],
        &[
            band(
                "bbr, drops",
                &events(&mb, &|t| &t.drops, C13_HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr-jitter, drops",
                &events(&mv, &|t| &t.drops, C13_HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr, rises",
                &events(&mb, &|t| &t.rises, 2.0 * C13_HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr-jitter, rises",
                &events(&mv, &|t| &t.rises, 2.0 * C13_HALF_PERIOD_S),
                Spread::MinMax,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates_between_order_statistics() {
        assert!(quantile(&mut [], 0.5).is_nan());
        assert_eq!(quantile(&mut [3.0, 1.0, 2.0], 0.5), 2.0);
        // Even count: halfway between the middle two.
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.5), 2.5);
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.0), 1.0);
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 1.0), 4.0);
        assert_eq!(quantile(&mut [0.0, 10.0], 0.25), 2.5);
    }

    #[test]
    fn stats_leave_out_missing_runs_and_use_the_sample_sd() {
        let s = Stats::of(&[1.0, 2.0, 3.0, f64::NAN]);
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 2.0, 1.0, 3.0));
        // Sample sd of 1, 2, 3 (n − 1): exactly 1.
        assert!((s.sd - 1.0).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0]).sd, 0.0);
        let none = Stats::of(&[f64::NAN]);
        assert_eq!(none.n, 0);
        assert!(none.mean.is_nan());
        assert_eq!(s.show(1), "2.0 (1.0–3.0, n = 3)");
    }

    #[test]
    fn runs_group_by_every_parameter_but_the_seed() {
        let p = |alg: &str, seed: &str| {
            vec![
                ("flow.algorithm".to_string(), alg.to_string()),
                ("seed".to_string(), seed.to_string()),
            ]
        };
        let runs = [
            p("bbr", "1"),
            p("cubic", "1"),
            p("bbr", "2"),
            p("cubic", "2"),
        ];
        let g = group_except_seed(&runs, |r| r);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, vec![("flow.algorithm".into(), "bbr".into())]);
        assert_eq!(g[0].1, vec![&runs[0], &runs[2]]);
        assert_eq!(g[1].1, vec![&runs[1], &runs[3]]);
        // No sweep at all: one group of one.
        let single: [Vec<(String, String)>; 1] = [vec![]];
        assert_eq!(group_except_seed(&single, |r| r).len(), 1);
    }

    #[test]
    fn bands_sort_by_x_and_drop_points_without_runs() {
        let s = Stats::of(&[1.0, 3.0]);
        let b = band(
            "x",
            &[(2.0, s), (1.0, s), (3.0, Stats::of(&[]))],
            Spread::MinMax,
        );
        assert_eq!(b.points, vec![(1.0, 2.0, 1.0, 3.0), (2.0, 2.0, 1.0, 3.0)]);
        let sd = 2f64.sqrt();
        let b = band("x", &[(1.0, s)], Spread::StdDev);
        assert!((b.points[0].2 - (2.0 - sd)).abs() < 1e-12);
        assert!((b.points[0].3 - (2.0 + sd)).abs() < 1e-12);
    }
}
