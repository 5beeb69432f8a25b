//! Making a stack's RTT estimator from bbrlab's estimates, for stacks
//! whose estimator has no public constructor.
//!
//! quinn's and noq's `Controller::on_ack` borrow the stack's
//! `RttEstimator`, and neither crate lets anyone outside it make one: the
//! constructor and update are `pub(crate)`. In both (quinn-proto 0.11.19,
//! noq-proto 1.4.0, `connection/paths.rs`) the type has four fields:
//! three `Duration`s (latest, var, min) and an `Option<Duration>`
//! (smoothed).
//!
//! [`estimator_layout!`](crate::estimator_layout) writes four `Duration`s, `[Duration; 4]`, and
//! reinterprets them as the stack's type. Why that is sound whatever
//! order the compiler gave the fields:
//! - `transmute` refuses to compile unless both types have the same size,
//!   64 bytes. That holds only if `Option<Duration>` is 16 bytes, i.e.
//!   uses the niche in `Duration`'s nanoseconds, so every valid `Duration`
//!   is also a valid `Option<Duration>` (a `Some`).
//! - Four fields of 16 bytes, aligned to 8, filling 64 bytes without
//!   padding, can only sit at offsets 0, 16, 32 and 48: each field reads
//!   exactly one of our `Duration`s, a valid value.
//!
//! Which slot holds which field is then found at run time through the
//! type's public getters (`get`, `min`, `conservative`), once, and
//! checked; if the check fails (another version of the stack), `build`
//! returns `None`.

use core::time::Duration;

/// The estimates to put in a stack's estimator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimates {
    /// The latest sample.
    pub latest: Duration,
    /// The smoothed RTT.
    pub smoothed: Duration,
    /// The RTT variation.
    pub var: Duration,
    /// The minimum RTT.
    pub min: Duration,
}

impl Estimates {
    /// bbrlab's estimates after an RTT sample; `None` before the first.
    pub fn from_rtt(rtt: &congestion::RttEstimator) -> Option<Estimates> {
        Some(Estimates {
            latest: rtt.latest()?,
            smoothed: rtt.smoothed()?,
            var: rtt.var(),
            min: rtt.min()?,
        })
    }

    /// What a stack's estimator holds before any sample: its initial RTT,
    /// half of it as the variation (RFC 9002 §5.3).
    pub fn initial(rtt: Duration) -> Estimates {
        Estimates {
            latest: rtt,
            smoothed: rtt,
            var: rtt / 2,
            min: rtt,
        }
    }
}

/// RFC 9002 §7.6.2, as quinn's and noq's `detect_lost_packets` apply it:
/// whether a contiguous run of the lost packets (consecutive packet
/// numbers, `lost` in send order) spans more than `threshold` between its
/// first and last send.
pub(crate) fn spans_persistent<T>(lost: &[crate::ledger::Entry<T>], threshold: Duration) -> bool {
    let mut i = 0;
    while i < lost.len() {
        let mut j = i + 1;
        while j < lost.len() && lost[j].pn == lost[j - 1].pn + 1 {
            j += 1;
        }
        if lost[j - 1].sent.saturating_since(lost[i].sent) > threshold {
            return true;
        }
        i = j;
    }
    false
}

/// The persistent-congestion duration of RFC 9002 §7.6.1 with a
/// `max_ack_delay`: (srtt + max(4 × rttvar, 1 ms) + max_ack_delay) × 3.
pub(crate) fn persistent_threshold(e: Estimates, max_ack_delay: Duration) -> Duration {
    (e.smoothed + (4 * e.var).max(Duration::from_millis(1)) + max_ack_delay) * 3
}

/// Slot index of each field.
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct Slots {
    pub latest: usize,
    pub smoothed: usize,
    pub var: usize,
    pub min: usize,
}

impl Slots {
    /// `e` laid out in these slots.
    #[doc(hidden)]
    pub fn place(self, e: Estimates) -> [Duration; 4] {
        let mut out = [Duration::ZERO; 4];
        out[self.latest] = e.latest;
        out[self.smoothed] = e.smoothed;
        out[self.var] = e.var;
        out[self.min] = e.min;
        out
    }

    /// The slots of a type whose values `raw` makes from four durations,
    /// found through its getters (smoothed, min, conservative) and checked
    /// on other values; `None` if they do not add up.
    #[doc(hidden)]
    pub fn discover(
        get: impl Fn([Duration; 4]) -> Duration,
        min: impl Fn([Duration; 4]) -> Duration,
        conservative: impl Fn([Duration; 4]) -> Duration,
    ) -> Option<Slots> {
        let ms = Duration::from_millis;
        let probe = [ms(1), ms(2), ms(3), ms(4)];
        let smoothed = probe.iter().position(|&d| d == get(probe))?;
        let min_at = probe.iter().position(|&d| d == min(probe))?;
        // With the smoothed slot zero, `conservative()` = max(smoothed,
        // latest) is the latest.
        let mut p2 = [ms(10), ms(20), ms(30), ms(40)];
        p2[smoothed] = Duration::ZERO;
        let latest = p2.iter().position(|&d| d == conservative(p2))?;
        let var = (0..4).find(|&i| i != smoothed && i != min_at && i != latest)?;
        let mut seen = [smoothed, min_at, latest, var];
        seen.sort_unstable();
        if seen != [0, 1, 2, 3] {
            return None;
        }
        let slots = Slots {
            latest,
            smoothed,
            var,
            min: min_at,
        };
        let want = Estimates {
            latest: ms(90),
            smoothed: ms(70),
            var: ms(5),
            min: ms(40),
        };
        let raw = slots.place(want);
        (get(raw) == want.smoothed && min(raw) == want.min && conservative(raw) == want.latest)
            .then_some(slots)
    }
}

/// `build(Estimates) -> Option<$est>` and `available() -> bool` for a
/// stack's estimator type `$est` (see the module's documentation).
#[macro_export]
#[doc(hidden)]
macro_rules! estimator_layout {
    ($est:ty) => {
        fn raw(slots: [core::time::Duration; 4]) -> $est {
            // SAFETY: see `rtt_layout`'s documentation: equal sizes are
            // checked at compile time, which forces the type's four 16-byte
            // fields onto our four slots, and every slot holds a valid
            // `Duration`, which is valid for both `Duration` and
            // `Option<Duration>`.
            unsafe { core::mem::transmute::<[core::time::Duration; 4], $est>(slots) }
        }

        /// The stack's estimator holding `e`; `None` if its layout was not
        /// recognised.
        pub fn build(e: $crate::rtt_layout::Estimates) -> Option<$est> {
            static SLOTS: std::sync::OnceLock<Option<$crate::rtt_layout::Slots>> =
                std::sync::OnceLock::new();
            let slots = (*SLOTS.get_or_init(|| {
                $crate::rtt_layout::Slots::discover(
                    |d| raw(d).get(),
                    |d| raw(d).min(),
                    |d| raw(d).conservative(),
                )
            }))?;
            Some(raw(slots.place(e)))
        }

        /// Whether [`build`] works with the linked stack.
        pub fn available() -> bool {
            let z = core::time::Duration::ZERO;
            build($crate::rtt_layout::Estimates {
                latest: z,
                smoothed: z,
                var: z,
                min: z,
            })
            .is_some()
        }
    };
}
