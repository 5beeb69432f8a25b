//! The short tail of an application write: a chunk of the application
//! that is not a whole number of segments ends in a short segment, which
//! leaves once the stack lets it, not when the next write tops it up.
//!
//! A QUIC stack sends whatever the application has when it may send
//! (RFC 9000 §13: a packet carries what is ready; no stack holds stream
//! data back for want of a full datagram). Linux TCP applies Nagle's
//! algorithm with Minshall's change (`tcp_nagle_check()`,
//! `tcp_minshall_check()`): a short segment is held only while an earlier
//! short segment is still unacknowledged, so a write's tail leaves at
//! once unless the previous write's tail is still out, and then when its
//! ACK arrives.
//!
//! Only [`AppState::Chunks`] writes have a tail: a constant-rate
//! application is taken to stream, its data leaving in whole segments as
//! they fill, and a finite flow's last segment is already cut short.

use super::*;

impl Sender {
    /// The size of the next new-data segment: a whole one, or the tail
    /// of the application's last write when it has less than a segment
    /// ready and the stack lets a short segment go now.
    ///
    /// Asked once per packet sent: a bulk application costs one test of
    /// its kind here (the bench path ran 1.8 % more instructions when
    /// [`AppState::tail`] was not inlined and `note_new_segment` sized
    /// every segment).
    #[inline(always)]
    pub(super) fn next_new_bytes(&self) -> u32 {
        self.short_or(self.chunk_bytes(self.next_chunk))
    }

    /// [`Sender::next_new_bytes`] given the whole segment's size, `whole`.
    #[inline(always)]
    pub(super) fn short_or(&self, whole: u32) -> u32 {
        match self.app.tail(0, u64::from(whole)) {
            // Below `whole`, a u32: the cast is exact.
            Some(tail) if self.may_send_short() => tail as u32,
            _ => whole,
        }
    }

    /// Whether a short segment may leave now: always for QUIC; for TCP,
    /// unless the last short segment sent is still unacknowledged
    /// (Minshall's rule: `snd_sml` beyond `snd_una`).
    pub(super) fn may_send_short(&self) -> bool {
        match self.timeout {
            Timeout::Pto { .. } => true,
            Timeout::Rto => self.short_end <= self.cum_chunk,
        }
    }

    /// A new-data segment of `bytes` carrying `chunk` was sent: a short
    /// one (a write's tail) moves Minshall's mark past it.
    #[inline(always)]
    pub(super) fn note_new_segment(&mut self, chunk: u64, bytes: u32) {
        if matches!(self.app, AppState::Chunks { .. }) && bytes < self.chunk_bytes(chunk) {
            self.short_end = chunk + 1;
        }
    }
}
