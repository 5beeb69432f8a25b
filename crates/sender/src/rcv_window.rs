//! Linux's receive window, as far as it decides when the receiver ACKs.
//!
//! A Linux receiver acknowledges at once every in-order segment that
//! raises its window: `tcp_grow_window()` adds two segments to
//! `rcv_ssthresh` (up to `window_clamp`) and sets quick-ACK mode for the
//! next ACK. The clamp itself follows the application's reads once per
//! receiver round trip (`tcp_rcv_space_adjust()`, "dynamic right-sizing"),
//! by one of two kernels' rules ([`RcvAutotuning`]): before Linux 6.16,
//! twice what was read in the last round trip plus 16 segments, more when
//! that grew (the default, which the simulator's fidelity tests are
//! matched with); from 6.16 (`tcp_rcvbuf_grow()`), twice what was read
//! plus four times its growth, plus the span held above a hole, which
//! out-of-order data also raises the clamp by, measured over the
//! receiver's own RTT estimate. Kernel 6.18's `tcp:tcp_rcvbuf_grow`
//! tracepoint on the emulator reads every clamp it set to within a few
//! bytes of the second; the first stays the default because the second
//! alone moved two kernel-matched results away from the kernel (the
//! book's Validation chapter).
//!
//! So while a sender's rate climbs (slow start, STARTUP, a
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
//! The window is also what the receiver offers the sender, and a kernel
//! sender never has data beyond it (`tcp_snd_wnd_test()`). Offered
//! (`__tcp_select_window()`): `rcv_ssthresh`, at most the free buffer,
//! counted from the in-order point; the right edge never moves back
//! (`tcp_select_window()`). Data held above a hole takes buffer space,
//! so after a loss the offer shrinks by what waits for the repair, and
//! `rcv_ssthresh` stops growing once it reaches the free space
//! (`tcp_grow_window()` grows on out-of-order segments too, with SACK).
//! A long-RTT flow in STARTUP meets this: kernel BBR beside a 50 ms
//! shorter flow on a 1-BDP buffer was receive-window-limited for 72-192
//! ms of its first second (`tcpi_rwnd_limited`), with 81,920 bytes
//! offered until the receiver's first DRS measurement.
//!
//! The model assumes what bbrlab's receivers do: the application reads
//! every segment as it arrives (so only out-of-order data occupies the
//! buffer, and `tcp_rcv_space_adjust()` runs per segment), and packets
//! of the path's MSS. The buffer's free space, in window bytes, is the
//! clamp less the out-of-order payload: Linux sets the clamp from the
//! buffer at the window share it measures of a segment's memory
//! (`scaling_ratio`), and charges held segments at that same share.

use crate::config::RcvAutotuning;
use congestion::Instant;

/// The window of a connection's first segments: the SYN's 16-bit window,
/// 65,535 bytes, in whole segments (`tcp_select_initial_window()`;
/// 65,160 with a 1,448-byte MSS, as traced).
const INITIAL_WINDOW_BYTES: u64 = 65_535;

/// What DRS counts from at the start: the initial congestion window's
/// worth (`tcp_init_buffer_space()`: `TCP_INIT_CWND` × advmss).
const DRS_INITIAL_SEGMENTS: u64 = 10;

/// What a receiver holds above a hole: the payload (it takes buffer
/// space) and the span from the in-order point to the end of the highest
/// segment (what `tcp_rcvbuf_grow()` adds to the window).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Held {
    pub(crate) bytes: u64,
    pub(crate) span_bytes: u64,
}

impl Held {
    /// Nothing held.
    #[cfg(test)]
    pub(crate) const NONE: Held = Held {
        bytes: 0,
        span_bytes: 0,
    };
}

/// Segments of headroom the clamp of Linux before 6.16 adds to twice the
/// bytes read (`tcp_rcv_space_adjust()`: "16 * tp->advmss").
const DRS_CUSHION_SEGMENTS: u64 = 16;

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
    /// The last sample [`RcvWindow::on_rtt_sample`] took.
    last_sample_ns: u64,
    /// Which kernel's rule raises the clamp.
    rule: RcvAutotuning,
}

