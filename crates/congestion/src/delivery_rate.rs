//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation,
//! now folded into draft-ietf-ccwg-bbr §4.5; Linux `net/ipv4/tcp_rate.c`).
//!
//! BBR's bandwidth model is only as good as its rate samples. Each packet
//! remembers, at send time, how much had been delivered and when; when it is
//! acknowledged, the data delivered in between divided by the elapsed time is
//! one delivery-rate sample. Two refinements make the samples trustworthy:
//!
//! - The interval is the **larger** of the send-side and ACK-side elapsed
//!   times, so neither a send burst nor an ACK burst (compression,
//!   aggregation) can inflate the rate.
//! - Samples over an interval shorter than min_rtt are discarded: such a short
//!   interval cannot have covered a full round trip and overestimates.
//!
//! Packets sent while the application had nothing more to send are marked
//! app-limited, so BBR can tell "the path is slow" from "we were idle".
//!
//! All quantities are in bytes, as in QUIC; Linux counts packets.

use crate::float::u64_as_f64;
use crate::time::{duration_to_nanos, Instant, NANOS_PER_SEC};
use core::time::Duration;

/// The sampler's state stored with each sent packet, returned by
/// [`DeliveryRateSampler::on_packet_sent`] and handed back on ACK or loss.
///
/// A transport keeps this beside its own per-packet metadata; it is small
/// and `Copy` so that costs nothing per packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentPacketState {
    /// When the packet was sent.
    pub sent_time: Instant,
    /// Bytes delivered (acknowledged) in total when the packet was sent.
    pub delivered_bytes: u64,
    /// When `delivered_bytes` was last updated, as of the send.
    pub delivered_time: Instant,
    /// Send time of the packet that opened the current send interval.
    pub first_sent_time: Instant,
    /// Whether the application was limiting the sending rate at send time.
    pub is_app_limited: bool,
    /// Bytes in flight just after this packet was sent (BBR uses it to judge
    /// how full the pipe was; the draft's `P.tx_in_flight`).
    pub bytes_in_flight: u64,
    /// Bytes declared lost in total when this packet was sent (the draft's
    /// `P.lost`): BBRv3 measures the loss rate since a packet left as the
    /// connection's lost bytes now minus this.
    pub lost_bytes: u64,
    /// Packets delivered in total when this packet was sent (Linux
    /// `tx.delivered`); with [`SentPacketState::delivered_ce_packets`] it
    /// gives a sample's CE fraction over its own interval.
    pub delivered_packets: u64,
    /// CE-marked packets delivered in total when this packet was sent
    /// (Linux v3 `tx.delivered_ce`).
    pub delivered_ce_packets: u64,
}

/// One packet newly acknowledged by an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckedPacket {
    /// The packet's size in bytes.
    pub bytes: u64,
    /// What the sampler recorded when it was sent.
    pub state: SentPacketState,
}

/// One packet declared lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostPacket {
    /// The packet's size in bytes.
    pub bytes: u64,
    /// What the sampler recorded when it was sent.
    pub state: SentPacketState,
}

/// A delivery-rate sample, produced once per ACK batch.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RateSample {
    /// Bytes delivered over `interval` (0 if no packet was newly acked).
    pub delivered_bytes: u64,
    /// The sampling interval in ns: max(send elapsed, ACK elapsed). `None`
    /// when the sample is invalid (nothing acked, or shorter than min_rtt).
    pub interval_ns: Option<u64>,
    /// `delivered_bytes` as of the send of the most recently sent acked
    /// packet; BBR counts round trips by it.
    pub prior_delivered_bytes: u64,
    /// Whether that packet was sent while app-limited.
    pub is_app_limited: bool,
    /// Bytes newly acknowledged by this ACK batch.
    pub acked_bytes: u64,
    /// Bytes declared lost since the previous sample.
    pub lost_bytes: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// Bytes in flight when the most recently sent acked packet left.
    pub tx_in_flight: u64,
    /// The connection's lost bytes when that packet left (its
    /// [`SentPacketState::lost_bytes`]): the total lost now minus this is
    /// the draft's `RS.lost`, the data lost over the packet's round trip.
    pub tx_lost_bytes: u64,
    /// Packets delivered over the sample's interval (Linux
    /// `rs->delivered`).
    pub delivered_packets: u64,
    /// CE-marked packets among them (Linux v3 `rs->delivered_ce`): BBRv3
    /// judges each sample's CE fraction on its own interval, as it judges
    /// its loss rate (`bbr_is_inflight_too_high()`).
    pub delivered_ce_packets: u64,
}

