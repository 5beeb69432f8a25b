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
            "The two bandwidth estimates are identical sample for sample in {identical} of {} seeds; in the others the variant's spells on srtt ({:.1} % of its time on the mean) set the two runs on different paths.",
            mb.len(),
            srtt.mean * 100.0
        )
    };
    e.notes.push(same.clone());
    grid_into(&mut e)?;
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
            let high = ((t / HALF_PERIOD_S) as u64).is_multiple_of(2);
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

// ----- issue 26: the grid of readings the seed leaves open ------------------

/// The grid's scenario: C13's path under each statistics cadence, ACK
/// frequency and bandwidth window, bbr beside the variant, C13's seeds.
pub const GRID_SCENARIO: &str = include_str!("../../../../scenarios/c13-cadence-grid.toml");
/// Where the grid's scenario lives, for messages.
pub const GRID_SCENARIO_FILE: &str = "scenarios/c13-cadence-grid.toml";
/// The committed grid, summarised from [`GRID_SCENARIO`]'s runs by
/// `cargo run --release -p claims --example c13_cadence_grid`.
pub const GRID_CSV_FILE: &str = "docs/claims/c13-cadence-grid.csv";
const GRID_CSV: &str = include_str!("../../../../docs/claims/c13-cadence-grid.csv");

/// One combination of the grid, means over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct GridRow {
    /// The receiver's ACK policy (`flow.ack`).
    pub ack: String,
    /// Whether the bandwidth window follows the cycle (QUIC 2018's, C13's
    /// setup) or stays at 10 rounds.
    pub bw_window_follows_cycle: bool,
    /// The variant's statistics cadence (`flow.jitter.cadence`).
    pub cadence: String,
    /// Seeds per algorithm.
    pub seeds: usize,
    /// bbr's and the variant's time to follow a drop, s.
    pub bbr_drop_s: f64,
    /// The variant's.
    pub variant_drop_s: f64,
    /// bbr's and the variant's time to follow a rise, s.
    pub bbr_rise_s: f64,
    /// The variant's.
    pub variant_rise_s: f64,
    /// The variant's share of time with its BDP on srtt.
    pub variant_srtt_share: f64,
}

impl GridRow {
    /// The variant's drop time over bbr's.
    pub fn ratio(&self) -> f64 {
        self.variant_drop_s / self.bbr_drop_s
    }

    /// Whether this combination passes C13's two checks, with C13's
    /// tolerances unchanged: both follow rises within [`RISE`] of C4's
    /// published time, and the variant's drop time is within [`HALVES`]
    /// of bbr's.
    pub fn passes(&self) -> bool {
        let rise = RISE.times(PUBLISHED_RISE_S, "C4's");
        rise.check(self.bbr_rise_s)
            && rise.check(self.variant_rise_s)
            && HALVES
                .times(self.bbr_drop_s, "bbr's")
                .check(self.variant_drop_s)
    }

    /// The combination, in words.
    pub fn label(&self) -> String {
        format!(
            "statistics {}, ACKs {}, bandwidth window {}",
            self.cadence,
            self.ack,
            if self.bw_window_follows_cycle {
                "cycle + 2 (QUIC's)"
            } else {
                "10 rounds"
            }
        )
    }
}

const GRID_HEADER: [&str; 9] = [
    "ack",
    "bw_window_follows_cycle",
    "cadence",
    "seeds",
    "bbr_drop_s",
    "variant_drop_s",
    "bbr_rise_s",
    "variant_rise_s",
    "variant_srtt_share",
];

