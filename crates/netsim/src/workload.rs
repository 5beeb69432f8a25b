//! Workloads beyond hand-listed flows: flows that arrive as a random
//! process (with sizes drawn from a distribution), and unresponsive cross
//! traffic (constant bit rate or on-off) that shares the forward
//! bottleneck without congestion control.
//!
//! They exist because the figure reviewers ask for is short flows beside
//! bulk ones: how long a web-sized transfer takes when BBR or CUBIC fills
//! the queue. A run may start tens of thousands of such flows; the engine
//! keeps only the live ones (see `engine`), so memory follows the flows
//! alive, not the flows ever started.
//!
//! Every draw comes from a ChaCha stream seeded from the scenario seed and
//! the process's index, so a run stays a pure function of its
//! configuration.

use crate::config::FlowConfig;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Pareto};
use std::fmt;
use std::sync::Arc;

/// An empirical flow-size distribution: points (size in bytes, cumulative
/// probability), sizes and probabilities both non-decreasing, the last
/// probability 1 (a first point `(0, 0)` starts the interpolation at 0, as
/// published tables do; a draw is at least 1 byte). A draw inverts it with linear interpolation between
/// points (as ns-3's `EmpiricalRandomVariable` does); a uniform draw below
/// the first point's probability gives the first size.
#[derive(Clone, Debug, PartialEq)]
pub struct EmpiricalCdf {
    points: Arc<Vec<(f64, f64)>>,
}

/// Why a CDF is refused: the 1-based point (row) and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct CdfError {
    /// 1-based index of the offending point (0 for the whole table).
    pub point: usize,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for CdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "point {}: {}", self.point, self.message)
    }
}

impl EmpiricalCdf {
    /// Checks `points` and builds the distribution.
    pub fn new(points: Vec<(f64, f64)>) -> Result<Self, CdfError> {
        if points.is_empty() {
            return Err(CdfError {
                point: 0,
                message: "the CDF has no points; give rows of `size_bytes,cumulative_probability`"
                    .into(),
            });
        }
        let mut prev: Option<(f64, f64)> = None;
        for (i, &(size, p)) in points.iter().enumerate() {
            let at = |message: String| CdfError {
                point: i + 1,
                message,
            };
            if !(size.is_finite() && size >= 0.0) {
                return Err(at(format!("size {size}; sizes must be 0 bytes or more")));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(at(format!("cumulative probability {p}; allowed 0 to 1")));
            }
            if let Some((ps, pp)) = prev {
                if size < ps {
                    return Err(at(format!(
                        "size {size} is below the previous row's {ps}; sizes must not decrease"
                    )));
                }
                if p < pp {
                    return Err(at(format!(
                        "cumulative probability {p} is below the previous row's {pp}; a CDF must not decrease"
                    )));
                }
            }
            prev = Some((size, p));
        }
        let (largest, last) = *points.last().expect("not empty");
        if largest < 1.0 {
            return Err(CdfError {
                point: points.len(),
                message: format!("the largest size is {largest}; it must be at least 1 byte"),
            });
        }
        if (last - 1.0).abs() > 1e-9 {
            return Err(CdfError {
                point: points.len(),
                message: format!("the last cumulative probability is {last}; a CDF must end at 1"),
            });
        }
        Ok(EmpiricalCdf {
            points: Arc::new(points),
        })
    }

    /// The size at cumulative probability `u` (0..1).
    pub fn invert(&self, u: f64) -> f64 {
        let pts = &self.points;
        let i = pts.partition_point(|&(_, p)| p < u);
        if i == 0 {
            return pts[0].0;
        }
        if i >= pts.len() {
            return pts[pts.len() - 1].0;
        }
        let (s0, p0) = pts[i - 1];
        let (s1, p1) = pts[i];
        if p1 <= p0 {
            return s1;
        }
        s0 + (s1 - s0) * (u - p0) / (p1 - p0)
    }

    /// The distribution's mean under the same interpolation (a step at the
    /// first point, uniform within each segment).
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            let ((s0, p0), (s1, p1)) = (w[0], w[1]);
            m += (p1 - p0) * (s0 + s1) / 2.0;
        }
        m
    }

    /// The points as given.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }
}

