//! Earliest-departure-time pacing: when the next packet may leave.
//!
//! A controller gives a pacing rate; a sender needs a time. Linux turned
//! the rate into a time per packet when it moved TCP to earliest departure
//! time pacing (`tcp_update_skb_after_send()`: each packet moves
//! `tcp_wstamp_ns` on by its length at the pacing rate, from its own
//! departure). A sender that wakes late keeps the schedule, within a slack
//! it chooses, so timer lateness is not lost sending time; beyond the
//! slack it restarts from now less the slack, so an idle or app-limited
//! pause earns no burst. Linux forgives half of the next packet's time
//! ("take into account OS jitter"); a sender on a coarser timer needs
//! more.
//!
//! The pacer only keeps the schedule. How many packets may leave at once
//! when it is reached (one, or a send quantum of
//! [`Controller::send_quantum_bytes`](crate::Controller::send_quantum_bytes))
//! is the sender's choice; telling the controller the result with
//! [`Controller::set_next_departure`](crate::Controller::set_next_departure)
//! lets BBR discount what leaves before it.

use crate::float::ceil_to_u64;
use crate::time::Instant;

/// The schedule of an earliest-departure-time pacer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// The earliest departure time of the next packet; `None` before the
    /// first packet (no schedule to keep yet).
    next: Option<Instant>,
}

impl Pacer {
    /// A pacer with no schedule yet: the first packet may leave at once
    /// and starts the schedule from its own send time.
    #[inline]
    pub const fn new() -> Self {
        Pacer { next: None }
    }

    /// A pacer whose schedule starts at `t`: no packet before it, and the
    /// first packet's time is counted from `t` or from its send time less
    /// the slack, whichever is later.
    #[inline]
    pub const fn starting_at(t: Instant) -> Self {
        Pacer { next: Some(t) }
    }

    /// How long `bytes` take at `rate_bytes_per_sec` (at least 1), in
    /// nanoseconds, rounded up. Floating-point, as bbrlab's simulator has
    /// always computed it: within a nanosecond of the exact quotient.
    #[inline]
    pub fn packet_time_ns(bytes: u64, rate_bytes_per_sec: u64) -> u64 {
        let rate = rate_bytes_per_sec.max(1) as f64;
        ceil_to_u64(bytes as f64 * 1e9 / rate)
    }

    /// The earliest departure time of the next packet; `None` before the
    /// first one (it may leave at once).
    #[inline]
    pub fn next_departure(&self) -> Option<Instant> {
        self.next
    }

    /// Whether the schedule allows a packet at `now`.
    #[inline]
    pub fn is_due(&self, now: Instant) -> bool {
        self.next.is_none_or(|d| now >= d)
    }

    /// A packet of `bytes` left at `now`; returns the next packet's
    /// earliest departure time. The schedule is kept while `now` is at
    /// most `slack_ns` past it; later, it restarts from `now` less the
    /// slack.
    #[inline]
    pub fn on_sent(
        &mut self,
        now: Instant,
        bytes: u64,
        rate_bytes_per_sec: u64,
        slack_ns: u64,
    ) -> Instant {
        self.advance(
            now,
            Self::packet_time_ns(bytes, rate_bytes_per_sec),
            slack_ns,
        )
    }

    /// [`Pacer::on_sent`] with the packet's time already known (`gap_ns`;
    /// zero for a sender that does not pace but keeps the schedule).
    #[inline]
    pub fn advance(&mut self, now: Instant, gap_ns: u64, slack_ns: u64) -> Instant {
        let floor = now.saturating_sub_nanos(slack_ns);
        let start = match self.next {
            None => now,
            Some(d) => d.max(floor),
        };
        let next = start.saturating_add_nanos(gap_ns);
        self.next = Some(next);
        next
    }

    /// No packet before `t` (a sender that may not send until then, for
    /// example until its handshake completes).
    #[inline]
    pub fn hold_until(&mut self, t: Instant) {
        self.next = Some(self.next.map_or(t, |d| d.max(t)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    #[test]
    fn packets_leave_one_packet_time_apart_from_the_first() {
        let mut p = Pacer::new();
        assert!(p.is_due(at(5)));
        // 1,500 bytes at 1.5 MB/s: 1 ms each.
        assert_eq!(p.on_sent(at(5), 1500, 1_500_000, 0), at(1_000_005));
        assert!(!p.is_due(at(1_000_004)));
        assert_eq!(p.on_sent(at(1_000_005), 1500, 1_500_000, 0), at(2_000_005));
    }

    #[test]
    fn lateness_within_the_slack_keeps_the_schedule_and_beyond_it_restarts() {
        let mut p = Pacer::starting_at(at(0));
        p.on_sent(at(0), 1500, 1_500_000, 0);
        // 0.3 ms late with 0.5 ms of slack: the schedule holds.
        assert_eq!(
            p.on_sent(at(1_300_000), 1500, 1_500_000, 500_000),
            at(2_000_000)
        );
        // Idle for a second: no burst banked beyond the slack.
        let next = p.on_sent(at(1_002_000_000), 1500, 1_500_000, 500_000);
        assert_eq!(next, at(1_002_000_000 - 500_000 + 1_000_000));
    }

    #[test]
    fn the_packet_time_rounds_up_and_survives_a_zero_rate() {
        assert_eq!(Pacer::packet_time_ns(1, 3), 333_333_334);
        assert_eq!(Pacer::packet_time_ns(1500, 0), 1_500_000_000_000);
    }

    #[test]
    fn hold_until_delays_but_never_advances_the_schedule_backwards() {
        let mut p = Pacer::new();
        p.hold_until(at(100));
        assert!(!p.is_due(at(99)));
        p.hold_until(at(50));
        assert_eq!(p.next_departure(), Some(at(100)));
    }
}
