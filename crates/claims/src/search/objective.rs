//! What a search makes worse: each objective measures a run over a window
//! of it, and says which way is worse. The optimizer maximizes the
//! badness ([`Objective::badness`]), a number that grows as the
//! controller does worse, whatever the objective's own unit.

use super::budget::SearchPath;
use runner::run::FlowSample;

/// A search's goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// The flows' goodput over the path's ideal (lower is worse).
    Utilization,
    /// The 95th percentile of the bottleneck's queueing delay, ms (higher
    /// is worse).
    QueueP95,
    /// The first flow's share of the flows' goodput (lower is worse).
    Share,
    /// Jain's fairness index over the flows' goodputs (lower is worse).
    Jain,
    /// Retransmitted packets over packets sent (higher is worse).
    Retransmissions,
    /// The longest time, after a change of the schedule, until the flows
    /// deliver 90 % of the new piece's ideal rate, s (higher is worse).
    Convergence,
}

/// Every objective, with its name and what it measures.
pub const OBJECTIVES: [(Objective, &str, &str); 6] = [
    (Objective::Utilization, "utilization", "the flows' goodput over the path's ideal (its rate over time, less the random loss, in payload), after the warm-up; lower is worse"),
    (Objective::QueueP95, "queue-p95", "the 95th percentile of the bottleneck's queueing delay after the warm-up, ms; higher is worse"),
    (Objective::Share, "share", "the first flow's share of the flows' goodput after the warm-up (with two controllers, the first's); lower is worse"),
    (Objective::Jain, "jain", "Jain's fairness index over the flows' goodputs after the warm-up, from 1/n to 1; lower is worse"),
    (Objective::Retransmissions, "retransmissions", "retransmitted packets over packets sent after the warm-up; higher is worse"),
    (Objective::Convergence, "convergence", "the longest time after a change of the schedule until the flows deliver 90 % of the new piece's ideal rate over a round trip, s (a piece never reached counts its whole length); higher is worse"),
];

impl Objective {
    /// Parses a name of [`OBJECTIVES`].
    pub fn parse(name: &str) -> Result<Objective, String> {
        OBJECTIVES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(o, _, _)| *o)
            .ok_or_else(|| {
                format!(
                    "--objective {name}: one of {}",
                    OBJECTIVES.map(|(_, n, _)| n).join(", ")
                )
            })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        OBJECTIVES
            .iter()
            .find(|(o, _, _)| *o == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// The unit of [`Objective::measure`]'s value, for reports.
    pub fn unit(self) -> &'static str {
        match self {
            Objective::QueueP95 => "ms",
            Objective::Convergence => "s",
            _ => "",
        }
    }

    /// Whether a lower value is worse.
    pub fn lower_is_worse(self) -> bool {
        matches!(
            self,
            Objective::Utilization | Objective::Share | Objective::Jain
        )
    }

    /// How many flows it needs.
    pub fn min_flows(self) -> usize {
        match self {
            Objective::Share | Objective::Jain => 2,
            _ => 1,
        }
    }

    /// The badness of a value: larger is worse for the controller.
    pub fn badness(self, value: f64) -> f64 {
        if self.lower_is_worse() {
            -value
        } else {
            value
        }
    }

    /// The value for a run that did not complete (a panic, say): as bad
    /// as the objective can be on `path`, so that a search keeps it.
    pub fn worst_value(self, path: &SearchPath) -> f64 {
        match self {
            Objective::Utilization | Objective::Share => 0.0,
            Objective::Jain => 0.0,
            Objective::Retransmissions => 1.0,
            Objective::QueueP95 => path.duration_ns as f64 / 1e6,
            Objective::Convergence => path.duration_ns as f64 / 1e9,
        }
    }

    /// The objective on `samples` (every flow's, in time order) from
    /// `from_ns` to the end of the run; `flows` flows, `payload` the share
    /// of a packet's wire bytes that is payload.
    pub fn measure(
        self,
        path: &SearchPath,
        samples: &[FlowSample],
        flows: usize,
        from_ns: u64,
        payload: f64,
    ) -> f64 {
        let w = Window::new(samples, flows, from_ns, path.duration_ns);
        match self {
            Objective::Convergence => (1..path.pieces.len())
                .map(|i| convergence(path, samples, flows, i, payload))
                .fold(0.0, f64::max),
            _ => self.over(path, &w, payload),
        }
    }

    /// The objective over piece `i` alone (from `from_ns` if it starts
    /// before), for finding where a run went worst: `None` where the
    /// piece lies wholly inside the warm-up, or, for convergence, is the
    /// first.
    pub fn measure_piece(
        self,
        path: &SearchPath,
        samples: &[FlowSample],
        flows: usize,
        i: usize,
        from_ns: u64,
        payload: f64,
    ) -> Option<f64> {
        if self == Objective::Convergence {
            return (i > 0).then(|| convergence(path, samples, flows, i, payload));
        }
        let a = path.pieces[i].start_ns.max(from_ns);
        let b = path.piece_end_ns(i);
        if b <= a {
            return None;
        }
        Some(self.over(path, &Window::new(samples, flows, a, b), payload))
    }

