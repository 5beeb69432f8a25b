//! The adapter allocates nothing per packet or per ACK: after a warm-up,
//! a steady flow of sends, ACKs (some CE-marked, some revealing losses),
//! timer losses and observer updates makes no heap allocation on this
//! thread. A counting global allocator checks it, per thread, as
//! `congestion`'s own `no_alloc` test does.

use bbrlab_s2n::{Endpoint, PacketInfo};
use congestion::{Algorithm, Bbr3Profile, Config};
use s2n_quic_core::event::testing::Publisher as EventPublisher;
use s2n_quic_core::packet::number::PacketNumberSpace;
use s2n_quic_core::path;
use s2n_quic_core::random::testing::Generator;
use s2n_quic_core::recovery::congestion_controller::{CongestionController as _, PathPublisher};
use s2n_quic_core::recovery::RttEstimator;
use s2n_quic_core::time::{clock::testing as clock, Timestamp};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::time::Duration;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

/// Steps `from..from + n` of a flow with 300 packets in flight: one
/// packet sent and one ACK frame per step (every 13th with a CE mark),
/// every 97th packet lost when the ACK passes it, every 1000th step a
/// loss-timer batch.
#[allow(clippy::too_many_arguments)]
fn run(
    cc: &mut bbrlab_s2n::CongestionController,
    window: &mut VecDeque<(u64, Timestamp, PacketInfo)>,
    rtt: &mut RttEstimator,
    events: &mut EventPublisher,
    rng: &mut Generator,
    t0: Timestamp,
    from: u64,
    n: u64,
) {
    for i in from..from + n {
        let now = t0 + Duration::from_micros(i * 100);
        let mut publisher = PathPublisher::new(events, path::Id::test_id());
        let info = cc.on_packet_sent(now, 1200, Some(false), rtt, &mut publisher);
        window.push_back((i, now, info));
        if i % 1000 == 999 {
            let (_, _, lost) = window.pop_front().expect("non-empty");
            cc.on_packet_lost(1200, lost, false, true, rng, now, &mut publisher);
            continue;
        }
        if window.len() > 300 {
            let (_, sent, newest) = window.pop_front().expect("non-empty");
            if let Some(&(pn, _, lost)) = window.front() {
                if pn % 97 == 0 {
                    window.pop_front();
                    cc.on_packet_lost(1200, lost, false, true, rng, now, &mut publisher);
                }
            }
            rtt.update_rtt(
                Duration::ZERO,
                now - sent,
                now,
                true,
                PacketNumberSpace::ApplicationData,
            );
            cc.on_rtt_update(sent, now, rtt, &mut publisher);
            if i % 13 == 0 {
                cc.on_explicit_congestion(1, now, &mut publisher);
            }
            cc.on_ack(sent, 1200, newest, rtt, rng, now, &mut publisher);
        }
        let _ = cc.earliest_departure_time();
        let _ = cc.send_quantum();
    }
}

#[test]
fn steady_state_makes_no_allocation() {
    let mut configs: Vec<Config> = Algorithm::ALL.into_iter().map(Config::new).collect();
    let mut linux = Config::new(Algorithm::Bbr3);
    linux.bbr3 = congestion::Bbr3Config::for_profile(Bbr3Profile::LinuxV3);
    configs.push(linux);
    for config in configs {
        let endpoint = Endpoint::new(config);
        let observer = endpoint.observer();
        let mut cc = endpoint.new_controller(1200);
        let mut window = VecDeque::with_capacity(1024);
        let mut rtt = RttEstimator::new(Duration::from_millis(333));
        let mut events = EventPublisher::no_snapshot();
        let mut rng = Generator::default();
        let t0 = clock::now();
        run(
            &mut cc,
            &mut window,
            &mut rtt,
            &mut events,
            &mut rng,
            t0,
            0,
            20_000,
        );
        let before = allocations();
        run(
            &mut cc,
            &mut window,
            &mut rtt,
            &mut events,
            &mut rng,
            t0,
            20_000,
            20_000,
        );
        let _ = observer.latest();
        let made = allocations() - before;
        assert_eq!(
            made, 0,
            "{}: {made} allocations in 20 000 steps",
            config.algorithm
        );
        let o = observer.latest().expect("published");
        assert!(o.packets_lost > 200 && o.ce_packets > 1000 && o.acks > 30_000);
    }
}
