//! C7: median RTT against buffer size at 128 kbit/s (seed 000 fig. 10).
//! With 8 flows on 128 kbit/s, 40 ms and the bottleneck buffer swept,
//! BBR's median RTT stays near the minimum whatever the buffer; CUBIC's
//! grows linearly with it.
//!
//! The figure shows the steady state, so each run is measured over its
//! second half, after the start-up transient (CUBIC needs ≈ 900 s to fill
//! 4000 packets at this rate).

use crate::figure::{figure_bands, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{flows_table, param_f64, sample_interval, RunData};
use crate::stats::quantile;
use crate::tolerance::{Range, Tolerance};
use figures::Band;
use std::path::Path;

/// The path: one 1500-byte packet takes 93.75 ms at 128 kbit/s.
const PACKET_S: f64 = 1500.0 * 8.0 / 128e3;
/// The propagation RTT.
const PROP_S: f64 = 0.040;
/// The flows.
const FLOWS: f64 = 8.0;

/// In every run, the larger over the smaller of the medians of the third
/// and fourth quarters: with 8 unsynchronised flows CUBIC's sawtooth and
/// BBR's PROBE_RTT episodes move a quarter's median by a few per cent; the
/// start-up transient moves it by 2× or more.
pub const STEADY: Tolerance = Tolerance::new(
    Range::at_most(1.10),
    "sawtooth and PROBE_RTT move a quarter's median by a few %, the start-up transient by 2× or more",
);

/// BBR's largest median RTT over its smallest, over the buffers that can
/// hold its floor: "flat" is read off a log-log plot over two decades of
/// buffer where CUBIC's curve spans 80×, and the bound leaves room for
/// BBR's PROBE_RTT episodes, which shift with the buffer's drops at the
/// smaller sizes.
pub const FLAT: Tolerance = Tolerance::new(
    Range::at_most(1.25),
    "“flat” on the paper's log-log axes, where CUBIC spans two decades",
);

/// BBR's largest median RTT above the floor, over the least RTT 8 BBR
/// flows can have: the floor's queue inflates every flow's min_rtt, so
/// 2 × bw × min_rtt exceeds 4 packets and the 1.25-gain probing phases
/// add to the queue; a buffer-filling sender is 100× above the floor at
/// 4000 packets.
pub const NEAR_FLOOR: Tolerance = Tolerance::new(
    Range::at_most(1.5),
    "the floor's queue inflates min_rtt and so cwnd; probing adds a little",
);

/// BBR's median RTT over CUBIC's at the largest buffer: the order of
/// magnitude the paper's log axis shows.
pub const ORDER: Tolerance = Tolerance::new(
    Range::at_most(0.1),
    "an order of magnitude, as the paper's log axis shows",
);

/// CUBIC's smallest growth of the median RTT from one buffer size to the
/// next: it grows strictly.
pub const GROWS: Tolerance = Tolerance::new(
    Range::above(0.0).unit(" s"),
    "the paper's line rises at every size",
);

/// CUBIC's median RTT over the RTT behind a full buffer, at every size:
/// CUBIC fills the buffer until a drop and then cuts cwnd to β = 0.7, so
/// even a cut of all flows at once leaves the queue mostly full (the
/// path's BDP, 2 kB, is nothing next to the buffer); no packet waits
/// behind more than a full buffer, with room for sampling and rounding.
pub const LINEAR: Tolerance = Tolerance::new(
    Range::between(0.7, 1.01),
    "CUBIC's β = 0.7 cut leaves the buffer mostly full; no packet waits behind more than a full one, but for sampling and rounding",
);

/// One run's steady state: RTT samples (every flow's latest RTT, at each
/// sample time) from the second half of the run.
struct SteadyState {
    /// Buffer, packets.
    buffer: f64,
    /// Median RTT over the second half, s.
    median: f64,
    /// 25th and 75th percentiles over the second half, s.
    p25: f64,
    p75: f64,
    /// Medians of the third and the fourth quarter, s: equal when the
    /// second half is past the start-up transient.
    q3: f64,
    q4: f64,
}

fn steady_state(d: &RunData) -> Result<SteadyState, String> {
    let (t, p) = flows_table(d)?;
    let rtt = t.points(&p, "time_s", "rtt_ms", None)?;
    let half = d.duration_s / 2.0;
    let window = |from: f64, to: f64| -> Vec<f64> {
        rtt.iter()
            .filter(|s| s.0 >= from && s.0 < to)
            .map(|s| s.1 / 1000.0)
            .collect()
    };
    let mut second = window(half, f64::INFINITY);
    if second.is_empty() {
        return Err(format!(
            "{}: no RTT samples in the second half (is sample_interval 0?)",
            d.dir.display()
        ));
    }
    Ok(SteadyState {
        buffer: param_f64(d, "link.forward.queue.limit"),
        median: quantile(&mut second, 0.5),
        p25: quantile(&mut second, 0.25),
        p75: quantile(&mut second, 0.75),
        q3: quantile(&mut window(half, 1.5 * half), 0.5),
        q4: quantile(&mut window(1.5 * half, f64::INFINITY), 0.5),
    })
}

/// Seconds with precision that suits RTTs from 0.1 s to minutes.
fn secs(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.2} s")
    }
}

