//! The stock-kernel substitute for a sample's losses (`rs->lost`).
//!
//! v3's rate sample counts the losses marked between the ACKed packet's
//! send and this ACK: its patches snapshot `tp->lost` in every skb. A stock
//! kernel keeps no such snapshot, so `bbrlab_bbr3` (and the simulator's
//! `Bbr3Signals::StockKernel`) reads `tp->lost` at the last two round
//! starts instead and estimates what it was when the ACKed packet left.
//!
//! Why two marks and not one: counting only since the current round
//! started reads zero on the very ACK that starts a round. That ACK is
//! where STARTUP judges its loss rate whenever the loss round and the
//! packet-timed round end together, so with one mark STARTUP could see a
//! round lose a fifth of its packets and read no loss at all, and run on
//! for several more rounds (the kernel control did, on 20 Mbit/s / 40 ms /
//! 1 BDP against CUBIC, in two runs of four: `validate --multiflow`,
//! 2026-12-01). v3's own sample on that ACK carries the whole round's
//! losses, since the ACKed packet left as the round began.
//!
//! The estimate: the ACKed packet left when the connection had delivered
//! `prior_delivered`; `tp->lost` at that moment is read off the straight
//! line through the marks (delivered, lost) taken at the previous and the
//! current round start and at this ACK. Delivery stands in for time, as
//! it does for rounds. A packet sent before the previous mark counts from
//! that mark.

/// `C.delivered` and `C.lost` (bytes in the simulator, packets in the BPF
/// control) as a round started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Mark {
    pub delivered: u64,
    pub lost: u64,
}

/// The marks of the last two round starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RoundLosses {
    prev: Mark,
    cur: Mark,
}

impl RoundLosses {
    /// A round starts now: the current mark becomes the previous one.
    pub fn start_round(&mut self, now: Mark) {
        self.prev = self.cur;
        self.cur = now;
    }

    /// `C.delivered` when the current round started: the round ends with
    /// the ACK of a packet sent after it (`BBR.next_round_delivered`).
    pub fn round_start_delivered(&self) -> u64 {
        self.cur.delivered
    }

    /// Losses since the packet that left at `prior_delivered` was sent,
    /// estimated as the module explains; `now` is this ACK's totals.
    pub fn since_sent(&self, prior_delivered: u64, now: Mark) -> u64 {
        let at_send = if prior_delivered >= self.cur.delivered {
            lost_at(self.cur, now, prior_delivered)
        } else {
            lost_at(self.prev, self.cur, prior_delivered)
        };
        now.lost.saturating_sub(at_send)
    }
}

/// `lost` at `delivered = x` on the line from `a` to `b`, clamped to the
/// segment (a point before `a` reads `a`, after `b` reads `b`). Integer
/// arithmetic, as the BPF control does it, so both round alike.
fn lost_at(a: Mark, b: Mark, x: u64) -> u64 {
    if x <= a.delivered || b.delivered <= a.delivered || b.lost <= a.lost {
        return a.lost;
    }
    if x >= b.delivered {
        return b.lost;
    }
    let (span, part, rise) = (b.delivered - a.delivered, x - a.delivered, b.lost - a.lost);
    // part < span, so the quotient is below `rise` and fits a u64. This
    // runs on every PROBE_BW ACK of a stock-kernel flow, so 64 bits first
    // (a round's bytes keep the product well inside them), 128 beyond.
    let step = match rise.checked_mul(part) {
        Some(p) => p / span,
        None => (u128::from(rise) * u128::from(part) / u128::from(span)) as u64,
    };
    a.lost + step
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(delivered: u64, lost: u64) -> Mark {
        Mark { delivered, lost }
    }

    /// The case that motivated the two marks: on the ACK that starts a
    /// round, the packet it ACKs left as the previous round began, so the
    /// whole round's losses count (one mark read zero here).
    #[test]
    fn a_round_start_ack_carries_the_rounds_losses() {
        let mut r = RoundLosses::default();
        r.start_round(mark(100, 0));
        // The round delivered 90 and lost 18; this ACK starts the next.
        let now = mark(190, 18);
        r.start_round(now);
        assert_eq!(r.since_sent(100, now), 18);
        // A packet sent halfway through the round saw half of them.
        assert_eq!(r.since_sent(145, now), 9);
    }

    /// Mid-round, a packet sent after the current mark counts from the
    /// line between that mark and now; one sent before the previous mark
    /// counts from the previous mark.
    #[test]
    fn marks_bound_the_estimate() {
        let mut r = RoundLosses::default();
        r.start_round(mark(0, 0));
        r.start_round(mark(100, 10));
        let now = mark(150, 20);
        assert_eq!(r.since_sent(100, now), 10);
        assert_eq!(r.since_sent(125, now), 5);
        assert_eq!(r.since_sent(150, now), 0);
        assert_eq!(r.since_sent(50, now), 15);
        r.start_round(mark(150, 20));
        r.start_round(mark(200, 20));
        assert_eq!(r.since_sent(10, mark(210, 21)), 1);
    }

    /// Degenerate marks (no delivery between them, or totals that went
    /// backwards) never divide by zero or underflow.
    #[test]
    fn degenerate_marks_are_safe() {
        let mut r = RoundLosses::default();
        r.start_round(mark(100, 5));
        r.start_round(mark(100, 5));
        assert_eq!(r.since_sent(100, mark(100, 7)), 2);
        assert_eq!(r.since_sent(u64::MAX, mark(100, 7)), 2);
        r.start_round(mark(50, 9));
        assert_eq!(r.since_sent(60, mark(40, 3)), 0);
        // Beyond 64 bits the product takes 128, with the same result.
        assert_eq!(
            lost_at(mark(0, 0), mark(u64::MAX, u64::MAX), u64::MAX - 1),
            u64::MAX - 1
        );
        assert_eq!(
            lost_at(mark(0, 0), mark(1 << 40, 1 << 40), 3 << 37),
            3 << 37
        );
    }
}
