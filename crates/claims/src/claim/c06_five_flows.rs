//! C6: five BBR flows converge to a fair share (seed 000 fig. 6). Five
//! flows with staggered starts share 100 Mbit/s / 10 ms; they converge
//! within a few PROBE_BW cycles and their PROBE_RTT episodes synchronise.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{flows_table, series, RunData};
use crate::stats::{jain, mean_in};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// Jain's index over the flows' goodputs from 10 s after the last start:
/// five equal shares give 1.0; the bound allows one flow ±25 % of its
/// share, the size of one 1.25 probing phase.
pub const FAIR: Tolerance = Tolerance::new(
    Range::at_least(0.95),
    "one flow may be off by a 1.25 probe phase",
);

/// The share of PROBE_RTT episodes after convergence whose start has at
/// least 3 other flows' episodes starting within 300 ms (a little more
/// than one 200 ms PROBE_RTT plus a round).
pub const SYNCHRONISED: Tolerance = Tolerance::new(
    Range::at_least(0.75).percent(),
    "most, not all: an episode can start just outside a window of one 200 ms PROBE_RTT plus a round",
);

/// Judges C6 and draws the five goodputs.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
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
    e.judge(
        "Jain's index once all flows have run 10 s",
        &FAIR,
        &[j],
        format!("{j:.3}"),
    );
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
    e.judge(
        "PROBE_RTT episodes after convergence shared by at least 4 flows within 300 ms",
        &SYNCHRONISED,
        &[if total > 0 { frac } else { f64::NAN }],
        format!("{synced}/{total}"),
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