/// The smallest of `v`, NaN if any is NaN (∞ for none).
fn least(v: impl Iterator<Item = f64>) -> f64 {
    v.fold(
        f64::INFINITY,
        |m, x| if x < m || x.is_nan() { x } else { m },
    )
}

/// Judges C7 and draws the median RTT against the buffer.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let curve = |alg: &str| -> Result<Vec<SteadyState>, String> {
        let mut v = data
            .iter()
            .filter(|d| d.param("flow.algorithm") == Some(alg))
            .map(steady_state)
            .collect::<Result<Vec<_>, _>>()?;
        v.sort_by(|a, b| a.buffer.total_cmp(&b.buffer));
        Ok(v)
    };
    let (bbr, cubic) = (curve("bbr")?, curve("cubic")?);
    if bbr.is_empty() || bbr.len() != cubic.len() {
        return Err(format!(
            "C7 needs the same buffers for bbr and cubic: {} and {} runs",
            bbr.len(),
            cubic.len()
        ));
    }
    let duration = data.first().map_or(0.0, |d| d.duration_s);
    let show = |c: &[SteadyState]| {
        c.iter()
            .map(|p| format!("{:.0}: {}", p.buffer, secs(p.median)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    e.row(
        &format!("BBR median RTT by buffer (packets), second half of a {duration:.0} s run"),
        "near the minimum at every size",
        show(&bbr),
    );
    e.row(
        &format!("CUBIC median RTT by buffer (packets), second half of a {duration:.0} s run"),
        "grows linearly",
        show(&cubic),
    );
    // The RTT of a packet behind a full buffer of b packets: b packets
    // ahead of it, its own serialisation, and the propagation RTT.
    let full = |b: f64| (b + 1.0) * PACKET_S + PROP_S;
    // BBR's floor: 8 flows × Linux's 4-packet minimum cwnd always queued.
    let floor_pkts = FLOWS * 4.0;
    let floor = full(floor_pkts);
    e.row(
        "BBR's least possible RTT with 8 flows (4-packet minimum cwnd each, 32 packets queued)",
        "—",
        secs(floor),
    );

    let worst_q = bbr
        .iter()
        .chain(&cubic)
        .map(|p| (p.q4 / p.q3).max(p.q3 / p.q4))
        .fold(1.0, f64::max);
    e.judge(
        "steady state: in every run the larger over the smaller of the third and fourth quarters' medians",
        &STEADY,
        &[worst_q],
        format!("worst ratio {worst_q:.3}"),
    );

    let above: Vec<&SteadyState> = bbr.iter().filter(|p| p.buffer > floor_pkts).collect();
    let (lo, hi) = above.iter().fold((f64::INFINITY, 0.0f64), |(l, h), p| {
        (l.min(p.median), h.max(p.median))
    });
    let flat = hi / lo;
    e.judge(
        &format!(
            "BBR flat: over the {} buffers above its {floor_pkts:.0}-packet floor ({:.0}–{:.0} packets), its largest median RTT over its smallest",
            above.len(),
            above.first().map_or(f64::NAN, |p| p.buffer),
            above.last().map_or(f64::NAN, |p| p.buffer),
        ),
        &FLAT,
        // Flat needs a few buffers above the floor to be seen at all.
        &[if above.len() >= 3 { flat } else { f64::NAN }],
        format!("{} / {} = {flat:.2}", secs(hi), secs(lo)),
    );
    e.judge(
        "BBR near its least possible RTT: its largest median above the floor",
        NEAR_FLOOR.times(floor, &secs(floor)),
        &[hi],
        format!("{} ({:.2}×)", secs(hi), hi / floor),
    );
    let (lb, lc) = (bbr[bbr.len() - 1].median, cubic[cubic.len() - 1].median);
    e.row(
        &format!(
            "at the largest buffer ({:.0} packets), BBR / CUBIC",
            bbr[bbr.len() - 1].buffer
        ),
        "≪ 1 (an order of magnitude or more)",
        format!("{} / {} = {:.3}", secs(lb), secs(lc), lb / lc),
    );
    e.judge(
        "BBR's median RTT at the largest buffer",
        ORDER.times(lc, "CUBIC's"),
        &[lb],
        format!("{:.3}×", lb / lc),
    );
    e.judge(
        "CUBIC's median RTT grows with every step of the buffer: its smallest step",
        &GROWS,
        &[least(cubic.windows(2).map(|w| w[1].median - w[0].median))],
        show(&cubic),
    );
    let ratios: Vec<f64> = cubic.iter().map(|p| p.median / full(p.buffer)).collect();
    let (rlo, rhi) = ratios
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
    e.judge(
        &format!(
            "CUBIC linear in the buffer: at every size its median over the RTT behind a full buffer ((b + 1) × {} ms + {} ms)",
            PACKET_S * 1000.0,
            PROP_S * 1000.0
        ),
        &LINEAR,
        &[rlo, rhi],
        format!("{rlo:.2}–{rhi:.2}"),
    );
    let identical = bbr
        .windows(2)
        .filter(|w| w[0].buffer > floor_pkts && w[0].median == w[1].median && w[0].p75 == w[1].p75)
        .count();
    e.notes.push(format!(
        "Each median is taken over the second half of a {duration:.0} s run, from every flow's latest RTT sample every {} (flows.csv), after the start-up transient; the band is the 25–75 % range of those samples. Below 32 packets (8 flows × Linux's 4-packet minimum cwnd) no sender can keep the buffer from filling, so BBR and CUBIC coincide there. Above it BBR's level is set by that floor, {}, not by the path's 134 ms minimum: at 128 kbit/s a 1500-byte packet takes 94 ms to send, so the path's BDP (2 kB) is far below one packet per flow. The paper does not state its packet size or minimum window.{}",
        data.first()
            .and_then(sample_interval)
            .map_or("sample".to_string(), |s| format!("{s} s")),
        secs(floor),
        if identical > 0 {
            " BBR's runs with the largest buffers are identical to each other: its queue never reaches them, so the buffer size makes no difference at all."
        } else {
            ""
        }
    ));
    let to_band = |label: &str, c: &[SteadyState]| Band {
        label: label.to_string(),
        points: c
            .iter()
            .map(|p| (p.buffer, p.median, p.p25, p.p75))
            .collect(),
    };
    figure_bands(
        dir,
        &mut e,
        "rtt-vs-buffer",
        "C7: 8 flows, 128 kbit/s, 40 ms: steady-state median RTT vs buffer (cf. seed 000 fig. 10)",
        ("buffer (1500-byte packets)", "RTT (s), median and 25–75 %"),
        (true, true),
        &[line(
            "RTT behind a full buffer",
            cubic.iter().map(|p| (p.buffer, full(p.buffer))).collect(),
        )],
        &[
            to_band("bbr (median, 25–75 % of samples)", &bbr),
            to_band("cubic (median, 25–75 % of samples)", &cubic),
        ],
        &[],
    )?;
    Ok(e)
}
