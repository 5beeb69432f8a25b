//! Windowed min/max filters: Kathleen Nichols' three-sample running estimator.
//!
//! BBR needs "the best value seen in the last W units" for both bandwidth
//! (a max over 10 round trips) and RTT (a min over 10 seconds). Keeping every
//! sample in the window would allocate; the three-sample scheme keeps the
//! best, second-best and third-best samples from successive sub-windows and
//! promotes them as older ones age out. Its error is bounded and it is O(1)
//! per update. (Idea as in Linux `lib/win_minmax.c`; this is our own code.)
//!
//! Time here is any monotonically non-decreasing `u64`: round-trip counts for
//! the bandwidth filter, nanoseconds for an RTT filter.

/// Whether the filter keeps the largest or the smallest value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// Keep the maximum (bandwidth).
    Max,
    /// Keep the minimum. The same estimator, tested here; no built-in
    /// algorithm uses it, since min_rtt has its own expiry rules.
    #[allow(dead_code)]
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    time: u64,
    value: f64,
}

/// A windowed min or max over a window of `window` time units.
#[derive(Clone, Debug)]
pub struct WindowedFilter {
    kind: FilterKind,
    window: u64,
    samples: [Sample; 3],
    has_value: bool,
}

impl WindowedFilter {
    /// Creates an empty filter whose window spans `window` time units.
    pub fn new(kind: FilterKind, window: u64) -> Self {
        WindowedFilter {
            kind,
            window,
            samples: [Sample {
                time: 0,
                value: 0.0,
            }; 3],
            has_value: false,
        }
    }

    /// The current best value, or `None` before the first sample.
    pub fn get(&self) -> Option<f64> {
        self.has_value.then_some(self.samples[0].value)
    }

    /// The current best value, or `default` before the first sample.
    pub fn get_or(&self, default: f64) -> f64 {
        self.get().unwrap_or(default)
    }

    /// [`WindowedFilter::get_or`]`(0.0)`, without testing whether a
    /// sample was taken: an empty filter's best sample is the `+0.0` that
    /// [`WindowedFilter::new`] put there, since every write of a sample
    /// ([`WindowedFilter::reset`], and the update paths, which run only on
    /// a filter that holds a value) comes with or after `has_value` being
    /// set, and nothing clears it. The same value, bit for bit; a test
    /// and a branch fewer on each of BBR's per-ACK reads of its bandwidth
    /// (`examples/ack_loop`).
    #[inline(always)]
    pub(crate) fn get_or_zero(&self) -> f64 {
        debug_assert_eq!(self.get_or(0.0).to_bits(), self.samples[0].value.to_bits());
        self.samples[0].value
    }

    /// The window length.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Changes the window length; samples already held age against the new
    /// length from the next update (QUIC-style BBR ties its bandwidth
    /// window to a cycle length that `bbr-jitter` changes).
    pub fn set_window(&mut self, window: u64) {
        self.window = window;
    }

    /// Whether the filter holds `value` at `time` and nothing else: all
    /// three samples are that one, as [`WindowedFilter::reset`] leaves
    /// them. A max filter in that state is left exactly as it is by
    /// [`WindowedFilter::update`] with the same sample, whatever the
    /// window: the sample ties the best, so the update restarts the
    /// filter with it, which rewrites each sample with itself. (Likewise
    /// a min filter.) Compared bit for bit, so no NaN holds.
    pub fn holds_only(&self, time: u64, value: f64) -> bool {
        self.has_value
            && self
                .samples
                .iter()
                .all(|s| s.time == time && s.value.to_bits() == value.to_bits())
    }

    /// Forgets everything and starts over with `value` at `time`.
    pub fn reset(&mut self, time: u64, value: f64) {
        let s = Sample { time, value };
        self.samples = [s; 3];
        self.has_value = true;
    }

    /// Adds a sample taken at `time` and returns the new best value.
    ///
    /// NaN samples are ignored: a filter poisoned by NaN would poison every
    /// rate computed from it.
    #[inline]
    pub fn update(&mut self, time: u64, value: f64) -> f64 {
        // The kind is tested once, and each body below compares one way:
        // tested inside each comparison, it cost both comparisons and a
        // select each time (`examples/ack_loop`: bbr and bbr3 ran the
        // comparisons on every ACK).
        match self.kind {
            FilterKind::Max => self.update_as::<true, true, true>(time, value),
            FilterKind::Min => self.update_as::<false, true, true>(time, value),
        }
    }

