//! The figures of a run directory or of a sweep's output directory, drawn
//! from the files a run wrote there (nothing is simulated again): what
//! `bbrlab plot` draws, and `bbrlab sim` after each run.
//!
//! - A run directory (`flows.csv`): the standard time-series figures
//!   ([`figures::plot_run`]), Jain's index over sliding windows
//!   (`fairness`), the CDF of the bottleneck's queueing delay
//!   (`queue_cdf`), and with an `fct.csv` the CDFs of flow completion time
//!   and slowdown (`fct_cdf`, `slowdown_cdf`).
//! - A sweep's output directory (`summary.json` over its runs): the
//!   Pantheon-style throughput against 95th-percentile delay plot
//!   (`pantheon`), one point per run and algorithm, the delay axis
//!   reversed so that better lies up and to the right.

use crate::metrics::{read_flows, read_link, sliding_jain, JainParams};
use crate::plots::{cdf, pantheon_points, read_fct, PantheonPoint};
use figures::{figure, scatter, Figure, Series, Spread};
use std::collections::BTreeMap;
use std::path::Path;

/// The sliding Jain parameters from the command line's seconds, checked:
/// an error names the option and what it allows.
pub fn jain_params(window_s: f64, step_s: f64, threshold: f64) -> Result<JainParams, String> {
    let ns = |v: f64, opt: &str| -> Result<u64, String> {
        if v.is_finite() && v > 0.0 && v <= 86_400.0 {
            Ok((v * 1e9).round() as u64)
        } else {
            Err(format!(
                "{opt} {v}: a number of seconds above 0 (at most 86400)"
            ))
        }
    };
    let p = JainParams {
        window_ns: ns(window_s, "--jain-window")?,
        step_ns: ns(step_s, "--jain-step")?,
        threshold,
    };
    p.check().map_err(|e| format!("--jain-*: {e}"))?;
    Ok(p)
}

/// `bbrlab plot`: [`draw_dir`] with the Jain options as given on the
/// command line, `window_s` `None` when `--jain-window` was not given (1 s
/// then). A window given by name that leaves no window of two or more
/// flows (longer than the run, or than the time after the last flow
/// joined) is refused: fairness.svg used to be left out without a word.
/// The default window is not refused (a run under 1 s still gets its
/// other figures, as `bbrlab sim` draws them).
pub fn plot_dir(
    dir: &Path,
    window_s: Option<f64>,
    step_s: f64,
    threshold: f64,
) -> Result<Vec<String>, String> {
    let jain = jain_params(window_s.unwrap_or(1.0), step_s, threshold)?;
    let flows = dir.join("flows.csv");
    if window_s.is_some() && flows.is_file() {
        let samples = read_flows(&flows)?;
        let end_ns = samples.iter().map(|s| s.0).max();
        let mut ids: Vec<usize> = samples.iter().map(|s| s.1).collect();
        ids.sort_unstable();
        ids.dedup();
        let s = sliding_jain(samples, jain)?;
        // Without samples draw_dir says so; one flow has no fairness.
        if let (Some(end_ns), true, true) = (end_ns, ids.len() >= 2, s.windows.is_empty()) {
            let end = end_ns as f64 / 1e9;
            let join = s.last_join_s.unwrap_or(0.0);
            return Err(format!(
                "--jain-window {} s is too long for the run in {}: its samples end at {end} s and its last flow joined at {join} s, so no window holds two flows from its start to its end and fairness.svg could not be drawn; give at most {} s",
                jain.window_ns as f64 / 1e9,
                dir.display(),
                ((end - join) * 1e6).round() / 1e6
            ));
        }
    }
    draw_dir(dir, jain)
}

/// Most points a CDF line is drawn with.
const CDF_POINTS: usize = 2000;

/// Draws what `dir` holds figures for; returns the stems written (each as
/// `.svg` and `.png`). A directory with neither a `flows.csv` nor a
/// `summary.json` is an error that says what `plot` reads.
pub fn draw_dir(dir: &Path, jain: JainParams) -> Result<Vec<String>, String> {
    jain.check()?;
    if !dir.is_dir() {
        return Err(format!("{}: not a directory", dir.display()));
    }
    let flows = dir.join("flows.csv");
    if flows.is_file() {
        // A header alone: the run took no samples, and every figure
        // would be an empty frame.
        let text =
            std::fs::read_to_string(&flows).map_err(|e| format!("{}: {e}", flows.display()))?;
        if text.lines().nth(1).is_none() {
            return Err(format!(
                "{}: no samples (the run's sample_interval was \"0s\"), so there is nothing to draw; run it again with a sample_interval",
                flows.display()
            ));
        }
        return run_figures(dir, jain);
    }
    if dir.join("summary.json").is_file() {
        return match sweep_figures(dir)? {
            Some(stem) => Ok(vec![stem]),
            None => Err(format!(
                "{}: no run has a flow with an RTT sample; nothing to plot",
                dir.join("summary.json").display()
            )),
        };
    }
    Err(format!(
        "{}: neither a run directory (no flows.csv) nor a sweep's output (no summary.json); give a run-NNNN directory or the directory `bbrlab sim` wrote",
        dir.display()
    ))
}

