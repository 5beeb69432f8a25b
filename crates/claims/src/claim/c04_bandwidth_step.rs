//! C4: following a bandwidth step (seed 000 fig. 3; seed 003). On a 40 ms
//! path the bottleneck steps 10 → 20 Mbit/s at 20 s and back at 40 s; BBR
//! follows the rise in about 1.5 s and the drop in about 4 s.
//!
//! Both times are measured on the bandwidth estimate (the max filter).

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{series, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The published time to follow the rise, s. C13 judges its rises against
/// it too.
pub const PUBLISHED_RISE_S: f64 = 1.5;

/// The published time to follow the drop, s.
const PUBLISHED_DROP_S: f64 = 4.0;

/// Time to follow the rise, over the published time: the step can land
/// anywhere in the 8-phase gain cycle (up to 8 RTTs of waiting for the
/// next 1.25 phase), and the published time is read off a plot.
pub const RISE: Tolerance = Tolerance::new(
    Range::at_most(2.0),
    "where in the gain cycle the step lands, and a value read off a plot",
);

/// Time to follow the drop, over the published time: the filter is 10
/// rounds long, and rounds stretch while the queue built by the old rate
/// drains.
pub const DROP: Tolerance = Tolerance::new(
    Range::at_most(1.5),
    "rounds stretch while the old queue drains",
);

/// Judges C4 and draws the rate, the estimate and the goodput.
pub fn evaluate(data: &[RunData], dir: &Path, meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let d = &data[0];
    let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
    let gp = series(d, 0, "goodput_bps", 1e-6)?;
    let rise = bw
        .iter()
        .find(|p| p.0 >= 20.0 && p.1 >= 18.0)
        .map(|p| p.0 - 20.0);
    let fall = bw
        .iter()
        .find(|p| p.0 >= 40.0 && p.1 <= 11.0)
        .map(|p| p.0 - 40.0);
    let fmt = |v: Option<f64>| v.map_or("never".to_string(), |s| format!("{s:.2} s"));
    e.row(
        "rise 10 → 20 Mbit/s: bw estimate reaches 90 % of the new rate",
        "≈ 1.5 s",
        fmt(rise),
    );
    e.row(
        "drop 20 → 10 Mbit/s: bw estimate back within 10 % of the new rate",
        "≈ 4 s",
        fmt(fall),
    );
    e.judge(
        "time to follow the rise",
        RISE.times(
            PUBLISHED_RISE_S,
            &format!("the published {PUBLISHED_RISE_S} s"),
        ),
        &[rise.unwrap_or(f64::NAN)],
        fmt(rise),
    );
    e.judge(
        "time to follow the drop",
        DROP.times(
            PUBLISHED_DROP_S,
            &format!("the published {PUBLISHED_DROP_S} s"),
        ),
        &[fall.unwrap_or(f64::NAN)],
        fmt(fall),
    );
    let rate: Vec<(f64, f64)> = vec![
        (0.0, 10.0),
        (20.0, 10.0),
        (20.0, 20.0),
        (40.0, 20.0),
        (40.0, 10.0),
        (d.duration_s, 10.0),
    ];
    figure(
        dir,
        &mut e,
        "bandwidth",
        "C4: bottleneck 10 → 20 → 10 Mbit/s, 40 ms (cf. seed 000 fig. 3)",
        "time (s)",
        "Mbit/s",
        (false, false),
        &[
            line("bottleneck rate", rate),
            line("bbr bw estimate", bw),
            line("bbr goodput", gp),
        ],
        &meta.points("bandwidth", None)?,
    )?;
    Ok(e)
}
