//! The BBRv3 results (V1 …; issue 22, item 6): what BBRv3's authors and
//! independent evaluations published about v3, each run with `bbr3` and,
//! on the same scenario, v1 `bbr` as the comparison. They are a suite of
//! their own in the report, after the claims C1–C14 (which stay the v1
//! paper's), and use the claims' machinery: a scenario in
//! `scenarios/bbr3/`, metadata in `scenarios/bbr3/meta/` (the published
//! text, the documents cited as `[TAG]`, the analysis of a miss), an
//! evaluation module here whose checks are
//! [`Tolerance`](crate::tolerance::Tolerance)s with their reasons, and a
//! figure.
//!
//! Most of what was published about v3 comes from real networks,
//! emulators, or a production traffic mix (IETF 117's "12 % fewer
//! retransmissions" has no path at all), and the papers' per-point values
//! could not be read; so most checks are about the shape (v3 below v1,
//! where a curve bends) and the ranges come from the draft's own design
//! numbers (the 2 % loss bound, ProbeRTT's 5 s and half a BDP) where it
//! gives one. Each tolerance says which.

use crate::claim::{source, Source};
use crate::runs::RunData;

pub mod v1_shallow_retransmissions;
pub mod v2_cubic_sharing;
pub mod v3_random_loss;
pub mod v4_probe_rtt;
pub mod v5_ecn_codel;
pub mod v6_ecn_step;

#[cfg(test)]
mod tests;

/// A result's files, from `scenarios/bbr3/`.
macro_rules! result {
    ($module:ident, $file:literal) => {
        source!($module, "bbr3", $file)
    };
}

/// Every BBRv3 result, in order.
pub(crate) const SOURCES: [Source; 6] = [
    result!(v1_shallow_retransmissions, "v1-shallow-retransmissions"),
    result!(v2_cubic_sharing, "v2-cubic-sharing"),
    result!(v3_random_loss, "v3-random-loss"),
    result!(v4_probe_rtt, "v4-probe-rtt"),
    result!(v5_ecn_codel, "v5-ecn-codel"),
    result!(v6_ecn_step, "v6-ecn-step"),
];

/// The two algorithms every result compares: v1 and v3.
pub(crate) const V1: &str = "bbr";
/// BBRv3.
pub(crate) const V3: &str = "bbr3";

/// The runs whose sweep parameter `key` is `alg` (`flow.algorithm` or
/// `flow.0.algorithm` = `bbr` or `bbr3`).
pub(crate) fn runs_of<'a>(data: &'a [RunData], key: &str, alg: &str) -> Vec<&'a RunData> {
    data.iter().filter(|d| d.param(key) == Some(alg)).collect()
}

/// `(x, y)` of each run, sorted by x.
pub(crate) fn curve(
    runs: &[&RunData],
    x: impl Fn(&RunData) -> f64,
    y: impl Fn(&RunData) -> f64,
) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = runs.iter().map(|d| (x(d), y(d))).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// The y of the point at x (within a relative 1e-6), NaN if there is none.
pub(crate) fn at(curve: &[(f64, f64)], x: f64) -> f64 {
    curve
        .iter()
        .find(|p| (p.0 - x).abs() <= 1e-6 * x.abs().max(1.0))
        .map_or(f64::NAN, |p| p.1)
}

/// A curve as "x: y" pairs for a row of the table.
pub(crate) fn show(curve: &[(f64, f64)], x_unit: &str, y: impl Fn(f64) -> String) -> String {
    curve
        .iter()
        .map(|p| format!("{}{x_unit}: {}", trim(p.0), y(p.1)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A number without trailing zeros (0.10 → 0.1, 2.00 → 2).
pub(crate) fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
