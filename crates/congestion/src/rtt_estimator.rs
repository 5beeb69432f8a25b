//! Round-trip time estimation (RFC 9002 §5, which refines RFC 6298).
//!
//! Every transport needs a smoothed RTT for its retransmission timer and
//! CUBIC needs one for its pacing rate, so the estimator lives here once and
//! transports call it instead of writing their own.

use crate::time::{duration_to_nanos, nanos_to_duration};
use core::time::Duration;

/// Smoothed RTT, RTT variation, latest and minimum RTT.
///
/// Kept in integer nanoseconds internally: it runs on every ACK, and
/// `Duration` arithmetic costs several times more than `u64` arithmetic.
#[derive(Clone, Debug, Default)]
pub struct RttEstimator {
    /// Whether any sample has been taken (all fields are 0 before).
    has_sample: bool,
    latest_ns: u64,
    min_ns: u64,
    smoothed_ns: u64,
    var_ns: u64,
}

impl RttEstimator {
    /// An estimator with no samples yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one RTT sample and the peer-reported ACK delay.
    ///
    /// RFC 9002 §5.3: min_rtt ignores ACK delay (it must be a true lower
    /// bound), while the smoothed RTT subtracts the ACK delay when doing so
    /// does not take the sample below min_rtt.
    pub fn update(&mut self, rtt: Duration, ack_delay: Duration) {
        self.update_split(rtt, rtt, ack_delay);
    }

    /// [`RttEstimator::update`] with the latest RTT and min_rtt taken from
    /// one sample and the smoothed RTT and its variation from another: TCP
    /// smooths the oldest segment an ACK covers and keeps the newest's for
    /// min_rtt ([`crate::SrttSample::Oldest`]).
    pub fn update_split(&mut self, latest: Duration, smoothed: Duration, ack_delay: Duration) {
        self.update_split_ns(
            duration_to_nanos(latest),
            duration_to_nanos(smoothed),
            duration_to_nanos(ack_delay),
        );
    }

    /// [`RttEstimator::update_split`] in whole nanoseconds (each the
    /// saturating conversion of the `Duration`), for the per-ACK path,
    /// which converts a sample once when it serves as both.
    pub(crate) fn update_split_ns(&mut self, latest: u64, rtt: u64, ack_delay: u64) {
        self.latest_ns = latest;
        if !self.has_sample {
            self.has_sample = true;
            self.min_ns = latest;
            self.smoothed_ns = rtt;
            self.var_ns = rtt / 2;
            return;
        }
        self.min_ns = self.min_ns.min(latest);
        let adjusted = if rtt >= self.min_ns.saturating_add(ack_delay) {
            rtt - ack_delay
        } else {
            rtt
        };
        let dev = self.smoothed_ns.abs_diff(adjusted);
        // 3/4·var + 1/4·dev and 7/8·srtt + 1/8·sample, without overflow.
        self.var_ns = self.var_ns - self.var_ns / 4 + dev / 4;
        self.smoothed_ns = self.smoothed_ns - self.smoothed_ns / 8 + adjusted / 8;
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.has_sample.then(|| nanos_to_duration(self.latest_ns))
    }

    /// The smallest sample seen over the connection's life.
    pub fn min(&self) -> Option<Duration> {
        self.has_sample.then(|| nanos_to_duration(self.min_ns))
    }

    /// The smallest sample in ns, for per-ACK paths that avoid `Duration`.
    pub fn min_ns(&self) -> Option<u64> {
        self.has_sample.then_some(self.min_ns)
    }

    /// [`RttEstimator::min_ns`]`.unwrap_or(0)`, read without the test:
    /// `min_ns` is 0 until the first sample (`Default`) and is written
    /// only by [`RttEstimator::update_split_ns`], which sets `has_sample`
    /// before or with it. The per-ACK rate sample's interval floor reads
    /// it.
    #[inline(always)]
    pub(crate) fn min_ns_or_zero(&self) -> u64 {
        debug_assert_eq!(self.min_ns().unwrap_or(0), self.min_ns);
        self.min_ns
    }

    /// The smoothed RTT in ns.
    pub fn smoothed_ns(&self) -> Option<u64> {
        self.has_sample.then_some(self.smoothed_ns)
    }

    /// The exponentially smoothed RTT (gain 1/8).
    pub fn smoothed(&self) -> Option<Duration> {
        self.has_sample.then(|| nanos_to_duration(self.smoothed_ns))
    }

    /// The RTT mean deviation in ns, for per-ACK paths that avoid
    /// `Duration` (a transport's timeout, computed on every ACK).
    pub fn var_ns(&self) -> u64 {
        self.var_ns
    }

    /// The RTT mean deviation (gain 1/4).
    pub fn var(&self) -> Duration {
        nanos_to_duration(self.var_ns)
    }

    /// A retransmission/probe timeout: `srtt + max(4·rttvar, granularity)`
    /// (RFC 9002 §6.2.1 without the max_ack_delay term, which is the
    /// transport's to add), or `initial` before any sample.
    pub fn retransmission_timeout(&self, granularity: Duration, initial: Duration) -> Duration {
        if !self.has_sample {
            return initial;
        }
        let v = self
            .var_ns
            .saturating_mul(4)
            .max(duration_to_nanos(granularity));
        nanos_to_duration(self.smoothed_ns.saturating_add(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn first_sample_initialises_and_later_ones_smooth() {
        let mut e = RttEstimator::new();
        assert_eq!(e.smoothed(), None);
        e.update(ms(100), ms(0));
        assert_eq!(e.smoothed(), Some(ms(100)));
        assert_eq!(e.var(), ms(50));
        e.update(ms(200), ms(0));
        // srtt = 7/8·100 + 1/8·200 = 112.5 ms; rttvar = 3/4·50 + 1/4·100 = 62.5 ms.
        assert_eq!(e.smoothed(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.var(), Duration::from_micros(62_500));
        assert_eq!(e.min(), Some(ms(100)));
        // The integer forms the sender's timers read on every ACK.
        assert_eq!(
            (e.smoothed_ns(), e.var_ns()),
            (Some(112_500_000), 62_500_000)
        );
    }

    #[test]
    fn ack_delay_subtracted_only_above_min() {
        let mut e = RttEstimator::new();
        e.update(ms(50), ms(0));
        // 60 - 20 = 40 < min 50: do not subtract.
        e.update(ms(60), ms(20));
        let srtt = e.smoothed().unwrap();
        assert_eq!(srtt, ms(50) - ms(50) / 8 + ms(60) / 8);
        // 100 - 20 = 80 >= 50: subtract.
        let before = e.smoothed().unwrap();
        e.update(ms(100), ms(20));
        assert_eq!(e.smoothed().unwrap(), before - before / 8 + ms(80) / 8);
    }

    #[test]
    fn a_split_sample_smooths_one_rtt_and_keeps_min_and_latest_from_the_other() {
        let mut e = RttEstimator::new();
        // An ACK for two segments: the newer took 100 ms, the older waited
        // 6 ms more for it.
        e.update_split(ms(100), ms(106), ms(0));
        assert_eq!((e.latest(), e.min()), (Some(ms(100)), Some(ms(100))));
        assert_eq!((e.smoothed(), e.var()), (Some(ms(106)), ms(53)));
        e.update_split(ms(100), ms(106), ms(0));
        assert_eq!(e.smoothed(), Some(ms(106)));
        assert_eq!(e.min(), Some(ms(100)));
    }
}
