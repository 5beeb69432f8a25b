//! Send-quantum arithmetic shared by every controller.
//!
//! A paced sender releases data in small bursts (one "quantum") rather than
//! one packet per timer tick, because per-packet timers cost too much CPU at
//! high rates. Linux sizes the burst to about 1 ms of data at the pacing rate
//! (`sk_pacing_shift` = 10), capped at a 64 KiB GSO super-packet, and never
//! below two segments except at very low rates (`bbr_tso_segs_goal()`,
//! `bbr_min_tso_segs()`). BBR also adds three quanta to its cwnd target so the
//! burstiness this introduces does not leave the pipe short.

/// Below this pacing rate (1.2 Mbit/s, Linux `bbr_min_tso_rate`) a quantum may
/// be a single segment, so slow links are not burst two packets at a time.
const MIN_TWO_SEGMENT_RATE_BYTES_PER_SEC: f64 = 1_200_000.0 / 8.0;
/// Largest quantum: one 64 KiB GSO/TSO super-packet.
const MAX_QUANTUM_BYTES: f64 = 65_536.0;
/// Linux caps a TSO burst at 127 segments.
const MAX_QUANTUM_SEGMENTS: u64 = 127;

/// `x.clamp(0.0, MAX_QUANTUM_BYTES) as u64` for an `x` that is not NaN
/// (each caller has turned a NaN rate into 0). The clamped value lies in
/// [0, 65 536], where the signed conversion truncates exactly as the
/// unsigned one does, and costs half as much on x86-64 (the saturating
/// unsigned one is a dozen instructions): CUBIC and Reno size their
/// quantum on every ACK.
#[inline(always)]
fn clamped_bytes(x: f64) -> u64 {
    debug_assert!(!x.is_nan());
    x.clamp(0.0, MAX_QUANTUM_BYTES) as i64 as u64
}

/// The send quantum, in bytes, for `rate_bytes_per_sec` and segment size `mss`.
pub fn send_quantum_bytes(rate_bytes_per_sec: f64, mss: u64) -> u64 {
    let mss = mss.max(1);
    let rate_bytes_per_sec = if rate_bytes_per_sec.is_nan() {
        0.0
    } else {
        rate_bytes_per_sec
    };
    let min_segs = if rate_bytes_per_sec < MIN_TWO_SEGMENT_RATE_BYTES_PER_SEC {
        1
    } else {
        2
    };
    // About 1 ms of data (rate >> 10 in Linux, i.e. rate / 1024).
    let bytes = clamped_bytes(rate_bytes_per_sec / 1024.0);
    let segs = (bytes / mss).max(min_segs).min(MAX_QUANTUM_SEGMENTS);
    segs * mss
}

/// BBRv3's send quantum as the draft computes it (`SetSendQuantum()`,
/// draft-ietf-ccwg-bbr-06 §5.6.3): 1 ms at the pacing rate, at most 64 KB,
/// at least two segments.
pub fn send_quantum_bytes_bbr3_draft(rate_bytes_per_sec: f64, mss: u64) -> u64 {
    let mss = mss.max(1);
    let rate = if rate_bytes_per_sec.is_nan() {
        0.0
    } else {
        rate_bytes_per_sec
    };
    let bytes = clamped_bytes(rate / 1000.0);
    bytes.max(2 * mss)
}

/// `MAX_TCP_HEADER` on a common x86-64 build (`L1_CACHE_ALIGN(128 +
/// MAX_HEADER)` = 320): Linux caps a TSO burst at 64 KiB less 1 less this.
const LINUX_MAX_TCP_HEADER: u64 = 320;

/// Linux v3's TSO burst goal (`bbr_tso_segs_generic()`): the pacing rate
/// shifted right by 10 (≈ 1 ms) plus a min_rtt allowance of 64 KiB halved for every
/// 512 µs of min_rtt (`bbr_tso_rtt_shift` = 9), capped at a 64 KiB GSO
/// packet less headers, at least two segments (`tcp_min_tso_segs`).
pub fn send_quantum_bytes_bbr3_linux(
    rate_bytes_per_sec: f64,
    mss: u64,
    min_rtt_ns: Option<u64>,
) -> u64 {
    let mss = mss.max(1);
    let rate = if rate_bytes_per_sec.is_nan() {
        0.0
    } else {
        rate_bytes_per_sec
    };
    let mut bytes = clamped_bytes(rate / 1024.0);
    // Linux's min_rtt is ~0U (no allowance) before any sample.
    if let Some(rtt_ns) = min_rtt_ns {
        let shift = (rtt_ns / 1000) >> 9;
        if shift < 32 {
            bytes = bytes.saturating_add((MAX_QUANTUM_BYTES as u64) >> shift);
        }
    }
    let cap = MAX_QUANTUM_BYTES as u64 - 1 - LINUX_MAX_TCP_HEADER;
    let segs = (bytes.min(cap) / mss).max(2);
    segs.saturating_mul(mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_bytes_is_the_unsigned_cast() {
        let mut v = vec![
            -1e300, -1.0, -0.0, 0.0, 0.5, 1.0, 65_535.9, 65_536.0, 65_536.5,
        ];
        v.extend([1e19, 1e300, f64::INFINITY, f64::NEG_INFINITY]);
        v.extend((0..100_000).map(|i| f64::from(i) * 0.7));
        for x in v {
            assert_eq!(
                clamped_bytes(x),
                x.clamp(0.0, MAX_QUANTUM_BYTES) as u64,
                "{x}"
            );
        }
    }

    #[test]
    fn quantum_tracks_rate_within_bounds() {
        // 100 kbit/s: one segment.
        assert_eq!(send_quantum_bytes(12_500.0, 1500), 1500);
        // 10 Mbit/s = 1.25 MB/s -> ~1220 bytes/ms -> floor to 2 segments.
        assert_eq!(send_quantum_bytes(1_250_000.0, 1500), 3000);
        // 1 Gbit/s -> 122 KB/ms, capped at 64 KiB -> 43 segments of 1500.
        assert_eq!(send_quantum_bytes(125_000_000.0, 1500), 43 * 1500);
        // Non-finite or zero rates still give a sane quantum.
        assert_eq!(send_quantum_bytes(f64::NAN, 1500), 1500);
        assert_eq!(send_quantum_bytes(f64::INFINITY, 1500), 43 * 1500);
        assert_eq!(send_quantum_bytes(0.0, 0), 1);
    }

    #[test]
    fn bbr3_quanta() {
        // Draft: 1 ms of 100 Mbit/s = 12 500 B; floor of two segments.
        assert_eq!(send_quantum_bytes_bbr3_draft(12_500_000.0, 1500), 12_500);
        assert_eq!(send_quantum_bytes_bbr3_draft(10_000.0, 1500), 3000);
        assert_eq!(send_quantum_bytes_bbr3_draft(1e12, 1500), 65_536);
        assert_eq!(send_quantum_bytes_bbr3_draft(f64::NAN, 0), 2);
        // Linux: 12.5 MB/s >> 10 = 12 207 B, + 64 KiB >> (10 ms / 512 µs =
        // 19) = 0 → 8 segments.
        assert_eq!(
            send_quantum_bytes_bbr3_linux(12_500_000.0, 1500, Some(10_000_000)),
            8 * 1500
        );
        // At 100 µs min_rtt the allowance is the full 64 KiB, capped at
        // 65 215 B: 43 segments.
        assert_eq!(
            send_quantum_bytes_bbr3_linux(12_500_000.0, 1500, Some(100_000)),
            43 * 1500
        );
        assert_eq!(send_quantum_bytes_bbr3_linux(0.0, 1500, None), 3000);
    }
}
