//! A command-line span in seconds, checked once for every command that
//! takes one (`fuzz --seconds`, `--run-timeout`): a float from the user
//! becomes a `Duration` only if it is positive, finite and fits, since
//! `Duration::from_secs_f64` panics on a value past `u64::MAX` seconds.

use std::time::Duration;

/// `value` seconds as a `Duration`, or an error naming `flag` and what
/// is allowed.
pub fn positive_seconds(flag: &str, value: f64) -> Result<Duration, String> {
    if !(value.is_finite() && value > 0.0) {
        return Err(format!(
            "{flag} {value}: must be a positive number of seconds"
        ));
    }
    Duration::try_from_secs_f64(value).map_err(|_| {
        format!(
            "{flag} {value}: too long; at most {} seconds",
            Duration::MAX.as_secs()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_positive_finite_and_fits() {
        assert_eq!(
            positive_seconds("--seconds", 1.5),
            Ok(Duration::from_millis(1500))
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = positive_seconds("--seconds", bad).unwrap_err();
            assert!(e.starts_with("--seconds ") && e.contains("positive"), "{e}");
        }
        // Past u64::MAX seconds: an error, not from_secs_f64's panic.
        let e = positive_seconds("--run-timeout", 1e20).unwrap_err();
        assert!(e.contains("--run-timeout") && e.contains("too long"), "{e}");
        assert!(positive_seconds("--run-timeout", 1e18).is_ok());
    }
}
