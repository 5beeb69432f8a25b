//! C13: a square-wave bandwidth, bbr against bbr-jitter (seed 001 fig.
//! 6). On a 60 ms path whose bandwidth alternates between 10 and 5 Mbit/s
//! every 10 s, both follow rises quickly; on each drop the variant
//! converges in about half BBR's time.
//!
//! Measured over several seeds on the authors' QUIC 2018 stack; the verdict
//! uses the means over the seeds.

use super::c04_bandwidth_step::{PUBLISHED_RISE_S, RISE};
use crate::figure::{figure, figure_bands, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{series, RunData};
use crate::seeds::{band, by_point, Point, Spread};
use crate::tolerance::{Range, Tolerance};
use runner::stats::Stats;
use std::path::Path;

/// The variant's time to follow drops over bbr's, means over the seeds:
/// the published "about half" is read off one run's curves, and the bound
/// leaves room for that reading while a ratio near 1 (no effect) fails.
pub const HALVES: Tolerance = Tolerance::new(
    Range::at_most(0.7),
    "published ≈ 0.5× from one run; room for that reading, while “no effect” fails",
);

/// The square wave: high (10 Mbit/s) for the first half of each 20 s
/// period, then low (5 Mbit/s).
const HALF_PERIOD_S: f64 = 10.0;

/// How long one run's bandwidth estimate takes to follow each change of
/// the square wave, s (10 s, the rest of the half period, if it never does).
struct FollowTimes {
    /// After each drop to 5 Mbit/s (at 10, 30, 50 … s): until the estimate
    /// is within 10 % of 5 Mbit/s.
    drops: Vec<f64>,
    /// After each rise to 10 Mbit/s (at 20, 40 … s): until it reaches 90 %.
    rises: Vec<f64>,
}

impl FollowTimes {
    fn of(bw: &[(f64, f64)], duration: f64) -> FollowTimes {
        let first = |from: f64, ok: &dyn Fn(f64) -> bool| {
            bw.iter()
                .find(|p| p.0 >= from && ok(p.1))
                .map_or(HALF_PERIOD_S, |p| p.0 - from)
        };
        let mut t = HALF_PERIOD_S;
        let (mut drops, mut rises) = (Vec::new(), Vec::new());
        while t + HALF_PERIOD_S <= duration {
            drops.push(first(t, &|b| b <= 5.5));
            if t + 2.0 * HALF_PERIOD_S <= duration {
                rises.push(first(t + HALF_PERIOD_S, &|b| b >= 9.0));
            }
            t += 2.0 * HALF_PERIOD_S;
        }
        FollowTimes { drops, rises }
    }
    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }
}

/// Each run of a point: its seed, the run, its bandwidth estimate
/// (Mbit/s over time) and its convergence times.
type Runs<'a> = Vec<(String, &'a RunData, Vec<(f64, f64)>, FollowTimes)>;

fn measure<'a>(p: &Point<'a>) -> Result<Runs<'a>, String> {
    p.runs
        .iter()
        .map(|&d| {
            let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
            let times = FollowTimes::of(&bw, d.duration_s);
            Ok((d.param("seed").unwrap_or("1").to_string(), d, bw, times))
        })
        .collect()
}

