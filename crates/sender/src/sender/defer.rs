//! Linux's TSO deferral: a TCP sender that could send only part of its
//! next TSO packet waits for the ACK about to arrive, so the whole packet
//! leaves at once (`tcp_tso_should_defer()`, kernel 6.18).
//!
//! Linux builds new data into skbs of the TSO size goal and, before
//! sending one of more than one segment, asks whether to wait. It sends
//! at once when the flow is in recovery or after a timeout, when the
//! last send's departure time is more than 1 ms past, when the windows
//! let the whole goal out, when the skb is not the queue's last and fits,
//! when the room is at least a third of the smaller window
//! (`tcp_tso_win_divisor` = 3), or when the next ACK is not due soon: the
//! oldest unacknowledged segment was sent less than an srtt before now
//! plus min(srtt/2, 1 ms) (Linux 6.18's rule, commit 295ce1eb "tcp: fix
//! tcp_tso_should_defer() vs large RTT"). Otherwise it waits when the
//! congestion window (or, if smaller, the receiver's) has no room for the
//! skb, marking the flow window-limited (`is_cwnd_limited`), and when an
//! application-limited skb that fits could still grow, unless it ends the
//! flow.
//!
//! Without it a sender whose ACKs free one segment at a time sends one
//! segment at a time, where the kernel's sends pairs: on the emulator's
//! 1 BDP `bbr3`-versus-`cubic` path the simulated senders sent 40 % and
//! 67 % of their packets alone just before the start-ups' overflow, the
//! kernel's 7 % and 19 %.
//!
//! The simulator's skb is the run of new-data segments sent together:
//! the controller's send quantum of them (`skb.rs`'s size goal), fewer
//! when the application or the flow has fewer, and what is left of one
//! the window cut short. An exactly paced sender has no skbs and never
//! defers; QUIC senders do not either.

use super::*;

/// Linux's `tcp_tso_win_divisor` default: a room of a third of the
/// window is used at once.
const WIN_DIVISOR: u64 = 3;
/// How recent the last departure must be for a wait, and the most a
/// wait may last for the next ACK (`NSEC_PER_MSEC` in
/// `tcp_tso_should_defer()`).
const RECENT_NS: u64 = 1_000_000;

/// The TSO packet at the head of a deferring sender's new data.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TsoSkb {
    /// Segments of it not yet sent (0: the next new segment starts one).
    left: u64,
    /// When it was last cleared to go: its segments leave without asking
    /// again while the instant lasts.
    cleared_at: Option<Instant>,
}

/// What a deferring sender does with the new data it could send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Deferral {
    /// Send it.
    Send,
    /// Wait for an ACK: the congestion window is short of the skb.
    Cwnd,
    /// Wait for an ACK: the receiver's window is short of the skb.
    Rwnd,
    /// Wait for more of the application's data (or an ACK).
    App,
}

impl Sender {
    /// Whether this sender defers TSO packets (see the module).
    pub(super) fn defers_tso(flow: &SenderConfig) -> bool {
        flow.tso_defer && flow.timeout == Timeout::Rto && flow.pacing != Pacing::Exact
    }

    /// Whether new data at `now` waits, asked once per skb. Inlined so a
    /// sender that does not defer pays one test of a flag per send.
    #[inline]
    pub(super) fn tso_deferral(&mut self, now: Instant) -> Deferral {
        if !self.tso_defer {
            return Deferral::Send;
        }
        self.tso_deferral_asked(now)
    }

    /// [`Sender::tso_deferral`] for a deferring sender.
    fn tso_deferral_asked(&mut self, now: Instant) -> Deferral {
        let skb = self.tso;
        if skb.left > 0 && skb.cleared_at == Some(now) {
            return Deferral::Send;
        }
        // Segments of the current size (a finite flow's short last one
        // counts as one).
        let mss = self.mss;
        let goal = (self.cc.send_quantum_bytes() / mss).max(1);
        let (segs, tail) = if skb.left > 0 {
            (skb.left, false)
        } else {
            let ready = self.ready_segments(goal + 1);
            (ready.min(goal), ready <= goal)
        };
        let verdict = if segs > 1 {
            self.should_defer(now, mss, goal, segs, tail)
        } else {
            Deferral::Send
        };
        if verdict == Deferral::Send {
            self.tso = TsoSkb {
                left: segs,
                cleared_at: Some(now),
            };
        }
        verdict
    }

