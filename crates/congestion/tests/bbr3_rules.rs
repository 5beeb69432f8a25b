//! One test per `bbr3` rule, driven by scripted ACKs (see `bbr3_support`).
//! Expected values are derived from draft-ietf-ccwg-bbr-06's pseudocode
//! (or, for `linux-v3`, the v3 branch's `tcp_bbr.c`), not read back from
//! the implementation. The path is 1 MB/s with a 100 ms RTT (BDP
//! 100 000 B) unless a test says otherwise; MSS 1500 B, initial cwnd 10.

mod bbr3_support;

use bbr3_support::*;
use congestion::{AckEvent, AckedPacket, Bbr3Config, Mode};
use std::time::Duration;

const RTT: u64 = 100 * MS;
const BW: f64 = 1e6;
const BDP: u64 = 100_000;

/// §5.3.1.1 / §5.6.2: STARTUP paces at 2.77 × and keeps cwnd at 2 × BDP;
/// before any RTT the rate is 2.77 × initial cwnd / 1 ms, less the 1 %
/// margin (`InitPacingRate()`).
#[test]
fn startup_gains_and_initial_pacing_rate() {
    let d = Drv::draft();
    let s = d.snap();
    assert_eq!(s.mode, Mode::Startup);
    assert_eq!((s.pacing_gain, s.cwnd_gain), (2.77, 2.0));
    let want = 2.77 * 15_000.0 / 1e-3 * 0.99;
    assert!((s.pacing_rate_bytes_per_sec as f64 - want).abs() <= 1.0);
    // Linux: (256 × 277 / 100 + 1) / 256 = 710/256.
    let l = Drv::linux().snap();
    assert_eq!(l.pacing_gain, 710.0 / 256.0);
}

/// §5.3.1.2: three non-app-limited rounds with < 25 % growth end STARTUP;
/// growth restarts the count. (Appendix A.1 with scripted samples.)
#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    for b3 in [Bbr3Config::draft(), Bbr3Config::linux_v3()] {
        let mut d = Drv::new(b3);
        for r in [1e5, 2e5, 4e5, 8e5] {
            assert_eq!(d.round(r, RTT, 1 << 30).mode, Mode::Startup);
        }
        // 9e5 < 1.25 × 8e5: plateau 1; 1.1e6 ≥ 1e6: growth, restart.
        d.round(9e5, RTT, 1 << 30);
        d.round(1.1e6, RTT, 1 << 30);
        assert_eq!(d.round(1.2e6, RTT, 1 << 30).mode, Mode::Startup); // 1
        assert_eq!(d.round(1.2e6, RTT, 1 << 30).mode, Mode::Startup); // 2
        let s = d.round(1.2e6, RTT, 1 << 30); // 3
        assert!(s.full_bw_reached);
        assert_eq!(s.mode, Mode::Drain);
        assert_eq!(s.bw_estimate_bytes_per_sec, Some(1.2e6));
    }
}

/// §5.3.1.2 and appendix A.7: app-limited rounds never count towards the
/// plateau, so an app-limited flow without loss stays in STARTUP.
#[test]
fn app_limited_startup_without_loss_never_exits() {
    let mut d = Drv::draft();
    for r in [1e5, 2e5, 4e5] {
        d.round(r, RTT, 1 << 30);
    }
    for _ in 0..40 {
        let s = d.ack(Ack::new(4e5, RTT, 10_000).app_limited());
        assert_eq!(s.mode, Mode::Startup);
        assert!(!s.full_bw_reached);
    }
}

/// Plays STARTUP with growing rates, then a first loss, then `second`
/// as the ACK that ends the loss round.
fn startup_with_losses(d: &mut Drv, second: Ack) {
    for r in [1e5, 2e5, 4e5] {
        d.round(r, RTT, 1 << 30);
    }
    d.ack(Ack::new(8e5, RTT, 200_000).lose(1, 1));
    d.ack(second);
}

/// §5.3.1.3: after a full round in recovery with loss above 2 % of what
/// was in flight and at least 6 discontiguous lost ranges, STARTUP ends:
/// full_bw_reached, inflight_longterm = max(BDP, inflight_latest), DRAIN.
#[test]
fn startup_exits_on_high_loss_in_six_ranges() {
    let mut d = Drv::draft();
    // 8 packets = 12 000 B lost of tx_in_flight 300 000 (4 %), 6 ranges,
    // plus the round's first loss: 7 ranges.
    startup_with_losses(&mut d, Ack::new(1.6e6, RTT, 200_000).tx(300_000).lose(8, 6));
    let s = d.snap();
    assert!(s.full_bw_reached);
    assert_eq!(s.mode, Mode::Drain);
    // BDP = 1.6e6 B/s × 0.1 s = 160 000; inflight_latest: this round
    // delivered 160 000 too.
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, Some(160_000));
}

