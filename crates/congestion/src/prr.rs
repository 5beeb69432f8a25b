//! Proportional Rate Reduction (RFC 6937): how a loss-based window comes
//! down during a recovery episode.
//!
//! Cutting cwnd to ssthresh the moment a loss is found stops the sender
//! for half a round trip (everything in flight is above the new window)
//! and then releases a burst. PRR instead spreads the reduction over the
//! round: while more than ssthresh is in flight it sends `ssthresh /
//! RecoverFS` bytes per byte delivered, so one round later exactly
//! ssthresh is in flight; once inflight falls below ssthresh (more losses
//! than the cut) it rebuilds towards ssthresh no faster than slow start
//! (the reduction bound PRR-SSRB). Linux runs it for every loss-based
//! algorithm in `TCP_CA_Recovery` and `TCP_CA_CWR` (`tcp_cwnd_reduction()`)
//! and sets cwnd to ssthresh when the episode ends
//! (`tcp_end_cwnd_reduction()`). That matters for fidelity: a sender that
//! keeps sending through recovery loses less goodput to random loss than
//! one that stalls, and the kernel's CUBIC is the one we validate against.

/// PRR's counters for one reduction, in bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prr {
    /// RecoverFS: the window when the reduction began (Linux uses
    /// `prior_cwnd`).
    recover_fs: u64,
    /// Bytes delivered (acknowledged or selectively acknowledged) since.
    delivered: u64,
    /// Bytes sent since.
    out: u64,
}

impl Prr {
    /// A reduction begins from a window of `cwnd` bytes.
    pub fn start(cwnd: u64) -> Self {
        Prr {
            recover_fs: cwnd.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// The sender sent `bytes` during the reduction.
    pub fn on_sent(&mut self, bytes: u64) {
        self.out = self.out.saturating_add(bytes);
    }

    /// An ACK delivered `newly_delivered` bytes and left `in_flight` bytes
    /// in flight; `new_losses` says whether it also revealed losses.
    /// Returns the new cwnd: what is in flight plus what PRR lets the
    /// sender send now (RFC 6937 §3.1, as `tcp_cwnd_reduction()` computes
    /// it), or `None` when the ACK delivered nothing (the window stays).
    pub fn on_ack(
        &mut self,
        newly_delivered: u64,
        in_flight: u64,
        ssthresh: u64,
        new_losses: bool,
        mss: u64,
    ) -> Option<u64> {
        if newly_delivered == 0 {
            return None;
        }
        self.delivered = self.delivered.saturating_add(newly_delivered);
        let send = if in_flight > ssthresh {
            // Proportional part: CEIL(delivered × ssthresh / RecoverFS) − out.
            let target = (u128::from(self.delivered) * u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs));
            u64::try_from(target)
                .unwrap_or(u64::MAX)
                .saturating_sub(self.out)
        } else {
            // Slow-start reduction bound: at most what was delivered plus
            // one packet (when the ACK advanced without new losses), and
            // never past ssthresh.
            let mut send = self.delivered.saturating_sub(self.out).max(newly_delivered);
            if !new_losses {
                send = send.saturating_add(mss);
            }
            send.min(ssthresh - in_flight)
        };
        // The first ACK of an episode always lets the fast retransmit go.
        let send = if self.out == 0 { send.max(mss) } else { send };
        Some(in_flight.saturating_add(send))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 Appendix A's first example, in packets: ssthresh 10 of a
    /// window of 20, one loss. While inflight is above ssthresh, PRR sends
    /// one packet for every two delivered.
    #[test]
    fn above_ssthresh_it_sends_in_proportion_to_what_is_delivered() {
        let mut p = Prr::start(20 * MSS);
        let mut sent_total = 0;
        let mut in_flight = 19 * MSS;
        for _ in 0..10 {
            in_flight -= MSS;
            let cwnd = p.on_ack(MSS, in_flight, 10 * MSS, false, MSS).unwrap();
            let send = cwnd.saturating_sub(in_flight);
            p.on_sent(send);
            in_flight += send;
            sent_total += send;
        }
        // 10 delivered: 5 sent (the first forced by the fast retransmit).
        assert_eq!(sent_total, 5 * MSS);
        assert_eq!(in_flight, 14 * MSS);
    }

    #[test]
    fn below_ssthresh_it_rebuilds_no_faster_than_slow_start() {
        let mut p = Prr::start(20 * MSS);
        p.on_sent(MSS);
        // Heavy loss: only 4 packets in flight, far below ssthresh 10.
        let cwnd = p.on_ack(MSS, 4 * MSS, 10 * MSS, false, MSS).unwrap();
        // delivered − out = 0, so max(0, newly 1) + 1 = 2 packets.
        assert_eq!(cwnd, 6 * MSS);
        let cwnd = p.on_ack(MSS, 4 * MSS, 10 * MSS, true, MSS).unwrap();
        // With a new loss on the ACK, no extra packet.
        assert_eq!(cwnd, 5 * MSS);
        // Never past ssthresh.
        let cwnd = p.on_ack(20 * MSS, 9 * MSS, 10 * MSS, false, MSS).unwrap();
        assert_eq!(cwnd, 10 * MSS);
    }

    #[test]
    fn an_ack_that_delivers_nothing_leaves_the_window() {
        let mut p = Prr::start(20 * MSS);
        assert_eq!(p.on_ack(0, 15 * MSS, 10 * MSS, true, MSS), None);
    }
}