    /// A new-data segment left: one fewer in the skb.
    #[inline]
    pub(super) fn tso_sent(&mut self) {
        if self.tso_defer {
            self.tso.left = self.tso.left.saturating_sub(1);
        }
    }

    /// `tcp_tso_should_defer()` for an skb of `segs` segments of `mss`
    /// bytes (`tail`: the last data written) under a size goal of `goal`.
    fn should_defer(&self, now: Instant, mss: u64, goal: u64, segs: u64, tail: bool) -> Deferral {
        if self.recovery_state() >= RecoveryState::Recovery {
            return Deferral::Send;
        }
        // The pacer's next departure is Linux's `tcp_wstamp_ns`: the last
        // send's departure plus its time at the pacing rate.
        if now.nanos_since(self.next_send()) > RECENT_NS {
            return Deferral::Send;
        }
        let cwnd = self.cc.cwnd_bytes();
        let cong_win = cwnd.saturating_sub(self.inflight);
        let (send_win, snd_wnd) = match self.flow_limit {
            Some(l) => (
                l.saturating_sub(self.next_chunk).saturating_mul(mss),
                l.saturating_sub(self.cum_chunk).saturating_mul(mss),
            ),
            None => (u64::MAX, u64::MAX),
        };
        let limit = cong_win.min(send_win);
        let skb_len = segs * mss;
        if limit >= goal * mss || (!tail && limit >= skb_len) {
            return Deferral::Send;
        }
        if limit >= snd_wnd.min(cwnd) / WIN_DIVISOR {
            return Deferral::Send;
        }
        // The next ACK is due when the oldest segment out was sent an
        // srtt ago; wait only if that is within min(srtt/2, 1 ms). Before
        // any RTT sample no ACK is expected (Linux has one from the SYN
        // exchange, which puts the first window's ACKs an RTT away).
        let Some(head) = self.pkts.iter().find(|p| p.status == Status::Outstanding) else {
            return Deferral::Send;
        };
        let Some(srtt) = self.cc.rtt().smoothed_ns() else {
            return Deferral::Send;
        };
        let expected = head.sent.saturating_add_nanos(srtt);
        if expected.nanos_since(now) > (srtt / 2).min(RECENT_NS) {
            return Deferral::Send;
        }
        if cong_win < send_win {
            if cong_win <= skb_len {
                return Deferral::Cwnd;
            }
        } else if send_win <= skb_len {
            return Deferral::Rwnd;
        }
        // An application-limited skb that fits waits to grow, unless it
        // carries the flow's end (FIN).
        let ends_flow = self
            .total_chunks
            .is_some_and(|t| self.next_chunk + segs >= t);
        if ends_flow {
            Deferral::Send
        } else {
            Deferral::App
        }
    }

    /// How many new-data segments the application and the flow have for
    /// sending now, counting at most `cap` (a write's short tail that may
    /// leave counts as one, as a finite flow's short last segment does).
    fn ready_segments(&self, cap: u64) -> u64 {
        let mut n = 0;
        let mut bytes = 0;
        while n < cap {
            let chunk = self.next_chunk + n;
            if self.total_chunks.is_some_and(|t| chunk >= t) {
                break;
            }
            let whole = self.chunk_bytes(chunk) as u64;
            if !self.app.has(bytes + whole) {
                // The write's short tail, if it may go, is one more.
                if self.app.tail(bytes, whole).is_some() && self.may_send_short() {
                    n += 1;
                }
                break;
            }
            bytes += whole;
            n += 1;
        }
        n
    }
}
