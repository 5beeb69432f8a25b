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

use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
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
            max_segments,
            datagrams: 0,
            syscalls: 0,
        })
    }

    /// Whether batches of more than one datagram are in use.
    pub fn gso(&self) -> bool {
        self.max_segments > 1
    }

    /// Adds one datagram, sending the current batch first if this one
    /// cannot join it (different size, batch full, or it ended short).
    pub fn push(&mut self, sock: &UdpSocket, datagram: &[u8]) -> Result<(), SendError> {
        self.slot(sock, datagram.len())?.copy_from_slice(datagram);
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
    pub fn slot(&mut self, sock: &UdpSocket, len: usize) -> Result<&mut [u8], SendError> {
        assert!(len > 0 && len <= MAX_BATCH_BYTES, "datagram of {len} bytes");
        let fits = self.count > 0
            && !self.closed
            && len <= self.seg
            && self.count < self.max_segments
            && self.used + len <= MAX_BATCH_BYTES;
        if self.count > 0 && !fits {
            self.flush(sock)?;
        }
        if self.count == 0 {
            self.seg = len;
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
            ecn: None,
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

    /// The next datagram and its source, or `None` when the socket has
    /// nothing more right now. Calls into the kernel only when the last
    /// batch has been handed out.
    pub fn next(&mut self, sock: &UdpSocket) -> Option<(&[u8], SocketAddr)> {
        loop {
            if let Some((b, from, to, addr)) = self.advance() {
                return Some((&self.bufs[b][from..to], addr));
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
