//! Linux's receive window, as far as it decides when the receiver ACKs.
//!
//! A Linux receiver acknowledges at once every in-order segment that
//! raises its window: `tcp_grow_window()` adds two segments to
//! `rcv_ssthresh` (up to `window_clamp`) and sets quick-ACK mode for the
//! next ACK. The clamp itself follows the application's reads once per
//! receiver round trip (`tcp_rcv_space_adjust()`, "dynamic right-sizing"):
//! twice what was read in the last round trip plus 16 segments, more when
//! that grew. So while a sender's rate climbs (slow start, STARTUP, a
//! flow that gains share) the window keeps growing and **every** segment
//! is acknowledged; once it levels off, the window reaches the clamp and
//! ACKs go back to every second segment.
//!
//! Why it matters: without it a simulated Linux receiver ACKed every
//! second segment from the 17th on, where kernel TCP (6.18, traced with
//! the `tcp:tcp_probe` and `tcp:tcp_rcvbuf_grow` tracepoints on a
//! 20 Mbit/s, 40 ms path) ACKed 162 of CUBIC's first 178 ACKs one segment
//! each. The sender's ACK clock then runs at the bottleneck's segment
//! rate, which is what HyStart's ACK-train test measures: kernel CUBIC
//! left slow start at 70-90 packets beside a BBRv3 flow in a 16-BDP
//! buffer, the simulated one at 118-147.
//!
//! The model assumes what bbrlab's receivers do: the application reads
//! every segment as it arrives (so the free buffer never limits the
//! window, and `tcp_rcv_space_adjust()` runs per segment), and packets
//! of the path's MSS.

use congestion::Instant;

/// The window of a connection's first segments: the SYN's 16-bit window,
/// 65,535 bytes, in whole segments (`tcp_select_initial_window()`;
/// 65,160 with a 1,448-byte MSS, as traced).
const INITIAL_WINDOW_BYTES: u64 = 65_535;

/// Segments of headroom DRS adds to twice the bytes read
/// (`tcp_rcv_space_adjust()`: "16 * tp->advmss").
const DRS_CUSHION_SEGMENTS: u64 = 16;

/// What DRS counts from at the start: the initial congestion window's
/// worth (`tcp_init_buffer_space()`: `TCP_INIT_CWND` × advmss).
const DRS_INITIAL_SEGMENTS: u64 = 10;

/// One Linux receiver's window state.
#[derive(Clone, Debug)]
pub(crate) struct RcvWindow {
    /// `rcv_ssthresh`: the window the receiver is willing to advertise,
    /// bytes; 0 until the first segment gives the MSS.
    ssthresh: u64,
    /// `window_clamp`: how far `ssthresh` may grow, bytes.
    clamp: u64,
    /// The clamp's ceiling (`tcp_rmem[2]` in window bytes).
    max_clamp: u64,
    /// `rcvq_space.space`: what the last DRS measurement counted, bytes.
    space: u64,
    /// When the current DRS measurement began, and the in-order bytes then.
    measure_at: Instant,
    measure_bytes: u64,
    /// The receiver's RTT estimate, ns (0: none yet, DRS waits).
    rtt_ns: u64,
}

impl RcvWindow {
    /// A window that starts at `init_clamp` bytes (`tcp_rmem[1]` in window
    /// bytes) and may grow to `max_clamp`.
    pub(crate) fn new(init_clamp: u64, max_clamp: u64) -> Self {
        RcvWindow {
            ssthresh: 0,
            clamp: init_clamp,
            max_clamp: max_clamp.max(init_clamp),
            space: 0,
            measure_at: Instant::ZERO,
            measure_bytes: 0,
            rtt_ns: 0,
        }
    }

    /// The receiver's RTT (Linux estimates it from the timestamps the
    /// sender echoes, `tcp_rcv_rtt_measure_ts()`).
    pub(crate) fn set_rtt_ns(&mut self, rtt_ns: u64) {
        self.rtt_ns = rtt_ns;
    }

    /// An in-order segment of `seg_bytes` arrived at `now`, bringing the
    /// in-order total to `in_order_bytes`. Returns whether it raised the
    /// window, which makes Linux acknowledge it at once.
    pub(crate) fn on_in_order(
        &mut self,
        now: Instant,
        seg_bytes: u64,
        in_order_bytes: u64,
    ) -> bool {
        let mss = seg_bytes.max(1);
        if self.ssthresh == 0 {
            self.ssthresh = (INITIAL_WINDOW_BYTES / mss * mss).min(self.clamp);
            self.space = DRS_INITIAL_SEGMENTS * mss;
            self.measure_at = now;
            self.measure_bytes = in_order_bytes - seg_bytes.min(in_order_bytes);
        }
        // tcp_grow_window(): full-sized segments (truesize no larger than
        // their window share) add two segments.
        let grew = self.ssthresh < self.clamp;
        if grew {
            self.ssthresh = (self.ssthresh + 2 * mss).min(self.clamp);
        }
        self.adjust_space(now, mss, in_order_bytes);
        grew
    }

