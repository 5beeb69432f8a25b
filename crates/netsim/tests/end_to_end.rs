//! Whole simulations: determinism, reliable delivery, app-limited flows.

use congestion::{Algorithm, Config};
use netsim::{AckPolicy, App, FlowConfig, MemoryRecorder, SimConfig};

mod common;
use common::direction;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn path(extra: &str) -> (link::ResolvedDirection, link::ResolvedDirection) {
    let fwd =
        format!("rate = \"10mbit\"\ndelay = \"20ms\"\nqueue = {{ limit = \"100pkt\" }}\n{extra}");
    (direction(&fwd), direction("delay = \"20ms\""))
}

fn sim(flows: Vec<FlowConfig>, extra: &str, secs: u64) -> SimConfig {
    let (forward, reverse) = path(extra);
    SimConfig {
        duration_ns: secs * SEC,
        seed: 3,
        forward,
        reverse,
        flows,
        sample_interval_ns: 100 * MS,
        topology: Default::default(),
    }
}

#[test]
fn identical_configs_give_identical_runs() {
    let cfg = sim(
        vec![FlowConfig::bulk("a", Config::new(Algorithm::Bbr))],
        "loss = { bernoulli = 0.02 }",
        10,
    );
    let (mut r1, mut r2) = (MemoryRecorder::default(), MemoryRecorder::default());
    let s1 = netsim::run(&cfg, &mut r1).unwrap();
    let s2 = netsim::run(&cfg, &mut r2).unwrap();
    assert_eq!(s1, s2);
    assert_eq!(r1.flows, r2.flows);
    assert!(r1.flows.len() >= 99);
}

#[test]
fn finite_flows_deliver_exactly_their_size_despite_loss() {
    for alg in Algorithm::ALL {
        for ack in [
            AckPolicy::EveryPacket,
            AckPolicy::Delayed {
                max_packets: 2,
                max_delay_ns: 40 * MS,
            },
            AckPolicy::LINUX,
            AckPolicy::CHROMIUM_ACK_DECIMATION,
        ] {
            let mut f = FlowConfig::bulk("f", Config::new(alg));
            f.size_bytes = Some(2_000_123); // not a multiple of the MSS
            f.ack = ack;
            let cfg = sim(vec![f], "loss = { bernoulli = 0.03 }", 60);
            let s = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
            let fl = &s.flows[0];
            assert_eq!(fl.delivered_bytes, 2_000_123, "{alg} {ack:?}");
            assert!(fl.completion_ns.is_some(), "{alg} {ack:?} did not complete");
            // Every drop must be repaired by a retransmission.
            assert!(
                fl.retransmissions >= fl.drops,
                "{alg}: {} retransmissions for {} drops",
                fl.retransmissions,
                fl.drops
            );
            assert!(fl.drops > 0, "3 % loss produced no drops");
        }
    }
}

#[test]
fn app_limited_flow_gets_its_offered_rate_and_keeps_bbr_estimate() {
    let mut f = FlowConfig::bulk("app", Config::new(Algorithm::Bbr));
    f.app = App::Rate {
        bytes_per_sec: 2e6 / 8.0,
    };
    let cfg = sim(vec![f], "", 20);
    let mut rec = MemoryRecorder::default();
    let s = netsim::run(&cfg, &mut rec).unwrap();
    let g = s.flows[0].goodput_bps;
    // Offered 2 Mbit/s on a 10 Mbit/s path: all of it gets through (± 3 %
    // for the first RTT and the last partly-acknowledged packets).
    assert!((g - 2e6).abs() < 0.03 * 2e6, "goodput {g}");
    // No queue builds: RTT stays at the propagation delay plus a packet's
    // serialisation (1.2 ms).
    assert!(s.flows[0].rtt_median_ms.unwrap() < 43.0);
}

