//! The receiver's reassembly buffer: chunks in any order, duplicates, and
//! a hard memory bound.
//!
//! Chunks beyond the flow-control window are refused, so a peer cannot make
//! the receiver buffer more than `window` chunks however it behaves. Only
//! the last chunk of a stream may be short; a peer that sends a short chunk
//! and then data beyond it is refused too.

use crate::wire::CHUNK;
use std::collections::BTreeMap;

/// What happened to an inserted chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// New data, buffered (or ready).
    Accepted,
    /// Already delivered or buffered: ignored.
    Duplicate,
    /// Beyond the window the receiver advertised: refused.
    OutOfWindow,
    /// Inconsistent with the stream (wrong size, data past the end).
    Invalid,
}

/// In-order delivery over a bounded window.
pub struct Reassembly {
    next: u64,
    window: u64,
    pending: BTreeMap<u64, Vec<u8>>,
    /// Index of the short (final) chunk, once seen.
    last: Option<u64>,
    delivered_bytes: u64,
}

impl Reassembly {
    /// A buffer holding at most `window` chunks ahead of the delivery point.
    pub fn new(window: u64) -> Self {
        Reassembly {
            next: 0,
            window: window.max(1),
            pending: BTreeMap::new(),
            last: None,
            delivered_bytes: 0,
        }
    }

    /// Chunk indices below this may be sent (the flow-control limit).
    pub fn limit(&self) -> u64 {
        self.next + self.window
    }

    /// Bytes handed out in order so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    /// Chunks buffered out of order.
    pub fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// Offers chunk `chunk`.
    pub fn insert(&mut self, chunk: u64, payload: &[u8]) -> Insert {
        if chunk < self.next || self.pending.contains_key(&chunk) {
            return Insert::Duplicate;
        }
        if chunk >= self.limit() {
            return Insert::OutOfWindow;
        }
        if payload.is_empty() || payload.len() > CHUNK {
            return Insert::Invalid;
        }
        let short = payload.len() < CHUNK;
        match self.last {
            Some(l) if chunk > l || (short && chunk != l) => return Insert::Invalid,
            _ => {}
        }
        if short {
            // Nothing buffered may lie beyond the end.
            if self.pending.range(chunk + 1..).next().is_some() {
                return Insert::Invalid;
            }
            self.last = Some(chunk);
        }
        self.pending.insert(chunk, payload.to_vec());
        Insert::Accepted
    }

    /// The next chunk in order, if it has arrived.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        let data = self.pending.remove(&self.next)?;
        self.next += 1;
        self.delivered_bytes += data.len() as u64;
        Some(data)
    }

    /// Whether the final (short) chunk has been delivered, or `total`
    /// bytes have, if the stream length is known.
    pub fn complete(&self, total: u64) -> bool {
        self.delivered_bytes == total
    }
}