/// §5.3.1.3, each criterion on its own: 5 ranges, or exactly 2 % lost,
/// keep STARTUP going.
#[test]
fn startup_high_loss_needs_six_ranges_and_more_than_two_percent() {
    let mut d = Drv::draft();
    // 1 + 4 ranges = 5.
    startup_with_losses(&mut d, Ack::new(1.6e6, RTT, 200_000).tx(300_000).lose(8, 4));
    assert_eq!(d.mode(), Mode::Startup);
    let mut d = Drv::draft();
    // 4 packets = 6 000 B = exactly 2 % of 300 000: not above.
    startup_with_losses(&mut d, Ack::new(1.6e6, RTT, 200_000).tx(300_000).lose(4, 6));
    assert_eq!(d.mode(), Mode::Startup);
}

/// Appendix A.2: the high-loss exit works when the samples are app-limited.
#[test]
fn startup_exits_on_loss_when_app_limited() {
    let mut d = Drv::draft();
    for r in [1e5, 2e5, 4e5] {
        d.round(r, RTT, 1 << 30);
    }
    d.ack(Ack::new(4e5, RTT, 50_000).app_limited().lose(1, 1));
    d.ack(
        Ack::new(4e5, RTT, 50_000)
            .app_limited()
            .tx(100_000)
            .lose(4, 6),
    );
    let s = d.snap();
    assert!(s.full_bw_reached);
    assert_eq!(s.mode, Mode::Drain);
}

/// Appendix A.3: DRAIN paces at 0.5 and ends once inflight ≤ Inflight(1.0)
/// = max(BDP, 3 send quanta, 4 packets) = 100 000 here.
#[test]
fn drain_ends_when_inflight_reaches_one_bdp() {
    let mut d = Drv::draft();
    d.drive_to_drain(BW, RTT);
    assert_eq!(d.snap().pacing_gain, 0.5);
    assert_eq!(d.round(BW, RTT, BDP + 1).mode, Mode::Drain);
    let s = d.round(BW, RTT, BDP);
    assert!(
        matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise),
        "{:?}",
        s.mode
    );
}

/// Appendix A.4 (§5.3.2): with inflight stuck above the BDP the draft
/// leaves DRAIN after 3 rounds (round_count > drain_start_round + 3).
#[test]
fn drain_ends_after_three_rounds_even_above_the_bdp() {
    let mut d = Drv::draft();
    d.drive_to_drain(BW, RTT);
    for _ in 0..3 {
        assert_eq!(d.round(0.9 * BW, RTT, 2 * BDP).mode, Mode::Drain);
    }
    assert_eq!(d.round(0.9 * BW, RTT, 2 * BDP).mode, Mode::ProbeBwDown);
}

/// Appendix A.8 (§5.3.3.1): DOWN paces at 0.90 and moves to CRUISE only
/// once inflight is at most the BDP.
#[test]
fn down_paces_at_0_9_and_cruises_once_inflight_is_at_most_the_bdp() {
    let mut d = Drv::draft();
    d.drive_to_drain(BW, RTT);
    for _ in 0..4 {
        d.round(BW, RTT, 2 * BDP);
    }
    let s = d.snap();
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert_eq!(s.pacing_gain, 0.9);
    assert_eq!(d.round(BW, RTT, BDP + 1500).mode, Mode::ProbeBwDown);
    let s = d.round(BW, RTT, BDP);
    assert_eq!(s.mode, Mode::ProbeBwCruise);
    assert_eq!(s.pacing_gain, 1.0);
}

/// Reaches DOWN with inflight_longterm = 160 000 set by STARTUP's
/// high-loss exit, then DRAIN's 3-round timeout.
fn down_with_inflight_longterm() -> Drv {
    let mut d = Drv::draft();
    startup_with_losses(&mut d, Ack::new(1.6e6, RTT, 200_000).tx(300_000).lose(8, 6));
    for _ in 0..4 {
        d.ack(Ack::new(1.6e6, RTT, 400_000).tx(150_000));
    }
    assert_eq!(d.mode(), Mode::ProbeBwDown);
    assert_eq!(d.b3().inflight_longterm_bytes, Some(160_000));
    d
}

