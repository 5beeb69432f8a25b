//! V2: sharing with CUBIC by buffer depth, beside C10's v1 curve. One
//! `bbr3` (or v1 `bbr`) flow and one CUBIC flow share C10's path, 50
//! Mbit/s and 40 ms, with the buffer swept from 0.5 to 8 BDP. Gomez et al.
//! (2024): v3's coexistence with CUBIC "depends on factors such as buffer
//! size and the number of flows", and is best with a buffer between 1 and
//! 10 BDP; Zeynali et al. (PAM 2024) found v3 leaves CUBIC little room.
//! The v1 runs are C10's own scenario, so its curve is C10's.

use super::{at, curve, runs_of, show, trim, V1, V3};
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{goodput, param_f64, RunData};
use crate::stats::jain;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The path's BDP in packets: 50 Mbit/s × 40 ms / 1500 B (C10's).
const BDP: f64 = 50e6 * 0.040 / 8.0 / 1500.0;

/// The algorithm key of the swept first flow.
const KEY: &str = "flow.0.algorithm";

/// bbr3's share over v1's in the shallowest buffer (0.5 BDP): lower. v1
/// takes 0.9 of the link there because it ignores the losses its 2-BDP
/// cwnd causes (C10); v3 bounds its loss at 2 % a round (draft §5.5.10).
/// No published per-depth share: the order is the check.
pub const YIELDS_WHEN_SHALLOW: Tolerance = Tolerance::new(
    Range::below(1.0),
    "v1 ignores the losses its 2-BDP cwnd causes (C10), v3 bounds them (draft §5.5.10); no published per-depth share, so the order",
);

/// The buffer at which bbr3 and CUBIC share most fairly (highest Jain's
/// index), in BDP: between 1 and 8 (the sweep's deepest), where Gomez et
/// al. found v3's coexistence with CUBIC best ("between BDP and 10BDP").
pub const BEST_BETWEEN: Tolerance = Tolerance::new(
    Range::between(1.0, 8.0).unit(" BDP"),
    "Gomez et al. 2024: optimal coexistence between 1 and 10 BDP; 8 BDP is the sweep's deepest",
);

/// Jain's index of bbr3 and CUBIC at that best buffer: shares within about
/// 0.3–0.7. Gomez et al. call it "optimal coexistence" without a number,
/// and found v3 "comparable to v2"; Zeynali et al. found v3 leaving CUBIC
/// little room. 0.85 accepts neither a starved flow nor a 75/25 split.
pub const COEXISTS: Tolerance = Tolerance::new(
    Range::at_least(0.85),
    "shares within ≈ 0.3–0.7: “optimal coexistence” (Gomez et al.) has no published number",
);

/// Judges V2 and draws bbr3's and v1's share against the buffer.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let depth = |d: &RunData| param_f64(d, "link.forward.queue.limit") / BDP;
    let share = |d: &RunData| {
        let (b, c) = (goodput(d, 0), goodput(d, 1));
        b / (b + c)
    };
    let of = |alg: &str| curve(&runs_of(data, KEY, alg), depth, share);
    let (v1, v3) = (of(V1), of(V3));
    let fair3 = curve(&runs_of(data, KEY, V3), depth, |d| {
        jain(&[goodput(d, 0), goodput(d, 1)])
    });
    let two = |s: f64| format!("{s:.2}");
    e.row(
        "v1 bbr's share of goodput by buffer (BDP), C10's curve",
        "fair at BDP-sized buffers, below 0.5 at many BDPs (C10)",
        show(&v1, "", two),
    );
    e.row(
        "bbr3's share of goodput by buffer (BDP)",
        "depends on the buffer; best coexistence between 1 and 10 BDP",
        show(&v3, "", two),
    );
    let (x0, s3) = v3.first().copied().unwrap_or((f64::NAN, f64::NAN));
    let s1 = at(&v1, x0);
    e.judge(
        &format!("bbr3's share at {} BDP", trim(x0)),
        YIELDS_WHEN_SHALLOW.times(s1, &format!("v1's {s1:.2}")),
        &[s3],
        format!("{s3:.2}"),
    );
    let best =
        fair3.iter().copied().fold(
            (f64::NAN, f64::NEG_INFINITY),
            |b, p| if p.1 > b.1 { p } else { b },
        );
    e.judge(
        "The buffer where bbr3 and CUBIC share most fairly (highest Jain's index)",
        &BEST_BETWEEN,
        &[best.0],
        format!("{} BDP", trim(best.0)),
    );
    e.judge(
        &format!(
            "Jain's index of bbr3 and CUBIC there ({} BDP)",
            trim(best.0)
        ),
        &COEXISTS,
        &[best.1],
        format!("{:.3}", best.1),
    );
    figure(
        dir,
        &mut e,
        "share-vs-buffer",
        "V2: bbr3 or v1 bbr vs CUBIC, 50 Mbit/s, 40 ms: BBR's share vs buffer",
        "buffer (BDP)",
        "BBR's share of goodput",
        (true, false),
        &[
            line("bbr (v1, C10)", v1),
            line("bbr3", v3),
            line("fair share", vec![(0.5, 0.5), (8.0, 0.5)]),
        ],
        &[],
    )?;
    Ok(e)
}