#[test]
fn bbr_flows_with_staggered_starts_share_fairly() {
    let flows: Vec<FlowConfig> = (0..3)
        .map(|i| {
            let mut f = FlowConfig::bulk(&format!("f{i}"), Config::new(Algorithm::Bbr));
            f.start_ns = i * 2 * SEC;
            f
        })
        .collect();
    let cfg = sim(flows, "", 40);
    let s = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
    let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    // All three together use the link (allowing for PROBE_RTT and the
    // staggered starts), and Jain's index shows a fair share (C6: BBR flows
    // converge to a fair share; 0.9 allows for the usual BBR v1 imbalance).
    assert!(total > 0.9 * 10e6, "total {total}");
    assert!(s.jain_fairness.unwrap() > 0.9, "Jain {:?}", s.jain_fairness);
}

/// Reordering jitter (0–10 ms per packet, packets may overtake each other)
/// on 10 Mbit/s / 40 ms. Once the sender sees reordering it judges loss by
/// time with Linux RACK's widening window instead of by a 3-packet count,
/// so nearly nothing is retransmitted needlessly and the link stays full.
/// (With the fixed 3-packet rule this path gave CUBIC 2.4 Mbit/s and BBR
/// 4.8 Mbit/s with 12 % retransmissions.) Thresholds: ≥ 85 % of the link
/// (PROBE_RTT and CUBIC's sawtooth cost up to ~10 %), < 1 % retransmitted.
#[test]
fn reordering_is_tolerated_once_seen() {
    for alg in [Algorithm::Bbr, Algorithm::Cubic] {
        let cfg = sim(
            vec![FlowConfig::bulk("r", Config::new(alg))],
            "jitter = { uniform = { min = \"0ms\", max = \"10ms\" }, reorder = true }",
            20,
        );
        let s = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
        let f = &s.flows[0];
        assert!(f.goodput_bps >= 0.85 * 10e6, "{alg:?}: {}", f.goodput_bps);
        assert!(
            f.retransmission_rate < 0.01,
            "{alg:?}: {}",
            f.retransmission_rate
        );
    }
}

/// Chromium's ACK decimation in the simulator: on a 10 Mbit/s, 40 ms
/// path the receiver, given the sender's min_rtt (40 ms), acknowledges
/// after min_rtt / 4 = 10 ms (about 8 packets at 1.2 ms each) or 10
/// packets, against every second packet without it.
#[test]
fn decimated_receiver_acks_every_ten_packets_or_quarter_min_rtt() {
    let per_ack = |ack: AckPolicy| {
        let mut f = FlowConfig::bulk("f", Config::new(Algorithm::Bbr));
        f.ack = ack;
        let s = netsim::run(&sim(vec![f], "", 10), &mut netsim::NoRecorder).unwrap();
        assert!(s.flows[0].goodput_bps > 8e6, "{ack:?}: the link stays full");
        s.packets_simulated as f64 / s.ack_packets_simulated as f64
    };
    let delayed = per_ack(AckPolicy::Delayed {
        max_packets: 2,
        max_delay_ns: 25 * MS,
    });
    let decimated = per_ack(AckPolicy::CHROMIUM_ACK_DECIMATION);
    assert!(
        (1.8..=2.05).contains(&delayed),
        "delayed: {delayed} packets per ACK"
    );
    // At most 10 per ACK; the quarter-min_rtt timer fires first here.
    assert!(
        (6.0..=10.0).contains(&decimated),
        "decimated: {decimated} packets per ACK"
    );
}

/// One bulk flow of `alg` with receiver `ack` for 6 s on 2 Mbit/s, 100 ms,
/// a 2-BDP buffer (6 ms a packet), in kernel-sized bursts, sampled every
/// 10 ms into `rec`.
fn two_mbit_100ms(alg: Algorithm, ack: AckPolicy, rec: &mut MemoryRecorder) -> netsim::Summary {
    let mut f = FlowConfig::bulk("f", Config::new(alg));
    f.ack = ack;
    f.pacing = netsim::Pacing::Quantum;
    let cfg = SimConfig {
        duration_ns: 6 * SEC,
        seed: 1,
        forward: direction("rate = \"2mbit\"\ndelay = \"50ms\"\nqueue = { limit = \"33pkt\" }"),
        reverse: direction("rate = \"2mbit\"\ndelay = \"50ms\""),
        flows: vec![f],
        sample_interval_ns: 10 * MS,
        topology: Default::default(),
    };
    netsim::run(&cfg, rec).unwrap()
}

