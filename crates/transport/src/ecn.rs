//! ECN for the transport, as QUIC does it (RFC 9000 §13.4, RFC 9002 §7.1).
//!
//! - The sender marks data packets ECT(0) (`quinn-udp`'s `Transmit::ecn`
//!   sets the IP TOS / IPv6 traffic class per `sendmsg`).
//! - The receiver reads each datagram's codepoint (`RecvMeta::ecn`, from
//!   the `IP_TOS` / `IPV6_TCLASS` control message `quinn-udp` asks for with
//!   `IP_RECVTOS` / `IPV6_RECVTCLASS`), counts ECT(0), ECT(1) and CE over
//!   the data packets it processes ([`ReceiverCounts`]) and puts the counts
//!   in every ACK once one packet arrived with a codepoint
//!   ([`crate::wire::Frame::Ack`]'s `ecn`).
//! - The sender validates the counts against what the ACK newly
//!   acknowledges ([`EcnSender`], RFC 9000 §13.4.2.1) and gives the
//!   controller the increase of the CE count (`Controller::on_ecn_ce`),
//!   capped at the ECT packets newly acknowledged. If validation fails it
//!   stops marking for the rest of the connection and says why.

use crate::wire::EcnCounts;
use quinn_udp::EcnCodepoint;
use std::collections::BTreeMap;

/// The receiver's cumulative counts, one per codepoint, over the data
/// packets it processed (passed to its ACK logic; refused datagrams are
/// not counted, duplicates of a chunk in a new packet are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverCounts {
    /// Data packets processed.
    pub packets: u64,
    /// Of those, arrived Not-ECT.
    pub not_ect: u64,
    /// Arrived ECT(0), ECT(1) and CE: what the ACKs carry.
    pub counts: EcnCounts,
}

impl ReceiverCounts {
    /// Counts one data packet that arrived with `ecn` (`None`: Not-ECT, or
    /// a socket that does not report the codepoint).
    pub fn on_packet(&mut self, ecn: Option<EcnCodepoint>) {
        self.packets += 1;
        match ecn {
            None => self.not_ect += 1,
            Some(EcnCodepoint::Ect0) => self.counts.ect0 += 1,
            Some(EcnCodepoint::Ect1) => self.counts.ect1 += 1,
            Some(EcnCodepoint::Ce) => self.counts.ce += 1,
        }
    }

    /// What an ACK carries: the counts once any packet arrived with a
    /// codepoint, `None` (a plain ACK) before, so a sender that never
    /// marks, such as one older than ECN, never sees the ECN ACK type.
    pub fn for_ack(&self) -> Option<EcnCounts> {
        (self.counts != EcnCounts::default()).then_some(self.counts)
    }
}

/// Where the sender's ECN stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnState {
    /// Not asked for: packets go out Not-ECT, ACK counts are ignored.
    Off,
    /// Marking ECT(0); every ACK's counts so far passed validation.
    Capable,
    /// Validation failed (the reason): marking stopped for the rest of
    /// the connection and counts are ignored (RFC 9000 §13.4.2.2).
    Failed(&'static str),
}

impl EcnState {
    /// `off`, `capable` or `failed: REASON`, as the summary shows it.
    pub fn describe(&self) -> String {
        match self {
            EcnState::Off => "off".into(),
            EcnState::Capable => "capable".into(),
            EcnState::Failed(why) => format!("failed: {why}"),
        }
    }
}

/// Most unacknowledged gaps below the largest acknowledged packet that
/// are remembered; older ones are forgotten (their packets, if ever
/// acknowledged, then count as not newly acknowledged, which only makes
/// validation more lenient and the CE cap tighter).
const MAX_GAPS: usize = 4096;

/// Which packet numbers an ACK newly acknowledges, from its ranges alone:
/// the largest acknowledged and the gaps below it not yet covered by any
/// ACK. Each ACK costs O(ranges × log gaps), whatever the ranges' width.
#[derive(Debug, Default)]
struct NewlyAcked {
    largest: Option<u64>,
    /// Inclusive gaps, keyed by their first packet number.
    gaps: BTreeMap<u64, u64>,
}

