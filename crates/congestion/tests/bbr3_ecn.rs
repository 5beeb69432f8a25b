//! `bbr3`'s ECN response. `linux-v3`: the EWMA `ecn_alpha` of the per-round
//! CE fraction in BBR_UNIT = 256 (`bbr_update_ecn_alpha()`), the cut of
//! inflight_shortterm by `ecn_factor × alpha` (`bbr_ecn_lower_bounds()`),
//! STARTUP's exit after 2 rounds at ≥ 50 % CE, the ≥ 50 % "too high" test
//! while probing and the early re-probe. `draft`: CE as congestion
//! (§3.7), with CE-marked data counted like lost data. Paths: 1 MB/s,
//! 2 ms RTT (below Linux's 5 ms ECN limit), one packet per ACK.

mod bbr3_support;

use bbr3_support::*;
use congestion::{Bbr3Config, Mode};

const RTT: u64 = 2 * MS;
const BW: f64 = 1e6;

fn linux_ecn() -> Drv {
    let mut b3 = Bbr3Config::linux_v3();
    b3.ecn_capable = true;
    Drv::new(b3)
}

/// The kernel's EWMA, step by step in integers: alpha starts at 256; each
/// round alpha = (240 × alpha >> 8) + (16 × ratio >> 8), ratio the round's
/// CE-marked packets × 256 / packets. The first ACK comes before min_rtt
/// is known, so the first update covers two ACKs.
#[test]
fn linux_ecn_alpha_is_the_kernels_fixed_point_ewma() {
    let mut d = linux_ecn();
    let mut alpha: u32 = 256;
    let ce = [0u64, 0, 0, 1, 1];
    let mut rate = 1e5;
    for (i, &c) in ce.iter().enumerate() {
        let s = d.ack(Ack::new(rate, RTT, 10_000).ce(c));
        if i >= 1 {
            let ratio = if c > 0 { 256 } else { 0 };
            alpha = ((240 * alpha) >> 8) + ((16 * ratio) >> 8);
        }
        let got = s.bbr3.unwrap().ecn_alpha.unwrap();
        assert_eq!(got, alpha as f64 / 256.0, "ack {i}");
        rate *= 2.0;
    }
    // 256 → 240 → 225 → 226 → 227.
    assert_eq!(alpha, 227);
}

/// `bbr_check_ecn_too_high_in_startup()`: two consecutive rounds with a
/// CE fraction ≥ 128/256 end STARTUP, with inflight_longterm =
/// max(Inflight(max_bw, 1), inflight_latest).
#[test]
fn linux_startup_exits_after_two_rounds_of_half_ce() {
    let mut d = linux_ecn();
    let mut rate = 1e5;
    for _ in 0..3 {
        d.ack(Ack::new(rate, RTT, 10_000));
        rate *= 2.0;
    }
    let s = d.ack(Ack::new(rate, RTT, 10_000).ce(1));
    assert_eq!(s.mode, Mode::Startup, "one round is not enough");
    rate *= 2.0;
    let s = d.ack(Ack::new(rate, RTT, 10_000).ce(1));
    assert!(s.full_bw_reached);
    assert_ne!(s.mode, Mode::Startup);
    assert!(s.bbr3.unwrap().inflight_longterm_bytes.is_some());
}

/// Reaches CRUISE on the 2 ms path.
fn cruise(mut d: Drv) -> Drv {
    d.drive_to_drain(BW, RTT);
    let s = d.round(BW, RTT, 1_000);
    assert_eq!(s.mode, Mode::ProbeBwCruise, "{:?}", s.mode);
    d
}

