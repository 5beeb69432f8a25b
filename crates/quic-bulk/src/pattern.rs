//! The deterministic byte pattern the sender writes and the receiver checks.
//!
//! Byte `i` of the stream is a function of `i` alone (the 8-byte word
//! `i / 8` hashed, little-endian), so the receiver checks each chunk where
//! it lands without any state but the offset, and a chunk delivered at the
//! wrong offset, twice, or corrupted fails the check: the pattern has no
//! period a transport could hide a reordering behind (a counter byte would
//! repeat every 256 bytes).

/// The word at index `k`: SplitMix64's finaliser (Steele, Lea and Flood,
/// "Fast splittable pseudorandom number generators", 2014), a bijection,
/// so no two words of a stream are alike.
#[inline]
fn word(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `buf` with the stream's bytes from `offset` on.
pub fn fill(offset: u64, buf: &mut [u8]) {
    let mut at = 0;
    let mut pos = offset;
    // A leading partial word, then whole words, then a trailing part.
    while at < buf.len() {
        let k = pos / 8;
        let skip = (pos % 8) as usize;
        let bytes = word(k).to_le_bytes();
        let n = (8 - skip).min(buf.len() - at);
        buf[at..at + n].copy_from_slice(&bytes[skip..skip + n]);
        at += n;
        pos += n as u64;
    }
}

/// Checks that `data` is the stream's bytes from `offset` on; on a
/// mismatch, the stream offset of the first wrong byte.
pub fn check(offset: u64, data: &[u8]) -> Result<(), u64> {
    let mut at = 0;
    let mut pos = offset;
    while at < data.len() {
        let k = pos / 8;
        let skip = (pos % 8) as usize;
        let bytes = word(k).to_le_bytes();
        let n = (8 - skip).min(data.len() - at);
        if data[at..at + n] != bytes[skip..skip + n] {
            let i = (0..n)
                .find(|&j| data[at + j] != bytes[skip + j])
                .unwrap_or(0);
            return Err(pos + i as u64);
        }
        at += n;
        pos += n as u64;
    }
    Ok(())
}

/// [`check`] with the receiver's error line.
pub fn verify(offset: u64, data: &[u8]) -> Result<(), String> {
    check(offset, data).map_err(|at| {
        format!(
            "byte {at} of the stream is not what the sender wrote (data corrupted or misplaced)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks cut anywhere, filled separately, are the same bytes as one
    /// fill of the whole, and each checks at its own offset.
    #[test]
    fn chunks_at_any_offset_agree_with_one_fill() {
        let mut whole = vec![0u8; 1000];
        fill(3, &mut whole);
        for cut in [1usize, 7, 8, 9, 13, 500, 999] {
            let mut a = vec![0u8; cut];
            let mut b = vec![0u8; 1000 - cut];
            fill(3, &mut a);
            fill(3 + cut as u64, &mut b);
            assert_eq!(&whole[..cut], &a[..]);
            assert_eq!(&whole[cut..], &b[..]);
            assert_eq!(check(3 + cut as u64, &b), Ok(()));
        }
    }

    /// A flipped byte, and a chunk checked at the wrong offset, fail at
    /// the right place.
    #[test]
    fn corruption_and_misplacement_are_caught() {
        let mut buf = vec![0u8; 100];
        fill(40, &mut buf);
        buf[17] ^= 1;
        assert_eq!(check(40, &buf), Err(57));
        fill(40, &mut buf);
        // Off by one word, and by the pattern's would-be period of 256.
        assert!(check(48, &buf).is_err());
        assert!(check(40 + 256, &buf).is_err());
    }
}
