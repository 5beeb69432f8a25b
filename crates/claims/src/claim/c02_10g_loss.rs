//! C2: 10 Gbit/s, 100 ms, 1 % random loss (seed 002, the Linux commit
//! adding tcp_bbr): CUBIC 3.27 Mbit/s, BBR 9150 Mbit/s, about 2800×.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{find, goodput, series, RunData};
use crate::stats::mean_in;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// BBR's goodput against the published 9150 Mbit/s: netperf goodput on an
/// emulated path whose buffer the commit does not state.
pub const BBR: Tolerance = Tolerance::new(
    Range::near(9150.0, 0.10).unit(" Mbit/s"),
    "netem testbed, buffer not stated",
);

/// CUBIC's goodput against the published 3.27 Mbit/s: at 1 % loss CUBIC
/// runs with a window of a few packets, where the details of timeouts and
/// HyStart decide the exact figure.
pub const CUBIC: Tolerance = Tolerance::new(
    Range::factor(3.27, 3.0).unit(" Mbit/s"),
    "a few-packet window, dominated by timeout details",
);

/// BBR over CUBIC (published 2798×): the order of magnitude, whatever
/// CUBIC's exact few-packet figure.
pub const RATIO: Tolerance = Tolerance::new(
    Range::at_least(1000.0).unit("×"),
    "published 2798×; its order of magnitude, since CUBIC's few-packet figure is uncertain by a factor",
);

/// Judges C2 and draws both goodputs over time.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let bs = series(bbr, 0, "goodput_bps", 1e-6)?;
    let dur = bbr.duration_s;
    // The published figure is netperf's average over 30 s, so the full run
    // compares its whole-run average. A shortened (--quick) run compares
    // its second half instead: STARTUP at 10 Gbit/s and 100 ms takes
    // ~2.5 s, a quarter of a 10 s run but under a tenth of 30 s.
    let (b, how) = if dur >= 29.0 {
        (goodput(bbr, 0), "whole 30 s run")
    } else {
        (
            mean_in(&bs, dur / 2.0, dur + 1.0),
            "second half of a shortened run",
        )
    };
    let c = goodput(cubic, 0);
    e.row(
        "BBR goodput",
        "9150 Mbit/s",
        format!("{b:.0} Mbit/s ({how})"),
    );
    e.row("CUBIC goodput", "3.27 Mbit/s", format!("{c:.2} Mbit/s"));
    e.row("BBR / CUBIC", "≈ 2800×", format!("{:.0}×", b / c));
    e.judge("BBR", &BBR, &[b], format!("{b:.0}"));
    e.judge("CUBIC", &CUBIC, &[c], format!("{c:.2}"));
    e.judge("BBR / CUBIC", &RATIO, &[b / c], format!("{:.0}×", b / c));
    let cs = series(cubic, 0, "goodput_bps", 1e-6)?;
    figure(
        dir,
        &mut e,
        "goodput",
        "C2: 10 Gbit/s, 100 ms, 1 % loss: goodput over time (log scale)",
        "time (s)",
        "goodput (Mbit/s)",
        (false, true),
        &[line("bbr", bs), line("cubic", cs)],
        &meta.points("goodput", Some(dur))?,
    )?;
    Ok(e)
}