/// Appendix A.8 with headroom (§5.3.3.9 `InflightWithHeadroom()`): with
/// inflight_longterm = 160 000 DOWN holds until inflight ≤ 160 000 −
/// 15 % = 136 000, below the BDP of 160 000.
#[test]
fn down_waits_for_headroom_below_inflight_longterm() {
    let mut d = down_with_inflight_longterm();
    let s = d.ack(Ack::new(1.6e6, RTT, 136_001).tx(150_000));
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let s = d.ack(Ack::new(1.6e6, RTT, 136_000).tx(150_000));
    assert_eq!(s.mode, Mode::ProbeBwCruise);
}

/// Appendix A.9 (§5.3.3.8): with inflight stuck above the target, DOWN
/// goes straight to REFILL once the drawn 2–3 s wait has elapsed.
#[test]
fn down_goes_to_refill_after_the_probe_wait() {
    let mut d = Drv::draft();
    d.drive_to_drain(BW, RTT);
    for _ in 0..4 {
        d.round(BW, RTT, 2 * BDP);
    }
    assert_eq!(d.mode(), Mode::ProbeBwDown);
    let t0 = d.now_ns;
    let wait = d.b3().bw_probe_wait.as_nanos() as u64;
    assert!((2 * SEC..3 * SEC).contains(&wait), "{wait}");
    loop {
        let s = d.round(BW, RTT, 2 * BDP);
        if s.mode != Mode::ProbeBwDown {
            assert_eq!(s.mode, Mode::ProbeBwRefill);
            // The first ACK after the wait (the DOWN entry ACK is t0).
            let elapsed = d.now_ns - t0;
            assert!(
                elapsed > wait && elapsed <= wait + RTT,
                "{elapsed} vs {wait}"
            );
            break;
        }
    }
}

/// §5.3.3.8.2: with a BDP of 10 packets the Reno bound probes after
/// min(10, 63) rounds, counting from the random head start of 0 or 1.
#[test]
fn reno_coexistence_bound_probes_after_bdp_in_packets_rounds() {
    let bw = 1.5e5; // BDP = 15 000 B = 10 packets
    for seed in 0..8 {
        let mut cfg = config(Bbr3Config::draft());
        cfg.seed = seed;
        let mut d = Drv::with_config(&cfg);
        d.drive_to_drain(bw, RTT);
        let s = d.round(bw, RTT, 0);
        assert!(matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise));
        let start = s.bbr3.unwrap().rounds_since_probe_up;
        assert!(start <= 1, "head start {start}");
        let mut acks = 0;
        while d.round(bw, RTT, 10_000).mode != Mode::ProbeBwRefill {
            acks += 1;
            assert!(acks < 20);
        }
        acks += 1;
        assert_eq!(acks, 10 - start, "seed {seed}");
    }
}

/// Reaches CRUISE on the default path.
fn cruise() -> Drv {
    let mut d = Drv::draft();
    d.drive_to_probe_bw(BW, RTT);
    let s = d.round(BW, RTT, BDP);
    assert_eq!(s.mode, Mode::ProbeBwCruise);
    d
}

/// §5.3.3.3–5: REFILL lasts one round at gain 1.0 and forgets the
/// short-term model; UP paces at 1.25 with cwnd gain 2.25.
#[test]
fn refill_lasts_one_round_then_up_probes_at_1_25() {
    let mut d = cruise();
    let s = d.until(Mode::ProbeBwRefill, BW, RTT, BDP, 80);
    assert_eq!((s.pacing_gain, s.cwnd_gain), (1.0, 2.0));
    assert_eq!(s.bbr3.unwrap().bw_shortterm_bytes_per_sec, None);
    let s = d.round(BW, RTT, BDP);
    assert_eq!(s.mode, Mode::ProbeBwUp);
    assert_eq!((s.pacing_gain, s.cwnd_gain), (1.25, 2.25));
}

/// Appendix A.5 (§5.3.3.7): UP ends after three rounds without 25 %
/// growth (not limited by inflight_longterm) and goes DOWN.
#[test]
fn up_ends_on_a_bandwidth_plateau() {
    let mut d = cruise();
    d.until(Mode::ProbeBwUp, BW, RTT, BDP, 80);
    assert_eq!(d.round(BW, RTT, BDP).mode, Mode::ProbeBwUp);
    assert_eq!(d.round(BW, RTT, BDP).mode, Mode::ProbeBwUp);
    let s = d.round(BW, RTT, BDP);
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert!(!s.bbr3.unwrap().prev_probe_too_high);
}

