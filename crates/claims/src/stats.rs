//! The small statistics the claims compute over samples: a time window's
//! mean, a quantile that leaves a missing measurement out, and Jain's
//! fairness index. The quantile rule itself is [`runner::stats`]'s, the
//! one the whole project uses.

use runner::stats;

/// The mean of the points with `from` ≤ x < `to`; NaN for none.
pub(crate) fn mean_in(points: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let v: Vec<f64> = points
        .iter()
        .filter(|p| p.0 >= from && p.0 < to)
        .map(|p| p.1)
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// [`runner::stats::quantile`], NaN for no samples: a missing measurement
/// drops out of a mean instead of failing the claim's arithmetic.
pub(crate) fn quantile(v: &mut [f64], q: f64) -> f64 {
    stats::quantile(v, q).unwrap_or(f64::NAN)
}

/// Jain's fairness index of `xs` ([`runner::stats::jain`]); 0 when all are
/// zero, which a claim reads as no fairness rather than as no figure.
pub(crate) fn jain(xs: &[f64]) -> f64 {
    stats::jain(xs).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner::stats::Stats;

    #[test]
    fn quantile_interpolates_between_order_statistics() {
        assert!(quantile(&mut [], 0.5).is_nan());
        assert_eq!(quantile(&mut [3.0, 1.0, 2.0], 0.5), 2.0);
        // Even count: halfway between the middle two.
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.5), 2.5);
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.0), 1.0);
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 1.0), 4.0);
        assert_eq!(quantile(&mut [0.0, 10.0], 0.25), 2.5);
    }

    #[test]
    fn stats_leave_out_missing_runs_and_use_the_sample_sd() {
        let s = Stats::of(&[1.0, 2.0, 3.0, f64::NAN]);
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 2.0, 1.0, 3.0));
        // Sample sd of 1, 2, 3 (n − 1): exactly 1.
        assert!((s.sd - 1.0).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0]).sd, 0.0);
        let none = Stats::of(&[f64::NAN]);
        assert_eq!(none.n, 0);
        assert!(none.mean.is_nan());
        assert_eq!(s.show(1), "2.0 (1.0–3.0, n = 3)");
    }
}