/// A time/value chart with a title and axes; an empty `series` list is
/// not drawn.
fn chart(
    stem: &Path,
    title: &str,
    x: &str,
    y: &str,
    log_x: bool,
    series: &[Series],
) -> Result<(), String> {
    figure(&Figure {
        stem,
        title,
        x_label: x,
        y_label: y,
        log_x,
        log_y: false,
        series,
        published: &[],
        published_label: None,
    })
}

/// Every figure of one run directory.
pub fn run_figures(dir: &Path, jain: JainParams) -> Result<Vec<String>, String> {
    let mut made: Vec<String> = figures::plot_run(dir)?
        .into_iter()
        .map(str::to_string)
        .collect();
    let s = sliding_jain(read_flows(&dir.join("flows.csv"))?, jain)?;
    if !s.windows.is_empty() {
        let points: Vec<(f64, f64)> = s.windows.iter().map(|w| (w.end_s, w.jain)).collect();
        let (t0, t1) = (points[0].0, points[points.len() - 1].0);
        let mut series = vec![
            Series {
                label: format!(
                    "Jain's index, {} s windows every {} s",
                    jain.window_ns as f64 / 1e9,
                    jain.step_ns as f64 / 1e9
                ),
                points,
            },
            Series {
                label: format!("threshold {}", jain.threshold),
                points: vec![(t0, jain.threshold), (t1, jain.threshold)],
            },
        ];
        if let Some(c) = s.converged_at_s() {
            series.push(Series {
                label: format!("converged at {c:.1} s"),
                points: vec![(c, 0.0), (c, 1.0)],
            });
        }
        chart(
            &dir.join("fairness"),
            "Fairness over sliding windows",
            "window end (s)",
            "Jain's index",
            false,
            &series,
        )?;
        made.push("fairness".into());
    }
    let lpath = dir.join("link.csv");
    if lpath.is_file() {
        let q = read_link(&lpath)?;
        if !q.delay_ms.is_empty() {
            chart(
                &dir.join("queue_cdf"),
                "Bottleneck queueing delay (CDF over samples)",
                "queueing delay (ms)",
                "fraction of samples",
                false,
                &[Series {
                    label: String::new(),
                    points: cdf(&q.delay_ms, CDF_POINTS),
                }],
            )?;
            made.push("queue_cdf".into());
        }
    }
    let fpath = dir.join("fct.csv");
    if fpath.is_file() {
        let rows = read_fct(&fpath)?;
        if !rows.is_empty() {
            // Per algorithm: [completion times, slowdowns].
            let mut by_alg: BTreeMap<&str, [Vec<f64>; 2]> = BTreeMap::new();
            for r in &rows {
                let e = by_alg.entry(&r.algorithm).or_default();
                e[0].push(r.fct_s);
                e[1].push(r.slowdown);
            }
            let lines = |k: usize| -> Vec<Series> {
                by_alg
                    .iter()
                    .map(|(alg, v)| Series {
                        label: format!("{alg} ({} flows)", v[k].len()),
                        points: cdf(&v[k], CDF_POINTS),
                    })
                    .collect()
            };
            chart(
                &dir.join("fct_cdf"),
                "Flow completion time (CDF)",
                "flow completion time (s)",
                "fraction of flows",
                true,
                &lines(0),
            )?;
            chart(
                &dir.join("slowdown_cdf"),
                "Slowdown: completion time over the ideal (CDF)",
                "slowdown",
                "fraction of flows",
                true,
                &lines(1),
            )?;
            made.push("fct_cdf".into());
            made.push("slowdown_cdf".into());
        }
    }
    Ok(made)
}