/// The grid from its runs: per combination, the mean over seeds of each
/// run's mean time to follow drops and rises (as C13 measures them).
/// bbr's runs repeat across the cadence axis (bbr has no statistics);
/// they must be identical there, which this checks.
pub fn grid_rows(data: &[RunData]) -> Result<Vec<GridRow>, String> {
    let key = |d: &RunData, k: &str| {
        d.param(k)
            .map(str::to_string)
            .ok_or_else(|| format!("C13 grid: a run without `{k}`"))
    };
    let mut combos: Vec<(String, String, String)> = Vec::new();
    for d in data {
        let c = (
            key(d, "flow.ack")?,
            key(d, "flow.bbr.bw_window_follows_cycle")?,
            key(d, "flow.jitter.cadence")?,
        );
        if !combos.contains(&c) {
            combos.push(c);
        }
    }
    let mut rows = Vec::new();
    for (ack, win, cadence) in combos {
        let runs = |alg: &str| -> Result<Vec<(String, FollowTimes, f64)>, String> {
            let mut v = Vec::new();
            for d in data.iter().filter(|d| {
                d.param("flow.algorithm") == Some(alg)
                    && d.param("flow.ack") == Some(&ack)
                    && d.param("flow.bbr.bw_window_follows_cycle") == Some(&win)
                    && d.param("flow.jitter.cadence") == Some(&cadence)
            }) {
                let bw = series(d, 0, "bw_estimate_bps", 1e-6)?;
                let srtt = d
                    .summary
                    .flows
                    .first()
                    .and_then(|f| f.time_using_srtt)
                    .unwrap_or(f64::NAN);
                v.push((
                    d.param("seed").unwrap_or("1").to_string(),
                    FollowTimes::of(&bw, d.duration_s),
                    srtt,
                ));
            }
            Ok(v)
        };
        let (b, v) = (runs("bbr")?, runs("bbr-jitter")?);
        if b.is_empty() || b.len() != v.len() {
            return Err(format!(
                "C13 grid: {} bbr and {} variant runs for {ack}/{win}/{cadence}",
                b.len(),
                v.len()
            ));
        }
        let mean_of = |r: &[(String, FollowTimes, f64)], f: &dyn Fn(&FollowTimes) -> &Vec<f64>| {
            r.iter().map(|x| FollowTimes::mean(f(&x.1))).sum::<f64>() / r.len() as f64
        };
        rows.push(GridRow {
            bw_window_follows_cycle: win == "true",
            seeds: b.len(),
            bbr_drop_s: mean_of(&b, &|t| &t.drops),
            variant_drop_s: mean_of(&v, &|t| &t.drops),
            bbr_rise_s: mean_of(&b, &|t| &t.rises),
            variant_rise_s: mean_of(&v, &|t| &t.rises),
            variant_srtt_share: v.iter().map(|x| x.2).sum::<f64>() / v.len() as f64,
            ack,
            cadence,
        });
    }
    // bbr ignores the cadence: its numbers must not depend on it.
    for r in &rows {
        for o in rows.iter().filter(|o| o.ack == r.ack) {
            if o.bbr_drop_s != r.bbr_drop_s
                && o.bw_window_follows_cycle == r.bw_window_follows_cycle
            {
                return Err(format!(
                    "C13 grid: bbr differs across cadences ({} vs {})",
                    r.label(),
                    o.label()
                ));
            }
        }
    }
    Ok(rows)
}

/// Writes the grid as CSV (the `csv` crate), 4 decimals.
pub fn write_grid_csv(path: &Path, rows: &[GridRow]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut w = csv::Writer::from_path(path).map_err(|e| err(&e))?;
    w.write_record(GRID_HEADER).map_err(|e| err(&e))?;
    for r in rows {
        w.write_record([
            r.ack.clone(),
            r.bw_window_follows_cycle.to_string(),
            r.cadence.clone(),
            r.seeds.to_string(),
            format!("{:.4}", r.bbr_drop_s),
            format!("{:.4}", r.variant_drop_s),
            format!("{:.4}", r.bbr_rise_s),
            format!("{:.4}", r.variant_rise_s),
            format!("{:.4}", r.variant_srtt_share),
        ])
        .map_err(|e| err(&e))?;
    }
    w.flush().map_err(|e| err(&e))
}

/// Reads a grid CSV written by [`write_grid_csv`]; `origin` names it in
/// errors.
pub fn parse_grid_csv(text: &str, origin: &str) -> Result<Vec<GridRow>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().map_err(|e| format!("{origin}: {e}"))?.clone();
    if h.iter().collect::<Vec<_>>() != GRID_HEADER {
        return Err(format!(
            "{origin}: header {:?}; expected {GRID_HEADER:?}",
            h.iter().collect::<Vec<_>>()
        ));
    }
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| format!("{origin}: {e}"))?;
        let line = i + 2;
        let num = |k: usize| -> Result<f64, String> {
            rec[k].parse::<f64>().map_err(|_| {
                format!(
                    "{origin}:{line}: `{}` = `{}` is not a number",
                    GRID_HEADER[k], &rec[k]
                )
            })
        };
        rows.push(GridRow {
            ack: rec[0].to_string(),
            bw_window_follows_cycle: match &rec[1] {
                "true" => true,
                "false" => false,
                v => {
                    return Err(format!(
                        "{origin}:{line}: bw_window_follows_cycle `{v}`; allowed true or false"
                    ))
                }
            },
            cadence: rec[2].to_string(),
            seeds: rec[3]
                .parse()
                .map_err(|_| format!("{origin}:{line}: seeds `{}`", &rec[3]))?,
            bbr_drop_s: num(4)?,
            variant_drop_s: num(5)?,
            bbr_rise_s: num(6)?,
            variant_rise_s: num(7)?,
            variant_srtt_share: num(8)?,
        });
    }
    Ok(rows)
}

