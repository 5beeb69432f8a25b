//! QUIC's persistent congestion (RFC 9002 §7.6.2): the window MUST fall to
//! the minimum, two datagrams (§7.2's kMinimumWindow), whatever is still
//! in flight, for every algorithm and through both ways a transport can
//! say it (`on_persistent_congestion`, or an ACK's flag).
use congestion::{AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, LostPacket};
use std::time::Duration;

const MTU: u64 = 1200;
const ALGORITHMS: [Algorithm; 5] = [
    Algorithm::Bbr,
    Algorithm::BbrJitter,
    Algorithm::Bbr3,
    Algorithm::Cubic,
    Algorithm::Reno,
];

fn at(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

/// A QUIC connection of `alg` that has grown its window over 4 s of a
/// 50 ms path with 100 packets always in flight, then sends 100 more, so
/// that 200 packets are out; returns it with the time, the first 100
/// packets (which will be lost) and the newer 100.
fn grown(alg: Algorithm) -> (Controller, u64, Vec<LostPacket>, Vec<AckedPacket>) {
    let mut cc = Controller::new(&Config::for_quic(alg, MTU), at(0));
    cc.on_handshake_rtt(at(0), Duration::from_millis(50));
    let mut now = 0;
    let mut out = std::collections::VecDeque::new();
    for _ in 0..4_000 {
        now += 1;
        let in_flight = out.len() as u64 * MTU;
        out.push_back(cc.on_packet_sent(at(now), MTU, in_flight, false));
        if out.len() > 100 {
            let state = out.pop_front().unwrap();
            let packet = [AckedPacket { bytes: MTU, state }];
            let after = out.len() as u64 * MTU;
            cc.on_ack(
                &AckEvent::new(at(now), &packet, after + MTU, after)
                    .rtt(Some(Duration::from_millis(50)), Duration::ZERO),
            );
        }
    }
    let lost: Vec<_> = out
        .drain(..)
        .map(|state| LostPacket { bytes: MTU, state })
        .collect();
    let mut newer = Vec::new();
    for i in 0..100 {
        let in_flight = (lost.len() + i) as u64 * MTU;
        let state = cc.on_packet_sent(at(now), MTU, in_flight, false);
        newer.push(AckedPacket { bytes: MTU, state });
    }
    (cc, now, lost, newer)
}

#[test]
fn the_window_falls_to_two_datagrams_whatever_is_in_flight() {
    for alg in ALGORITHMS {
        let (mut cc, now, lost, newer) = grown(alg);
        assert!(cc.cwnd_bytes() > 20 * MTU, "{alg:?}: {}", cc.cwnd_bytes());
        let in_flight = newer.len() as u64 * MTU;
        cc.on_timer_losses(at(now + 200), &lost, 1, in_flight);
        cc.on_persistent_congestion(at(now + 200), in_flight);
        assert_eq!(cc.cwnd_bytes(), 2 * MTU, "{alg:?}");
    }
}

#[test]
fn an_acks_persistent_congestion_flag_does_the_same() {
    for alg in ALGORITHMS {
        let (mut cc, now, lost, newer) = grown(alg);
        // The ACK of one newer packet shows the older ones lost.
        let in_flight = (newer.len() as u64 - 1) * MTU;
        let before = in_flight + MTU + lost.len() as u64 * MTU;
        cc.on_ack(
            &AckEvent::new(at(now + 250), &newer[..1], before, in_flight)
                .rtt(Some(Duration::from_millis(250)), Duration::ZERO)
                .lost(&lost, 1)
                .persistent_congestion(true),
        );
        // Two datagrams, then this ACK's one packet acknowledged: slow
        // start adds it to the loss-based windows, and the BBRs' floor of
        // four packets (Linux `bbr_cwnd_min_target`, the draft's
        // BBRMinPipeCwnd) holds for an ACK that delivers data.
        let expected = match alg {
            Algorithm::Cubic | Algorithm::Reno => 3 * MTU,
            _ => 4 * MTU,
        };
        assert_eq!(cc.cwnd_bytes(), expected, "{alg:?}");
        // And it grows again from there as the newer packets arrive.
        for (i, p) in newer[1..].iter().enumerate() {
            let after = in_flight - (i as u64 + 1) * MTU;
            cc.on_ack(
                &AckEvent::new(
                    at(now + 251 + i as u64),
                    std::slice::from_ref(p),
                    after + MTU,
                    after,
                )
                .rtt(Some(Duration::from_millis(250)), Duration::ZERO),
            );
        }
        assert!(cc.cwnd_bytes() > 2 * MTU, "{alg:?}: {}", cc.cwnd_bytes());
    }
}