/// The figures of a sweep's output directory: the Pantheon plot. Returns
/// `None` inside when no run has a point (no flow had an RTT sample).
pub fn sweep_figures(dir: &Path) -> Result<Option<String>, String> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let points = pantheon_points(&text, &path.display().to_string())?;
    if points.is_empty() {
        return Ok(None);
    }
    let mut by_alg: Vec<Series> = Vec::new();
    for p in &points {
        let i = match by_alg.iter().position(|s| s.label == p.algorithm) {
            Some(i) => i,
            None => {
                by_alg.push(Series {
                    label: p.algorithm.clone(),
                    points: Vec::new(),
                });
                by_alg.len() - 1
            }
        };
        by_alg[i].points.push((p.delay_p95_ms, p.throughput_mbps));
    }
    let spreads = seed_spreads(&points, &by_alg);
    let title = if spreads.is_empty() {
        "Throughput against delay, one point per run and algorithm".to_string()
    } else {
        "Throughput against delay per run; whiskers: min–max over seeds, crossing at the mean"
            .to_string()
    };
    let stem = dir.join("pantheon");
    scatter(
        &Figure {
            stem: &stem,
            title: &title,
            x_label: "95th-percentile RTT (ms, log scale, reversed: better is right)",
            y_label: "throughput (Mbit/s)",
            log_x: true,
            log_y: false,
            series: &by_alg,
            published: &[],
            published_label: None,
        },
        true,
        &spreads,
    )?;
    Ok(Some("pantheon".into()))
}

/// Whiskers over the seeds of each sweep point: the points of one
/// algorithm whose runs differ only in `seed`, when there are two or
/// more, spread from their smallest to their largest delay and
/// throughput, crossing at the mean. `series` gives each algorithm's
/// series (and so colour) by label.
fn seed_spreads(points: &[PantheonPoint], series: &[Series]) -> Vec<Spread> {
    /// (algorithm, the run's parameters but the seed, its points).
    type Group = (String, Vec<(String, String)>, Vec<(f64, f64)>);
    let mut groups: Vec<Group> = Vec::new();
    for p in points {
        let key: Vec<(String, String)> = p
            .params
            .iter()
            .filter(|(k, _)| k != "seed")
            .cloned()
            .collect();
        let xy = (p.delay_p95_ms, p.throughput_mbps);
        match groups.iter_mut().find(|g| g.0 == p.algorithm && g.1 == key) {
            Some(g) => g.2.push(xy),
            None => groups.push((p.algorithm.clone(), key, vec![xy])),
        }
    }
    groups
        .into_iter()
        .filter(|g| g.2.len() >= 2)
        .filter_map(|(alg, _, xy)| {
            let series = series.iter().position(|s| s.label == alg)?;
            let n = xy.len() as f64;
            let range = |f: fn(&(f64, f64)) -> f64| {
                xy.iter()
                    .map(f)
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                        (lo.min(v), hi.max(v))
                    })
            };
            Some(Spread {
                series,
                centre: (
                    xy.iter().map(|p| p.0).sum::<f64>() / n,
                    xy.iter().map(|p| p.1).sum::<f64>() / n,
                ),
                x: range(|p| p.0),
                y: range(|p| p.1),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(alg: &str, buffer: &str, seed: &str, delay: f64, tput: f64) -> PantheonPoint {
        PantheonPoint {
            run: String::new(),
            params: vec![
                ("buffer".into(), buffer.into()),
                ("seed".into(), seed.into()),
            ],
            algorithm: alg.into(),
            flows: 1,
            throughput_mbps: tput,
            delay_p95_ms: delay,
        }
    }

    /// Seeds of one sweep point are one group; other parameters are not.
    #[test]
    fn whiskers_span_the_seeds_of_each_sweep_point() {
        let points = [
            point("bbr", "1bdp", "1", 50.0, 9.0),
            point("bbr", "1bdp", "2", 70.0, 8.0),
            point("bbr", "1bdp", "3", 60.0, 10.0),
            point("bbr", "4bdp", "1", 200.0, 9.5),
            point("cubic", "1bdp", "1", 80.0, 7.0),
            point("cubic", "1bdp", "2", 90.0, 5.0),
        ];
        let series = [
            Series {
                label: "bbr".into(),
                points: Vec::new(),
            },
            Series {
                label: "cubic".into(),
                points: Vec::new(),
            },
        ];
        let s = seed_spreads(&points, &series);
        assert_eq!(s.len(), 2, "bbr at 4bdp has one seed: no whiskers");
        assert_eq!(s[0].series, 0);
        assert_eq!(s[0].centre, (60.0, 9.0));
        assert_eq!((s[0].x, s[0].y), ((50.0, 70.0), (8.0, 10.0)));
        assert_eq!(s[1].series, 1);
        assert_eq!(s[1].centre, (85.0, 6.0));
        assert_eq!((s[1].x, s[1].y), ((80.0, 90.0), (5.0, 7.0)));
    }
}
