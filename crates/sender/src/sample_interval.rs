//! The shortest sampling interval a live sender takes: one floor and one
//! check for the UDP transport (`bbrlab send`) and the kernel-TCP probe
//! (`bbrlab tcp send`), which both sample their flow into the shared
//! time series ([`crate::schema`]) every interval.
//!
//! Why a floor: each sample reads a clock, computes a goodput over the
//! interval and writes a log row, so below a millisecond the samples cost
//! more than the sending they measure, and 0 would sample without end (a
//! loop spinning on one core beside the transfer). Shorter values were
//! once raised to it without a word; they are refused, naming what was
//! given. The simulator's `sample_interval` is simulated time and has no
//! such floor.

use core::time::Duration;

/// The shortest sampling interval a live sender takes.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// `d`, or an error saying that `given` (the option and the value as the
/// user wrote it, for example `--interval 0s`) is below [`MIN_INTERVAL`].
pub fn check_interval(given: &str, d: Duration) -> Result<Duration, String> {
    if d < MIN_INTERVAL {
        return Err(format!(
            "{given}: below the shortest sampling interval, {MIN_INTERVAL:?}; give at least 1ms"
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_taken_and_anything_below_is_refused_naming_what_was_given() {
        assert_eq!(check_interval("x", MIN_INTERVAL), Ok(MIN_INTERVAL));
        assert_eq!(
            check_interval("x", Duration::from_secs(3)),
            Ok(Duration::from_secs(3))
        );
        for d in [Duration::ZERO, MIN_INTERVAL - Duration::from_nanos(1)] {
            let e = check_interval("--interval 0.5ms", d).unwrap_err();
            assert_eq!(
                e,
                "--interval 0.5ms: below the shortest sampling interval, 1ms; give at least 1ms"
            );
        }
    }
}
