//! What is sent: a file, or the seeded byte pattern every real transfer
//! sends ([`sender::pattern`]), which the receiver checks byte by byte
//! without a copy. A chunk is one of the pattern's blocks.

use crate::wire::CHUNK;

const _: () = assert!(
    CHUNK == sender::pattern::BLOCK_BYTES,
    "a chunk is one pattern block, generated and checked in one pass"
);
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where the sender's bytes come from.
pub enum Source {
    /// The seeded pattern, `total` bytes or until a deadline (`None`).
    Pattern {
        /// Seed, not 0: on the wire 0 means a file, whose bytes the
        /// receiver cannot predict ([`crate::sender::send`] refuses it).
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
                sender::pattern::fill(*seed, off, &mut out[..len]);
                Ok(())
            }
            Source::File { file, .. } => file.read_exact_at(&mut out[..len], off),
        }
    }
}
