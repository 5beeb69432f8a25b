//! Segmentation offload for the transport's sockets: UDP GSO on send
//! (`UDP_SEGMENT`, one `sendmsg` carries up to 64 datagrams) and GRO plus
//! `recvmmsg` on receive, through the `quinn-udp` crate, which detects
//! what the kernel and device support and falls back to one datagram per
//! call when they do not.
//!
//! Why pacing stays correct: the sender only puts into a batch datagrams
//! the pacer has already released at the current instant (the controller's
//! send quantum), and flushes the batch before it waits. A batch therefore
//! leaves exactly when the same datagrams would have left one `send` at a
//! time, back to back, only with fewer system calls.

use quinn_udp::{EcnCodepoint, RecvMeta, Transmit, UdpSocketState};
use std::io::{self, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};

/// The most bytes one GSO send may carry (the IP datagram length field
/// bounds the whole super-datagram).
const MAX_BATCH_BYTES: usize = 65_000;

/// Socket buffer size asked for on both ends.
const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// Datagrams are collected here until the pacer stops releasing them, then
/// sent with one system call.
pub struct BatchSender {
    state: UdpSocketState,
    peer: SocketAddr,
    /// [`MAX_BATCH_BYTES`] long; the batch is `buf[..used]`. Datagrams are
    /// written here in place ([`BatchSender::slot`]), so a packet's bytes
    /// are copied once, by the kernel.
    buf: Box<[u8]>,
    used: usize,
    /// Size of every datagram in the batch but the last.
    seg: usize,
    count: usize,
    /// The batch ended with a short datagram: nothing may follow it.
    closed: bool,
    /// The ECN codepoint every datagram of the batch carries (one
    /// `sendmsg` sets one TOS / traffic class).
    ecn: Option<EcnCodepoint>,
    max_segments: usize,
    /// Datagrams handed to the kernel, and system calls used.
    pub datagrams: u64,
    /// See `datagrams`.
    pub syscalls: u64,
}

/// What went wrong sending, when it matters to the transfer.
#[derive(Debug)]
pub enum SendError {
    /// The peer's port is closed (an ICMP port-unreachable came back).
    Refused,
    /// Any other socket error.
    Other(io::Error),
}

impl BatchSender {
    /// Wraps a connected, non-blocking socket. `gso = false` sends every
    /// datagram on its own (for comparison, or for paths where GSO hurts).
    pub fn new(sock: &UdpSocket, peer: SocketAddr, gso: bool) -> io::Result<Self> {
        let state = UdpSocketState::new(sock.into())?;
        // Room for several quanta, so a burst is not refused while the
        // previous one is still being copied out (capped by wmem_max).
        let _ = state.set_send_buffer_size(sock.into(), SOCKET_BUFFER_BYTES);
        let max_segments = if gso {
            state.max_gso_segments().max(1)
        } else {
            1
        };
        Ok(BatchSender {
            state,
            peer,
            buf: vec![0u8; MAX_BATCH_BYTES].into_boxed_slice(),
            used: 0,
            seg: 0,
            count: 0,
            closed: false,
            ecn: None,
            max_segments,
            datagrams: 0,
            syscalls: 0,
        })
    }

    /// Whether batches of more than one datagram are in use.
    pub fn gso(&self) -> bool {
        self.max_segments > 1
    }

    /// Adds one datagram, Not-ECT, sending the current batch first if this
    /// one cannot join it (different size, batch full, or it ended short).
    pub fn push(&mut self, sock: &UdpSocket, datagram: &[u8]) -> Result<(), SendError> {
        self.slot_ecn(sock, datagram.len(), None)?
            .copy_from_slice(datagram);
        if self.max_segments == 1 {
            self.flush(sock)?;
        }
        Ok(())
    }

    /// Room for one more datagram of `len` bytes at the end of the batch,
    /// for the caller to fill in place; the current batch is sent first
    /// if the datagram cannot join it (different size, batch full, or it
    /// ended short). Without GSO every batch holds one datagram, so the
    /// previous one leaves here and the last at [`BatchSender::flush`].
    /// The datagram leaves Not-ECT.
    pub fn slot(&mut self, sock: &UdpSocket, len: usize) -> Result<&mut [u8], SendError> {
        self.slot_ecn(sock, len, None)
    }

