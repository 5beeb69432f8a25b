//! C14: ACK aggregation and `extra_acked` (seed 004, the Linux commit
//! adding it). With ACKs released in bursts (Wi-Fi style aggregation),
//! BBR without `extra_acked` is cwnd-limited, 73 against 102 Mbit/s with
//! it at 2.4 GHz (362 against 593 at 5 GHz); with it BBR matches CUBIC.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{find, goodput, series, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// Goodput without `extra_acked` over goodput with it: clearly
/// cwnd-limited (published 0.61–0.72 on real Wi-Fi, whose aggregation
/// pattern we model only as a fixed 20 ms release interval).
pub const CWND_LIMITED: Tolerance = Tolerance::new(
    Range::at_most(0.9),
    "published 0.61–0.72; our aggregation is a fixed 20 ms interval",
);

/// Goodput with `extra_acked` over CUBIC's: "matches".
pub const MATCHES_CUBIC: Tolerance = Tolerance::new(
    Range::at_least(0.9),
    "published 0.99–1.02 on real Wi-Fi, which we model only as a fixed release interval",
);

/// Judges C14 and draws the three goodputs.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let with = find(
        data,
        &[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "true")],
    )?;
    let without = find(
        data,
        &[("flow.algorithm", "bbr"), ("flow.bbr.extra_acked", "false")],
    )?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (gw, go, gc) = (goodput(with, 0), goodput(without, 0), goodput(cubic, 0));
    e.row(
        "bbr without / with extra_acked",
        "73 / 102 Mbit/s (0.72); 362 / 593 (0.61)",
        format!("{go:.1} / {gw:.1} Mbit/s ({:.2})", go / gw),
    );
    e.row(
        "bbr with extra_acked / cubic",
        "102 / 100 (1.02); 593 / 601 (0.99)",
        format!("{gw:.1} / {gc:.1} Mbit/s ({:.2})", gw / gc),
    );
    e.judge(
        "goodput without extra_acked",
        CWND_LIMITED.times(gw, "with"),
        &[go],
        format!("{:.2}", go / gw),
    );
    e.judge(
        "goodput with extra_acked",
        MATCHES_CUBIC.times(gc, "CUBIC's"),
        &[gw],
        format!("{:.2}", gw / gc),
    );
    figure(
        dir,
        &mut e,
        "goodput",
        "C14: ACKs released every 20 ms, 100 Mbit/s, 10 ms: goodput",
        "time (s)",
        "goodput (Mbit/s)",
        (false, false),
        &[
            line(
                "bbr with extra_acked",
                series(with, 0, "goodput_bps", 1e-6)?,
            ),
            line(
                "bbr without extra_acked",
                series(without, 0, "goodput_bps", 1e-6)?,
            ),
            line("cubic", series(cubic, 0, "goodput_bps", 1e-6)?),
        ],
        &[],
    )?;
    Ok(e)
}
