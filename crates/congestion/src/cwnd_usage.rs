//! Whether the sender is using its window: the test a loss-based window
//! must pass before it grows.
//!
//! A window that grows while the application, not the window, limits the
//! sender measures nothing: a flow that keeps 28 kB in flight on a fast
//! path would otherwise raise cwnd to megabytes and, when the application
//! turns bulk, burst all of it into the network. Linux grows CUBIC and Reno
//! only when `tcp_is_cwnd_limited()` says so (`cubictcp_cong_avoid()`,
//! `tcp_reno_cong_avoid()`); RFC 9002 §7.8 says the same for QUIC ("the
//! congestion window SHOULD NOT be increased" while underutilised).
//!
//! The record follows `tcp_cwnd_validate()`. Within one window of data
//! (from a send until that send is acknowledged) it keeps either the fact
//! that the window was full, or the most that was in flight:
//! - in slow start the window may grow while it is below twice that most
//!   (so slow start can double what the sender actually used);
//! - in congestion avoidance only if the window was full at some send in
//!   the current window of data.

use crate::time::Instant;

/// Linux's `is_cwnd_limited`, `max_packets_out` and `cwnd_usage_seq`, in
/// bytes and send times.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CwndUsage {
    /// A send in the current window of data found the window full.
    is_cwnd_limited: bool,
    /// The most bytes in flight after a send in the current window.
    max_in_flight: u64,
    /// When the send that opened the current window left; the window is
    /// over once a packet sent then or later is acknowledged (Linux:
    /// `snd_una` reaches `cwnd_usage_seq`).
    window_start: Option<Instant>,
    /// An ACK has shown the current window over; the next send opens a
    /// new one.
    window_over: bool,
}

impl CwndUsage {
    /// A send left `in_flight_after` bytes in flight under `cwnd`. The
    /// window counts as full when it has no room for another full-sized
    /// packet (Linux: `tcp_packets_in_flight()` ≥ cwnd in
    /// `tcp_write_xmit()`).
    pub fn on_sent(&mut self, now: Instant, in_flight_after: u64, cwnd: u64, mss: u64) {
        let limited = in_flight_after.saturating_add(mss) > cwnd;
        self.record(now, in_flight_after, limited);
    }

    /// The sender held data back at `now` for want of window, sending
    /// nothing, with `in_flight` bytes out: Linux's `tcp_write_xmit()`
    /// passes `is_cwnd_limited` to `tcp_cwnd_validate()` when
    /// `tcp_tso_should_defer()` waits for the window to open further,
    /// though a segment would still fit.
    pub fn on_held(&mut self, now: Instant, in_flight: u64) {
        self.record(now, in_flight, true);
    }

    /// `tcp_cwnd_validate()`: a new window of data starts when the last
    /// is over, the window was found full, or more is in flight than the
    /// record holds.
    fn record(&mut self, now: Instant, in_flight_after: u64, limited: bool) {
        if self.window_over
            || self.window_start.is_none()
            || limited
            || (!self.is_cwnd_limited && in_flight_after > self.max_in_flight)
        {
            self.is_cwnd_limited = limited;
            self.max_in_flight = in_flight_after;
            self.window_start = Some(now);
            self.window_over = false;
        }
    }

    /// An ACK newly acknowledged packets, the newest sent at `newest_sent`.
    pub fn on_ack(&mut self, newest_sent: Option<Instant>) {
        if let (Some(start), Some(sent)) = (self.window_start, newest_sent) {
            if sent >= start {
                self.window_over = true;
            }
        }
    }

    /// `tcp_is_cwnd_limited()`: may a window of `cwnd` grow?
    pub fn may_grow(&self, cwnd: u64, in_slow_start: bool) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        in_slow_start && cwnd < self.max_in_flight.saturating_mul(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn a_full_window_may_grow_in_avoidance_until_a_window_passes_unfilled() {
        let mut u = CwndUsage::default();
        u.on_sent(at(0), 10 * MSS, 10 * MSS, MSS);
        assert!(u.may_grow(10 * MSS, false));
        // The next window of data never fills the window.
        u.on_ack(Some(at(0)));
        u.on_sent(at(100), 3 * MSS, 10 * MSS, MSS);
        assert!(!u.may_grow(10 * MSS, false));
    }

    #[test]
    fn slow_start_may_grow_to_twice_what_was_in_flight() {
        let mut u = CwndUsage::default();
        u.on_sent(at(0), 3 * MSS, 10 * MSS, MSS);
        assert!(u.may_grow(5 * MSS, true));
        assert!(!u.may_grow(6 * MSS, true));
        assert!(!u.may_grow(5 * MSS, false));
    }

    #[test]
    fn within_a_window_the_limited_fact_is_kept_over_later_smaller_sends() {
        let mut u = CwndUsage::default();
        u.on_sent(at(10), 10 * MSS, 10 * MSS, MSS);
        u.on_sent(at(11), 2 * MSS, 10 * MSS, MSS);
        assert!(u.may_grow(10 * MSS, false));
        // An ACK of a packet sent before the window began does not end it.
        u.on_ack(Some(at(5)));
        u.on_sent(at(12), 2 * MSS, 10 * MSS, MSS);
        assert!(u.may_grow(10 * MSS, false));
    }

    #[test]
    fn data_held_back_for_the_window_counts_as_using_it() {
        let mut u = CwndUsage::default();
        // Eight of ten segments out, room for two: not full by the send.
        u.on_sent(at(0), 8 * MSS, 10 * MSS, MSS);
        assert!(!u.may_grow(10 * MSS, false));
        // The sender waits for an ACK to send a whole TSO packet.
        u.on_held(at(1), 8 * MSS);
        assert!(u.may_grow(10 * MSS, false));
        // Until a window of data passes with no wait and no full window.
        u.on_ack(Some(at(1)));
        u.on_sent(at(50), 5 * MSS, 10 * MSS, MSS);
        assert!(!u.may_grow(10 * MSS, false));
    }
}
