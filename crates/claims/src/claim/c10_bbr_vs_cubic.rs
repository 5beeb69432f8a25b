//! C10: BBR and CUBIC sharing a bottleneck (seed 000 §6.4). With the
//! buffer swept from 0.5 to 8 BDP, BBR gets a fair share at BDP-sized
//! buffers, and loss-based flows take more than their share when buffers
//! are many BDPs.

use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{goodput, param_f64, RunData};
use crate::stats::jain;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// Jain's index of the two flows' goodputs at a "BDP-sized" buffer (1–2
/// BDP), at its best.
pub const FAIR: Tolerance = Tolerance::new(Range::at_least(0.9), "shares within ≈ 0.35–0.65");

/// BBR's share of the goodput at the deepest buffer: clearly below a fair
/// half, beyond what a single probing cycle moves it.
pub const CUBIC_TAKES_MORE: Tolerance = Tolerance::new(
    Range::below(0.4),
    "clearly below 0.5, beyond what a single probing cycle moves it",
);

/// Judges C10 and draws BBR's share against the buffer.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    const BDP: f64 = 50e6 * 0.040 / 8.0 / 1500.0;
    let mut share = Vec::new();
    let mut fair = Vec::new();
    for d in data {
        let b = param_f64(d, "link.forward.queue.limit") / BDP;
        let (gb, gc) = (goodput(d, 0), goodput(d, 1));
        share.push((b, gb / (gb + gc)));
        fair.push((b, jain(&[gb, gc])));
    }
    share.sort_by(|a, b| a.0.total_cmp(&b.0));
    fair.sort_by(|a, b| a.0.total_cmp(&b.0));
    let show = share
        .iter()
        .map(|p| format!("{:.1} BDP: {:.2}", p.0, p.1))
        .collect::<Vec<_>>()
        .join(", ");
    e.row(
        "BBR's share of goodput by buffer size",
        "fair (≈ 0.5) at BDP-sized buffers; below 0.5 at many BDPs",
        show,
    );
    // "BDP-sized": 1–2 BDP.
    let best = fair
        .iter()
        .filter(|p| (0.99..=2.01).contains(&p.0))
        .map(|p| p.1)
        .fold(0.0, f64::max);
    e.judge(
        "Jain's index at a buffer of 1–2 BDP, at its best,",
        &FAIR,
        &[best],
        format!("{best:.3}"),
    );
    let (deepest, deep) = share.last().copied().unwrap_or((f64::NAN, f64::NAN));
    e.judge(
        &format!("CUBIC takes more than its share at {deepest:.0} BDP: BBR's share"),
        &CUBIC_TAKES_MORE,
        &[deep],
        format!("{deep:.2}"),
    );
    let at1 = share
        .iter()
        .find(|p| (p.0 - 1.0).abs() < 0.05)
        .map_or(f64::NAN, |p| p.1);
    e.notes.push(format!("At 0.5–1 BDP BBR takes most of the link (share {at1:.2} at 1 BDP): BBR v1 ignores the losses its 2-BDP cwnd causes in a shallow buffer, while CUBIC backs off; the fair point is at 1.5–2 BDP here."));
    figure(
        dir,
        &mut e,
        "share-vs-buffer",
        "C10: BBR vs CUBIC, 50 Mbit/s, 40 ms: BBR's share vs buffer",
        "buffer (BDP)",
        "BBR share of goodput",
        (true, false),
        &[
            line("bbr share", share),
            line("fair share", vec![(0.5, 0.5), (8.0, 0.5)]),
        ],
        &[],
    )?;
    Ok(e)
}
