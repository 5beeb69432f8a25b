//! The hosts' timing noise: what a real sender's ACK clock has that a
//! simulation answering to the nanosecond has not. `validate
//! --multiflow` puts it on its simulated ACKs' way back; `compare`'s
//! single-flow match to kernel TCP does not (the Validation chapter,
//! "ECN on a step queue against the kernel", says why).

use std::time::Duration;

/// The hosts' timing noise the simulator adds to each ACK's way back
/// (`validate --multiflow --sim-host-noise`): a normally distributed
/// extra delay, cut at zero, in order (an ACK never overtakes another).
///
/// Why: a real sender does not answer an ACK at the instant the
/// bottleneck let the acknowledged segment go one round trip earlier.
/// The receiver's stack, both hosts' softirqs and the emulator's release
/// timer each add some microseconds, different for every packet. A
/// simulation without that noise answers to the nanosecond, so where two
/// flows' packets meet at a full drop-tail queue the same flow loses the
/// race for the place a departure frees, round after round, and a
/// STARTUP that needs one round's sample 25 % above the last can be
/// starved by phase alone (Floyd and Jacobson's traffic phase effects).
/// Measured on the emulator's packet log (`scripts/host_noise.py`, the
/// three repetitions of `cubic-vs-cubic-2bdp` of 2026-12-02, whose
/// unpaced flows answer each ACK at once): from a segment's departure at
/// the bottleneck to its sender's next segment arriving there, 54-77 µs
/// beyond the 40 ms path at the median, about 21 µs of which is the ACK's
/// own transmission on the way back (the simulator has that), and a
/// spread a normal distribution with a standard deviation of 15-23 µs
/// has: a mean of 50 µs and a standard deviation of 20 µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostNoise {
    /// Mean extra delay.
    pub mean: Duration,
    /// Standard deviation.
    pub sd: Duration,
}

/// The default [`HostNoise`], as measured (see there).
pub const HOST_NOISE: HostNoise = HostNoise {
    mean: Duration::from_micros(50),
    sd: Duration::from_micros(20),
};

/// The longest mean or standard deviation [`HostNoise::parse`] takes: it
/// stands for the hosts' microseconds, not for a path's delay.
const HOST_NOISE_MAX: Duration = Duration::from_millis(10);

impl HostNoise {
    /// Parses `validate --sim-host-noise`'s value: `MEAN,SD` (durations in
    /// whole microseconds, each at most 10 ms) or `off` (`None`).
    pub fn parse(v: &str) -> Result<Option<HostNoise>, String> {
        if v.trim().eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let Some((mean, sd)) = v.split_once(',') else {
            return Err(format!(
                "`{v}`: give MEAN,SD (for example 50us,20us) or off"
            ));
        };
        let parse = |what: &str, s: &str| {
            link::units::parse_duration(s.trim()).map_err(|e| format!("{what}: {e}"))
        };
        let (mean, sd) = (parse("mean", mean)?, parse("sd", sd)?);
        for (what, d) in [("mean", mean), ("sd", sd)] {
            // validate.json and the table record it in whole microseconds.
            if d.subsec_nanos() % 1_000 != 0 {
                return Err(format!(
                    "`{v}`: the {what} is {d:?}; give whole microseconds (validate.json records them so)"
                ));
            }
            if d > HOST_NOISE_MAX {
                return Err(format!(
                    "`{v}`: the {what} is {d:?}, above 10ms; the noise stands for the hosts' timing, not a path's delay (add that to the path)"
                ));
            }
        }
        Ok(Some(HostNoise { mean, sd }))
    }

    /// The noise as the reverse direction's `jitter`: normal, cut at zero,
    /// in order.
    pub fn jitter(&self) -> scenario::builder::Jitter {
        scenario::builder::Jitter {
            mean: self.mean,
            sd: self.sd,
            floor: Duration::ZERO,
            reorder: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_noise_takes_mean_and_sd_or_off_and_says_what_is_wrong() {
        let n = HostNoise::parse("50us,20us").unwrap().unwrap();
        assert_eq!(
            (n.mean, n.sd),
            (Duration::from_micros(50), Duration::from_micros(20))
        );
        assert_eq!(
            HostNoise::parse(" 1ms , 0ms ").unwrap().unwrap().sd,
            Duration::ZERO
        );
        assert_eq!(HostNoise::parse("off").unwrap(), None);
        assert_eq!(HostNoise::parse("OFF").unwrap(), None);
        let e = HostNoise::parse("50us").unwrap_err();
        assert!(e.contains("MEAN,SD") && e.contains("off"), "{e}");
        let e = HostNoise::parse("50us,fast").unwrap_err();
        assert!(e.starts_with("sd:"), "{e}");
        let e = HostNoise::parse("50us,1500ns").unwrap_err();
        assert!(e.contains("sd") && e.contains("whole microseconds"), "{e}");
        let e = HostNoise::parse("20ms,1us").unwrap_err();
        assert!(e.contains("mean") && e.contains("10ms"), "{e}");
    }
}
