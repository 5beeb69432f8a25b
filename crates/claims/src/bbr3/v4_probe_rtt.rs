//! V4: ProbeRTT's cost, v3 against v1. v3 probes min_rtt every 5 s at half
//! the BDP (draft §5.3.4: "sacrifice no more than roughly 2%" of the
//! bandwidth, 0.98 = (0.2 × 0.5 + 4.8) / 5); v1 every 10 s at 4 packets
//! (Linux `tcp_bbr.c`: roughly 2 %, 200 ms / 10 s). One long bulk flow on
//! C8's path (10 Mbit/s, 40 ms, 100 packets); each ProbeRTT episode is
//! read from `flows.csv`'s mode column, and its cost is the goodput the
//! link did not deliver from the episode's start until two round trips
//! after its end.

use super::{runs_of, V1, V3};
use crate::figure::{figure, line};
use crate::findings::Eval;
use crate::meta::Meta;
use crate::runs::{flows_table, mode_fraction, sample_interval, RunData};
use crate::stats::quantile;
use crate::tolerance::{Range, Tolerance};
use std::path::Path;

/// The link, bit/s.
const LINK_BPS: f64 = 10e6;
/// The path's round trip, s.
const RTT_S: f64 = 0.040;
/// Its BDP, packets (1500 B).
const BDP: f64 = LINK_BPS * RTT_S / 8.0 / 1500.0;
/// Episodes and costs are counted from here, after STARTUP and DRAIN.
const STEADY_S: f64 = 5.0;

/// bbr3's median time between ProbeRTT starts, s: the draft's
/// ProbeRTTInterval of 5 s, counted from the end of the previous episode
/// (the min-RTT stamp restarts when ProbeRTT is done), which lasts 200 ms
/// and a round trip or so.
pub const INTERVAL: Tolerance = Tolerance::new(
    Range::between(5.0, 5.5).unit(" s"),
    "draft §5.3.4: every 5 s from the last episode's end, which lasts 200 ms and a round or so",
);

/// bbr3's median cwnd in ProbeRTT as a fraction of the path's BDP: the
/// draft's ProbeRTTCwndGain of 0.5, of a BDP built from the flow's own
/// bandwidth estimate (within a few % of the link) and min_rtt, in whole
/// packets.
pub const DEPTH: Tolerance = Tolerance::new(
    Range::near(0.5, 0.2),
    "draft §5.3.4: half the estimated BDP; the estimate within a few % of the link, whole packets",
);

/// bbr3's goodput lost to ProbeRTT, as a fraction of what the link could
/// deliver after STARTUP: "no more than roughly 2%" (draft §5.3.4.2, which
/// counts 200 ms at half rate every 5 s); an episode lasts a round more
/// than 200 ms, and the rate takes part of a round to come back.
pub const COST: Tolerance = Tolerance::new(
    Range::at_most(0.03).percent(),
    "draft §5.3.4.2: roughly 2 %; an episode lasts a round more than 200 ms and the rate part of a round to return",
);

/// bbr3's cost against v1's: about the same. Both are designed to cost
/// roughly 2 %: v3 probes twice as often at half the BDP instead of 4
/// packets. No measured cost of either was published.
pub const LIKE_V1: Tolerance = Tolerance::new(
    Range::factor(1.0, 1.5),
    "both designed to roughly 2 % (draft §5.3.4.2; Linux tcp_bbr.c): twice as often, half as deep; no measured cost published",
);

/// What one run's flow 0 shows of ProbeRTT.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeRtt {
    /// Each episode after [`STEADY_S`]: (first, last) sample time in it.
    pub episodes: Vec<(f64, f64)>,
    /// The median time between successive episodes' starts, s (NaN with
    /// fewer than two).
    pub interval_s: f64,
    /// The median cwnd over samples in ProbeRTT, packets.
    pub cwnd_pkts: f64,
    /// Goodput lost to ProbeRTT, a fraction of the link over the steady
    /// part of the run.
    pub cost: f64,
    /// The run's share of time in ProbeRTT.
    pub time: f64,
    /// cwnd over time, packets.
    pub cwnd: Vec<(f64, f64)>,
}

