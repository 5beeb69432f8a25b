//! Property tests: random event sequences with extreme values must never
//! panic or overflow (the test profile keeps overflow checks on), and the
//! controller's answers must stay sane.
//!
//! Every algorithm hears every input a transport can give: CE counts and
//! losses carried on an ACK, recovery points, spurious-loss undo,
//! persistent congestion, the pacer's next departure, a window-held send,
//! a handshake RTT, and a clock that steps back (`Instant`'s promise: a
//! caller whose time goes backwards must not crash the controller).

use congestion::{
    AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, LostPacket, RecoveryExit,
    RecoveryPoint, SentPacketState,
};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Event {
    /// Advance time by `dt_ns` (possibly 0) and send `n` packets.
    Send {
        dt_ns: u64,
        n: u8,
        app_limited: bool,
    },
    /// Advance time and acknowledge the `n` oldest outstanding packets;
    /// the ACK may also report CE marks, declare the `lost` packets after
    /// them lost, reach a recovery point, undo a spurious reduction,
    /// declare persistent congestion or say the sender is app-limited.
    Ack {
        dt_ns: u64,
        n: u8,
        rtt_ns: u64,
        ack_delay_ns: u64,
        ce: u64,
        lost: u8,
        ranges: u32,
        point: u8,
        spurious: bool,
        persistent: bool,
        app_limited: bool,
    },
    /// Declare the `n` oldest outstanding packets lost.
    Lose {
        n: u8,
    },
    Rto,
    AppLimited,
    Mss(u64),
    /// The clock steps back this far (a caller's bug the controller must
    /// survive).
    Backwards(u64),
    /// An undo, or persistent congestion, heard outside an ACK.
    Spurious,
    Persistent,
    /// The pacer's next departure, `ahead_ns` from now, releasing `burst`.
    Departure {
        ahead_ns: u64,
        burst: u64,
    },
    /// Data held for want of window.
    HeldByCwnd,
    /// A handshake RTT sample (a transport gives it once, before data;
    /// here at any time, as a careless one might).
    Handshake(u64),
    /// An ACK for a packet the sender never sent, with arbitrary state.
    Bogus {
        delivered: u64,
        sent_ns: u64,
        delivered_ns: u64,
        bytes: u64,
        rtt_ns: u64,
    },
}

fn time_step() -> impl Strategy<Value = u64> {
    // From "time does not advance" through 1 µs to 10 s.
    prop_oneof![
        Just(0u64),
        1u64..1_000,
        1_000u64..1_000_000,
        1_000_000u64..10_000_000_000
    ]
}

fn rtt() -> impl Strategy<Value = u64> {
    // 1 µs to 10 s.
    prop_oneof![
        1_000u64..1_000_000,
        1_000_000u64..200_000_000,
        200_000_000u64..10_000_000_000
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (time_step(), 1u8..64, any::<bool>()).prop_map(|(dt_ns, n, app_limited)| Event::Send { dt_ns, n, app_limited }),
        4 => (
            (time_step(), 1u8..64, rtt(), 0u64..50_000_000),
            (prop_oneof![4 => Just(0u64), 2 => 0u64..64, 1 => Just(u64::MAX)], prop_oneof![3 => Just(0u8), 1 => 1u8..8]),
            (prop_oneof![Just(0u32), 1u32..8, Just(u32::MAX)], prop_oneof![4 => Just(0u8), 1 => 1u8..3]),
            (prop::bool::weighted(0.05), prop::bool::weighted(0.02), prop::bool::weighted(0.1)),
        )
            .prop_map(|((dt_ns, n, rtt_ns, ack_delay_ns), (ce, lost), (ranges, point), (spurious, persistent, app_limited))| Event::Ack {
                dt_ns, n, rtt_ns, ack_delay_ns, ce, lost, ranges, point, spurious, persistent, app_limited,
            }),
        1 => (1u8..16).prop_map(|n| Event::Lose { n }),
        1 => Just(Event::Rto),
        1 => Just(Event::AppLimited),
        1 => (500u64..=9000).prop_map(Event::Mss),
        1 => prop_oneof![1u64..1_000_000, 1_000_000u64..20_000_000_000, Just(u64::MAX)].prop_map(Event::Backwards),
        1 => Just(Event::Spurious),
        1 => Just(Event::Persistent),
        1 => (0u64..1_000_000_000, 0u64..100_000).prop_map(|(ahead_ns, burst)| Event::Departure { ahead_ns, burst }),
        1 => Just(Event::HeldByCwnd),
        1 => prop_oneof![Just(0u64), rtt()].prop_map(Event::Handshake),
        1 => (any::<u64>(), any::<u64>(), any::<u64>(), 0u64..100_000, rtt()).prop_map(|(delivered, sent_ns, delivered_ns, bytes, rtt_ns)| Event::Bogus { delivered, sent_ns, delivered_ns, bytes, rtt_ns }),
    ]
}