impl RcvWindow {
    /// A window that starts at `init_clamp` bytes (`tcp_rmem[1]` in window
    /// bytes) and may grow to `max_clamp`, its clamp raised by `rule`.
    pub(crate) fn new(init_clamp: u64, max_clamp: u64, rule: RcvAutotuning) -> Self {
        RcvWindow {
            ssthresh: 0,
            clamp: init_clamp,
            max_clamp: max_clamp.max(init_clamp),
            space: 0,
            measure_at: Instant::ZERO,
            measure_bytes: 0,
            rtt_ns: 0,
            last_sample_ns: 0,
            rule,
        }
    }

    /// The receiver's RTT (Linux estimates it from the timestamps the
    /// sender echoes, `tcp_rcv_rtt_measure_ts()`).
    pub(crate) fn set_rtt_ns(&mut self, rtt_ns: u64) {
        self.rtt_ns = rtt_ns;
    }

    /// The sender's RTT figures, standing in for the receiver's own
    /// estimate, which Linux measures from echoed timestamps: the rule
    /// before 6.16 is matched with the smoothed RTT; 6.16's takes the
    /// newest sample (the handshake's before the first) through
    /// [`RcvWindow::on_rtt_sample`].
    pub(crate) fn on_sender_rtt(&mut self, smoothed_ns: Option<u64>, latest_ns: Option<u64>) {
        match self.rule {
            RcvAutotuning::Cushioned => self.rtt_ns = smoothed_ns.unwrap_or(0),
            RcvAutotuning::Linux6_16 => {
                if let Some(sample) = latest_ns.or(smoothed_ns) {
                    self.on_rtt_sample(sample);
                }
            }
        }
    }

    /// One RTT sample for the receiver's estimate, filtered as Linux's
    /// `tcp_rcv_rtt_update()` filters the samples of echoed timestamps: a
    /// smaller sample replaces the estimate at once, a larger one moves
    /// it an eighth of the way. A sample equal to the last one is taken
    /// for the same echo and skipped (Linux takes one sample per new
    /// echoed timestamp, `rcv_rtt_last_tsecr`).
    pub(crate) fn on_rtt_sample(&mut self, sample_ns: u64) {
        if sample_ns == 0 || sample_ns == self.last_sample_ns {
            return;
        }
        self.last_sample_ns = sample_ns;
        self.rtt_ns = if self.rtt_ns == 0 || sample_ns < self.rtt_ns {
            sample_ns
        } else {
            self.rtt_ns - self.rtt_ns / 8 + sample_ns / 8
        };
    }

    /// (`rcv_ssthresh`, the clamp's ceiling), bytes: the largest window
    /// the receiver has been willing to offer (it only grows here, as no
    /// memory pressure is modelled), and the most it could ever offer.
    pub(crate) fn reach(&self) -> (u64, u64) {
        (self.ssthresh, self.max_clamp)
    }

    /// The receiver's RTT estimate, ns (0: none yet).
    pub(crate) fn rtt_ns(&self) -> u64 {
        self.rtt_ns
    }

    /// An in-order segment of `seg_bytes` arrived at `now`, bringing the
    /// in-order total to `in_order_bytes`. Returns whether it raised the
    /// window, which makes Linux acknowledge it at once.
    /// `held`: what is held above a hole after this segment.
    pub(crate) fn on_in_order(
        &mut self,
        now: Instant,
        seg_bytes: u64,
        in_order_bytes: u64,
        held: Held,
    ) -> bool {
        let mss = seg_bytes.max(1);
        self.start(now, mss, in_order_bytes - seg_bytes.min(in_order_bytes));
        let grew = self.grow(mss, held.bytes);
        self.adjust_space(now, mss, in_order_bytes, held.span_bytes);
        grew
    }