/// How the size of each arriving flow is drawn (bytes; at least 1).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Every flow the same size.
    Fixed(u64),
    /// Exponential with this mean.
    Exponential {
        /// Mean, bytes.
        mean: f64,
    },
    /// Pareto (type I): `P(X > x) = (scale / x)^shape` for `x >= scale`;
    /// the mean is `shape * scale / (shape - 1)` (shape > 1).
    Pareto {
        /// Smallest size, bytes.
        scale: f64,
        /// Tail index; smaller is heavier.
        shape: f64,
    },
    /// An empirical CDF (e.g. read from a file).
    Cdf(EmpiricalCdf),
}

impl SizeDist {
    /// The mean size, bytes (what an offered load is computed from).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => *b as f64,
            SizeDist::Exponential { mean } => *mean,
            SizeDist::Pareto { scale, shape } => {
                if *shape > 1.0 {
                    shape * scale / (shape - 1.0)
                } else {
                    f64::INFINITY
                }
            }
            SizeDist::Cdf(c) => c.mean(),
        }
    }

    /// One size, rounded to whole bytes, at least 1.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let x = match self {
            SizeDist::Fixed(b) => return (*b).max(1),
            SizeDist::Exponential { mean } => {
                Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(*mean)
            }
            SizeDist::Pareto { scale, shape } => Pareto::new(*scale, *shape)
                .map(|d| d.sample(rng))
                .unwrap_or(*scale),
            SizeDist::Cdf(c) => c.invert(rng.gen::<f64>()),
        };
        // Saturating: a Pareto draw can exceed any u64 in principle.
        (x.round().min(u64::MAX as f64) as u64).max(1)
    }
}

/// How arrivals are spaced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArrivalProcess {
    /// Exponential inter-arrival times (a Poisson process) at this rate.
    Poisson {
        /// Flows per second.
        rate_per_s: f64,
    },
}

/// A stream of finite flows, each a copy of `template` with its own size.
#[derive(Clone, Debug)]
pub struct Arrivals {
    /// Generated flows are named `<name>#<k>` (k from 0).
    pub name: String,
    /// The per-flow settings (algorithm, ACKs, pacing, extra RTT, ...).
    /// Its `name`, `start_ns`, `stop_ns` and `size_bytes` are ignored.
    pub template: FlowConfig,
    /// The arrival process.
    pub process: ArrivalProcess,
    /// First instant a flow may arrive.
    pub start_ns: u64,
    /// No flow arrives at or after this (the run's end if `None`).
    pub stop_ns: Option<u64>,
    /// Flow sizes.
    pub size: SizeDist,
}

/// How an on-off source's periods last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Periods {
    /// Exactly the given durations.
    Fixed,
    /// Exponentially distributed with the given means.
    Exponential,
}

/// What an unresponsive source sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CrossKind {
    /// Constant bit rate, all the time.
    Cbr,
    /// `rate_bps` while on, nothing while off; starts on.
    OnOff {
        /// (Mean) on period, ns.
        on_ns: u64,
        /// (Mean) off period, ns.
        off_ns: u64,
        /// Fixed or exponential periods.
        periods: Periods,
    },
}

/// Unresponsive traffic into the forward bottleneck: packets of
/// `packet_bytes` at `rate_bps`, no congestion control, no ACKs, no
/// retransmissions (UDP-like).
#[derive(Clone, Debug, PartialEq)]
pub struct CrossTraffic {
    /// Label in outputs.
    pub name: String,
    /// Sending rate, bits/s (while on).
    pub rate_bps: f64,
    /// Bytes per packet on the link.
    pub packet_bytes: u32,
    /// First packet.
    pub start_ns: u64,
    /// No packet at or after this (the run's end if `None`).
    pub stop_ns: Option<u64>,
    /// CBR or on-off.
    pub kind: CrossKind,
}

impl CrossTraffic {
    /// Nanoseconds between packets while sending.
    pub fn interval_ns(&self) -> f64 {
        self.packet_bytes as f64 * 8.0 * 1e9 / self.rate_bps
    }
}

/// Everything besides hand-listed flows. Empty by default: a run without a
/// workload is exactly the run it always was.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// Flow arrival processes.
    pub arrivals: Vec<Arrivals>,
    /// Cross-traffic sources.
    pub cross: Vec<CrossTraffic>,
}

impl Workload {
    /// Whether there is nothing besides the hand-listed flows.
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty() && self.cross.is_empty()
    }
}

/// One finished finite flow (a row of `fct.csv`).
#[derive(Clone, Debug, PartialEq)]
pub struct FctRecord {
    /// Flow label (`<arrivals>#<k>` for a generated flow).
    pub name: String,
    /// Algorithm name.
    pub algorithm: String,
    /// Bytes the flow transferred.
    pub size_bytes: u64,
    /// When it started, ns.
    pub start_ns: u64,
    /// When its sender learned the last byte was delivered, ns.
    pub end_ns: u64,
    /// The ideal: the path's round-trip propagation delay plus
    /// `size / bottleneck rate`, ns.
    pub ideal_ns: u64,
}