fn algorithm() -> impl Strategy<Value = Algorithm> {
    prop::sample::select(Algorithm::ALL.to_vec())
}

fn check(cc: &Controller, acked_once: bool) -> Result<(), TestCaseError> {
    let mss = cc.mss_bytes();
    prop_assert!(
        cc.cwnd_bytes() >= mss,
        "cwnd {} below one packet ({mss})",
        cc.cwnd_bytes()
    );
    prop_assert!(cc.pacing_rate_bytes_per_sec() >= 1);
    prop_assert!(cc.send_quantum_bytes() >= 1);
    let s = cc.snapshot();
    prop_assert!(s.pacing_gain.is_finite() && s.pacing_gain > 0.0);
    prop_assert!(s.cwnd_gain.is_finite() && s.cwnd_gain > 0.0);
    if let Some(bw) = s.bw_estimate_bytes_per_sec {
        prop_assert!(bw.is_finite() && bw >= 0.0);
    }
    if acked_once {
        prop_assert!(s.pacing_rate_bytes_per_sec > 0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_never_panic_and_stay_sane(
        alg in algorithm(),
        mss in 500u64..=9000,
        seed in any::<u64>(),
        quic in any::<bool>(),
        transport_exit in any::<bool>(),
        events in prop::collection::vec(event(), 1..200),
    ) {
        // QUIC's configuration (RFC 9002's initial window and end of
        // recovery, srtt from the newest sample, the datagram size as
        // MSS) as well as TCP's, and the transport tracking recovery
        // episodes itself as well as the controller.
        let mut cfg = if quic { Config::for_quic(alg, mss) } else { Config::new(alg) };
        cfg.mss_bytes = mss;
        cfg.seed = seed;
        if transport_exit {
            cfg.recovery_exit = RecoveryExit::Transport;
        }
        let mut now: u64 = 0;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(now));
        let mut outstanding: VecDeque<(u64, SentPacketState)> = VecDeque::new();
        let mut in_flight: u64 = 0;
        let mut acked_once = false;
        let mut buf_a = Vec::new();
        let mut buf_l = Vec::new();
        for ev in events {
            match ev {
                Event::Send { dt_ns, n, app_limited } => {
                    now = now.saturating_add(dt_ns);
                    for i in 0..n {
                        let bytes = cc.mss_bytes();
                        let st = cc.on_packet_sent(Instant::from_nanos(now), bytes, in_flight, app_limited && i + 1 == n);
                        outstanding.push_back((bytes, st));
                        in_flight += bytes;
                    }
                }
                Event::Ack { dt_ns, n, rtt_ns, ack_delay_ns, ce, lost, ranges, point, spurious, persistent, app_limited } => {
                    now = now.saturating_add(dt_ns);
                    buf_a.clear();
                    let prior = in_flight;
                    for _ in 0..n {
                        let Some((bytes, state)) = outstanding.pop_front() else { break };
                        in_flight -= bytes;
                        buf_a.push(AckedPacket { bytes, state });
                    }
                    buf_l.clear();
                    for _ in 0..lost {
                        let Some((bytes, state)) = outstanding.pop_front() else { break };
                        in_flight -= bytes;
                        buf_l.push(LostPacket { bytes, state });
                    }
                    let point = match point {
                        0 => RecoveryPoint::NotReached,
                        1 => RecoveryPoint::Reached,
                        _ => RecoveryPoint::ReachedWithRepairsPending,
                    };
                    let ack = AckEvent::new(Instant::from_nanos(now), &buf_a, prior, in_flight)
                        .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::from_nanos(ack_delay_ns))
                        .ce(ce)
                        .lost(&buf_l, ranges)
                        .recovery_point(point)
                        .spurious_loss(spurious)
                        .persistent_congestion(persistent)
                        .app_limited(app_limited);
                    cc.on_ack(&ack);
                    acked_once |= !buf_a.is_empty();
                }
                Event::Lose { n } => {
                    buf_l.clear();
                    for _ in 0..n {
                        let Some((bytes, state)) = outstanding.pop_front() else { break };
                        in_flight -= bytes;
                        buf_l.push(LostPacket { bytes, state });
                    }
                    cc.on_timer_losses(Instant::from_nanos(now), &buf_l, 1, in_flight);
                }
                Event::Rto => {
                    buf_l.clear();
                    buf_l.extend(outstanding.drain(..).map(|(bytes, state)| LostPacket { bytes, state }));
                    in_flight = 0;
                    cc.on_retransmission_timeout(Instant::from_nanos(now), &buf_l, 1, 0);
                }
                Event::AppLimited => cc.on_app_limited(in_flight),
                Event::Mss(m) => cc.on_mss_change(m),
                Event::Backwards(back_ns) => now = now.saturating_sub(back_ns),
                Event::Spurious => cc.on_spurious_loss(Instant::from_nanos(now)),
                Event::Persistent => cc.on_persistent_congestion(Instant::from_nanos(now), in_flight),
                Event::Departure { ahead_ns, burst } => {
                    cc.set_next_departure(Instant::from_nanos(now.saturating_add(ahead_ns)), burst)
                }
                Event::HeldByCwnd => cc.on_held_by_cwnd(Instant::from_nanos(now), in_flight),
                Event::Handshake(rtt_ns) => cc.on_handshake_rtt(Instant::from_nanos(now), Duration::from_nanos(rtt_ns)),
                Event::Bogus { delivered, sent_ns, delivered_ns, bytes, rtt_ns } => {
                    let state = SentPacketState {
                        sent_time: Instant::from_nanos(sent_ns),
                        delivered_bytes: delivered,
                        delivered_time: Instant::from_nanos(delivered_ns),
                        first_sent_time: Instant::from_nanos(sent_ns / 2),
                        is_app_limited: delivered % 2 == 0,
                        bytes_in_flight: delivered,
                        lost_bytes: 0,
                        delivered_packets: 0,
                        delivered_ce_packets: 0,
                    };
                    let acked = [AckedPacket { bytes, state }];
                    cc.on_ack(&AckEvent::new(Instant::from_nanos(now), &acked, in_flight.saturating_add(bytes), in_flight).rtt(Some(Duration::from_nanos(rtt_ns)), Duration::ZERO));
                }
            }
            check(&cc, acked_once)?;
        }
    }

    /// A steady fixed-rate path at any rate from 1 kbit/s to 100 Gbit/s and
    /// any RTT from 1 µs to 10 s: after the first ACK the controller's
    /// answers are sane, and BBR's bandwidth estimate never exceeds the rate
    /// the ACK clock actually delivered.
    #[test]
    fn steady_paths_across_extreme_rates_and_rtts(
        alg in algorithm(),
        rate_bps in prop_oneof![1_000f64..1e6, 1e6f64..1e9, 1e9f64..1e11],
        rtt_ns in rtt(),
        mss in 500u64..=9000,
    ) {
        let mut cfg = Config::new(alg);
        cfg.mss_bytes = mss;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(0));
        let spacing_ns = ((mss as f64 * 8.0 / rate_bps) * 1e9).max(1.0) as u64;
        let mut now = 0u64;
        let mut window: VecDeque<(u64, SentPacketState)> = VecDeque::new();
        let rtt_pkts = (rtt_ns / spacing_ns).clamp(1, 2000);
        let mut in_flight = 0u64;
        for _ in 0..(3 * rtt_pkts + 50) {
            // Keep rtt_pkts in flight: one ACK releases one send.
            while (window.len() as u64) < rtt_pkts {
                let st = cc.on_packet_sent(Instant::from_nanos(now), mss, in_flight, false);
                window.push_back((mss, st));
                in_flight += mss;
            }
            now += spacing_ns;
            let (bytes, state) = window.pop_front().unwrap();
            in_flight -= bytes;
            let rtt = Duration::from_nanos(now - state.sent_time.as_nanos());
            let acked = [AckedPacket { bytes, state }];
            cc.on_ack(&AckEvent::new(Instant::from_nanos(now), &acked, in_flight + bytes, in_flight).rtt(Some(rtt), Duration::ZERO));
            check(&cc, true)?;
        }
        if let Some(bw) = cc.snapshot().bw_estimate_bytes_per_sec {
            // The ACK clock delivers one packet per spacing; allow 1 % for
            // integer-ns spacing.
            let ack_rate = mss as f64 * 1e9 / spacing_ns as f64;
            prop_assert!(bw <= ack_rate * 1.01, "bw {bw} > ack rate {ack_rate}");
        }
    }
}
