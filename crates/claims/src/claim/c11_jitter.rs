//! C11: per-packet RTT jitter, bbr against bbr-jitter (seed 001 fig. 4).
//! On 3 Mbit/s with each packet's RTT drawn from Normal(60 ms, 40 ms),
//! floored at 1 ms, and no loss, BBR falls to about 0.5 Mbit/s because a
//! too-small min_rtt makes cwnd the limit; the jitter-robust variant holds
//! near 3 Mbit/s.
//!
//! The verdict uses the means over the seeds on the authors' stack (QUIC
//! 2018, independently drawn delays); Linux TCP and reorder-free delays
//! are shown as clearly labelled second results.

use super::jitter::{
    jitter_point, published_bbr, JitterPoint, BBR_COLLAPSES, PRIMARY_STACK, PUBLISHED_BBR_MBPS,
};
use crate::figure::figure_bands;
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::RunData;
use crate::seeds::{band, by_point, series_stats, Spread};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// bbr-jitter's mean goodput: "near 3 Mbit/s" on a 3 Mbit/s link.
pub const VARIANT_NEAR_LINK: Tolerance = Tolerance::new(
    Range::at_least(2.4).unit(" Mbit/s"),
    "“near” the 3 Mbit/s link, read off a plot",
);

/// bbr-jitter's mean goodput over bbr's: the direction of the claim.
pub const VARIANT_AHEAD: Tolerance =
    Tolerance::new(Range::at_least(1.1), "the direction of the claim");

/// Judges C11 and draws the goodputs over time with their spread over
/// seeds.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let points = by_point(data);
    let seeds = points.first().map_or(0, |p| p.runs.len());
    let primary = |alg| jitter_point(&points, alg, PRIMARY_STACK, Some("true"));
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
    let (gb, gv) = (jb.goodput.mean, jv.goodput.mean);
    e.judge(
        "bbr's mean goodput",
        BBR_COLLAPSES.times(PUBLISHED_BBR_MBPS, &published_bbr()),
        &[gb],
        format!("{gb:.2}"),
    );
    e.judge(
        "bbr-jitter's mean goodput",
        &VARIANT_NEAR_LINK,
        &[gv],
        format!("{gv:.2}"),
    );
    e.judge(
        "bbr-jitter's mean goodput",
        VARIANT_AHEAD.times(gb, "bbr's"),
        &[gv],
        format!("{:.2}×", gv / gb),
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
    figure_bands(
        dir,
        &mut e,
        "goodput",
        "C11: 3 Mbit/s, RTT ~ Normal(60 ms, 40 ms) per packet: goodput (cf. seed 001 fig. 4)",
        ("time (s)", "goodput (Mbit/s)"),
        (false, false),
        &[],
        &bands,
        &meta.points("goodput", b.runs.first().map(|d| d.duration_s))?,
    )?;
    Ok(e)
}