impl RateSample {
    /// The sample's rate in bytes per second, if it is valid.
    pub fn delivery_rate_bytes_per_sec(&self) -> Option<f64> {
        self.delivery_rate_bytes_per_ns().map(|r| r * NANOS_PER_SEC)
    }

    /// The sample's rate in bytes per nanosecond, if it is valid (BBR's
    /// internal unit: a BDP is then one multiplication by an RTT in ns).
    pub fn delivery_rate_bytes_per_ns(&self) -> Option<f64> {
        let ns = self.interval_ns?;
        if ns == 0 {
            return None;
        }
        // Both converted as `as` does, by its cheaper equal
        // (`u64_as_f64`): on every ACK of BBR and BBRv3.
        Some(u64_as_f64(self.delivered_bytes) / u64_as_f64(ns))
    }
}

/// The connection-wide half of delivery-rate estimation.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRateSampler {
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    /// Non-zero while app-limited: the `delivered` value after which the
    /// app-limited bubble has left the pipe.
    app_limited_until: u64,
    lost: u64,
    pending_lost: u64,
    delivered_packets: u64,
    delivered_ce_packets: u64,
}

impl DeliveryRateSampler {
    /// A sampler for a fresh connection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Total bytes delivered so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered
    }

    /// Total bytes declared lost so far.
    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }

    /// Total packets delivered so far.
    pub fn delivered_packets(&self) -> u64 {
        self.delivered_packets
    }

    /// Total CE-marked packets delivered so far.
    pub fn delivered_ce_packets(&self) -> u64 {
        self.delivered_ce_packets
    }

    /// The ACK about to be sampled reports `packets` newly CE-marked
    /// packets (Linux counts `delivered_ce` before `tcp_rate_gen()`).
    pub fn on_delivered_ce(&mut self, packets: u64) {
        self.delivered_ce_packets = self.delivered_ce_packets.saturating_add(packets);
    }

    /// Whether an app-limited bubble is still in the pipe.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// Records a send and returns the state to store with the packet.
    /// `in_flight_before` is the bytes in flight before this packet.
    pub fn on_packet_sent(
        &mut self,
        now: Instant,
        bytes: u64,
        in_flight_before: u64,
    ) -> SentPacketState {
        self.on_packet_sent_when(now, bytes, in_flight_before, in_flight_before == 0)
    }

    /// [`DeliveryRateSampler::on_packet_sent`], restarting the intervals
    /// only when `nothing_unacked` (no packet in flight and none lost and
    /// unrepaired), as `tcp_rate_skb_sent()` does on `packets_out == 0`.
    pub fn on_packet_sent_when(
        &mut self,
        now: Instant,
        bytes: u64,
        in_flight_before: u64,
        nothing_unacked: bool,
    ) -> SentPacketState {
        // Starting from an empty pipe: the send and ACK intervals both
        // restart now, or the idle period would be counted as delivery time.
        if nothing_unacked {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        SentPacketState {
            sent_time: now,
            delivered_bytes: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited_until != 0,
            bytes_in_flight: in_flight_before.saturating_add(bytes),
            lost_bytes: self.lost,
            delivered_packets: self.delivered_packets,
            delivered_ce_packets: self.delivered_ce_packets,
        }
    }

    /// Marks the connection app-limited: the application had nothing more to
    /// send although the window allowed it. Samples from packets sent until
    /// this bubble is acked are marked app-limited.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = self.delivered.saturating_add(bytes_in_flight).max(1);
    }

    /// Records packets declared lost; they are reported in the next sample.
    pub fn on_packets_lost(&mut self, lost: &[LostPacket]) {
        for p in lost {
            self.lost = self.lost.saturating_add(p.bytes);
            self.pending_lost = self.pending_lost.saturating_add(p.bytes);
        }
    }

    /// Leaves out of the next sample the losses recorded so far (they were
    /// marked between ACKs, by a timer). The running total keeps them.
    pub fn forget_pending_losses(&mut self) {
        self.pending_lost = 0;
    }

    /// Records one ACK batch and computes its rate sample.
    ///
    /// `min_rtt` is the connection's minimum RTT, if known: shorter intervals
    /// are discarded. `prior_in_flight` is the bytes in flight before the ACK.
    pub fn on_ack(
        &mut self,
        now: Instant,
        acked: &[AckedPacket],
        min_rtt: Option<Duration>,
        prior_in_flight: u64,
    ) -> RateSample {
        self.on_ack_ns(now, acked, min_rtt.map(duration_to_nanos), prior_in_flight)
    }

    /// [`DeliveryRateSampler::on_ack`] with min_rtt in nanoseconds (the
    /// per-ACK path avoids `Duration` conversions).
    ///
    /// Always inlined: the controller calls it once per ACK, and as a call
    /// about a quarter of its cost went to register saves and to writing
    /// the returned sample twice through memory (zeroed, then filled);
    /// inlined, the sample is built in place (`examples/ack_loop`: 28
    /// instructions fewer per ACK, of about 105, for every algorithm).
    #[inline(always)]
    pub fn on_ack_ns(
        &mut self,
        now: Instant,
        acked: &[AckedPacket],
        min_rtt_ns: Option<u64>,
        prior_in_flight: u64,
    ) -> RateSample {
        // Written only when not already 0: the controller zeroes it at
        // the start of each ACK, so on an ACK without losses the
        // compiler drops the test and the second store.
        let lost_bytes = self.pending_lost;
        if lost_bytes != 0 {
            self.pending_lost = 0;
        }
        // The most recently sent of the acked packets defines the sample:
        // it has the freshest view of the pipe (tcp_rate_skb_delivered()).
        //
        // A lone packet (most ACKs of a transport that acknowledges every
        // packet or two) is its own newest, and its size is the sum the
        // loop would take (`0.saturating_add(bytes)` is `bytes`), so it
        // skips the loop and its `Option`.
        let (acked_bytes, newest) = match acked {
            // A reference in both arms: with a copy in this one, the two
            // met as a pointer per field.
            [p] => (p.bytes, &p.state),
            _ => {
                let mut acked_bytes = 0u64;
                let mut newest: Option<&SentPacketState> = None;
                for p in acked {
                    acked_bytes = acked_bytes.saturating_add(p.bytes);
                    let newer = match newest {
                        None => true,
                        Some(n) => {
                            (p.state.delivered_bytes, p.state.sent_time)
                                > (n.delivered_bytes, n.sent_time)
                        }
                    };
                    if newer {
                        newest = Some(&p.state);
                    }
                }
                let Some(newest) = newest else {
                    return RateSample {
                        lost_bytes,
                        prior_in_flight,
                        acked_bytes,
                        ..RateSample::default()
                    };
                };
                (acked_bytes, newest)
            }
        };
        self.delivered = self.delivered.saturating_add(acked_bytes);
        self.delivered_packets = self.delivered_packets.saturating_add(acked.len() as u64);
        self.delivered_time = now;
        // The next send interval starts from this packet's send time.
        self.first_sent_time = newest.sent_time;
        // The bubble has been delivered: later samples are not app-limited.
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }

        let delivered_bytes = self.delivered.saturating_sub(newest.delivered_bytes);
        let delivered_packets = self
            .delivered_packets
            .saturating_sub(newest.delivered_packets);
        let send_elapsed = newest.sent_time.nanos_since(newest.first_sent_time);
        let ack_elapsed = now.nanos_since(newest.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // Valid when the interval is positive and not shorter than
        // min_rtt: `interval > 0 && !(interval < m)` for a known m, and
        // `interval > 0` alone without one, are both `interval >=
        // max(m, 1)` with m = 0 standing for "unknown" (no u64 is below
        // 0).
        let floor = min_rtt_ns.unwrap_or(0).max(1);
        // Built in one literal, once every field is known: filled in
        // after a `..RateSample::default()`, the sample was written
        // twice, zeroes first.
        RateSample {
            delivered_bytes,
            interval_ns: (interval >= floor && delivered_bytes > 0).then_some(interval),
            prior_delivered_bytes: newest.delivered_bytes,
            is_app_limited: newest.is_app_limited,
            acked_bytes,
            lost_bytes,
            prior_in_flight,
            tx_in_flight: newest.bytes_in_flight,
            tx_lost_bytes: newest.lost_bytes,
            delivered_packets,
            // Without any CE delivered (no ECN: most connections) it is
            // 0 however computed (`0.saturating_sub(x)` is 0), so one test
            // skips the subtraction and the min.
            delivered_ce_packets: if self.delivered_ce_packets == 0 {
                0
            } else {
                self.delivered_ce_packets
                    .saturating_sub(newest.delivered_ce_packets)
                    .min(delivered_packets)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// The interval restarts on a send into an empty pipe, but not when
    /// the pipe is empty only because everything was declared lost.
    #[test]
    fn interval_restarts_only_when_nothing_is_unacked() {
        for (nothing_unacked, first_sent) in [(true, t(500)), (false, t(100))] {
            let mut s = DeliveryRateSampler::new();
            let a = s.on_packet_sent(t(100), 1000, 0);
            s.on_ack_ns(
                t(140),
                &[AckedPacket {
                    bytes: 1000,
                    state: a,
                }],
                None,
                1000,
            );
            // Everything later was lost to a timeout; the repair goes out
            // at 500 ms into an empty flight.
            let r = s.on_packet_sent_when(t(500), 1000, 0, nothing_unacked);
            assert_eq!(r.first_sent_time, first_sent, "{nothing_unacked}");
            assert_eq!(
                r.delivered_time,
                if nothing_unacked { t(500) } else { t(140) }
            );
        }
    }

    /// A sample's CE count covers its own interval, from the ACKed
    /// packet's send to now (Linux v3 `rs->delivered_ce`), not the whole
    /// connection's nor this ACK's alone.
    #[test]
    fn ce_marks_are_counted_over_the_samples_interval() {
        let mut s = DeliveryRateSampler::new();
        let a = s.on_packet_sent(t(0), 1000, 0);
        s.on_delivered_ce(1);
        let rs = s.on_ack_ns(
            t(40),
            &[AckedPacket {
                bytes: 1000,
                state: a,
            }],
            None,
            1000,
        );
        assert_eq!((rs.delivered_packets, rs.delivered_ce_packets), (1, 1));
        // b left after that mark; c and d follow; only d's ACK reports CE.
        let b = s.on_packet_sent(t(41), 1000, 0);
        let c = s.on_packet_sent(t(42), 1000, 1000);
        let d = s.on_packet_sent(t(43), 1000, 2000);
        s.on_ack_ns(
            t(81),
            &[AckedPacket {
                bytes: 1000,
                state: b,
            }],
            None,
            3000,
        );
        s.on_ack_ns(
            t(82),
            &[AckedPacket {
                bytes: 1000,
                state: c,
            }],
            None,
            2000,
        );
        s.on_delivered_ce(1);
        let rs = s.on_ack_ns(
            t(83),
            &[AckedPacket {
                bytes: 1000,
                state: d,
            }],
            None,
            1000,
        );
        assert_eq!((rs.delivered_packets, rs.delivered_ce_packets), (3, 1));
        assert_eq!((s.delivered_packets(), s.delivered_ce_packets()), (4, 2));
    }

    #[test]
    fn interval_is_max_of_send_and_ack_elapsed() {
        let mut s = DeliveryRateSampler::new();
        // ACK side wins: ten packets sent over 9 ms, all acked in one
        // compressed ACK at 59 ms. Send elapsed (last packet) = 9 ms; ACK
        // elapsed = 59 - 0 (delivered_time was set when the pipe was empty).
        let acked: Vec<AckedPacket> = (0..10)
            .map(|i| AckedPacket {
                bytes: 1000,
                state: s.on_packet_sent(t(i), 1000, i * 1000),
            })
            .collect();
        let rs = s.on_ack(t(59), &acked, None, 10_000);
        assert_eq!(rs.delivered_bytes, 10_000);
        assert_eq!(rs.interval_ns, Some(59 * MS));

        // Send side wins: d opens an interval at 100 from an empty pipe; e is
        // sent at 160 with d in flight; d is acked at 161; f is sent right
        // after that ACK, so its send interval starts at d's send (100) but
        // its ACK interval starts at d's ACK (161).
        let d = s.on_packet_sent(t(100), 1000, 0);
        let _e = s.on_packet_sent(t(160), 1000, 1000);
        let _ = s.on_ack(
            t(161),
            &[AckedPacket {
                bytes: 1000,
                state: d,
            }],
            None,
            1000,
        );
        let f = s.on_packet_sent(t(162), 1000, 1000);
        assert_eq!((f.first_sent_time, f.delivered_time), (t(100), t(161)));
        let rs = s.on_ack(
            t(163),
            &[AckedPacket {
                bytes: 1000,
                state: f,
            }],
            None,
            1000,
        );
        // send: 162 - 100 = 62 ms; ack: 163 - 161 = 2 ms. An ACK burst alone
        // would have claimed 1000 B / 2 ms; the send side caps it.
        assert_eq!(rs.interval_ns, Some(62 * MS));
        assert_eq!(
            rs.delivered_bytes, 1000,
            "only f was delivered since f was sent"
        );
    }

    #[test]
    fn samples_shorter_than_min_rtt_are_discarded() {
        let mut s = DeliveryRateSampler::new();
        let a = s.on_packet_sent(t(0), 1000, 0);
        let rs = s.on_ack(
            t(10),
            &[AckedPacket {
                bytes: 1000,
                state: a,
            }],
            Some(Duration::from_millis(20)),
            1000,
        );
        assert_eq!(rs.interval_ns, None);
        assert_eq!(rs.delivery_rate_bytes_per_sec(), None);
        assert_eq!(rs.acked_bytes, 1000, "acked bytes still count");
        let b = s.on_packet_sent(t(10), 1000, 0);
        let rs = s.on_ack(
            t(30),
            &[AckedPacket {
                bytes: 1000,
                state: b,
            }],
            Some(Duration::from_millis(20)),
            1000,
        );
        assert_eq!(rs.interval_ns, Some(20 * MS));
        assert_eq!(rs.delivery_rate_bytes_per_sec(), Some(50_000.0));
    }

    #[test]
    fn app_limited_marking_lasts_until_bubble_is_delivered() {
        let mut s = DeliveryRateSampler::new();
        let a = s.on_packet_sent(t(0), 1000, 0);
        assert!(!a.is_app_limited);
        // App runs dry with 1000 bytes in flight: bubble ends after 1000 delivered.
        s.on_app_limited(1000);
        assert!(s.is_app_limited());
        let b = s.on_packet_sent(t(1), 1000, 1000);
        assert!(b.is_app_limited);
        let rs = s.on_ack(
            t(10),
            &[AckedPacket {
                bytes: 1000,
                state: a,
            }],
            None,
            2000,
        );
        assert!(!rs.is_app_limited, "a was sent before the bubble");
        // delivered == 1000, not yet > 1000: still app-limited.
        assert!(s.is_app_limited());
        let c = s.on_packet_sent(t(11), 1000, 1000);
        assert!(c.is_app_limited);
        let rs = s.on_ack(
            t(12),
            &[AckedPacket {
                bytes: 1000,
                state: b,
            }],
            None,
            2000,
        );
        assert!(rs.is_app_limited, "b was sent inside the bubble");
        assert!(!s.is_app_limited(), "2000 > 1000: bubble delivered");
        let d = s.on_packet_sent(t(13), 1000, 1000);
        assert!(!d.is_app_limited);
    }

    #[test]
    fn losses_reported_once_in_next_sample() {
        let mut s = DeliveryRateSampler::new();
        let a = s.on_packet_sent(t(0), 1000, 0);
        let b = s.on_packet_sent(t(1), 1000, 1000);
        s.on_packets_lost(&[LostPacket {
            bytes: 1000,
            state: a,
        }]);
        let rs = s.on_ack(
            t(20),
            &[AckedPacket {
                bytes: 1000,
                state: b,
            }],
            None,
            1000,
        );
        assert_eq!(rs.lost_bytes, 1000);
        assert_eq!(s.lost_bytes(), 1000);
        let rs = s.on_ack(t(21), &[], None, 0);
        assert_eq!(rs.lost_bytes, 0);
        assert_eq!(rs.interval_ns, None);
    }
}