    fn over(self, path: &SearchPath, w: &Window, payload: f64) -> f64 {
        match self {
            Objective::Utilization => {
                let ideal = path.ideal_bits(w.from_ns, w.to_ns, payload);
                if ideal > 0.0 {
                    w.delivered.iter().sum::<f64>() * 8.0 / ideal
                } else {
                    1.0
                }
            }
            Objective::QueueP95 => {
                let mut q = w.queue_ns.clone();
                q.sort_unstable();
                q.get((q.len() * 95 / 100).min(q.len().saturating_sub(1)))
                    .map_or(0.0, |v| *v as f64 / 1e6)
            }
            Objective::Share => {
                let total: f64 = w.delivered.iter().sum();
                if total > 0.0 {
                    w.delivered[0] / total
                } else {
                    0.5
                }
            }
            Objective::Jain => {
                let s: f64 = w.delivered.iter().sum();
                let s2: f64 = w.delivered.iter().map(|x| x * x).sum();
                if s2 > 0.0 {
                    s * s / (w.delivered.len() as f64 * s2)
                } else {
                    1.0
                }
            }
            Objective::Retransmissions => {
                if w.sent > 0 {
                    w.retransmitted as f64 / w.sent as f64
                } else {
                    0.0
                }
            }
            Objective::Convergence => 0.0,
        }
    }
}

/// Each flow's counters over a window, read off its samples at the last
/// sample at or before each end.
struct Window {
    from_ns: u64,
    to_ns: u64,
    /// Payload bytes delivered, per flow.
    delivered: Vec<f64>,
    sent: u64,
    retransmitted: u64,
    /// The bottleneck's queueing delay at flow 0's samples in the window.
    queue_ns: Vec<u64>,
}

impl Window {
    fn new(samples: &[FlowSample], flows: usize, from_ns: u64, to_ns: u64) -> Window {
        let by = ByFlow::new(samples, flows);
        let mut delivered = vec![0.0; by.flows.len()];
        let (mut sent, mut retransmitted) = (0, 0);
        for (f, d) in delivered.iter_mut().enumerate() {
            let (a, b) = (by.at(f, from_ns), by.at(f, to_ns));
            let z = |s: Option<&FlowSample>, g: fn(&FlowSample) -> u64| s.map_or(0, g);
            *d = z(b, |x| x.delivered_bytes).saturating_sub(z(a, |x| x.delivered_bytes)) as f64;
            sent += z(b, |x| x.packets_sent).saturating_sub(z(a, |x| x.packets_sent));
            retransmitted +=
                z(b, |x| x.retransmissions).saturating_sub(z(a, |x| x.retransmissions));
        }
        let queue_ns = by.flows[0]
            .iter()
            .filter(|x| x.t_ns >= from_ns && x.t_ns < to_ns)
            .map(|x| x.queue_delay_ns)
            .collect();
        Window {
            from_ns,
            to_ns,
            delivered,
            sent,
            retransmitted,
            queue_ns,
        }
    }
}

/// The samples of each flow, in time order, for lookups by time.
pub(crate) struct ByFlow<'a> {
    pub(crate) flows: Vec<Vec<&'a FlowSample>>,
}

impl<'a> ByFlow<'a> {
    pub(crate) fn new(samples: &'a [FlowSample], flows: usize) -> ByFlow<'a> {
        let mut v = vec![Vec::new(); flows.max(1)];
        for x in samples {
            if let Some(f) = v.get_mut(x.flow) {
                f.push(x);
            }
        }
        ByFlow { flows: v }
    }

    /// Flow `f`'s last sample at or before `t_ns`.
    pub(crate) fn at(&self, f: usize, t_ns: u64) -> Option<&'a FlowSample> {
        let s = &self.flows[f];
        let i = s.partition_point(|x| x.t_ns <= t_ns);
        i.checked_sub(1).map(|i| s[i])
    }

    /// Payload bytes every flow had delivered by `t_ns`.
    fn delivered(&self, t_ns: u64) -> u64 {
        (0..self.flows.len())
            .map(|f| self.at(f, t_ns).map_or(0, |x| x.delivered_bytes))
            .sum()
    }
}

/// Seconds after piece `i` starts until the flows' goodput, over a
/// trailing round trip of the piece (at least two samples apart), first
/// reaches 90 % of its ideal rate; the piece's length if it never does.
fn convergence(
    path: &SearchPath,
    samples: &[FlowSample],
    flows: usize,
    i: usize,
    payload: f64,
) -> f64 {
    let start = path.pieces[i].start_ns;
    let end = path.piece_end_ns(i);
    let whole = (end - start) as f64 / 1e9;
    let want = 0.9 * path.pieces[i].rate_bps * (1.0 - path.loss) * payload;
    let by = ByFlow::new(samples, flows);
    let interval = match by.flows[0].as_slice() {
        [a, b, ..] => b.t_ns - a.t_ns,
        _ => return whole,
    };
    let span = path.piece_rtt_ns(i).max(2 * interval);
    for t in by.flows[0]
        .iter()
        .map(|x| x.t_ns)
        .filter(|t| *t >= start + span && *t <= end)
    {
        let bits = by.delivered(t).saturating_sub(by.delivered(t - span)) as f64 * 8.0;
        if bits / (span as f64 / 1e9) >= want {
            return (t - start) as f64 / 1e9;
        }
    }
    whole
}
