//! C3: bufferbloat (seed 002). On 10 Mbit/s, 40 ms with a 1000-packet
//! drop-tail buffer both fill the link; BBR's median RTT is 43 ms, CUBIC's
//! 1.09 s.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{find, goodput, median_rtt, series, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The link, Mbit/s.
const LINK: f64 = 10.0;

/// BBR's published median RTT, ms.
const BBR_MEDIAN_MS: f64 = 43.0;

/// Each goodput as a share of the link: "fill" allows for PROBE_RTT.
pub const FILLS: Tolerance = Tolerance::new(Range::at_least(0.95).percent(), "PROBE_RTT costs 2 %");

/// BBR's median RTT over its base: our BBR keeps Linux's quantization
/// budget (3 send quanta, ≈ 6 packets ≈ 7 ms at 10 Mbit/s) queued; the
/// published run's TSO/fq details are not given. C5 uses it too, on the
/// same link.
pub const QUANTIZATION: Tolerance = Tolerance::new(
    Range::at_most(1.3),
    "Linux's 3-quanta quantization budget keeps ≈ 6 packets queued",
);

/// CUBIC's median RTT against the published 1.09 s: a drop-tail
/// sawtooth's median depends on CUBIC's β and on whether the testbed's
/// buffer counts bytes or packets.
pub const CUBIC_MEDIAN: Tolerance = Tolerance::new(
    Range::near(1090.0, 0.2).unit(" ms"),
    "a sawtooth's median depends on β and buffer accounting",
);

/// CUBIC's median RTT over BBR's (published 25×).
pub const RATIO: Tolerance = Tolerance::new(
    Range::at_least(15.0).unit("×"),
    "published 25×, less the tolerances on the two medians",
);

/// Judges C3 and draws both RTTs over time.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let bbr = find(data, &[("flow.algorithm", "bbr")])?;
    let cubic = find(data, &[("flow.algorithm", "cubic")])?;
    let (gb, gc) = (goodput(bbr, 0), goodput(cubic, 0));
    let (rb, rc) = (median_rtt(bbr, 0), median_rtt(cubic, 0));
    e.row(
        "goodput (BBR / CUBIC)",
        "both fill the 10 Mbit/s link",
        format!("{gb:.2} / {gc:.2} Mbit/s"),
    );
    e.row("median RTT, BBR", "43 ms", format!("{rb:.1} ms"));
    e.row(
        "median RTT, CUBIC",
        "1.09 s",
        format!("{:.2} s", rc / 1000.0),
    );
    e.row("ratio", "25×", format!("{:.1}×", rc / rb));
    e.judge(
        "both goodputs",
        FILLS.times(LINK, &format!("the {LINK} Mbit/s link")),
        &[gb, gc],
        format!("{gb:.2}, {gc:.2}"),
    );
    e.judge(
        "BBR's median RTT",
        QUANTIZATION.times(BBR_MEDIAN_MS, &format!("the published {BBR_MEDIAN_MS} ms")),
        &[rb],
        format!("{rb:.1} ms"),
    );
    e.judge(
        "CUBIC's median RTT",
        &CUBIC_MEDIAN,
        &[rc],
        format!("{:.2} s", rc / 1000.0),
    );
    e.judge(
        "CUBIC's median RTT over BBR's",
        &RATIO,
        &[rc / rb],
        format!("{:.1}×", rc / rb),
    );
    let (sb, sc) = (
        series(bbr, 0, "rtt_ms", 1.0)?,
        series(cubic, 0, "rtt_ms", 1.0)?,
    );
    figure(
        dir,
        &mut e,
        "rtt",
        "C3: 10 Mbit/s, 40 ms, 1000-packet buffer: RTT (log scale)",
        "time (s)",
        "RTT (ms)",
        (false, true),
        &[line("bbr", sb), line("cubic", sc)],
        &meta.points("rtt", Some(bbr.duration_s))?,
    )?;
    Ok(e)
}
