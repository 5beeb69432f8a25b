//! A transport's configuration at the edges: segment sizes from 0 to
//! `u64::MAX` and initial windows from 0 to `u64::MAX`, in TCP's and
//! QUIC's configurations, and the segment size changed to such values
//! mid-connection. Each built-in algorithm runs a few thousand sends and
//! ACKs, with a loss and a timeout, and must neither panic (the test
//! profile checks arithmetic overflow) nor leave a window or pacing rate
//! of zero. Before `MAX_MSS_BYTES`, a segment size of `u64::MAX`
//! overflowed the send quantum in every algorithm, and `Config::for_quic`
//! overflowed its initial window from 2^63 bytes up.

use congestion::{
    AckEvent, AckedPacket, Algorithm, Config, Controller, Instant, LostPacket, MAX_MSS_BYTES,
};
use std::collections::VecDeque;
use std::time::Duration;

const SIZES: [u64; 10] = [
    0,
    1,
    2,
    100,
    65_535,
    1 << 20,
    MAX_MSS_BYTES,
    MAX_MSS_BYTES + 1,
    u64::MAX / 2,
    u64::MAX,
];
const WINDOWS: [u64; 6] = [0, 1, 2, 1000, 1 << 32, u64::MAX];

/// Runs `cfg` for 3,000 steps of 100 µs: a send whenever the window
/// allows, an ACK when more than 20 are out or every seventh step, a loss
/// every 97th, a timeout at step 1,500 and, if `change_to` is set, the
/// segment size changed to it at step 1,000. Returns the smallest window
/// and pacing rate seen.
fn drive(cfg: &Config, change_to: Option<u64>) -> (u64, u64) {
    let mut cc = Controller::new(cfg, Instant::from_nanos(0));
    let mut out: VecDeque<_> = VecDeque::new();
    let (mut now, mut least_cwnd, mut least_rate) = (0u64, u64::MAX, u64::MAX);
    for i in 0..3000u64 {
        now += 100_000;
        let at = Instant::from_nanos(now);
        let mss = cc.mss_bytes();
        assert!((1..=MAX_MSS_BYTES).contains(&mss), "{mss}");
        let in_flight = out.len() as u64 * mss;
        if in_flight < cc.cwnd_bytes() && out.len() < 64 {
            out.push_back(cc.on_packet_sent(at, mss, in_flight, false));
        }
        if out.len() > 20 || (i % 7 == 0 && !out.is_empty()) {
            let state = out.pop_front().unwrap();
            let acked = [AckedPacket { bytes: mss, state }];
            if i % 97 == 0 && !out.is_empty() {
                let lost = [LostPacket {
                    bytes: mss,
                    state: out.pop_front().unwrap(),
                }];
                let left = out.len() as u64 * mss;
                cc.on_ack(&AckEvent::new(at, &acked, left + 2 * mss, left).lost(&lost, 1));
            } else {
                let left = out.len() as u64 * mss;
                let rtt = Duration::from_nanos(now - state.sent_time.as_nanos());
                cc.on_ack(
                    &AckEvent::new(at, &acked, left + mss, left).rtt(Some(rtt), Duration::ZERO),
                );
            }
        }
        if i == 1000 {
            if let Some(m) = change_to {
                cc.on_mss_change(m);
                out.clear();
            }
        }
        if i == 1500 {
            cc.on_retransmission_timeout(at, &[], 1, out.len() as u64 * cc.mss_bytes());
        }
        least_cwnd = least_cwnd.min(cc.cwnd_bytes());
        least_rate = least_rate.min(cc.pacing_rate_bytes_per_sec());
    }
    (least_cwnd, least_rate)
}

#[test]
fn extreme_segment_sizes_and_initial_windows_neither_panic_nor_zero_the_window() {
    for alg in Algorithm::ALL {
        for mss in SIZES {
            for quic in [false, true] {
                let mut cfg = if quic {
                    Config::for_quic(alg, mss)
                } else {
                    Config::new(alg)
                };
                assert!((1..=MAX_MSS_BYTES).contains(&cfg.mss_bytes) || !quic);
                cfg.mss_bytes = mss;
                for icw in WINDOWS {
                    cfg.initial_cwnd_packets = icw;
                    let (cwnd, rate) = drive(&cfg, None);
                    assert!(
                        cwnd >= 1 && rate >= 1,
                        "{alg:?} mss {mss} icw {icw}: {cwnd} {rate}"
                    );
                }
            }
            // And changed to mid-connection, from the usual size.
            let (cwnd, rate) = drive(&Config::new(alg), Some(mss));
            assert!(
                cwnd >= 1 && rate >= 1,
                "{alg:?} to mss {mss}: {cwnd} {rate}"
            );
        }
    }
}

/// BBR's ACK-aggregation epoch at its cap: with segments of
/// `MAX_MSS_BYTES` the epoch's byte count is capped at 2^20 of them,
/// just under 2^52 bytes, and ACKs of 2^61 bytes each hold it there.
/// The per-ACK epoch test compares that count in `f64` without a range
/// check, exact only below 2^53; debug builds (the test profile) check
/// the range, and the result against the general comparison, on every
/// ACK.
#[test]
fn bbr_ack_epoch_at_its_cap() {
    const BYTES: u64 = 1 << 61;
    for alg in [Algorithm::Bbr, Algorithm::BbrJitter] {
        let mut cfg = Config::new(alg);
        cfg.mss_bytes = MAX_MSS_BYTES;
        let mut cc = Controller::new(&cfg, Instant::from_nanos(0));
        let mut out: VecDeque<_> = VecDeque::new();
        let mut now = 0u64;
        for _ in 0..2000 {
            now += 1_000;
            let at = Instant::from_nanos(now);
            let in_flight = out.len() as u64 * BYTES;
            out.push_back(cc.on_packet_sent(at, BYTES, in_flight, false));
            if out.len() > 2 {
                let state = out.pop_front().unwrap();
                let acked = [AckedPacket {
                    bytes: BYTES,
                    state,
                }];
                let left = out.len() as u64 * BYTES;
                let rtt = Duration::from_nanos(now - state.sent_time.as_nanos());
                cc.on_ack(
                    &AckEvent::new(at, &acked, left + BYTES, left).rtt(Some(rtt), Duration::ZERO),
                );
            }
        }
        assert!(cc.cwnd_bytes() >= 1 && cc.pacing_rate_bytes_per_sec() >= 1);
    }
}