/// The committed grid ([`GRID_CSV_FILE`]).
pub fn committed_grid() -> Result<Vec<GridRow>, String> {
    parse_grid_csv(GRID_CSV, GRID_CSV_FILE)
}

/// Runs [`GRID_SCENARIO`] in `work` (`jobs` at a time) and summarises it.
pub fn run_grid(work: &Path, jobs: Option<usize>) -> Result<Vec<GridRow>, String> {
    use runner::sweep::{run_one_with, run_parallel, Quiet};
    let sc = scenario::parse(
        GRID_SCENARIO,
        GRID_SCENARIO_FILE,
        Path::new("."),
        Path::new(GRID_SCENARIO_FILE),
    )
    .map_err(|e| e.to_string())?;
    let runs: Vec<(usize, scenario::Run)> = sc.runs.into_iter().enumerate().collect();
    let done = run_parallel(
        &runs,
        jobs,
        &Quiet,
        |(i, r)| (format!("grid run {i}"), r.config.duration_ns),
        |(i, r), clock| {
            run_one_with(
                "c13-cadence-grid",
                r,
                &work.join(format!("run-{i:04}")),
                clock,
            )
        },
    );
    let mut data = Vec::new();
    for ((i, r), s) in runs.iter().zip(done) {
        let summary = s.ok_or_else(|| format!("grid run {i} did not complete"))??;
        data.push(RunData {
            params: r.params.clone(),
            summary,
            dir: work.join(format!("run-{i:04}")),
            href: String::new(),
            duration_s: r.config.duration_ns as f64 / 1e9,
        });
    }
    grid_rows(&data)
}

/// Adds the committed grid to C13's evaluation: one row per combination.
fn grid_into(e: &mut Eval) -> Result<(), String> {
    let rows = committed_grid()?;
    let passing: Vec<String> = rows
        .iter()
        .filter(|r| r.passes())
        .map(GridRow::label)
        .collect();
    for r in &rows {
        e.row(
            &format!(
                "grid (issue 26): {}; time to follow a drop, bbr / variant, mean over {} seeds",
                r.label(),
                r.seeds
            ),
            "variant ≈ half of bbr",
            format!(
                "{:.2} s / {:.2} s ({:.2}×); rises {:.2} / {:.2} s; variant on srtt {:.1} %{}",
                r.bbr_drop_s,
                r.variant_drop_s,
                r.ratio(),
                r.bbr_rise_s,
                r.variant_rise_s,
                r.variant_srtt_share * 100.0,
                if r.passes() {
                    " — passes C13's checks"
                } else {
                    ""
                }
            ),
        );
    }
    e.notes.push(format!(
        "The grid (issue 26; {GRID_SCENARIO_FILE}, summarised in {GRID_CSV_FILE} by `cargo run --release -p claims --example c13_cadence_grid`) varies what seed 001 leaves open: how often eqs. (8)–(9) run, the receiver's ACK frequency (QUIC 2018's 2 packets / 25 ms, or Chromium's ACK decimation: 10 packets or min_rtt/4 after 100 packets), and the bandwidth window (cycle + 2 rounds as QUIC's, or 10 rounds). Every sample is also once per ACK frame: bbrlab's QUIC model hands one RTT sample per frame, so with decimated ACKs it is the per-frame cadence of QUIC's own RttStats. Every 10 or 30 samples skips the samples between; per round uses the ACK that starts each round. {}",
        if passing.is_empty() {
            "No combination passes C13's checks with its tolerance unchanged.".to_string()
        } else {
            format!("Combinations that pass C13's checks with its tolerance unchanged: {}.", passing.join("; "))
        }
    ));
    Ok(())
}