/// `bbr_ecn_lower_bounds()`: a CE round outside probing sets
/// inflight_shortterm = cwnd × (256 − (alpha × 85 >> 8)) >> 8, alpha
/// including this round; then, CE without loss in the cycle, it re-probes
/// (`bbr_check_time_to_probe_bw()`, REFILL), but only once the CWR
/// episode the CE began is over (the re-probe needs `TCP_CA_Open`): the
/// next ACK is for a packet sent no later than the mark was reported, so
/// CWR holds for it, and the re-probe comes one ACK later.
#[test]
fn linux_ce_round_cuts_inflight_shortterm_by_alpha_then_reprobes() {
    let mut d = cruise(linux_ecn());
    let s = d.round(BW, RTT, 1_000);
    assert_eq!(s.mode, Mode::ProbeBwCruise);
    let cwnd = s.cwnd_bytes;
    let alpha_prev = (s.bbr3.unwrap().ecn_alpha.unwrap() * 256.0) as u32;
    let s = d.ack(Ack::new(BW, RTT, 1_000).ce(1));
    let alpha = ((240 * alpha_prev) >> 8) + 16;
    let cut = 256 - ((alpha * 85) >> 8);
    let want = ((cwnd as u128 * cut as u128) >> 8) as u64;
    assert_eq!(s.bbr3.unwrap().inflight_shortterm_bytes, Some(want));
    assert!(
        s.bbr3.unwrap().bw_shortterm_bytes_per_sec.is_none(),
        "ECN cuts volume only"
    );
    let s = d.round(BW, RTT, 1_000);
    assert_eq!(d.cc.recovery_state(), congestion::RecoveryState::Cwr);
    assert_ne!(s.mode, Mode::ProbeBwRefill, "no re-probe while in CWR");
    d.now_ns += 1; // the next packet leaves after the CWR point
    let s = d.round(BW, RTT, 1_000);
    assert_eq!(d.cc.recovery_state(), congestion::RecoveryState::Open);
    assert_eq!(s.mode, Mode::ProbeBwRefill);
}

/// `bbr_is_inflight_too_high()` with ECN: in UP a round with more than
/// half its packets CE-marked ends the probe, as high loss would.
#[test]
fn linux_half_ce_in_up_ends_the_probe() {
    let mut d = cruise(linux_ecn());
    d.until(Mode::ProbeBwUp, BW, RTT, 1_000, 2_000);
    // DOWN, and with 1 000 B in flight on to CRUISE in the same ACK.
    let s = d.ack(Ack::new(BW, RTT, 1_000).ce(1));
    assert!(
        matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise),
        "{:?}",
        s.mode
    );
    assert!(s.bbr3.unwrap().prev_probe_too_high);
    assert!(s.bbr3.unwrap().inflight_longterm_bytes.is_some());
}

/// The draft's reading: CE-marked data is congestion like lost data, so a
/// round in UP whose CE fraction exceeds 2 % ends the probe.
#[test]
fn draft_ce_above_two_percent_in_up_ends_the_probe() {
    // 10 MB/s: a BDP of 13 packets, so the Reno bound (§5.3.3.8) does not
    // send DOWN straight back to REFILL as it does at a 1-packet BDP.
    let bw = 1e7;
    let mut d = Drv::draft();
    d.drive_to_drain(bw, RTT);
    d.until(Mode::ProbeBwUp, bw, RTT, 10_000, 2_000);
    let s = d.ack(Ack::new(bw, RTT, 10_000).ce(1));
    assert!(
        matches!(s.mode, Mode::ProbeBwDown | Mode::ProbeBwCruise),
        "{:?}",
        s.mode
    );
    assert!(s.bbr3.unwrap().prev_probe_too_high);
}

/// Without ECT and without CE marks nothing changes: the CE counters stay
/// silent and Linux's alpha never moves from its initial value.
#[test]
fn no_ce_no_ecn_state() {
    let mut d = Drv::linux();
    for _ in 0..20 {
        d.round(BW, RTT, 1_000);
    }
    let b = d.b3();
    assert_eq!(b.ecn_alpha, Some(1.0));
    assert!(!b.ecn_in_round);
}

/// bbr3 answers CE from its model, never as a loss-style cut, but CE
/// still puts the connection in CWR, as Linux's `tcp_enter_cwr()` does
/// for every congestion control: one episode for marks that keep coming,
/// none of them a recovery (packet conservation and cwnd save and restore
/// are for losses), and back to Open once a packet sent after the marks
/// is acknowledged without CE.
#[test]
fn ce_puts_bbr3_in_cwr_not_recovery() {
    for mut d in [linux_ecn(), Drv::draft()] {
        d.drive_to_drain(BW, RTT);
        let episodes = d.cc.recovery_episodes();
        for _ in 0..5 {
            d.ack(Ack::new(BW, RTT, 1_000).ce(1));
            assert_eq!(d.cc.recovery_state(), congestion::RecoveryState::Cwr);
        }
        // An episode ends when a packet sent after it began is ACKed, and
        // that ACK's marks begin the next (RFC 9002 §7.1; TCP re-enters
        // CWR on the ACK that passes `high_seq`). The driver's packets
        // leave as the previous ACK arrives, so ACKs 1, 3 and 5 begin one.
        assert_eq!(d.cc.recovery_episodes(), episodes + 3);
        d.now_ns += 1;
        d.ack(Ack::new(BW, RTT, 1_000));
        assert_eq!(d.cc.recovery_state(), congestion::RecoveryState::Open);
    }
}
