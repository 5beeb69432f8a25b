//! What is sent: a file, or a seeded byte pattern that the receiver can
//! check byte by byte without a copy. The pattern is random-access
//! (each 8-byte word is SplitMix64 of the seed and its index), because a
//! retransmission regenerates a chunk in the middle of the stream.

use crate::wire::CHUNK;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `out` with the pattern bytes starting at stream offset `offset`.
pub fn pattern(seed: u64, offset: u64, out: &mut [u8]) {
    let mut word = offset / 8;
    let mut skip = (offset % 8) as usize;
    let mut i = 0;
    while i < out.len() {
        let bytes = splitmix(seed ^ word.wrapping_mul(0xD6E8_FEB8_6659_FD93)).to_le_bytes();
        for &b in &bytes[skip..] {
            if i == out.len() {
                break;
            }
            out[i] = b;
            i += 1;
        }
        skip = 0;
        word += 1;
    }
}

/// Where the sender's bytes come from.
pub enum Source {
    /// The seeded pattern, `total` bytes or until a deadline (`None`).
    Pattern {
        /// Seed.
        seed: u64,
        /// Length, if fixed.
        total: Option<u64>,
    },
    /// A file, read at each chunk's offset.
    File {
        /// The open file.
        file: File,
        /// Its length.
        total: u64,
    },
}

impl Source {
    /// Opens a file source, refusing an empty or unreadable file.
    pub fn file(path: &Path) -> Result<Source, String> {
        let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let total = file
            .metadata()
            .map_err(|e| format!("cannot stat {}: {e}", path.display()))?
            .len();
        if total == 0 {
            return Err(format!("{} is empty", path.display()));
        }
        Ok(Source::File { file, total })
    }

    /// The stream length, if known in advance.
    pub fn total(&self) -> Option<u64> {
        match self {
            Source::Pattern { total, .. } => *total,
            Source::File { total, .. } => Some(*total),
        }
    }

    /// The pattern seed (0 for a file).
    pub fn seed(&self) -> u64 {
        match self {
            Source::Pattern { seed, .. } => *seed,
            Source::File { .. } => 0,
        }
    }

    /// Reads chunk `chunk` (of `len` bytes) into `out`.
    pub fn chunk(&self, chunk: u64, len: usize, out: &mut [u8]) -> io::Result<()> {
        let off = chunk * CHUNK as u64;
        match self {
            Source::Pattern { seed, .. } => {
                pattern(*seed, off, &mut out[..len]);
                Ok(())
            }
            Source::File { file, .. } => file.read_exact_at(&mut out[..len], off),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_random_access() {
        let mut whole = vec![0u8; 10_000];
        pattern(42, 0, &mut whole);
        for off in [0usize, 1, 7, 8, 9, 1399, 5000, 9990] {
            let mut part = vec![0u8; 10_000 - off];
            pattern(42, off as u64, &mut part);
            assert_eq!(part[..], whole[off..], "offset {off}");
        }
        let mut other = vec![0u8; 64];
        pattern(43, 0, &mut other);
        assert_ne!(other[..], whole[..64]);
    }
}