/// Reaches UP on the default path.
fn up(b3: Bbr3Config) -> Drv {
    let mut d = Drv::new(b3);
    d.drive_to_probe_bw(BW, RTT);
    d.until(Mode::ProbeBwUp, BW, RTT, BDP, 80);
    d
}

/// Appendix A.21 (§5.5.10.2): losses while probing are judged packet by
/// packet. With tx_in_flight 200 000, the third lost packet takes the
/// loss since send to 4 500 > 2 % × 200 000; InflightAtLoss solves for
/// the prefix: 198 500 + (0.02 × 198 500 − 3 000)/0.98 = 199 489.8 → 199 490
/// (above β × target = 70 000). UP stops and goes DOWN.
#[test]
fn loss_in_up_sets_inflight_longterm_at_the_loss_threshold() {
    // The losses alone (before their ACK) end the probe, gains included.
    let mut d = up(Bbr3Config::draft());
    d.lose_now(10, 1, 200_000, 125_000);
    let s = d.snap();
    assert_eq!(
        (s.mode, s.pacing_gain, s.cwnd_gain),
        (Mode::ProbeBwDown, 0.9, 2.0)
    );
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, Some(199_490));
    let mut d = up(Bbr3Config::draft());
    let s = d.ack(
        Ack::new(BW, RTT, 125_000)
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let b = s.bbr3.unwrap();
    assert_eq!(b.inflight_longterm_bytes, Some(199_490));
    assert!(b.prev_probe_too_high);
    // Linux rounds the budget up (ceil(198 500 × 5/256) = 3 877) and
    // divides by 251/256: 198 500 + 877 × 256/251 = 199 394.5 → 199 395.
    let mut d = up(Bbr3Config::linux_v3());
    let s = d.ack(
        Ack::new(BW, RTT, 125_000)
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, Some(199_395));
}

/// Per-packet judgement: two lost packets of 200 000 in flight (1.5 %)
/// are no reason to stop probing.
#[test]
fn loss_below_two_percent_keeps_probing() {
    let mut d = up(Bbr3Config::draft());
    let s = d.ack(Ack::new(BW, RTT, BDP).tx(150_000).lose_at(2, 1, 200_000));
    assert_eq!(s.mode, Mode::ProbeBwUp);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
}

