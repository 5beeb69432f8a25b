//! [`Config::check`]: the settings an algorithm's rules are not defined
//! on, named with the field and the range allowed.
//!
//! A controller built from any [`Config`] runs without a panic: sizes are
//! clamped (`mss_bytes` 0 is 1) and arithmetic saturates. But a NaN gain,
//! a negative margin or a β above 1 gives a controller that paces at one
//! byte a second, or raises its window on loss, with nothing to say why.
//! `check` lets an embedder refuse such a setting where it is made (from a
//! configuration file, say) rather than find it in a trace.
//!
//! The ranges are where each quantity is defined, not where it is
//! sensible: experiments set gains far from Linux's on purpose (a STARTUP
//! gain of 1, say), and those pass. Integer counts and durations have no
//! check: every `u64` and `u32` value runs (0 rounds, 0 ns and the
//! maxima were probed; an `initial_cwnd_packets` of 0 is one packet, and
//! one of `u64::MAX` a window that never limits), except the ECN
//! constants that Linux scales by 256, which are fractions of it, and
//! `mss_bytes`, which must be 1 to [`crate::MAX_MSS_BYTES`]: 0 is taken
//! as 1 byte, a window no real packet fits in.

use super::Config;
use core::fmt;

/// A setting [`Config::check`] refuses: which field, its value, and what
/// the field allows.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ConfigError {
    /// The field's path in [`Config`], e.g. `bbr3.beta`.
    pub field: &'static str,
    /// The value given, as `{}` prints it.
    pub value: String,
    /// The values the field allows, e.g. `above 0 and at most 1`.
    pub allowed: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "congestion config: {} = {}: allowed {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// A refusal of `field` (its path in [`Config`]) at `value`, saying
    /// what it `allowed`: for a program that embeds a controller and
    /// refuses a setting its own rules exclude (a QUIC adapter refuses
    /// [`crate::RecoveryExit::Transport`], which needs a recovery point its
    /// stack never reports), in the form [`Config::check`] gives.
    pub fn new(field: &'static str, value: impl fmt::Display, allowed: &'static str) -> Self {
        ConfigError {
            field,
            value: value.to_string(),
            allowed,
        }
    }
}

/// A range a field allows: its words for the error, and its test.
struct Range {
    allowed: &'static str,
    holds: fn(f64) -> bool,
}

/// A multiplier of a rate or window: gain × estimate.
const GAIN: Range = Range {
    allowed: "a finite number above 0",
    holds: |x| x.is_finite() && x > 0.0,
};
/// A multiplier that may switch its term off.
const GAIN_OR_OFF: Range = Range {
    allowed: "a finite number, 0 or more",
    holds: |x| x.is_finite() && x >= 0.0,
};
/// A fraction taken off a rate or window (margin, headroom).
const MARGIN: Range = Range {
    allowed: "from 0 up to, not including, 1",
    holds: |x| (0.0..1.0).contains(&x),
};
/// A multiplicative decrease or a rate of loss.
const FRACTION: Range = Range {
    allowed: "above 0 and at most 1",
    holds: |x| x > 0.0 && x <= 1.0,
};
/// CUBIC's β_cubic: a decrease that must decrease (RFC 9438 §4.6).
const CUBIC_BETA: Range = Range {
    allowed: "above 0 and below 1",
    holds: |x| x > 0.0 && x < 1.0,
};
/// Linux's fixed-point fractions of `BBR_UNIT` (256), widened to f64
/// exactly.
const OF_256: Range = Range {
    allowed: "0 to 256 (a fraction of 256, as Linux scales it)",
    holds: |x| (0.0..=256.0).contains(&x),
};

