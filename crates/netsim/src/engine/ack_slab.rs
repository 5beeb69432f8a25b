//! Where the ACKs in transit are kept while events and link queues carry
//! only their index.
//!
//! An [`Ack`] is about 100 bytes (its four SACK-like ranges), and every
//! event and every packet held in a link carried one inline: the event
//! type is as large as its largest variant, so each data packet's events
//! were copied at the ACK's size too. With the ACK here, an event is
//! about half the size, and a 10 s, 100 Mbit/s BBR run executes fewer
//! instructions (the speed guard's figures). Slots are reused, so the
//! store grows to the most ACKs ever in transit at once and then stops
//! allocating.

use sender::Ack;

/// ACKs in transit, by slot.
#[derive(Default)]
pub(super) struct AckSlab {
    slots: Vec<Ack>,
    free: Vec<u32>,
}

impl AckSlab {
    /// Stores `ack` and returns its slot.
    pub(super) fn put(&mut self, ack: Ack) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = ack;
                i
            }
            None => {
                // Fewer than 2^32 ACKs can be in transit at once: each
                // takes a packet's place in some link's queue or wire.
                let i = self.slots.len() as u32;
                self.slots.push(ack);
                i
            }
        }
    }

    /// Frees slot `i` and lends the ACK in it, which stays there until
    /// the next [`AckSlab::put`]: the caller reads it in place instead of
    /// copying its ~100 bytes out (13 instructions an ACK).
    pub(super) fn take(&mut self, i: u32) -> &Ack {
        self.free.push(i);
        &self.slots[i as usize]
    }

    /// Frees slot `i` without reading it (the ACK was dropped).
    pub(super) fn discard(&mut self, i: u32) {
        self.free.push(i);
    }

    /// ACKs stored and not yet taken or discarded.
    #[cfg(test)]
    pub(super) fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_once_freed() {
        let mut s = AckSlab::default();
        let a = s.put(Ack {
            cum_chunk: 7,
            ..Ack::default()
        });
        let b = s.put(Ack::default());
        assert_eq!(s.live(), 2);
        assert_eq!(s.take(a).cum_chunk, 7);
        s.discard(b);
        assert_eq!(s.live(), 0);
        let c = s.put(Ack::default());
        assert!(c == a || c == b, "a freed slot is reused");
        assert_eq!(s.slots.len(), 2);
    }
}
