//! Linux's HyStart, the slow-start exit that kernel CUBIC runs
//! (`hystart_update()` and `cubictcp_acked()` in `net/ipv4/tcp_cubic.c`,
//! after Ha and Rhee, "Taming the elephants", 2011).
//!
//! It differs from HyStart++ (RFC 9406), which [`crate::cubic`] runs by
//! default, in three ways that decide how full a buffer a CUBIC flow
//! leaves behind when it meets another flow:
//! - the delay test compares a round's RTT with the connection's minimum
//!   (`delay_min`), not with the previous round's, so a queue that builds
//!   over several rounds is caught in the round it passes the threshold;
//! - a train of ACKs spaced at most 2 ms apart that lasts longer than half
//!   the minimum RTT (plus half a cushion of up to 1 ms for TSO and GRO)
//!   also ends slow start (the bottleneck has been busy for half a round
//!   trip, so the window already holds half a BDP);
//! - either test ends slow start at once (ssthresh := cwnd), with no
//!   conservative phase.
//!
//! Without this, the simulator's CUBIC sharing a 2-BDP buffer with a BBRv3
//! flow stayed in slow start to 184 packets where the kernel's left it at
//! about 70 (20 Mbit/s, 40 ms), and the overflow it caused set BBRv3's
//! `inflight_longterm` for the rest of the run.

use crate::time::Instant;
use core::time::Duration;

/// Slow start is judged only from this window up (`hystart_low_window`).
const LOW_WINDOW_PACKETS: u64 = 16;
/// ACKs at most this far apart continue a train (`hystart_ack_delta_us`).
const ACK_TRAIN_GAP_NS: u64 = 2_000_000;
/// The largest burst the kernel's sockets hand the device, bytes
/// (`sk_gso_max_size`: GSO_LEGACY_MAX_SIZE, the default of every device
/// without BIG TCP, the emulator's included).
const GSO_MAX_SIZE_BYTES: f64 = 65_536.0;
/// The most the ACK train's cushion adds to `delay_min`, ns.
const ACK_DELAY_CAP_NS: u64 = 1_000_000;

/// The ACK train's allowance for TSO and GRO (`hystart_ack_delay()`): the
/// time four GSO-sized bursts take at the socket's pacing rate, at most
/// 1 ms, and none before the socket has a rate. Below about 2 Gbit/s
/// (262 kB in 1 ms) it is the whole 1 ms.
fn ack_delay_ns(pacing_rate_bytes_per_sec: f64) -> u64 {
    // No rate yet (or not a number): Linux's `if (!rate) return 0`.
    if pacing_rate_bytes_per_sec.is_nan() || pacing_rate_bytes_per_sec <= 0.0 {
        return 0;
    }
    (4.0 * GSO_MAX_SIZE_BYTES * 1e9 / pacing_rate_bytes_per_sec).min(ACK_DELAY_CAP_NS as f64) as u64
}

/// RTT samples per round the delay test waits for (Linux's
/// `HYSTART_MIN_SAMPLES`; RFC 9406 §4.3's N_RTT_SAMPLE is the same 8, and
/// HyStart++ in [`crate::cubic`] uses this one).
pub(crate) const DELAY_SAMPLES: u32 = 8;

/// How far a round's RTT may rise above `base_ns` before slow start ends:
/// an eighth of it, clamped to 4-16 ms. Linux's `HYSTART_DELAY_THRESH`
/// and RFC 9406 §4.3's RttThresh agree, so HyStart++ uses this too.
pub(crate) fn delay_threshold_ns(base_ns: u64) -> u64 {
    (base_ns / 8).clamp(4_000_000, 16_000_000)
}

/// One connection's HyStart state.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinuxHyStart {
    /// The smallest RTT seen since the connection (or its last timeout)
    /// began, ns; 0 while none.
    delay_min_ns: u64,
    /// The round ends when a packet sent after this much had been
    /// delivered is acknowledged (Linux: `snd_una` passing `end_seq`).
    round_end_delivered: u64,
    /// Whether a round has begun since the last reset.
    in_round: bool,
    round_start: Instant,
    last_ack: Instant,
    /// The least RTT of this round so far, ns; judged once the round has
    /// [`DELAY_SAMPLES`] of them.
    round_min_rtt_ns: u64,
    samples: u32,
    /// Slow start has been left; nothing more to judge until a reset.
    found: bool,
}

