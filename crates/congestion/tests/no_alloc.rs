//! No controller allocates per packet or per ACK: after a warm-up, a
//! steady flow with sends, ACKs (some CE-marked), losses and a timeout
//! makes no heap allocation on this thread. A counting global allocator
//! checks it, per thread, so the test harness's own threads do not count.

use congestion::{AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, LostPacket};
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

/// `n` steps of a 100 Mbit/s, 40 ms flow with a window of 400 packets:
/// every 97th packet lost, every 13th ACK carrying a CE mark, and a
/// timeout at step 30 000.
fn run(
    cc: &mut Controller,
    window: &mut VecDeque<(u64, congestion::SentPacketState)>,
    from: u64,
    n: u64,
) {
    for i in from..from + n {
        let now = Instant::from_nanos(i * 120_000);
        let in_flight = window.len() as u64 * 1500;
        let st = cc.on_packet_sent(now, 1500, in_flight, false);
        window.push_back((i, st));
        if window.len() > 400 {
            let (pn, state) = window.pop_front().expect("non-empty");
            let in_flight = window.len() as u64 * 1500;
            if pn % 97 == 0 {
                cc.on_timer_losses(now, &[LostPacket { bytes: 1500, state }], 1, in_flight);
                continue;
            }
            let ce = u64::from(pn % 13 == 0);
            cc.on_ack(
                &AckEvent::new(
                    now,
                    &[AckedPacket { bytes: 1500, state }],
                    in_flight + 1500,
                    in_flight,
                )
                .rtt(Some(Duration::from_millis(40)), Duration::ZERO)
                .ce(ce),
            );
        }
        if i == 30_000 {
            cc.on_retransmission_timeout(now, &[], 1, in_flight);
        }
        let _ = (cc.cwnd_bytes(), cc.pacing_rate_bytes_per_sec(), cc.mode());
    }
}

#[test]
fn no_controller_allocates_per_packet_or_ack() {
    for algorithm in Algorithm::ALL {
        let mut cc = Controller::new(&Config::new(algorithm), Instant::from_nanos(0));
        let mut window = VecDeque::with_capacity(512);
        run(&mut cc, &mut window, 0, 20_000);
        let before = allocations();
        run(&mut cc, &mut window, 20_000, 40_000);
        let made = allocations() - before;
        assert_eq!(made, 0, "{algorithm}: {made} allocations in 40 000 steps");
    }
}

/// The same for `bbr3`'s linux-v3 profile, ECN-capable (its EWMA and ECN
/// cuts run), and for the draft's: per-packet loss handling, CE rounds and
/// the timeout allocate nothing.
#[test]
fn bbr3_profiles_do_not_allocate_per_packet_or_ack() {
    for b3 in [
        congestion::Bbr3Config::draft(),
        congestion::Bbr3Config::linux_v3(),
    ] {
        let mut cfg = Config::new(Algorithm::Bbr3);
        cfg.bbr3 = b3;
        cfg.bbr3.ecn_capable = true;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(0));
        let mut window = VecDeque::with_capacity(512);
        run(&mut cc, &mut window, 0, 20_000);
        let before = allocations();
        run(&mut cc, &mut window, 20_000, 40_000);
        let made = allocations() - before;
        assert_eq!(
            made,
            0,
            "{:?}: {made} allocations in 40 000 steps",
            b3.profile()
        );
    }
}
