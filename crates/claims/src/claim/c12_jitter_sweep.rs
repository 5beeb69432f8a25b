//! C12: the jitter sweep, bbr against bbr-jitter (seed 001 fig. 5). As
//! C11, with the RTT standard deviation swept from 0 to 60 ms: BBR
//! degrades from 20 ms and sits near 0.5 Mbit/s beyond 30 ms; the variant
//! stays around 2.55 Mbit/s on average.

use super::jitter::{published_bbr, JitterPoint, BBR_COLLAPSES, PRIMARY_STACK, PUBLISHED_BBR_MBPS};
use crate::figure::figure_bands;
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{param_f64, RunData};
use crate::seeds::{band, by_point, Spread};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// bbr-jitter's mean goodput over the sweep against the published 2.55
/// Mbit/s average: a value read off a plot, and the seed's runs were
/// single runs.
pub const VARIANT_AVERAGE: Tolerance = Tolerance::new(
    Range::near(2.55, 0.15).unit(" Mbit/s"),
    "a value read off a plot, from the seed's single runs",
);

/// The figure with the published values, which the Linux TCP
/// measurement's figure draws too.
pub const FIGURE: &str = "goodput-vs-sd";

/// Judges C12 and draws goodput against the RTT's standard deviation.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
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
        curve("bbr", PRIMARY_STACK),
        curve("bbr-jitter", PRIMARY_STACK),
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
    e.judge(
        "bbr's mean goodput beyond 30 ms of sd, on average,",
        BBR_COLLAPSES.times(PUBLISHED_BBR_MBPS, &published_bbr()),
        &[bbr_beyond],
        format!("{bbr_beyond:.2}"),
    );
    e.judge(
        "bbr-jitter's mean goodput over the sweep",
        &VARIANT_AVERAGE,
        &[var_mean],
        format!("{var_mean:.2}"),
    );
    let pts = |c: &[(f64, JitterPoint)]| c.iter().map(|(x, p)| (*x, p.goodput)).collect::<Vec<_>>();
    figure_bands(
        dir,
        &mut e,
        FIGURE,
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
        &meta.points(FIGURE, None)?,
    )?;
    Ok(e)
}
