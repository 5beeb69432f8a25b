//! V5: ECN on a CoDel queue. CoDel (RFC 8289) with ECN marks CE where it
//! would drop (RFC 3168 §5); a sender that negotiates ECN "MUST treat any
//! CE marks as congestion" (draft §3.7). With `bbr3` and CUBIC both
//! ECN-capable there should be next to no loss, and the queue held near
//! CoDel's 5 ms target. One `bbr3` flow and one CUBIC flow share 50
//! Mbit/s, 40 ms; the same scenario runs with v1 `bbr` (which ignores CE,
//! as Linux v1 does) and with two CUBIC flows, the classic ECN reference.

use super::{runs_of, V1, V3};
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{forward_link, goodput, link_series, RunData};
use crate::stats::quantile;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// CoDel's target, ms (RFC 8289's default, the scenario's).
const TARGET_MS: f64 = 5.0;
/// CoDel's interval, s: the standing queue is the least sojourn over it.
const INTERVAL_S: f64 = 0.1;
/// The queue is read from here on, after STARTUP and CUBIC's start.
const STEADY_S: f64 = 5.0;
/// The swept first flow's algorithm.
const KEY: &str = "flow.0.algorithm";

/// Packets the link dropped over packets sent, with both flows
/// ECN-capable: next to none. CoDel marks them instead of dropping
/// (RFC 3168 §5); only a full queue (500 packets, 3 BDP) still drops.
pub const NEAR_ZERO_LOSS: Tolerance = Tolerance::new(
    Range::at_most(0.001).percent(),
    "with ECN CoDel marks instead of dropping (RFC 3168 §5); only a full queue drops; “near zero” read as ≤ 0.1 %",
);

/// The median queueing delay, as a multiple of CoDel's target: near it.
/// CoDel holds the standing queue at the target; the sawtooth of a
/// responding flow moves the median either side; ×2 is the helper's
/// suggestion for a result with no published number.
pub const MEDIAN_NEAR_TARGET: Tolerance = Tolerance::new(
    Range::at_most(2.0),
    "CoDel holds the standing queue at its target (RFC 8289 §3); no published value, ×2 for the responding flows' sawtooth",
);

/// The standing queue (the least sojourn over each 100 ms interval,
/// CoDel's own measure, RFC 8289 §3.2) at its 95th percentile, as a
/// multiple of the target: bursts shorter than an interval are CoDel's
/// "good queue" and not counted; ×2 for the control law's lag (it marks
/// once per interval/√count).
pub const STANDING_QUEUE: Tolerance = Tolerance::new(
    Range::at_most(2.0),
    "CoDel's target bounds the standing queue, the least sojourn over an interval (RFC 8289 §3.2); ×2 for the control law's lag",
);

/// bbr3's median queueing delay against v1's on the same queue: lower.
/// v1 ignores CE (as Linux v1 does), so CoDel's marks cannot hold it back.
pub const BELOW_V1: Tolerance = Tolerance::new(
    Range::below(1.0),
    "v1 ignores CE (Linux tcp_bbr.c), so CoDel's marks do not slow it; the order, no published value",
);

/// What one run shows of the queue.
struct Queue {
    /// Packets dropped by the forward link over data packets sent.
    loss: f64,
    /// Packets marked CE by the forward link.
    marked: u64,
    /// Median and 95th percentile of the queueing delay, ms.
    median: f64,
    p95: f64,
    /// 95th percentile of the per-interval least queueing delay, ms.
    standing_p95: f64,
    /// Goodputs of the two flows, Mbit/s.
    goodputs: (f64, f64),
    /// Queueing delay over time, ms.
    series: Vec<(f64, f64)>,
}