    /// `tcp_rcv_space_adjust()`: once per receiver round trip, if more was
    /// read than in the last one, raise the clamp to twice that plus a
    /// cushion, and by twice the relative growth on top (a sender in slow
    /// start doubles each round trip, and the window advertised now is
    /// used a round trip later).
    fn adjust_space(&mut self, now: Instant, mss: u64, in_order_bytes: u64) {
        if self.rtt_ns == 0 || now.nanos_since(self.measure_at) < self.rtt_ns {
            return;
        }
        let copied = in_order_bytes.saturating_sub(self.measure_bytes);
        if copied > self.space {
            let base = 2 * copied + DRS_CUSHION_SEGMENTS * mss;
            let grow = (base as u128 * u128::from(copied - self.space)
                / u128::from(self.space.max(1)))
            .min(u128::from(u64::MAX / 4)) as u64;
            let window = base.saturating_add(2 * grow).min(self.max_clamp);
            self.clamp = self.clamp.max(window);
            self.space = copied;
        }
        self.measure_at = now;
        self.measure_bytes = in_order_bytes;
    }

    /// The window the receiver would advertise, bytes (for tests).
    #[cfg(test)]
    pub(crate) fn window(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    const MSS: u64 = 1448;
    const MS: u64 = 1_000_000;

    /// Feeds `n` segments spread evenly over one round trip of `rtt` from
    /// `*t`, advancing `*t` and `*bytes`; returns how many raised the window.
    fn round(w: &mut RcvWindow, t: &mut u64, bytes: &mut u64, rtt: u64, n: u64) -> u64 {
        let mut raised = 0;
        for i in 0..n {
            *bytes += MSS;
            raised += u64::from(w.on_in_order(at(*t + rtt * i / n), MSS, *bytes));
        }
        *t += rtt;
        raised
    }

    /// Before DRS has measured a round trip, the window grows two
    /// segments per segment from 45 segments to the initial clamp, then
    /// stops: the first six segments raise it (45 + 2 × 6 = 57 segments,
    /// past the 56.6 of 81,920 bytes), the seventh does not.
    #[test]
    fn the_window_grows_two_segments_per_segment_up_to_the_clamp() {
        let mut w = RcvWindow::new(81_920, 20_000_000);
        let mut grew = Vec::new();
        for i in 1..=10 {
            grew.push(w.on_in_order(at(i * MS), MSS, i * MSS));
        }
        assert_eq!(
            grew,
            [true, true, true, true, true, true, false, false, false, false]
        );
        assert_eq!(w.window(), 81_920);
    }

    /// A sender doubling each round trip makes DRS raise the clamp about
    /// as fast as two segments per segment can follow, so from the third
    /// round trip on at least three in four segments raise the window (the
    /// kernel's trace: CUBIC's third round ACKed singly until the window
    /// met the clamp, then every second segment). A sender at a steady
    /// rate lets the window reach the clamp within a few round trips,
    /// after which no segment raises it.
    #[test]
    fn a_doubling_sender_keeps_the_window_growing_and_a_steady_one_does_not() {
        let rtt = 40 * MS;
        let mut w = RcvWindow::new(81_920, 20_000_000);
        w.set_rtt_ns(rtt);
        let (mut t, mut bytes) = (0, 0);
        // Slow start: 10, 20, 40, 80, 160 segments in successive round
        // trips, spread evenly over each.
        for k in 0..5u64 {
            let n = 10u64 << k;
            let raised = round(&mut w, &mut t, &mut bytes, rtt, n);
            if k >= 2 {
                assert!(raised * 4 >= n * 3, "round {k}: {raised} of {n} raised it");
            }
        }
        // Then 100 segments every round trip for ten round trips.
        let mut raised_late = 0;
        for k in 0..10u64 {
            let raised = round(&mut w, &mut t, &mut bytes, rtt, 100);
            if k >= 8 {
                raised_late += raised;
            }
        }
        assert_eq!(raised_late, 0, "window {}", w.window());
    }

    /// The clamp never passes its ceiling, however fast the sender grows.
    #[test]
    fn the_clamp_stops_at_its_ceiling() {
        let rtt = 10 * MS;
        let mut w = RcvWindow::new(81_920, 300_000);
        w.set_rtt_ns(rtt);
        let (mut t, mut bytes) = (0, 0);
        for k in 0..8u64 {
            round(&mut w, &mut t, &mut bytes, rtt, 10 << k);
        }
        assert_eq!(w.window(), 300_000);
    }
}
