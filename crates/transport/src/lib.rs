//! # transport: a reliable UDP transport driven by the `congestion` crate
//!
//! `bbrlab send` / `bbrlab recv` move a file or a verifiable byte pattern
//! over UDP, reliably and in order, paced in user space at the
//! controller's rate. It exists to prove the library on real sockets and
//! real timers, the way a QUIC or file-transfer implementer would use it.
//!
//! - [`wire`]: the datagram format (connection id on every packet, packet
//!   numbers never reused, ACK ranges with ACK delay, flow control and
//!   ECN counts).
//! - [`sender`] and [`receiver`]: the endpoints. The sender's loss
//!   detection and pacing decisions are the simulator's sender, so the
//!   transport and the simulator run identical logic.
//! - [`reassembly`]: the receiver's bounded reordering buffer.
//! - [`data`]: file and seeded-pattern sources.
//! - [`ecn`]: ECN marking, counting and validation (QUIC's rules).
//! - [`integrity`]: the end-to-end BLAKE3 digest compared at FIN.
//! - [`udp_batch`]: GSO/GRO batching of datagrams without changing when
//!   they leave.
//!
//! # Example
//!
//! A 2 MB transfer with BBR over loopback, receiver and sender in one
//! process. The sender streams a seeded byte pattern, which the receiver
//! checks byte by byte and by BLAKE3 digest before it reports success.
//!
//! ```
//! use std::net::{SocketAddr, UdpSocket};
//! use std::time::Duration;
//! use transport::data::Source;
//! use transport::receiver::{recv, RecvConfig};
//! use transport::sender::{send, SendConfig};
//!
//! // A free port on loopback for the receiver.
//! let listen: SocketAddr = UdpSocket::bind("127.0.0.1:0")?.local_addr()?;
//! let receiver = std::thread::spawn(move || {
//!     recv(RecvConfig {
//!         listen,
//!         output: None, // check against the sender's pattern
//!         window_chunks: 8192,
//!         idle_timeout: Duration::from_secs(5),
//!         accept_timeout: Duration::from_secs(10),
//!         stop: None,
//!     })
//! });
//! // Let the receiver bind first: a HELLO to a closed port is refused.
//! std::thread::sleep(Duration::from_millis(200));
//! let sent = send(SendConfig {
//!     peer: listen,
//!     cc: congestion::Config::new(congestion::Algorithm::Bbr),
//!     source: Source::Pattern { seed: 7, total: Some(2_000_000) },
//!     duration: None,
//!     idle_timeout: Duration::from_secs(5),
//!     log: None,
//!     interval: Duration::from_millis(100),
//!     progress: false,
//!     gso: false,
//!     ecn: false,
//! })?;
//! let received = receiver.join().expect("receiver thread")?;
//! assert_eq!(sent.bytes, 2_000_000);
//! assert_eq!(received.bytes, 2_000_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod data;
pub mod ecn;
pub mod integrity;
pub mod reassembly;
pub mod receiver;
pub mod sender;
pub mod udp_batch;
pub mod wire;

use std::time::Instant;

/// Nanoseconds since `start` (never 0, so it can seed timers).
pub(crate) fn now_ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64 + 1
}

/// Below this the wait spins instead of sleeping: a sleeping thread wakes
/// tens of microseconds late, which at 100 Mbit/s is several packets.
const SPIN_NS: u64 = 100_000;

/// Waits until `fd` is readable or `ns` have passed: `ppoll` for all but
/// the last [`SPIN_NS`], then a spin (checking the socket), so paced sends
/// go out within microseconds of their time.
pub(crate) fn wait_readable(fd: i32, ns: u64) {
    let t0 = Instant::now();
    if ns > SPIN_NS {
        let sleep = ns - SPIN_NS;
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: (sleep / 1_000_000_000) as libc::time_t,
            tv_nsec: (sleep % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: p and ts are valid for the call.
        let r = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
        if r > 0 {
            return;
        }
    }
    while (t0.elapsed().as_nanos() as u64) < ns {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: p is valid; zero timeout.
        if unsafe { libc::poll(&mut p, 1, 0) } > 0 {
            return;
        }
        std::hint::spin_loop();
    }
}
