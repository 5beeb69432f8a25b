//! Per-ACK processing cost of each controller.
//!
//! A steady flow on a 100 Mbit/s, 40 ms path: one 1500-byte packet every
//! 120 µs, a window of 400 packets in flight, each ACK acknowledging one
//! packet. Two figures per algorithm, measured in the same run:
//! - `send`: `on_packet_sent` alone (the baseline),
//! - `send+ack`: one send plus one ACK, the steady-state work per packet.
//!
//! The ACK's own cost is the difference. No allocation happens in either.

use congestion::{AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, SentPacketState};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::collections::VecDeque;
use std::time::Duration;

const MSS: u64 = 1500;
const SPACING_NS: u64 = 120_000;
const WINDOW: usize = 400;

struct Flow {
    cc: Controller,
    now: u64,
    window: VecDeque<SentPacketState>,
}

impl Flow {
    fn new(alg: Algorithm) -> Self {
        let cc = Controller::new(&Config::new(alg), Instant::from_nanos(0));
        let mut f = Flow {
            cc,
            now: 0,
            window: VecDeque::with_capacity(WINDOW + 1),
        };
        // Warm up past STARTUP so the steady-state path is measured.
        for _ in 0..200_000 {
            f.step();
        }
        f
    }

    #[inline]
    fn step(&mut self) {
        self.now += SPACING_NS;
        let in_flight = self.window.len() as u64 * MSS;
        let st = self
            .cc
            .on_packet_sent(Instant::from_nanos(self.now), MSS, in_flight, false);
        self.window.push_back(st);
        if self.window.len() > WINDOW {
            let state = self.window.pop_front().unwrap();
            let rtt = Duration::from_nanos(self.now - state.sent_time.as_nanos());
            let in_flight = self.window.len() as u64 * MSS;
            // Opaque, as in `examples/ack_loop.rs`: the controller must not
            // be specialised to this loop's constant event.
            self.cc.on_ack(black_box(
                &AckEvent::new(
                    Instant::from_nanos(self.now),
                    &[AckedPacket { bytes: MSS, state }],
                    in_flight + MSS,
                    in_flight,
                )
                .rtt(Some(rtt), Duration::ZERO),
            ));
        }
    }
}

fn bench(c: &mut Criterion) {
    for alg in Algorithm::ALL {
        let mut g = c.benchmark_group(alg.name());
        let mut f = Flow::new(alg);
        g.bench_function("send+ack", |b| b.iter(|| f.step()));
        let mut cc = Controller::new(&Config::new(alg), Instant::from_nanos(0));
        let mut now = 0u64;
        g.bench_function("send", |b| {
            b.iter(|| {
                now += SPACING_NS;
                black_box(cc.on_packet_sent(Instant::from_nanos(now), MSS, 100 * MSS, false))
            })
        });
        black_box(f.cc.cwnd_bytes());
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
