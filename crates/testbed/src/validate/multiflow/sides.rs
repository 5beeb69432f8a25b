//! The figures of one side (kernel or simulator) of a repetition: each
//! flow's share and goodput, the queueing delay, and their combination
//! over repetitions and the simulator's seed draws.

use super::*;

/// One flow's figures on one side.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct FlowFig {
    /// Payload bytes delivered by the end of the run.
    pub(super) bytes: f64,
    /// Median srtt, ms.
    pub(super) srtt_median_ms: Option<f64>,
    /// Payload bytes delivered by the end of each [`WINDOW_S`] window of
    /// the run, on the path's clock (0 before the flow starts).
    pub(super) by_window_end: Vec<f64>,
}

/// Length of the windows of `share_by_window`, s. A run's share over its
/// whole length says how far the simulator is from the kernel, not when
/// the difference arises (the Validation chapter's 1-BDP bbr3 path: twice
/// as large at 5-10 s as in the run's last windows); 5 s is several probe
/// cycles of BBR on the matrix's 40 ms paths and gives a 30 s run six
/// windows.
pub(super) const WINDOW_S: u64 = 5;

/// The ends of the [`WINDOW_S`] windows of a `seconds`-long run, on the
/// path's clock: 5, 10, … and `seconds` itself (a last, shorter window
/// when `seconds` is not a multiple).
pub(super) fn window_ends(seconds: u64) -> Vec<u64> {
    let mut ends: Vec<u64> = (1..)
        .map(|j| j * WINDOW_S)
        .take_while(|&e| e < seconds)
        .collect();
    ends.push(seconds);
    ends
}

/// [`window_ends`] on the clock of a flow that started `start` s into a
/// `seconds`-long run (its log's time 0); ends before it are negative.
pub(super) fn flow_window_ends(seconds: u64, start: u64) -> Vec<f64> {
    window_ends(seconds)
        .into_iter()
        .map(|e| e as f64 - start as f64)
        .collect()
}

/// Payload bytes delivered by `window_s` after the file's `origin_s`, and
/// the median srtt over that window, from a flows.csv of the shared
/// schema (flow `flow`); and the bytes delivered by each of `ends` (times
/// after `origin_s`; none at or before 0).
pub(super) fn flow_figures(
    csv: &Path,
    flow: usize,
    origin_s: f64,
    window_s: f64,
    ends: &[f64],
) -> Result<FlowFig, String> {
    let t = figures::Table::read(csv)?;
    let f = flow.to_string();
    let inside = |pts: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        pts.into_iter()
            .filter(|(x, _)| *x >= origin_s - 1e-9 && *x <= origin_s + window_s + 1e-9)
            .collect()
    };
    let delivered = inside(t.points(csv, "time_s", "delivered_bytes", Some(("flow", &f)))?);
    let mut srtt: Vec<f64> = inside(t.points(csv, "time_s", "srtt_ms", Some(("flow", &f)))?)
        .into_iter()
        .map(|p| p.1)
        .collect();
    // The delivered count is cumulative: by an end, the last sample at
    // or before it.
    let by = |end: f64| {
        delivered
            .iter()
            .take_while(|p| p.0 <= origin_s + end + 1e-9)
            .last()
            .map_or(0.0, |p| p.1)
    };
    Ok(FlowFig {
        bytes: delivered.last().map_or(0.0, |p| p.1),
        srtt_median_ms: quantile(&mut srtt, 0.5),
        by_window_end: ends
            .iter()
            .map(|&e| if e > 0.0 { by(e) } else { 0.0 })
            .collect(),
    })
}

/// p10, p50, p90 of the forward direction's queueing delay in a link.csv
/// over `[origin_s, origin_s + window_s]`; `origin_s = None` starts at the
/// first sample with a packet queued (the emulator's log starts before
/// its programs do).
pub(super) fn queue_delay(
    csv: &Path,
    origin_s: Option<f64>,
    window_s: f64,
) -> Result<[Option<f64>; 3], String> {
    let t = figures::Table::read(csv)?;
    let dir = Some(("direction", "forward"));
    let origin = match origin_s {
        Some(o) => o,
        None => t
            .points(csv, "time_s", "queue_packets", dir)?
            .into_iter()
            .find(|p| p.1 > 0.0)
            .map_or(0.0, |p| p.0),
    };
    let mut d: Vec<f64> = t
        .points(csv, "time_s", "queue_delay_ms", dir)?
        .into_iter()
        .filter(|(x, _)| *x >= origin - 1e-9 && *x <= origin + window_s + 1e-9)
        .map(|p| p.1)
        .collect();
    Ok([0.1, 0.5, 0.9].map(|q| quantile(&mut d, q)))
}