    /// [`WindowedFilter::update`] for a filter built as
    /// [`FilterKind::Max`] and a `value` that is not NaN (BBR's delivery
    /// rate: a finite byte count over a positive interval), without
    /// testing either (two compares and two branches per call on BBR's
    /// per-ACK bandwidth update): `update` would take the same arm and
    /// return the same value. Debug builds check both.
    ///
    /// The value must also not be negative (BBR's rates are positive):
    /// then an empty filter needs no test of its own either, since its
    /// best sample is `+0.0` ([`WindowedFilter::get_or_zero`]) and the
    /// value ties or beats it, so the update restarts the filter with
    /// the value, as the test of emptiness would.
    #[inline]
    pub(crate) fn update_max(&mut self, time: u64, value: f64) -> f64 {
        debug_assert_eq!(self.kind, FilterKind::Max);
        debug_assert!(value >= 0.0);
        debug_assert!(self.has_value || self.samples[0].value.to_bits() == 0);
        self.update_as::<true, false, false>(time, value)
    }

    /// [`WindowedFilter::update`] for a max filter (`MAX`) or a min one;
    /// without `NAN_CHECK` for a caller whose `value` is never NaN, and
    /// without `EMPTY_CHECK` for one whose value restarts an empty filter
    /// anyway ([`WindowedFilter::update_max`]).
    #[inline(always)]
    fn update_as<const MAX: bool, const NAN_CHECK: bool, const EMPTY_CHECK: bool>(
        &mut self,
        time: u64,
        value: f64,
    ) -> f64 {
        let better_or_equal = |a: f64, b: f64| if MAX { a >= b } else { a <= b };
        if NAN_CHECK && value.is_nan() {
            return self.get_or(0.0);
        }
        let new = Sample { time, value };
        // A new overall best, or the whole window has expired: restart.
        if (EMPTY_CHECK && !self.has_value)
            || better_or_equal(value, self.samples[0].value)
            || time.saturating_sub(self.samples[2].time) > self.window
        {
            self.reset(time, value);
            return value;
        }
        if better_or_equal(value, self.samples[1].value) {
            self.samples[1] = new;
            self.samples[2] = new;
        } else if better_or_equal(value, self.samples[2].value) {
            self.samples[2] = new;
        }
        self.subwindow_update(new)
    }

    /// Ages the three samples: the best expires after a full window, and the
    /// second and third are refreshed if they have sat unchanged for a quarter
    /// and a half of the window, so a fresh candidate is always ready.
    fn subwindow_update(&mut self, new: Sample) -> f64 {
        let dt = new.time.saturating_sub(self.samples[0].time);
        if dt > self.window {
            self.samples[0] = self.samples[1];
            self.samples[1] = self.samples[2];
            self.samples[2] = new;
            if new.time.saturating_sub(self.samples[0].time) > self.window {
                self.samples[0] = self.samples[1];
                self.samples[1] = self.samples[2];
                self.samples[2] = new;
            }
        } else if self.samples[1].time == self.samples[0].time && dt > self.window / 4 {
            self.samples[1] = new;
            self.samples[2] = new;
        } else if self.samples[2].time == self.samples[1].time && dt > self.window / 2 {
            self.samples[2] = new;
        }
        self.samples[0].value
    }
}

/// A max over the current and the previous period, kept in two slots and
/// advanced explicitly: BBRv3's `max_bw`, whose "time" is the PROBE_BW
/// cycle (draft-ietf-ccwg-bbr-06 §5.5.3, `BBR.MaxBwFilterLen` = 2; Linux v3
/// `bw_hi[2]`). A period without samples does not erase the previous one
/// (`bbr_advance_max_bw_filter()`), so an application-limited cycle keeps
/// the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TwoSlotMax {
    /// [previous period, current period].
    slots: [f64; 2],
}

impl TwoSlotMax {
    /// An empty filter (both slots 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// The max of both periods (0 before any sample).
    ///
    /// By comparison rather than `f64::max`, whose NaN handling costs
    /// five instructions more on every call: the slots are never NaN
    /// (they start at 0, and [`TwoSlotMax::update`] stores a value only
    /// when it compares greater, which NaN never does), nor -0, so both
    /// give the same value, bit for bit.
    pub fn get(&self) -> f64 {
        let [prev, cur] = self.slots;
        if cur > prev {
            cur
        } else {
            prev
        }
    }

    /// Adds a sample to the current period; NaN is ignored. Returns
    /// whether the filter changed (the sample beat the current period's),
    /// so a caller that derives values from [`TwoSlotMax::get`] knows
    /// when they may have changed.
    pub fn update(&mut self, value: f64) -> bool {
        let beats = value > self.slots[1];
        if beats {
            self.slots[1] = value;
        }
        beats
    }

