//! TCP's timestamp option as Linux's sender uses it (RFC 7323), with
//! [`SenderConfig::timestamps`]: the echo decides whether a recovery was
//! needed (`tcp_packet_delayed()`, partial undo) and gives an RTT sample
//! when no clean one is at hand; and a cumulative ACK acknowledges a
//! retransmission in flight, as a TCP segment is one whatever its
//! transmissions.

use super::*;
use crate::timestamp::ts_after;

/// The sender's timestamp state.
#[derive(Clone, Debug, Default)]
pub(super) struct Stamps {
    /// The switch ([`SenderConfig::timestamps`], Linux loss detection).
    pub(super) on: bool,
    /// The timestamp of the first retransmission since none was in
    /// flight: Linux's `retrans_stamp`. An echo older than it shows that
    /// an original reached the receiver.
    pub(super) retrans_stamp: Option<u32>,
    /// The earliest send time among the packets this ACK newly
    /// acknowledged that were never retransmitted: Linux's clean RTT
    /// sample (`first_ackt`, `first_sackt` in `tcp_clean_rtx_queue()` and
    /// `tcp_sacktag_one()`).
    pub(super) oldest_clean: Option<Instant>,
}

impl Stamps {
    pub(super) fn new(on: bool) -> Self {
        Stamps {
            on,
            ..Stamps::default()
        }
    }

    /// A packet sent at `sent` was newly acknowledged; `retx`: it was a
    /// retransmission (Karn: no RTT sample from it).
    #[inline]
    pub(super) fn note_acked(&mut self, sent: Instant, retx: bool) {
        if !retx && self.oldest_clean.is_none_or(|t| sent < t) {
            self.oldest_clean = Some(sent);
        }
    }
}

/// TCP's timestamp of `t`: milliseconds, 32 bits (they wrap, and are
/// compared by the sign of their difference).
pub(super) fn ms(t: Instant) -> u32 {
    (t.as_nanos() / 1_000_000) as u32
}

impl Sender {
    /// The timestamps' part of an ACK, before loss detection: the undo
    /// they allow ([`Sender::undo_by_timestamp`]; true: mark nothing more
    /// on this ACK) and the RTT sample for the controller
    /// ([`Sender::linux_rtt_sample`], `rtt` the usual one). Out of line,
    /// behind one test of the switch, so a flow without timestamps pays
    /// for none of it.
    #[inline(never)]
    pub(super) fn stamped_ack(
        &mut self,
        now: Instant,
        ack: &Ack,
        cum_before: u64,
        rtt: Option<u64>,
    ) -> (bool, Option<u64>) {
        let hold = self.undo_by_timestamp(ack, cum_before);
        let sample = self.linux_rtt_sample(now, ack, cum_before, rtt);
        self.stamps.oldest_clean = None;
        (hold, sample)
    }

    /// A retransmission leaves at `now`: Linux stamps the first
    /// (`__tcp_retransmit_skb()`).
    #[inline]
    pub(super) fn stamp_retransmission(&mut self, now: Instant) {
        if self.stamps.on && self.stamps.retrans_stamp.is_none() {
            self.stamps.retrans_stamp = Some(ms(now));
        }
    }

    /// Linux `tcp_packet_delayed()`: nothing was retransmitted, or the ACK
    /// echoes a timestamp older than the first retransmission's.
    fn packet_delayed(&self, ack: &Ack) -> bool {
        let Some(stamp) = self.stamps.retrans_stamp else {
            return true;
        };
        ack.ts_echo_ms.is_some_and(|echo| ts_after(stamp, echo))
    }