/// Linux's receiver ACKs every second segment; an ACK sent cancels the
/// delayed-ACK timer (`tcp_event_ack_sent()`). When the simulator kept a
/// timer armed for an earlier lone segment, it fired for a later one
/// every 40 ms and ACKed it early, out of rhythm. BBR's delivery-rate
/// samples then spanned ACK intervals shorter than the link time of what
/// they counted (20 packets in 116 ms on a 6 ms-per-packet link), its
/// bandwidth estimate read 3 % above the link, and its queue grew: on
/// 2 Mbit/s / 100 ms / 2 BDP, `bbr` with Linux's receiver then queued
/// more than with an ACK per packet, though fewer ACKs can only make the
/// delivery rate look lower, not higher.
#[test]
fn linux_delayed_acks_do_not_inflate_bbrs_queue() {
    let run = |ack: AckPolicy| {
        let s = two_mbit_100ms(Algorithm::Bbr, ack, &mut MemoryRecorder::default());
        s.flows[0].rtt_median_ms.unwrap()
    };
    let (every, linux) = (run(AckPolicy::EveryPacket), run(AckPolicy::LINUX));
    assert!(
        linux <= every,
        "median RTT with Linux's receiver {linux} ms, with an ACK per packet {every} ms"
    );
}

/// TCP's smoothed RTT follows the oldest segment an ACK covers, with no
/// ACK delay taken off (TCP carries none): Linux's `tcp_clean_rtx_queue()`
/// hands `tcp_rtt_estimator()` `seq_rtt_us`, from the first segment newly
/// acknowledged. Behind a receiver that acknowledges every second segment,
/// the first of each pair waits for the second, so the kernel's srtt sits
/// about half a packet time or more above what an ACK per packet gives:
/// on 2 Mbit/s / 100 ms (6 ms a packet) the kernel's `bbrlab_bbr3` read
/// 116-127 ms where the simulator read 112.3 ms with an ACK per packet.
/// Before, the simulator smoothed the newest segment's RTT less the
/// receiver's ACK delay, and Linux's receiver read *lower* (111.2 ms).
/// The RTT the controller sees and min_rtt stay the newest segment's.
///
/// A paced burst of two leaves at one instant and its second segment
/// carries PSH, so each pair the receiver acknowledges is one burst: its
/// oldest and newest segments share a send time and an RTT, as a kernel
/// TSO packet's do. Before the sender pushed, the pairs straddled bursts,
/// the oldest segment was a burst older, and the srtt read 122.1 ms, 12 ms
/// above the newest segment's RTT at the median; now 116.4, the two
/// within a millisecond.
#[test]
fn tcp_srtt_behind_linuxs_receiver_includes_the_wait_for_the_second_segment() {
    let run = |ack: AckPolicy| {
        let mut rec = MemoryRecorder::default();
        two_mbit_100ms(Algorithm::Bbr3, ack, &mut rec);
        let mut srtt: Vec<f64> = rec
            .flows
            .iter()
            .filter_map(|x| x.srtt_ns)
            .map(|n| n as f64 / 1e6)
            .collect();
        srtt.sort_by(f64::total_cmp);
        let min_rtt = rec.flows.iter().filter_map(|x| x.min_rtt_ns).min().unwrap() as f64 / 1e6;
        // srtt less the newest RTT sample, at each sampling instant.
        let mut gap: Vec<f64> = rec
            .flows
            .iter()
            .filter_map(|x| Some((x.srtt_ns? as f64 - x.rtt_ns? as f64) / 1e6))
            .collect();
        gap.sort_by(f64::total_cmp);
        (srtt[srtt.len() / 2], min_rtt, gap[gap.len() / 2])
    };
    let (every, every_min, _) = run(AckPolicy::EveryPacket);
    let (linux, linux_min, linux_gap) = run(AckPolicy::LINUX);
    // Half a packet time (3 ms) at least above the per-packet figure.
    assert!(
        linux >= every + 3.0,
        "median srtt with Linux's receiver {linux:.1} ms, with an ACK per packet {every:.1} ms"
    );
    // min_rtt comes from the newest segment: no higher than with an ACK
    // per packet.
    assert!(
        linux_min <= every_min + 0.1,
        "min_rtt {linux_min} against {every_min}"
    );
    // Each ACK covers one burst: srtt and the newest RTT agree.
    assert!(
        linux_gap.abs() <= 1.0,
        "srtt less the newest RTT: {linux_gap:.1} ms at the median"
    );
}