impl NewlyAcked {
    /// Marks `ranges` (highest first, inclusive) acknowledged, packets
    /// from `sent` on (not sent yet) excluded. Returns how many packets
    /// were newly acknowledged below `ect_below` (those sent ECT) and
    /// whether the ACK raised the largest acknowledged.
    fn on_ack(&mut self, ranges: &[(u64, u64)], sent: u64, ect_below: u64) -> (u64, bool) {
        let Some(&(_, top)) = ranges.first() else {
            return (0, false);
        };
        if sent == 0 {
            return (0, false);
        }
        let top = top.min(sent - 1);
        let count = |lo: u64, hi: u64| -> u64 {
            // |[lo, hi] ∩ [0, ect_below)|
            if lo >= ect_below {
                0
            } else {
                hi.min(ect_below - 1) - lo + 1
            }
        };
        let mut newly = 0u64;
        // Gaps already known, filled late (reordering, lost ACKs).
        if let Some(prev) = self.largest {
            for &(lo, hi) in ranges {
                let hi = hi.min(prev);
                if lo > hi {
                    continue;
                }
                // Gaps meeting [lo, hi], from the highest down (they are
                // disjoint, so each next one starts below the last).
                let mut upper = hi;
                while let Some((&glo, &ghi)) = self.gaps.range(..=upper).next_back() {
                    if ghi < lo {
                        break;
                    }
                    self.gaps.remove(&glo);
                    let (a, b) = (glo.max(lo), ghi.min(hi));
                    newly += count(a, b);
                    if glo < a {
                        self.gaps.insert(glo, a - 1);
                    }
                    if b < ghi {
                        self.gaps.insert(b + 1, ghi);
                    }
                    if glo <= lo {
                        break;
                    }
                    upper = glo - 1;
                }
            }
        }
        // New territory above the previous largest.
        let from = self.largest.map_or(0, |l| l + 1);
        let raised = top >= from;
        if raised {
            let mut cursor = from;
            for &(lo, hi) in ranges.iter().rev() {
                let (lo, hi) = (lo.max(cursor), hi.min(top));
                if lo > hi {
                    continue;
                }
                if lo > cursor {
                    self.gaps.insert(cursor, lo - 1);
                }
                newly += count(lo, hi);
                cursor = hi + 1;
            }
            self.largest = Some(top);
            while self.gaps.len() > MAX_GAPS {
                self.gaps.pop_first();
            }
        }
        (newly, raised)
    }
}

/// The sender's side: what to mark, and the validated CE increase of each
/// ACK (RFC 9000 §13.4.2.1).
#[derive(Debug)]
pub struct EcnSender {
    state: EcnState,
    /// Packets numbered below this were sent ECT(0) (all of them while
    /// marking; fixed when marking stops).
    ect_below: u64,
    /// Packets sent (the next packet number).
    sent: u64,
    /// ECT(0) packets sent.
    ect0_sent: u64,
    acked: NewlyAcked,
    /// ECT packets newly acknowledged by ACKs not yet validated (those
    /// that did not raise the largest acknowledged, RFC 9000 §13.4.2.1:
    /// their counts may be stale, so they wait for the next that does).
    pending_ect: u64,
    /// The largest counts validated so far.
    seen: EcnCounts,
    /// CE marks given to the controller, and ECT packets acknowledged.
    ce_packets: u64,
    ect_acked: u64,
}

impl EcnSender {
    /// A sender that marks when `enabled`.
    pub fn new(enabled: bool) -> Self {
        EcnSender {
            state: if enabled {
                EcnState::Capable
            } else {
                EcnState::Off
            },
            ect_below: if enabled { u64::MAX } else { 0 },
            sent: 0,
            ect0_sent: 0,
            acked: NewlyAcked::default(),
            pending_ect: 0,
            seen: EcnCounts::default(),
            ce_packets: 0,
            ect_acked: 0,
        }
    }

    /// The codepoint for the next data packet: ECT(0) while capable.
    pub fn codepoint(&self) -> Option<EcnCodepoint> {
        (self.state == EcnState::Capable).then_some(EcnCodepoint::Ect0)
    }

    /// A data packet numbered `pn` left marked as [`EcnSender::codepoint`]
    /// said. Packet numbers start at 0 and rise by one.
    pub fn on_sent(&mut self, pn: u64) {
        self.sent = self.sent.max(pn + 1);
        if self.state == EcnState::Capable {
            self.ect0_sent += 1;
        }
    }

    /// Where ECN stands.
    pub fn state(&self) -> EcnState {
        self.state
    }

    /// CE marks given to the controller so far (the connection's
    /// cumulative CE count, validated): what a `delivered_ce` column shows.
    pub fn ce_packets(&self) -> u64 {
        self.ce_packets
    }

    /// ECT packets acknowledged with validated counts: the denominator of
    /// the CE fraction.
    pub fn ect_acked(&self) -> u64 {
        self.ect_acked
    }

    fn fail(&mut self, why: &'static str) {
        self.state = EcnState::Failed(why);
        self.ect_below = self.ect_below.min(self.sent);
    }

