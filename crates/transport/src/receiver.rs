//! The receiving endpoint: accepts one connection, reassembles the stream
//! in order within a bounded window, acknowledges with ranges (the
//! simulator's receiver decides when: every 2nd packet, at once when out
//! of order, or after 25 ms), checks every byte, and answers the sender's
//! FIN with the verdict.

use crate::integrity::StreamHash;
use crate::reassembly::{Insert, Reassembly};
use crate::udp_batch::BatchReceiver;
use crate::wire::{self, Frame, Packet, CHUNK, CONTROL_PN, MAX_DATAGRAM};
use crate::{now_ns, wait_readable};
use congestion::Instant as CcInstant;
use sender::pattern::mismatch as pattern_mismatch;
use sender::{AckAction, Receiver};
use sender::{AckPolicy, Ecn, EcnCounts};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest the receiver holds an ACK (QUIC's default max_ack_delay);
/// the sender adds it to its probe timeout.
pub const MAX_ACK_DELAY_NS: u64 = 25_000_000;

/// The smallest flow-control window a receiver should be given, in
/// chunks: below it a sender's initial window does not fit.
pub const MIN_WINDOW_CHUNKS: u64 = 16;

/// `bytes` of flow-control window in whole chunks, or an error naming
/// `flag` if that is under [`MIN_WINDOW_CHUNKS`]: `bbrlab recv --window`
/// had raised a smaller one to it in silence.
pub fn window_chunks(flag: &str, bytes: u64) -> Result<u64, String> {
    let chunk = crate::wire::CHUNK as u64;
    if bytes < MIN_WINDOW_CHUNKS * chunk {
        return Err(format!(
            "{flag} {bytes}: at least {} bytes ({MIN_WINDOW_CHUNKS} chunks of {chunk} bytes)",
            MIN_WINDOW_CHUNKS * chunk
        ));
    }
    Ok(bytes / chunk)
}

/// How to receive.
pub struct RecvConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Write the stream to this file (otherwise check it against the
    /// sender's pattern). It is written under a temporary name in the same
    /// directory and renamed to this path only after the length and
    /// BLAKE3 digest check out; on any failure the path is left as it was.
    pub output: Option<PathBuf>,
    /// Flow-control window in chunks (bounds the reassembly memory).
    pub window_chunks: u64,
    /// Give up when the sender is silent this long (once connected).
    pub idle_timeout: Duration,
    /// How long to wait for a sender to connect.
    pub accept_timeout: Duration,
    /// Set (by a signal handler, say) to give up at once: the receiver
    /// polls it at least every 50 ms and returns an error, removing its
    /// temporary output file on the way, instead of being killed and
    /// leaving it behind. `None`: run until done or timed out.
    pub stop: Option<Arc<AtomicBool>>,
}

/// The receiver's report.
#[derive(Debug, serde::Serialize)]
pub struct RecvSummary {
    /// Bytes received in order and verified.
    pub bytes: u64,
    /// Seconds from the handshake to the FIN.
    pub seconds: f64,
    /// bytes × 8 / seconds.
    pub goodput_bps: f64,
    /// Duplicate data packets (needless retransmissions) seen.
    pub duplicates: u64,
    /// Datagrams dropped as malformed, as stray (another connection or
    /// address), and data refused for lying outside the window.
    pub malformed: u64,
    /// See `malformed`.
    pub stray: u64,
    /// See `malformed`.
    pub refused: u64,
    /// Data packets processed (acknowledged), and of those how many
    /// arrived Not-ECT, ECT(0), ECT(1) and CE (the IP header's ECN field,
    /// read from the socket's TOS / traffic-class control message; the
    /// last three are the counts every ACK carries once one is non-zero;
    /// the shared receiver keeps them modulo 2^32).
    pub data_packets: u64,
    /// See `data_packets`.
    pub ecn_not_ect: u64,
    /// See `data_packets`.
    pub ecn_ect0: u64,
    /// See `data_packets`.
    pub ecn_ect1: u64,
    /// See `data_packets`.
    pub ecn_ce: u64,
}

/// The output file while a transfer is under way: a temporary file in the
/// output's directory (so the final rename stays on one file system and is
/// atomic), renamed over the output only once the length and BLAKE3 digest are
/// verified. Dropped without [`Partial::persist`] (any error, a forged or
/// truncated transfer), it removes the temporary file, so the output path
/// never holds partial or unverified data.
struct Partial {
    /// Writer of the temporary file.
    out: BufWriter<File>,
    /// The temporary file.
    tmp: PathBuf,
    /// The output path it becomes.
    dest: PathBuf,
    /// Renamed; nothing to clean.
    done: bool,
}

impl Partial {
    /// Creates `.<name>.partial-<pid>` next to `dest` (refusing to
    /// overwrite one that exists).
    fn create(dest: &Path) -> Result<Partial, String> {
        if dest.is_dir() {
            return Err(format!(
                "--output {}: is a directory; give a file path in it (such as {})",
                dest.display(),
                dest.join("data.bin").display()
            ));
        }
        let name = dest.file_name().ok_or_else(|| {
            format!(
                "--output {}: not a file name (give a path such as ./data.bin)",
                dest.display()
            )
        })?;
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".partial-{}", std::process::id()));
        let tmp = dir.join(tmp_name);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| {
                format!(
                    "cannot create the temporary file {} for --output: {e}",
                    tmp.display()
                )
            })?;
        Ok(Partial {
            out: BufWriter::new(f),
            tmp,
            dest: dest.to_path_buf(),
            done: false,
        })
    }

    /// Flushes the verified data to disk and renames it over the output.
    fn persist(mut self) -> Result<(), String> {
        let err = |e: std::io::Error| format!("writing {}: {e}", self.tmp.display());
        self.out.flush().map_err(err)?;
        self.out.get_ref().sync_all().map_err(err)?;
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| {
            format!(
                "cannot move the verified data from {} to {}: {e}",
                self.tmp.display(),
                self.dest.display()
            )
        })?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Receives one transfer.
