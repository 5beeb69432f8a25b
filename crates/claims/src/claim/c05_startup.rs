//! C5: STARTUP and DRAIN (seed 000 figs. 4–5). On 10 Mbit/s, 40 ms one
//! flow's STARTUP finds the bandwidth in about log2(BDP) rounds, DRAIN
//! brings the RTT back to about RTprop, and CUBIC keeps the buffer 70–100 %
//! full.

use super::c03_bufferbloat::QUANTIZATION;
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{find, flows_table, link_queue, series, RunData};
use crate::stats::mean_in;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The path's propagation RTT, ms.
const RTPROP_MS: f64 = 40.0;

/// STARTUP's rounds beyond log2(BDP), the rounds it needs to find the
/// rate: the 3 plateau rounds the full-pipe rule needs, and one in flight.
pub const STARTUP_ROUNDS: Tolerance = Tolerance::new(
    Range::at_most(4.0).unit(" rounds"),
    "3 plateau rounds for full-pipe detection, 1 in flight",
);

/// CUBIC's mean buffer occupancy from 2 to 8 s (published 70–100 %).
/// After a loss the window falls to 0.7 × (BDP + buffer), so the
/// occupancy's sawtooth dips below the published band on a 3-BDP buffer.
pub const CUBIC_OCCUPANCY: Tolerance = Tolerance::new(
    Range::at_least(0.6).percent(),
    "published 70–100 %; CUBIC's β = 0.7 cut dips below that on a 3-BDP buffer",
);

/// Judges C5 and draws the first second's inflight and the first 8 s of
/// queue.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (t, p) = flows_table(bbr)?;
    let modes = t.labels(&p, "mode", Some(("flow", "0")))?;
    let rtt = series(bbr, 0, "rtt_ms", 1.0)?;
    let drain_at = modes.iter().find(|m| m.1 == "drain").map(|m| m.0);
    let bw_at = modes.iter().find(|m| m.1 == "probe_bw").map(|m| m.0);
    // Rounds until DRAIN: ∫ dt / RTT over STARTUP.
    let mut rounds = 0.0;
    if let Some(td) = drain_at {
        for w in rtt.windows(2) {
            if w[1].0 <= td && w[0].1 > 0.0 {
                rounds += (w[1].0 - w[0].0) / (w[0].1 / 1000.0);
            }
        }
    }
    let bdp_pkts: f64 = 10e6 * 0.040 / 8.0 / 1500.0;
    let expect = bdp_pkts.log2();
    e.row(
        "STARTUP length",
        "≈ log2(BDP) rounds",
        format!("{rounds:.1} rounds (log2 BDP = {expect:.1})"),
    );
    e.judge(
        "STARTUP's length",
        STARTUP_ROUNDS.plus(expect, "log2(BDP)"),
        &[if drain_at.is_some() { rounds } else { f64::NAN }],
        format!("{rounds:.1}"),
    );
    let after = bw_at.unwrap_or(f64::INFINITY);
    let rtt_after = {
        let mut v: Vec<f64> = rtt
            .iter()
            .filter(|p| p.0 >= after + 0.2)
            .map(|p| p.1)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    e.row(
        "BBR RTT after DRAIN (median)",
        "≈ RTprop (40 ms)",
        format!("{rtt_after:.1} ms"),
    );
    e.judge(
        "BBR's median RTT after DRAIN",
        QUANTIZATION.times(RTPROP_MS, &format!("the {RTPROP_MS} ms RTprop")),
        &[rtt_after],
        format!("{rtt_after:.1} ms"),
    );
    let q = link_queue(cubic)?;
    let occ = mean_in(&q, 2.0, 8.0) / 100.0;
    e.row(
        "CUBIC buffer occupancy, 2–8 s (mean)",
        "70–100 %",
        format!("{:.0} %", occ * 100.0),
    );
    e.judge(
        "CUBIC's mean buffer occupancy, 2–8 s,",
        &CUBIC_OCCUPANCY,
        &[occ],
        format!("{:.0} %", occ * 100.0),
    );
    let qb = link_queue(bbr)?;
    let first = |v: Vec<(f64, f64)>| v.into_iter().filter(|p| p.0 <= 1.0).collect::<Vec<_>>();
    let inflight_b = series(bbr, 0, "inflight_bytes", 1.0 / 1500.0)?;
    let inflight_c = series(cubic, 0, "inflight_bytes", 1.0 / 1500.0)?;
    figure(
        dir,
        &mut e,
        "first-second",
        "C5: first second, 10 Mbit/s, 40 ms: packets in flight (cf. seed 000 fig. 4)",
        "time (s)",
        "packets in flight",
        (false, false),
        &[
            line("bbr", first(inflight_b)),
            line("cubic", first(inflight_c)),
        ],
        &[],
    )?;
    figure(
        dir,
        &mut e,
        "first-8-seconds",
        "C5: first 8 s: bottleneck queue (cf. seed 000 fig. 5)",
        "time (s)",
        "queue (packets)",
        (false, false),
        &[line("bbr", qb), line("cubic", q)],
        &[],
    )?;
    Ok(e)
}
