//! The byte pattern every real transfer sends (the UDP transport, kernel
//! TCP's `tcp send`, quic-bulk), so a receiver checks each byte where it
//! lands without a copy: one implementation, random-access because a
//! retransmission regenerates a chunk in the middle of the stream.
//!
//! The stream is cut into [`BLOCK_BYTES`]-byte blocks; each block has a
//! base word (SplitMix64 of the seed and the block's index), and word `j`
//! of a block (little-endian, 8 bytes) is `base + (j + 1) × φ` with φ the
//! 64-bit golden ratio. Every word of the stream thus differs from its
//! neighbours, a block moved to another place or another transfer's seed
//! does not match, and generating or checking a block is one hash and
//! then an add per word, which the compiler turns into vector adds (a
//! SplitMix64 per word was a fifth of the UDP sender's CPU and a quarter
//! of its receiver's at Gbit/s).

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Bytes per pattern block: the UDP transport's chunk, so each of its
/// chunks is one block (one hash, then an add per word).
pub const BLOCK_BYTES: usize = 1400;

/// Words per pattern block.
const BLOCK_WORDS: u64 = (BLOCK_BYTES / 8) as u64;
const _: () = assert!(BLOCK_BYTES % 8 == 0, "blocks are whole words");

/// The step between consecutive words of a block (2⁶⁴ / φ, odd).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// Block `block`'s base word.
#[inline]
fn block_base(seed: u64, block: u64) -> u64 {
    splitmix(seed ^ block.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// Word `index` of the pattern with `seed` (its bytes are little-endian
/// at stream offset `8 × index`).
fn word(seed: u64, index: u64) -> u64 {
    let j = index % BLOCK_WORDS;
    block_base(seed, index / BLOCK_WORDS).wrapping_add((j + 1).wrapping_mul(STEP))
}

/// Splits `words` whole words starting at word `first_word` into runs
/// that stay within one block, calling `f(byte offset of the run, index of
/// its first word within the block, the block's base, words in the run)`.
#[inline]
fn for_each_run(
    seed: u64,
    first_word: u64,
    words: usize,
    mut f: impl FnMut(usize, u64, u64, usize),
) {
    let mut done = 0usize;
    while done < words {
        let index = first_word + done as u64;
        let j = index % BLOCK_WORDS;
        let n = ((BLOCK_WORDS - j) as usize).min(words - done);
        f(done * 8, j, block_base(seed, index / BLOCK_WORDS), n);
        done += n;
    }
}

/// Fills `out` with the pattern bytes starting at stream offset `offset`.
///
/// Written a word at a time; only an unaligned head or a short tail goes
/// through a single word's bytes.
pub fn fill(seed: u64, offset: u64, out: &mut [u8]) {
    let skip = (offset % 8) as usize;
    let mut index = offset / 8;
    let mut rest = out;
    if skip != 0 {
        let bytes = word(seed, index).to_le_bytes();
        let n = (8 - skip).min(rest.len());
        rest[..n].copy_from_slice(&bytes[skip..skip + n]);
        rest = &mut rest[n..];
        index += 1;
    }
    let words = rest.len() / 8;
    let (body, tail) = rest.split_at_mut(words * 8);
    for_each_run(seed, index, words, |at, j, base, n| {
        let run = &mut body[at..at + n * 8];
        let mut k = (j + 1).wrapping_mul(STEP);
        for w in run.chunks_exact_mut(8) {
            w.copy_from_slice(&base.wrapping_add(k).to_le_bytes());
            k = k.wrapping_add(STEP);
        }
    });
    if !tail.is_empty() {
        let n = tail.len();
        tail.copy_from_slice(&word(seed, index + words as u64).to_le_bytes()[..n]);
    }
}

/// Checks `data` against the pattern at stream offset `offset`; returns
/// the stream offset of the first byte that differs, or `None` if all
/// match.
///
/// Generates and compares a word at a time without a second buffer: the
/// differences are OR-ed together, and only a mismatch pays for the
/// bytewise search for its position.
pub fn mismatch(seed: u64, offset: u64, data: &[u8]) -> Option<u64> {
    let skip = (offset % 8) as usize;
    let mut index = offset / 8;
    let mut rest = data;
    let mut diff = 0u64;
    if skip != 0 {
        let bytes = word(seed, index).to_le_bytes();
        let n = (8 - skip).min(rest.len());
        diff |= u64::from(rest[..n] != bytes[skip..skip + n]);
        rest = &rest[n..];
        index += 1;
    }
    let words = rest.len() / 8;
    let (body, tail) = rest.split_at(words * 8);
    for_each_run(seed, index, words, |at, j, base, n| {
        let run = &body[at..at + n * 8];
        let mut k = (j + 1).wrapping_mul(STEP);
        for w in run.chunks_exact(8) {
            diff |= u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ base.wrapping_add(k);
            k = k.wrapping_add(STEP);
        }
    });
    if !tail.is_empty() {
        let want = word(seed, index + words as u64).to_le_bytes();
        diff |= u64::from(tail != &want[..tail.len()]);
    }
    if diff == 0 {
        return None;
    }
    let mut want = vec![0u8; data.len()];
    fill(seed, offset, &mut want);
    let at = want.iter().zip(data).position(|(a, b)| a != b)?;
    Some(offset + at as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_random_access() {
        let mut whole = vec![0u8; 10_000];
        fill(42, 0, &mut whole);
        for off in [0usize, 1, 7, 8, 9, 1399, 5000, 9990] {
            let mut part = vec![0u8; 10_000 - off];
            fill(42, off as u64, &mut part);
            assert_eq!(part[..], whole[off..], "offset {off}");
        }
        let mut other = vec![0u8; 64];
        fill(43, 0, &mut other);
        assert_ne!(other[..], whole[..64]);
        // A block in another place does not match.
        assert!(mismatch(42, BLOCK_BYTES as u64, &whole[..BLOCK_BYTES]).is_some());
        assert!(mismatch(42, 0, &whole[BLOCK_BYTES..2 * BLOCK_BYTES]).is_some());
        // No two words of the stream are alike.
        let mut words: Vec<&[u8]> = whole.chunks_exact(8).collect();
        words.sort();
        words.dedup();
        assert_eq!(words.len(), whole.len() / 8);
    }

    /// The word-at-a-time generator gives exactly the bytes of the
    /// bytewise definition (each byte is byte `offset % 8` of word
    /// `offset / 8`), for every head and tail alignment.
    #[test]
    fn pattern_matches_its_bytewise_definition() {
        let seed = 0x1234_5678_9ABC_DEF0;
        for off in 0..24u64 {
            for len in [0usize, 1, 5, 7, 8, 9, 15, 16, 17, 1400, 1403] {
                let mut got = vec![0u8; len];
                fill(seed, off, &mut got);
                let want: Vec<u8> = (0..len as u64)
                    .map(|i| {
                        let o = off + i;
                        word(seed, o / 8).to_le_bytes()[(o % 8) as usize]
                    })
                    .collect();
                assert_eq!(got, want, "offset {off} length {len}");
            }
        }
    }

    /// Every single flipped byte, at every alignment, is found at its
    /// exact offset; the intact pattern passes.
    #[test]
    fn every_flipped_byte_is_found_where_it_is() {
        let seed = 99;
        for off in [0u64, 3, 8, 1400, 1405] {
            let mut data = vec![0u8; 203];
            fill(seed, off, &mut data);
            assert_eq!(mismatch(seed, off, &data), None);
            for i in 0..data.len() {
                for bit in [0x01u8, 0x80] {
                    data[i] ^= bit;
                    assert_eq!(
                        mismatch(seed, off, &data),
                        Some(off + i as u64),
                        "offset {off} byte {i}"
                    );
                    data[i] ^= bit;
                }
            }
            // The same bytes under another seed do not pass.
            assert!(mismatch(seed + 1, off, &data).is_some());
        }
    }
}
