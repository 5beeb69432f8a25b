//! The statistics bbrlab reports, written once: one quantile rule, one
//! summary over repeated runs and one fairness index, so that two numbers
//! that should agree (the simulator's median RTT and the kernel probe's,
//! the simulator's Jain index and a claim's) are never computed by two
//! different rules. A leaf crate, so the simulator, the kernel probe, the
//! runner and the claims all stand on it.

/// The `q` quantile (0–1) of `v` by linear interpolation between order
/// statistics (the "type 7" rule of R and numpy's default); `None` for no
/// samples. Sorts `v`.
pub fn quantile(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    Some(if i + 1 < v.len() {
        v[i] + (v[i + 1] - v[i]) * frac
    } else {
        v[i]
    })
}

/// The median and the range (min, max) of `xs`: the median by
/// [`quantile`]'s rule, the range over the finite values as [`Stats`]
/// takes it. NaN for no values.
pub fn median_and_range(xs: &[f64]) -> (f64, f64, f64) {
    let median = quantile(&mut xs.to_vec(), 0.5).unwrap_or(f64::NAN);
    let s = Stats::of(xs);
    (median, s.min, s.max)
}

/// One quantity over the seeds of one sweep point: the mean a verdict uses
/// and the spread the report shows, so that no verdict rests on one seed's
/// noise (issue 12: "the verdict uses the mean").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Finite samples (seeds) counted.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// Sample standard deviation (n − 1 in the denominator; 0 for one sample).
    pub sd: f64,
}

impl Stats {
    /// Statistics of the finite values in `values`; a run that produced no
    /// measurement (NaN) is left out rather than counted as zero. With no
    /// finite value, `n` is 0 and the rest NaN.
    pub fn of(values: &[f64]) -> Stats {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Stats {
                n: 0,
                mean: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
                sd: f64::NAN,
            };
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = if v.len() > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Stats {
            n: v.len(),
            mean,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            sd,
        }
    }

    /// "mean (min–max, n = k)" with `prec` decimals, for tables and checks.
    pub fn show(&self, prec: usize) -> String {
        format!(
            "{:.prec$} ({:.prec$}–{:.prec$}, n = {})",
            self.mean, self.min, self.max, self.n
        )
    }
}

/// Jain's fairness index of `xs`: 1 when all are equal, 1/n when one
/// takes all. `None` for no values or when all are zero (no share to
/// judge).
pub fn jain(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq <= 0.0 {
        return None;
    }
    Some(sum * sum / (xs.len() as f64 * sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_interpolates_between_order_statistics() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0];
        assert_eq!(quantile(&mut v, 0.5), Some(2.5));
        assert_eq!(quantile(&mut v, 0.0), Some(1.0));
        assert_eq!(quantile(&mut v, 1.0), Some(4.0));
        // 0.95 of 3 steps is 2.85: 3 + 0.85 × (4 − 3).
        assert!((quantile(&mut v, 0.95).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(quantile(&mut [], 0.5), None);
    }

    #[test]
    fn the_median_and_range_of_odd_and_even_counts() {
        assert_eq!(median_and_range(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(median_and_range(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
        assert!(median_and_range(&[]).0.is_nan());
    }

    #[test]
    fn stats_leave_out_missing_values() {
        let s = Stats::of(&[1.0, f64::NAN, 3.0]);
        assert_eq!((s.n, s.mean, s.min, s.max), (2, 2.0, 1.0, 3.0));
        assert!((s.sd - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(Stats::of(&[f64::NAN]).n, 0);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_taker() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), Some(1.0));
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(jain(&[]), None);
    }
}