    /// A segment of `seg_bytes` arrived above a hole, bringing what is
    /// held there to `held_bytes`: with SACK it may raise `rcv_ssthresh`
    /// as an in-order one does (`tcp_data_queue_ofo()` calls
    /// `tcp_grow_window()`), though the ACK policy does not change (the
    /// receiver acknowledges out-of-order data at once or compressed).
    /// The clamp then covers twice the last measurement plus the span held
    /// above the hole (`tcp_data_queue_ofo()` calls `tcp_rcvbuf_grow()`
    /// with the measurement unchanged), so the window is not cut short by
    /// data waiting for a repair.
    pub(crate) fn on_out_of_order(
        &mut self,
        now: Instant,
        seg_bytes: u64,
        in_order_bytes: u64,
        held: Held,
    ) {
        let mss = seg_bytes.max(1);
        self.start(now, mss, in_order_bytes);
        self.grow(mss, held.bytes);
        if self.rule == RcvAutotuning::Linux6_16 {
            self.raise_clamp(self.space, self.space, held.span_bytes);
        }
    }

    /// The first segment gives the MSS: the window starts at the SYN's.
    fn start(&mut self, now: Instant, mss: u64, in_order_before: u64) {
        if self.ssthresh == 0 {
            // Still 0 here, so the offer is the SYN's window.
            self.ssthresh = self.offer(mss, 0);
            self.space = DRS_INITIAL_SEGMENTS * mss;
            self.measure_at = now;
            self.measure_bytes = in_order_before;
        }
    }

    /// The window offered before any data arrived, in whole segments of
    /// `mss` bytes (the SYN-ACK's).
    fn initial_window(mss: u64) -> u64 {
        let mss = mss.max(1);
        INITIAL_WINDOW_BYTES / mss * mss
    }

    /// `tcp_grow_window()`: full-sized segments (truesize no larger than
    /// their window share) add two segments, while `rcv_ssthresh` is below
    /// both the clamp and the free space (`tcp_space()`).
    fn grow(&mut self, mss: u64, held_bytes: u64) -> bool {
        let grew = self.ssthresh < self.clamp && self.ssthresh < self.free(held_bytes);
        if grew {
            self.ssthresh = (self.ssthresh + 2 * mss).min(self.clamp);
        }
        grew
    }

    /// The buffer's free space in window bytes, with `held_bytes` of
    /// payload waiting above a hole.
    fn free(&self, held_bytes: u64) -> u64 {
        self.clamp.saturating_sub(held_bytes)
    }

    /// The window to offer now, bytes (`__tcp_select_window()`): the
    /// free space, at most `rcv_ssthresh`; before any data, the SYN's
    /// window at `mss`. Counted from the in-order point; the caller keeps
    /// the right edge from moving back.
    pub(crate) fn offer(&self, mss: u64, held_bytes: u64) -> u64 {
        if self.ssthresh == 0 {
            return Self::initial_window(mss).min(self.clamp);
        }
        self.ssthresh.min(self.free(held_bytes))
    }

    /// `tcp_rcv_space_adjust()`: once per receiver round trip, if more was
    /// read than in the last one, that becomes the measurement and the
    /// clamp is raised by [`RcvWindow::raise_clamp`]. `ooo_span_bytes`:
    /// from the in-order point to the end of the highest segment held
    /// above a hole (0 without one).
    fn adjust_space(&mut self, now: Instant, mss: u64, in_order_bytes: u64, ooo_span_bytes: u64) {
        if self.rtt_ns == 0 || now.nanos_since(self.measure_at) < self.rtt_ns {
            return;
        }
        let copied = in_order_bytes.saturating_sub(self.measure_bytes);
        if copied > self.space {
            let old = self.space;
            self.space = copied;
            match self.rule {
                RcvAutotuning::Cushioned => self.raise_clamp_cushioned(copied, old, mss),
                RcvAutotuning::Linux6_16 => self.raise_clamp(copied, old, ooo_span_bytes),
            }
        }
        self.measure_at = now;
        self.measure_bytes = in_order_bytes;
    }

