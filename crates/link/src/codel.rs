//! CoDel's state machine (RFC 8289), once, for the two places a queue runs
//! it: the FIFO path (`direction`), which decides when a packet arrives
//! for the moment it will reach the head (nothing behind it can change
//! that), and FQ-CoDel's per-flow queues (`sched`), which decide at
//! dequeue. Both keep the same state, the same control law, the same
//! rule for resuming near the last episode's drop rate, and the same
//! "more than a packet queued" test, with the packet size learned as
//! Linux's `codel_should_drop()` learns it (the largest packet seen).

/// One queue's CoDel state (RFC 8289 §5).
#[derive(Clone, Debug, Default)]
pub(crate) struct Codel {
    /// When the sojourn time first stayed above target plus an interval
    /// (0: it is below target).
    first_above_ns: u64,
    /// When the next drop (or mark) of this dropping episode is due.
    pub(crate) drop_next_ns: u64,
    /// Drops in this episode, which set the control law's pace.
    pub(crate) count: u32,
    /// `count` when the last episode began.
    last_count: u32,
    /// In a dropping episode.
    pub(crate) dropping: bool,
    /// The largest packet seen: a queue holding no more than one packet is
    /// left alone however long it waited (RFC 8289 §4.4's maxpacket).
    max_packet: u64,
}

impl Codel {
    /// RFC 8289 §5.5 control law: the next drop comes `interval / √count`
    /// after `t`.
    pub(crate) fn control_law(t: u64, interval_ns: u64, count: u32) -> u64 {
        t + (interval_ns as f64 / f64::from(count.max(1)).sqrt()) as u64
    }

    /// RFC 8289 §5.4 (`dodequeue`'s test): has a packet of `packet_bytes`,
    /// with `backlog_bytes` standing in the queue, waited above target
    /// for at least an interval?
    pub(crate) fn sojourn_persists(
        &mut self,
        now: u64,
        sojourn_ns: u64,
        packet_bytes: u64,
        backlog_bytes: u64,
        target_ns: u64,
        interval_ns: u64,
    ) -> bool {
        self.max_packet = self.max_packet.max(packet_bytes);
        if sojourn_ns < target_ns || backlog_bytes <= self.max_packet {
            self.first_above_ns = 0;
            return false;
        }
        if self.first_above_ns == 0 {
            self.first_above_ns = now + interval_ns;
            return false;
        }
        now >= self.first_above_ns
    }

    /// Enters a dropping episode at `now` (its first drop or mark): it
    /// resumes near the last episode's pace when that ended within 16
    /// intervals (RFC 8289 §5.5), and schedules the next drop.
    pub(crate) fn start_dropping(&mut self, now: u64, interval_ns: u64) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.last_count);
        self.count = if delta > 1 && now.saturating_sub(self.drop_next_ns) < 16 * interval_ns {
            delta
        } else {
            1
        };
        self.drop_next_ns = Self::control_law(now, interval_ns, self.count);
        self.last_count = self.count;
    }

    /// The next drop of the episode is made: counts it and schedules the
    /// one after by the control law.
    pub(crate) fn next_drop(&mut self, interval_ns: u64) {
        self.count += 1;
        self.drop_next_ns = Self::control_law(self.drop_next_ns, interval_ns, self.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A sojourn above target drops only after a whole interval above it,
    /// and never while at most one packet stands in the queue.
    #[test]
    fn a_drop_needs_an_interval_above_target_and_more_than_a_packet() {
        let mut c = Codel::default();
        let (target, interval) = (5 * MS, 100 * MS);
        assert!(!c.sojourn_persists(0, 10 * MS, 1500, 30_000, target, interval));
        assert!(!c.sojourn_persists(99 * MS, 10 * MS, 1500, 30_000, target, interval));
        assert!(c.sojourn_persists(100 * MS, 10 * MS, 1500, 30_000, target, interval));
        // One packet's worth queued: left alone, and the clock restarts.
        assert!(!c.sojourn_persists(150 * MS, 10 * MS, 1500, 1500, target, interval));
        assert!(!c.sojourn_persists(160 * MS, 10 * MS, 1500, 30_000, target, interval));
    }

    /// The control law paces drops at interval/√count, and an episode
    /// that starts soon after the last resumes at the last pace.
    #[test]
    fn drops_speed_up_by_the_square_root_and_resume_near_the_last_pace() {
        let mut c = Codel::default();
        let interval = 100 * MS;
        c.start_dropping(0, interval);
        assert_eq!((c.count, c.drop_next_ns), (1, 100 * MS));
        c.next_drop(interval);
        assert_eq!(c.count, 2);
        assert_eq!(c.drop_next_ns, 100 * MS + (100.0e6 / 2f64.sqrt()) as u64);
        c.next_drop(interval);
        c.next_drop(interval);
        assert_eq!(c.count, 4);
        c.dropping = false;
        // 4 drops since the episode began at 1: it resumes at 3.
        c.start_dropping(c.drop_next_ns + 10 * MS, interval);
        assert_eq!(c.count, 3);
        // Long after: from 1 again.
        c.dropping = false;
        c.start_dropping(c.drop_next_ns + 20 * interval, interval);
        assert_eq!(c.count, 1);
    }
}
