//! Whole-run statistics the simulator reports beside each flow's own.
//!
//! The RTT histogram lives in the `sender` crate (every sender keeps one);
//! it is re-exported here so existing paths keep working.

pub use sender::LogHistogram;

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
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }
}
