//! The bounds competing flows are held to, as tolerances with their
//! reasons, and a path's verdict.

use super::*;

/// A flow's share of the total goodput may differ from kernel TCP's by at
/// most this (absolute, shares being fractions of 1).
pub const SHARE: Tolerance = Tolerance::new(
    Range::at_most(0.05),
    "issue 31's bound: 0.05 of the link is well below the differences competing-flow studies conclude from (issue 31's table: kernel bbr's share against cubic falls from 0.86 to 0.29 between 1 and 4 BDP) and leaves room for the spread of one 30 s run",
);

/// The bottleneck's median queueing delay may differ from kernel TCP's by
/// this fraction of the kernel's…
pub const QUEUE_DELAY_PCT: Tolerance = Tolerance::new(
    Range::at_most(0.10).percent(),
    "single-flow validate's srtt bound (issue 11), applied to the queue the flows share",
);

/// …or by this many ms, whichever is larger.
pub const QUEUE_DELAY_MS: Tolerance = Tolerance::new(
    Range::at_most(2.0).unit(" ms"),
    "a floor for short queues: the queue is sampled every 10 ms on both sides and the emulator releases 99 % of packets within 0.05–0.25 ms of their time, so a couple of ms on a near-empty queue is sampling, not behaviour",
);

/// The simulator's side against the kernel's: per flow the share's
/// difference and whether it is within [`SHARE`]; the median queueing
/// delay's difference and whether it is within [`QUEUE_DELAY_PCT`] or
/// [`QUEUE_DELAY_MS`]; `within` when all are. Reads only the JSON the
/// run wrote, so a fixture or an old `validate.json` judges alike.
pub fn judge(kernel: &Value, sim: &Value) -> Value {
    let shares = |v: &Value| -> Vec<f64> {
        v["flows"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["share"].as_f64().unwrap_or(f64::NAN))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (k, s) = (shares(kernel), shares(sim));
    let flows: Vec<Value> = if k.len() == s.len() {
        k.iter()
            .zip(&s)
            .map(|(k, s)| {
                let d = s - k;
                json!({ "share_diff": round3(d), "share_within": SHARE.check(d.abs()) })
            })
            .collect()
    } else {
        Vec::new()
    };
    let shares_ok = !flows.is_empty() && flows.iter().all(|f| f["share_within"] == true);
    let kq = kernel["queue_delay_ms"]["p50"].as_f64().unwrap_or(f64::NAN);
    let sq = sim["queue_delay_ms"]["p50"].as_f64().unwrap_or(f64::NAN);
    let (d_ms, d_frac) = (sq - kq, (sq - kq) / kq);
    let q_ok =
        QUEUE_DELAY_MS.check(d_ms.abs()) || (kq > 0.0 && QUEUE_DELAY_PCT.check(d_frac.abs()));
    json!({
        "flows": flows,
        "shares_within": shares_ok,
        "queue_delay_p50_diff_ms": round3(d_ms),
        "queue_delay_p50_diff_pct": round3(d_frac * 100.0),
        "queue_delay_within": q_ok,
        "within": shares_ok && q_ok,
    })
}

/// The bounds as `validate.json` states them: each tolerance's rule in
/// words and its reason, from the tolerances themselves.
pub fn bounds_json() -> Value {
    let t = crate::validate::tolerance_json;
    json!({
        "share": t(&SHARE, "|simulator − kernel| share of the total goodput, per flow:"),
        "queue_delay_p50_pct": t(&QUEUE_DELAY_PCT, "|simulator − kernel| median queueing delay, relative to the kernel's:"),
        "queue_delay_p50_ms": t(&QUEUE_DELAY_MS, "…or absolute, whichever is larger:"),
        "rule": "a path is within when every flow's share and the median queueing delay are; total goodput and p10/p90 are reported, not judged",
    })
}

pub fn round3(x: f64) -> Option<f64> {
    x.is_finite().then_some((x * 1000.0).round() / 1000.0)
}