/// The columns of `fct.csv`, in order (the issue 25 contract).
pub const FCT_COLUMNS: [&str; 8] = [
    "flow",
    "algorithm",
    "size_bytes",
    "start_s",
    "end_s",
    "fct_s",
    "ideal_s",
    "slowdown",
];

impl FctRecord {
    /// The row's cells in [`FCT_COLUMNS`] order: times in seconds to the
    /// nanosecond, slowdown to 6 decimals, so files are byte-stable.
    pub fn fields(&self) -> [String; FCT_COLUMNS.len()] {
        let s = |ns: u64| format!("{:.9}", ns as f64 / 1e9);
        [
            self.name.clone(),
            self.algorithm.clone(),
            self.size_bytes.to_string(),
            s(self.start_ns),
            s(self.end_ns),
            s(self.fct_ns()),
            s(self.ideal_ns),
            format!("{:.6}", self.slowdown()),
        ]
    }

    /// Flow completion time, ns.
    pub fn fct_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// FCT over the ideal (>= 1 up to the ideal's rounding).
    pub fn slowdown(&self) -> f64 {
        self.fct_ns() as f64 / self.ideal_ns.max(1) as f64
    }
}

/// Size buckets of the FCT summary: (label, min bytes, max bytes
/// inclusive). The web-search literature (pFabric, HPCC) reports small
/// (<= 10 KB, about one initial window), medium and large flows separately
/// because they suffer from different things: queueing delay, slow start,
/// bandwidth share.
pub const FCT_BUCKETS: [(&str, u64, u64); 4] = [
    ("<=10KB", 0, 10_000),
    ("10KB-100KB", 10_001, 100_000),
    ("100KB-1MB", 100_001, 1_000_000),
    (">1MB", 1_000_001, u64::MAX),
];

/// FCT statistics of one size bucket.
#[derive(Clone, Debug, PartialEq)]
pub struct FctBucket {
    /// Label, e.g. `<=10KB`.
    pub label: &'static str,
    /// Smallest size in the bucket, bytes.
    pub min_bytes: u64,
    /// Largest size in the bucket, bytes (inclusive).
    pub max_bytes: u64,
    /// Flows completed in the bucket.
    pub count: u64,
    /// Median FCT, s (None when empty).
    pub fct_p50_s: Option<f64>,
    /// 99th-percentile FCT, s.
    pub fct_p99_s: Option<f64>,
    /// Median slowdown.
    pub slowdown_p50: Option<f64>,
    /// 99th-percentile slowdown.
    pub slowdown_p99: Option<f64>,
}

/// The FCT part of a run's summary (present when the run had finite flows).
#[derive(Clone, Debug, PartialEq)]
pub struct FctSummary {
    /// Finite flows that completed.
    pub flows_completed: u64,
    /// Finite flows that started.
    pub flows_started: u64,
    /// Per size bucket, in [`FCT_BUCKETS`] order.
    pub buckets: Vec<FctBucket>,
}

/// What one cross-traffic source did.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossSummary {
    /// Label.
    pub name: String,
    /// Packets offered to the bottleneck.
    pub packets_sent: u64,
    /// Bytes offered.
    pub bytes_sent: u64,
    /// Bytes that reached the far end within the run.
    pub bytes_delivered: u64,
    /// Packets the path dropped.
    pub drops: u64,
}

/// Collects finished flows into per-bucket histograms: constant memory
/// however many flows finish (percentiles within 0.4 %, as RTTs).
#[derive(Clone, Debug)]
pub(crate) struct FctStats {
    pub(crate) started: u64,
    completed: u64,
    fct: Vec<sender::LogHistogram>,
    /// Slowdown times 10^6, so the integer histogram keeps 6 decimals.
    slowdown: Vec<sender::LogHistogram>,
}

/// Fixed-point scale of slowdowns in the histogram.
const SLOWDOWN_SCALE: f64 = 1e6;

impl Default for FctStats {
    fn default() -> Self {
        FctStats {
            started: 0,
            completed: 0,
            fct: vec![sender::LogHistogram::default(); FCT_BUCKETS.len()],
            slowdown: vec![sender::LogHistogram::default(); FCT_BUCKETS.len()],
        }
    }
}

