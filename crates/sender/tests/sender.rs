//! The sans-IO sender on its own: pacing, timeouts, loss detection,
//! late ACKs and undo, driven packet by packet with hand-made ACKs.

use congestion::{Algorithm, Config};
use sender::SenderConfig;

const MS: u64 = 1_000_000;

/// Sends the sender releases at one instant, when it may send next, and
/// its pacing rate.
fn burst_at(f: &SenderConfig, now: u64) -> (u64, u64, u64) {
    let mut s = sender::Sender::new(f, 1);
    let sent = send_all(&mut s, now).len() as u64;
    match s.poll(now) {
        sender::SendDecision::PaceUntil(t) => (sent, t, s.cc.pacing_rate_bytes_per_sec()),
        other => panic!("unexpected {other:?} after {sent} sends"),
    }
}

/// Exact pacing releases one packet per slot; quantum pacing releases a
/// burst of several (the send quantum, bounded by cwnd) and then waits the
/// burst's whole length at the pacing rate, so both average the same rate.
#[test]
fn quantum_pacing_bursts_a_quantum_then_waits_its_length() {
    let mut cc = Config::new(Algorithm::Bbr);
    // A 100-packet initial window: the initial pacing rate, 2.885 × 100
    // packets per ms (433 MB/s), gives the largest quantum, 64 KiB = 43
    // packets, and cwnd does not bind first.
    cc.initial_cwnd_packets = 100;
    let mut f = SenderConfig::bulk(cc);
    f.start_ns = 5 * MS;
    let (n, next, rate) = burst_at(&f, f.start_ns);
    assert_eq!(n, 1, "exact pacing sends one packet per slot");
    let slot = |packets: u64| packets as f64 * 1500.0 * 1e9 / rate as f64;
    assert!(((next - f.start_ns) as f64 - slot(1)).abs() <= 1.0);

    f.pacing = sender::Pacing::Quantum;
    let (n, next, rate) = burst_at(&f, f.start_ns);
    assert_eq!(n, 65_536 / 1500, "one 64 KiB quantum of 1500-byte packets");
    let wait = (next - f.start_ns) as f64;
    assert!(
        (wait - slot(n)).abs() <= n as f64,
        "burst of {n} packets then a wait of {wait} ns (rate {rate} B/s)"
    );
}

/// An ACK of the ranges given (inclusive, highest first).
fn ack_of(ranges: &[(u64, u64)]) -> sender::Ack {
    let mut a = sender::Ack {
        ranges: [(0, 0); sender::ACK_RANGES],
        len: ranges.len() as u8,
        dsack: false,
        ack_delay_ns: 0,
    };
    a.ranges[..ranges.len()].copy_from_slice(ranges);
    a
}

/// Sends whatever the sender allows at `now` (ignoring pacing); returns
/// the chunks sent.
fn send_all(s: &mut sender::Sender, now: u64) -> Vec<u64> {
    let mut chunks = Vec::new();
    for _ in 0..100 {
        match s.poll(now) {
            sender::SendDecision::Send {
                chunk,
                bytes,
                retransmission,
            } => {
                s.on_sent(now, chunk, bytes, retransmission);
                chunks.push(chunk);
            }
            _ => break,
        }
    }
    chunks
}

/// TCP's RTO and QUIC's PTO on the same silence: a 10-packet window, one
/// ACK (a 40 ms RTT sample), then nothing. The RTO declares all nine
/// outstanding packets lost and collapses cwnd; the PTO (RFC 9002 §6.2)
/// sends two probes (the two oldest unacknowledged chunks) past cwnd,
/// declares nothing lost, keeps cwnd, and doubles its next timeout.
#[test]
fn pto_probes_without_declaring_loss_while_rto_collapses() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    let mss = cc.mss_bytes;
    for timeout in [
        sender::Timeout::Rto,
        sender::Timeout::Pto {
            max_ack_delay_ns: 25 * MS,
        },
    ] {
        let mut f = SenderConfig::bulk(cc);
        f.timeout = timeout;
        let mut s = sender::Sender::new(&f, 1);
        // Pacing spreads the window; send until cwnd binds.
        let mut t = 0;
        let mut sent = Vec::new();
        while sent.len() < 10 && t < 100 * MS {
            sent.extend(send_all(&mut s, t));
            t += 100_000;
        }
        assert_eq!(sent, (0..10).collect::<Vec<_>>());
        s.on_ack(40 * MS, &ack_of(&[(0, 0)]));
        let cwnd = s.cc.cwnd_bytes();
        let inflight = s.inflight;
        assert_eq!(inflight, 9 * mss);
        let deadline = s.timer_deadline().expect("armed");
        s.on_timer(deadline);
        let probes = send_all(&mut s, deadline);
        match timeout {
            sender::Timeout::Rto => {
                // RFC 6298 with Linux's 200 ms floor.
                assert!(deadline >= 40 * MS + 200 * MS, "RTO at {deadline}");
                assert!(s.cc.cwnd_bytes() < cwnd, "RTO collapses cwnd");
                assert_eq!(
                    probes,
                    vec![1],
                    "one retransmission fits the collapsed window"
                );
            }
            sender::Timeout::Pto { .. } => {
                // srtt 40 ms + 4 × rttvar (20 ms) + 25 ms max_ack_delay.
                assert_eq!(deadline, 40 * MS + 145 * MS);
                assert_eq!(probes, vec![1, 2]);
                assert_eq!(s.cc.cwnd_bytes(), cwnd, "a PTO does not touch cwnd");
                assert_eq!(s.inflight, inflight + 2 * mss, "nothing declared lost");
                let next = s.timer_deadline().expect("re-armed");
                assert_eq!(next - deadline, 2 * 145 * MS, "backed off");
            }
        }
    }
}

