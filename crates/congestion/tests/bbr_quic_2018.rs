//! The QUIC-2018 flavour of BBR v1 (`BbrConfig::quic_2018()`): one test per
//! switch, each showing the switch changes exactly the rule it names, with
//! expected values derived from the rule (Chromium `bbr_sender.cc` of
//! 2018), not read back from the implementation.

mod support;

use congestion::{
    AckAggregation, AckEvent, AckedPacket, Algorithm, BbrConfig, BbrFlavour, BbrRecovery, Config,
    LostPacket, MinRttSamples, Mode, SentPacketState,
};
use std::time::Duration;
use support::*;

const RTT: u64 = 100 * MS;

fn with(bbr: BbrConfig) -> Config {
    let mut s = Config::new(Algorithm::Bbr);
    s.bbr = bbr;
    s
}

#[test]
fn the_flavour_sets_every_named_switch_and_linux_stays_the_default() {
    let linux = BbrConfig::default();
    assert_eq!(BbrConfig::flavour(BbrFlavour::Linux), linux);
    assert!(linux.quantization_budget && linux.lt_bw);
    assert_eq!(linux.min_cwnd_bytes, None);
    assert_eq!(linux.ack_aggregation, AckAggregation::Linux);
    assert_eq!(linux.min_rtt_samples, MinRttSamples::Latest);
    assert!(!linux.bw_window_follows_cycle);
    // Linux's recovery wherever the transport ends episodes as TCP does.
    assert_eq!(linux.recovery, BbrRecovery::Auto);
    assert_eq!(
        linux.recovery.resolve(congestion::RecoveryExit::Transport),
        BbrRecovery::Linux
    );
    assert_eq!(
        linux
            .recovery
            .resolve(congestion::RecoveryExit::FirstAckAfterStart),
        BbrRecovery::Quic2018
    );
    let q = BbrConfig::flavour(BbrFlavour::Quic2018);
    assert!(!q.quantization_budget);
    assert_eq!(q.min_cwnd_bytes, Some(4 * 1460));
    assert_eq!(q.ack_aggregation, AckAggregation::Quic2018);
    assert_eq!(q.min_rtt_samples, MinRttSamples::AllAcked);
    assert!(q.bw_window_follows_cycle);
    assert_eq!(q.recovery, BbrRecovery::Quic2018);
    assert_eq!(q.pacing_margin, 0.0);
    assert!(!q.lt_bw, "QUIC 2018 had no long-term bandwidth sampling");
    // Everything else is Linux's.
    assert_eq!(q.bw_window_rounds, linux.bw_window_rounds);
    assert_eq!(q.cwnd_gain, linux.cwnd_gain);
    assert_eq!(q.high_gain, linux.high_gain);
}

#[test]
fn without_quantization_budget_drain_ends_at_exactly_one_bdp() {
    let cfg = with({
        let mut s = BbrConfig::default();
        s.quantization_budget = false;
        s
    });
    let mut d = RoundDriver::new(&cfg);
    let bw = 1e6; // bytes/s
    to_drain(&mut d, bw, RTT);
    let bdp = (bw * 0.1) as u64; // min_rtt 100 ms
                                 // One byte above the BDP keeps DRAIN; the BDP itself ends it. With the
                                 // budget, DRAIN would end several packets above (see bbr_rules.rs).
    assert_eq!(d.round(bw, RTT, bdp + 1, false).mode, Mode::Drain);
    assert_eq!(d.round(bw, RTT, bdp, false).mode, Mode::ProbeBw);
}

#[test]
fn with_the_budget_drain_ends_well_above_one_bdp() {
    let mut d = RoundDriver::new(&Config::new(Algorithm::Bbr));
    let bw = 1e6;
    to_drain(&mut d, bw, RTT);
    let bdp = (bw * 0.1) as u64;
    // Linux: BDP + 3 send quanta (≥ 2 packets each) rounded up.
    assert_eq!(d.round(bw, RTT, bdp + 4 * 1500, false).mode, Mode::ProbeBw);
}

#[test]
fn a_fixed_byte_floor_replaces_the_four_packet_floor() {
    let cfg = with(BbrConfig::quic_2018());
    let mut d = RoundDriver::new(&cfg);
    let mut low = u64::MAX;
    // A crawling path: the BDP is far below 4 packets.
    for _ in 0..40 {
        let s = d.round(1000.0, 10 * MS, 0, false);
        assert!(s.cwnd_bytes >= 4 * 1460, "cwnd {}", s.cwnd_bytes);
        low = low.min(s.cwnd_bytes);
    }
    // With no budget on top, the floor itself is reached: 5840 B, not
    // Linux's 4 × 1500 B.
    assert_eq!(low, 4 * 1460);
}

