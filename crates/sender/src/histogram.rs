//! Summary statistics that need constant memory however long a run is.
//!
//! A 10 Gbit/s flow simulated for 30 s produces 25 million RTT samples;
//! storing them to take a median would defeat the simulator's bounded-memory
//! promise. A log-bucketed histogram answers percentiles to within 0.5 %.

/// Sub-buckets per power of two: each bucket is at most 1/128 (0.78 %) of
/// its value wide, so its midpoint is within 0.4 % of any value in it.
const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
/// Values below `SUB` get exact buckets; each power of two above gets `SUB`.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// Groups of `SUB` buckets: the exact values below `SUB`, then one per
/// power of two.
const GROUPS: usize = BUCKETS / SUB;

/// Histogram of non-negative integers with buckets at most 0.78 % wide over
/// the whole `u64` range (1 ns to 584 years when the values are
/// nanoseconds). Bucketing is integer arithmetic (a leading-zero count and
/// a shift), because it runs once per RTT sample on the simulator's hot
/// path.
///
/// The buckets are kept in groups of `SUB` (one per power of two), each
/// allocated when its first value arrives: a flow's RTTs fall within a
/// few powers of two, so its histogram takes a few kilobytes, not the
/// 58 KB of every bucket, whose zeroing for each new flow was 57 % of the
/// instructions of a workload of 2,000 short flows. A group is allocated
/// at most once, so recording allocates at most `GROUPS` times in a
/// histogram's life.
#[derive(Clone, Debug)]
pub struct LogHistogram {
    groups: [Option<Box<[u64; SUB]>>; GROUPS],
    total: u64,
    sum: f64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            groups: [const { None }; GROUPS],
            total: 0,
            sum: 0.0,
        }
    }
}

impl LogHistogram {
    fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = exp - SUB_BITS;
        let sub = ((v >> shift) as usize) & (SUB - 1);
        SUB + shift as usize * SUB + sub
    }

    /// The midpoint of bucket `i`.
    fn midpoint(i: usize) -> f64 {
        if i < SUB {
            return i as f64;
        }
        let shift = ((i - SUB) / SUB) as i32;
        let sub = ((i - SUB) % SUB) as f64;
        let width = 2f64.powi(shift);
        (SUB as f64 + sub) * width + (width - 1.0) / 2.0
    }

    /// Records one value.
    pub fn record(&mut self, v: u64) {
        let i = Self::bucket(v);
        self.groups[i / SUB].get_or_insert_with(|| Box::new([0; SUB]))[i % SUB] += 1;
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

    /// The `q` quantile (0..=1), as the middle of its bucket: within half a
    /// bucket (0.4 %) of the true value.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * (self.total - 1) as f64).round() as u64) + 1;
        let mut seen = 0;
        // A group not allocated holds only zeros, which move `seen` no
        // closer to `rank`: skipping it gives the answer a walk over
        // every bucket gives.
        for (g, counts) in self.groups.iter().enumerate() {
            let Some(counts) = counts else { continue };
            for (k, &c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return Some(Self::midpoint(g * SUB + k));
                }
            }
        }
        None
    }
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
        assert!((med / 50_000_000.0 - 1.0).abs() < 0.004, "median {med}");
        assert!((p95 / 95_000_000.0 - 1.0).abs() < 0.004, "p95 {p95}");
        assert!((h.mean().unwrap() - 50_000_500.0).abs() < 1.0);
        assert_eq!(LogHistogram::default().quantile(0.5), None);
    }

    /// Every value lands in a bucket whose midpoint is within 0.4 % of it
    /// (exact below 128), across the whole range including u64::MAX.
    #[test]
    fn bucket_midpoints_are_close_to_their_values() {
        let mut v: u64 = 1;
        let mut probes = vec![0, 1, 127, 128, 129, 255, 256, u64::MAX];
        for _ in 0..2000 {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            probes.push(v >> (v % 64));
        }
        for &p in &probes {
            let i = LogHistogram::bucket(p);
            assert!(i < BUCKETS, "{p} -> bucket {i}");
            let mid = LogHistogram::midpoint(i);
            if p < 128 {
                assert_eq!(mid, p as f64);
            } else {
                assert!((mid / p as f64 - 1.0).abs() <= 0.004, "{p}: midpoint {mid}");
            }
        }
    }
}