    /// [`BatchSender::slot`] for a datagram that leaves with the ECN
    /// codepoint `ecn` in its IP header (`None`: Not-ECT); a batch of
    /// another codepoint is sent first.
    pub fn slot_ecn(
        &mut self,
        sock: &UdpSocket,
        len: usize,
        ecn: Option<EcnCodepoint>,
    ) -> Result<&mut [u8], SendError> {
        assert!(len > 0 && len <= MAX_BATCH_BYTES, "datagram of {len} bytes");
        let fits = self.count > 0
            && !self.closed
            && ecn == self.ecn
            && len <= self.seg
            && self.count < self.max_segments
            && self.used + len <= MAX_BATCH_BYTES;
        if self.count > 0 && !fits {
            self.flush(sock)?;
        }
        if self.count == 0 {
            self.seg = len;
            self.ecn = ecn;
        }
        self.closed = len < self.seg;
        let at = self.used;
        self.used += len;
        self.count += 1;
        Ok(&mut self.buf[at..at + len])
    }

    /// Sends whatever is batched. A full socket buffer drops the batch, as
    /// a full NIC queue would; loss recovery repairs it.
    pub fn flush(&mut self, sock: &UdpSocket) -> Result<(), SendError> {
        if self.count == 0 {
            return Ok(());
        }
        let segment_size = (self.count > 1).then_some(self.seg);
        let r = self.send(sock, 0, self.used, segment_size);
        let r = match r {
            // GSO refused by the device (EIO/EINVAL): quinn-udp has turned
            // it off; send this batch one datagram at a time.
            Err(SendError::Other(e)) if segment_size.is_some() && is_gso_refusal(&e) => {
                self.max_segments = 1;
                let mut r = Ok(());
                let mut off = 0;
                while off < self.used && r.is_ok() {
                    let end = (off + self.seg).min(self.used);
                    r = self.send(sock, off, end, None);
                    off = end;
                }
                r
            }
            r => r,
        };
        self.datagrams += self.count as u64;
        self.used = 0;
        self.count = 0;
        self.closed = false;
        r
    }

    fn send(
        &mut self,
        sock: &UdpSocket,
        from: usize,
        to: usize,
        segment_size: Option<usize>,
    ) -> Result<(), SendError> {
        self.syscalls += 1;
        let t = Transmit {
            destination: self.peer,
            ecn: self.ecn,
            contents: &self.buf[from..to],
            segment_size,
            src_ip: None,
        };
        match self.state.try_send(sock.into(), &t) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Err(SendError::Refused),
            Err(e) => Err(SendError::Other(e)),
        }
    }
}

fn is_gso_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EIO) | Some(libc::EINVAL))
}

