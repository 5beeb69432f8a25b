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
    ///
    /// Everything that can be known without a peer is checked here, before
    /// the sender connects: a directory opens on Linux and its metadata
    /// gives a length, so it used to fail only at the first read, after
    /// the handshake; a device or pipe has no length to announce. The
    /// first byte is read too, so a file that opens but cannot be read
    /// (an I/O error) is refused now rather than mid-transfer.
    pub fn file(path: &Path) -> Result<Source, String> {
        let shown = path.display();
        let file = File::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot stat {shown}: {e}"))?;
        if meta.is_dir() {
            return Err(format!("{shown} is a directory; give a file to send"));
        }
        if !meta.is_file() {
            return Err(format!(
                "{shown} is not a regular file (a device, pipe or socket has no length to announce); give a file to send"
            ));
        }
        let total = meta.len();
        if total == 0 {
            return Err(format!("{shown} is empty"));
        }
        file.read_at(&mut [0u8; 1], 0)
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::Source;
    use std::path::Path;

    /// A directory opened and gave a length, and failed only at the first
    /// read, after the sender had connected; a device has no length.
    #[test]
    fn a_directory_or_a_device_is_refused_before_sending() {
        let dir = tempfile::tempdir().unwrap();
        let e = Source::file(dir.path()).err().unwrap();
        assert!(e.contains("is a directory"), "{e}");
        let e = Source::file(Path::new("/dev/null")).err().unwrap();
        assert!(e.contains("not a regular file"), "{e}");
        let f = dir.path().join("f");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(Source::file(&f).unwrap().total(), Some(3));
    }
}
