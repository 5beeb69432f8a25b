//! Time spent in each controller mode, closed at the end of the run.

use super::*;

impl Sender {
    pub(super) fn account_mode(&mut self, now: Instant) {
        let mode = self.cc.mode();
        let ns = now.nanos_since(self.last_mode_at);
        self.mode_times.add(self.last_mode, ns);
        self.mode_times.add_srtt(self.last_using_srtt, ns);
        self.last_mode = mode;
        self.last_using_srtt = self.cc.using_srtt();
        self.last_mode_at = now;
    }

    /// Closes the mode-time accounting at the end of the run.
    pub fn finish(&mut self, now: Instant) {
        self.account_mode(now);
    }
}
