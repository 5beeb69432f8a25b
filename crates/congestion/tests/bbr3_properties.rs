//! Property tests for `bbr3` with both profiles: random event sequences
//! with extreme values (time steps of 0 to 10 s, RTTs of 1 µs to 10 s,
//! MSS 500–9000, CE counts and loss ranges up to u32/u64 extremes, bogus
//! send state, spurious undo, recovery points, pacer departures) must never
//! panic or overflow (the test profile keeps overflow checks on), and the
//! answers and the model stay sane. As `properties.rs` does for every
//! algorithm with its default configuration; this adds bbr3's own inputs.

use congestion::{
    AckEvent, AckedPacket, Algorithm, Bbr3Config, Config, Controller, Instant, LostPacket, Mode,
    RecoveryExit, RecoveryPoint, SentPacketState,
};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Event {
    Send {
        dt_ns: u64,
        n: u8,
        app_limited: bool,
    },
    Ack {
        dt_ns: u64,
        n: u8,
        rtt_ns: u64,
        ack_delay_ns: u64,
        ce: u64,
    },
    Lose {
        n: u8,
        ranges: u32,
    },
    Rto,
    AppLimited,
    Mss(u64),
    Spurious,
    RecoveryPoint {
        still_lost: bool,
    },
    Departure {
        ahead_ns: u64,
        burst: u64,
    },
    Bogus {
        delivered: u64,
        sent_ns: u64,
        bytes: u64,
        in_flight: u64,
        lost: u64,
        rtt_ns: u64,
    },
}

fn time_step() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        1u64..1_000,
        1_000u64..1_000_000,
        1_000_000u64..10_000_000_000
    ]
}

fn rtt() -> impl Strategy<Value = u64> {
    prop_oneof![
        1_000u64..1_000_000,
        1_000_000u64..200_000_000,
        200_000_000u64..10_000_000_000
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (time_step(), 1u8..64, any::<bool>()).prop_map(|(dt_ns, n, app_limited)| Event::Send { dt_ns, n, app_limited }),
        4 => (time_step(), 1u8..64, rtt(), 0u64..50_000_000, prop_oneof![Just(0u64), 0u64..64, Just(u64::MAX)])
            .prop_map(|(dt_ns, n, rtt_ns, ack_delay_ns, ce)| Event::Ack { dt_ns, n, rtt_ns, ack_delay_ns, ce }),
        2 => (1u8..16, prop_oneof![Just(0u32), 1u32..8, Just(u32::MAX)]).prop_map(|(n, ranges)| Event::Lose { n, ranges }),
        1 => Just(Event::Rto),
        1 => Just(Event::AppLimited),
        1 => (500u64..=9000).prop_map(Event::Mss),
        1 => Just(Event::Spurious),
        1 => any::<bool>().prop_map(|still_lost| Event::RecoveryPoint { still_lost }),
        1 => (0u64..1_000_000_000, 0u64..100_000).prop_map(|(ahead_ns, burst)| Event::Departure { ahead_ns, burst }),
        1 => (any::<u64>(), any::<u64>(), 0u64..100_000, any::<u64>(), any::<u64>(), rtt())
            .prop_map(|(delivered, sent_ns, bytes, in_flight, lost, rtt_ns)| Event::Bogus { delivered, sent_ns, bytes, in_flight, lost, rtt_ns }),
    ]
}