    /// Starts a new period: the current one becomes the previous, unless it
    /// had no sample, in which case the previous one is kept.
    pub fn advance(&mut self) {
        if self.slots[1] <= 0.0 {
            return;
        }
        self.slots[0] = self.slots[1];
        self.slots[1] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_filter_keeps_max_within_window() {
        let mut f = WindowedFilter::new(FilterKind::Max, 10);
        f.update(0, 5.0);
        f.update(1, 3.0);
        f.update(5, 4.0);
        assert_eq!(f.get(), Some(5.0));
        // At round 11 the 5.0 from round 0 has aged out (11 - 0 > 10).
        let v = f.update(11, 1.0);
        assert!(v < 5.0, "old max must expire, got {v}");
        assert_eq!(v, 4.0, "the next-best sample in the window takes over");
    }

    #[test]
    fn min_filter_tracks_min_and_expires() {
        let mut f = WindowedFilter::new(FilterKind::Min, 100);
        assert_eq!(f.get(), None);
        f.update(0, 10.0);
        f.update(10, 20.0);
        assert_eq!(f.get(), Some(10.0));
        f.update(50, 8.0);
        assert_eq!(f.get(), Some(8.0));
        // Far beyond the window everything old is gone.
        assert_eq!(f.update(1000, 30.0), 30.0);
    }

    /// `holds_only` is true exactly after a restart with that sample, and
    /// updating with the same sample then changes nothing.
    #[test]
    fn holds_only_after_a_restart_and_a_repeat_changes_nothing() {
        for kind in [FilterKind::Max, FilterKind::Min] {
            let mut f = WindowedFilter::new(kind, 10);
            assert!(!f.holds_only(0, 0.0), "empty");
            f.update(0, 5.0);
            assert!(f.holds_only(0, 5.0));
            assert!(!f.holds_only(1, 5.0) && !f.holds_only(0, 4.0));
            let worse = if kind == FilterKind::Max { 3.0 } else { 7.0 };
            // A quarter window on, the second and third samples move.
            f.update(3, worse);
            assert!(!f.holds_only(3, worse) && !f.holds_only(0, 5.0));
            f.update(30, worse);
            assert!(f.holds_only(30, worse));
            for window in [0, 1, 10, u64::MAX] {
                f.set_window(window);
                let before = f.samples;
                assert_eq!(f.update(30, worse), worse);
                assert_eq!(f.samples, before);
                assert!(f.holds_only(30, worse));
            }
        }
    }

    #[test]
    fn nan_is_ignored() {
        let mut f = WindowedFilter::new(FilterKind::Max, 10);
        f.update(0, 2.0);
        assert_eq!(f.update(1, f64::NAN), 2.0);
        assert_eq!(f.get(), Some(2.0));
    }

    #[test]
    fn max_filter_matches_brute_force_within_bounded_error() {
        // The three-sample filter may report a value that is older than the
        // true windowed max, but never a value larger than any sample seen in
        // the last window, and never one smaller than the newest sample.
        let mut f = WindowedFilter::new(FilterKind::Max, 10);
        let mut seen: Vec<(u64, f64)> = Vec::new();
        let mut x: u64 = 12345;
        for t in 0..500u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((x >> 33) % 1000) as f64;
            let got = f.update(t, v);
            seen.push((t, v));
            let window_max = seen
                .iter()
                .filter(|(ts, _)| t - ts <= 10)
                .map(|s| s.1)
                .fold(f64::MIN, f64::max);
            let all_max = seen.iter().map(|s| s.1).fold(f64::MIN, f64::max);
            assert!(got >= v, "best below newest sample at t={t}");
            assert!(got <= all_max);
            // Bounded staleness: the estimate was seen within 2 windows.
            assert!(seen.iter().any(|(ts, sv)| *sv == got && t - ts <= 20));
            let _ = window_max;
        }
    }

    #[test]
    fn two_slot_max_remembers_one_previous_period_and_skips_empty_ones() {
        let mut f = TwoSlotMax::new();
        assert_eq!(f.get(), 0.0);
        f.update(5.0);
        f.update(f64::NAN);
        f.update(3.0);
        assert_eq!(f.get(), 5.0);
        f.advance(); // [5, 0]
        f.update(2.0);
        assert_eq!(f.get(), 5.0, "the previous period still counts");
        f.advance(); // [2, 0]: 5 is two periods old
        assert_eq!(f.get(), 2.0);
        f.advance(); // empty period: nothing moves
        assert_eq!(f.get(), 2.0);
    }

    /// `get` by comparison is `f64::max` of the slots, bit for bit,
    /// whatever the updates (NaN, -0, infinities included).
    #[test]
    fn two_slot_get_is_f64_max_of_the_slots() {
        let values = [
            0.0,
            -0.0,
            1.5,
            -2.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            3.0,
            1e-300,
            2.5,
        ];
        let mut f = TwoSlotMax::new();
        for round in 0..200usize {
            f.update(values[round * 7 % values.len()]);
            if round % 3 == 0 {
                f.advance();
            }
            let [a, b] = f.slots;
            assert!(!a.is_nan() && !b.is_nan());
            assert_eq!(f.get().to_bits(), a.max(b).to_bits(), "{a} {b}");
        }
    }
}
