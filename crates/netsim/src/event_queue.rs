//! The simulator's priority queue of pending events.
//!
//! Most events are packet arrivals, and a FIFO link without reordering
//! jitter hands packets on in the order of their arrival times. Those go in
//! plain FIFO lanes, which cost O(1) per event instead of a heap's
//! O(log n) sift of a large event. So do the senders' pacing wake-ups and
//! the receivers' delayed-ACK timers: one flow's come in time order (one
//! BBR flow at 100 Mbit/s ran 13 % fewer instructions once they had
//! lanes, the speed guard's `simulator/bbr`). An event that would break
//! a lane's order (reordering jitter, flows with different extra delays,
//! wake-ups of flows out of step) falls back to the heap, as do the
//! other timers.
//!
//! Every event carries a global insertion sequence number, and `pop`
//! returns the minimum by (time, sequence) across the heap and the lanes,
//! so the order is exactly that of a single heap: runs stay deterministic
//! whichever container an event happened to sit in.
//!
//! The queue keeps each source's earliest key (the heap's top, each lane's
//! front) in one small array, updated where a push or pop can change it,
//! so `pop` takes the least of five integers instead of asking the heap
//! and four deques for their fronts (the speed guard's `simulator/bbr` ran
//! about 3 % fewer instructions this way, and 2 % fewer again with the
//! lanes as `link::fifo`'s rings instead of `VecDeque`s).

use link::fifo::Fifo;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One pending event of payload type `K`.
#[derive(Clone, Copy, Debug)]
pub struct Event<K> {
    /// When it fires, in simulated nanoseconds.
    pub t: u64,
    /// Insertion order; breaks ties in `t`.
    pub seq: u64,
    /// What happens.
    pub kind: K,
}

impl<K> Event<K> {
    /// (time, sequence) as one integer, so that the earliest of several
    /// is one comparison each: the time in the high half orders first and
    /// the sequence breaks ties, as the tuple's order does. The sequence
    /// is shifted up three bits, leaving room for a source's index in
    /// `EventQueue::fronts` (it stays below 2^61: a run pushes far fewer
    /// events than that).
    #[inline(always)]
    fn packed(&self) -> u128 {
        (u128::from(self.t) << 64) | (u128::from(self.seq) << 3)
    }
}

/// The key of a source with no event. No event's key is as large: the low
/// bits of one that holds an event name a source below 7.
const EMPTY: u128 = u128::MAX;

/// A heap slot: the event's packed key, computed once at its push, and
/// its payload. The heap compares keys O(log n) times per push and pop,
/// and a stored key is one 128-bit comparison each instead of two packings
/// and a comparison; the slot is no larger than the event, as the key
/// holds exactly its time and sequence.
struct HeapEntry<K> {
    key: u128,
    kind: K,
}

impl<K> HeapEntry<K> {
    fn new(e: Event<K>) -> Self {
        HeapEntry {
            key: e.packed(),
            kind: e.kind,
        }
    }

    /// The event back: the time from the key's high half, the sequence
    /// from its low half above the three source bits (zero here).
    fn event(self) -> Event<K> {
        Event {
            t: (self.key >> 64) as u64,
            seq: (self.key as u64) >> 3,
            kind: self.kind,
        }
    }
}

impl<K> PartialEq for HeapEntry<K> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<K> Eq for HeapEntry<K> {}
impl<K> PartialOrd for HeapEntry<K> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<K> Ord for HeapEntry<K> {
    /// Reversed, so the max-heap pops the earliest event first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// Number of FIFO lanes; callers pick a lane per event class.
pub const LANES: usize = 4;

/// A min-queue of events by (time, insertion order), with FIFO fast lanes.
pub struct EventQueue<K> {
    heap: BinaryHeap<HeapEntry<K>>,
    lanes: [Fifo<Event<K>>; LANES],
    /// The packed key of each source's earliest event, with the source's
    /// index in its low three bits: the heap's top at 0, lane `i`'s front
    /// at `i + 1`; `EMPTY` for an empty source.
    fronts: [u128; LANES + 1],
    /// The time of each lane's last event, which a lane push must not
    /// precede (0 for an empty lane: any time keeps its order).
    backs: [u64; LANES],
    seq: u64,
}

impl<K> Default for EventQueue<K> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            lanes: std::array::from_fn(|_| Fifo::default()),
            fronts: [EMPTY; LANES + 1],
            backs: [0; LANES],
            seq: 0,
        }
    }
}