/// One side's figures of one run, as JSON: per flow its bytes, goodput,
/// share, share in each [`WINDOW_S`] window and median srtt; the total
/// goodput; the queueing delay.
pub(super) fn side_json(
    flows: &[FlowFig],
    seconds: u64,
    starts: &[u64],
    qd: [Option<f64>; 3],
) -> Value {
    let total: f64 = flows.iter().map(|f| f.bytes).sum();
    let windows = flows
        .iter()
        .map(|f| f.by_window_end.len())
        .min()
        .unwrap_or(0);
    // Bytes each flow delivered in window j.
    let in_window = |f: &FlowFig, j: usize| {
        f.by_window_end[j] - if j == 0 { 0.0 } else { f.by_window_end[j - 1] }
    };
    let window_totals: Vec<f64> = (0..windows)
        .map(|j| flows.iter().map(|f| in_window(f, j)).sum())
        .collect();
    json!({
        "flows": flows.iter().zip(starts).map(|(f, &start)| json!({
            "bytes": f.bytes,
            "goodput_mbps": f.bytes * 8.0 / (seconds - start).max(1) as f64 / 1e6,
            "share": if total > 0.0 { f.bytes / total } else { f64::NAN },
            "share_by_window": (0..windows).map(|j| {
                let t = window_totals[j];
                if t > 0.0 { json!(round3(in_window(f, j) / t)) } else { Value::Null }
            }).collect::<Vec<_>>(),
            "srtt_median_ms": f.srtt_median_ms,
        })).collect::<Vec<_>>(),
        "window_s": WINDOW_S,
        "total_goodput_mbps": total * 8.0 / seconds as f64 / 1e6,
        "queue_delay_ms": { "p10": qd[0], "p50": qd[1], "p90": qd[2] },
    })
}

/// Each number of sides of the same shape reduced by `f` over the sides
/// (a missing or non-numeric value leaves the others'; none, `null`).
pub(super) fn combine_json(sides: &[Value], f: fn(&mut Vec<f64>) -> f64) -> Value {
    fn go(vs: &[&Value], f: fn(&mut Vec<f64>) -> f64) -> Value {
        match vs.first() {
            Some(Value::Object(m)) => Value::Object(
                m.keys()
                    .map(|k| {
                        let v = go(&vs.iter().map(|v| &v[k]).collect::<Vec<_>>(), f);
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Some(Value::Array(a)) => Value::Array(
                (0..a.len())
                    .map(|i| go(&vs.iter().map(|v| &v[i]).collect::<Vec<_>>(), f))
                    .collect(),
            ),
            _ => {
                let mut xs: Vec<f64> = vs.iter().filter_map(|v| v.as_f64()).collect();
                if xs.is_empty() {
                    Value::Null
                } else {
                    json!(f(&mut xs))
                }
            }
        }
    }
    go(&sides.iter().collect::<Vec<_>>(), f)
}

/// The mean over repetitions, number by number.
pub(super) fn mean_json(sides: &[Value]) -> Value {
    combine_json(sides, |xs| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The simulator's side over its seed draws: the median of each number
/// ([`DRAWS`]), and per flow the least and greatest share and every
/// draw's share, so the table can show the spread the median hides.
pub(super) fn draws_json(sides: &[Value]) -> Value {
    let mut m = combine_json(sides, |xs| quantile(xs, 0.5).unwrap_or(f64::NAN));
    with_share_spread(&mut m, sides, "share_by_draw");
    m["draws"] = json!(sides.len());
    m
}

/// The simulator's side over the repetitions, each the [`draws_json`] of
/// its draws: the mean of each number, and per flow the least and
/// greatest share over every draw of every repetition, with every draw's
/// share (`share_by_draw`, repetition by repetition), so the brackets
/// are what the table's caption says they are, not a mean of extremes.
pub(super) fn repetitions_of_draws_json(sims: &[Value]) -> Value {
    let mut m = mean_json(sims);
    // Every repetition ran the same number of draws.
    m["draws"] = sims.first().map_or(Value::Null, |s| s["draws"].clone());
    if let Some(flows) = m["flows"].as_array_mut() {
        for (k, f) in flows.iter_mut().enumerate() {
            let all: Vec<f64> = sims
                .iter()
                .flat_map(|s| {
                    s["flows"][k]["share_by_draw"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_f64)
                })
                .collect();
            if !all.is_empty() {
                put_share_spread(f, &all, "share_by_draw");
            }
        }
    }
    m
}

/// The kernel's side over its repetitions: the mean of each number and,
/// with more than one, each flow's least and greatest share and every
/// repetition's (`share_by_rep`): two kernel runs of a path can differ by
/// more than the share bound, and the table shows by how much.
pub(super) fn repetitions_json(sides: &[Value]) -> Value {
    let mut m = mean_json(sides);
    if sides.len() > 1 {
        with_share_spread(&mut m, sides, "share_by_rep");
        m["repetitions"] = json!(sides.len());
    }
    m
}

/// Adds to each flow of `m` the least and greatest of its share over
/// `sides`, and every side's share under `key`.
pub(super) fn with_share_spread(m: &mut Value, sides: &[Value], key: &str) {
    if let Some(flows) = m["flows"].as_array_mut() {
        for (k, f) in flows.iter_mut().enumerate() {
            let shares: Vec<f64> = sides
                .iter()
                .filter_map(|s| s["flows"][k]["share"].as_f64())
                .collect();
            put_share_spread(f, &shares, key);
        }
    }
}

/// Sets a flow's least and greatest share of `shares`, and every one of
/// them under `key`, each to three decimals.
fn put_share_spread(f: &mut Value, shares: &[f64], key: &str) {
    let (lo, hi) = shares
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    f["share_min"] = json!(round3(lo));
    f["share_max"] = json!(round3(hi));
    f[key] = json!(shares.iter().map(|&x| round3(x)).collect::<Vec<_>>());
}