/// Reads ProbeRTT's episodes, depth and cost from a run's `flows.csv`.
pub(crate) fn probe_rtt(d: &RunData) -> Result<ProbeRtt, String> {
    let (t, p) = flows_table(d)?;
    let f0 = Some(("flow", "0"));
    let modes = t.labels(&p, "mode", f0)?;
    let cwnd: Vec<(f64, f64)> = t
        .points(&p, "time_s", "cwnd_bytes", f0)?
        .into_iter()
        .map(|(x, y)| (x, y / 1500.0))
        .collect();
    let good = t.points(&p, "time_s", "goodput_bps", f0)?;
    let dt = sample_interval(d).unwrap_or(0.01);
    let mut episodes: Vec<(f64, f64)> = Vec::new();
    let mut open: Option<(f64, f64)> = None;
    let mut depth = Vec::new();
    for ((time, mode), c) in modes.iter().zip(&cwnd) {
        if mode == "probe_rtt" {
            depth.push(c.1);
            open = Some(open.map_or((*time, *time), |(s, _)| (s, *time)));
        } else if let Some(ep) = open.take() {
            episodes.push(ep);
        }
    }
    episodes.extend(open);
    episodes.retain(|e| e.0 >= STEADY_S);
    let mut gaps: Vec<f64> = episodes.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let end = good.last().map_or(d.duration_s, |g| g.0);
    let lost: f64 = good
        .iter()
        .filter(|g| {
            episodes
                .iter()
                .any(|e| g.0 >= e.0 && g.0 <= e.1 + 2.0 * RTT_S + 1e-9)
        })
        .map(|g| (LINK_BPS - g.1).max(0.0) * dt)
        .sum();
    Ok(ProbeRtt {
        interval_s: quantile(&mut gaps, 0.5),
        cwnd_pkts: quantile(&mut depth, 0.5),
        cost: lost / (LINK_BPS * (end - STEADY_S)),
        time: mode_fraction(d, "probe_rtt"),
        episodes,
        cwnd,
    })
}

/// Judges V4 and draws cwnd over time.
pub fn evaluate(data: &[RunData], dir: &Path, _meta: &Meta) -> Result<Eval, String> {
    let mut e = Eval::default();
    let one = |alg: &str| -> Result<ProbeRtt, String> {
        let runs = runs_of(data, "flow.algorithm", alg);
        let d = runs.first().ok_or_else(|| format!("no {alg} run"))?;
        probe_rtt(d)
    };
    let (v1, v3) = (one(V1)?, one(V3)?);
    let pct = |x: f64| format!("{:.2} %", x * 100.0);
    let describe = |p: &ProbeRtt| {
        format!(
            "{} episodes, every {:.2} s (median), cwnd {:.1} packets = {:.2} BDP, {} of the time, cost {}",
            p.episodes.len(),
            p.interval_s,
            p.cwnd_pkts,
            p.cwnd_pkts / BDP,
            pct(p.time),
            pct(p.cost)
        )
    };
    e.row(
        "v1 bbr's ProbeRTT",
        "every 10 s at 4 packets, roughly 2 %",
        describe(&v1),
    );
    e.row(
        "bbr3's ProbeRTT",
        "every 5 s at 0.5 BDP, roughly 2 %",
        describe(&v3),
    );
    e.judge(
        "bbr3's time between ProbeRTT starts (median)",
        &INTERVAL,
        &[v3.interval_s],
        format!("{:.2} s", v3.interval_s),
    );
    let depth = v3.cwnd_pkts / BDP;
    e.judge(
        &format!("bbr3's cwnd in ProbeRTT (median) as a fraction of the {BDP:.1}-packet BDP"),
        &DEPTH,
        &[depth],
        format!("{depth:.2}"),
    );
    e.judge(
        "bbr3's goodput lost to ProbeRTT",
        &COST,
        &[v3.cost],
        pct(v3.cost),
    );
    e.judge(
        "bbr3's cost",
        LIKE_V1.times(v1.cost, &format!("v1's {}", pct(v1.cost))),
        &[v3.cost],
        pct(v3.cost),
    );
    figure(
        dir,
        &mut e,
        "cwnd",
        "V4: a long flow's cwnd, 10 Mbit/s, 40 ms: ProbeRTT dips (v1 every 10 s, v3 every 5 s)",
        "time (s)",
        "cwnd (packets)",
        (false, false),
        &[
            line("bbr (v1)", v1.cwnd),
            line("bbr3", v3.cwnd),
            line(
                "0.5 BDP",
                vec![(0.0, BDP / 2.0), (data[0].duration_s, BDP / 2.0)],
            ),
        ],
        &[],
    )?;
    Ok(e)
}
