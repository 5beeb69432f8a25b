//! V1: retransmissions on shallow buffers. BBRv3 retransmits less than v1
//! (IETF 117: 12 % fewer retransmissions than v1 on Google.com and YouTube
//! traffic; Google's "shallow" lab test plots v1, v2 and v3's
//! retransmission rate in a buffer of a fraction of the BDP). Four flows of
//! one algorithm share 50 Mbit/s, 40 ms; the buffer is swept from 0.1 to 2
//! BDP, with `bbr3` and with v1 `bbr`.

use super::{at, curve, runs_of, show, trim, V1, V3};
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{param_f64, retransmission_rate, RunData};
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The path's BDP in packets: 50 Mbit/s × 40 ms / 1500 B.
const BDP: f64 = 50e6 * 0.040 / 8.0 / 1500.0;

/// bbr3's retransmission rate against v1's at each buffer depth: lower. IETF 117's 12 % is over a production traffic mix with no path
/// to repeat, so only its sign is checked, point by point.
pub const FEWER: Tolerance = Tolerance::new(
    Range::below(1.0),
    "IETF 117: 12 % fewer on Google's traffic, a mix with no path to repeat, so only the sign",
);

/// bbr3's retransmission rate against v1's in the shallowest buffer (0.1
/// BDP): "far less", at most half. v1 keeps sending at its bandwidth
/// estimate whatever it loses; v3 stops probing at 2 % loss per round and
/// cuts its short-term bounds (draft §5.5.10). No published value: the
/// factor is a judgement of the lab plots' gap, not a number read off one.
pub const FAR_FEWER: Tolerance = Tolerance::new(
    Range::at_most(0.5),
    "v3 bounds its loss at 2 % a round (draft §5.5.10) where v1 ignores it; “far less” read as at most half, no published value",
);

/// bbr3's retransmission rate at every buffer depth: the draft's loss
/// objective, at most 2 % a round trip "and an average packet loss rate
/// considerably lower" (§3.2). The run's whole retransmission rate is
/// that average, STARTUP's overshoot included.
pub const LOSS_BOUND: Tolerance = Tolerance::new(
    Range::at_most(0.02).percent(),
    "draft §3.2: at most 2 % lost a round trip, the average considerably lower",
);

/// Judges V1 and draws retransmission rate against the buffer.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let of = |alg: &str| {
        curve(
            &runs_of(data, "flow.algorithm", alg),
            |d| param_f64(d, "link.forward.queue.limit") / BDP,
            retransmission_rate,
        )
    };
    let (v1, v3) = (of(V1), of(V3));
    let pct = |r: f64| format!("{:.2} %", r * 100.0);
    e.row(
        "retransmission rate by buffer (BDP), v1 bbr",
        "high in shallow buffers",
        show(&v1, "", pct),
    );
    e.row(
        "retransmission rate by buffer (BDP), bbr3",
        "lower than v1 (12 % fewer on Google's traffic)",
        show(&v3, "", pct),
    );
    let shallow: Vec<(f64, f64, f64)> = v3.iter().map(|p| (p.0, p.1, at(&v1, p.0))).collect();
    let ratios: Vec<f64> = shallow.iter().map(|p| p.1 / p.2).collect();
    e.judge(
        "bbr3's retransmission rate over v1's, at every buffer depth,",
        &FEWER,
        &ratios,
        shallow
            .iter()
            .map(|p| format!("{} BDP: {:.2}", trim(p.0), p.1 / p.2))
            .collect::<Vec<_>>()
            .join(", "),
    );
    let (x0, r0) = v3
        .first()
        .map_or((f64::NAN, f64::NAN), |p| (p.0, p.1 / at(&v1, p.0)));
    e.judge(
        &format!("bbr3's retransmission rate over v1's at {} BDP", trim(x0)),
        &FAR_FEWER,
        &[r0],
        format!("{r0:.2}"),
    );
    let rates: Vec<f64> = v3.iter().map(|p| p.1).collect();
    e.judge(
        "bbr3's retransmission rate at every buffer depth",
        &LOSS_BOUND,
        &rates,
        format!(
            "at most {}",
            pct(rates.iter().copied().fold(f64::NAN, f64::max))
        ),
    );
    let to_pct = |c: &[(f64, f64)]| c.iter().map(|p| (p.0, p.1 * 100.0)).collect::<Vec<_>>();
    figure(
        dir,
        &mut e,
        "retransmissions-vs-buffer",
        "V1: retransmission rate vs buffer, 4 flows, 50 Mbit/s, 40 ms",
        "buffer (BDP)",
        "retransmitted (% of packets sent)",
        (true, false),
        &[line("bbr (v1)", to_pct(&v1)), line("bbr3", to_pct(&v3))],
        &[],
    )?;
    Ok(e)
}
