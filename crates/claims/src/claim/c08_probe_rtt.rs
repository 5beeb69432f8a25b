//! C8: time in PROBE_BW and PROBE_RTT (seed 000 appendix). A long bulk
//! flow spends about 98 % of its time in PROBE_BW and about 2 % in
//! PROBE_RTT: 200 ms every 10 s, with cwnd at 4 packets.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{flows_table, mode_fraction, series, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The share of the run in PROBE_BW: STARTUP and DRAIN take ≈ 0.5 s of it.
pub const PROBE_BW: Tolerance = Tolerance::new(
    Range::at_least(0.95).percent(),
    "STARTUP and DRAIN take ≈ 0.5 s",
);

/// The share of the run in PROBE_RTT: 200 ms plus one round (40 ms) every
/// 10 s is 2.4 %; a short run may end just before an episode.
pub const PROBE_RTT: Tolerance = Tolerance::new(
    Range::between(0.015, 0.03).percent(),
    "200 ms + one 40 ms round per 10 s = 2.4 %; a run may end just before an episode",
);

/// The largest cwnd sampled in PROBE_RTT, packets: the published 4
/// packets exactly, with a margin for floating-point rounding only.
pub const PROBE_RTT_CWND: Tolerance = Tolerance::new(
    Range::at_most(4.0 + 1e-9).unit(" packets"),
    "Linux's PROBE_RTT window, exactly",
);

/// Judges C8 and draws cwnd and inflight.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let d = &data[0];
    let bw = mode_fraction(d, "probe_bw");
    let rtt = mode_fraction(d, "probe_rtt");
    let (t, p) = flows_table(d)?;
    let modes = t.labels(&p, "mode", Some(("flow", "0")))?;
    let cwnd = t.points(&p, "time_s", "cwnd_bytes", Some(("flow", "0")))?;
    let max_probe_rtt_cwnd = modes
        .iter()
        .zip(&cwnd)
        .filter(|(m, _)| m.1 == "probe_rtt")
        .map(|(_, c)| c.1 / 1500.0)
        .fold(0.0, f64::max);
    e.row("time in PROBE_BW", "≈ 98 %", format!("{:.1} %", bw * 100.0));
    e.row(
        "time in PROBE_RTT",
        "≈ 2 % (200 ms every 10 s)",
        format!("{:.2} %", rtt * 100.0),
    );
    e.row(
        "cwnd in PROBE_RTT",
        "4 packets",
        format!("{max_probe_rtt_cwnd:.1} packets (largest sample)"),
    );
    e.judge(
        "time in PROBE_BW",
        &PROBE_BW,
        &[bw],
        format!("{:.1} %", bw * 100.0),
    );
    e.judge(
        "time in PROBE_RTT",
        &PROBE_RTT,
        &[rtt],
        format!("{:.2} %", rtt * 100.0),
    );
    e.judge(
        "cwnd whenever sampled in PROBE_RTT",
        &PROBE_RTT_CWND,
        // Never sampled in PROBE_RTT: nothing to judge, so no pass.
        &[if max_probe_rtt_cwnd > 0.0 {
            max_probe_rtt_cwnd
        } else {
            f64::NAN
        }],
        format!("{max_probe_rtt_cwnd:.1}"),
    );
    figure(
        dir,
        &mut e,
        "cwnd",
        "C8: a long BBR flow: cwnd and inflight (PROBE_RTT dips every 10 s)",
        "time (s)",
        "packets",
        (false, false),
        &[
            line("cwnd", cwnd.iter().map(|c| (c.0, c.1 / 1500.0)).collect()),
            line("inflight", series(d, 0, "inflight_bytes", 1.0 / 1500.0)?),
        ],
        &[],
    )?;
    Ok(e)
}