fn check(cc: &Controller) -> Result<(), TestCaseError> {
    let mss = cc.mss_bytes();
    prop_assert!(
        cc.cwnd_bytes() >= mss,
        "cwnd {} < mss {mss}",
        cc.cwnd_bytes()
    );
    prop_assert!(cc.pacing_rate_bytes_per_sec() >= 1);
    prop_assert!(cc.send_quantum_bytes() >= 1);
    let s = cc.snapshot();
    prop_assert!(matches!(
        s.mode,
        Mode::Startup
            | Mode::Drain
            | Mode::ProbeBwDown
            | Mode::ProbeBwCruise
            | Mode::ProbeBwRefill
            | Mode::ProbeBwUp
            | Mode::ProbeRtt
    ));
    prop_assert!(s.pacing_gain.is_finite() && s.pacing_gain > 0.0);
    prop_assert!(s.cwnd_gain.is_finite() && s.cwnd_gain > 0.0);
    if let Some(bw) = s.bw_estimate_bytes_per_sec {
        prop_assert!(bw.is_finite() && bw >= 0.0);
    }
    let b = s.bbr3.expect("bbr3 snapshot");
    prop_assert!(b.bw_bytes_per_sec.is_finite() && b.bw_bytes_per_sec >= 0.0);
    if let Some(x) = b.bw_shortterm_bytes_per_sec {
        prop_assert!(x.is_finite() && x >= 0.0);
    }
    if let Some(a) = b.ecn_alpha {
        prop_assert!((0.0..=1.0).contains(&a));
    }
    prop_assert!(b.bw_probe_wait <= Duration::from_secs(3));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn bbr3_random_event_sequences_never_panic_and_stay_sane(
        linux in any::<bool>(),
        transport_exit in any::<bool>(),
        ecn_capable in any::<bool>(),
        mss in 500u64..=9000,
        seed in any::<u64>(),
        events in prop::collection::vec(event(), 1..250),
    ) {
        let mut cfg = Config::new(Algorithm::Bbr3);
        cfg.bbr3 = if linux { Bbr3Config::linux_v3() } else { Bbr3Config::draft() };
        cfg.bbr3.ecn_capable = ecn_capable;
        if transport_exit {
            cfg.recovery_exit = RecoveryExit::Transport;
        }
        cfg.mss_bytes = mss;
        cfg.seed = seed;
        let mut now: u64 = 0;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(now));
        let mut outstanding: VecDeque<(u64, SentPacketState)> = VecDeque::new();
        let mut in_flight: u64 = 0;
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
                Event::Ack { dt_ns, n, rtt_ns, ack_delay_ns, ce } => {
                    now = now.saturating_add(dt_ns);
                    buf_a.clear();
                    for _ in 0..n {
                        let Some((bytes, state)) = outstanding.pop_front() else { break };
                        in_flight -= bytes;
                        buf_a.push(AckedPacket { bytes, state });
                    }
                    let prior = in_flight + buf_a.iter().map(|a| a.bytes).sum::<u64>();
                    let ack = AckEvent::new(Instant::from_nanos(now), &buf_a, prior, in_flight)
                        .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::from_nanos(ack_delay_ns))
                        .ce(ce);
                    cc.on_ack(&ack);
                }
                Event::Lose { n, ranges } => {
                    buf_l.clear();
                    for _ in 0..n {
                        let Some((bytes, state)) = outstanding.pop_front() else { break };
                        in_flight -= bytes;
                        buf_l.push(LostPacket { bytes, state });
                    }
                    cc.on_timer_losses(Instant::from_nanos(now), &buf_l, ranges, in_flight);
                }
                Event::Rto => {
                    buf_l.clear();
                    buf_l.extend(outstanding.drain(..).map(|(bytes, state)| LostPacket { bytes, state }));
                    in_flight = 0;
                    cc.on_retransmission_timeout(Instant::from_nanos(now), &buf_l, 1, 0);
                }
                Event::AppLimited => cc.on_app_limited(in_flight),
                Event::Mss(m) => cc.on_mss_change(m),
                Event::Spurious => cc.on_spurious_loss(Instant::from_nanos(now)),
                Event::RecoveryPoint { still_lost } => {
                    // Reached on an ACK that acknowledges nothing.
                    let point = if still_lost {
                        RecoveryPoint::ReachedWithRepairsPending
                    } else {
                        RecoveryPoint::Reached
                    };
                    cc.on_ack(&AckEvent::new(Instant::from_nanos(now), &[], in_flight, in_flight).recovery_point(point))
                }
                Event::Departure { ahead_ns, burst } => {
                    cc.set_next_departure(Instant::from_nanos(now.saturating_add(ahead_ns)), burst)
                }
                Event::Bogus { delivered, sent_ns, bytes, in_flight: tx, lost, rtt_ns } => {
                    let state = SentPacketState {
                        sent_time: Instant::from_nanos(sent_ns),
                        delivered_bytes: delivered,
                        delivered_time: Instant::from_nanos(sent_ns / 3),
                        first_sent_time: Instant::from_nanos(sent_ns / 2),
                        is_app_limited: delivered % 2 == 0,
                        bytes_in_flight: tx,
                        lost_bytes: lost,
                        delivered_packets: 0,
                        delivered_ce_packets: 0,
                    };
                    // Bogus packets are both lost and acknowledged, on one ACK.
                    let lost = [LostPacket { bytes, state }];
                    let acked = [AckedPacket { bytes, state }];
                    let ack = AckEvent::new(Instant::from_nanos(now), &acked, in_flight.saturating_add(bytes), in_flight)
                        .rtt(Some(Duration::from_nanos(rtt_ns)), Duration::ZERO)
                        .lost(&lost, 1);
                    cc.on_ack(&ack);
                }
            }
            check(&cc)?;
        }
    }

    /// A steady path from 1 kbit/s to 100 Gbit/s and 1 µs to 10 s RTT, with
    /// a random CE fraction and random losses: sane answers, and max_bw
    /// never above the rate the ACK clock delivered (1 % for integer-ns
    /// spacing).
    #[test]
    fn bbr3_steady_paths_with_ce_and_loss(
        linux in any::<bool>(),
        rate_bps in prop_oneof![1_000f64..1e6, 1e6f64..1e9, 1e9f64..1e11],
        rtt_ns in rtt(),
        mss in 500u64..=9000,
        ce_every in 0u64..20,
        lose_every in 0u64..50,
    ) {
        let mut cfg = Config::new(Algorithm::Bbr3);
        cfg.bbr3 = if linux { Bbr3Config::linux_v3() } else { Bbr3Config::draft() };
        cfg.bbr3.ecn_capable = true;
        cfg.mss_bytes = mss;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(0));
        let spacing_ns = ((mss as f64 * 8.0 / rate_bps) * 1e9).max(1.0) as u64;
        let mut now = 0u64;
        let mut window: VecDeque<(u64, SentPacketState)> = VecDeque::new();
        let rtt_pkts = (rtt_ns / spacing_ns).clamp(1, 2000);
        let mut in_flight = 0u64;
        for i in 0..(3 * rtt_pkts + 50) {
            while (window.len() as u64) < rtt_pkts {
                let st = cc.on_packet_sent(Instant::from_nanos(now), mss, in_flight, false);
                window.push_back((mss, st));
                in_flight += mss;
            }
            now += spacing_ns;
            let (bytes, state) = window.pop_front().unwrap();
            in_flight -= bytes;
            let prior = in_flight + bytes;
            let mut lost = Vec::new();
            if lose_every > 0 && i % lose_every == 0 {
                if let Some((b, s)) = window.pop_back() {
                    in_flight -= b;
                    lost.push(LostPacket { bytes: b, state: s });
                }
            }
            let ce = u64::from(ce_every > 0 && i % ce_every == 0);
            let rtt = Duration::from_nanos(now - state.sent_time.as_nanos());
            let acked = [AckedPacket { bytes, state }];
            let ack = AckEvent::new(Instant::from_nanos(now), &acked, prior, in_flight)
                .rtt(Some(rtt), Duration::ZERO)
                .lost(&lost, 1)
                .ce(ce);
            cc.on_ack(&ack);
            check(&cc)?;
        }
        if let Some(bw) = cc.snapshot().bw_estimate_bytes_per_sec {
            let ack_rate = mss as f64 * 1e9 / spacing_ns as f64;
            prop_assert!(bw <= ack_rate * 1.01, "bw {bw} > ack rate {ack_rate}");
        }
    }
}