impl<K: Copy> EventQueue<K> {
    /// Queues `kind` at `t` in the heap.
    ///
    /// Never inlined: the lanes take nearly every event, and this rarer
    /// path's sift, inlined into the simulator's per-packet code (the
    /// fallback of `push_lane`, the timers), took registers from it.
    #[inline(never)]
    pub fn push(&mut self, t: u64, kind: K) {
        let e = HeapEntry::new(self.next(t, kind));
        // The heap's new top is the earlier of its old top and this one.
        self.fronts[0] = self.fronts[0].min(e.key);
        self.heap.push(e);
    }

    /// Queues `kind` at `t`, in FIFO lane `lane` when that keeps the lane
    /// sorted, otherwise in the heap. Either way it pops at the same point.
    /// Always inlined: called once per packet, ACK and wake-up, and left
    /// out of line under a plain `#[inline]` (the speed guard's
    /// `simulator/bbr` ran 1.5 % fewer instructions this way).
    #[inline(always)]
    pub fn push_lane(&mut self, lane: usize, t: u64, kind: K) {
        if self.backs[lane] <= t {
            let e = self.next(t, kind);
            // Pushed at the back: the front changes only if it was empty.
            if self.fronts[lane + 1] == EMPTY {
                self.fronts[lane + 1] = e.packed() | (lane as u128 + 1);
            }
            self.backs[lane] = t;
            self.lanes[lane].push_back(e);
        } else {
            self.push(t, kind);
        }
    }