/// RFC 9002 §7.6: when packets sent over more than three (unbacked-off)
/// PTOs are all lost (here the probes of three successive PTOs) and a
/// later packet is acknowledged, cwnd collapses; losses that span less do
/// not collapse it.
#[test]
fn persistent_congestion_collapses_cwnd_only_across_three_ptos() {
    let mut cc = Config::new(Algorithm::Reno);
    cc.initial_cwnd_packets = 10;
    let mut f = SenderConfig::bulk(cc);
    f.timeout = sender::Timeout::Pto {
        max_ack_delay_ns: 25 * MS,
    };
    let mut s = sender::Sender::new(&f, 1);
    let mut t = 0;
    let mut n = 0;
    while n < 10 && t < 100 * MS {
        n += send_all(&mut s, t).len();
        t += 100_000;
    }
    s.on_ack(40 * MS, &ack_of(&[(0, 0)]));
    let cwnd = s.cc.cwnd_bytes();
    // Four PTOs (145, 290, 580, 1160 ms apart), two probes each: pn 10–17.
    let mut fired = Vec::new();
    for _ in 0..4 {
        let d = s.timer_deadline().unwrap();
        s.on_timer(d);
        assert_eq!(send_all(&mut s, d).len(), 2);
        fired.push(d);
    }
    assert_eq!(fired[1] - fired[0], 2 * 145 * MS);
    assert_eq!(fired[2] - fired[1], 4 * 145 * MS);
    // Only the newest probe (pn 17) is acknowledged: pn 10–15, sent from
    // the first PTO to the third (870 ms ≥ 3 × 145 ms), are declared lost
    // together (by count, and by time for the third PTO's pair).
    s.on_ack(fired[3] + 40 * MS, &ack_of(&[(17, 17)]));
    assert!(
        s.cc.cwnd_bytes() <= 2 * cc.mss_bytes,
        "cwnd {} after persistent congestion (was {cwnd})",
        s.cc.cwnd_bytes()
    );

    // The same, but the ACK also covers the third PTO's probes (pn 14
    // and 15): the lost span, pn 10–13, is 290 ms < 3 × 145 ms, an
    // ordinary loss.
    let mut s = sender::Sender::new(&f, 1);
    let (mut t, mut n) = (0, 0);
    while n < 10 && t < 100 * MS {
        n += send_all(&mut s, t).len();
        t += 100_000;
    }
    s.on_ack(40 * MS, &ack_of(&[(0, 0)]));
    let mut last = 0;
    for _ in 0..4 {
        last = s.timer_deadline().unwrap();
        s.on_timer(last);
        send_all(&mut s, last);
    }
    s.on_ack(last + 40 * MS, &ack_of(&[(17, 17), (14, 15)]));
    assert!(
        s.cc.cwnd_bytes() > 2 * cc.mss_bytes,
        "cwnd {} after an ordinary loss (was {cwnd})",
        s.cc.cwnd_bytes()
    );
}

/// A late wake-up under quantum pacing is forgiven up to half a quantum
/// (here 21 packets): a poll 10 packet-times after the pacer's time sends
/// the quantum plus the 10 packets it owes (Linux fq likewise discounts timer drift), while
/// exact pacing sends one packet and the lateness is lost.
#[test]
fn quantum_pacing_makes_up_a_late_wake_up() {
    let mut cc = Config::new(Algorithm::Bbr);
    cc.initial_cwnd_packets = 100;
    for pacing in [sender::Pacing::Exact, sender::Pacing::Quantum] {
        let mut f = SenderConfig::bulk(cc);
        f.start_ns = 5 * MS;
        f.pacing = pacing;
        let mut s = sender::Sender::new(&f, 1);
        let first = send_all(&mut s, f.start_ns).len() as u64;
        let sender::SendDecision::PaceUntil(next) = s.poll(f.start_ns) else {
            panic!("the pacer must pause after a burst");
        };
        let slot = 1500.0 * 1e9 / s.cc.pacing_rate_bytes_per_sec() as f64;
        let late = (10.0 * slot) as u64;
        let second = send_all(&mut s, next + late).len() as u64;
        match pacing {
            sender::Pacing::Exact => assert_eq!((first, second), (1, 1)),
            sender::Pacing::Quantum => {
                assert_eq!(first, 43);
                assert!((52..=54).contains(&second), "second burst {second}");
            }
        }
    }
}
