//! A controller driven from a small RFC 9002 sender: packet numbers, ACKs
//! that report each arriving packet, loss detection by packet and time
//! threshold (RFC 9002 §6.1), and one `AckEvent` per ACK. The path is a
//! 10 Mbit/s, 40 ms bottleneck with a 50-packet drop-tail queue, modelled
//! in a few lines, so the flow sees losses when it overfills it.
//!
//! Run it with `cargo run -p congestion --example rfc9002_loop [ALGORITHM]`;
//! the crate's `guide::driving` page runs it as a doc test.

use congestion::{AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, LostPacket};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

const DATAGRAM: u64 = 1200;
const RTT_NS: u64 = 40_000_000; // propagation round trip
const SERVE_NS: u64 = 960_000; // one datagram per 0.96 ms: 10 Mbit/s
const QUEUE_PACKETS: u64 = 50;
const PACKET_THRESHOLD: u64 = 3; // RFC 9002 §6.1.1 kPacketThreshold

/// What the sender keeps per packet in flight.
struct Sent {
    at: Instant,
    bytes: u64,
    state: congestion::SentPacketState,
}

/// The run's outcome, for the caller to check.
struct Outcome {
    delivered: u64,
    lost_packets: u64,
    cc: Controller,
}

fn run(algorithm: Algorithm, seconds: u64) -> Outcome {
    let config = Config::for_quic(algorithm, DATAGRAM).for_new_connection();
    let mut cc = Controller::new(&config, Instant::ZERO);
    let mut sent: BTreeMap<u64, Sent> = BTreeMap::new();
    // ACKs on their way back: (arrival time, packet number), in order.
    let mut acks: VecDeque<(u64, u64)> = VecDeque::new();
    let (mut next_pn, mut in_flight, mut largest_acked) = (0u64, 0u64, None::<u64>);
    let (mut now, mut next_send, mut link_free) = (0u64, 0u64, 0u64);
    let (mut delivered, mut lost_packets, mut latest_rtt) = (0u64, 0u64, Duration::ZERO);
    // Reused per ACK, so the loop does not allocate once they have grown.
    let (mut acked, mut lost) = (Vec::new(), Vec::new());

    while now < seconds * 1_000_000_000 {
        let window_open = in_flight + DATAGRAM <= cc.cwnd_bytes();
        let next_ack = acks.front().map_or(u64::MAX, |&(at, _)| at);
        if window_open && next_send <= next_ack {
            // Send one datagram, paced at the controller's rate.
            now = now.max(next_send);
            let t = Instant::from_nanos(now);
            let state = cc.on_packet_sent(t, DATAGRAM, in_flight, false);
            sent.insert(
                next_pn,
                Sent {
                    at: t,
                    bytes: DATAGRAM,
                    state,
                },
            );
            in_flight += DATAGRAM;
            // The bottleneck: drop-tail when QUEUE_PACKETS wait, else
            // queue, serialise, and the ACK comes back after the round trip.
            if link_free.saturating_sub(now) < QUEUE_PACKETS * SERVE_NS {
                link_free = link_free.max(now) + SERVE_NS;
                acks.push_back((link_free + RTT_NS, next_pn));
            }
            next_pn += 1;
            next_send = now + DATAGRAM * 1_000_000_000 / cc.pacing_rate_bytes_per_sec();
            continue;
        }
        // An ACK arrives, reporting one packet number.
        let Some((at, pn)) = acks.pop_front() else {
            break;
        };
        now = at;
        let t = Instant::from_nanos(now);
        let prior_in_flight = in_flight;
        acked.clear();
        lost.clear();
        let mut rtt_sample = None;
        if let Some(p) = sent.remove(&pn) {
            in_flight -= p.bytes;
            delivered += p.bytes;
            acked.push(AckedPacket {
                bytes: p.bytes,
                state: p.state,
            });
            if largest_acked.is_none_or(|l| pn > l) {
                // RFC 9002 §5.1: a sample from a newly acknowledged largest.
                largest_acked = Some(pn);
                latest_rtt = t.saturating_since(p.at);
                rtt_sample = Some(latest_rtt);
            }
        }
        // RFC 9002 §6.1: anything sent before the largest acknowledged is
        // lost once 3 packets later are acknowledged, or once it is older
        // than 9/8 of the larger of srtt and the latest RTT.
        let largest = largest_acked.unwrap_or(0);
        let srtt = cc.rtt().smoothed().unwrap_or(latest_rtt);
        let time_threshold = srtt.max(latest_rtt) * 9 / 8;
        let (mut ranges, mut previous) = (0u32, None::<u64>);
        while let Some((&old, p)) = sent.first_key_value() {
            let by_count = largest >= old + PACKET_THRESHOLD;
            let by_time = t.saturating_since(p.at) >= time_threshold;
            if old >= largest || !(by_count || by_time) {
                break;
            }
            let p = sent.remove(&old).unwrap();
            in_flight -= p.bytes;
            lost_packets += 1;
            if previous.is_none_or(|q| old != q + 1) {
                ranges += 1;
            }
            previous = Some(old);
            lost.push(LostPacket {
                bytes: p.bytes,
                state: p.state,
            });
        }
        // One event for everything this ACK says.
        let event = AckEvent::new(t, &acked, prior_in_flight, in_flight)
            .rtt(rtt_sample, Duration::ZERO)
            .lost(&lost, ranges);
        cc.on_ack(&event);
    }
    Outcome {
        delivered,
        lost_packets,
        cc,
    }
}

fn main() {
    let algorithm = std::env::args()
        .nth(1)
        .map(|name| name.parse::<Algorithm>())
        .transpose()
        .unwrap_or_else(|e| {
            eprintln!("rfc9002_loop: {e}");
            std::process::exit(2)
        })
        .unwrap_or(Algorithm::Bbr);
    let seconds = 10;
    let out = run(algorithm, seconds);
    let goodput = out.delivered as f64 * 8.0 / seconds as f64 / 1e6;
    println!(
        "{}: {goodput:.2} Mbit/s delivered, {} packets lost, {} recovery episodes, cwnd {} B",
        out.cc.name(),
        out.lost_packets,
        out.cc.recovery_episodes(),
        out.cc.cwnd_bytes()
    );
    // The bottleneck carries 10 Mbit/s: every algorithm fills most of it,
    // and STARTUP (or slow start) overfills the 50-packet queue at least
    // once, so loss detection and recovery ran.
    assert!(goodput > 8.0 && goodput <= 10.0, "{goodput}");
    assert!(out.lost_packets > 0 && out.cc.recovery_episodes() > 0);
}