    /// An ACK with `ranges` (highest first) and `counts` arrived, before
    /// the sender processes it. Returns the CE marks it newly reports, for
    /// `Controller::on_ecn_ce`: the increase of the CE count over the
    /// largest seen, at most the ECT packets it newly acknowledges (a
    /// larger increase is not believed). 0 when ECN is off or failed, or
    /// when validation fails on this ACK (which the state then says).
    pub fn on_ack(&mut self, ranges: &[(u64, u64)], counts: Option<EcnCounts>) -> u64 {
        if self.state == EcnState::Off {
            return 0;
        }
        let (newly_ect, raised) = self.acked.on_ack(ranges, self.sent, self.ect_below);
        if !matches!(self.state, EcnState::Capable) {
            return 0;
        }
        self.pending_ect += newly_ect;
        if !raised {
            return 0;
        }
        let newly_ect = std::mem::take(&mut self.pending_ect);
        let Some(c) = counts else {
            if newly_ect > 0 {
                self.fail("ACKs of ECT(0) packets carry no ECN counts (the receiver does not report ECN, or the path clears every codepoint)");
            }
            return 0;
        };
        if c.ect0 < self.seen.ect0 || c.ect1 < self.seen.ect1 || c.ce < self.seen.ce {
            self.fail("an ECN count decreased");
            return 0;
        }
        if c.ect1 > 0 {
            self.fail("ECT(1) counted, but only ECT(0) was sent (the path rewrites the codepoint)");
            return 0;
        }
        if c.ect0.saturating_add(c.ce) > self.ect0_sent {
            self.fail("more ECT(0) and CE counted than ECT(0) packets sent");
            return 0;
        }
        // RFC 9000's check per ACK (the increase of ECT(0) + CE at least
        // the ECT(0) packets newly acknowledged), summed over the
        // connection: a receiver whose counts run ahead of its ranges
        // (counts taken after the ranges) still passes, and a path that
        // clears marks still fails as soon as the counts fall behind.
        let d_ce = c.ce - self.seen.ce;
        if c.ect0 + c.ce < self.ect_acked + newly_ect {
            self.fail("fewer ECT(0) and CE marks than ECT(0) packets acknowledged (the path clears the codepoint)");
            return 0;
        }
        self.seen = c;
        self.ect_acked += newly_ect;
        let ce = d_ce.min(newly_ect);
        self.ce_packets += ce;
        ce
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ect0: u64, ce: u64) -> Option<EcnCounts> {
        Some(EcnCounts { ect0, ect1: 0, ce })
    }

    fn sent(n: u64) -> EcnSender {
        let mut s = EcnSender::new(true);
        for pn in 0..n {
            assert_eq!(s.codepoint(), Some(EcnCodepoint::Ect0));
            s.on_sent(pn);
        }
        s
    }

    #[test]
    fn ce_increase_reaches_the_controller_and_never_decreases() {
        let mut s = sent(10);
        assert_eq!(s.on_ack(&[(0, 3)], counts(3, 1)), 1);
        assert_eq!(s.on_ack(&[(0, 5)], counts(4, 2)), 1);
        // Same counts again: nothing new.
        assert_eq!(s.on_ack(&[(0, 6)], counts(5, 2)), 0);
        assert_eq!(s.ce_packets(), 2);
        assert_eq!(s.ect_acked(), 7);
        assert_eq!(s.state(), EcnState::Capable);
    }

    #[test]
    fn an_increase_beyond_the_newly_acknowledged_is_capped() {
        let mut s = sent(10);
        // Two packets newly acknowledged, five CE claimed.
        assert_eq!(s.on_ack(&[(0, 1)], counts(0, 5)), 2);
        assert_eq!(s.ce_packets(), 2);
    }

    #[test]
    fn gaps_filled_later_count_once() {
        let mut s = sent(10);
        // 0..=1 and 4..=5 arrive; 2, 3 are a gap.
        assert_eq!(s.on_ack(&[(4, 5), (0, 1)], counts(3, 1)), 1);
        // The gap is filled (reordering) in an ACK that also raises the
        // largest: 2, 3 and 6 are new; 0..=1, 4..=5 are not.
        assert_eq!(s.on_ack(&[(0, 6)], counts(4, 4)), 3);
        assert_eq!(s.ect_acked(), 7);
        // A stale ACK that does not raise the largest is not validated.
        assert_eq!(s.on_ack(&[(0, 6)], None), 0);
        assert_eq!(s.state(), EcnState::Capable);
    }