fn queue(d: &RunData) -> Result<Queue, String> {
    let series = link_series(d, "queue_delay_ms")?;
    let mut steady: Vec<f64> = series
        .iter()
        .filter(|p| p.0 >= STEADY_S)
        .map(|p| p.1)
        .collect();
    // The least delay in each CoDel interval.
    let mut mins: Vec<f64> = Vec::new();
    let mut slot = None;
    for p in series.iter().filter(|p| p.0 >= STEADY_S) {
        let k = ((p.0 - STEADY_S) / INTERVAL_S + 1e-9).floor() as i64;
        if slot != Some(k) {
            slot = Some(k);
            mins.push(p.1);
        } else if let Some(m) = mins.last_mut() {
            *m = m.min(p.1);
        }
    }
    let sent: u64 = d.summary.flows.iter().map(|f| f.packets_sent).sum();
    let link = forward_link(d);
    let drops = link.map_or(d.summary.forward_drops, |l| l.drops);
    Ok(Queue {
        loss: if sent == 0 {
            f64::NAN
        } else {
            drops as f64 / sent as f64
        },
        marked: link.map_or(0, |l| l.ce_marked),
        median: quantile(&mut steady, 0.5),
        p95: quantile(&mut steady, 0.95),
        standing_p95: quantile(&mut mins, 0.95),
        goodputs: (goodput(d, 0), goodput(d, 1)),
        series,
    })
}

/// Judges V5 and draws the queueing delay over time.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let one = |alg: &str| -> Result<Queue, String> {
        let runs = runs_of(data, KEY, alg);
        queue(runs.first().ok_or_else(|| format!("no {alg} run"))?)
    };
    let (v1, v3, cubic) = (one(V1)?, one(V3)?, one("cubic")?);
    let describe = |q: &Queue, first: &str| {
        format!(
            "{:.3} % dropped, {} marked CE; queueing delay median {:.2} ms, 95th percentile {:.1} ms, standing queue's 95th percentile {:.1} ms; goodput {first} {:.1} / CUBIC {:.1} Mbit/s",
            q.loss * 100.0,
            q.marked,
            q.median,
            q.p95,
            q.standing_p95,
            q.goodputs.0,
            q.goodputs.1
        )
    };
    e.row(
        "bbr3 and CUBIC, both with ECN",
        "near-zero loss; queueing delay near CoDel's 5 ms target",
        describe(&v3, "bbr3"),
    );
    e.row(
        "v1 bbr and CUBIC, both with ECN",
        "v1 ignores CE (Linux v1)",
        describe(&v1, "bbr"),
    );
    e.row(
        "two CUBIC flows with ECN (the classic reference)",
        "RFC 3168: CE answered as a loss, once a round trip",
        describe(&cubic, "cubic"),
    );
    e.judge(
        "Packets dropped over packets sent, bbr3 and CUBIC,",
        &NEAR_ZERO_LOSS,
        &[v3.loss],
        format!("{:.3} %", v3.loss * 100.0),
    );
    e.judge(
        "The median queueing delay with bbr3 and CUBIC",
        MEDIAN_NEAR_TARGET.times(TARGET_MS, "CoDel's 5 ms target"),
        &[v3.median],
        format!("{:.2} ms", v3.median),
    );
    e.judge(
        "The standing queue (least sojourn per 100 ms) with bbr3 and CUBIC, 95th percentile,",
        STANDING_QUEUE.times(TARGET_MS, "CoDel's 5 ms target"),
        &[v3.standing_p95],
        format!("{:.1} ms", v3.standing_p95),
    );
    e.judge(
        "The median queueing delay with bbr3",
        BELOW_V1.times(v1.median, &format!("v1's {:.2} ms", v1.median)),
        &[v3.median],
        format!("{:.2} ms", v3.median),
    );
    let end = data.first().map_or(60.0, |d| d.duration_s);
    figure(
        dir,
        &mut e,
        "queue-delay",
        "V5: queueing delay on a CoDel-ECN queue, 50 Mbit/s, 40 ms, with a CUBIC flow",
        "time (s)",
        "queueing delay (ms)",
        (false, false),
        &[
            line("bbr (v1) + cubic", v1.series),
            line("bbr3 + cubic", v3.series),
            line("cubic + cubic", cubic.series),
            line("CoDel target", vec![(0.0, TARGET_MS), (end, TARGET_MS)]),
        ],
        &[],
    )?;
    Ok(e)
}
