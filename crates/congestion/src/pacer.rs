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
//! lets BBR discount what leaves before it. A sender that sends a quantum
//! as one [`Burst`], as Linux sends one TSO/GSO super-packet, charges the
//! burst's time as a whole ([`Pacer::add_to_burst`]).

use crate::float::{ceil_to_u64, u64_as_f64};
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
        let rate = u64_as_f64(rate_bytes_per_sec.max(1));
        ceil_to_u64(u64_as_f64(bytes) * 1e9 / rate)
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

    /// Opens a burst of up to `budget_bytes` leaving at `now`, as Linux
    /// builds one skb of up to its TSO goal once `tcp_wstamp_ns` is
    /// reached (`tcp_write_xmit()`). Add its packets with
    /// [`Pacer::add_to_burst`].
    #[inline]
    pub fn open_burst(&self, now: Instant, budget_bytes: u64) -> Burst {
        let schedule = self.next.unwrap_or(now);
        Burst {
            at: now,
            base: schedule.max(now),
            credit_ns: now.nanos_since(schedule),
            len_ns: 0,
            room: budget_bytes,
        }
    }

    /// Adds a packet of `bytes`, taking `gap_ns` at the pacing rate, to
    /// `burst`; returns the next departure. Linux charges a super-packet's
    /// time as a whole and forgives lateness of at most half of it
    /// (`tcp_update_skb_after_send()`: `len_ns -= min(len_ns / 2,
    /// credit)`), so a sender that was waiting on its window, not its
    /// pacer, sends one burst at once and the next half a burst's time
    /// later: never two bursts back to back.
    #[inline]
    pub fn add_to_burst(&mut self, burst: &mut Burst, bytes: u64, gap_ns: u64) -> Instant {
        burst.room = burst.room.saturating_sub(bytes);
        burst.len_ns = burst.len_ns.saturating_add(gap_ns);
        let forgiven = (burst.len_ns / 2).min(burst.credit_ns);
        let next = burst.base.saturating_add_nanos(burst.len_ns - forgiven);
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

/// Packets leaving together as one burst (Linux: one TSO/GSO skb), opened
/// by [`Pacer::open_burst`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burst {
    /// When it leaves.
    at: Instant,
    /// The schedule's time it is charged from: the pacer's next departure,
    /// or `at` if that was earlier.
    base: Instant,
    /// How late `at` was against the schedule.
    credit_ns: u64,
    /// Its packets' time at the pacing rate so far.
    len_ns: u64,
    /// Bytes it may still take.
    room: u64,
}

impl Burst {
    /// Whether a packet of `bytes` at `now` joins this burst: it leaves at
    /// the same instant and fits.
    #[inline]
    pub fn admits(&self, now: Instant, bytes: u64) -> bool {
        now == self.at && bytes <= self.room
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
    fn a_burst_on_time_is_charged_its_whole_time() {
        // 1 ms per packet; a two-packet burst due at 5 ms, sent at 5 ms.
        let mut p = Pacer::starting_at(at(5_000_000));
        let mut b = p.open_burst(at(5_000_000), 3000);
        assert!(b.admits(at(5_000_000), 1500));
        assert_eq!(p.add_to_burst(&mut b, 1500, 1_000_000), at(6_000_000));
        assert!(b.admits(at(5_000_000), 1500));
        assert_eq!(p.add_to_burst(&mut b, 1500, 1_000_000), at(7_000_000));
        // Full, and a later instant is another burst.
        assert!(!b.admits(at(5_000_000), 1500));
        let b2 = p.open_burst(at(5_000_001), 3000);
        assert!(!b2.admits(at(5_000_000), 1));
    }

    #[test]
    fn a_late_burst_is_forgiven_at_most_half_its_time() {
        // Waiting on the window for 10 ms past the schedule: the two-packet
        // burst leaves at once and the next may follow half its time (1 ms)
        // later, not at once, so no third packet joins the first two.
        let mut p = Pacer::starting_at(at(0));
        let mut b = p.open_burst(at(10_000_000), 3000);
        p.add_to_burst(&mut b, 1500, 1_000_000);
        assert_eq!(p.add_to_burst(&mut b, 1500, 1_000_000), at(11_000_000));
        assert!(!p.is_due(at(10_999_999)));
        // Late by 0.3 ms only: 0.3 ms forgiven.
        let mut p = Pacer::starting_at(at(0));
        let mut b = p.open_burst(at(300_000), 3000);
        p.add_to_burst(&mut b, 1500, 1_000_000);
        assert_eq!(p.add_to_burst(&mut b, 1500, 1_000_000), at(2_000_000));
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
