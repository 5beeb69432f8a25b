//! The sender's TSO packets, as far as its receiver can see them: which
//! segment carries TCP's PSH flag.
//!
//! Linux queues what a bulk application writes in skbs of the TSO size
//! goal (`tcp_send_mss()` → `tcp_tso_autosize()`: about 1 ms at the
//! pacing rate, at least two segments), marked PSH as the writer stops to
//! wait for room (`tcp_push()` → `tcp_mark_push()`), and sends each as
//! one TSO packet, whose last segment keeps the flag. When the window
//! lets out less than a whole one, only its front leaves, without PSH
//! (`tso_fragment()`). On the emulator's packet log (kernel 6.18,
//! 20 Mbit/s, 40 ms, new data only) that is what the kernel's bursts
//! show:
//!
//! - `cubic-vs-cubic-2bdp`, 3-30 s, where the goal is two segments: of
//!   the two flows' bursts, 9,235 and 11,637 pairs were all `.P`; 989 and
//!   829 lone segments carried no PSH (6 and 7 did); 198 and 203 bursts
//!   of three (a window that grew by one) were `.P.`; and the burst after
//!   a lone or third segment was `.P` again.
//! - `bbr-rtt-10-50ms-1bdp`, the first 2.5 s (STARTUP's higher pacing
//!   rate makes the goal three or four segments): bursts `.P`, `..P` and
//!   `...P`, and 303 lone segments without PSH, often several in a row,
//!   against 4 with it.
//!
//! So the simulator pushes a send unit's last segment when the unit is
//! whole: it reached the size goal (the controller's send quantum, which
//! the quantum pacer bursts by too), or the end of what the application
//! wrote, or the flow's last chunk. A unit is the new data sent at one
//! instant (a paced quantum, or what one ACK lets an unpaced sender out);
//! one the window or the pacer cut short carries none. An exactly paced
//! sender sends each segment at its own instant: its units run on in
//! sequence, so one segment in each goal's worth is pushed.
//! Retransmissions carry no PSH and end the open unit: Linux retransmits
//! its own skbs, and a repair that fills a hole is acknowledged at once
//! whatever its flags, one above a hole by the receiver's SACK rules.
//! QUIC has no PSH: a sender with QUIC's probe timeout marks none.

use super::*;

/// A TCP sender's open send unit.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SendUnit {
    /// Segments of new data sent in it so far.
    segments: u64,
    /// The size goal when it opened, segments.
    goal: u64,
    /// When it opened.
    at: Instant,
}

impl Sender {
    /// Whether new-data segment `chunk` of `bytes`, sent at `now`, carries
    /// PSH: it completes its send unit. Call after `record_sent`, so the
    /// application's data already counts the segment as taken.
    #[inline]
    pub(super) fn ends_skb(
        &mut self,
        now: Instant,
        chunk: u64,
        bytes: u64,
        retransmission: bool,
    ) -> bool {
        if !self.marks_push {
            return false;
        }
        if retransmission {
            self.unit.segments = 0;
            return false;
        }
        let cut = self.pacing != Pacing::Exact && now != self.unit.at;
        if self.unit.segments == 0 || cut {
            self.unit = SendUnit {
                segments: 0,
                goal: (self.cc.send_quantum_bytes() / bytes.max(1)).max(1),
                at: now,
            };
        }
        self.unit.segments += 1;
        let write_end = self.total_chunks == Some(chunk + 1) || !self.app_has_next();
        let whole = write_end || self.unit.segments >= self.unit.goal;
        if whole {
            self.unit.segments = 0;
        }
        whole
    }

    /// Whether the sender marks PSH at all (a TCP sender does, unless told
    /// otherwise). A caller whose receiver ignores PSH turns it off, which
    /// saves the bookkeeping of each segment sent and changes nothing
    /// else: no decision of the sender reads the flag.
    pub fn set_marks_push(&mut self, marks: bool) {
        self.marks_push = marks && matches!(self.timeout, Timeout::Rto);
        self.unit = SendUnit::default();
    }

    /// Whether the application has the next new-data segment ready now.
    #[inline]
    fn app_has_next(&self) -> bool {
        matches!(self.app, AppState::Bulk) || self.app.has(self.next_new_bytes() as u64)
    }
}