impl FctStats {
    pub(crate) fn record(&mut self, r: &FctRecord) {
        self.completed += 1;
        let b = FCT_BUCKETS
            .iter()
            .position(|&(_, lo, hi)| (lo..=hi).contains(&r.size_bytes))
            .unwrap_or(FCT_BUCKETS.len() - 1);
        self.fct[b].record(r.fct_ns());
        self.slowdown[b].record((r.slowdown() * SLOWDOWN_SCALE).round() as u64);
    }

    pub(crate) fn summary(&self) -> Option<FctSummary> {
        (self.started > 0).then(|| FctSummary {
            flows_completed: self.completed,
            flows_started: self.started,
            buckets: FCT_BUCKETS
                .iter()
                .enumerate()
                .map(|(i, &(label, min_bytes, max_bytes))| {
                    let f = &self.fct[i];
                    let s = &self.slowdown[i];
                    FctBucket {
                        label,
                        min_bytes,
                        max_bytes,
                        count: f.count(),
                        fct_p50_s: f.quantile(0.5).map(|v| v / 1e9),
                        fct_p99_s: f.quantile(0.99).map(|v| v / 1e9),
                        slowdown_p50: s.quantile(0.5).map(|v| v / SLOWDOWN_SCALE),
                        slowdown_p99: s.quantile(0.99).map(|v| v / SLOWDOWN_SCALE),
                    }
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_of(d: &SizeDist, n: usize) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn cdf_is_checked_and_located() {
        let e = EmpiricalCdf::new(vec![(100.0, 0.5), (50.0, 1.0)]).unwrap_err();
        assert_eq!(e.point, 2);
        assert!(e.message.contains("must not decrease"), "{e}");
        let e = EmpiricalCdf::new(vec![(100.0, 0.5), (200.0, 0.4)]).unwrap_err();
        assert_eq!(e.point, 2);
        let e = EmpiricalCdf::new(vec![(100.0, 0.5), (200.0, 0.9)]).unwrap_err();
        assert!(e.message.contains("end at 1"), "{e}");
        let e = EmpiricalCdf::new(vec![(0.0, 1.0)]).unwrap_err();
        assert!(e.message.contains("at least 1 byte"), "{e}");
        let e = EmpiricalCdf::new(vec![(-1.0, 0.0), (5.0, 1.0)]).unwrap_err();
        assert!(e.message.contains("0 bytes or more"), "{e}");
        assert!(EmpiricalCdf::new(vec![]).is_err());
    }

    #[test]
    fn cdf_inverts_by_interpolation() {
        let c = EmpiricalCdf::new(vec![(100.0, 0.2), (1100.0, 0.7), (2100.0, 1.0)]).unwrap();
        assert_eq!(c.invert(0.1), 100.0);
        assert_eq!(c.invert(0.2), 100.0);
        assert!((c.invert(0.45) - 600.0).abs() < 1e-9);
        assert_eq!(c.invert(1.0), 2100.0);
        // By hand: 100*0.2 + 0.5*600 + 0.3*1600 = 20 + 300 + 480.
        assert!((c.mean() - 800.0).abs() < 1e-9);
    }

    /// Sample means against the distributions' means. With n = 200,000
    /// draws the standard error is sigma/sqrt(n): 0.22 % of the mean for
    /// the exponential (sigma = mean), so a 1 % tolerance is 4.5 standard
    /// errors. The Pareto with shape 2.5 has finite variance (sigma/mean =
    /// 0.45), so 1 % is 10 standard errors; the CDF's spread is smaller.
    #[test]
    fn size_distributions_have_their_means() {
        let n = 200_000;
        assert_eq!(mean_of(&SizeDist::Fixed(1234), 10), 1234.0);
        for d in [
            SizeDist::Exponential { mean: 50_000.0 },
            SizeDist::Pareto {
                scale: 6_000.0,
                shape: 2.5,
            },
            SizeDist::Cdf(
                EmpiricalCdf::new(vec![(100.0, 0.2), (1100.0, 0.7), (2100.0, 1.0)]).unwrap(),
            ),
        ] {
            let m = mean_of(&d, n);
            let want = d.mean();
            assert!(
                (m - want).abs() / want < 0.01,
                "{d:?}: sample mean {m}, distribution mean {want}"
            );
        }
        // Pareto's mean by hand: 2.5 * 6000 / 1.5.
        assert_eq!(
            SizeDist::Pareto {
                scale: 6_000.0,
                shape: 2.5
            }
            .mean(),
            10_000.0
        );
    }
}