pub fn recv(cfg: RecvConfig) -> Result<RecvSummary, String> {
    // The output first, before any sender is accepted: a path that cannot
    // take the data (a directory, a missing or read-only directory) is an
    // error now, not after the whole transfer has arrived and been thrown
    // away while the sender reports success.
    let mut file = match &cfg.output {
        Some(p) => Some(Partial::create(p)?),
        None => None,
    };
    let sock =
        UdpSocket::bind(cfg.listen).map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
    sock.set_nonblocking(true).map_err(|e| e.to_string())?;
    let fd = sock.as_raw_fd();
    let start = Instant::now();
    let mut inbuf = [0u8; 2048];
    let mut out = Vec::with_capacity(MAX_DATAGRAM);
    let (mut malformed, mut stray, mut refused, mut duplicates) = (0u64, 0u64, 0u64, 0u64);

    // Wait for a HELLO.
    let stopped = || cfg.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
    let (peer, conn_id, total, seed) = loop {
        if stopped() {
            return Err("stopped (by a signal) before a sender connected".into());
        }
        if start.elapsed() > cfg.accept_timeout {
            return Err(format!(
                "no sender connected within {:?}",
                cfg.accept_timeout
            ));
        }
        wait_readable(fd, 50_000_000);
        if let Ok((n, from)) = sock.recv_from(&mut inbuf) {
            match wire::decode(&inbuf[..n]) {
                Ok(Packet {
                    conn_id,
                    frame: Frame::Hello { total, seed },
                    ..
                }) => break (from, conn_id, total, seed),
                Ok(_) => stray += 1,
                Err(_) => malformed += 1,
            }
        }
    };
    let known_total = (total != u64::MAX).then_some(total);
    // Seed 0 announces a file: there is no pattern to check, only the
    // digest (and the output, if one is written).
    let pattern_seed = (seed != 0).then_some(seed);
    // From here on, many datagrams per system call (GRO, recvmmsg); a
    // plain recv on a GRO socket would merge datagrams, so only `rx` reads.
    let mut rx = BatchReceiver::new(&sock).map_err(|e| format!("receive socket: {e}"))?;
    let mut reasm = Reassembly::new(cfg.window_chunks);
    let mut acker = Receiver::new(
        AckPolicy::Delayed {
            max_packets: 2,
            max_delay_ns: MAX_ACK_DELAY_NS,
        },
        None,
    );
    let mut hash = StreamHash::new();
    // Data packets processed, and of those Not-ECT (the acker counts the
    // ECN-capable codepoints, as its ACKs carry them).
    let (mut data_packets, mut not_ect) = (0u64, 0u64);
    let t0 = now_ns(start);
    let mut last_heard = Instant::now();
    let mut delack_at: Option<u64> = None;
    let mut verdict: Option<(bool, u64)> = None;
    let mut linger_until: Option<Instant> = None;
    let send_to = |sock: &UdpSocket, buf: &[u8]| {
        // A full buffer or a vanished peer: the sender's timers recover.
        let _ = sock.send_to(buf, peer);
    };
    let hello_ack = |out: &mut Vec<u8>, limit: u64| {
        wire::encode(
            &Packet {
                conn_id,
                pn: CONTROL_PN,
                frame: Frame::HelloAck { max_chunks: limit },
            },
            out,
        );
    };
    hello_ack(&mut out, reasm.limit());
    send_to(&sock, &out);
    let mut fin_at = t0;
    loop {
        if stopped() && verdict.is_none() {
            // `file` drops on return and removes its temporary file.
            return Err(format!(
                "stopped (by a signal) after {} bytes in order{}",
                reasm.delivered_bytes(),
                match &cfg.output {
                    Some(p) => format!("; nothing written to {}", p.display()),
                    None => String::new(),
                }
            ));
        }
        if let Some(l) = linger_until {
            // Stopped while lingering: the verdict is in, so finish now.
            if Instant::now() >= l || stopped() {
                break;
            }
        } else if last_heard.elapsed() > cfg.idle_timeout {
            return Err(format!(
                "the sender went silent for {:?} after {} bytes; giving up",
                cfg.idle_timeout,
                reasm.delivered_bytes()
            ));
        }
        let mut to_send = None;
        // Whether the peer was heard in this drain: one clock read for
        // the idle timer per drain rather than one per datagram.
        let mut heard = false;
        while let Some((datagram, from, codepoint)) = rx.next(&sock) {
            let p = match wire::decode(datagram) {
                Ok(p) => p,
                Err(_) => {
                    malformed += 1;
                    continue;
                }
            };
            if p.conn_id != conn_id || from != peer {
                stray += 1;
                if let Frame::Hello { .. } = p.frame {
                    // Another sender: tell it this receiver is taken, so
                    // it does not time out as if nobody were listening.
                    wire::encode(
                        &Packet {
                            conn_id: p.conn_id,
                            pn: CONTROL_PN,
                            frame: Frame::Busy,
                        },
                        &mut out,
                    );
                    let _ = sock.send_to(&out, from);
                }
                continue;
            }
            heard = true;
            let now = now_ns(start);
            match p.frame {
                Frame::Hello { .. } => {
                    hello_ack(&mut out, reasm.limit());
                    send_to(&sock, &out);
                }
                Frame::Data { chunk, payload } => {
                    if known_total.is_some_and(|t| chunk * CHUNK as u64 + payload.len() as u64 > t)
                    {
                        refused += 1;
                        continue;
                    }
                    // What is now in order is checked, hashed and written
                    // at once; an in-order chunk straight from the
                    // receive buffer, without a copy.
                    let verdict = reasm.offer(chunk, payload, |off, data| {
                        if let (None, Some(seed)) = (&file, pattern_seed) {
                            if let Some(at) = pattern_mismatch(seed, off, data) {
                                return Err(format!(
                                    "stream corrupted: the byte at offset {at} differs from the sender's pattern"
                                ));
                            }
                        }
                        hash.update(data);
                        if let Some(f) = file.as_mut() {
                            f.out
                                .write_all(data)
                                .map_err(|e| format!("writing the output: {e}"))?;
                        }
                        Ok(())
                    })?;
                    match verdict {
                        Insert::OutOfWindow | Insert::Invalid => {
                            refused += 1;
                            continue;
                        }
                        Insert::Duplicate => duplicates += 1,
                        Insert::Accepted => {}
                    }
                    let codepoint = crate::ecn::from_quinn(codepoint);
                    data_packets += 1;
                    not_ect += u64::from(codepoint == Ecn::NotEct);
                    // The ACK it returns carries the counts as of its
                    // ranges; a CE is acknowledged at once.
                    match acker.on_packet_ecn(
                        CcInstant::from_nanos(now),
                        p.pn,
                        chunk,
                        payload.len() as u64,
                        codepoint,
                        false,
                    ) {
                        AckAction::Send(a) => {
                            delack_at = None;
                            to_send = Some(a);
                        }
                        AckAction::Delay(t) => {
                            delack_at.get_or_insert(t.as_nanos());
                        }
                    }
                }
                Frame::Fin { total, digest } => {
                    if verdict.is_none() {
                        if reasm.delivered_bytes() < total {
                            // Data still missing: the sender only sends
                            // FIN once all was acknowledged, so this is a
                            // lie or a bug; refuse it.
                            verdict = Some((false, reasm.delivered_bytes()));
                        } else {
                            let ok = reasm.delivered_bytes() == total && hash.digest() == digest;
                            verdict = Some((ok, reasm.delivered_bytes()));
                        }
                        fin_at = now;
                        linger_until = Some(Instant::now() + Duration::from_secs(1));
                    }
                    let (ok, received) = verdict.expect("set above");
                    wire::encode(
                        &Packet {
                            conn_id,
                            pn: CONTROL_PN,
                            frame: Frame::Done { ok, received },
                        },
                        &mut out,
                    );
                    send_to(&sock, &out);
                }
                _ => stray += 1,
            }
        }
        if heard {
            last_heard = Instant::now();
        }
        let now = now_ns(start);
        if delack_at.is_some_and(|t| t <= now) {
            delack_at = None;
            if let Some(a) = acker.on_delayed_ack_timer(CcInstant::from_nanos(now)) {
                to_send = Some(a);
            }
        }
        {
            if let Some(a) = to_send {
                wire::encode(
                    &Packet {
                        conn_id,
                        pn: CONTROL_PN,
                        frame: Frame::Ack {
                            ranges: a.ranges,
                            len: a.len,
                            ack_delay_us: (a.ack_delay_ns / 1000).min(u32::MAX as u64) as u32,
                            dsack: a.dsack,
                            cum_chunk: a.cum_chunk,
                            max_chunks: reasm.limit(),
                            // The plain ACK until a packet arrived marked.
                            ecn: (a.ecn != EcnCounts::default()).then(|| a.ecn.into()),
                        },
                    },
                    &mut out,
                );
                send_to(&sock, &out);
            }
        }
        let wait = delack_at.map_or(50_000_000, |t| t.saturating_sub(now_ns(start)));
        wait_readable(fd, wait.min(50_000_000));
    }
    let (ok, received) = verdict.expect("the loop ends only after FIN");
    if !ok {
        // `file` drops here and removes its temporary file: nothing
        // unverified is left at the output path.
        return Err(format!(
            "the transfer failed verification: {received} bytes in order, length or BLAKE3 digest mismatch{}",
            match &cfg.output {
                Some(p) => format!("; nothing written to {}", p.display()),
                None => String::new(),
            }
        ));
    }
    if let Some(f) = file {
        f.persist()?;
    }
    let secs = (fin_at - t0) as f64 / 1e9;
    Ok(RecvSummary {
        bytes: received,
        seconds: secs,
        goodput_bps: received as f64 * 8.0 / secs.max(1e-9),
        duplicates,
        malformed,
        stray,
        refused,
        data_packets,
        ecn_not_ect: not_ect,
        ecn_ect0: acker.ecn_counts.ect0.into(),
        ecn_ect1: acker.ecn_counts.ect1.into(),
        ecn_ce: acker.ecn_counts.ce.into(),
    })
}