/// Judges C13 and draws the bandwidth estimates and the convergence times.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let points = by_point(data);
    let point = |alg: &str| {
        points
            .iter()
            .find(|p| p.param("flow.algorithm") == Some(alg))
            .ok_or_else(|| format!("C13: no {alg} runs"))
    };
    let (bbr, var) = (point("bbr")?, point("bbr-jitter")?);
    let (mb, mv) = (measure(bbr)?, measure(var)?);
    let per_run = |m: &Runs<'_>, f: &dyn Fn(&FollowTimes) -> &Vec<f64>| {
        Stats::of(
            &m.iter()
                .map(|r| FollowTimes::mean(f(&r.3)))
                .collect::<Vec<_>>(),
        )
    };
    let (db, dv) = (per_run(&mb, &|t| &t.drops), per_run(&mv, &|t| &t.drops));
    let (rb, rv) = (per_run(&mb, &|t| &t.rises), per_run(&mv, &|t| &t.rises));
    let srtt = var.stats(|d| {
        d.summary
            .flows
            .first()
            .and_then(|f| f.time_using_srtt)
            .unwrap_or(f64::NAN)
    });
    e.row(
        "time to follow a drop (bw estimate within 10 % of 5 Mbit/s), mean over seeds (min–max): bbr / variant",
        "variant ≈ half of bbr",
        format!("{} s / {} s ({:.2}×)", db.show(2), dv.show(2), dv.mean / db.mean),
    );
    e.row(
        "time to follow a rise (bw estimate ≥ 90 % of 10 Mbit/s), mean over seeds (min–max): bbr / variant",
        "both quick",
        format!("{} s / {} s", rb.show(2), rv.show(2)),
    );
    e.row(
        "share of the variant's time with its BDP on srtt (rttvar > γ·srtt, eqs. 10–11), over seeds",
        "— (not reported)",
        format!(
            "{:.2} % ({:.2}–{:.2} %, n = {})",
            srtt.mean * 100.0,
            srtt.min * 100.0,
            srtt.max * 100.0,
            srtt.n
        ),
    );
    e.judge(
        "time to follow a rise, mean over seeds, of bbr and of the variant",
        RISE.times(
            PUBLISHED_RISE_S,
            &format!("C4's published {PUBLISHED_RISE_S} s"),
        ),
        &[rb.mean, rv.mean],
        format!("{:.2} s, {:.2} s", rb.mean, rv.mean),
    );
    e.judge(
        &format!(
            "the variant's time to follow drops, mean over {} seeds,",
            dv.n
        ),
        HALVES.times(db.mean, "bbr's"),
        &[dv.mean],
        format!("{:.2}×", dv.mean / db.mean),
    );
    // Evidence per seed, and whether the variant ever differed from bbr.
    let mut identical = 0;
    let mut per_seed = Vec::new();
    for (s, _, bw_b, tb) in &mb {
        let Some((_, dvar, bw_v, tv)) = mv.iter().find(|r| &r.0 == s) else {
            continue;
        };
        if bw_b == bw_v {
            identical += 1;
        }
        per_seed.push(format!(
            "seed {s}: {:.2} / {:.2} s (srtt {:.2} %)",
            FollowTimes::mean(&tb.drops),
            FollowTimes::mean(&tv.drops),
            dvar.summary
                .flows
                .first()
                .and_then(|f| f.time_using_srtt)
                .map_or(f64::NAN, |x| x * 100.0)
        ));
    }
    e.notes.push(format!(
        "Drop convergence per seed, bbr / variant (mean over the run's drops), with the variant's time on srtt: {}.",
        per_seed.join("; ")
    ));
    let same = if identical == mb.len() && !mb.is_empty() {
        format!(
            "In all {identical} seeds the two bandwidth estimates are identical sample for sample: the variant never left bbr's rules, so the two lines coincide."
        )
    } else {
        format!(
            "The two bandwidth estimates are identical sample for sample in {identical} of {} seeds; in the others the variant's brief spells on srtt ({:.1} % of its time on the mean) set the two runs on different paths, without making either faster.",
            mb.len(),
            srtt.mean * 100.0
        )
    };
    e.notes.push(same.clone());
    let Some((s1, d1, bw1, _)) = mb.first() else {
        return Err("C13: no runs".into());
    };
    let bwv1 = mv
        .iter()
        .find(|r| &r.0 == s1)
        .map_or_else(Vec::new, |r| r.2.clone());
    let rate: Vec<(f64, f64)> = {
        let mut v = Vec::new();
        let mut t = 0.0;
        while t < d1.duration_s {
            let high = ((t / HALF_PERIOD_S) as u64) % 2 == 0;
            let r = if high { 10.0 } else { 5.0 };
            v.push((t, r));
            v.push(((t + HALF_PERIOD_S).min(d1.duration_s), r));
            t += HALF_PERIOD_S;
        }
        v
    };
    let identical_1 = bw1 == &bwv1;
    figure(
        dir,
        &mut e,
        "bandwidth",
        &format!(
            "C13: square wave 5 ↔ 10 Mbit/s, 60 ms, seed {s1}: bw estimate (cf. seed 001 fig. 6){}",
            if identical_1 {
                " — bbr and variant identical"
            } else {
                ""
            }
        ),
        "time (s)",
        "Mbit/s",
        (false, false),
        &[
            line("link rate", rate),
            line(
                if identical_1 {
                    "bbr bw estimate (= bbr-jitter's)"
                } else {
                    "bbr bw estimate"
                },
                bw1.clone(),
            ),
            line("bbr-jitter bw estimate", bwv1),
        ],
        &[],
    )?;
    // Each change of the wave: mean time over seeds with its min–max.
    let events = |m: &Runs<'_>, f: &dyn Fn(&FollowTimes) -> &Vec<f64>, first: f64| {
        let k = m.iter().map(|r| f(&r.3).len()).min().unwrap_or(0);
        (0..k)
            .map(|i| {
                let x = first + 2.0 * HALF_PERIOD_S * i as f64;
                (
                    x,
                    Stats::of(&m.iter().map(|r| f(&r.3)[i]).collect::<Vec<_>>()),
                )
            })
            .collect::<Vec<_>>()
    };
    let n = mb.len();
    figure_bands(
        dir,
        &mut e,
        "convergence",
        &format!("C13: time to follow each change, mean and min–max over {n} seeds"),
        ("time of the change (s)", "time to follow (s)"),
        (false, false),
        &[],
        &[
            band(
                "bbr, drops",
                &events(&mb, &|t| &t.drops, HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr-jitter, drops",
                &events(&mv, &|t| &t.drops, HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr, rises",
                &events(&mb, &|t| &t.rises, 2.0 * HALF_PERIOD_S),
                Spread::MinMax,
            ),
            band(
                "bbr-jitter, rises",
                &events(&mv, &|t| &t.rises, 2.0 * HALF_PERIOD_S),
                Spread::MinMax,
            ),
        ],
        &[],
    )?;
    Ok(e)
}
