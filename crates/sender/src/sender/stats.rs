//! Time spent in each controller mode, closed at the end of the run.

use super::*;

impl Sender {
    /// Notes the controller's mode after an event. Time is added when the mode (or the srtt rule's use) changes, not
    /// on every ACK: the sums are the same, since the intervals between
    /// ACKs in one mode add up to the time since it began, and an ACK that
    /// changes nothing then costs two reads.
    #[inline]
    pub(super) fn account_mode(&mut self, now: Instant) {
        let mode = self.cc.mode();
        let using_srtt = self.cc.using_srtt();
        if mode == self.last_mode && using_srtt == self.last_using_srtt {
            return;
        }
        self.close_mode_interval(now);
        self.last_mode = mode;
        self.last_using_srtt = using_srtt;
    }

    /// Adds the time since the last change to the mode it was spent in.
    /// Out of line: it runs only on a change, and keeps the inlined
    /// per-ACK test small.
    #[inline(never)]
    fn close_mode_interval(&mut self, now: Instant) {
        let ns = now.nanos_since(self.last_mode_at);
        self.mode_times.add(self.last_mode, ns);
        self.mode_times.add_srtt(self.last_using_srtt, ns);
        self.last_mode_at = now;
    }

    /// Closes the mode-time accounting at the end of the run.
    pub fn finish(&mut self, now: Instant) {
        self.close_mode_interval(now);
        self.last_mode = self.cc.mode();
        self.last_using_srtt = self.cc.using_srtt();
    }
}