/// Appendix A.6: an app-limited probe that sees high loss still goes DOWN,
/// but sets no inflight_longterm (it did not probe the volume robustly).
#[test]
fn app_limited_loss_in_up_goes_down_without_a_bound() {
    let mut d = up(Bbr3Config::draft());
    let s = d.ack(
        Ack::new(BW, RTT, 125_000)
            .app_limited()
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
}

/// §5.3.3.6: after a probe that went too high, the next UP stops as soon
/// as inflight reaches inflight_longterm (precautionary deceleration);
/// if that round then shows no high loss, it re-probes at once, REFILL
/// without CRUISE (precautionary acceleration).
#[test]
fn precautionary_probe_stops_at_inflight_longterm_then_reprobes() {
    let mut d = up(Bbr3Config::draft());
    d.ack(
        Ack::new(BW, RTT, 125_000)
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    assert!(d.b3().prev_probe_too_high);
    d.until(Mode::ProbeBwUp, BW, RTT, BDP, 80);
    // Rounds with tx_in_flight above it raised it on the way (§5.3.3.9).
    let il = d.b3().inflight_longterm_bytes.unwrap();
    // Below inflight_longterm: keep probing.
    let s = d.ack(Ack::new(BW, RTT, il - 1).tx(150_000));
    assert_eq!(s.mode, Mode::ProbeBwUp);
    // At it: stop early.
    let s = d.ack(Ack::new(BW, RTT, il).tx(150_000));
    assert_eq!(s.mode, Mode::ProbeBwDown);
    assert!(!s.bbr3.unwrap().prev_probe_too_high);
    // One clean round later: straight back to REFILL.
    let s = d.ack(Ack::new(BW, RTT, il).tx(150_000));
    assert_eq!(s.mode, Mode::ProbeBwRefill);
}

/// Plays a lossy round in the current state: the ACK `a` reveals a loss
/// (one packet of 300 000 in flight, 0.5 %), then an ACK at `rate` ends
/// the loss round. Both ACKs deliver `rate`.
fn lossy_round(d: &mut Drv, rate: f64, inflight: u64) -> congestion::Snapshot {
    d.ack(
        Ack::new(rate, RTT, inflight)
            .tx(300_000)
            .lose_at(1, 1, 300_000),
    );
    d.ack(Ack::new(rate, RTT, inflight).tx(300_000))
}

/// §5.5.10.3: CRUISE is not probing, so a lossy round cuts the short-term
/// model: bw_shortterm = max(bw_latest, 0.7 × max_bw), inflight_shortterm
/// = max(inflight_latest, 0.7 × cwnd).
#[test]
fn cruise_applies_the_short_term_cuts() {
    let mut d = cruise();
    d.round(3e5, RTT, 30_000);
    let cwnd = d.snap().cwnd_bytes;
    let s = lossy_round(&mut d, 3e5, 30_000);
    assert_eq!(s.mode, Mode::ProbeBwCruise);
    let b = s.bbr3.unwrap();
    assert!(near(b.bw_shortterm_bytes_per_sec.unwrap(), 0.7 * BW, 1e-9));
    let want = (0.7 * cwnd as f64) as u64;
    assert_eq!(b.inflight_shortterm_bytes, Some(want.max(30_000)));
    // BBR.bw = min(max_bw, bw_shortterm): pacing follows the cut.
    assert!(near(b.bw_bytes_per_sec, 0.7 * BW, 1e-9));
}

/// §5.5.10.3: DOWN is not probing either, so it applies the cuts too (an
/// implementation that treats all four PROBE_BW phases as probing would
/// not); a second lossy round cuts again by β.
#[test]
fn down_applies_the_short_term_cuts_every_lossy_round() {
    let mut d = Drv::draft();
    d.drive_to_drain(BW, RTT);
    for _ in 0..4 {
        d.round(BW, RTT, 2 * BDP);
    }
    assert_eq!(d.mode(), Mode::ProbeBwDown);
    d.round(2e5, RTT, 2 * BDP);
    let s = lossy_round(&mut d, 2e5, 2 * BDP);
    assert_eq!(s.mode, Mode::ProbeBwDown);
    let bw1 = s.bbr3.unwrap().bw_shortterm_bytes_per_sec.unwrap();
    assert!(near(bw1, 0.7 * BW, 1e-9), "{bw1}");
    let s = lossy_round(&mut d, 2e5, 2 * BDP);
    let bw2 = s.bbr3.unwrap().bw_shortterm_bytes_per_sec.unwrap();
    assert!(near(bw2, 0.49 * BW, 1e-9), "{bw2}");
    // Never below what the last round delivered.
    for _ in 0..10 {
        lossy_round(&mut d, 2e5, 2 * BDP);
    }
    let bw = d.b3().bw_shortterm_bytes_per_sec.unwrap();
    assert!(near(bw, 2e5, 1e-9), "{bw}");
}

/// §5.5.10.3: REFILL and UP are probing: a lossy round leaves the
/// short-term model unset.
#[test]
fn refill_and_up_do_not_apply_the_short_term_cuts() {
    let mut d = cruise();
    d.until(Mode::ProbeBwRefill, BW, RTT, BDP, 80);
    // Rates growing 25 % a round, so UP does not end on a plateau.
    let mut rate = 1.0e6;
    for i in 0..6 {
        let a = Ack::new(rate, RTT, 30_000).tx(300_000);
        let a = if i % 2 == 0 {
            a.lose_at(1, 1, 300_000)
        } else {
            a
        };
        let s = d.ack(a);
        assert!(
            matches!(s.mode, Mode::ProbeBwRefill | Mode::ProbeBwUp),
            "{:?}",
            s.mode
        );
        assert_eq!(s.bbr3.unwrap().bw_shortterm_bytes_per_sec, None);
        assert_eq!(s.bbr3.unwrap().inflight_shortterm_bytes, None);
        rate *= 1.3;
    }
    assert_eq!(d.mode(), Mode::ProbeBwUp);
}

/// §5.5.10.3 InitLowerBounds / BoundCwndForModel: after a cut in CRUISE,
/// cwnd is capped at inflight_shortterm.
#[test]
fn cwnd_is_capped_by_inflight_shortterm() {
    let mut d = cruise();
    d.round(3e5, RTT, 30_000);
    let s = lossy_round(&mut d, 3e5, 30_000);
    let cap = s.bbr3.unwrap().inflight_shortterm_bytes.unwrap();
    assert!(s.cwnd_bytes <= cap, "{} > {cap}", s.cwnd_bytes);
}

/// Appendix A.10 (§5.3.4): 5 s without a lower RTT sample → PROBE_RTT with
/// cwnd gain 0.5 and cwnd ≤ max(BDP/2, 4 packets); after 200 ms and a
/// round at that level it returns to PROBE_BW (CRUISE).
#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp() {
    let mut d = cruise();
    let t_first_rtt = RTT; // the first sample was taken at 100 ms
    let s = d.until(Mode::ProbeRtt, BW, RTT, BDP, 100);
    let entered = d.now_ns;
    assert!(
        entered > t_first_rtt + 5 * SEC && entered <= t_first_rtt + 5 * SEC + RTT,
        "{entered}"
    );
    assert_eq!(s.cwnd_gain, 0.5);
    assert!(s.cwnd_bytes <= BDP / 2, "{}", s.cwnd_bytes);
    let mut held = 0;
    loop {
        let s = d.round(BW, RTT, BDP / 2);
        if s.mode != Mode::ProbeRtt {
            assert_eq!(s.mode, Mode::ProbeBwCruise);
            break;
        }
        held += 1;
        assert!(held < 10);
    }
    // Stamp at the first ACK at ≤ BDP/2, then > 200 ms: the 4th ACK.
    assert!(d.now_ns - entered >= 300 * MS, "{}", d.now_ns - entered);
}

/// Appendix A.20: PROBE_RTT entered from STARTUP returns to STARTUP.
#[test]
fn probe_rtt_from_startup_returns_to_startup() {
    let mut d = Drv::draft();
    d.round(1e5, RTT, 10_000);
    let s = loop {
        let s = d.ack(Ack::new(1e5, RTT, 10_000).app_limited());
        if s.mode != Mode::Startup {
            break s;
        }
    };
    assert_eq!(s.mode, Mode::ProbeRtt);
    let s = loop {
        let s = d.ack(Ack::new(1e5, RTT, 1_000).app_limited());
        if s.mode != Mode::ProbeRtt {
            break s;
        }
    };
    assert_eq!(s.mode, Mode::Startup);
    assert!(!s.full_bw_reached);
}

/// Appendix A.11 (§5.4.1): restarting from idle after the PROBE_RTT
/// interval expired skips PROBE_RTT, and in PROBE_BW paces at exactly
/// 1.0 × bw (less the margin).
#[test]
fn idle_restart_skips_probe_rtt_and_paces_at_bw() {
    let mut d = cruise();
    d.cc.on_app_limited(0);
    let st = d.cc.on_packet_sent(at(d.now_ns + 6 * SEC), MSS, 0, true);
    let s = d.snap();
    assert_eq!(s.pacing_rate_bytes_per_sec, (BW * 0.99) as u64);
    d.now_ns += 6 * SEC + RTT;
    let acked = [AckedPacket {
        bytes: MSS,
        state: st,
    }];
    d.cc.on_ack(
        &AckEvent::new(at(d.now_ns), &acked, MSS, 0)
            .rtt(Some(Duration::from_nanos(RTT)), Duration::ZERO),
    );
    // Not PROBE_RTT (the 6 s idle also passed the probe wait: REFILL).
    assert_eq!(d.mode(), Mode::ProbeBwRefill);
    // The expired min was refreshed by that ACK: no PROBE_RTT next either.
    assert_ne!(d.round(BW, RTT, BDP).mode, Mode::ProbeRtt);
}

/// Appendix A.14 (§5.6.4.3): a BDP of 100 B still gets a window that
/// pipelines: MinPipeCwnd (4 packets) with the QUIC offload budget of one
/// 2-packet quantum; with TCP's three quanta the budget (6 packets) is
/// the larger floor (§5.6.4.2 `QuantizationBudget()`). Pacing follows the
/// low bandwidth.
#[test]
fn sub_packet_bdp_keeps_four_packets_and_paces_at_bw() {
    let mut tcp = Drv::draft();
    let bw = 1000.0;
    tcp.drive_to_drain(bw, RTT);
    for _ in 0..5 {
        tcp.round(bw, RTT, 100);
    }
    assert_eq!(tcp.snap().cwnd_bytes, 6 * MSS);
    let mut b3 = Bbr3Config::draft();
    b3.offload_budget_quanta = 1;
    let mut d = Drv::new(b3);
    d.drive_to_drain(bw, RTT);
    for _ in 0..5 {
        d.round(bw, RTT, 100);
    }
    assert!(d.snap().mode != Mode::Drain && d.snap().mode != Mode::Startup);
    let s = d.snap();
    assert_eq!(s.cwnd_bytes, 4 * MSS);
    let want = s.pacing_gain * bw * 0.99;
    assert!((s.pacing_rate_bytes_per_sec as f64 - want).abs() <= 1.0);
}

/// §5.6.2: the pacing margin: CRUISE paces at 0.99 × bw.
#[test]
fn cruise_paces_one_percent_below_bw() {
    let d = cruise();
    assert_eq!(d.snap().pacing_rate_bytes_per_sec, 990_000);
}

/// §5.5.8 / §5.6.4.2: the offload budget (3 send quanta for TCP, 1 for
/// QUIC) floors every inflight target. At 1.25 GB/s the quantum is 64 KB,
/// so Inflight(1.0) on a 10 µs path (BDP 12 500 B) is 196 608 B or 65 536 B.
#[test]
fn offload_budget_floors_the_inflight_target() {
    for (quanta, want) in [(3u64, 3 * 65_536u64), (1, 65_536)] {
        let mut b3 = Bbr3Config::draft();
        b3.offload_budget_quanta = quanta;
        let mut d = Drv::new(b3);
        let (bw, rtt) = (1.25e9, 10_000);
        d.drive_to_drain(bw, rtt);
        // Just above the budget: still draining; at it: PROBE_BW.
        assert_eq!(d.round(bw, rtt, want + 1).mode, Mode::Drain);
        let s = d.round(bw, rtt, want);
        assert!(matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise));
    }
}

