//! C9: a token-bucket policer and the long-term bandwidth model (seed 000
//! §6.3). Against a policer below the link rate, the policer model
//! (`lt_bw`) cuts the continuous losses that gain cycling causes.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{find, goodput, series, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The retransmission rate with lt_bw over the rate without: the claim is
/// qualitative, so the cut required is one larger than the few-percent
/// spread between seeds of the same scenario.
pub const FEWER_LOSSES: Tolerance = Tolerance::new(
    Range::at_most(0.9),
    "qualitative claim; a cut beyond the seed-to-seed spread",
);

/// Goodput with lt_bw over goodput without: the model must not cost
/// goodput beyond seed-to-seed spread.
pub const SAME_GOODPUT: Tolerance = Tolerance::new(
    Range::at_least(0.95).percent(),
    "the model must not cost goodput beyond seed-to-seed spread",
);

/// Judges C9 and draws drops and goodput with and without lt_bw.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let on = find(data, &[("flow.bbr.lt_bw", "true")])?;
    let off = find(data, &[("flow.bbr.lt_bw", "false")])?;
    let r = |d: &RunData| d.summary.flows[0].retransmission_rate * 100.0;
    let (ron, roff) = (r(on), r(off));
    let (gon, goff) = (goodput(on, 0), goodput(off, 0));
    e.row(
        "retransmission rate, with / without lt_bw",
        "lower with the policer model",
        format!("{ron:.2} % / {roff:.2} %"),
    );
    e.row(
        "goodput, with / without lt_bw (policer 5 Mbit/s)",
        "—",
        format!("{gon:.2} / {goff:.2} Mbit/s"),
    );
    e.judge(
        "the retransmission rate with lt_bw",
        FEWER_LOSSES.times(roff, "the rate without"),
        &[ron],
        format!("{ron:.2} % vs {roff:.2} %"),
    );
    e.judge(
        "goodput with lt_bw",
        SAME_GOODPUT.times(goff, "goodput without"),
        &[gon],
        format!("{gon:.2} vs {goff:.2}"),
    );
    let gs = |d: &RunData| series(d, 0, "goodput_bps", 1e-6);
    let dr = |d: &RunData| -> Result<Vec<(f64, f64)>, String> {
        let s = series(d, 0, "drops", 1.0)?;
        Ok(s.windows(2)
            .map(|w| (w[1].0, (w[1].1 - w[0].1) / (w[1].0 - w[0].0)))
            .collect())
    };
    figure(
        dir,
        &mut e,
        "drops",
        "C9: policer drops per second, with and without the long-term bandwidth model",
        "time (s)",
        "drops per second",
        (false, false),
        &[
            line("bbr with lt_bw", dr(on)?),
            line("bbr without lt_bw", dr(off)?),
        ],
        &[],
    )?;
    figure(
        dir,
        &mut e,
        "goodput",
        "C9: goodput through a 5 Mbit/s policer",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &[
            line("bbr with lt_bw", gs(on)?),
            line("bbr without lt_bw", gs(off)?),
        ],
        &[],
    )?;
    Ok(e)
}
