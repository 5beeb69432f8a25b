//! Caller-supplied monotonic time.
//!
//! The controllers never read a clock: a simulator passes virtual time, a real
//! transport passes its monotonic clock. Both reduce to nanoseconds since an
//! arbitrary epoch, so one newtype serves every caller and keeps "ns or ms?"
//! out of the interface.

use core::time::Duration;

/// A point in caller-defined monotonic time, in nanoseconds since an arbitrary epoch.
///
/// Arithmetic saturates rather than panicking, because a buggy or adversarial
/// caller (time that goes backwards, enormous offsets) must never crash a
/// controller embedded in a transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch itself: an ordinary time, at which a packet may be sent
    /// (the simulator starts its flows there). Nothing in the crate reads
    /// it as "never"; what may be unset is an `Option<Instant>`.
    pub const ZERO: Instant = Instant(0);

    /// Builds an instant from nanoseconds since the caller's epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    /// `t` on this axis, for a transport that reads `std::time::Instant`:
    /// the time since `epoch`, an instant it fixes once (when the
    /// connection or the process started) and keeps for every call. A `t`
    /// before `epoch` maps to the epoch itself.
    pub fn from_std(t: std::time::Instant, epoch: std::time::Instant) -> Instant {
        Instant::ZERO.saturating_add(t.saturating_duration_since(epoch))
    }

    /// Nanoseconds since the caller's epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed from `earlier` to `self`, or zero if `earlier` is later
    /// (time that does not advance, or reordered events, must not underflow).
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        nanos_to_duration(self.0.saturating_sub(earlier.0))
    }

    /// Nanoseconds from `earlier` to `self`, saturating at zero: for
    /// callers that keep durations as integer nanoseconds on a hot path.
    pub const fn nanos_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `self` plus `nanos` nanoseconds, saturating at the end of
    /// representable time (a deadline far in the future stays one).
    pub const fn saturating_add_nanos(self, nanos: u64) -> Instant {
        Instant(self.0.saturating_add(nanos))
    }

    /// `self` less `nanos` nanoseconds, saturating at the epoch.
    pub const fn saturating_sub_nanos(self, nanos: u64) -> Instant {
        Instant(self.0.saturating_sub(nanos))
    }

    /// `self + d`, saturating at the end of representable time.
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_to_nanos(d)))
    }
}

/// Converts a duration to whole nanoseconds, saturating at `u64::MAX`
/// (about 584 years), which is far beyond any RTT we model.
///
/// A duration under a second (every RTT sample and ACK delay on a path
/// that works) is its sub-second part, read without the 128-bit
/// multiplication and the overflow test of the general case; the per-ACK
/// path converts two or three durations.
#[inline]
pub(crate) fn duration_to_nanos(d: Duration) -> u64 {
    if d.as_secs() == 0 {
        return u64::from(d.subsec_nanos());
    }
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `Duration::from_nanos(nanos)`. Under a second the duration is built
/// from its sub-second part alone, without the division by 10^9 that
/// splits off whole seconds (the same `Duration`: zero seconds and
/// `nanos` nanoseconds); the per-ACK path builds one per ACK.
#[inline]
pub(crate) fn nanos_to_duration(nanos: u64) -> Duration {
    match u32::try_from(nanos) {
        Ok(n) if n < 1_000_000_000 => Duration::new(0, n),
        _ => Duration::from_nanos(nanos),
    }
}

/// Nanoseconds per second, for rate arithmetic.
pub(crate) const NANOS_PER_SEC: f64 = 1e9;

#[cfg(test)]
mod tests {
    use super::*;

    /// The sub-second shortcuts give what the general conversions give,
    /// on both sides of a second and at the ends of the range.
    #[test]
    fn conversions_match_the_general_ones() {
        let nanos = [
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ];
        for n in nanos {
            assert_eq!(nanos_to_duration(n), Duration::from_nanos(n), "{n}");
            let d = Duration::from_nanos(n);
            assert_eq!(duration_to_nanos(d), n, "{n}");
        }
        for d in [Duration::MAX, Duration::new(u64::MAX / 1_000_000_000, 0)] {
            let general = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            assert_eq!(duration_to_nanos(d), general, "{d:?}");
        }
    }

    /// A transport's `std::time::Instant` maps to the time since its
    /// epoch, and a time before the epoch to the epoch.
    #[test]
    fn std_instants_map_to_the_time_since_the_epoch() {
        let epoch = std::time::Instant::now();
        let later = epoch + Duration::from_millis(1500);
        assert_eq!(Instant::from_std(later, epoch).as_nanos(), 1_500_000_000);
        assert_eq!(Instant::from_std(epoch, later), Instant::ZERO);
    }
}
