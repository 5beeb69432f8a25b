//! A TCP receiver's timestamps (RFC 7323) as Linux keeps them: which
//! timestamp its ACKs echo (`ts_recent`) and which segments it discards as
//! too old (PAWS). The sender's side is `sender/timestamps.rs`.
//!
//! Timestamps are 32-bit counts of milliseconds, as on the wire, compared
//! as Linux compares them: by the sign of their 32-bit difference.

/// What a receiver echoes, and what PAWS discarded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoState {
    /// The in-order point the last ACK carried (Linux `rcv_wup`): only a
    /// segment reaching it may set the echo.
    wup_chunk: u64,
    /// The timestamp the ACKs echo (Linux `ts_recent`).
    recent: Option<u32>,
    /// Segments that arrived with a timestamp.
    pub segments: u64,
    /// Of those, the ones PAWS discarded (Linux `PAWSEstab`).
    pub paws_discards: u64,
}

/// Whether timestamp `a` is after `b` (Linux `after()` on 32 bits).
pub fn ts_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl EchoState {
    /// The timestamp the next ACK echoes.
    pub fn echo_ms(&self) -> Option<u32> {
        self.recent
    }

    /// An ACK leaves carrying the in-order point `next_chunk`.
    #[inline]
    pub(crate) fn acknowledged(&mut self, next_chunk: u64) {
        self.wup_chunk = next_chunk;
    }

    /// PAWS (RFC 7323 §5.3, Linux `tcp_paws_discard()` with its window of
    /// one tick): a data segment whose timestamp is more than one tick
    /// older than the echoed one is discarded. Linux spares only pure ACKs
    /// (`tcp_disordered_ack()`), and an echo 24 days stale, which no
    /// simulated run reaches.
    pub(crate) fn rejects(&self, tsval_ms: u32) -> bool {
        self.recent
            .is_some_and(|r| (r.wrapping_sub(tsval_ms) as i32) > 1)
    }

    /// A segment carrying `chunk` and timestamp `tsval_ms` was accepted.
    /// It sets the echo if it begins at or below the point last
    /// acknowledged and ends at or beyond it (a segment wholly below is
    /// discarded by `tcp_sequence()` first), and is no older
    /// (`tcp_replace_ts_recent()`).
    pub(crate) fn accepted(&mut self, chunk: u64, tsval_ms: u32) {
        if chunk <= self.wup_chunk
            && chunk + 1 >= self.wup_chunk
            && self.recent.is_none_or(|r| !ts_after(r, tsval_ms))
        {
            self.recent = Some(tsval_ms);
        }
    }
}