    /// Takes the next insertion sequence and queues nothing: for an event
    /// that may be queued later, with [`EventQueue::push_lane_reserved`],
    /// and must then pop exactly where one queued now would have (among
    /// events at the same time, insertion order decides).
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        debug_assert!(self.seq < 1 << 61, "the sequence must leave 3 bits");
        self.seq
    }

    /// Queues `kind` at `t` with `seq` from [`EventQueue::reserve`]: in
    /// lane `lane` when its time is after the lane's last (the older
    /// sequence then cannot break the lane's order, which ties would),
    /// otherwise in the heap. It pops where it would have had it been
    /// queued when `seq` was taken.
    pub fn push_lane_reserved(&mut self, lane: usize, t: u64, seq: u64, kind: K) {
        debug_assert!(seq <= self.seq, "a sequence not yet reserved");
        let e = Event { t, seq, kind };
        if self.backs[lane] < t {
            if self.fronts[lane + 1] == EMPTY {
                self.fronts[lane + 1] = e.packed() | (lane as u128 + 1);
            }
            self.backs[lane] = t;
            self.lanes[lane].push_back(e);
        } else {
            let e = HeapEntry::new(e);
            self.fronts[0] = self.fronts[0].min(e.key);
            self.heap.push(e);
        }
    }

    /// The event `kind` at `t` with the next insertion sequence.
    #[inline(always)]
    fn next(&mut self, t: u64, kind: K) -> Event<K> {
        self.seq += 1;
        debug_assert!(self.seq < 1 << 61, "the sequence must leave 3 bits");
        Event {
            t,
            seq: self.seq,
            kind,
        }
    }

    /// Removes and returns the earliest event by (time, insertion order).
    pub fn pop(&mut self) -> Option<Event<K>> {
        // The earliest front, and which source holds it (the key's low
        // bits): no branch per source.
        let min = self.fronts.iter().copied().fold(EMPTY, u128::min);
        if min == EMPTY {
            return None;
        }
        let best = (min & 7) as usize;
        if best == 0 {
            let e = self.heap.pop().map(HeapEntry::event);
            self.fronts[0] = self.heap.peek().map_or(EMPTY, |e| e.key);
            e
        } else {
            // `best` is 1..=LANES, but the three bits could name 7: masked
            // (a no-op, as LANES is a power of two), the lane's index is
            // known to be in range, and the three array indexings below
            // need no bounds checks (about 3 instructions per event taken
            // from a lane, measured).
            const { assert!(LANES.is_power_of_two()) };
            let lane = (best - 1) & (LANES - 1);
            let q = &mut self.lanes[lane];
            // Not empty: its front key is the least, and not EMPTY.
            let e = q.take_front();
            self.fronts[lane + 1] = match q.front() {
                Some(next) => next.packed() | (lane as u128 + 1),
                None => {
                    self.backs[lane] = 0;
                    EMPTY
                }
            };
            Some(e)
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(Fifo::len).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever mix of heap and lane pushes, pops come out exactly in
    /// (time, insertion) order, as from one heap.
    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        let mut reference = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (x >> 33) % 1000;
            // The heap or any lane, each about as often.
            match ((x >> 20) % (LANES as u64 + 1)) as usize {
                0 => q.push(t, i),
                lane => q.push_lane(lane - 1, t, i),
            }
            reference.push((t, i));
        }
        reference.sort();
        assert_eq!(q.len(), 5000);
        let popped: Vec<Event<u64>> = std::iter::from_fn(|| q.pop()).collect();
        // Each event keeps its insertion sequence (the i-th push is
        // sequence i + 1), whether a lane or the heap's packed key held it.
        assert!(popped.iter().all(|e| e.seq == e.kind + 1));
        let got: Vec<(u64, u64)> = popped.iter().map(|e| (e.t, e.kind)).collect();
        assert_eq!(got, reference);
        assert!(q.is_empty());
    }

    /// Pushes and pops interleaved, so lanes empty and refill and the
    /// kept front keys are put to the test: every pop is the one a single
    /// heap of (time, insertion) gives.
    #[test]
    fn interleaved_pops_match_a_single_heap() {
        use std::cmp::Reverse;
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut x: u64 = 777;
        let mut now = 0u64;
        for i in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 40) % 3 == 0 {
                let got = q.pop().map(|e| (e.t, e.kind));
                let want = reference.pop().map(|Reverse(k)| k);
                assert_eq!(got, want, "pop {i}");
                if let Some((t, _)) = got {
                    now = t;
                }
            } else {
                // Mostly ahead of the last popped time, as a simulation's
                // events are, sometimes at it, now and then behind a lane.
                let t = now + (x >> 33) % 50;
                match ((x >> 20) % (LANES as u64 + 1)) as usize {
                    0 => q.push(t, i),
                    lane => q.push_lane(lane - 1, t, i),
                }
                reference.push(Reverse((t, i)));
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(Reverse(k)) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.t, e.kind)), Some(k));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }

    /// An event queued late with a sequence reserved earlier pops exactly
    /// where it would have had it been queued at its reservation: pushes,
    /// reservations, late pushes (into a lane or, where the lane's last
    /// time does not precede it, the heap) and pops interleaved, against
    /// one heap of (time, sequence).
    #[test]
    fn a_reserved_sequence_pops_where_its_reservation_was() {
        use std::cmp::Reverse;
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut reserved: Vec<(u64, u64, usize, u64)> = Vec::new();
        let (mut x, mut now, mut seq) = (4242u64, 0u64, 0u64);
        let (mut to_lane, mut to_heap) = (0u32, 0u32);
        for i in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = now + (x >> 33) % 50;
            let lane = ((x >> 20) % LANES as u64) as usize;
            match (x >> 40) % 4 {
                0 => {
                    let got = q.pop().map(|e| (e.t, e.seq, e.kind));
                    let want = reference.pop().map(|Reverse(k)| k);
                    assert_eq!(got, want, "pop {i}");
                    if let Some((t, _, _)) = got {
                        now = t;
                    }
                }
                1 => {
                    seq += 1;
                    assert_eq!(q.reserve(), seq);
                    reserved.push((t, seq, lane, i));
                }
                2 if !reserved.is_empty() => {
                    let k = ((x >> 10) as usize) % reserved.len();
                    let (t, s, lane, kind) = reserved.swap_remove(k);
                    if q.backs[lane] < t {
                        to_lane += 1;
                    } else {
                        to_heap += 1;
                    }
                    q.push_lane_reserved(lane, t, s, kind);
                    reference.push(Reverse((t, s, kind)));
                }
                _ => {
                    seq += 1;
                    q.push_lane(lane, t, i);
                    reference.push(Reverse((t, seq, i)));
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        // Both ways of queuing a reserved event were taken.
        assert!(
            to_lane > 100 && to_heap > 100,
            "{to_lane} reserved events went to a lane, {to_heap} to the heap"
        );
        while let Some(Reverse(k)) = reference.pop() {
            assert_eq!(q.pop().map(|e| (e.t, e.seq, e.kind)), Some(k));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }
}