/// The time per controller mode adds up to the whole run, each mode in
/// the order first entered, and PROBE_RTT gets its 200 ms and about a
/// round trip (`bbr_probe_rtt_mode_ms`): the sender adds time only when
/// the mode changes, so a missed change or a last interval left open
/// shows here.
#[test]
fn mode_times_cover_the_run_in_the_order_modes_began() {
    use congestion::Mode;
    let cfg = sim(
        vec![FlowConfig::bulk("a", Config::new(Algorithm::Bbr))],
        "",
        12,
    );
    let s = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
    let times = &s.flows[0].mode_times;
    let total: u64 = times.entries.iter().map(|e| e.1).sum();
    assert_eq!(total, 12 * SEC, "{times:?}");
    let order: Vec<Mode> = times.entries.iter().map(|e| e.0).collect();
    assert_eq!(
        order,
        [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt],
        "{times:?}"
    );
    let probe_rtt = times.entries[3].1;
    assert!(
        (200 * MS..=300 * MS).contains(&probe_rtt),
        "PROBE_RTT {probe_rtt} ns"
    );
}

/// A finite flow whose segment size changes while it runs (down and up,
/// with 2 % loss, so segments of the old size are resent after the
/// change) delivers exactly its size and completes.
#[test]
fn a_flow_whose_mss_changes_delivers_exactly_its_size() {
    for (from, to) in [(1500, 1000), (1000, 1400)] {
        for alg in [Algorithm::Bbr, Algorithm::Cubic] {
            let mut cc = Config::new(alg);
            cc.mss_bytes = from;
            let mut f = FlowConfig::bulk("a", cc);
            f.size_bytes = Some(2_000_003);
            f.mss_change = Some(netsim::MssChange {
                at_ns: 300 * MS,
                mss: to,
            });
            let cfg = sim(vec![f], "loss = { bernoulli = 0.02 }", 30);
            let s = netsim::run(&cfg, &mut netsim::NoRecorder).unwrap();
            let flow = &s.flows[0];
            assert_eq!(flow.delivered_bytes, 2_000_003, "{alg:?} {from} -> {to}");
            assert!(
                flow.completion_ns.is_some(),
                "{alg:?} {from} -> {to}: not complete"
            );
            assert!(flow.retransmissions > 0, "{alg:?}: the loss was exercised");
        }
    }
}

