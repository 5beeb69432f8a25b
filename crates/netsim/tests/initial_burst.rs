//! Linux TCP's unpaced first ten segments (`initial_burst = 10`), and
//! what they decide for BBRv3's STARTUP on a shallow buffer.
//!
//! Linux charges a segment its pacing time only once ten data segments
//! have gone out (`tcp_update_skb_after_send()`), so a kernel BBR's
//! initial window leaves as one burst. A per-ACK trace of the kernel's
//! `bbrlab_bbr3` on 50 Mbit/s, 50 ms and a 104-packet buffer (the
//! `validate` path 50M-50ms-0.5bdp, 2026-11-30) showed the first flight's
//! ten ACKs 0.24 ms apart, one packet's time at the bottleneck; the
//! simulator, pacing the flight at 2.89 × 10 packets per handshake RTT,
//! spread them over 18 ms. Each STARTUP round then delivered about 10 %
//! more in the simulator than in the kernel (rounds began at 1, 11, 31,
//! 69, 135, 268, 532 and 844 packets delivered, against the kernel's 2,
//! 12, 33, 67, 129, 252, 489 and 801, whose count includes the SYN), so
//! the first loss fell 98 packets into a round instead of 150. The
//! stock-kernel loss signal counts losses since the round began, and at
//! the loss round's end it then saw 6 packets lost (1.4 % of 430 in
//! flight) instead of the kernel's 19: the simulated flow stayed in
//! STARTUP one round longer, lost about 110 packets more, and left it on
//! the bandwidth plateau without an `inflight_longterm`.
//!
//! Since 2026-12-01 the stock-kernel loss signal estimates a sample's
//! losses from marks at the last two round starts instead
//! (`congestion`'s `bbr3/round_losses.rs`), so it no longer depends on
//! where in a round the first loss falls, and a paced first flight leaves
//! STARTUP on loss here too: this path now tells the two apart only by
//! a few milliseconds.

use congestion::{Algorithm, Bbr3Config, Bbr3Profile, Bbr3Signals, Config, Mode};
use netsim::{FlowConfig, Handshake, MemoryRecorder, Pacing, SimConfig};

mod common;
use common::direction;

const MS: u64 = 1_000_000;

/// The kernel's `bbrlab_bbr3` as `validate` matches it, on the
/// 50M-50ms-0.5bdp path, for `seconds`.
fn shallow_path(initial_burst: u32, seconds: u64) -> SimConfig {
    let mut cc = Config::new(Algorithm::Bbr3);
    cc.mss_bytes = 1448;
    cc.bbr3 = Bbr3Config::for_profile(Bbr3Profile::LinuxV3);
    cc.bbr3.signals = Bbr3Signals::StockKernel;
    let mut f = FlowConfig::bulk("bbr3", cc);
    f.header_bytes = 52;
    f.handshake = Handshake::Tcp;
    f.pacing = Pacing::Quantum;
    f.initial_burst_packets = initial_burst;
    SimConfig {
        duration_ns: seconds * 1000 * MS,
        seed: 1,
        forward: direction("rate = \"50mbit\"\ndelay = \"25ms\"\nqueue = { limit = \"104pkt\" }"),
        reverse: direction("rate = \"50mbit\"\ndelay = \"25ms\""),
        flows: vec![f],
        sample_interval_ns: MS,
        topology: Default::default(),
    }
}

/// STARTUP's end: when, the `inflight_longterm` it left (packets), and
/// the retransmissions one second in.
fn startup_exit(initial_burst: u32) -> (u64, Option<f64>, u64) {
    let mut rec = MemoryRecorder::default();
    netsim::run(&shallow_path(initial_burst, 2), &mut rec).unwrap();
    let exit = rec
        .models
        .iter()
        .find(|m| m.snapshot.mode != Mode::Startup)
        .expect("STARTUP ends within 2 s");
    let longterm = exit
        .snapshot
        .bbr3
        .as_ref()
        .and_then(|b| b.inflight_longterm_bytes)
        .map(|b| b as f64 / 1448.0);
    let retx = rec
        .flows
        .iter()
        .find(|s| s.t_ns >= 1050 * MS)
        .expect("a sample at 1 s after the handshake")
        .retransmissions;
    (exit.t_ns, longterm, retx)
}

/// With the kernel's unpaced first ten segments the simulated flow does
/// what the kernel's did in all three of its runs: it leaves STARTUP on
/// loss at the end of its first loss round, 0.48 s into the connection,
/// with `inflight_longterm` at 313 packets, having retransmitted 237–242
/// packets by 1 s. Pacing the first flight (`initial_burst = 0`) missed
/// all three while the loss signal counted from the round's start (left
/// 30 ms later, on the plateau, 60 more retransmitted); with two marks it
/// leaves on loss within 20 ms of the burst's exit, at the same bound.
#[test]
fn the_kernels_first_burst_makes_bbr3_leave_startup_on_loss_as_the_kernels_does() {
    let (t, longterm, retx) = startup_exit(10);
    // The handshake takes 50 ms; the kernel left at 0.48 s of its
    // connection. Within one 10 ms sample of the kernel's log.
    let conn_ms = (t - 50 * MS) as f64 / 1e6;
    assert!(
        (470.0..=490.0).contains(&conn_ms),
        "left STARTUP at {conn_ms} ms"
    );
    let longterm = longterm.expect("STARTUP left on loss sets inflight_longterm");
    // The kernel's 313 packets, to within 2 % (a packet of rounding, and
    // one round's delivery varying by a few packets with the ACK clock).
    assert!(
        (longterm - 313.0).abs() <= 6.5,
        "inflight_longterm {longterm} packets"
    );
    // The kernel's 237-242, within 5 %.
    assert!((225..=254).contains(&retx), "retransmitted {retx} by 1 s");

    let (t0, longterm0, retx0) = startup_exit(0);
    assert!(
        longterm0.is_some_and(|l| (l - 313.0).abs() <= 6.5) && t0.abs_diff(t) <= 20 * MS,
        "paced from the first packet: left at {} ms with {longterm0:?}, {retx0} retransmitted",
        (t0 - 50 * MS) / MS
    );
}