/// `quinn-udp` (0.6) turns on, besides the TOS / traffic class and GRO
/// control messages, the destination address (`IP_PKTINFO`,
/// `IPV6_RECVPKTINFO`) and a receive timestamp (`SO_TIMESTAMPNS`), and
/// gives each `recvmmsg` slot 96 bytes of control buffer. A GRO train
/// brings all four, 112 bytes on IPv4 (timestamp 32, GRO 24, pktinfo 32,
/// TOS 24): the kernel truncates the list (`MSG_CTRUNC`) and the TOS,
/// last, is lost, so every batched datagram would read Not-ECT. The
/// transport uses neither the timestamp nor the destination address, so
/// both are turned off again here (errors ignored: then the codepoint of
/// a GRO train may read Not-ECT, which the sender's ECN validation
/// catches and reports).
fn make_room_for_the_ecn_cmsg(sock: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let off: libc::c_int = 0;
    let set = |level, name| {
        // SAFETY: a valid socket and a c_int option value of its size.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                level,
                name,
                (&off as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
    };
    set(libc::SOL_SOCKET, libc::SO_TIMESTAMPNS);
    set(libc::IPPROTO_IP, libc::IP_PKTINFO);
    set(libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO);
}

/// How many receive buffers one `recvmmsg` fills.
const RECV_BATCH: usize = 8;

/// Receives many datagrams per system call: `recvmmsg` into several
/// buffers, each of which may hold a GRO train of equal-size datagrams.
pub struct BatchReceiver {
    state: UdpSocketState,
    bufs: [Vec<u8>; RECV_BATCH],
    meta: [RecvMeta; RECV_BATCH],
    /// Filled buffers from the last call, and the next to hand out.
    filled: usize,
    next_buf: usize,
    next_off: usize,
}

impl BatchReceiver {
    /// Wraps a bound socket (made non-blocking) and turns GRO on where
    /// the kernel has it.
    pub fn new(sock: &UdpSocket) -> io::Result<Self> {
        let state = UdpSocketState::new(sock.into())?;
        make_room_for_the_ecn_cmsg(sock);
        // The default (~200 KiB) overflows under a few GSO trains when the
        // receiving thread is briefly descheduled; the kernel caps this at
        // net.core.rmem_max, and a smaller buffer only costs throughput.
        let _ = state.set_recv_buffer_size(sock.into(), SOCKET_BUFFER_BYTES);
        let per_buf = (state.gro_segments().max(1) * 1500).max(2048);
        Ok(BatchReceiver {
            state,
            bufs: std::array::from_fn(|_| vec![0u8; per_buf]),
            meta: [RecvMeta::default(); RECV_BATCH],
            filled: 0,
            next_buf: 0,
            next_off: 0,
        })
    }

    /// The next datagram, its source and the ECN codepoint it arrived
    /// with (`None`: Not-ECT), or `None` when the socket has nothing more
    /// right now. Calls into the kernel only when the last batch has been
    /// handed out. The datagrams of one GRO train share their codepoint:
    /// the kernel merges only datagrams whose TOS / traffic class match.
    pub fn next(&mut self, sock: &UdpSocket) -> Option<(&[u8], SocketAddr, Option<EcnCodepoint>)> {
        loop {
            if let Some((b, from, to, addr)) = self.advance() {
                return Some((&self.bufs[b][from..to], addr, self.meta[b].ecn));
            }
            let mut slices = self.bufs.each_mut().map(|b| IoSliceMut::new(b));
            // The old batch is spent whatever the call returns.
            self.next_buf = 0;
            self.next_off = 0;
            self.filled = 0;
            self.filled = match self.state.recv(sock.into(), &mut slices, &mut self.meta) {
                Ok(n) if n > 0 => n,
                // WouldBlock (nothing queued) or an error queued by an
                // ICMP message: either way, nothing to read now.
                _ => return None,
            };
        }
    }

    /// The position of the next datagram in the current batch.
    fn advance(&mut self) -> Option<(usize, usize, usize, SocketAddr)> {
        while self.next_buf < self.filled {
            let m = &self.meta[self.next_buf];
            if self.next_off < m.len {
                let from = self.next_off;
                let to = (from + m.stride.max(1)).min(m.len);
                self.next_off = to;
                return Some((self.next_buf, from, to, m.addr));
            }
            self.next_buf += 1;
            self.next_off = 0;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends 3 datagrams marked `ecn` from a new socket, batched into one
    /// GSO send when `gso`, and returns each datagram's length and
    /// codepoint as the receiver reads them.
    fn through_loopback(
        rx: &mut BatchReceiver,
        r: &UdpSocket,
        gso: bool,
        ecn: Option<EcnCodepoint>,
    ) -> Vec<(usize, Option<EcnCodepoint>)> {
        let to = r.local_addr().unwrap();
        let bind = if to.is_ipv4() {
            "127.0.0.1:0"
        } else {
            "[::1]:0"
        };
        let s = UdpSocket::bind(bind).unwrap();
        s.connect(to).unwrap();
        s.set_nonblocking(true).unwrap();
        let mut b = BatchSender::new(&s, to, gso).unwrap();
        for i in 0..3u8 {
            b.slot_ecn(&s, 100, ecn).unwrap().fill(i);
        }
        b.flush(&s).unwrap();
        let mut got = Vec::new();
        let t = std::time::Instant::now();
        while got.len() < 3 && t.elapsed() < std::time::Duration::from_secs(2) {
            while let Some((d, _, e)) = rx.next(r) {
                got.push((d.len(), e));
            }
        }
        got
    }

    /// The codepoint a datagram left with is the one the receiver reads,
    /// sent one by one and in a GSO train (which the receiver takes in as
    /// one GRO train: the case `make_room_for_the_ecn_cmsg` fixes), on
    /// IPv4 and, where there is one, IPv6 loopback.
    #[test]
    fn codepoints_survive_gso_and_gro() {
        for bind in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(r) = UdpSocket::bind(bind) else {
                eprintln!("skipped {bind}: cannot bind");
                continue;
            };
            let mut rx = BatchReceiver::new(&r).unwrap();
            for gso in [false, true] {
                for ecn in [
                    None,
                    Some(EcnCodepoint::Ect0),
                    Some(EcnCodepoint::Ect1),
                    Some(EcnCodepoint::Ce),
                ] {
                    let got = through_loopback(&mut rx, &r, gso, ecn);
                    assert_eq!(got, vec![(100, ecn); 3], "{bind} gso={gso} {ecn:?}");
                }
            }
        }
    }
}
