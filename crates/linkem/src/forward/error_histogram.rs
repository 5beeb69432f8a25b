//! How late the forwarder's releases were, kept as a histogram so a run's
//! quantiles cost no memory per packet.

/// How late releases were (`released_ns - scheduled_ns`), in 1 µs buckets
/// up to 100 ms, with the exact maximum; and, counted apart, releases
/// written *before* their scheduled time. An early release is not a small
/// error but a broken guarantee (a path shorter than configured, which
/// congestion controllers read as a lower min_rtt), so it is never folded
/// into the quantiles where it would hide.
#[derive(Clone, Debug)]
pub struct ErrorHistogram {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
    early: u64,
    max_early_ns: u64,
}

impl Default for ErrorHistogram {
    fn default() -> Self {
        ErrorHistogram {
            counts: vec![0; 100_001],
            total: 0,
            max_ns: 0,
            early: 0,
            max_early_ns: 0,
        }
    }
}

impl ErrorHistogram {
    /// Records one lateness in ns.
    pub fn record(&mut self, ns: u64) {
        let us = ((ns / 1000) as usize).min(self.counts.len() - 1);
        self.counts[us] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
    }
    /// Records one release against its schedule: its lateness, or, if it
    /// went early, an early release (with lateness 0 in the quantiles).
    pub fn record_release(&mut self, scheduled_ns: u64, released_ns: u64) {
        if released_ns < scheduled_ns {
            self.early += 1;
            self.max_early_ns = self.max_early_ns.max(scheduled_ns - released_ns);
            self.record(0);
        } else {
            self.record(released_ns - scheduled_ns);
        }
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.total
    }
    /// The `q` quantile in µs (upper edge of its bucket).
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(i as u64 + 1);
            }
        }
        None
    }
    /// The largest lateness, µs (rounded up); None without samples.
    pub fn max_us(&self) -> Option<u64> {
        (self.total > 0).then(|| self.max_ns.div_ceil(1000))
    }
    /// Releases written before their scheduled time (goal: 0).
    pub fn early(&self) -> u64 {
        self.early
    }
    /// How early the earliest of them was, ns (0 if none).
    pub fn max_early_ns(&self) -> u64 {
        self.max_early_ns
    }
}