    #[test]
    fn counts_ahead_of_the_ranges_pass_and_counts_behind_fail() {
        let mut s = sent(10);
        // The counts include packets 4 and 5, not yet in the ranges.
        assert_eq!(s.on_ack(&[(0, 3)], counts(6, 0)), 0);
        // Four more acknowledged, two more counted: 8 counted ≥ 8 acked.
        assert_eq!(s.on_ack(&[(0, 7)], counts(7, 1)), 1);
        assert_eq!(s.state(), EcnState::Capable);
        // 10 acknowledged, 9 counted: a mark went missing.
        s.on_ack(&[(0, 9)], counts(8, 1));
        assert!(matches!(s.state(), EcnState::Failed(_)));
    }

    #[test]
    fn one_range_fills_several_gaps_and_a_part_of_one() {
        let mut a = NewlyAcked::default();
        // Acknowledged: 0, 3, 6, 9..=20. Gaps: 1-2, 4-5, 7-8.
        assert_eq!(
            a.on_ack(&[(9, 20), (6, 6), (3, 3), (0, 0)], 30, u64::MAX),
            (15, true)
        );
        // 2..=7 fills 2, 4, 5, 7 (3 and 6 were acknowledged).
        assert_eq!(a.on_ack(&[(9, 20), (2, 7)], 30, u64::MAX), (4, false));
        assert_eq!(
            a.gaps.iter().map(|(&l, &h)| (l, h)).collect::<Vec<_>>(),
            vec![(1, 1), (8, 8)]
        );
        // Everything up to 21: 1, 8 and 21 are new.
        assert_eq!(a.on_ack(&[(0, 21)], 30, u64::MAX), (3, true));
        assert!(a.gaps.is_empty());
    }

    #[test]
    fn missing_counts_fail_validation_and_stop_marking() {
        let mut s = sent(4);
        assert_eq!(s.on_ack(&[(0, 1)], None), 0);
        assert!(matches!(s.state(), EcnState::Failed(_)), "{:?}", s.state());
        assert_eq!(s.codepoint(), None);
        // Counts are ignored from then on.
        assert_eq!(s.on_ack(&[(0, 3)], counts(0, 4)), 0);
        assert_eq!(s.ce_packets(), 0);
        assert!(s.state().describe().starts_with("failed: "));
    }

    #[test]
    fn bleached_packets_fail_validation() {
        let mut s = sent(4);
        // Counts present but short of the packets acknowledged.
        assert_eq!(s.on_ack(&[(0, 3)], counts(1, 0)), 0);
        assert!(matches!(s.state(), EcnState::Failed(_)));
    }

    #[test]
    fn decreasing_or_ect1_or_impossible_counts_fail() {
        let mut s = sent(6);
        s.on_ack(&[(0, 2)], counts(3, 0));
        s.on_ack(&[(0, 3)], counts(2, 2));
        assert_eq!(s.state(), EcnState::Failed("an ECN count decreased"));
        let mut s = sent(6);
        s.on_ack(
            &[(0, 2)],
            Some(EcnCounts {
                ect0: 3,
                ect1: 1,
                ce: 0,
            }),
        );
        assert!(matches!(s.state(), EcnState::Failed(_)));
        let mut s = sent(6);
        s.on_ack(&[(0, 2)], counts(7, 0));
        assert!(matches!(s.state(), EcnState::Failed(_)));
    }

    #[test]
    fn off_ignores_everything_and_never_marks() {
        let mut s = EcnSender::new(false);
        s.on_sent(0);
        assert_eq!(s.codepoint(), None);
        assert_eq!(s.on_ack(&[(0, 0)], counts(0, 1)), 0);
        assert_eq!(s.state(), EcnState::Off);
    }

    #[test]
    fn packets_sent_after_a_failure_are_not_expected_to_be_marked() {
        let mut s = sent(2);
        s.on_ack(&[(0, 0)], None);
        assert!(matches!(s.state(), EcnState::Failed(_)));
        s.on_sent(2);
        s.on_sent(3);
        // Only 0 and 1 were ECT; the gap bookkeeping still runs.
        assert_eq!(s.acked.on_ack(&[(0, 3)], 4, s.ect_below), (1, true));
    }

    #[test]
    fn receiver_counts_each_codepoint_and_acks_plainly_until_one_is_seen() {
        let mut r = ReceiverCounts::default();
        r.on_packet(None);
        assert_eq!(r.for_ack(), None);
        r.on_packet(Some(EcnCodepoint::Ect0));
        r.on_packet(Some(EcnCodepoint::Ce));
        r.on_packet(Some(EcnCodepoint::Ect1));
        assert_eq!(
            r.for_ack(),
            Some(EcnCounts {
                ect0: 1,
                ect1: 1,
                ce: 1
            })
        );
        assert_eq!((r.packets, r.not_ect), (4, 1));
    }
}
