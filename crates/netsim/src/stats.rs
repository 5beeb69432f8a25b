//! Summary statistics that need constant memory however long a run is.
//!
//! A 10 Gbit/s flow simulated for 30 s produces 25 million RTT samples;
//! storing them to take a median would defeat the simulator's bounded-memory
//! promise. A log-bucketed histogram answers percentiles to within 0.5 %.

/// Relative width of a histogram bucket.
const BUCKET_RATIO: f64 = 1.01;

/// Histogram of positive values with 1 % wide logarithmic buckets from 1 to
/// about 10^13 (1 ns to 2.8 hours when the values are nanoseconds).
#[derive(Clone, Debug)]
pub struct LogHistogram {
    counts: Vec<u64>,
    total: u64,
    sum: f64,
}

const BUCKETS: usize = 3000;

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            counts: vec![0; BUCKETS],
            total: 0,
            sum: 0.0,
        }
    }
}

impl LogHistogram {
    fn bucket(v: f64) -> usize {
        if v <= 1.0 {
            return 0;
        }
        ((v.ln() / BUCKET_RATIO.ln()) as usize).min(BUCKETS - 1)
    }

    /// Records one value.
    pub fn record(&mut self, v: u64) {
        self.counts[Self::bucket(v as f64)] += 1;
        self.total += 1;
        self.sum += v as f64;
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Arithmetic mean (exact), or `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum / self.total as f64)
    }

    /// The `q` quantile (0..=1), as the geometric middle of its bucket:
    /// within half a bucket (0.5 %) of the true value.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * (self.total - 1) as f64).round() as u64) + 1;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(BUCKET_RATIO.powf(i as f64 + 0.5));
            }
        }
        None
    }
}

/// Jain's fairness index of `xs`: 1 when all are equal, 1/n when one takes all.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && sq > 0.0).then(|| sum * sum / (n * sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_half_a_percent() {
        let mut h = LogHistogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let med = h.quantile(0.5).unwrap();
        let p95 = h.quantile(0.95).unwrap();
        assert!((med / 50_000_000.0 - 1.0).abs() < 0.006, "median {med}");
        assert!((p95 / 95_000_000.0 - 1.0).abs() < 0.006, "p95 {p95}");
        assert!((h.mean().unwrap() - 50_000_500.0).abs() < 1.0);
        assert_eq!(LogHistogram::default().quantile(0.5), None);
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }
}
