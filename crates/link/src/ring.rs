//! The queue of a direction's FIFO as a ring whose size is a power of
//! two, so a position wraps with one mask: `VecDeque`'s wrap is a compare
//! and a conditional subtract at every push, front and pop. Every packet
//! of a drop-tail bottleneck is pushed once and popped once, and the
//! front is read once more per packet. Measured together with the
//! simulator's drop-tail shortcut (`Direction::enqueue_drop_tail`) and
//! two small sender changes: cubic's bench path 329.6 M -> 319.6 M
//! instructions (Callgrind, 2026-12-06).
//! The ring grows (doubling) and never shrinks, as `VecDeque` does, so a
//! steady queue allocates nothing per packet.

/// Slots in the first allocation.
const FIRST_SIZE: usize = 16;

/// A FIFO of `(u64, u64)` items in a power-of-two ring.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ring {
    /// The slots; its length is 0 or a power of two.
    slots: Vec<(u64, u64)>,
    /// The front item's slot.
    head: usize,
    /// Items held.
    len: usize,
}

impl Ring {
    /// Items held.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The slot of the `i`-th item from the front (`i` within the ring's
    /// size, so the mask keeps it in bounds).
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & (self.slots.len().wrapping_sub(1))
    }

    /// Adds `item` at the back.
    #[inline(always)]
    pub(crate) fn push_back(&mut self, item: (u64, u64)) {
        if self.len == self.slots.len() {
            self.grow();
        }
        let i = self.slot(self.len);
        self.slots[i] = item;
        self.len += 1;
    }

    /// Doubles the ring (to `FIRST_SIZE` from nothing): the items before
    /// `head`, which follow those from `head` on, are copied after them.
    /// Called only when the ring is full.
    #[cold]
    fn grow(&mut self) {
        let old = self.slots.len();
        let size = (old * 2).max(FIRST_SIZE);
        self.slots.reserve_exact(size - old);
        // Full: the items lie in [head, old) then [0, head), so after this
        // copy they lie in order in [head, head + old), within `size`.
        self.slots.extend_from_within(..self.head);
        self.slots.resize(size, (0, 0));
    }

    /// The front item, if any.
    #[inline(always)]
    pub(crate) fn front(&self) -> Option<&(u64, u64)> {
        if self.len == 0 {
            None
        } else {
            Some(&self.slots[self.head])
        }
    }

    /// The back item, if any.
    pub(crate) fn back(&self) -> Option<&(u64, u64)> {
        if self.len == 0 {
            None
        } else {
            Some(&self.slots[self.slot(self.len - 1)])
        }
    }

    /// Removes the front item, if any.
    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<(u64, u64)> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots[self.head];
        self.head = self.slot(1);
        self.len -= 1;
        Some(item)
    }

    /// The `i`-th item from the front.
    ///
    /// # Panics
    /// If `i` is not below `len()`.
    pub(crate) fn get(&self, i: usize) -> (u64, u64) {
        assert!(i < self.len, "ring index {i} out of {}", self.len);
        self.slots[self.slot(i)]
    }

    /// How many items from the front satisfy `pred`, for a `pred` that
    /// holds on a prefix of the items (as `slice::partition_point`).
    pub(crate) fn partition_point(&self, pred: impl Fn(&(u64, u64)) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.slots[self.slot(mid)]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The ring answers as a `VecDeque` through growth and wrap-around.
    #[test]
    fn matches_a_vecdeque() {
        let mut ring = Ring::default();
        let mut deque = VecDeque::new();
        let mut x = 0u64;
        for step in 0..2000u64 {
            // Pushes outrun pops, then pops catch up: the ring grows and
            // its head wraps.
            let pushes = if step % 200 < 120 { 2 } else { 1 };
            for _ in 0..pushes {
                x += 1 + step % 3;
                ring.push_back((x, x * 7));
                deque.push_back((x, x * 7));
            }
            if step % 2 == 0 || step % 200 >= 120 {
                assert_eq!(ring.pop_front(), deque.pop_front());
            }
            assert_eq!(ring.len(), deque.len());
            assert_eq!(ring.front(), deque.front());
            assert_eq!(ring.back(), deque.back());
            let t = x.saturating_sub(40);
            let p = ring.partition_point(|&(a, _)| a <= t);
            assert_eq!(p, deque.partition_point(|&(a, _)| a <= t));
            if p > 0 {
                assert_eq!(ring.get(p - 1), deque[p - 1]);
            }
        }
        while let Some(d) = deque.pop_front() {
            assert_eq!(ring.pop_front(), Some(d));
        }
        assert_eq!(ring.pop_front(), None);
        assert_eq!(ring.front(), None);
    }
}