/// One ACK that newly acknowledges a single packet sent `age` ago, with
/// the transport's own RTT sample `rtt_sample` and ACK delay `delay`.
fn ack_one(d: &mut RoundDriver, age: u64, rtt_sample: Option<u64>, delay: u64) {
    d.now_ns += MS;
    let sent = d.now_ns - age;
    let state = SentPacketState {
        sent_time: at(sent),
        delivered_bytes: 0,
        delivered_time: at(sent),
        first_sent_time: at(sent),
        is_app_limited: true,
        bytes_in_flight: 1500,
        lost_bytes: 0,
        delivered_packets: 0,
        delivered_ce_packets: 0,
    };
    d.cc.on_ack(
        &AckEvent::new(at(d.now_ns), &[AckedPacket { bytes: 1500, state }], 1500, 0).rtt(
            rtt_sample.map(Duration::from_nanos),
            Duration::from_nanos(delay),
        ),
    );
}

fn min_rtt_ms(d: &RoundDriver) -> f64 {
    d.cc.snapshot().min_rtt.unwrap().as_secs_f64() * 1e3
}

#[test]
fn all_acked_min_rtt_uses_packets_without_a_transport_sample_and_ignores_ack_delay() {
    for samples in [MinRttSamples::Latest, MinRttSamples::AllAcked] {
        let cfg = with({
            let mut s = BbrConfig::default();
            s.min_rtt_samples = samples;
            s.probe_rtt = false;
            s
        });
        let mut d = RoundDriver::new(&cfg);
        d.now_ns = SEC;
        ack_one(&mut d, RTT, Some(RTT), 0);
        assert_eq!(min_rtt_ms(&d), 100.0);
        // A reordered packet whose ACK carries no transport RTT sample (its
        // largest acknowledged was acknowledged before), sent 40 ms ago.
        ack_one(&mut d, 40 * MS, None, 0);
        let after_reorder = min_rtt_ms(&d);
        // 11 s later min_rtt has expired; a 150 ms sample with a 10 ms ACK
        // delay arrives.
        d.now_ns += 11 * SEC;
        ack_one(&mut d, 150 * MS, Some(150 * MS), 10 * MS);
        let after_expiry = min_rtt_ms(&d);
        match samples {
            MinRttSamples::Latest => {
                assert_eq!(after_reorder, 100.0, "no transport sample, no update");
                // Linux suspects only a lone runt's ACK of delay
                // (`FLAG_ACK_MAYBE_DELAYED`), whatever the ACK delay says.
                assert_eq!(after_expiry, 150.0, "a full-sized packet's ACK replaces it");
            }
            MinRttSamples::AllAcked => {
                assert_eq!(after_reorder, 40.0, "every acked packet is a sample");
                assert_eq!(after_expiry, 150.0, "an expired value is replaced");
            }
            other => panic!("no expectation written for {other:?}"),
        }
    }
}

/// ACKs held and released every `burst` on a 20 Mbit/s, 20 ms path.
fn aggregation_run(cfg: &Config, burst_ms: u64) -> RunResult {
    let mut path = Path::new(20.0, 20, 2000);
    path.ack_burst_ns = Some(burst_ms * MS);
    run_path(&path, cfg, 20 * SEC)
}

#[test]
fn quic_ack_height_is_not_capped_at_bw_times_100ms_nor_at_cwnd() {
    // ACKs released every 200 ms: twice Linux's 100 ms cap.
    let quic = aggregation_run(
        &with({
            let mut s = BbrConfig::default();
            s.ack_aggregation = AckAggregation::Quic2018;
            s
        }),
        200,
    );
    let linux = aggregation_run(&Config::new(Algorithm::Bbr), 200);
    let over_cap = |r: &RunResult| {
        r.window(5 * SEC, 20 * SEC)
            .filter(|x| x.snap.full_bw_reached)
            .filter(|x| {
                let bw = x.snap.bw_estimate_bytes_per_sec.unwrap_or(0.0);
                x.snap.extra_acked_bytes as f64 > 1.2 * bw * 0.1
            })
            .count()
    };
    assert_eq!(over_cap(&linux), 0, "Linux caps at bw × 100 ms");
    // A 200 ms burst at 20 Mbit/s holds back ≈ 500 kB, 2× the cap: QUIC's
    // uncapped max filter must exceed the cap by 20 % at some point.
    assert!(
        over_cap(&quic) > 0,
        "QUIC's max_ack_height never exceeded the cap"
    );
}