impl Config {
    /// Refuses a setting the algorithms' rules are not defined on: a gain
    /// that is NaN, infinite, zero or negative; a margin or headroom
    /// outside [0, 1); a loss threshold or decrease factor outside (0, 1];
    /// CUBIC's β outside (0, 1) and C not positive; `bbr-jitter`'s α and
    /// β outside (0, 1] and γ not positive; a Linux-scaled ECN fraction
    /// above 256. Every algorithm's settings are checked, not only the
    /// selected one's, so a mistake is found before the algorithm changes.
    /// [`Config::default`] and every preset pass.
    ///
    /// The first refused field is returned, named by its path
    /// (`bbr.high_gain`). A controller does not call this itself: building
    /// one from any `Config` is allowed and never panics.
    pub fn check(&self) -> Result<(), ConfigError> {
        let (b, j, c, v3) = (&self.bbr, &self.jitter, &self.cubic, &self.bbr3);
        let rules: [(&str, f64, Range); 28] = [
            ("bbr.high_gain", b.high_gain, GAIN),
            ("bbr.drain_gain", b.drain_gain, GAIN),
            ("bbr.cwnd_gain", b.cwnd_gain, GAIN),
            ("bbr.pacing_margin", b.pacing_margin, MARGIN),
            ("bbr.full_bw_threshold", b.full_bw_threshold, GAIN),
            ("bbr.extra_acked_gain", b.extra_acked_gain, GAIN_OR_OFF),
            ("jitter.alpha", j.alpha, FRACTION),
            ("jitter.beta", j.beta, FRACTION),
            ("jitter.gamma", j.gamma, GAIN),
            ("cubic.c", c.c, GAIN),
            ("cubic.beta", c.beta, CUBIC_BETA),
            ("bbr3.startup_pacing_gain", v3.startup_pacing_gain, GAIN),
            ("bbr3.startup_cwnd_gain", v3.startup_cwnd_gain, GAIN),
            ("bbr3.drain_pacing_gain", v3.drain_pacing_gain, GAIN),
            (
                "bbr3.probe_down_pacing_gain",
                v3.probe_down_pacing_gain,
                GAIN,
            ),
            ("bbr3.probe_up_pacing_gain", v3.probe_up_pacing_gain, GAIN),
            ("bbr3.cwnd_gain", v3.cwnd_gain, GAIN),
            ("bbr3.probe_up_cwnd_gain", v3.probe_up_cwnd_gain, GAIN),
            ("bbr3.probe_rtt_cwnd_gain", v3.probe_rtt_cwnd_gain, GAIN),
            ("bbr3.pacing_margin", v3.pacing_margin, MARGIN),
            ("bbr3.loss_thresh", v3.loss_thresh, FRACTION),
            ("bbr3.beta", v3.beta, FRACTION),
            ("bbr3.headroom", v3.headroom, MARGIN),
            ("bbr3.full_bw_threshold", v3.full_bw_threshold, GAIN),
            ("bbr3.ecn_alpha_gain", f64::from(v3.ecn_alpha_gain), OF_256),
            ("bbr3.ecn_alpha_init", f64::from(v3.ecn_alpha_init), OF_256),
            ("bbr3.ecn_factor", f64::from(v3.ecn_factor), OF_256),
            ("bbr3.ecn_thresh", f64::from(v3.ecn_thresh), OF_256),
        ];
        // The one size with no meaning at its extremes: a segment of 0
        // bytes (taken as 1, so that a window of 10 "packets" is 10
        // bytes, and no real packet ever fits in it) or above
        // `MAX_MSS_BYTES` (taken as that) is a mistake, not an experiment.
        if !(1..=super::MAX_MSS_BYTES).contains(&self.mss_bytes) {
            return Err(ConfigError {
                field: "mss_bytes",
                value: self.mss_bytes.to_string(),
                allowed: "1 to 4294967295 (MAX_MSS_BYTES) bytes",
            });
        }
        for (field, value, range) in rules {
            if !(range.holds)(value) {
                return Err(ConfigError {
                    field,
                    value: value.to_string(),
                    allowed: range.allowed,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Algorithm, Bbr3Profile};

    #[test]
    fn defaults_and_presets_pass() {
        for a in Algorithm::ALL {
            assert_eq!(Config::new(a).check(), Ok(()), "{a}");
        }
        let mut c = Config::new(Algorithm::Bbr3);
        c.bbr3 = crate::config::Bbr3Config::for_profile(Bbr3Profile::LinuxV3);
        assert_eq!(c.check(), Ok(()));
        assert_eq!(Config::for_quic(Algorithm::Bbr, 1200).check(), Ok(()));
    }

    #[test]
    fn an_undefined_setting_is_named_with_its_range() {
        let mut c = Config::default();
        c.bbr.high_gain = f64::NAN;
        let e = c.check().unwrap_err();
        assert_eq!(e.field, "bbr.high_gain");
        assert_eq!(
            e.to_string(),
            "congestion config: bbr.high_gain = NaN: allowed a finite number above 0"
        );

        let mut c = Config::default();
        c.cubic.beta = 1.0;
        assert_eq!(c.check().unwrap_err().field, "cubic.beta");

        let mut c = Config::default();
        c.bbr3.pacing_margin = 1.0;
        assert_eq!(c.check().unwrap_err().field, "bbr3.pacing_margin");

        for mss in [0, crate::MAX_MSS_BYTES + 1] {
            let mut c = Config::for_quic(Algorithm::Bbr3, 1200);
            c.mss_bytes = mss;
            let e = c.check().unwrap_err();
            assert_eq!((e.field, e.value), ("mss_bytes", mss.to_string()));
        }
        let mut c = Config::new(Algorithm::Cubic);
        c.mss_bytes = crate::MAX_MSS_BYTES;
        assert_eq!(c.check(), Ok(()));

        let mut c = Config::default();
        c.bbr3.ecn_thresh = 257;
        let e = c.check().unwrap_err();
        assert_eq!((e.field, e.value.as_str()), ("bbr3.ecn_thresh", "257"));
    }

    #[test]
    fn try_new_refuses_what_check_refuses() {
        use crate::{Controller, Instant};
        let mut c = Config::for_quic(Algorithm::Bbr3, 1200);
        assert!(Controller::try_new(&c, Instant::ZERO).is_ok());
        c.bbr3.beta = f64::NAN;
        let e = Controller::try_new(&c, Instant::ZERO).unwrap_err();
        assert_eq!(e.field, "bbr3.beta");
    }

    #[test]
    fn try_custom_refuses_what_check_refuses() {
        use crate::{builtin, Controller, Instant};
        let mut c = Config::for_quic(Algorithm::Cubic, 1200);
        let cc = Controller::try_custom(&c, builtin(&c, Instant::ZERO)).unwrap();
        assert_eq!(cc.algorithm(), None);
        // `custom` takes 0 as a 1-byte segment; `try_custom` says so.
        c.mss_bytes = 0;
        let e = Controller::try_custom(&c, builtin(&c, Instant::ZERO)).unwrap_err();
        assert_eq!(e.field, "mss_bytes");
    }

    #[test]
    fn unusual_but_defined_settings_pass() {
        let mut c = Config::default();
        c.bbr.high_gain = 1.0; // no faster than the estimate: an experiment
        c.bbr.extra_acked_gain = 0.0; // the allowance off
        c.bbr.pacing_margin = 0.0;
        c.bbr3.beta = 1.0; // no decrease per lossy round
        c.bbr3.ecn_factor = 0; // Linux's way to switch the response off
        c.bbr.bw_window_rounds = 0;
        c.initial_cwnd_packets = 0;
        assert_eq!(c.check(), Ok(()));
    }
}
