//! The sender's ledger of losses: packets declared lost that an ACK may
//! still cover, kept in packet-number order so each ACK costs
//! O(newly acknowledged + holes), not O(window); and the parts of a range
//! an ACK's blocks leave uncovered.

use super::*;

/// The packets declared lost and not yet passed by the cumulative ACK, in
/// ascending packet-number order, with what was recorded at their send.
/// They leave the send window at once (so a loss does not hold the window
/// open for another round trip), but an ACK that covers one after all must
/// still be recognised. Losses are declared nearly in packet-number order
/// and leave mostly from the front, so a sorted deque inserts and removes
/// in O(1) in the common case and answers "is any of them in this range?"
/// by binary search over contiguous memory.
#[derive(Clone, Debug, Default)]
pub(super) struct LostList(pub(super) VecDeque<(u64, SentPkt)>);

impl LostList {
    pub(super) fn insert(&mut self, pn: u64, p: SentPkt) {
        match self.0.back() {
            Some(&(last, _)) if last >= pn => {
                let i = self.0.partition_point(|&(x, _)| x < pn);
                if self.0.get(i).map(|e| e.0) != Some(pn) {
                    self.0.insert(i, (pn, p));
                }
            }
            _ => self.0.push_back((pn, p)),
        }
    }

    pub(super) fn remove(&mut self, pn: u64) -> Option<SentPkt> {
        if self.0.front().map(|e| e.0) == Some(pn) {
            return self.0.pop_front().map(|e| e.1);
        }
        let i = self.0.partition_point(|&(x, _)| x < pn);
        if self.0.get(i).map(|e| e.0) == Some(pn) {
            return self.0.remove(i).map(|e| e.1);
        }
        None
    }

    /// The smallest and largest packet numbers (`(1, 0)` when empty).
    pub(super) fn span(&self) -> (u64, u64) {
        match (self.0.front(), self.0.back()) {
            (Some(f), Some(l)) => (f.0, l.0),
            _ => (1, 0),
        }
    }

    pub(super) fn get(&self, pn: u64) -> Option<&SentPkt> {
        let i = self.0.partition_point(|&(x, _)| x < pn);
        self.0.get(i).filter(|e| e.0 == pn).map(|e| &e.1)
    }

    /// The smallest packet number in `lo..=hi`.
    pub(super) fn first_in(&self, lo: u64, hi: u64) -> Option<u64> {
        let (first, last) = (self.0.front()?.0, self.0.back()?.0);
        if hi < first || lo > last {
            return None;
        }
        let i = self.0.partition_point(|&(x, _)| x < lo);
        self.0.get(i).map(|e| e.0).filter(|&x| x <= hi)
    }

    /// Forgets losses at the front whose data the cumulative ACK has
    /// passed: no ACK can tell anything more about them.
    pub(super) fn prune_below_chunk(&mut self, cum: u64) {
        while self.0.front().is_some_and(|e| e.1.chunk < cum) {
            self.0.pop_front();
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The parts of `lo..=hi` that none of `covered` (disjoint inclusive
/// ranges, in any order) includes, written to `out`; returns how many.
/// `out` has room for one more part than there are covering ranges.
pub(super) fn uncovered(lo: u64, hi: u64, covered: &[(u64, u64)], out: &mut [(u64, u64)]) -> usize {
    let mut n = 0;
    let mut start = lo;
    // Walk the covering ranges that overlap lo..=hi in ascending order.
    loop {
        let next = covered
            .iter()
            .filter(|&&(a, b)| b >= start && a <= hi)
            .min_by_key(|&&(a, _)| a);
        match next {
            Some(&(a, b)) => {
                if a > start && n < out.len() {
                    out[n] = (start, a - 1);
                    n += 1;
                }
                if b >= hi {
                    return n;
                }
                start = b + 1;
            }
            None => {
                if n < out.len() {
                    out[n] = (start, hi);
                    n += 1;
                }
                return n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sender::{SentPkt, Status};

    #[test]
    fn uncovered_parts_of_a_range() {
        let mut out = [(0, 0); ACK_RANGES + 1];
        let n = uncovered(0, 20, &[(15, 17), (3, 5)], &mut out);
        assert_eq!(&out[..n], &[(0, 2), (6, 14), (18, 20)]);
        let n = uncovered(4, 16, &[(15, 17), (3, 5)], &mut out);
        assert_eq!(&out[..n], &[(6, 14)]);
        let n = uncovered(3, 5, &[(0, 9)], &mut out);
        assert_eq!(n, 0);
        let n = uncovered(3, 5, &[], &mut out);
        assert_eq!(&out[..n], &[(3, 5)]);
    }

    #[test]
    fn the_lost_list_keeps_order_and_answers_range_queries() {
        let pkt = |chunk| SentPkt {
            chunk,
            bytes: 1,
            sent: Instant::ZERO,
            state: SentPacketState::default(),
            status: Status::Lost,
            retx: false,
            lost_in: 0,
            ecn: Ecn::NotEct,
        };
        let mut l = LostList::default();
        for pn in [5, 9, 7, 12, 7, 1] {
            l.insert(pn, pkt(pn));
        }
        let pns = |l: &LostList| l.0.iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(pns(&l), [1, 5, 7, 9, 12]);
        assert_eq!(l.first_in(6, 10), Some(7));
        assert_eq!(l.first_in(13, 20), None);
        assert_eq!(l.first_in(2, 4), None);
        assert_eq!(l.remove(9).map(|p| p.chunk), Some(9));
        assert!(l.remove(8).is_none());
        l.prune_below_chunk(6);
        assert_eq!(pns(&l), [7, 12]);
    }
}
