//! A paragraph on why a BBR did badly on the worst path, read off its
//! time series: the piece of the schedule where the objective was worst,
//! the states the flow spent that piece in, and how its two estimates
//! (the bandwidth's windowed max and the round trip's windowed min)
//! compared with the path's true rate and round trip there. A rule picks
//! the likeliest cause from those numbers; the numbers are given so a
//! reader can judge the rule.

use super::budget::SearchPath;
use super::objective::{ByFlow, Objective};
use runner::run::FlowSample;
use std::collections::BTreeMap;

/// What the reading needs besides the samples.
pub struct Context<'a> {
    /// The path.
    pub path: &'a SearchPath,
    /// The objective.
    pub objective: Objective,
    /// The flows.
    pub flows: usize,
    /// The warm-up, ns.
    pub warmup_ns: u64,
    /// Payload share of a packet's wire bytes.
    pub payload: f64,
    /// The first flow's controller, by name.
    pub controller: &'a str,
    /// Whether its state can be read (a stack's BBR may keep it private).
    pub reports_state: bool,
}

/// The reading, for flow 0 on `samples`.
pub fn read(c: &Context<'_>, samples: &[FlowSample]) -> String {
    let path = c.path;
    let o = c.objective;
    // The worst piece by the objective's own measure.
    let worst = (0..path.pieces.len())
        .filter_map(|i| {
            o.measure_piece(path, samples, c.flows, i, c.warmup_ns, c.payload)
                .map(|v| (i, v))
        })
        .fold(None, |w: Option<(usize, f64)>, (i, v)| match w {
            Some((_, wv)) if o.badness(wv) >= o.badness(v) => w,
            _ => Some((i, v)),
        });
    let Some((i, value)) = worst else {
        return format!(
            "{} did worst over the run as a whole; no piece stands out.",
            c.controller
        );
    };
    let p = &path.pieces[i];
    let from = if o == Objective::Convergence {
        p.start_ns
    } else {
        p.start_ns.max(c.warmup_ns)
    };
    let to = path.piece_end_ns(i);
    let rtt = path.piece_rtt_ns(i) as f64;
    let by = ByFlow::new(samples, c.flows);
    let mine: Vec<&FlowSample> = by.flows[0]
        .iter()
        .copied()
        .filter(|x| x.t_ns >= from && x.t_ns < to)
        .collect();
    let mut text = format!(
        "The worst piece was number {} ({:.1}-{:.1} s: {:.2} Mbit/s, a {:.1} ms base round trip), where {} measured {}{}.",
        i + 1,
        p.start_ns as f64 / 1e9,
        to as f64 / 1e9,
        p.rate_bps / 1e6,
        rtt / 1e6,
        o.name(),
        fmt(value),
        if o.unit().is_empty() {
            String::new()
        } else {
            format!(" {}", o.unit())
        }
    );
    if mine.is_empty() {
        return text;
    }
    // The share of the piece in PROBE_RTT, where BBR holds its window at
    // about four packets (none if the state cannot be read).
    let probe_rtt = if c.reports_state {
        mine.iter()
            .filter(|x| x.mode == congestion::Mode::ProbeRtt)
            .count() as f64
            / mine.len() as f64
    } else {
        0.0
    };
    if c.reports_state {
        let mut modes: BTreeMap<&str, usize> = BTreeMap::new();
        for x in &mine {
            *modes.entry(x.mode.name()).or_default() += 1;
        }
        let mut modes: Vec<(&str, usize)> = modes.into_iter().collect();
        modes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let parts: Vec<String> = modes
            .iter()
            .take(3)
            .map(|(m, n)| {
                format!(
                    "{} {:.0} %",
                    m.to_uppercase(),
                    100.0 * *n as f64 / mine.len() as f64
                )
            })
            .collect();
        text.push_str(&format!(
            " {} spent it in {}.",
            c.controller,
            parts.join(", ")
        ));
    }
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let bw = mean(mine.iter().filter_map(|x| x.bw_estimate_bps).collect());
    let mut rtts: Vec<u64> = mine.iter().filter_map(|x| x.min_rtt_ns).collect();
    rtts.sort_unstable();
    let min_rtt = rtts.get(rtts.len() / 2).map(|v| *v as f64);
    let inflight = mean(mine.iter().map(|x| x.inflight_bytes as f64).collect()).unwrap_or(0.0);
    let bdp = p.rate_bps / 8.0 * rtt / 1e9;
    let sent = mine.last().map_or(0, |x| x.packets_sent) - mine[0].packets_sent;
    let retx = mine.last().map_or(0, |x| x.retransmissions) - mine[0].retransmissions;
    let retx_frac = if sent > 0 {
        retx as f64 / sent as f64
    } else {
        0.0
    };
    let drops = mine.last().map_or(0, |x| x.drops) - mine[0].drops;
    let mut q: Vec<u64> = mine.iter().map(|x| x.queue_delay_ns).collect();
    q.sort_unstable();
    let queue_ms = q[q.len() / 2] as f64 / 1e6;
    let mut facts = Vec::new();
    if let Some(b) = bw {
        facts.push(format!(
            "its bandwidth estimate averaged {:.2} Mbit/s ({:.0} % of the link's rate)",
            b / 1e6,
            100.0 * b / p.rate_bps
        ));
    }
    if let Some(m) = min_rtt {
        facts.push(format!(
            "its min_rtt was {:.1} ms against the path's {:.1} ms",
            m / 1e6,
            rtt / 1e6
        ));
    }
    facts.push(format!(
        "it kept {:.2} BDPs in flight, the queue's median delay was {:.1} ms and {:.2} % of its packets were retransmissions",
        inflight / bdp.max(1.0),
        queue_ms,
        100.0 * retx_frac
    ));
    text.push_str(&format!(" There {}.", facts.join("; ")));
    // The likeliest cause, first rule that fits.
    let other_rtt = |m: f64| {
        (0..path.pieces.len())
            .filter(|j| *j != i)
            .min_by(|a, b| {
                let da = (path.piece_rtt_ns(*a) as f64 - m).abs();
                let db = (path.piece_rtt_ns(*b) as f64 - m).abs();
                da.total_cmp(&db)
            })
            .filter(|j| (path.piece_rtt_ns(*j) as f64 - m).abs() < 0.1 * m)
    };
    let cause = match (bw, min_rtt) {
        _ if probe_rtt >= 0.2 => format!(
            "Likely cause: {:.0} % of the piece in PROBE_RTT, where the window is held at about four packets: PROBE_RTT is meant to take about 200 ms in every 5 to 10 s, so the flow is entering it again and again or not leaving it.",
            100.0 * probe_rtt
        ),
        (_, Some(m)) if m < 0.8 * rtt && inflight < 0.9 * bdp => format!(
            "Likely cause: a min_rtt left from a shorter round trip{}: BBR caps inflight near a gain times its bandwidth estimate times min_rtt, so with the round trip longer than it believes, the window holds the pipe part empty until a new minimum is measured (PROBE_RTT, or the estimate's expiry).",
            other_rtt(m).map_or(String::new(), |j| format!(" (piece {}'s)", j + 1))
        ),
        (Some(b), _) if b > 1.25 * p.rate_bps => format!(
            "Likely cause: a bandwidth estimate above the link's rate{}: the windowed max still held a rate the link no longer has, so the flow paced above it and the excess queued or was dropped until the sample aged out of the window.",
            if i > 0 && path.pieces[i - 1].rate_bps > p.rate_bps {
                format!(
                    " (piece {}'s was {:.2} Mbit/s)",
                    i,
                    path.pieces[i - 1].rate_bps / 1e6
                )
            } else {
                String::new()
            }
        ),
        // Loss first among the rest: a loss response caps inflight, so
        // the delivery rate, and the estimate made from it, fall with it.
        _ if retx_frac > 0.02 && (drops as f64) < 0.2 * retx as f64 => format!(
            "Likely cause: spurious retransmissions ({:.1} % of packets, but only {drops} of its packets dropped on the path): packets that arrived out of order were declared lost, and the loss response cut what it sent.",
            100.0 * retx_frac
        ),
        _ if retx_frac > 0.02 => format!(
            "Likely cause: loss ({:.1} % of packets retransmitted){}.",
            100.0 * retx_frac,
            if bw.is_some_and(|b| b < 0.8 * p.rate_bps) {
                ": its loss response capped inflight, which held the delivery rate, and so its bandwidth estimate, below the link's rate"
            } else {
                ": the estimates were near the path's, but the losses cut the window or the data delivered"
            }
        ),
        (Some(b), _) if b < 0.8 * p.rate_bps => format!(
            "Likely cause: a bandwidth estimate below the link's rate{}: the flow paced at a gain times what it had measured, and its probes had not yet raised the windowed max to the rate the link offered.",
            if i > 0 && path.pieces[i - 1].rate_bps < 0.8 * p.rate_bps {
                format!(
                    " after the rate rose from piece {}'s {:.2} Mbit/s (BBR learns of more bandwidth only by probing above its estimate, a quarter more each probe)",
                    i,
                    path.pieces[i - 1].rate_bps / 1e6
                )
            } else {
                String::new()
            }
        ),
        (_, Some(m)) if m > 1.25 * rtt => "Likely cause: a min_rtt measured with a queue standing, so BBR's inflight cap (a gain times bandwidth times min_rtt) allows that queue to stay.".to_string(),
        _ => "Its estimates were within 20-25 % of the path's; the shortfall is in how its state machine used them (the states above), not in a wrong estimate.".to_string(),
    };
    text.push(' ');
    text.push_str(&cause);
    text
}

/// A value to three significant places or so.
pub(crate) fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
