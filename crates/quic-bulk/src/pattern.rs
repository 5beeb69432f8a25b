//! The byte pattern the sender writes and the receiver checks: every real
//! transfer's ([`sender::pattern`]), with quic-bulk's own seed. Byte `i`
//! of the stream is a function of `i` alone, so the receiver checks each
//! chunk where it lands, and a chunk delivered at the wrong offset, twice,
//! or corrupted fails the check.

/// The seed of every quic-bulk stream (both ends know it; a transfer has
/// one stream).
const SEED: u64 = 0x5155_4943_2d62_756c;

/// Fills `buf` with the stream's bytes from `offset` on.
pub fn fill(offset: u64, buf: &mut [u8]) {
    sender::pattern::fill(SEED, offset, buf);
}

/// Checks that `data` is the stream's bytes from `offset` on; on a
/// mismatch, the stream offset of the first wrong byte.
pub fn check(offset: u64, data: &[u8]) -> Result<(), u64> {
    match sender::pattern::mismatch(SEED, offset, data) {
        None => Ok(()),
        Some(at) => Err(at),
    }
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
