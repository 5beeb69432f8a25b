//! The worst path's own figures: what the path offered beside what the
//! flows made of it, over the run. The history figure shows that the
//! search found a bad path; these show *how* the path is bad for the
//! controller, and let a reader check the reading's numbers
//! ([`super::reading`]) against the time series they come from.
//!
//! Two charts, each written as SVG and PNG:
//! - `<name>-rate`: the path's rate as payload (the link's rate times the
//!   payload share of a packet, so it is the most goodput could be) as a
//!   step over the schedule's pieces, each flow's goodput, and each
//!   flow's bandwidth estimate where its controller reports one;
//! - `<name>-rtt`: the path's base round trip (its pieces' forward delay
//!   plus the reverse delay, without queueing or per-packet jitter) as a
//!   step, each flow's smoothed RTT, and each flow's min_rtt estimate
//!   where its controller reports one.

use super::budget::SearchPath;
use runner::run::FlowSample;
use std::path::Path;

/// The two charts' series for `samples` on `path`; `names`: each flow's
/// legend name (flows beyond it are named by number). Kept apart from
/// the drawing so a test can check what is drawn.
pub struct WorstSeries {
    /// Mbit/s against s.
    pub rate: Vec<figures::Series>,
    /// ms against s.
    pub rtt: Vec<figures::Series>,
}

/// A step line through each piece's value from its start to its end, s.
fn step(path: &SearchPath, value: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(2 * path.pieces.len());
    for (i, p) in path.pieces.iter().enumerate() {
        let v = value(i);
        points.push((p.start_ns as f64 / 1e9, v));
        points.push((path.piece_end_ns(i) as f64 / 1e9, v));
    }
    points
}

/// Legend names of the flows: `names` in order, a flow past them or a
/// name that recurs (two flows of one controller) gets its number.
fn flow_names(names: &[String], flows: usize) -> Vec<String> {
    (0..flows)
        .map(|f| match names.get(f) {
            Some(n) if names.iter().filter(|m| *m == n).count() == 1 => n.clone(),
            Some(n) => format!("{n} (flow {f})"),
            None => format!("flow {f}"),
        })
        .collect()
}

impl WorstSeries {
    /// The series of both charts. `payload`: the payload share of a
    /// packet's wire bytes (the goodput the link's rate allows).
    pub fn new(path: &SearchPath, samples: &[FlowSample], payload: f64, names: &[String]) -> Self {
        let flows = samples.iter().map(|s| s.flow + 1).max().unwrap_or(0);
        let names = flow_names(names, flows);
        let mut rate = vec![figures::Series {
            label: "the path's rate (payload)".into(),
            points: step(path, |i| path.pieces[i].rate_bps * payload / 1e6),
        }];
        let mut rtt = vec![figures::Series {
            label: "the path's base round trip".into(),
            points: step(path, |i| path.piece_rtt_ns(i) as f64 / 1e6),
        }];
        let t = |s: &FlowSample| s.t_ns as f64 / 1e9;
        for (f, name) in names.iter().enumerate() {
            let mine: Vec<&FlowSample> = samples.iter().filter(|s| s.flow == f).collect();
            let series = |label: String, y: &dyn Fn(&FlowSample) -> Option<f64>| {
                let points: Vec<(f64, f64)> = mine
                    .iter()
                    .filter_map(|s| y(s).map(|v| (t(s), v)))
                    .collect();
                (!points.is_empty()).then_some(figures::Series { label, points })
            };
            rate.extend(series(format!("{name} goodput"), &|s| {
                Some(s.goodput_bps / 1e6)
            }));
            rate.extend(series(format!("{name} bandwidth estimate"), &|s| {
                s.bw_estimate_bps.map(|b| b / 1e6)
            }));
            rtt.extend(series(format!("{name} smoothed RTT"), &|s| {
                s.srtt_ns.map(|r| r as f64 / 1e6)
            }));
            rtt.extend(series(format!("{name} min_rtt estimate"), &|s| {
                s.min_rtt_ns.map(|r| r as f64 / 1e6)
            }));
        }
        WorstSeries { rate, rtt }
    }

    /// Writes `<dir>/<name>-rate.svg/.png` and `<dir>/<name>-rtt.svg/.png`,
    /// titled with `title`.
    pub fn draw(&self, dir: &Path, name: &str, title: &str) -> Result<(), String> {
        for (suffix, y_label, what, series) in [
            ("rate", "Mbit/s", "rate and goodput", &self.rate),
            ("rtt", "ms", "round trip", &self.rtt),
        ] {
            figures::time_chart(
                dir,
                &format!("{name}-{suffix}"),
                &format!("{title}: {what}"),
                y_label,
                series,
            )?;
        }
        Ok(())
    }
}

/// The figures `bbrlab search` draws in its output directory: the
/// history (worst so far by evaluation) and the worst path's two charts
/// ([`WorstSeries::draw`] with the name `worst`), each as SVG and PNG.
pub const SEARCH_FIGURES: [&str; 6] = [
    "history.svg",
    "history.png",
    "worst-rate.svg",
    "worst-rate.png",
    "worst-rtt.svg",
    "worst-rtt.png",
];

/// `history.svg/.png` in `dir`: each method's worst so far (`lines`) by
/// evaluation, titled with the flows and the objective of `r`.
pub fn draw_history(
    dir: &Path,
    r: &super::Report,
    lines: &[figures::Series],
) -> Result<(), String> {
    let y = if r.unit.is_empty() {
        r.objective.to_string()
    } else {
        format!("{} ({})", r.objective, r.unit)
    };
    figures::figure(&figures::Figure {
        stem: &dir.join("history"),
        title: &format!("{}: {} by evaluation", r.flows.join(" vs "), r.objective),
        x_label: "evaluations",
        y_label: &y,
        log_x: false,
        log_y: false,
        series: lines,
        published: &[],
        published_label: None,
    })
}