impl LinuxHyStart {
    /// Judges one ACK taken in slow start. Returns whether slow start ends
    /// now (the caller sets ssthresh to cwnd). `rtt` is the ACK's RTT
    /// sample, `prior_delivered` what had been delivered when the newest
    /// packet it acknowledges was sent, `delivered` what has been
    /// delivered with it, `pacing_rate` the socket's pacing rate as the
    /// last ACK left it (Linux's `sk_pacing_rate`, which
    /// `tcp_update_pacing_rate()` sets after each ACK's window update),
    /// bytes/s.
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        rtt: Option<Duration>,
        prior_delivered: u64,
        delivered: u64,
        cwnd_packets: u64,
        pacing_rate: f64,
    ) -> bool {
        let Some(rtt) = rtt else {
            // Linux's hook runs only for ACKs with an RTT sample.
            return false;
        };
        let rtt_ns = crate::time::duration_to_nanos(rtt).max(1);
        if self.delay_min_ns == 0 || rtt_ns < self.delay_min_ns {
            self.delay_min_ns = rtt_ns;
        }
        if self.found {
            return false;
        }
        // Rounds are counted from the first ACK, below the low window too
        // (`hystart_update()` resets the round before it checks the
        // window), so that they follow the flights as the kernel's do.
        if !self.in_round || prior_delivered >= self.round_end_delivered {
            self.in_round = true;
            self.round_end_delivered = delivered;
            self.round_start = now;
            self.last_ack = now;
            self.round_min_rtt_ns = u64::MAX;
            self.samples = 0;
        }
        if cwnd_packets < LOW_WINDOW_PACKETS {
            return false;
        }
        // The ACK train: only an unbroken train counts, so a gap stops
        // `last_ack` from moving for the rest of the round. The threshold
        // is delay_min plus the TSO/GRO cushion, halved, as for a flow no
        // fq qdisc paces (the controller is not told whether one does).
        if now.nanos_since(self.last_ack) <= ACK_TRAIN_GAP_NS {
            self.last_ack = now;
            let threshold = (self.delay_min_ns + ack_delay_ns(pacing_rate)) / 2;
            if now.nanos_since(self.round_start) > threshold {
                self.found = true;
                return true;
            }
        }
        // The delay test on the least of the round's first samples.
        self.round_min_rtt_ns = self.round_min_rtt_ns.min(rtt_ns);
        if self.samples < DELAY_SAMPLES {
            self.samples += 1;
        } else {
            if self.round_min_rtt_ns > self.delay_min_ns + delay_threshold_ns(self.delay_min_ns) {
                self.found = true;
                return true;
            }
        }
        false
    }

    /// A timeout starts everything over, `delay_min` included (Linux's
    /// `bictcp_reset()` and `bictcp_hystart_reset()` on `TCP_CA_Loss`).
    pub(crate) fn reset(&mut self) {
        *self = LinuxHyStart::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// A socket's pacing rate well below 2 Gbit/s: the ACK train's
    /// cushion is the whole 1 ms.
    const RATE: f64 = 1e6;

    fn at(ms: f64) -> Instant {
        Instant::from_nanos((ms * MS as f64) as u64)
    }

    fn rtt(ms: f64) -> Option<Duration> {
        Some(Duration::from_nanos((ms * MS as f64) as u64))
    }

    /// ACKs 3 ms apart never form a train, so only the delay test can
    /// fire: the round's least RTT must pass delay_min + 5 ms (a 40 ms
    /// path: 40/8 = 5 ms, inside the 4-16 ms clamp), after 8 samples.
    #[test]
    fn the_delay_test_fires_when_a_rounds_rtt_passes_delay_min_plus_an_eighth() {
        let mut h = LinuxHyStart::default();
        // Round 1: RTT 40 ms sets delay_min; 44.9 ms stays under 45.
        let mut t = 0.0;
        let mut delivered = 0;
        for i in 0..20 {
            t += 3.0;
            delivered += 1448;
            let r = if i == 0 { 40.0 } else { 44.9 };
            assert!(!h.on_ack(at(t), rtt(r), 0, delivered, 20, RATE));
        }
        // Round 2 (its first ACK acknowledges a packet sent after round 1
        // began): the first 8 samples are 45.5 ms, so the 9th ends it.
        let start = delivered;
        let mut fired_at = None;
        for i in 0..20 {
            t += 3.0;
            delivered += 1448;
            if h.on_ack(at(t), rtt(45.5), start, delivered, 30, RATE) {
                fired_at = Some(i);
                break;
            }
        }
        assert_eq!(fired_at, Some(8));
    }

    /// Below 16 packets nothing is judged, and a found exit is not
    /// reported twice until a reset.
    #[test]
    fn small_windows_are_not_judged_and_an_exit_is_reported_once() {
        let mut h = LinuxHyStart::default();
        assert!(!h.on_ack(at(0.0), rtt(40.0), 0, 1448, 10, RATE));
        for i in 1..=20u64 {
            assert!(!h.on_ack(at(i as f64 * 3.0), rtt(80.0), 0, 1448 * i, 15, RATE));
        }
        let mut fired = 0;
        for i in 21..=60u64 {
            fired += u32::from(h.on_ack(at(i as f64 * 3.0), rtt(80.0), 0, 1448 * i, 16, RATE));
        }
        assert_eq!(fired, 1);
        h.reset();
        assert_eq!(h.delay_min_ns, 0);
    }

    /// Rounds follow the flights from the first ACK, below the low window
    /// too, as `hystart_update()` resets the round before it checks the
    /// window. Here round 1 starts at 10 packets and the window passes 16
    /// within it; an ACK for a packet sent after round 1 began starts
    /// round 2, whose high RTTs end slow start. Starting the first judged
    /// round only at 16 packets (as before) kept those ACKs in round 1,
    /// whose least RTT was low, and slow start went on: the simulated CUBIC
    /// left it a round early or late against the kernel's.
    #[test]
    fn rounds_are_counted_below_the_low_window_too() {
        let mut h = LinuxHyStart::default();
        let mut t = 0.0;
        // Round 1 starts with nothing delivered before; its ACKs
        // acknowledge packets sent before anything was delivered.
        let mut delivered = 1448;
        assert!(!h.on_ack(at(t), rtt(40.0), 0, delivered, 10, RATE));
        let round1_end = delivered;
        for cwnd in 11..=30u64 {
            t += 3.0;
            delivered += 1448;
            assert!(!h.on_ack(at(t), rtt(41.0), 0, delivered, cwnd, RATE));
        }
        // Round 2: packets sent once round 1 had begun, RTTs 60 ms.
        let mut fired_at = None;
        for i in 0..20 {
            t += 3.0;
            delivered += 1448;
            if h.on_ack(at(t), rtt(60.0), round1_end, delivered, 30, RATE) {
                fired_at = Some(i);
                break;
            }
        }
        assert_eq!(fired_at, Some(8), "round 2 judged on its own samples");
    }

    /// ACKs 1 ms apart on a 40 ms path: the train passes 20 ms (half of
    /// delay_min) at its 21st ACK after the round began, though the RTT
    /// never rises.
    #[test]
    fn an_unbroken_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        let mut h = LinuxHyStart::default();
        let mut fired_at = None;
        for i in 0..40u64 {
            if h.on_ack(at(100.0 + i as f64), rtt(40.0), 0, 1448 * (i + 1), 32, RATE) {
                fired_at = Some(i);
                break;
            }
        }
        assert_eq!(fired_at, Some(21));
        // A gap of 2.5 ms breaks the train for the rest of the round.
        let mut h = LinuxHyStart::default();
        let mut t = 100.0;
        for i in 0..40u64 {
            t += if i == 5 { 2.5 } else { 1.0 };
            assert!(
                !h.on_ack(at(t), rtt(40.0), 0, 1448 * (i + 1), 32, RATE),
                "ack {i}"
            );
        }
    }

    /// The train's threshold is half of delay_min plus the TSO/GRO
    /// cushion (`hystart_ack_delay()`): 1 ms below about 2 Gbit/s, the
    /// time four 64 kB bursts take above it, none before the socket has a
    /// rate. ACKs 0.25 ms apart on a 40 ms path: the train passes 20 ms
    /// at its 81st ACK and 20.5 ms at its 83rd.
    #[test]
    fn the_ack_trains_threshold_counts_linuxs_tso_cushion() {
        let fires_at = |rate: f64| {
            let mut h = LinuxHyStart::default();
            (0..200u64).find(|&i| {
                h.on_ack(
                    at(100.0 + i as f64 * 0.25),
                    rtt(40.0),
                    0,
                    1448 * (i + 1),
                    32,
                    rate,
                )
            })
        };
        assert_eq!(fires_at(RATE), Some(83), "cushion 1 ms");
        assert_eq!(fires_at(0.0), Some(81), "no rate yet: no cushion");
        // 1 GB/s: 4 x 65,536 B take 262 us, so the threshold is 20.13 ms.
        assert_eq!(fires_at(1e9), Some(81), "cushion 0.26 ms");
        assert_eq!(ack_delay_ns(1e9), 262_144);
        assert_eq!(ack_delay_ns(2e8), ACK_DELAY_CAP_NS);
    }
}
