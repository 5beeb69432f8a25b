//! C1: goodput under random loss (seed 000 fig. 8; seed 003). BBR stays
//! near link × (1 − p) up to 5 % loss and collapses beyond 15 %; CUBIC is
//! down to a third of the link at 0.01 % and near zero at 1 %.
//!
//! Each loss rate is a run of its own; the checks read each run's goodput
//! over the whole 60 s.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{goodput, param_f64, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The link, Mbit/s.
const LINK: f64 = 100.0;

/// BBR's goodput up to 5 % loss, as a fraction of link × (1 − p), at its
/// worst. PROBE_RTT costs 2 %, each recovery episode conserves packets for
/// a round, and STARTUP on a 100 ms path takes ~1.5 s of the run; "near" in
/// the paper is read off a plot.
pub const NEAR_IDEAL: Tolerance = Tolerance::new(
    Range::at_least(0.85),
    "2 % PROBE_RTT, conservation rounds, STARTUP, and a value read off a plot",
);

/// BBR at 15 % loss, fraction of the link (published ≈ 0.75). The exact
/// knee depends on the testbed's loss recovery (SACK scoreboard, RACK
/// timers), which the paper does not give.
pub const KNEE: Tolerance = Tolerance::new(
    Range::between(0.55, 0.95),
    "published ≈ 0.75; the knee depends on loss recovery, SACK scoreboard and RACK timers, which the paper does not give",
);

/// BBR at 50 % loss, fraction of the link: collapsed.
pub const COLLAPSED: Tolerance = Tolerance::new(
    Range::below(0.1),
    "“collapses”: what is left is lost in the paper's linear axis",
);

/// CUBIC at 0.01 % loss, fraction of the link (published 0.30).
pub const CUBIC_AT_0_01: Tolerance = read_off_log_plot(0.30);

/// CUBIC at 0.1 % loss, fraction of the link (published 0.10).
pub const CUBIC_AT_0_1: Tolerance = read_off_log_plot(0.10);

/// CUBIC at 1 % loss, fraction of the link: "near zero".
pub const CUBIC_NEAR_ZERO: Tolerance = Tolerance::new(
    Range::below(0.05),
    "“near zero” read on the paper's linear axis",
);

/// CUBIC's throughput under random loss scales as p^-0.75 (RFC 9438
/// §5.1), so a value read off the paper's log plot is good to a factor
/// either way.
const fn read_off_log_plot(published: f64) -> Tolerance {
    Tolerance::new(
        Range::factor(published, 2.0),
        "CUBIC's throughput scales as p^-0.75, RFC 9438 §5.1; a value read off a log plot",
    )
}

/// Judges C1 and draws goodput against loss.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
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
    let worst = bbr
        .iter()
        .filter(|p| p.0 <= 5.0 + 1e-9)
        .map(|p| p.1 / (LINK * (1.0 - p.0 / 100.0)))
        .fold(f64::INFINITY, f64::min);
    e.row(
        "BBR goodput for loss ≤ 5 %, worst ratio to link × (1 − p)",
        "≈ 1 (near the maximum)",
        format!("{worst:.3}"),
    );
    e.judge(
        "BBR's goodput as a fraction of link × (1 − p), worst for p ≤ 5 %,",
        &NEAR_IDEAL,
        &[worst],
        format!("{worst:.3}"),
    );
    let b15 = at(&bbr, 15.0) / LINK;
    e.row(
        "BBR at 15 % loss, fraction of link",
        "≈ 0.75",
        format!("{b15:.2}"),
    );
    e.judge(
        "BBR at 15 % loss, as a fraction of the link,",
        &KNEE,
        &[b15],
        format!("{b15:.2}"),
    );
    let b50 = at(&bbr, 50.0) / LINK;
    e.row(
        "BBR at 50 % loss, fraction of link",
        "collapsed",
        format!("{b50:.4}"),
    );
    e.judge(
        "BBR at 50 % loss, as a fraction of the link,",
        &COLLAPSED,
        &[b50],
        format!("{b50:.4}"),
    );
    let c001 = at(&cubic, 0.01) / LINK;
    let c01 = at(&cubic, 0.1) / LINK;
    let c1 = at(&cubic, 1.0) / LINK;
    e.row(
        "CUBIC at 0.01 % / 0.1 % / 1 % loss, fraction of link",
        "0.30 / 0.10 / ≈ 0",
        format!("{c001:.2} / {c01:.3} / {c1:.3}"),
    );
    e.judge(
        "CUBIC at 0.01 % loss, as a fraction of the link,",
        &CUBIC_AT_0_01,
        &[c001],
        format!("{c001:.2}"),
    );
    e.judge(
        "CUBIC at 0.1 % loss, as a fraction of the link,",
        &CUBIC_AT_0_1,
        &[c01],
        format!("{c01:.3}"),
    );
    e.judge(
        "CUBIC at 1 % loss, as a fraction of the link,",
        &CUBIC_NEAR_ZERO,
        &[c1],
        format!("{c1:.3}"),
    );
    let ideal: Vec<(f64, f64)> = bbr
        .iter()
        .map(|p| (p.0, LINK * (1.0 - p.0 / 100.0)))
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
        &meta.points("goodput-vs-loss", None)?,
    )?;
    Ok(e)
}
