//! V6: ECN on a step-marking queue. A queue that marks CE on every
//! ECN-capable packet whose sojourn exceeds a shallow threshold, as DCTCP
//! and L4S queues do (here 1 ms), with 1 and 4 ECN-capable flows of `bbr3`
//! or v1 `bbr` on 100 Mbit/s and a 4 ms round trip: Google's "ecn_bulk"
//! lab test (1 Gbit/s, 1 ms, CE above 242 µs, 1–100 flows) scaled so the
//! threshold is the same quarter of the round trip. Its stated aim: "show
//! ECN support can keep queues very low"; bbr3 should keep the queue near
//! the threshold, where v1, which ignores CE, does not.

use super::{at, curve, runs_of, show, V1, V3};
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{link_series, param_f64, RunData};
use crate::stats::quantile;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The marking threshold, ms.
const THRESHOLD_MS: f64 = 1.0;
/// The link, Mbit/s.
const LINK: f64 = 100.0;
/// The queue is read from here on, after STARTUP (the round trip is 4 ms).
const STEADY_S: f64 = 1.0;

/// bbr3's median queueing delay, as a multiple of the threshold, at each
/// flow count: within a small multiple of it. Google's test plots the
/// median RTT; its threshold-to-RTT ratio is kept here, not its numbers,
/// which were not found. The helper's reading: ≤ ≈ 3 × the threshold.
pub const NEAR_THRESHOLD: Tolerance = Tolerance::new(
    Range::at_most(3.0),
    "“keep queues very low” (Google's ecn_bulk test); no published number, a small multiple of the threshold",
);

/// bbr3's median queueing delay over v1's, at each flow count: lower. v1
/// ignores CE, so the marks cannot hold it back; its queue grows with the
/// number of flows.
pub const BELOW_V1: Tolerance = Tolerance::new(
    Range::below(1.0),
    "v1 ignores CE (Linux tcp_bbr.c); the order, no published value",
);

/// bbr3's total goodput over the link: not a published number but the
/// suite's guard, since a queue kept low by leaving the link idle is not
/// the result. Marking at a shallow threshold keeps a step queue full
/// (DCTCP); 0.85 allows v3's DOWN phase at 0.9 of the rate and its cuts.
pub const LINK_USED: Tolerance = Tolerance::new(
    Range::at_least(0.85).percent(),
    "not published: a low queue from an idle link is not the result; v3's DOWN phase paces at 0.9",
);

/// The median queueing delay of a run after STARTUP, ms.
fn median_delay(d: &RunData) -> f64 {
    let mut v: Vec<f64> = link_series(d, "queue_delay_ms")
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.0 >= STEADY_S)
        .map(|p| p.1)
        .collect();
    quantile(&mut v, 0.5)
}

/// The run's total goodput, Mbit/s.
fn total(d: &RunData) -> f64 {
    d.summary.flows.iter().map(|f| f.goodput_bps / 1e6).sum()
}

/// Judges V6 and draws the median queueing delay against the flow count.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let count = |d: &RunData| param_f64(d, "flow.count");
    let of =
        |alg: &str, y: fn(&RunData) -> f64| curve(&runs_of(data, "flow.algorithm", alg), count, y);
    let (q1, q3) = (of(V1, median_delay), of(V3, median_delay));
    let (g1, g3) = (of(V1, total), of(V3, total));
    let ce = of(V3, |d| {
        let f = &d.summary.flows;
        f.iter().map(|f| f.ce_fraction).sum::<f64>() / f.len().max(1) as f64
    });
    let ms = |x: f64| format!("{x:.2} ms");
    e.row(
        "median queueing delay by flows, v1 bbr",
        "grows with the flows (ignores CE)",
        show(&q1, " flows", ms),
    );
    e.row(
        "median queueing delay by flows, bbr3",
        "near the 1 ms threshold",
        show(&q3, " flows", ms),
    );
    e.row(
        "total goodput by flows, bbr3 / v1 bbr (Mbit/s)",
        "—",
        q3.iter()
            .map(|p| {
                format!(
                    "{:.0} flows: {:.1} / {:.1}",
                    p.0,
                    at(&g3, p.0),
                    at(&g1, p.0)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
    );
    e.row(
        "share of bbr3's delivered packets marked CE, by flows",
        "—",
        show(&ce, " flows", |x| format!("{:.1} %", x * 100.0)),
    );
    e.judge(
        "bbr3's median queueing delay at each flow count",
        NEAR_THRESHOLD.times(THRESHOLD_MS, "the 1 ms threshold"),
        &q3.iter().map(|p| p.1).collect::<Vec<_>>(),
        show(&q3, " flows", ms),
    );
    let ratio: Vec<(f64, f64)> = q3.iter().map(|p| (p.0, p.1 / at(&q1, p.0))).collect();
    e.judge(
        "bbr3's median queueing delay over v1's at each flow count",
        &BELOW_V1,
        &ratio.iter().map(|p| p.1).collect::<Vec<_>>(),
        show(&ratio, " flows", |x| format!("{x:.2}")),
    );
    e.judge(
        "bbr3's total goodput at each flow count",
        LINK_USED.times(LINK, "the 100 Mbit/s link"),
        &g3.iter().map(|p| p.1).collect::<Vec<_>>(),
        show(&g3, " flows", |x| format!("{x:.1} Mbit/s")),
    );
    figure(
        dir,
        &mut e,
        "queue-vs-flows",
        "V6: median queueing delay on a 1 ms step-marking queue, 100 Mbit/s, 4 ms",
        "flows",
        "median queueing delay (ms)",
        (false, false),
        &[
            line("bbr (v1)", q1),
            line("bbr3", q3),
            line("threshold", vec![(1.0, THRESHOLD_MS), (4.0, THRESHOLD_MS)]),
        ],
        &[],
    )?;
    Ok(e)
}