    /// `tcp_rcv_space_adjust()` before Linux 6.16: twice the new
    /// measurement plus a cushion of 16 segments, and twice the relative
    /// growth of that on top.
    fn raise_clamp_cushioned(&mut self, new_space: u64, old_space: u64, mss: u64) {
        let base = 2 * new_space + DRS_CUSHION_SEGMENTS * mss;
        let grow = (base as u128 * u128::from(new_space.saturating_sub(old_space))
            / u128::from(old_space.max(1)))
        .min(u128::from(u64::MAX / 4)) as u64;
        let window = base.saturating_add(2 * grow).min(self.max_clamp);
        self.clamp = self.clamp.max(window);
    }

    /// `tcp_rcvbuf_grow()` (Linux 6.16 and later): a window of twice the
    /// new measurement (DRS is a round trip late), plus twice its growth
    /// relative to the old one on top (a sender in slow start doubles
    /// each round trip, and the window advertised now is used a round
    /// trip later), plus the span held above a hole. The clamp only rises.
    fn raise_clamp(&mut self, new_space: u64, old_space: u64, ooo_span_bytes: u64) {
        let base = 2 * new_space;
        let grow = (base as u128 * u128::from(new_space.saturating_sub(old_space))
            / u128::from(old_space.max(1)))
        .min(u128::from(u64::MAX / 4)) as u64;
        let window = base
            .saturating_add(2 * grow)
            .saturating_add(ooo_span_bytes)
            .min(self.max_clamp);
        self.clamp = self.clamp.max(window);
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
    /// The default rule, and Linux 6.16's.
    const RULE: RcvAutotuning = RcvAutotuning::Cushioned;
    const NEW: RcvAutotuning = RcvAutotuning::Linux6_16;

    /// `segments` held above a hole, the highest `span` segments past the
    /// in-order point.
    fn held(segments: u64, span: u64) -> Held {
        Held {
            bytes: segments * MSS,
            span_bytes: span * MSS,
        }
    }

    /// Feeds `n` segments spread evenly over one round trip of `rtt` from
    /// `*t`, advancing `*t` and `*bytes`; returns how many raised the window.
    fn round(w: &mut RcvWindow, t: &mut u64, bytes: &mut u64, rtt: u64, n: u64) -> u64 {
        let mut raised = 0;
        for i in 0..n {
            *bytes += MSS;
            raised += u64::from(w.on_in_order(at(*t + rtt * i / n), MSS, *bytes, Held::NONE));
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
        let mut w = RcvWindow::new(81_920, 20_000_000, RULE);
        let mut grew = Vec::new();
        for i in 1..=10 {
            grew.push(w.on_in_order(at(i * MS), MSS, i * MSS, Held::NONE));
        }
        assert_eq!(
            grew,
            [true, true, true, true, true, true, false, false, false, false]
        );
        assert_eq!(w.window(), 81_920);
    }

    /// A sender doubling each round trip makes DRS raise the clamp about
    /// as fast as two segments per segment can follow, so from the third
    /// round trip on most segments raise the window (the window advertised
    /// is used a round trip later). A sender at a steady rate lets the
    /// window reach the clamp within a few round trips, after which no
    /// segment raises it. Under the rule before 6.16 the cushion raises
    /// the clamp in the second round trip already, and three in four
    /// segments raise the window from then on (the kernel's trace of
    /// 2026-11-30: CUBIC's third round ACKed singly until the window met
    /// the clamp); under 6.16's the first measurement counts the initial
    /// window alone, twice ten segments is below the initial clamp, and
    /// the second round raises nothing (kernel 6.18's receivers on the
    /// emulator grew no window in their second round either).
    /// `reach` gives the largest window offered and the ceiling: a window
    /// still growing is below its ceiling, and one grown to the clamp of
    /// a small buffer reports that ceiling.
    #[test]
    fn reach_tells_a_growing_window_from_one_at_its_ceiling() {
        let mut w = RcvWindow::new(81_920, 20_000_000, RULE);
        assert_eq!(w.reach(), (0, 20_000_000));
        w.on_in_order(at(MS), MSS, MSS, Held::NONE);
        let (first, cap) = w.reach();
        assert!(first > 0 && first < cap / 100, "{first} of {cap}");
        let mut small = RcvWindow::new(81_920, 81_920, RULE);
        for i in 1..=10 {
            small.on_in_order(at(i * MS), MSS, i * MSS, Held::NONE);
        }
        assert_eq!(small.reach(), (81_920, 81_920));
    }

    #[test]
    fn a_doubling_sender_keeps_the_window_growing_and_a_steady_one_does_not() {
        for rule in [RULE, NEW] {
            let rtt = 40 * MS;
            let mut w = RcvWindow::new(81_920, 20_000_000, rule);
            w.set_rtt_ns(rtt);
            let (mut t, mut bytes) = (0, 0);
            // Slow start: 10, 20, 40, 80, 160 segments in successive round
            // trips, spread evenly over each.
            let mut raised_by_round = Vec::new();
            for k in 0..5u64 {
                raised_by_round.push(round(&mut w, &mut t, &mut bytes, rtt, 10u64 << k));
            }
            let (from, per_four) = match rule {
                RcvAutotuning::Cushioned => (1, 3),
                RcvAutotuning::Linux6_16 => {
                    assert_eq!(raised_by_round[1], 0, "{raised_by_round:?}");
                    (2, 2)
                }
            };
            for (k, &raised) in raised_by_round.iter().enumerate().skip(from + 1) {
                let n = 10u64 << k;
                assert!(
                    raised * 4 >= n * per_four,
                    "{rule:?} round {k}: {raised} of {n} raised it"
                );
            }
            // Then 100 segments every round trip for ten round trips.
            let mut raised_late = 0;
            for k in 0..10u64 {
                let raised = round(&mut w, &mut t, &mut bytes, rtt, 100);
                if k >= 8 {
                    raised_late += raised;
                }
            }
            assert_eq!(raised_late, 0, "{rule:?}: window {}", w.window());
        }
    }

    /// DRS's clamp is Linux 6.18's (`tcp_rcvbuf_grow()`): the four clamps
    /// kernel 6.18 set for a `bbrlab_bbr3` and a `cubic` receiver in
    /// their first 150 ms on the emulator (20 Mbit/s, 40 ms; the
    /// `tcp:tcp_rcvbuf_grow` tracepoint's old and new measurements, and
    /// the clamp the next event read), to within the few bytes the kernel
    /// loses converting through its buffer's `scaling_ratio`. The rule of
    /// kernels before 6.16, with its cushion of 16 segments, reads 213,702
    /// for the first.
    #[test]
    fn the_clamp_follows_linux_6_18_on_a_kernel_trace() {
        // (old measurement, new measurement, clamp the kernel set)
        let trace = [
            (15_932, 28_960, 152_643),
            (14_484, 30_408, 194_540),
            (30_408, 57_920, 325_453),
            (57_920, 93_520, 416_963),
        ];
        for (old, new, kernel) in trace {
            let mut w = RcvWindow::new(0, 33_554_432, NEW);
            w.raise_clamp(new, old, 0);
            assert!(
                w.clamp.abs_diff(kernel) <= 8,
                "space {old} -> {new}: clamp {} where the kernel set {kernel}",
                w.clamp
            );
        }
        let mut w = RcvWindow::new(0, 33_554_432, RULE);
        w.raise_clamp_cushioned(28_960, 15_932, MSS);
        assert_eq!(w.clamp, 213_702);
    }

    /// Out-of-order data raises the clamp to twice the last measurement
    /// plus the span held (`tcp_data_queue_ofo()` -> `tcp_rcvbuf_grow()`),
    /// so a window is not cut short by data waiting for a repair; a span
    /// below the clamp changes nothing.
    #[test]
    fn data_held_above_a_hole_raises_the_clamp_by_its_span() {
        let mut old = RcvWindow::new(81_920, 20_000_000, RULE);
        assert!(old.on_in_order(at(0), MSS, MSS, Held::NONE));
        old.on_out_of_order(at(MS), MSS, MSS, held(2, 50));
        assert_eq!(old.clamp, 81_920, "no such raise before 6.16");
        let mut w = RcvWindow::new(81_920, 20_000_000, NEW);
        assert!(w.on_in_order(at(0), MSS, MSS, Held::NONE));
        // The measurement starts at ten segments: 2 × 10 + 30 < 56.6.
        w.on_out_of_order(at(MS), MSS, MSS, held(1, 30));
        assert_eq!(w.clamp, 81_920);
        // 2 × 10 + 50 = 70 segments.
        w.on_out_of_order(at(2 * MS), MSS, MSS, held(2, 50));
        assert_eq!(w.clamp, 70 * MSS);
    }

    /// The receiver's RTT is Linux's estimate from echoed timestamps
    /// (`tcp_rcv_rtt_update()`): a smaller sample at once, a larger one
    /// an eighth of the way, the same echo once.
    #[test]
    fn the_receiver_rtt_takes_smaller_samples_at_once_and_larger_ones_slowly() {
        let mut w = RcvWindow::new(81_920, 20_000_000, RULE);
        w.on_rtt_sample(40 * MS);
        assert_eq!(w.rtt_ns(), 40 * MS);
        w.on_rtt_sample(80 * MS);
        assert_eq!(w.rtt_ns(), 45 * MS);
        w.on_rtt_sample(80 * MS);
        assert_eq!(w.rtt_ns(), 45 * MS, "the same sample again is skipped");
        w.on_rtt_sample(41 * MS);
        assert_eq!(w.rtt_ns(), 41 * MS);
    }

    /// What waits above a hole takes buffer space: the offer is the
    /// clamp less the held payload once that is below `rcv_ssthresh`, and
    /// `rcv_ssthresh` stops growing at the free space, in order or not.
    /// Below it, a segment above a hole raises it as an in-order one does.
    #[test]
    fn data_held_above_a_hole_shrinks_the_offer_and_stops_growth() {
        let mut w = RcvWindow::new(81_920, 20_000_000, RULE);
        assert_eq!(w.offer(MSS, 0), 65_160, "the SYN's window");
        // The first segment: 45 segments, then 47 (below the clamp).
        assert!(w.on_in_order(at(0), MSS, MSS, Held::NONE));
        assert_eq!(w.offer(MSS, 0), 47 * MSS);
        // Two segments held: 47 < 81,920 - 2,896, so it grows.
        w.on_out_of_order(at(MS), MSS, 3 * MSS, held(2, 3));
        assert_eq!(w.window(), 49 * MSS);
        assert_eq!(w.offer(MSS, 2 * MSS), 49 * MSS);
        // Twenty held: free space 81,920 - 28,960 = 52,960 < 49 segments:
        // no growth, and the offer is the free space.
        w.on_out_of_order(at(2 * MS), MSS, 21 * MSS, held(20, 21));
        assert_eq!(w.window(), 49 * MSS);
        assert_eq!(w.offer(MSS, 20 * MSS), 81_920 - 20 * MSS);
        assert!(!w.on_in_order(at(3 * MS), MSS, 22 * MSS, held(20, 20)));
        // The hole filled: growth resumes up to the clamp.
        assert!(w.on_in_order(at(4 * MS), MSS, 23 * MSS, Held::NONE));
        assert_eq!(w.offer(MSS, 0), 51 * MSS);
        assert_eq!(w.offer(MSS, 100 * MSS), 0, "a full buffer offers nothing");
    }

    /// The clamp never passes its ceiling, however fast the sender grows.
    #[test]
    fn the_clamp_stops_at_its_ceiling() {
        let rtt = 10 * MS;
        let mut w = RcvWindow::new(81_920, 300_000, RULE);
        w.set_rtt_ns(rtt);
        let (mut t, mut bytes) = (0, 0);
        for k in 0..8u64 {
            round(&mut w, &mut t, &mut bytes, rtt, 10 << k);
        }
        assert_eq!(w.window(), 300_000);
    }
}
