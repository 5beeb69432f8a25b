//! A first-in, first-out queue of small `Copy` items as a ring of a
//! power-of-two size, indexed by masking: the simulator's event lanes and
//! a link direction's queue of departures.
//!
//! `VecDeque` is a ring too, but of any capacity, so each push, pop and
//! look at the front wraps its index by a comparison, and its `pop_front`
//! builds an `Option` around the item. A lane is pushed and popped once
//! per packet, ACK or wake-up; with a mask for the wrap, and a pop for a
//! lane the event queue knows is not empty, the speed guard's
//! `simulator/bbr` ran about 2 % fewer instructions. A drop-tail
//! bottleneck pushes and pops every packet once and reads the front once
//! more: with this ring there instead of a `VecDeque`, together with the
//! simulator's drop-tail shortcut (`Direction::enqueue_drop_tail`) and two
//! small sender changes, cubic's bench path went from 329.6 M to 319.6 M
//! instructions (Callgrind, 2026-12-06; not measured apart). Nothing is
//! moved but on growth (a lane at 10 Gbit/s holds some 80,000 events; a
//! vector read from a moving head had to cut its consumed front away,
//! 1.5 % of C2's instructions in copies). The ring doubles when full, its
//! allocation grown as `VecDeque`'s is (it may move, but no second copy
//! stays alive beside it), and never shrinks, so its size is below twice
//! the queue's largest occupancy, and a run in steady state allocates
//! nothing here.

/// The ring's first size, in items.
const FIRST_SIZE: usize = 16;

/// A FIFO of `T`, pushed at the back and popped at the front.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    /// The ring: every slot holds a value (a copy of some item); the live
    /// ones are the `len` from `head` on, wrapping. Its length is 0 or a
    /// power of two.
    ring: Vec<T>,
    /// Index of the front item in `ring`.
    head: usize,
    /// Number of items queued.
    len: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            ring: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Fifo<T> {
    /// Adds `item` at the back.
    #[inline(always)]
    pub fn push_back(&mut self, item: T) {
        if self.len == self.ring.len() {
            self.grow(item);
        }
        let i = (self.head + self.len) & (self.ring.len() - 1);
        self.ring[i] = item;
        self.len += 1;
    }

    /// Doubles the ring (to `FIRST_SIZE` from nothing) as `VecDeque`
    /// does: the allocation grows (it may move, but a large one without a
    /// second copy alive beside it), the items before `head`, which follow
    /// the ones from `head` on, are copied after them, and the other new
    /// slots are filled with `fill` (each slot needs a value of `T`; any
    /// will do). Called only when the ring is full.
    #[cold]
    fn grow(&mut self, fill: T) {
        let old = self.ring.len();
        let size = (old * 2).max(FIRST_SIZE);
        self.ring.reserve_exact(size - old);
        // Full: the live items are [head, old) then [0, head), so after
        // this copy they lie in order in [head, head + old), within `size`.
        self.ring.extend_from_within(..self.head);
        self.ring.resize(size, fill);
    }

    /// The front item, if any.
    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.ring[self.head])
        }
    }

    /// Removes and returns the front item of a queue the caller knows is
    /// not empty (the event queue keeps each lane's front key). Not an
    /// `Option`: building one around the item cost a copy of it per event.
    ///
    /// Calling it on an empty queue is a caller's bug: debug builds panic;
    /// release builds return a stale item (or panic at the index, for a
    /// queue never filled) and leave the queue unusable. The event queue,
    /// its one caller, takes only from a lane whose front key it holds.
    /// The release-mode test was about 2 instructions per event, once per
    /// packet, ACK and wake-up.
    #[inline(always)]
    pub fn take_front(&mut self) -> T {
        debug_assert!(self.len > 0, "take_front on an empty lane");
        let item = self.ring[self.head];
        self.head = (self.head + 1) & (self.ring.len() - 1);
        self.len -= 1;
        item
    }

    /// The back item, if any.
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            Some(&self.ring[self.slot(self.len - 1)])
        }
    }

    /// Removes the front item, if any.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        Some(self.take_front())
    }

    /// The `i`-th item from the front.
    ///
    /// # Panics
    /// If `i` is not below `len()`.
    pub fn get(&self, i: usize) -> T {
        assert!(i < self.len, "fifo index {i} out of {}", self.len);
        self.ring[self.slot(i)]
    }

    /// How many items from the front satisfy `pred`, for a `pred` that
    /// holds on a prefix of the items (as `slice::partition_point`).
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.ring[self.slot(mid)]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The slot of the `i`-th item from the front (`i` within the ring's
    /// size, so the mask keeps it in bounds).
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & (self.ring.len().wrapping_sub(1))
    }

    /// Number of items queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Any mix of pushes and pops gives what `VecDeque` gives, through
    /// many wraps and growths, and the ring stays below twice the largest
    /// occupancy.
    #[test]
    fn behaves_as_a_deque_and_stays_bounded() {
        let mut f = Fifo::default();
        let mut d = VecDeque::new();
        let mut x: u64 = 99;
        let mut peak = 0;
        for i in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Slightly more pushes than pops early, then balanced, so the
            // queue spends long stretches non-empty.
            if (x >> 33) % 100 < if i < 20_000 { 55 } else { 50 } {
                f.push_back(i);
                d.push_back(i);
            } else if let Some(v) = d.pop_front() {
                assert_eq!(f.take_front(), v);
            }
            assert_eq!(f.front(), d.front());
            assert_eq!(f.len(), d.len());
            peak = peak.max(d.len());
            assert!(
                f.ring.len() <= (2 * peak).max(FIRST_SIZE),
                "a ring of {} for at most {peak} items",
                f.ring.len()
            );
        }
        while let Some(v) = d.pop_front() {
            assert_eq!(f.take_front(), v);
        }
        assert_eq!(f.front(), None);
        assert_eq!(f.len(), 0);
    }

    /// A ring that fills while its front is not at the start of its
    /// storage grows with the wrapped items in order.
    #[test]
    fn grows_in_order_when_wrapped() {
        let mut f = Fifo::default();
        for i in 0..10 {
            f.push_back(i);
        }
        for i in 0..5 {
            assert_eq!(f.take_front(), i);
        }
        // 5 live from index 5; 11 more fill the 16 slots, wrapping; the
        // 17th grows the ring with its head at 5.
        for i in 10..40 {
            f.push_back(i);
        }
        assert_eq!(f.ring.len(), 64);
        for i in 5..40 {
            assert_eq!(f.take_front(), i);
        }
        assert_eq!(f.front(), None);
    }

    /// The ring answers as a `VecDeque` through growth and wrap-around.
    #[test]
    fn matches_a_vecdeque() {
        let mut ring = Fifo::default();
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