#[test]
fn bw_window_follows_the_shortened_cycle_of_bbr_jitter() {
    // Rounds in which a single 2× bandwidth sample survives in the filter.
    let survives = |follows: bool| -> usize {
        let cfg = {
            let mut s = Config::new(Algorithm::BbrJitter);
            s.bbr = {
                let mut s = BbrConfig::default();
                s.bw_window_follows_cycle = follows;
                s.probe_rtt = false;
                s
            };
            s
        };
        let mut d = RoundDriver::new(&cfg);
        // RTT samples alternating 30 / 150 ms: rttvar ≫ 0.3 × srtt, so the
        // variant uses srtt and its five-phase cycle throughout.
        let mut k = 0u64;
        let mut step = |d: &mut RoundDriver, rate: f64| {
            k += 1;
            let rtt = if k % 2 == 0 { 30 * MS } else { 150 * MS };
            let bytes = (rate * 0.1) as u64;
            d.ack_after(bytes, RTT, rtt, 0, false)
        };
        for _ in 0..20 {
            step(&mut d, 1e6);
        }
        assert!(d.cc.snapshot().jitter.unwrap().using_srtt);
        step(&mut d, 2e6);
        (0..30)
            .take_while(|_| step(&mut d, 1e6).bw_estimate_bytes_per_sec.unwrap() > 1.5e6)
            .count()
    };
    let fixed = survives(false);
    let follows = survives(true);
    // A windowed max keeps a sample for its window (10 rounds; 5 + 2 = 7
    // with the shortened cycle), give or take the filter's sub-window
    // bookkeeping of one round.
    assert!(
        (9..=11).contains(&fixed),
        "fixed window kept it {fixed} rounds"
    );
    assert!(
        (6..=8).contains(&follows),
        "cycle window kept it {follows} rounds"
    );
}

/// QUIC 2018's recovery window (`CalculateRecoveryWindow()`): cwnd itself
/// is not cut; a separate window starts at inflight + acked, holds in the
/// first round (conservation), then grows by the bytes acked; recovery
/// ends on an ACK without loss for a packet sent after the latest loss.
#[test]
fn quic_recovery_bounds_a_separate_window_and_leaves_cwnd_alone() {
    let cfg = with({
        let mut s = BbrConfig::default();
        s.recovery = BbrRecovery::Quic2018;
        s
    });
    let mut d = RoundDriver::new(&cfg);
    to_drain(&mut d, 1e6, RTT);
    d.round(1e6, RTT, 50_000, false);
    assert_eq!(d.cc.snapshot().mode, Mode::ProbeBw);
    let cwnd0 = d.cc.cwnd_bytes();
    assert!(
        cwnd0 > 100_000,
        "cwnd {cwnd0} should be near 2 BDP = 200 kB"
    );
    // 30 kB declared lost (by a timer), then an ACK of 1500 B leaving
    // 20 kB in flight.
    let lost_state = SentPacketState {
        sent_time: at(d.now_ns),
        delivered_bytes: 0,
        delivered_time: at(d.now_ns),
        first_sent_time: at(d.now_ns),
        is_app_limited: false,
        bytes_in_flight: 50_000,
        lost_bytes: 0,
        delivered_packets: 0,
        delivered_ce_packets: 0,
    };
    d.cc.on_timer_losses(
        at(d.now_ns),
        &[LostPacket {
            bytes: 30_000,
            state: lost_state,
        }],
        1,
        20_000,
    );
    let s = d.ack_after(1500, RTT, RTT, 20_000, false);
    // The window starts at inflight + acked; cwnd itself is untouched.
    assert_eq!(s.cwnd_bytes, 21_500);
    // Next ACK: a new round (conservation is over), no loss, 1500 B acked,
    // 15 kB in flight, but the packet was sent at the loss time, not after
    // it: still recovering, the window grows by the bytes acked.
    let s = d.ack_after(1500, RTT, RTT, 15_000, false);
    assert_eq!(s.cwnd_bytes, 23_000);
    // A packet sent after the loss, acknowledged without loss: recovery
    // ends and the (uncut) cwnd is back in force.
    let s = d.ack_after(1500, RTT, RTT, 15_000, false);
    assert!(s.cwnd_bytes >= cwnd0, "cwnd {} < {cwnd0}", s.cwnd_bytes);
}

/// The library's default for a QUIC-style transport (RFC 9002 episodes,
/// no recovery-point calls): `BbrRecovery::Auto` picks QUIC's recovery
/// window, which keeps BBR near the link under 5 % random loss; Linux's
/// rule under the same short episodes restarts packet conservation nearly
/// every round and collapses.
#[test]
fn under_rfc9002_episodes_the_default_recovery_keeps_bbr_near_the_link_at_5_percent_loss() {
    let mut path = Path::new(100.0, 100, 1000);
    path.loss = 0.05;
    let auto = run_path(&path, &Config::new(Algorithm::Bbr), 30 * SEC);
    let mut linux_cfg = Config::new(Algorithm::Bbr);
    linux_cfg.bbr.recovery = BbrRecovery::Linux;
    let linux = run_path(&path, &linux_cfg, 30 * SEC);
    let (ga, gl) = (
        auto.goodput_bps(10 * SEC, 30 * SEC),
        linux.goodput_bps(10 * SEC, 30 * SEC),
    );
    // Link × (1 − p) is 95 Mbit/s; "near" is ≥ 70 % of it (PROBE_RTT and
    // the probing cycle's drain phase cost a few per cent, loss recovery
    // more). The collapse is below a third of it.
    assert!(ga >= 0.7 * 95e6, "default (auto → QUIC recovery): {ga}");
    assert!(
        gl <= 0.33 * 95e6,
        "Linux's rule under RFC 9002 episodes: {gl}"
    );
}
