//! What C11 and C12 share: seed 001's jitter experiment measured on the
//! authors' stack, each sweep point over its seeds, and the tolerance on
//! bbr's collapse that both claims state.

use crate::runs::goodput;
use crate::seeds::Point;
use crate::tolerance::{Range, Tolerance};
use runner::stats::Stats;

/// C11 and C12's primary setup, the authors' (seed 001): QUIC's stack of
/// 2018 (`stack = "quic-2018"`) with per-packet delays drawn independently,
/// so packets reorder, as a netem-style impairment emulator does.
pub(crate) const PRIMARY_STACK: &str = "quic-2018";

/// bbr's goodput under heavy jitter as published, Mbit/s.
pub(crate) const PUBLISHED_BBR_MBPS: f64 = 0.5;

/// bbr's mean goodput over the published ≈ 0.5 Mbit/s, under heavy
/// jitter: a value read off a plot.
pub const BBR_COLLAPSES: Tolerance = Tolerance::new(Range::at_most(2.0), "a value read off a plot");

/// The goodput, retransmission and srtt-use statistics of one C11/C12
/// point over its seeds.
pub(crate) struct JitterPoint {
    pub goodput: Stats,
    pub retx_pct: Stats,
    pub srtt_pct: Stats,
}

impl JitterPoint {
    pub fn of(p: &Point<'_>) -> JitterPoint {
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
    pub fn show(&self) -> String {
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
pub(crate) fn jitter_point<'a, 'b>(
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

/// The name of bbr's published goodput in a check's sentence.
pub(crate) fn published_bbr() -> String {
    format!("the published {PUBLISHED_BBR_MBPS} Mbit/s")
}
