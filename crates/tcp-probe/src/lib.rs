//! `bbrlab tcp`: a bulk sender and receiver over kernel TCP, for measuring
//! Linux's own `tcp_bbr`, CUBIC and Reno.
//!
//! The sender picks the kernel algorithm per socket (`TCP_CONGESTION`),
//! and a sampler thread reads `TCP_INFO` and, for BBR, `TCP_CC_INFO`
//! (bw, min_rtt, pacing and cwnd gains) every interval, writing the same
//! time-series schema as the simulator. The stream is framed and carries a
//! seeded byte pattern and a SHA-256 trailer; the receiver checks every
//! byte, the length and the hash, and answers `OK` or an error.
//!
//! With the `kernel` feature, a socket running one of bbrlab's own BPF
//! controls (which have no `TCP_CC_INFO`) is read through their state map
//! instead; without it, such a socket's BBR columns stay empty.
//!
//! ```
//! use std::time::Duration;
//! // A verified 1 MB transfer over loopback with the kernel's CUBIC.
//! let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
//! let addr = listener.local_addr().unwrap();
//! drop(listener); // recv binds the port itself
//! let receiver = std::thread::spawn(move || tcp_probe::recv(addr, Duration::from_secs(10)));
//! std::thread::sleep(Duration::from_millis(200));
//! let sent = tcp_probe::send(&tcp_probe::SendOptions {
//!     to: addr,
//!     cc: "cubic".into(),
//!     duration_s: 0.0,
//!     bytes: Some(1_000_000),
//!     interval: Duration::from_millis(10),
//!     log: None,
//! })
//! .unwrap();
//! receiver.join().unwrap().unwrap();
//! // Every byte was checked by the receiver (pattern, length, SHA-256).
//! assert_eq!(sent.bytes, 1_000_000);
//! assert!(sent.goodput_bps > 0.0);
//! ```

use sender::schema::FLOW_CSV_HEADER;
use sha2::{Digest, Sha256};
use stats::quantile;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The stream's framing, which both ends share: a magic word first, then
/// frames of at most this many bytes.
const MAGIC: &[u8; 4] = b"BBRL";
const FRAME: usize = 64 * 1024;

// One concept per module; each sees the others' items through this one
// (`use super::*`), as when they were one file.
mod info;
mod log;
mod netstat;
mod recv;
mod send;
mod sockopt;

use info::*;
use log::*;
pub use netstat::{NetnsCounters, ReceiverCounters};
pub use recv::{recv, RecvSummary};
pub use send::{send, SendOptions, SendSummary, MIN_INTERVAL};
pub use sockopt::NOTSENT_LOWAT_BYTES;
use sockopt::*;
