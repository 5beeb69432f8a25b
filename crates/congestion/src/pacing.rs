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
    let bytes = (rate_bytes_per_sec / 1024.0).clamp(0.0, MAX_QUANTUM_BYTES) as u64;
    let segs = (bytes / mss).max(min_segs).min(MAX_QUANTUM_SEGMENTS);
    segs * mss
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