    /// An ACK that moved the cumulative point past `cum_before` within a
    /// fast recovery, and whose echo shows an original filled the hole
    /// ([`Sender::packet_delayed`]): the reduction was not needed. Only
    /// with timestamps on.
    ///
    /// - At or past the recovery point it is undone
    ///   (`tcp_try_undo_recovery()`, whose `tcp_may_undo()` takes a
    ///   delayed packet as proof).
    /// - Before it (`tcp_try_undo_partial()`), with a retransmission still
    ///   in flight, nothing more is marked lost on this ACK: returns true.
    /// - Before it, with none in flight, it is undone, and the packets
    ///   declared lost whose repair has not left are taken back
    ///   (`tcp_undo_cwnd_reduction()` with `unmark_loss`). Loss detection
    ///   on the same ACK may mark them again, beginning a new recovery.
    ///   Linux's does not: `tcp_rack_detect_loss()` drops a packet it
    ///   marks lost from the time-ordered list it walks, and only a
    ///   transmission puts it back (`tcp_update_skb_after_send()`), so an
    ///   unmarked packet waits to be acknowledged, or for a timeout. A
    ///   known difference, not yet modelled (Notes on fidelity).
    pub(super) fn undo_by_timestamp(&mut self, ack: &Ack, cum_before: u64) -> bool {
        if !self.undo.marker
            || self.cum_chunk <= cum_before
            || self.recovery_state() != RecoveryState::Recovery
        {
            return false;
        }
        let Some((_, high_chunk)) = self.recovery_point else {
            return false;
        };
        if !self.packet_delayed(ack) {
            return false;
        }
        if self.cum_chunk >= high_chunk {
            self.undo();
            return false;
        }
        if self.retrans_out > 0 {
            return true;
        }
        self.undo();
        self.partial_undos += 1;
        self.unmark_losses();
        // `tcp_try_undo_partial()`: no retransmission is in flight, and
        // the head of the queue was never resent (its data is past the
        // cumulative point, or was taken back above).
        self.stamps.retrans_stamp = None;
        false
    }

    /// The RTT sample Linux takes from this ACK (`tcp_ack_update_rtt()`):
    /// the oldest newly acknowledged packet never retransmitted; else,
    /// when the cumulative point moved past `cum_before`, the time since
    /// the echoed timestamp (whole milliseconds, at least one); else the one
    /// `fallback` (RFC 9002 §5.1's, from the largest acknowledged).
    ///
    /// One simplification: Linux takes the cumulatively acknowledged
    /// segments' sample (`first_ackt`) only when none of them was
    /// retransmitted (`FLAG_RETRANS_DATA_ACKED`), and otherwise the
    /// SACKed ones' (`first_sackt`); here the oldest clean packet of
    /// either kind serves.
    pub(super) fn linux_rtt_sample(
        &self,
        now: Instant,
        ack: &Ack,
        cum_before: u64,
        fallback: Option<u64>,
    ) -> Option<u64> {
        if let Some(t) = self.stamps.oldest_clean {
            return Some(now.nanos_since(t));
        }
        if self.cum_chunk > cum_before {
            if let Some(echo) = ack.ts_echo_ms {
                // At least one tick, as `tcp_rtt_tsopt_us()` makes it: an
                // echo from this millisecond is not an RTT of zero.
                let ticks = ms(now).wrapping_sub(echo).max(1);
                return Some(u64::from(ticks) * 1_000_000);
            }
        }
        fallback
    }

    /// TCP's cumulative ACK acknowledges a segment however often it was
    /// sent: a retransmission still in flight whose chunk lies below the
    /// cumulative point `cum` leaves the flight with it (Linux frees the
    /// segment in `tcp_clean_rtx_queue()`, taking it out of `packets_out`
    /// and `retrans_out`), where a QUIC packet stays in flight until its
    /// own ACK. It counts as delivered, as it would when its own ACK came:
    /// Linux counts a needless retransmission as delivered when its D-SACK
    /// comes back (`tcp_dsack_seen()`: "a spurious retransmission is
    /// delivered"), so a segment sent twice is delivered twice; here that
    /// second count comes when the cumulative point passes, not a D-SACK
    /// later. Its later ACK finds it acknowledged and counts nothing.
    #[inline(never)]
    pub(super) fn ack_retransmissions_below(&mut self, cum: u64) {
        // The scan ends at the last retransmission in flight.
        let mut left = self.retrans_out;
        let mut i = 0;
        while left > 0 && i < self.pkts.len() {
            let p = &mut self.pkts[i];
            i += 1;
            if !p.retx || p.status != Status::Outstanding {
                continue;
            }
            left -= 1;
            if p.chunk >= cum {
                continue;
            }
            p.status = Status::Acked;
            let (bytes, chunk, state) = (p.bytes, p.chunk, p.state);
            self.inflight -= bytes as u64;
            self.retrans_out -= 1;
            self.acked_buf.push(AckedPacket {
                bytes: bytes as u64,
                state,
            });
            self.unrepaired.remove(&chunk);
        }
    }

    /// Linux clears `retrans_stamp` once the connection is open with no
    /// retransmission in flight (`tcp_fastretrans_alert()`,
    /// `tcp_try_to_open()`). Only with timestamps on (the caller's test).
    pub(super) fn settle_retrans_stamp(&mut self) {
        if self.retrans_out == 0 && self.cc.recovery_state() <= RecoveryState::Cwr {
            self.stamps.retrans_stamp = None;
        }
    }
}