/// Linux's receiver offers a window and the simulated TCP sender keeps to
/// it, as the kernel's does (`tcp_snd_wnd_test()`): with the receive
/// buffer held to 20,000 bytes (13 whole 1,500-byte segments) on a
/// 10 Mbit/s, 40 ms path, at most 13 segments are ever in flight and the
/// goodput is about 13 segments per round trip (3.9 Mbit/s; 3.0-4.2
/// allowed for the queue the flow's own bursts add to the round trip and
/// the first round trips), where an ACK per packet (no window) fills the
/// link. The summary counts the time new data waited for the window, as
/// the kernel's `tcpi_rwnd_limited` does: most of the run here (8.6 s of
/// 10; CUBIC's window passes 13 segments in its second round trip, and
/// the waits between a window's opening and the pacer's next departure
/// do not count, as in `tcp_write_xmit()`, which tests pacing and cwnd
/// before the window), under a second with Linux's default buffer,
/// which follows the flow, and no figure for a receiver that offers no
/// window.
#[test]
fn a_linux_receivers_window_holds_the_sender() {
    let run = |ack: AckPolicy| {
        let mut f = FlowConfig::bulk("f", Config::new(Algorithm::Cubic));
        f.ack = ack;
        let mut rec = MemoryRecorder::default();
        let s = netsim::run(&sim(vec![f], "", 10), &mut rec).unwrap();
        let peak = rec.flows.iter().map(|x| x.inflight_peak_bytes).max();
        let f = &s.flows[0];
        (f.goodput_bps / 1e6, peak.unwrap(), f.rwnd_limited_ns)
    };
    let small = AckPolicy::Linux {
        quickacks: 16,
        max_delay_ns: 40 * MS,
        comp_sack_delay_ns: MS,
        comp_sack_slack_ns: 100_000,
        comp_sack_max: 44,
        rcv_window_init: 20_000,
        rcv_window_max: 20_000,
        autotuning: Default::default(),
    };
    let mss = Config::new(Algorithm::Cubic).mss_bytes;
    assert_eq!(mss, 1500);
    let (goodput, peak, limited) = run(small);
    assert!(peak <= 13 * mss, "{peak} bytes in flight");
    assert!((3.0..=4.2).contains(&goodput), "{goodput:.2} Mbit/s");
    let limited = limited.expect("Linux's receiver offers a window") as f64 / 1e9;
    assert!(
        (8.0..=10.0).contains(&limited),
        "{limited:.3} s window-limited"
    );
    let (every, _, none) = run(AckPolicy::EveryPacket);
    assert!(every >= 9.0, "{every:.2} Mbit/s without a window");
    assert_eq!(none, None);
    let (_, _, linux) = run(AckPolicy::LINUX);
    let linux = linux.expect("a window") as f64 / 1e9;
    assert!(
        linux < 1.0,
        "{linux:.3} s window-limited with Linux's buffer"
    );
}

/// A flow told to stop at 4 s of a 12 s run is active until its last new
/// byte arrives, not until the run ends: its goodput is near the 10
/// Mbit/s link's (it had the link alone), where the whole run's average
/// was a third of that, and Jain's index beside a flow that ran the whole
/// time counts both as the link's, not the stopped one as starved.
#[test]
fn a_stopped_flow_is_active_until_its_last_byte_arrives() {
    let mut early = FlowConfig::bulk("early", Config::new(Algorithm::Cubic));
    early.stop_ns = Some(4 * SEC);
    let s = netsim::run(&sim(vec![early.clone()], "", 12), &mut netsim::NoRecorder).unwrap();
    let f = &s.flows[0];
    // Over its 4 s (and the last round trip's data after the stop), the
    // link minus slow start: at least 8 of its 10 Mbit/s, and no more
    // than the link.
    assert!(
        (8.0e6..=10.0e6).contains(&f.goodput_bps),
        "{} bit/s over {} bytes",
        f.goodput_bps,
        f.delivered_bytes
    );
    // The same bytes over the whole 12 s would be at most a third of it.
    assert!(f.delivered_bytes as f64 * 8.0 / 12.0 < 0.4 * f.goodput_bps);

    // Beside a flow running the whole time, and one stopping at the end
    // of the run, which is not cut short.
    let late = FlowConfig::bulk("late", Config::new(Algorithm::Cubic));
    let mut at_end = FlowConfig::bulk("at_end", Config::new(Algorithm::Cubic));
    at_end.stop_ns = Some(12 * SEC);
    let s = netsim::run(
        &sim(vec![early, late, at_end], "", 12),
        &mut netsim::NoRecorder,
    )
    .unwrap();
    let whole = |f: &netsim::FlowSummary| f.delivered_bytes as f64 * 8.0 / 12.0;
    assert_eq!(s.flows[1].goodput_bps, whole(&s.flows[1]));
    assert_eq!(s.flows[2].goodput_bps, whole(&s.flows[2]));
    assert!(s.flows[0].goodput_bps > 1.5 * whole(&s.flows[0]));
}
