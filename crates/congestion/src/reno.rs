//! NewReno (RFC 5681, RFC 6582): additive increase, multiplicative decrease.
//!
//! Slow start doubles the window each round trip; congestion avoidance adds
//! one packet per window of data acknowledged; a loss episode halves the
//! window once. NewReno's partial-ACK handling (RFC 6582) is the transport's
//! retransmission logic; here it shows as one reduction per recovery
//! episode, which [`crate::Controller`] delimits.

use crate::algorithm::{AckContext, CongestionControl};
use crate::config::Config;
use crate::delivery_rate::DeliveryRateSampler;
use crate::loss_based::Window;
use crate::snapshot::{Mode, Snapshot};
use crate::time::Instant;

/// NewReno.
#[derive(Clone, Debug)]
pub struct Reno {
    w: Window,
    /// Bytes acknowledged in congestion avoidance since cwnd last grew.
    avoidance_acked: u64,
    srtt_ns: Option<u64>,
}

impl Reno {
    /// NewReno with the initial window of `config`.
    pub fn new(config: &Config) -> Self {
        Reno {
            w: Window::new(
                config.mss_bytes,
                config.initial_cwnd_packets,
                config.window_reduction,
            ),
            avoidance_acked: 0,
            srtt_ns: None,
        }
    }
}

impl CongestionControl for Reno {
    /// The built-in's canonical name (seen when [`crate::builtin`] runs
    /// it inside a user's algorithm).
    fn name(&self) -> &str {
        "reno"
    }

    fn on_ack(&mut self, ctx: &AckContext<'_>, _sampler: &mut DeliveryRateSampler) {
        self.w.on_ack(ctx);
        self.srtt_ns = ctx.rtt.smoothed_ns();
        let acked = ctx.rate.acked_bytes;
        // RFC 6582 §3.2: no window growth while recovering; Linux
        // `tcp_reno_cong_avoid()`: none unless cwnd-limited.
        if acked > 0 && self.w.may_grow(ctx.recovery) {
            let w = &mut self.w;
            if w.in_slow_start() {
                // RFC 5681 §3.1 with byte counting (RFC 3465): grow by the
                // data acked, up to ssthresh; the rest counts as avoidance.
                let room = w.ssthresh.saturating_sub(w.cwnd);
                let grow = acked.min(room);
                w.cwnd = w.cwnd.saturating_add(grow);
                self.avoidance_acked = self.avoidance_acked.saturating_add(acked - grow);
            } else {
                self.avoidance_acked = self.avoidance_acked.saturating_add(acked);
            }
            // RFC 5681 §3.1: one MSS per cwnd of data acknowledged.
            if !w.in_slow_start() && self.avoidance_acked >= w.cwnd {
                let windows = self.avoidance_acked / w.cwnd.max(1);
                self.avoidance_acked -= windows * w.cwnd;
                w.cwnd = w.cwnd.saturating_add(windows.saturating_mul(w.mss));
            }
        }
        self.w.update_pacing(self.srtt_ns);
    }

    /// RFC 3168 §6.1.2: a CE mark is answered as a loss would be, at most
    /// once per window of data (RFC 9002 §7.1: once per episode).
    fn on_congestion_experienced(
        &mut self,
        now: Instant,
        _ce_packets: u64,
        bytes_in_flight: u64,
        new_episode: bool,
    ) -> bool {
        self.on_packets_lost(now, 0, bytes_in_flight, new_episode);
        true
    }

    /// RFC 5681 §3.2 / RFC 6582: halve once per episode.
    fn on_packets_lost(
        &mut self,
        _now: Instant,
        _lost_bytes: u64,
        _bytes_in_flight: u64,
        new_episode: bool,
    ) {
        if !new_episode {
            return;
        }
        let w = &mut self.w;
        w.save_for_undo();
        w.ssthresh = (w.cwnd / 2).max(w.min_window());
        w.begin_reduction();
        self.avoidance_acked = 0;
        w.update_pacing(self.srtt_ns);
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, in_flight_before: u64) {
        self.w.on_packet_sent(now, bytes, in_flight_before);
    }

    fn on_held_by_cwnd(&mut self, now: Instant, in_flight: u64) {
        self.w.on_held_by_cwnd(now, in_flight);
    }

    /// RFC 5681 §3.1: ssthresh to half the window, cwnd to one packet.
    fn on_retransmission_timeout(&mut self, _now: Instant, _bytes_in_flight: u64) {
        let half = self.w.cwnd / 2;
        self.w.save_for_undo();
        self.w.on_timeout(half);
        self.avoidance_acked = 0;
        self.w.update_pacing(self.srtt_ns);
    }

    /// The timeout's answer with nothing in flight, then RFC 9002 §7.6.2's
    /// minimum window.
    fn on_persistent_congestion(&mut self, now: Instant, min_window: u64) {
        self.on_retransmission_timeout(now, 0);
        self.w.on_persistent_congestion(min_window, self.srtt_ns);
    }

    /// Restores the window from before the spurious reduction.
    fn on_spurious_loss(&mut self, _now: Instant) {
        if self.w.undo() {
            self.avoidance_acked = 0;
            self.w.update_pacing(self.srtt_ns);
        }
    }

    fn on_mss_change(&mut self, mss: u64) {
        self.w.on_mss_change(mss, self.srtt_ns);
    }

    fn cwnd_bytes(&self) -> u64 {
        self.w.cwnd
    }

    fn pacing_rate_bytes_per_sec(&self) -> u64 {
        self.w.pacing_rate_bytes_per_sec()
    }

    fn send_quantum_bytes(&self) -> u64 {
        self.w.send_quantum
    }

    fn snapshot(&self) -> Snapshot {
        self.w.snapshot(self.mode())
    }

    fn mode(&self) -> Mode {
        if self.w.in_slow_start() {
            Mode::SlowStart
        } else {
            Mode::CongestionAvoidance
        }
    }
}
