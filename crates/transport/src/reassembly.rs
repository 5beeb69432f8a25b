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
    /// Buffers of delivered out-of-order chunks, reused so a lossy
    /// stretch does not cost an allocation per chunk.
    spare: Vec<Vec<u8>>,
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
            spare: Vec::new(),
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

    /// Whether chunk `chunk` may be taken: `Ok(short)` if so, else the
    /// reason it is refused or ignored.
    fn admit(&self, chunk: u64, payload: &[u8]) -> Result<bool, Insert> {
        if chunk < self.next || self.pending.contains_key(&chunk) {
            return Err(Insert::Duplicate);
        }
        if chunk >= self.limit() {
            return Err(Insert::OutOfWindow);
        }
        if payload.is_empty() || payload.len() > CHUNK {
            return Err(Insert::Invalid);
        }
        let short = payload.len() < CHUNK;
        match self.last {
            Some(l) if chunk > l || (short && chunk != l) => return Err(Insert::Invalid),
            _ => {}
        }
        // Nothing buffered may lie beyond a short (final) chunk.
        if short && self.pending.range(chunk + 1..).next().is_some() {
            return Err(Insert::Invalid);
        }
        Ok(short)
    }

    /// Offers chunk `chunk`.
    pub fn insert(&mut self, chunk: u64, payload: &[u8]) -> Insert {
        match self.admit(chunk, payload) {
            Err(e) => e,
            Ok(short) => {
                if short {
                    self.last = Some(chunk);
                }
                let mut buf = self.spare.pop().unwrap_or_default();
                buf.clear();
                buf.extend_from_slice(payload);
                self.pending.insert(chunk, buf);
                Insert::Accepted
            }
        }
    }

    /// Offers chunk `chunk` and hands everything now in order to
    /// `deliver(stream offset, bytes)`, in order: the chunk itself without
    /// a copy when it is the next one (the common case), then any buffered
    /// chunks it unblocks. The same rules as [`Reassembly::insert`] decide
    /// what is taken. Stops at, and returns, the first error `deliver`
    /// gives; the chunk that caused it counts as delivered.
    pub fn offer<E>(
        &mut self,
        chunk: u64,
        payload: &[u8],
        mut deliver: impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<Insert, E> {
        if chunk != self.next {
            return Ok(self.insert(chunk, payload));
        }
        match self.admit(chunk, payload) {
            Err(e) => return Ok(e),
            Ok(true) => self.last = Some(chunk),
            Ok(false) => {}
        }
        let off = self.delivered_bytes;
        self.next += 1;
        self.delivered_bytes += payload.len() as u64;
        deliver(off, payload)?;
        while let Some(buf) = self.pending.remove(&self.next) {
            let off = self.delivered_bytes;
            self.next += 1;
            self.delivered_bytes += buf.len() as u64;
            let r = deliver(off, &buf);
            if self.spare.len() < 4096 {
                self.spare.push(buf);
            }
            r?;
        }
        Ok(Insert::Accepted)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `offer` delivers exactly what `insert` + `pop` would, in the same
    /// order with the same offsets, and gives the same verdicts, for
    /// chunks arriving shuffled, duplicated and beyond the window.
    #[test]
    fn offer_delivers_what_insert_and_pop_deliver() {
        use rand::{seq::SliceRandom, Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..200 {
            let n = rng.gen_range(1..60u64);
            let last_len = rng.gen_range(1..=CHUNK);
            let chunk_of = |i: u64| -> Vec<u8> {
                let len = if i == n - 1 { last_len } else { CHUNK };
                (0..len).map(|j| (i as usize * 31 + j) as u8).collect()
            };
            let mut order: Vec<u64> = (0..n).chain((0..n).filter(|_| rng.gen_bool(0.2))).collect();
            order.shuffle(&mut rng);
            let window = rng.gen_range(1..80);
            let (mut a, mut b) = (Reassembly::new(window), Reassembly::new(window));
            let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
            for &i in &order {
                let data = chunk_of(i);
                let va = a.insert(i, &data);
                while let Some(d) = a.pop() {
                    got_a.push((a.delivered_bytes() - d.len() as u64, d));
                }
                let vb = b
                    .offer(i, &data, |off, d| {
                        got_b.push((off, d.to_vec()));
                        Ok::<(), ()>(())
                    })
                    .unwrap();
                assert_eq!(va, vb, "chunk {i}");
                assert_eq!(a.limit(), b.limit());
            }
            assert_eq!(got_a, got_b);
            assert_eq!(a.delivered_bytes(), b.delivered_bytes());
        }
    }
}