/// Removes the figures an earlier search drew in `dir`
/// ([`SEARCH_FIGURES`]) before a search writes its results there: with
/// `--no-plots` (or a worst path whose run failed) they would stay beside
/// the new worst.toml and history.csv and seem to show them. Only files
/// of exactly those names go, which the command itself writes; a
/// directory or a link of such a name is left alone. Returns the names
/// removed.
pub fn remove_figures(dir: &Path) -> Result<Vec<&'static str>, String> {
    let mut removed = Vec::new();
    for name in SEARCH_FIGURES {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&p)
                .map_err(|e| format!("cannot remove the earlier figure {}: {e}", p.display()))?;
            removed.push(name);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::budget::Piece;

    fn path() -> SearchPath {
        SearchPath {
            pieces: vec![
                Piece {
                    start_ns: 0,
                    rate_bps: 10e6,
                    delay_ns: 20_000_000,
                },
                Piece {
                    start_ns: 2_000_000_000,
                    rate_bps: 2e6,
                    delay_ns: 40_000_000,
                },
            ],
            loss: 0.0,
            packet_jitter_ns: 0,
            packet_jitter_sd_ns: None,
            duration_ns: 5_000_000_000,
            reverse_delay_ns: 20_000_000,
        }
    }

    fn sample(flow: usize, t_ms: u64, bw: Option<f64>) -> FlowSample {
        FlowSample {
            t_ns: t_ms * 1_000_000,
            flow,
            delivered_bytes: 0,
            goodput_bps: 4e6,
            rtt_ns: None,
            srtt_ns: Some(50_000_000),
            cwnd_bytes: 0,
            pacing_rate_bps: 0.0,
            inflight_bytes: 0,
            inflight_peak_bytes: 0,
            mode: congestion::Mode::ProbeBw,
            bw_estimate_bps: bw,
            min_rtt_ns: bw.map(|_| 40_000_000),
            queue_delay_ns: 0,
            drops: 0,
            packets_sent: 0,
            retransmissions: 0,
            packets_lost: 0,
            delivered_ce: 0,
        }
    }

    /// Only the search's own figures go; a file of another name stays.
    #[test]
    fn remove_figures_removes_the_search_figures_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["history.svg", "worst-rtt.png", "mine.svg", "history.csv"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("worst-rate.svg")).unwrap();
        assert_eq!(
            remove_figures(dir.path()).unwrap(),
            ["history.svg", "worst-rtt.png"]
        );
        for kept in ["mine.svg", "history.csv", "worst-rate.svg"] {
            assert!(dir.path().join(kept).exists(), "{kept}");
        }
    }

    #[test]
    fn the_path_is_a_step_per_piece_and_each_flow_has_its_series() {
        let samples = vec![
            sample(0, 100, Some(9e6)),
            sample(1, 100, None),
            sample(0, 200, Some(8e6)),
            sample(1, 200, None),
        ];
        let s = WorstSeries::new(&path(), &samples, 0.9, &["bbr".into(), "cubic".into()]);
        // The rate: 10 Mbit/s x 0.9 from 0 to 2 s, then 2 x 0.9 to 5 s.
        assert_eq!(
            s.rate[0].points,
            vec![(0.0, 9.0), (2.0, 9.0), (2.0, 1.8), (5.0, 1.8)]
        );
        // The base round trip: 20 + 20 ms, then 40 + 20 ms.
        assert_eq!(
            s.rtt[0].points,
            vec![(0.0, 40.0), (2.0, 40.0), (2.0, 60.0), (5.0, 60.0)]
        );
        let labels = |v: &[figures::Series]| v.iter().map(|x| x.label.clone()).collect::<Vec<_>>();
        // cubic reports no estimates: no empty series for it.
        assert_eq!(
            labels(&s.rate),
            [
                "the path's rate (payload)",
                "bbr goodput",
                "bbr bandwidth estimate",
                "cubic goodput"
            ]
        );
        assert_eq!(
            labels(&s.rtt),
            [
                "the path's base round trip",
                "bbr smoothed RTT",
                "bbr min_rtt estimate",
                "cubic smoothed RTT"
            ]
        );
        assert_eq!(s.rate[2].points, vec![(0.1, 9.0), (0.2, 8.0)]);
    }

    #[test]
    fn flows_of_one_controller_are_told_apart() {
        assert_eq!(
            flow_names(&["bbr".into(), "bbr".into()], 3),
            ["bbr (flow 0)", "bbr (flow 1)", "flow 2"]
        );
    }

    #[test]
    fn both_charts_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let samples = vec![sample(0, 100, Some(9e6)), sample(0, 200, Some(8e6))];
        WorstSeries::new(&path(), &samples, 0.9, &["bbr".into()])
            .draw(dir.path(), "worst", "bbr")
            .unwrap();
        for f in [
            "worst-rate.svg",
            "worst-rate.png",
            "worst-rtt.svg",
            "worst-rtt.png",
        ] {
            let p = dir.path().join(f);
            assert!(p.metadata().map(|m| m.len() > 1000).unwrap_or(false), "{f}");
        }
        let svg = std::fs::read_to_string(dir.path().join("worst-rate.svg")).unwrap();
        assert!(
            svg.contains("bbr bandwidth estimate"),
            "the legend names the estimate"
        );
    }
}