/// Appendix A.15 (§5.3.3.5): in UP, cwnd-limited at inflight_longterm,
/// the increase of inflight_longterm doubles each round (1, 2, 4, …
/// packets per cwnd acknowledged).
#[test]
fn inflight_longterm_growth_doubles_each_round_in_up() {
    let mut d = up(Bbr3Config::draft());
    d.ack(
        Ack::new(BW, RTT, 125_000)
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    // Next UP; its rounds have 10 ACKs each, the sender cwnd-limited.
    d.until(Mode::ProbeBwUp, BW, RTT, BDP, 80);
    let mut last = d.b3().inflight_longterm_bytes.unwrap();
    let mut steps = Vec::new();
    for _ in 0..6 {
        let s = d.split_round_with(BW, RTT, BDP, &[0; 10], Some(100_000), true);
        assert_eq!(s.mode, Mode::ProbeBwUp);
        let il = s.bbr3.unwrap().inflight_longterm_bytes.unwrap();
        steps.push((il - last) / MSS);
        last = il;
    }
    // Round k adds about 2^(k-1) × (acked / cwnd) packets: with half a
    // cwnd acknowledged per round, ~0, 1, 2, 4, 8, 16 packets (measured:
    // 1, 1, 4, 8, 14, 26). cwnd, the divisor, grows with
    // inflight_longterm, so each step is at least 1.5× the last from the
    // third round on.
    for w in steps.windows(2).skip(2) {
        assert!(w[1] as f64 >= 1.5 * w[0] as f64, "{steps:?}");
    }
    assert!(steps[5] >= 8, "{steps:?}");
}

/// Appendix A.16 (§5.5.3, §5.5.6): max_bw is the max over the current and
/// the previous probe cycle, advanced one round after each UP ends; after
/// a 10× drop it falls to the new rate within two cycles.
#[test]
fn max_bw_forgets_a_rate_two_cycles_old() {
    let mut d = cruise();
    let low = BW / 10.0;
    let mut cycles = 0;
    let mut was_down = false;
    let mut at_first = None;
    for _ in 0..400 {
        let s = d.round(low, RTT, 10_000);
        let down = s.mode == Mode::ProbeBwDown;
        if down && !was_down {
            cycles += 1;
        }
        was_down = down;
        if cycles == 1 && at_first.is_none() && s.mode == Mode::ProbeBwCruise {
            at_first = s.bw_estimate_bytes_per_sec;
        }
        if s.bw_estimate_bytes_per_sec == Some(low) {
            break;
        }
    }
    assert_eq!(d.snap().bw_estimate_bytes_per_sec, Some(low));
    assert!(cycles <= 2, "{cycles} cycles");
    assert_eq!(at_first, Some(BW), "one cycle is not enough to forget");
}

/// §5.5.11 and appendix A.18: a spurious loss episode that ended a probe
/// restores the model saved at its start and, in the draft, re-probes
/// (REFILL); cwnd is restored.
#[test]
fn spurious_loss_in_up_restores_the_model_and_reprobes() {
    let mut d = up(Bbr3Config::draft());
    let cwnd = d.snap().cwnd_bytes;
    d.ack(
        Ack::new(BW, RTT, 125_000)
            .tx(150_000)
            .lose_at(10, 1, 200_000),
    );
    assert_eq!(d.mode(), Mode::ProbeBwDown);
    assert!(d.b3().inflight_longterm_bytes.is_some());
    d.cc.on_spurious_loss(at(d.now_ns));
    let s = d.snap();
    assert_eq!(s.mode, Mode::ProbeBwRefill);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
    assert!(s.cwnd_bytes >= cwnd);
}

/// Appendix A.19: the same after a spurious RTO, reported as bbrlab's
/// transports do (the flight declared lost with the timeout).
#[test]
fn spurious_rto_in_up_restores_the_model_and_reprobes() {
    let mut d = up(Bbr3Config::draft());
    d.rto_now(60, 200_000, 0);
    assert_eq!(d.mode(), Mode::ProbeBwDown);
    d.cc.on_spurious_loss(at(d.now_ns));
    let s = d.snap();
    assert_eq!(s.mode, Mode::ProbeBwRefill);
    assert_eq!(s.bbr3.unwrap().inflight_longterm_bytes, None);
}

/// Appendix A.18 for STARTUP: a spurious high-loss exit returns to STARTUP.
#[test]
fn spurious_loss_after_startup_loss_exit_returns_to_startup() {
    let mut d = Drv::draft();
    startup_with_losses(&mut d, Ack::new(1.6e6, RTT, 200_000).tx(300_000).lose(8, 6));
    assert_eq!(d.mode(), Mode::Drain);
    d.cc.on_spurious_loss(at(d.now_ns));
    let s = d.snap();
    assert_eq!(s.mode, Mode::Startup);
    assert!(!s.full_bw_reached);
}

/// §5.6.4.4: an RTO sets cwnd to inflight + 1 packet.
#[test]
fn rto_sets_cwnd_to_inflight_plus_one_packet() {
    let mut d = cruise();
    d.rto_now(10, BDP, 3000);
    assert_eq!(d.snap().cwnd_bytes, 3000 + MSS);
}

/// The draft's CE response (§3.7, CE as congestion; bbrlab's classic
/// reading): a CE round in CRUISE cuts the short-term volume,
/// inflight_shortterm, by β from the cwnd; the rate bound is left alone,
/// as Linux's ECN response cuts volume only (`bbr_ecn_lower_bounds()`).
#[test]
fn draft_treats_ce_in_cruise_as_a_congestion_round() {
    let mut d = cruise();
    let cwnd = d.round(3e5, RTT, 30_000).cwnd_bytes;
    d.ack(Ack::new(3e5, RTT, 30_000).ce(1));
    let s = d.ack(Ack::new(3e5, RTT, 30_000));
    let b = s.bbr3.unwrap();
    assert_eq!(b.bw_shortterm_bytes_per_sec, None);
    let st = b.inflight_shortterm_bytes.unwrap();
    assert!(st.abs_diff(cwnd * 7 / 10) <= 1, "{st} of a {cwnd} cwnd");
    assert!(b.ecn_alpha.is_none(), "the draft keeps no EWMA");
}

/// The draft's CE response in STARTUP (§5.3.1.3 with CE as loss): a round
/// whose CE fraction exceeds 2 % with CE reported on at least 6 ACKs ends
/// STARTUP.
#[test]
fn draft_startup_exits_on_ce_in_six_acks() {
    let mut d = Drv::draft();
    for r in [1e5, 2e5, 4e5] {
        d.round(r, RTT, 1 << 30);
    }
    // Round of 8 ACKs, 6 of them with a CE mark (75 %).
    d.split_round(8e5, RTT, 1 << 30, &[0, 1, 1, 1, 1, 1, 1, 0]);
    let s = d.split_round(1.6e6, RTT, 1 << 30, &[0; 8]);
    assert!(s.full_bw_reached, "{s:?}");
    assert_ne!(s.mode, Mode::Startup);
    // Five CE ACKs are not enough.
    let mut d = Drv::draft();
    for r in [1e5, 2e5, 4e5] {
        d.round(r, RTT, 1 << 30);
    }
    d.split_round(8e5, RTT, 1 << 30, &[0, 1, 1, 1, 1, 1, 0, 0]);
    let s = d.split_round(1.6e6, RTT, 1 << 30, &[0; 8]);
    assert_eq!(s.mode, Mode::Startup);
}
